//! Filling a home's database directly (before the daemon starts), through hermesd's own store.

use std::path::Path;

use hermesd::store::{self, Lineage, NewMessage, NewSession, Store};

/// Create `count` sessions of `source`, each with `messages` alternating user/assistant messages.
/// Returns the session ids in creation order.
pub fn sessions(home: &Path, count: usize, source: &str, messages: usize) -> Vec<String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let store = Store::open(&home.join("hermesd.db")).expect("open store");
    let source = source.to_string();
    runtime
        .block_on(store.write(move |tx| {
            let mut ids = Vec::with_capacity(count);
            for i in 0..count {
                let row = store::insert_session(
                    tx,
                    &NewSession {
                        source: source.clone(),
                        title: Some(format!("session {i}")),
                        model: "test:model".into(),
                        cwd: "/".into(),
                        parent_session_id: None,
                        lineage: Lineage::Root,
                    },
                )?;
                for m in 0..messages {
                    let role = if m % 2 == 0 { "user" } else { "assistant" };
                    store::append_message(
                        tx,
                        &row.id,
                        &NewMessage {
                            role: role.into(),
                            content: format!("message {m} of session {i}"),
                            ..NewMessage::default()
                        },
                    )?;
                }
                ids.push(row.id);
            }
            Ok(ids)
        }))
        .expect("seed sessions")
}
