//! How the database grows with a long conversation whose every turn starts a background review
//! (memory nudge every turn): its size and the bytes per stored message after each tenth of the
//! turns. Growth is linear when the bytes per message stay flat; a review that copied the
//! conversation would make them climb with its length.
//!
//! `cargo build --release --workspace --bins && target/release/bench-growth [TURNS]` (1,000)

#![allow(clippy::unwrap_used, clippy::expect_used)]

use hermes_proto::pb;
use hermes_tests::{
    TestHome,
    fake_llm::{FakeLlm, Reply},
    home::StopOnDrop,
};

fn measure(home: &TestHome) -> (i64, i64, i64) {
    let db = rusqlite::Connection::open_with_flags(
        home.path().join("hermesd.db"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let one = |sql: &str| -> i64 { db.query_row(sql, [], |r| r.get(0)).unwrap() };
    let bytes = one("PRAGMA page_count") * one("PRAGMA page_size")
        - one("PRAGMA freelist_count") * one("PRAGMA page_size");
    (
        bytes,
        one("SELECT count(*) FROM messages"),
        one("SELECT count(*) FROM sessions WHERE source = 'review'"),
    )
}

#[tokio::main]
async fn main() {
    let turns: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000)
        .max(10);
    // Each turn and each review answers with text; requests may interleave, so every reply is
    // the same.
    let server = FakeLlm::start(Vec::new()).await;
    for _ in 0..turns * 2 {
        server.push(Reply::text("noted; nothing to save"));
    }
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(
        &server,
        "memory:\n  nudge_interval: 1\nskills:\n  creation_nudge_interval: 0\n",
    );
    home.ctl_async(&["status"]).await.ok();
    let channel = hermes_proto::client::connect(&home.socket()).await.unwrap();
    let mut sessions = pb::sessions_client::SessionsClient::new(channel);
    let text = "a message of a long conversation, about as long as people write them. ".repeat(3);
    let mut session_id = String::new();
    println!(
        "Database growth, one conversation, a background review after every turn ({turns} turns)\n"
    );
    println!(
        "| turns | reviews | messages | database | bytes per message |\n|---|---|---|---|---|"
    );
    for turn in 1..=turns {
        let reply = sessions
            .send(pb::SendRequest {
                session_id: session_id.clone(),
                text: text.clone(),
                cwd: home.path().display().to_string(),
                ..pb::SendRequest::default()
            })
            .await
            .unwrap()
            .into_inner();
        session_id = reply.session_id;
        if turn % (turns / 10) == 0 {
            // Reviews run in the background: let the last one finish before measuring.
            server
                .wait_for_requests(turn * 2, std::time::Duration::from_secs(30))
                .await;
            let (bytes, messages, reviews) = measure(&home);
            println!(
                "| {turn} | {reviews} | {messages} | {:.1} MiB | {} |",
                bytes as f64 / (1024.0 * 1024.0),
                bytes / messages.max(1)
            );
        }
    }
}
