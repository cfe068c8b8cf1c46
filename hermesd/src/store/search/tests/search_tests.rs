//! `search`: precision on a generated corpus, filters, ranking, and compression chains
//! collapsed into one hit per conversation.

use rusqlite::Connection;

use super::super::{Ranking, SearchQuery, search};
use super::{continue_with, conversations, db, message, q, session};

/// Words that no query below looks for.
const FILLER: &[&str] = &[
    "the", "of", "and", "to", "in", "is", "it", "that", "was", "for", "on", "are", "with", "as",
    "be", "at", "this", "have", "from", "or", "one", "had", "by", "but", "not", "what", "all",
    "were", "when", "we", "there", "can", "an", "your", "which", "their", "said", "if", "do",
];

/// Sentences planted into given sessions; everything else is filler.
const PLANTED: &[(&str, &str)] = &[
    ("s03", "the kubernetes cluster upgrade failed twice"),
    ("s17", "plan a kubernetes upgrade for the cluster"),
    ("s05", "postgres vacuum tuning notes"),
    ("s08", "run deploy-script.sh before noon"),
    ("s10", "make a shopping list"),
    ("s11", "the files listed below"),
    ("s12", "listing directories is slow"),
    ("s14", "blue green deployment strategy"),
    ("s15", "green blue paint for the fence"),
    ("s20", "TODO: fix the flaky test"),
    ("s21", "postgres replication lag"),
    ("s22", "redis replication setup"),
];

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn precision_corpus() -> Connection {
    let conn = db();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut at = 0;
    for s in 0..30 {
        let id = format!("s{s:02}");
        session(&conn, &id, "cli", None, "root");
        for turn in 0..6 {
            let filler: Vec<&str> = (0..12)
                .map(|_| FILLER[(rng.next() % FILLER.len() as u64) as usize])
                .collect();
            let role = if turn % 2 == 0 { "user" } else { "assistant" };
            at += 1;
            message(&conn, &id, role, &filler.join(" "), at);
        }
        for (_, sentence) in PLANTED.iter().filter(|(sid, _)| *sid == id) {
            at += 1;
            message(&conn, &id, "assistant", sentence, at);
        }
    }
    conn
}

#[test]
fn every_query_finds_exactly_its_conversations() {
    let conn = precision_corpus();
    let cases: &[(&str, &[&str])] = &[
        ("kubernetes", &["s03", "s17"]),
        ("kubernetes upgrade", &["s03", "s17"]),
        ("\"kubernetes cluster\"", &["s03"]),
        ("kubernetes NOT failed", &["s17"]),
        ("vacuum OR redis", &["s05", "s22"]),
        ("postgres AND replication", &["s21"]),
        ("(postgres OR redis) replication", &["s21", "s22"]),
        ("replication NOT (redis OR lag)", &[]),
        ("deploy-script.sh", &["s08"]),
        ("list*", &["s10", "s11", "s12"]),
        ("list", &["s10"]),
        ("\"blue green\"", &["s14"]),
        ("blue green", &["s14", "s15"]),
        ("TODO: flaky", &["s20"]),
        ("nonexistentword", &[]),
    ];
    for (text, expected) in cases {
        assert_eq!(&conversations(&conn, &q(text)), expected, "query {text}");
        let mut all = q(text);
        all.ranking = Ranking::All;
        assert_eq!(&conversations(&conn, &all), expected, "query {text}, all");
    }
}

#[test]
fn hits_are_best_first_with_marked_snippets() {
    let conn = precision_corpus();
    let hits = search(&conn, &q("kubernetes")).unwrap();
    assert_eq!(hits.len(), 2);
    assert!(hits[0].score <= hits[1].score);
    assert!(hits.iter().all(|h| h.snippet.contains("«kubernetes»")));
    let hit = &search(&conn, &q("vacuum")).unwrap()[0];
    assert_eq!(
        (hit.snippet.as_str(), hit.role.as_str(), hit.source.as_str()),
        ("postgres «vacuum» tuning notes", "assistant", "cli")
    );
}

/// a → b → c by compression; every segment mentions "zebra".
fn chain() -> Connection {
    let conn = db();
    session(&conn, "a", "cli", Some("First"), "root");
    session(&conn, "b", "cli", Some("Second"), "root");
    session(&conn, "c", "cli", None, "root");
    continue_with(&conn, "a", "b");
    continue_with(&conn, "b", "c");
    message(&conn, "a", "user", "zebra zebra zebra", 1);
    message(
        &conn,
        "b",
        "user",
        "a zebra among many other animals in the park today",
        2,
    );
    message(
        &conn,
        "c",
        "user",
        "another zebra sighting with lots of words around it",
        3,
    );
    session(&conn, "other", "cli", Some("Other"), "root");
    message(&conn, "other", "user", "zebra crossing", 4);
    conn
}

#[test]
fn a_compression_chain_is_one_hit_named_after_its_newest_segment() {
    let conn = chain();
    let hits = search(&conn, &q("zebra")).unwrap();
    assert_eq!(hits.len(), 2);
    let hit = hits.iter().find(|h| h.conversation_id == "c").unwrap();
    assert_eq!(hit.segment_id, "a");
    assert_eq!(hit.title.as_deref(), Some("First"));
    conn.execute("UPDATE sessions SET title = 'Head' WHERE id = 'c'", [])
        .unwrap();
    let hits = search(&conn, &q("zebra")).unwrap();
    let hit = hits.iter().find(|h| h.conversation_id == "c").unwrap();
    assert_eq!(hit.title.as_deref(), Some("Head"));
}

#[test]
fn excluding_a_conversation_drops_all_its_segments() {
    let conn = chain();
    for segment in ["a", "b", "c"] {
        let query = SearchQuery {
            exclude_conversation: Some(segment.into()),
            ..q("zebra")
        };
        assert_eq!(conversations(&conn, &query), vec!["other"], "{segment}");
    }
    let query = SearchQuery {
        exclude_conversation: Some("other".into()),
        ..q("zebra")
    };
    assert_eq!(conversations(&conn, &query), vec!["c"]);
}

#[test]
fn filters_apply_before_the_collapse() {
    let conn = chain();
    let query = SearchQuery {
        since_ms: Some(2),
        until_ms: Some(3),
        ..q("zebra")
    };
    let hits = search(&conn, &query).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(
        (
            hits[0].conversation_id.as_str(),
            hits[0].segment_id.as_str()
        ),
        ("c", "b")
    );
    let query = SearchQuery {
        since_ms: Some(4),
        ..q("zebra")
    };
    assert_eq!(conversations(&conn, &query), vec!["other"]);
}

#[test]
fn role_source_and_subagent_filters() {
    let conn = db();
    session(&conn, "main", "cli", None, "root");
    session(&conn, "tg", "telegram", None, "root");
    session(&conn, "sub", "cli", None, "subagent");
    message(&conn, "main", "tool", "walrus output from a tool", 1);
    message(&conn, "main", "user", "walrus question", 2);
    message(&conn, "tg", "assistant", "walrus answer", 3);
    message(&conn, "sub", "assistant", "walrus from a subagent", 4);
    message(&conn, "main", "system", "walrus system prompt", 5);
    assert_eq!(conversations(&conn, &q("walrus")), vec!["main", "tg"]);
    let tool = SearchQuery {
        role: Some("tool".into()),
        ..q("walrus")
    };
    let hits = search(&conn, &tool).unwrap();
    assert_eq!((hits.len(), hits[0].role.as_str()), (1, "tool"));
    let assistant = SearchQuery {
        role: Some("assistant".into()),
        ..q("walrus")
    };
    assert_eq!(conversations(&conn, &assistant), vec!["tg"]);
    let cli = SearchQuery {
        source: Some("cli".into()),
        ..q("walrus")
    };
    assert_eq!(conversations(&conn, &cli), vec!["main", "sub"]);
    let telegram = SearchQuery {
        source: Some("telegram".into()),
        ..q("walrus")
    };
    assert_eq!(conversations(&conn, &telegram), vec!["tg"]);
}

#[test]
fn recent_ranking_only_scores_the_newest_window() {
    let conn = db();
    for (i, text) in [
        "heron heron heron heron",
        "a heron standing in the river with many other birds nearby",
        "one heron flew over the house and the garden and the field",
        "the heron again, in a long sentence about nothing much at all",
    ]
    .iter()
    .enumerate()
    {
        let id = format!("h{i}");
        session(&conn, &id, "cli", None, "root");
        message(&conn, &id, "user", text, i as i64);
    }
    let all = SearchQuery {
        limit: 1,
        ranking: Ranking::All,
        ..q("heron")
    };
    assert_eq!(conversations(&conn, &all), vec!["h0"]);
    let recent = SearchQuery {
        ranking: Ranking::Recent(3),
        ..all.clone()
    };
    assert_ne!(conversations(&conn, &recent), vec!["h0"]);
    let recent = SearchQuery {
        ranking: Ranking::Recent(3),
        limit: 3,
        ..all
    };
    assert_eq!(conversations(&conn, &recent), vec!["h1", "h2", "h3"]);
    assert!(
        search(
            &conn,
            &SearchQuery {
                limit: 0,
                ..q("heron")
            }
        )
        .unwrap()
        .is_empty()
    );
}
