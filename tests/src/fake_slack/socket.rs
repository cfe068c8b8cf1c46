//! Socket Mode's websocket: a connection opened with a ticket from `apps.connections.open`
//! (used once) is greeted with `hello`, then gets every envelope not yet acked: those it was not
//! sent yet, and on a new connection those an older one never acked, again, with `retry_attempt`
//! counting the sends (Slack's redelivery). An envelope is acked by a frame naming its
//! `envelope_id`. The test can send a `disconnect` on the live connection (nothing more goes out
//! on it) or make it silent (it neither reads, so pings go unanswered, nor sends); a new
//! connection is served normally.

use std::sync::Arc;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::{
    WebSocketStream,
    tungstenite::{
        Message as Frame,
        handshake::server::{Request, Response},
    },
};

use super::state::{Link, Shared};

/// Accepts connections until the fake stops.
pub async fn serve(listener: TcpListener, shared: Arc<Shared>) {
    loop {
        let accepted = tokio::select! {
            () = shared.stop.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        let Ok((tcp, _)) = accepted else { continue };
        let _ = tcp.set_nodelay(true);
        tokio::spawn(connection(tcp, shared.clone()));
    }
}

#[allow(clippy::result_large_err)] // the handshake callback's type is tungstenite's
async fn connection(tcp: TcpStream, shared: Arc<Shared>) {
    let mut path = String::new();
    let handshake =
        tokio_tungstenite::accept_hdr_async(tcp, |request: &Request, response: Response| {
            path = request.uri().to_string();
            Ok(response)
        })
        .await;
    let Ok(mut ws) = handshake else { return };
    let ticket = path.split("ticket=").nth(1).unwrap_or_default().to_owned();
    let id = shared.write(|world| {
        let known = world.tickets.iter().position(|t| *t == ticket)?;
        world.tickets.remove(known);
        let id = world.links.len() as u64 + 1;
        world.links.push(Link {
            id,
            open: true,
            ..Link::default()
        });
        Some(id)
    });
    let Some(id) = id else {
        let _ = ws.close(None).await;
        return;
    };
    let open = shared.read(|world| world.links.iter().filter(|l| l.open).count());
    let hello = json!({"type": "hello", "num_connections": open,
        "debug_info": {"host": "applink-fake", "build_number": 1, "approximate_connection_time": 3600},
        "connection_info": {"app_id": "A0FAKEAPP"}});
    if ws.send(Frame::text(hello.to_string())).await.is_ok() {
        run(&mut ws, &shared, id).await;
    }
    shared.write(|world| {
        if let Some(link) = world.link_mut(id) {
            link.open = false;
        }
    });
}

/// What to do next on a connection.
enum Turn {
    Send(Vec<Value>),
    Silent,
}

async fn run(ws: &mut WebSocketStream<TcpStream>, shared: &Shared, id: u64) {
    let mut changes = shared.subscribe();
    loop {
        changes.borrow_and_update();
        // Read first: a write wakes every connection, so one is made only when something is due.
        let turn = match shared.read(|world| due(world, id)) {
            Some(true) => shared.write(|world| outgoing(world, id)),
            Some(false) => Turn::Send(Vec::new()),
            None => Turn::Silent,
        };
        match turn {
            Turn::Silent => {
                tokio::select! {
                    () = shared.stop.cancelled() => return,
                    changed = changes.changed() => if changed.is_err() { return },
                }
                continue;
            }
            Turn::Send(frames) => {
                for frame in frames {
                    if ws.send(Frame::text(frame.to_string())).await.is_err() {
                        return;
                    }
                }
            }
        }
        tokio::select! {
            () = shared.stop.cancelled() => return,
            changed = changes.changed() => if changed.is_err() { return },
            frame = ws.next() => match frame {
                Some(Ok(Frame::Text(text))) => ack(shared, text.as_str()),
                Some(Ok(Frame::Ping(_))) => {
                    // The pong is queued by the read; send it now.
                    if ws.flush().await.is_err() {
                        return;
                    }
                }
                Some(Ok(Frame::Close(_))) | Some(Err(_)) | None => return,
                Some(Ok(_)) => {}
            },
        }
    }
}

/// Whether frames are due on connection `id`; `None` when it is silent.
fn due(world: &super::state::World, id: u64) -> Option<bool> {
    let link = world.links.iter().find(|l| l.id == id)?;
    if link.silent {
        return None;
    }
    Some(
        link.disconnect.is_some()
            || (world.live_link() == Some(id)
                && world
                    .envelopes
                    .iter()
                    .any(|e| !e.acked && e.sent_on != Some(id))),
    )
}

/// The frames due on connection `id`, marking them sent.
fn outgoing(world: &mut super::state::World, id: u64) -> Turn {
    let Some(link) = world.link_mut(id) else {
        return Turn::Silent;
    };
    if link.silent {
        return Turn::Silent;
    }
    if let Some(reason) = link.disconnect.take() {
        link.retired = true;
        return Turn::Send(vec![json!({"type": "disconnect", "reason": reason,
            "debug_info": {"host": "applink-fake"}})]);
    }
    if world.live_link() != Some(id) {
        return Turn::Send(Vec::new());
    }
    let mut frames = Vec::new();
    for envelope in world
        .envelopes
        .iter_mut()
        .filter(|e| !e.acked && e.sent_on != Some(id))
    {
        envelope.sends += 1;
        envelope.sent_on = Some(id);
        let retry = envelope.sends - 1;
        frames.push(json!({
            "envelope_id": envelope.id,
            "payload": envelope.payload,
            "type": envelope.kind,
            "accepts_response_payload": envelope.kind != "events_api",
            "retry_attempt": retry,
            "retry_reason": if retry > 0 { "timeout" } else { "" },
        }));
    }
    Turn::Send(frames)
}

/// An ack frame: `{"envelope_id": …, "payload"?: …}`.
fn ack(shared: &Shared, text: &str) {
    let Ok(frame) = serde_json::from_str::<Value>(text) else {
        return;
    };
    let Some(id) = frame["envelope_id"].as_str() else {
        return;
    };
    shared.write(|world| {
        if let Some(envelope) = world.envelopes.iter_mut().find(|e| e.id == id) {
            envelope.acked = true;
            envelope.ack_payload = frame.get("payload").cloned();
        }
    });
}
