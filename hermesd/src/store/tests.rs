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
    assert_eq!(
        deleted.len(),
        2,
        "both segments of the chain, not the branch"
    );
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

/// An encoded `UserMessage` event for message `id`, as the publisher stores it.
fn user_event(id: i64) -> Vec<u8> {
    use hermes_proto::pb::{self, session_event::Kind};
    use prost::Message as _;
    pb::SessionEvent {
        kind: Some(Kind::UserMessage(pb::UserMessage {
            message_id: id as u64,
            text: String::new(),
        })),
        ..pb::SessionEvent::default()
    }
    .encode_to_vec()
}

#[tokio::test]
async fn a_compressed_segment_continues_the_event_log_and_undo_takes_back_one_exchange() {
    let (_dir, store) = open_temp();
    let old = store
        .write(|tx| {
            let s = insert_session(tx, &new_session(Lineage::Root, None))?;
            let m = append_message(tx, &s.id, &user("first"))?;
            put_event(tx, &s.id, 1, Some("t1"), "turn_started", &[])?;
            put_event(tx, &s.id, 2, Some("t1"), "user_message", &user_event(m))?;
            Ok(s.id)
        })
        .await
        .unwrap();
    let from = old.clone();
    let new = store
        .write(move |tx| start_compressed_segment(tx, &from, &[user("summary of first")]))
        .await
        .unwrap();
    assert_eq!(new.last_seq, 2, "numbering goes on");
    assert_eq!(new.parent_session_id.as_deref(), Some(old.as_str()));
    let again = old.clone();
    let twice = store
        .write(move |tx| start_compressed_segment(tx, &again, &[]))
        .await
        .unwrap_err();
    assert!(matches!(twice, StoreError::Refused(_)), "{twice}");

    let id = new.id.clone();
    store
        .write(move |tx| {
            let m = append_message(tx, &id, &user("second"))?;
            put_event(tx, &id, 3, Some("t2"), "turn_started", &[])?;
            put_event(tx, &id, 4, Some("t2"), "user_message", &user_event(m))?;
            append_message(
                tx,
                &id,
                &NewMessage {
                    role: "assistant".into(),
                    content: "answer".into(),
                    ..NewMessage::default()
                },
            )?;
            put_event(tx, &id, 5, Some("t2"), "assistant_message", &[])
        })
        .await
        .unwrap();
    let chain = old.clone();
    let seqs: Vec<i64> = store
        .read(move |c| events_after(c, &chain, 0, 0))
        .await
        .unwrap()
        .iter()
        .map(|e| e.seq)
        .collect();
    assert_eq!(seqs, [1, 2, 3, 4, 5], "one log across both segments");

    let target = old.clone();
    let undone = store
        .write(move |tx| undo_last_exchange(tx, &target))
        .await
        .unwrap();
    assert_eq!(undone.user_text, "second");
    assert_eq!(undone.removed_messages, 2);
    assert_eq!(undone.segment_id, new.id);
    let chain = old.clone();
    let seqs: Vec<i64> = store
        .read(move |c| events_after(c, &chain, 0, 0))
        .await
        .unwrap()
        .iter()
        .map(|e| e.seq)
        .collect();
    assert_eq!(
        seqs,
        [1, 2],
        "the exchange's turn start and events went too"
    );
    let target = old.clone();
    let nothing = store
        .write(move |tx| {
            undo_last_exchange(tx, &target)?;
            undo_last_exchange(tx, &target)
        })
        .await
        .unwrap_err();
    assert!(matches!(nothing, StoreError::Refused(_)), "{nothing}");
}

#[tokio::test]
async fn stale_conversations_are_found_by_their_newest_segment() {
    let (_dir, store) = open_temp();
    let (old, recent) = store
        .write(|tx| {
            let a = insert_session(tx, &new_session(Lineage::Root, None))?;
            let b = insert_session(tx, &new_session(Lineage::Compression, Some(&a.id)))?;
            let c = insert_session(tx, &new_session(Lineage::Root, None))?;
            tx.execute(
                "UPDATE sessions SET updated_at = 1000 WHERE id IN (?1, ?2)",
                [&a.id, &b.id],
            )
            .unwrap();
            Ok((b.id, c.id))
        })
        .await
        .unwrap();
    let stale = store.read(|c| stale_conversations(c, 5000)).await.unwrap();
    assert_eq!(stale, [old]);
    let removed = store
        .write(move |tx| delete_conversations(tx, &stale))
        .await
        .unwrap();
    assert_eq!(removed.len(), 2, "both segments of the old chain");
    let left = store
        .read(|c| stale_conversations(c, i64::MAX))
        .await
        .unwrap();
    assert_eq!(left, [recent]);
    let free = store.with_writer_blocking(|c| vacuum_step(c, 100)).unwrap();
    assert!(free >= 0);
}

#[tokio::test]
async fn full_text_segments_merge_in_steps_outside_the_writes() {
    let (_dir, store) = open_temp();
    let automerge: i64 = store
        .read(|c| {
            c.query_row(
                "SELECT v FROM messages_fts_config WHERE k = 'automerge'",
                [],
                |r| r.get(0),
            )
            .map_err(StoreError::sql("read fts config"))
        })
        .await
        .unwrap();
    assert_eq!(automerge, 0, "writes never merge segments themselves");
    let id = store
        .write(|tx| Ok(insert_session(tx, &new_session(Lineage::Root, None))?.id))
        .await
        .unwrap();
    // One transaction per message: one new index segment each.
    for i in 0..40 {
        let id = id.clone();
        store
            .write(move |tx| {
                append_message(tx, &id, &user(&format!("note {i} about 长城 and zebras")))
            })
            .await
            .unwrap();
    }
    let mut steps = 0;
    while store
        .with_writer_blocking(|c| fts_merge_step(c, 16))
        .unwrap()
    {
        steps += 1;
        assert!(steps < 1000, "merging ends");
    }
    assert!(steps > 0, "there was merging to do");
    let found = store
        .read(|c| {
            search::search(
                c,
                &search::SearchQuery {
                    text: "zebras".into(),
                    limit: 5,
                    ..search::SearchQuery::default()
                },
            )
        })
        .await
        .unwrap();
    assert_eq!(
        found.len(),
        1,
        "one conversation, still found after merging"
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

#[tokio::test]
async fn every_segment_of_a_chain_shares_its_conversation_id_and_the_seq_reservation() {
    let (_dir, store) = open_temp();
    let root = store
        .write(|tx| {
            let s = insert_session(tx, &new_session(Lineage::Root, None))?;
            put_event(tx, &s.id, 1, None, "notice", &[])?;
            reserve_seqs(tx, &s.id, 1_000)?;
            reserve_seqs(tx, &s.id, 10)?;
            get_session(tx, &s.id)
        })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        root.conversation_id, root.id,
        "a first segment is its own key"
    );
    assert_eq!(root.seq_reserved, 1_000, "a reservation never goes down");
    assert_eq!(root.seq_floor(), 1_000);
    let from = root.id.clone();
    let second = store
        .write(move |tx| start_compressed_segment(tx, &from, &[user("summary")]))
        .await
        .unwrap();
    let from = second.id.clone();
    let third = store
        .write(move |tx| start_compressed_segment(tx, &from, &[user("summary 2")]))
        .await
        .unwrap();
    assert_eq!(second.conversation_id, root.id);
    assert_eq!(third.conversation_id, root.id);
    assert_eq!(
        third.seq_floor(),
        1_000,
        "numbering goes on after the reservation"
    );
    let lookup = root.id.clone();
    let newest = store
        .read(move |c| resolve_conversation(c, &lookup))
        .await
        .unwrap();
    assert_eq!(newest.id, third.id);
    assert_eq!(newest.conversation_id, root.id);
    let branched = store
        .write(|tx| insert_session(tx, &new_session(Lineage::Branch, None)))
        .await
        .unwrap();
    assert_eq!(
        branched.conversation_id, branched.id,
        "a branch is a conversation of its own"
    );
}
