//! The Gateway websocket: HELLO with the heartbeat interval; IDENTIFY (a bad token closes with
//! 4004) starts a new session with READY (`session_id`, `resume_gateway_url`, the bot and its
//! application) and a GUILD_CREATE per guild; RESUME of the current session replays every
//! event after its `seq`, then RESUMED (any other gets INVALID_SESSION `false`); heartbeats are
//! ACKed. Every event of the session is sent, in order, to the connection attached to it. The
//! test's switches: a zombie connection (no ACKs, no events), a close code, RECONNECT,
//! INVALID_SESSION.

use std::sync::Arc;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::tungstenite::{
    Message,
    protocol::{CloseFrame, frame::coding::CloseCode},
};

use super::state::{Session, Shared, World};

pub(super) async fn serve(listener: TcpListener, shared: Arc<Shared>) {
    loop {
        let accepted = tokio::select! {
            () = shared.stop.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        if let Ok((stream, _)) = accepted {
            let _ = stream.set_nodelay(true);
            tokio::spawn(connection(stream, Arc::clone(&shared)));
        }
    }
}

/// What one connection has done so far.
struct Conn {
    id: u64,
    /// The session it is attached to, and the last seq sent on it.
    session: Option<String>,
    sent: i64,
}

async fn connection(stream: TcpStream, shared: Arc<Shared>) {
    let Ok(mut socket) = tokio_tungstenite::accept_async(stream).await else {
        return;
    };
    let (id, interval) = shared.write(|world| {
        let id = world.gateway.next_connection;
        world.gateway.next_connection += 1;
        world.gateway.live.insert(id);
        world.gateway.stats.connections += 1;
        (id, world.gateway.heartbeat_ms)
    });
    let mut conn = Conn {
        id,
        session: None,
        sent: 0,
    };
    let hello = json!({"op": 10, "d": {"heartbeat_interval": interval}, "s": null, "t": null});
    let mut changes = shared.subscribe();
    if socket.send(Message::text(hello.to_string())).await.is_ok() {
        loop {
            changes.borrow_and_update();
            let outgoing = shared.write(|world| pending(world, &mut conn));
            let mut ended = false;
            for frame in outgoing {
                let last = matches!(frame, Message::Close(_));
                if socket.send(frame).await.is_err() || last {
                    ended = true;
                    break;
                }
            }
            if ended {
                break;
            }
            let incoming = tokio::select! {
                () = shared.stop.cancelled() => break,
                changed = changes.changed() => {
                    if changed.is_err() { break; }
                    continue;
                }
                incoming = socket.next() => incoming,
            };
            let text = match incoming {
                Some(Ok(Message::Text(text))) => text.to_string(),
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
                Some(Ok(_)) => continue,
            };
            let Ok(frame) = serde_json::from_str::<Value>(&text) else {
                let _ = socket
                    .send(close(4002, "Error while decoding payload."))
                    .await;
                break;
            };
            let replies = shared.write(|world| received(world, &mut conn, &frame));
            for reply in replies {
                let last = matches!(reply, Message::Close(_));
                if socket.send(reply).await.is_err() || last {
                    ended = true;
                    break;
                }
            }
            if ended {
                break;
            }
        }
    }
    shared.write(|world| {
        world.gateway.live.remove(&id);
        world.gateway.zombies.remove(&id);
    });
}

fn close(code: u16, reason: &str) -> Message {
    Message::Close(Some(CloseFrame {
        code: CloseCode::from(code),
        reason: reason.to_string().into(),
    }))
}

fn op(op: u8, d: Value) -> Message {
    Message::text(json!({"op": op, "d": d, "s": null, "t": null}).to_string())
}

/// What the connection must send now: a switch the test threw, then the session's events
/// not sent yet (none to a zombie).
fn pending(world: &mut World, conn: &mut Conn) -> Vec<Message> {
    let gateway = &mut world.gateway;
    if let Some(code) = gateway.close_with {
        if gateway.live.len() <= 1 {
            gateway.close_with = None;
        }
        gateway.live.remove(&conn.id);
        return vec![close(code, "closed by the test")];
    }
    if gateway.reconnect {
        gateway.reconnect = false;
        return vec![op(7, Value::Null)];
    }
    if let Some(resumable) = gateway.invalidate.take() {
        if !resumable {
            gateway.session = None;
        }
        return vec![op(9, json!(resumable))];
    }
    if gateway.zombies.contains(&conn.id) {
        return Vec::new();
    }
    let (Some(attached), Some(session)) = (&conn.session, &gateway.session) else {
        return Vec::new();
    };
    if *attached != session.id {
        return Vec::new();
    }
    let frames: Vec<Message> = session
        .events
        .iter()
        .filter(|(seq, ..)| *seq > conn.sent)
        .map(|(seq, name, data)| {
            Message::text(json!({"op": 0, "s": seq, "t": name, "d": data}).to_string())
        })
        .collect();
    conn.sent = session.seq();
    frames
}

/// The answer to a frame from the bot.
fn received(world: &mut World, conn: &mut Conn, frame: &Value) -> Vec<Message> {
    let token_ok = |world: &World| {
        frame["d"]["token"]
            .as_str()
            .is_some_and(|t| world.tokens.iter().any(|known| known == t))
    };
    match frame["op"].as_u64() {
        Some(1) => {
            world.gateway.stats.heartbeats += 1;
            if world.gateway.zombies.contains(&conn.id) {
                Vec::new()
            } else {
                vec![op(11, Value::Null)]
            }
        }
        Some(2) => {
            if !token_ok(world) {
                return vec![close(4004, "Authentication failed.")];
            }
            world.gateway.stats.identifies += 1;
            begin_session(world, conn);
            Vec::new()
        }
        Some(6) => {
            if !token_ok(world) {
                return vec![close(4004, "Authentication failed.")];
            }
            let session_id = frame["d"]["session_id"].as_str().unwrap_or_default();
            let seq = frame["d"]["seq"].as_i64().unwrap_or(-1);
            world
                .gateway
                .stats
                .resumes
                .push((session_id.to_string(), seq));
            let current = world.gateway.session.as_ref();
            match current {
                Some(session) if session.id == session_id && (0..=session.seq()).contains(&seq) => {
                    conn.session = Some(session.id.clone());
                    conn.sent = seq;
                    world.dispatch("RESUMED", json!({}));
                    Vec::new()
                }
                _ => vec![op(9, json!(false))],
            }
        }
        Some(_) => Vec::new(),
        None => vec![close(4002, "Error while decoding payload.")],
    }
}

/// A new session for `conn`: READY, then each guild.
fn begin_session(world: &mut World, conn: &mut Conn) {
    let id = format!("session-{}", world.snowflake());
    world.gateway.session = Some(Session {
        id: id.clone(),
        events: Vec::new(),
    });
    world.gateway.stats.sessions += 1;
    conn.session = Some(id.clone());
    conn.sent = 0;
    let guilds: Vec<Value> = world
        .guilds
        .keys()
        .map(|g| json!({"id": g, "unavailable": true}))
        .collect();
    let ready = json!({"v": 10, "user": world.bot.json(), "guilds": guilds, "session_id": id,
        "resume_gateway_url": world.ws_url, "shard": [0, 1],
        "application": {"id": world.application_id, "flags": 0}});
    world.dispatch("READY", ready);
    let creates: Vec<Value> = world
        .guilds
        .iter()
        .map(|(guild, name)| {
            let in_guild = |parent: bool| -> Vec<Value> {
                world
                    .channels
                    .values()
                    .filter(|c| c.guild_id == *guild && c.parent_id.is_empty() != parent)
                    .map(super::state::Channel::json)
                    .collect()
            };
            json!({"id": guild, "name": name, "channels": in_guild(false),
                "threads": in_guild(true), "unavailable": false})
        })
        .collect();
    for create in creates {
        world.dispatch("GUILD_CREATE", create);
    }
}
