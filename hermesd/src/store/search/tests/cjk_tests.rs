//! CJK substring search: the bigram transform, the SQL functions and triggers, and searches in
//! Chinese, Japanese, Korean and mixed text.

use rusqlite::Connection;

use super::super::{cjk_terms, has_cjk, is_cjk, register_functions, search};
use super::{conversations, db, message, q, session};

#[test]
fn classifies_cjk_letters_but_not_punctuation() {
    for c in ['我', '編', 'の', 'カ', 'ー', '한', '々', 'ｶ'] {
        assert!(is_cjk(c), "{c}");
    }
    for c in ['a', '。', '、', '・', '「', 'é', '1', ' ', '！'] {
        assert!(!is_cjk(c), "{c}");
    }
    assert!(has_cjk("rust 编程"));
    assert!(!has_cjk("plain English, «quoted»"));
}

#[test]
fn transform_makes_bigrams_plus_the_last_character() {
    assert_eq!(cjk_terms("我喜欢编程"), "我喜 喜欢 欢编 编程 程 ");
    assert_eq!(cjk_terms("我"), "我 ");
    assert_eq!(cjk_terms("用Rust编程!"), "用 Rust 编程 程 !");
    assert_eq!(cjk_terms("你好，世界"), "你好 好 ， 世界 界 ");
    assert_eq!(cjk_terms("no cjk here"), "no cjk here");
    assert_eq!(cjk_terms(""), "");
}

#[test]
fn sql_functions_work_and_are_usable_from_triggers() {
    let conn = Connection::open_in_memory().unwrap();
    register_functions(&conn).unwrap();
    let (has, terms, none): (i64, String, Option<String>) = conn
        .query_row(
            "SELECT hermes_has_cjk('数据库 db'), hermes_cjk_terms('数据库'), hermes_cjk_terms(NULL)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!((has, terms.as_str(), none), (1, "数据 据库 库 ", None));
    let zero: i64 = conn
        .query_row(
            "SELECT hermes_has_cjk('abc') + hermes_has_cjk(42)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(zero, 0);
}

fn cjk_rowids(conn: &Connection, fts: &str) -> Vec<i64> {
    let mut stmt = conn
        .prepare("SELECT rowid FROM messages_cjk WHERE messages_cjk MATCH ?1 ORDER BY rowid")
        .unwrap();
    stmt.query_map([fts], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

#[test]
fn triggers_index_only_cjk_rows_and_follow_updates_and_deletes() {
    let conn = db();
    session(&conn, "s", "cli", None, "root");
    let english = message(&conn, "s", "user", "only english words", 1);
    let chinese = message(&conn, "s", "user", "我喜欢编程", 2);
    let rows: i64 = conn
        .query_row("SELECT count(*) FROM messages_cjk", [], |r| r.get(0))
        .unwrap();
    assert_eq!(rows, 1);
    assert_eq!(cjk_rowids(&conn, "\"编程\""), vec![chinese]);
    conn.execute(
        "UPDATE messages SET content = '数据库' WHERE id = ?1",
        [chinese],
    )
    .unwrap();
    assert!(cjk_rowids(&conn, "\"编程\"").is_empty());
    assert_eq!(cjk_rowids(&conn, "\"数据\""), vec![chinese]);
    conn.execute(
        "UPDATE messages SET content = '学习日本語' WHERE id = ?1",
        [english],
    )
    .unwrap();
    assert_eq!(cjk_rowids(&conn, "\"日本 本語\""), vec![english]);
    conn.execute(
        "UPDATE messages SET content = 'english again' WHERE id = ?1",
        [english],
    )
    .unwrap();
    assert!(cjk_rowids(&conn, "\"日本\"").is_empty());
    conn.execute("DELETE FROM sessions WHERE id = 's'", [])
        .unwrap();
    let rows: i64 = conn
        .query_row("SELECT count(*) FROM messages_cjk", [], |r| r.get(0))
        .unwrap();
    assert_eq!(rows, 0);
}

#[test]
fn migration_backfills_existing_rows() {
    let conn = Connection::open_in_memory().unwrap();
    // The schema just before the CJK index, with rows already stored.
    crate::store::migrations::apply_up_to(&conn, 4).unwrap();
    session(&conn, "old", "cli", None, "root");
    let id = message(&conn, "old", "assistant", "以前的消息：数据库迁移", 1);
    message(&conn, "old", "assistant", "an English one", 2);
    register_functions(&conn).unwrap();
    crate::store::migrations::apply(&conn).unwrap();
    assert_eq!(cjk_rowids(&conn, "\"迁移\""), vec![id]);
    assert_eq!(conversations(&conn, &q("迁")), vec!["old"]);
}

/// One session per message, named after it.
fn corpus() -> Connection {
    let conn = db();
    for (id, text) in [
        ("zh", "我喜欢编程，尤其是用Rust写数据库。"),
        ("zh2", "今天天气很好，我们去公园吧"),
        ("ja", "東京で日本語のプログラミングを勉強しています"),
        ("ko", "저는 한국어 프로그래밍을 좋아합니다"),
        ("mixed", "deploy the 服务器 with nginx today"),
        ("en", "plain English about programming in rust"),
    ] {
        session(&conn, id, "cli", None, "root");
        message(&conn, id, "user", text, 1);
    }
    conn
}

#[test]
fn chinese_substrings_of_two_and_one_characters() {
    let conn = corpus();
    assert_eq!(conversations(&conn, &q("编程")), vec!["zh"]);
    assert_eq!(conversations(&conn, &q("喜欢编程")), vec!["zh"]);
    assert_eq!(conversations(&conn, &q("编")), vec!["zh"]);
    assert_eq!(conversations(&conn, &q("程")), vec!["zh"]);
    assert_eq!(conversations(&conn, &q("天气")), vec!["zh2"]);
    assert_eq!(conversations(&conn, &q("我")), vec!["zh", "zh2"]);
    assert_eq!(conversations(&conn, &q("编程很好")), Vec::<String>::new());
    assert_eq!(conversations(&conn, &q("\"编程，尤其\"")), vec!["zh"]);
    assert_eq!(conversations(&conn, &q("编程 NOT 公园")), vec!["zh"]);
    assert_eq!(conversations(&conn, &q("编程 OR 公园")), vec!["zh", "zh2"]);
}

#[test]
fn japanese_kana_and_kanji() {
    let conn = corpus();
    assert_eq!(conversations(&conn, &q("日本語")), vec!["ja"]);
    assert_eq!(conversations(&conn, &q("プログラミング")), vec!["ja"]);
    assert_eq!(conversations(&conn, &q("勉強")), vec!["ja"]);
    assert_eq!(conversations(&conn, &q("京")), vec!["ja"]);
    assert_eq!(conversations(&conn, &q("ミン")), vec!["ja"]);
}

#[test]
fn korean_hangul() {
    let conn = corpus();
    assert_eq!(conversations(&conn, &q("한국어")), vec!["ko"]);
    assert_eq!(conversations(&conn, &q("프로그래밍")), vec!["ko"]);
    assert_eq!(conversations(&conn, &q("좋아")), vec!["ko"]);
    assert_eq!(conversations(&conn, &q("합")), vec!["ko"]);
}

#[test]
fn mixed_english_and_chinese() {
    let conn = corpus();
    assert_eq!(conversations(&conn, &q("nginx 服务")), vec!["mixed"]);
    assert_eq!(
        conversations(&conn, &q("\"the 服务器 with\"")),
        vec!["mixed"]
    );
    assert_eq!(conversations(&conn, &q("Rust写")), vec!["zh"]);
    assert_eq!(conversations(&conn, &q("rust")), vec!["en", "zh"]);
    assert_eq!(conversations(&conn, &q("rust NOT 数据库")), vec!["en"]);
    assert_eq!(
        conversations(&conn, &q("rust OR 天气")),
        vec!["en", "zh", "zh2"]
    );
    assert_eq!(
        conversations(&conn, &q("nginx NOT deploy")),
        Vec::<String>::new()
    );
    assert_eq!(conversations(&conn, &q("programming")), vec!["en"]);
}

#[test]
fn cjk_snippets_mark_matches_within_forty_characters() {
    let conn = db();
    session(&conn, "long", "cli", None, "root");
    let before = "前".repeat(60);
    let after = "后".repeat(60);
    message(
        &conn,
        "long",
        "user",
        &format!("{before}数据库{after} Rust"),
        1,
    );
    let hits = search(&conn, &q("数据库")).unwrap();
    let expected = format!("…{}«数据库»{}…", "前".repeat(40), "后".repeat(40));
    assert_eq!(hits[0].snippet, expected);
    let conn = db();
    session(&conn, "short", "cli", None, "root");
    message(&conn, "short", "user", "用Rust写数据库 and rust again", 2);
    let hits = search(&conn, &q("rust 数据")).unwrap();
    assert_eq!(hits[0].conversation_id, "short");
    assert_eq!(hits[0].snippet, "用«Rust»写«数据»库 and «rust» again");
}
