//! `hermesctl sessions search` through the real daemon on a generated history with known
//! answers (brought in as a Python Hermes v6 state.db): words, phrases, prefixes, AND / OR /
//! NOT, filters by source, role and date, Chinese / Japanese / Korean substrings, and clear
//! errors for queries FTS5 would reject.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use std::collections::BTreeSet;

use hermes_tests::{TestHome, home::StopOnDrop};

/// Topics with a unique word each; session `s{i}` talks about `TOPICS[i]`.
const TOPICS: [&str; 8] = [
    "kubernetes",
    "sourdough",
    "telescope",
    "marathon",
    "mortgage",
    "violin",
    "compost",
    "glacier",
];

/// Sentences in other scripts, each in its own session (`cjk{i}`).
const CJK: [&str; 3] = [
    "我们明天去北京看长城，然后吃烤鸭。",
    "東京の天気は明日雨になるでしょう。",
    "서울에서 김치찌개를 먹었어요.",
];

const DAY: f64 = 86_400.0;

/// A Python Hermes v6-shaped state.db holding the corpus; message times are days apart so date
/// filters can tell them apart (session i at day i of 2026).
fn corpus(path: &std::path::Path) {
    let db = rusqlite::Connection::open(path).unwrap();
    db.execute_batch(
        "CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, title TEXT,
             started_at REAL NOT NULL, parent_session_id TEXT, end_reason TEXT, model TEXT);
         CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL,
             role TEXT NOT NULL, content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT,
             timestamp REAL NOT NULL);",
    )
    .unwrap();
    let jan1 = 1_767_225_600.0; // 2026-01-01T00:00:00Z
    let add = |id: &str, source: &str, day: f64, lines: &[(&str, String)]| {
        let at = jan1 + day * DAY;
        db.execute(
            "INSERT INTO sessions (id, source, title, started_at) VALUES (?1, ?2, ?3, ?4)",
            rusqlite::params![id, source, format!("about {id}"), at],
        )
        .unwrap();
        for (n, (role, text)) in lines.iter().enumerate() {
            db.execute(
                "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?1, ?2, ?3, ?4)",
                rusqlite::params![id, role, text, at + n as f64],
            )
            .unwrap();
        }
    };
    for (i, topic) in TOPICS.iter().enumerate() {
        let source = if i % 4 == 3 { "telegram" } else { "cli" };
        add(
            &format!("s{i}"),
            source,
            i as f64,
            &[
                (
                    "user",
                    format!("tell me about {topic} and the weather today"),
                ),
                (
                    "assistant",
                    format!("Here is what I know about {topic}: it is a fine subject."),
                ),
                ("user", format!("thanks, write a {topic} checklist for me")),
                (
                    "assistant",
                    "Done: the checklist is in your notes.".to_string(),
                ),
            ],
        );
    }
    for (i, text) in CJK.iter().enumerate() {
        add(
            &format!("cjk{i}"),
            "telegram",
            20.0 + i as f64,
            &[
                ("user", (*text).to_string()),
                ("assistant", "好的 OK".to_string()),
            ],
        );
    }
}

async fn search(home: &TestHome, args: &[&str]) -> BTreeSet<String> {
    let mut all = vec!["sessions", "search", "--json"];
    all.extend_from_slice(args);
    let hits = home.ctl_async(&all).await.json();
    hits.as_array()
        .unwrap()
        .iter()
        .map(|h| h["session_id"].as_str().unwrap().to_string())
        .collect()
}

fn set(ids: &[&str]) -> BTreeSet<String> {
    ids.iter().map(|s| (*s).to_string()).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn search_finds_exactly_the_known_answers() {
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let python = tempfile::tempdir().unwrap();
    corpus(&python.path().join("state.db"));
    home.ctl_async(&[
        "import",
        "hermes",
        "--home",
        python.path().to_str().unwrap(),
    ])
    .await
    .ok();

    assert_eq!(search(&home, &["sourdough"]).await, set(&["s1"]));
    assert_eq!(
        search(&home, &["violin OR glacier"]).await,
        set(&["s5", "s7"])
    );
    assert_eq!(search(&home, &["weather", "--limit", "3"]).await.len(), 3);
    assert_eq!(search(&home, &["weather", "--limit", "50"]).await.len(), 8);
    assert_eq!(search(&home, &["weather NOT marathon"]).await.len(), 7);
    assert_eq!(
        search(&home, &["\"marathon checklist\""]).await,
        set(&["s3"])
    );
    assert_eq!(search(&home, &["\"checklist marathon\""]).await, set(&[]));
    assert_eq!(search(&home, &["tele*"]).await, set(&["s2"]));
    assert_eq!(
        search(&home, &["mortgage compost"]).await,
        set(&[]),
        "AND by default"
    );
    assert_eq!(
        search(&home, &["weather", "--source", "telegram", "--limit", "50"]).await,
        set(&["s3", "s7"])
    );
    assert_eq!(
        search(&home, &["sourdough", "--role", "assistant"]).await,
        set(&["s1"])
    );
    assert_eq!(
        search(&home, &["thanks", "--role", "assistant"]).await,
        set(&[])
    );
    assert_eq!(
        search(
            &home,
            &["weather", "--since", "2026-01-06", "--limit", "50"]
        )
        .await,
        set(&["s5", "s6", "s7"])
    );
    assert_eq!(
        search(
            &home,
            &[
                "weather",
                "--until",
                "2026-01-02T12:00:00Z",
                "--limit",
                "50"
            ]
        )
        .await,
        set(&["s0", "s1"])
    );

    // Substrings of Chinese, Japanese and Korean text, down to two characters (and one).
    assert_eq!(search(&home, &["长城"]).await, set(&["cjk0"]));
    assert_eq!(search(&home, &["北京看长城"]).await, set(&["cjk0"]));
    assert_eq!(search(&home, &["天気"]).await, set(&["cjk1"]));
    assert_eq!(search(&home, &["김치"]).await, set(&["cjk2"]));
    assert_eq!(search(&home, &["鸭"]).await, set(&["cjk0"]));
    assert_eq!(
        search(&home, &["长城 OR 天気"]).await,
        set(&["cjk0", "cjk1"])
    );

    // The snippet marks the match.
    let hits = home
        .ctl_async(&["sessions", "search", "--json", "glacier"])
        .await
        .json();
    let snippet = hits[0]["snippet"].as_str().unwrap();
    assert!(snippet.contains("«glacier»"), "{snippet}");
    assert_eq!(hits[0]["title"], "about s7");
    let text = home.ctl_async(&["sessions", "search", "长城"]).await.ok();
    assert!(text.contains("«长城»"), "{text}");

    // Queries FTS5 would reject get a clear message, never SQL.
    for (bad, says) in [
        ("\"unclosed", "quote"),
        ("(violin", "parenthes"),
        ("violin AND", "AND"),
        ("NOT violin", "NOT"),
    ] {
        let out = home.ctl_async(&["sessions", "search", bad]).await;
        assert_eq!(out.code(), Some(1), "{bad}");
        let err = out.err();
        assert!(
            err.to_lowercase().contains(&says.to_lowercase()),
            "{bad}: {err}"
        );
        assert!(
            !err.contains("fts5") && !err.contains("SQL"),
            "{bad}: {err}"
        );
    }
}
