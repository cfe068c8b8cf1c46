//! Store tests on a real file: lineage, counters, events, full-text index, corrupt files.

use super::*;

fn open_temp() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("hermesd.db")).unwrap();
    (dir, store)
}

fn new_session(lineage: Lineage, parent: Option<&str>) -> NewSession {
    NewSession {
        source: "cli".into(),
        title: None,
        model: String::new(),
        cwd: "/".into(),
        parent_session_id: parent.map(str::to_string),
        lineage,
    }
}

fn user(text: &str) -> NewMessage {
    NewMessage {
        role: "user".into(),
        content: text.into(),
        input_tokens: Some(5),
        ..NewMessage::default()
    }
}

#[tokio::test]
async fn pragmas_wal_and_incremental_vacuum() {
    let (_dir, store) = open_temp();
    let (mode, vacuum): (String, i64) = store
        .read(|c| {
            let mode = c
                .query_row("PRAGMA journal_mode", [], |r| r.get(0))
                .unwrap();
            let vacuum = c.query_row("PRAGMA auto_vacuum", [], |r| r.get(0)).unwrap();
            Ok((mode, vacuum))
        })
        .await
        .unwrap();
    assert_eq!(mode, "wal");
    assert_eq!(vacuum, 2, "2 = INCREMENTAL");
}

#[tokio::test]
async fn messages_count_and_fts_finds_them() {
    let (_dir, store) = open_temp();
    let session = store
        .write(|tx| insert_session(tx, &new_session(Lineage::Root, None)))
        .await
        .unwrap();
    let id = session.id.clone();
    store
        .write(move |tx| {
            append_message(tx, &id, &user("the quick brown fox"))?;
            append_message(tx, &id, &user("lazy dogs sleep"))
        })
        .await
        .unwrap();
    let id = session.id.clone();
    let (row, hits, messages) = store
        .read(move |c| {
            let row = resolve_conversation(c, &id)?;
            let hits: i64 = c
                .query_row(
                    "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'fox'",
                    [],
                    |r| r.get(0),
                )
                .unwrap();
            Ok((row, hits, list_messages(c, &id, 0, 0)?))
        })
        .await
        .unwrap();
    assert_eq!(row.message_count, 2);
    assert_eq!(row.input_tokens, 10);
    assert_eq!(hits, 1);
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[1].content, "lazy dogs sleep");
}

#[tokio::test]
async fn appending_to_an_unknown_session_is_not_found() {
    let (_dir, store) = open_temp();
    let err = store
        .write(|tx| append_message(tx, "nope", &user("x")))
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::SessionNotFound(ref id) if id == "nope"),
        "{err}"
    );
    let err = store
        .write(|tx| put_event(tx, "nope", 1, None, "notice", &[]))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::SessionNotFound(_)), "{err}");
}

#[tokio::test]
async fn events_are_numbered_per_session() {
    let (_dir, store) = open_temp();
    let (a, b) = store
        .write(|tx| {
            let a = insert_session(tx, &new_session(Lineage::Root, None))?;
            let b = insert_session(tx, &new_session(Lineage::Root, None))?;
            Ok((a.id, b.id))
        })
        .await
        .unwrap();
    let (a2, b2) = (a.clone(), b.clone());
    store
        .write(move |tx| {
            put_event(tx, &a2, 1, Some("t1"), "assistant_message", &[1])?;
            // Seqs the live session gave to unstored deltas leave a gap; last_seq follows.
            put_event(tx, &a2, 4, Some("t1"), "assistant_message", &[4])?;
            put_event(tx, &b2, 1, None, "notice", &[1])
        })
        .await
        .unwrap();
    let last = |id: String| {
        let store = store.clone();
        async move {
            store
                .read(move |c| Ok(get_session(c, &id)?.map(|s| s.last_seq)))
                .await
                .unwrap()
        }
    };
    assert_eq!(last(a.clone()).await, Some(4));
    assert_eq!(last(b.clone()).await, Some(1));
    let after = store
        .read(move |c| events_after(c, &a, 1, 0))
        .await
        .unwrap();
    assert_eq!(after.len(), 1);
    assert_eq!((after[0].seq, after[0].payload.clone()), (4, vec![4]));
}

#[tokio::test]
async fn compression_chain_is_one_conversation() {
    let (_dir, store) = open_temp();
    let (first, second, branch) = store
        .write(|tx| {
            let first = insert_session(tx, &new_session(Lineage::Root, None))?;
            let second = insert_session(tx, &new_session(Lineage::Compression, Some(&first.id)))?;
            let branch = insert_session(tx, &new_session(Lineage::Branch, Some(&second.id)))?;
            Ok((first.id, second.id, branch.id))
        })
        .await
        .unwrap();
    let (f, s) = (first.clone(), second.clone());
    let (resolved, heads, all) = store
        .read(move |c| {
            let resolved = resolve_conversation(c, &f)?.id;
            let heads = list_sessions(
                c,
                &ListFilter {
                    limit: 10,
                    ..ListFilter::default()
                },
            )?;
            let all = list_sessions(
                c,
                &ListFilter {
                    limit: 10,
                    all_segments: true,
                    ..ListFilter::default()
                },
            )?;
            Ok((resolved, heads, all))
        })
        .await
        .unwrap();
    assert_eq!(resolved, s, "any id resolves to the newest segment");
    assert_eq!(heads.len(), 2, "one row per conversation (chain + branch)");
    assert_eq!(all.len(), 3);

    let deleted = store
        .write(move |tx| delete_conversation(tx, &first))
        .await
        .unwrap();
    assert_eq!(deleted, 2, "both segments of the chain, not the branch");
    let left = store
        .read(move |c| {
            list_sessions(
                c,
                &ListFilter {
                    limit: 10,
                    ..ListFilter::default()
                },
            )
        })
        .await
        .unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].id, branch);
    assert_eq!(
        left[0].parent_session_id, None,
        "parent link cleared when the parent goes"
    );
}

#[test]
fn garbage_file_is_reported_as_corrupt_with_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hermesd.db");
    std::fs::write(&path, vec![0x42u8; 8192]).unwrap();
    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err:?}");
    assert!(err.to_string().contains(&path.display().to_string()));
}

#[test]
fn newer_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hermesd.db");
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch("PRAGMA user_version = 99")
        .unwrap();
    let err = Store::open(&path).unwrap_err();
    assert!(
        matches!(err, StoreError::TooNew { found: 99, .. }),
        "{err:?}"
    );
}

#[test]
fn unreadable_directory_is_a_clear_error() {
    let err = Store::open(std::path::Path::new("/nonexistent-dir/hermesd.db")).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("cannot open /nonexistent-dir/hermesd.db"),
        "{err}"
    );
}
