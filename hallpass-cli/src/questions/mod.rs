//! A session's questions on the client side, for all three ways of answering them (the prompt
//! bar, desktop notifications, `hallpass answer`): one follower of the daemon's questions
//! ([`follow`]), one pure model of the questions a person is answering ([`model`]), and one
//! way to put a question in words ([`text`]). Each way of answering only draws and reads keys
//! or buttons.

pub mod follow;
pub mod model;
pub mod text;
