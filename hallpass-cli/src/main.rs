//! `hallpass`: the thin command-line client. Launches commands under supervision and talks to
//! `hallpassd`; every decision is the daemon's.

mod acks;
mod answer;
mod api;
mod bar;
mod daemon;
mod desktop;
mod docs;
mod env;
mod error;
mod exit;
mod flags;
mod inside;
mod link;
mod logfile;
mod logwatch;
mod out;
mod pathargs;
mod procs;
mod profiles;
mod questions;
mod refusals;
mod report;
mod rules;
mod run;
mod session;
mod status;
mod suggest;
mod sys;
mod termfilter;
mod terminal;
mod typing;
mod usage;

fn main() {
    let cli = usage::parse();
    let r = match cli.verb {
        Some(flags::Verb::Status { json }) => status::status(json),
        Some(flags::Verb::Rules(r)) => rules::rules(r),
        Some(flags::Verb::Answer(a)) => answer::answer(a),
        Some(flags::Verb::Profiles { json }) => profiles::list::profiles(json),
        Some(flags::Verb::Suggest(a)) => suggest::suggest(a),
        Some(flags::Verb::Report(a)) => report::report(a),
        Some(flags::Verb::Completions { shell }) => docs::completions(shell),
        Some(flags::Verb::Man) => docs::man(),
        None => run::run(cli.run),
    };
    let code = r.unwrap_or_else(|f| {
        eprintln!("hallpass: {f}");
        f.code()
    });
    std::process::exit(code.code());
}
