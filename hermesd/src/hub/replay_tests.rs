//! Property test: random interleavings of a session's events and of clients attaching (with
//! time passing between their subscription and their read of the store) never lose or repeat an
//! event, and every client sees each answer's text exactly once.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use hermes_proto::pb::{self, session_event::Kind};
use prost::Message;

use super::Joiner;
use crate::{
    hub::{Hub, LiveSession, Partial, Received, Subscription},
    store::{self, Store},
};

struct Client {
    rx: Subscription,
    partial: Option<Partial>,
    joiner: Joiner,
    seen: Vec<pb::SessionEvent>,
    read_store: bool,
}

async fn read_store(store: &Store, id: &str, client: &mut Client) {
    let id = id.to_string();
    let stored = store
        .read(move |conn| store::events_after(conn, &id, 0, 0))
        .await
        .unwrap();
    for row in stored {
        let event = pb::SessionEvent::decode(row.payload.as_slice()).unwrap();
        client.seen.extend(client.joiner.next(event));
    }
    let partial = client.partial.take().unwrap();
    client.seen.extend(client.joiner.partial(&partial));
    client.read_store = true;
}

/// Wait until `probe` has seen the event just emitted (transient events are not acknowledged).
async fn settle(probe: &mut Subscription, seq: &mut u64) {
    let Received::Event(event) = probe.recv().await else {
        panic!("the probe lost an event");
    };
    *seq = event.seq;
}

async fn run_case(seed: u64) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("t.db")).unwrap();
    let row = crate::hub::tests::root_session(&store).await;
    let id = row.id.clone();
    let hub = Hub::new(store.clone());
    let live: Arc<LiveSession> = hub.load(&row);
    let (mut probe, _) = live.subscribe();
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut clients: Vec<Client> = Vec::new();
    let mut answers: Vec<String> = Vec::new();
    let mut current: Option<String> = None;
    let mut last_seq = 0;
    for step in 0..120 {
        match rng.u8(0..10) {
            0..=4 => {
                let turn = format!("t{}", answers.len());
                let text = current.get_or_insert_with(String::new);
                let piece = format!("{step} ");
                text.push_str(&piece);
                live.emit_transient(&turn, Kind::TextDelta(pb::TextDelta { text: piece }));
                settle(&mut probe, &mut last_seq).await;
            }
            5 => {
                if let Some(text) = current.take() {
                    let turn = format!("t{}", answers.len());
                    let message = Kind::AssistantMessage(pb::AssistantMessage {
                        text: text.clone(),
                        ..pb::AssistantMessage::default()
                    });
                    live.emit_durable(&turn, message).await.unwrap();
                    settle(&mut probe, &mut last_seq).await;
                    answers.push(text);
                }
            }
            6 if current.is_none() => {
                let notice = Kind::Notice(pb::Notice {
                    kind: "n".into(),
                    text: step.to_string(),
                });
                live.emit_durable("", notice).await.unwrap();
                settle(&mut probe, &mut last_seq).await;
            }
            7 | 8 => {
                let (rx, partial) = live.subscribe();
                clients.push(Client {
                    rx,
                    partial: Some(partial),
                    joiner: Joiner::new(&id, 0),
                    seen: Vec::new(),
                    read_store: false,
                });
            }
            _ => {
                let waiting: Vec<usize> = (0..clients.len())
                    .filter(|i| !clients[*i].read_store)
                    .collect();
                if !waiting.is_empty() {
                    let i = waiting[rng.usize(0..waiting.len())];
                    read_store(&store, &id, &mut clients[i]).await;
                }
            }
        }
    }
    if let Some(text) = current.take() {
        let turn = format!("t{}", answers.len());
        let message = Kind::AssistantMessage(pb::AssistantMessage {
            text: text.clone(),
            ..pb::AssistantMessage::default()
        });
        live.emit_durable(&turn, message).await.unwrap();
        settle(&mut probe, &mut last_seq).await;
        answers.push(text);
    }
    for client in &mut clients {
        if !client.read_store {
            read_store(&store, &id, client).await;
        }
        while let Some(event) = client.rx.try_recv() {
            client.seen.extend(client.joiner.next((*event).clone()));
        }
    }
    for (n, client) in clients.iter().enumerate() {
        let seqs: Vec<u64> = client.seen.iter().map(|e| e.seq).collect();
        assert!(
            seqs.windows(2).all(|w| w[0] < w[1]),
            "seed {seed} client {n}: {seqs:?}"
        );
        assert_eq!(
            seqs.last().copied().unwrap_or(0),
            last_seq,
            "seed {seed} client {n}: a gap at the end"
        );
        let messages: Vec<&str> = client
            .seen
            .iter()
            .filter_map(|e| match &e.kind {
                Some(Kind::AssistantMessage(m)) => Some(m.text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(
            messages,
            answers.iter().map(String::as_str).collect::<Vec<_>>(),
            "seed {seed} client {n}"
        );
        for (turn, answer) in answers.iter().enumerate() {
            let turn_id = format!("t{turn}");
            let streamed: String = client
                .seen
                .iter()
                .filter(|e| e.turn_id == turn_id)
                .filter_map(|e| match &e.kind {
                    Some(Kind::TextDelta(d)) => Some(d.text.as_str()),
                    _ => None,
                })
                .collect();
            assert!(
                streamed.is_empty() || streamed == *answer,
                "seed {seed} client {n} answer {turn}: got {streamed:?} of {answer:?}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_interleavings_of_events_and_attaches_never_lose_or_repeat_anything() {
    for seed in 0..40 {
        run_case(seed).await;
    }
}
