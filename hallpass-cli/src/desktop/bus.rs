//! The notification server on the D-Bus session bus, as the desktop notifier talks to it
//! (the Desktop Notifications Specification, `org.freedesktop.Notifications`), trusting
//! nothing but the bus itself:
//!
//! - a notification is sent to the unique name of the connection that owns the well-known
//!   name at that moment, never to the well-known name (whose owner may change meanwhile),
//!   and that connection's process is named by the bus (`GetConnectionUnixProcessID`) so that
//!   it can be vetted before anything is shown through it;
//! - an action or a close counts only from that same connection (its unique name is the
//!   signal's sender, which the bus sets and no client can forge) and for that notification's
//!   id: any process on the bus can broadcast an `ActionInvoked` signal, a supervised one
//!   included. The match rule names the sender too, so the bus sends us no other.

use std::collections::HashMap;

use tokio_stream::StreamExt;
use zbus::names::{BusName, OwnedUniqueName};
use zbus::{Connection, MatchRule, MessageStream};

const NAME: &str = "org.freedesktop.Notifications";
const PATH: &str = "/org/freedesktop/Notifications";

/// A connection to the session bus.
pub struct Bus {
    conn: Connection,
}

/// The connection that owns the notification server's name, and its process.
#[derive(Clone, Debug)]
pub struct Server {
    pub name: OwnedUniqueName,
    pub pid: u32,
}

/// What the person did with a notification.
#[derive(Debug, PartialEq, Eq)]
pub enum Response {
    /// A button: its action key.
    Action(String),
    /// Closed (dismissed, expired) without a button; or the server went away.
    Closed,
}

/// One notification to show: its text and its buttons (action key, label).
pub struct Note<'a> {
    pub summary: &'a str,
    pub body: &'a str,
    pub actions: &'a [(&'a str, String)],
}

impl Bus {
    pub async fn connect() -> zbus::Result<Bus> {
        Ok(Bus {
            conn: Connection::session().await?,
        })
    }

    /// The server that owns the name now, and its process as the bus knows it. None is
    /// started: the bus would start it with the activation environment, which any client
    /// of the bus may change (`UpdateActivationEnvironment`), a supervised process too.
    pub async fn server(&self) -> zbus::Result<Server> {
        let dbus = zbus::fdo::DBusProxy::new(&self.conn).await?;
        let wanted = BusName::try_from(NAME).expect("a valid bus name");
        let name = dbus.get_name_owner(wanted).await?;
        let pid = dbus
            .get_connection_unix_process_id(BusName::from(name.as_ref()))
            .await?;
        Ok(Server { name, pid })
    }

    /// What `server` sends about its notifications, from now on (subscribe before showing
    /// one, or a quick answer is missed).
    pub async fn follow(&self, server: &Server) -> zbus::Result<Signals> {
        let rule = MatchRule::builder()
            .msg_type(zbus::message::Type::Signal)
            .sender(server.name.as_ref())
            .path(PATH)
            .interface(NAME)
            .build()?;
        Ok(Signals {
            stream: MessageStream::for_match_rule(rule, &self.conn, None).await?,
            from: server.name.clone(),
        })
    }

    /// Shows `note` through `server`; its id there.
    pub async fn notify(&self, server: &Server, note: &Note<'_>) -> zbus::Result<u32> {
        let actions: Vec<&str> = note
            .actions
            .iter()
            .flat_map(|(key, label)| [*key, label.as_str()])
            .collect();
        let hints: HashMap<&str, zbus::Variant<'_>> = HashMap::new();
        let reply = self
            .conn
            .call_method(
                Some(server.name.as_ref()),
                PATH,
                Some(NAME),
                "Notify",
                // App name, no notification replaced, no icon, text, buttons, hints, and
                // never expire (0): the question waits for the person.
                &(
                    "hallpass",
                    0u32,
                    "",
                    note.summary,
                    note.body,
                    actions,
                    hints,
                    0i32,
                ),
            )
            .await?;
        if reply.header().sender() != Some(&server.name.as_ref()) {
            return Err(zbus::Error::Failure(
                "the reply came from another connection".into(),
            ));
        }
        reply.body().deserialize::<u32>()
    }

    /// Takes notification `id` down.
    pub async fn close(&self, server: &Server, id: u32) {
        let _ = self
            .conn
            .call_method(
                Some(server.name.as_ref()),
                PATH,
                Some(NAME),
                "CloseNotification",
                &(id,),
            )
            .await;
    }
}

/// The signals of one server.
pub struct Signals {
    stream: MessageStream,
    from: OwnedUniqueName,
}

impl Signals {
    /// Waits for what the person does with notification `id`: only signals from the server
    /// it was shown by, about it, count.
    pub async fn response(&mut self, id: u32) -> Response {
        while let Some(Ok(msg)) = self.stream.next().await {
            let header = msg.header();
            if header.sender() != Some(&self.from.as_ref()) {
                continue;
            }
            match header.member().map(|m| m.as_str()) {
                Some("ActionInvoked") => match msg.body().deserialize::<(u32, String)>() {
                    Ok((n, action)) if n == id => return Response::Action(action),
                    _ => {}
                },
                Some("NotificationClosed") => match msg.body().deserialize::<(u32, u32)>() {
                    Ok((n, _)) if n == id => return Response::Closed,
                    _ => {}
                },
                _ => {}
            }
        }
        Response::Closed
    }
}
