//! `hp-notifyd [ACTION]`: a notification server that answers its own questions, as a command
//! under hallpass could. It takes `org.freedesktop.Notifications` on the session bus (and
//! exits with 1 if another owns it), prints `ready`, and answers every `Notify` at once with
//! the signal `ActionInvoked(id, ACTION)` (default `always`), printing `notified ID`. The
//! tests run it inside a session to check that the desktop notifier shows it no question.
#![forbid(unsafe_code)]

use std::io::Write;

use tokio_stream::StreamExt;
use zbus::fdo::{RequestNameFlags, RequestNameReply};
use zbus::{Connection, MessageStream};

const NAME: &str = "org.freedesktop.Notifications";
const PATH: &str = "/org/freedesktop/Notifications";

fn main() {
    let action = std::env::args().nth(1).unwrap_or_else(|| "always".into());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    if let Err(e) = rt.block_on(serve(&action)) {
        eprintln!("hp-notifyd: {e}");
        std::process::exit(1);
    }
}

fn say(line: &str) {
    let mut out = std::io::stdout();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

async fn serve(action: &str) -> zbus::Result<()> {
    let conn = Connection::session().await?;
    let got = conn
        .request_name_with_flags(NAME, RequestNameFlags::DO_NOT_QUEUE)
        .await?;
    if got != RequestNameReply::PrimaryOwner {
        return Err(zbus::Error::Failure(format!("{NAME} is taken: {got}")));
    }
    say("ready");
    let mut next = 0u32;
    let mut calls = MessageStream::from(&conn);
    while let Some(msg) = calls.next().await {
        let msg = msg?;
        let header = msg.header();
        if header.message_type() != zbus::message::Type::MethodCall {
            continue;
        }
        match header.member().map(|m| m.as_str()) {
            Some("Notify") => {
                next += 1;
                conn.reply(&header, &(next,)).await?;
                say(&format!("notified {next}"));
                conn.emit_signal(None::<&str>, PATH, NAME, "ActionInvoked", &(next, action))
                    .await?;
            }
            Some("GetCapabilities") => conn.reply(&header, &(vec!["actions", "body"],)).await?,
            Some("GetServerInformation") => {
                conn.reply(&header, &("hp-notifyd", "hallpass", "1", "1.2"))
                    .await?
            }
            Some("CloseNotification") => conn.reply(&header, &()).await?,
            _ => {}
        }
    }
    Ok(())
}
