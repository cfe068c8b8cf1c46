//! The query language: what users type becomes valid FTS5 or a clear one-line error.

use super::super::query::{parse_lenient, parse_strict};
use super::super::render::{Index, fts5};
use super::super::{StoreError, check_query, fts_query, search};
use super::{db, message, q, session};

fn plain(text: &str) -> String {
    fts5(&parse_strict(text).unwrap(), Index::Plain)
}

fn cjk(text: &str) -> String {
    fts5(&parse_strict(text).unwrap(), Index::Cjk)
}

fn error(text: &str) -> String {
    parse_strict(text).unwrap_err()
}

#[test]
fn words_are_quoted_so_punctuation_is_literal() {
    assert_eq!(plain("deploy nginx"), r#"("deploy" AND "nginx")"#);
    assert_eq!(
        plain("chat-send P2.2 TODO:"),
        r#"("chat-send" AND "P2.2" AND "TODO:")"#
    );
    assert_eq!(plain("NEAR ^start"), r#"("NEAR" AND "^start")"#);
}

#[test]
fn phrases_prefixes_and_operators() {
    assert_eq!(plain(r#""of the" list*"#), r#"("of the" AND "list"*)"#);
    assert_eq!(plain(r#""exact words"*"#), r#""exact words"*"#);
    assert_eq!(plain("a OR b c"), r#"("a" OR ("b" AND "c"))"#);
    assert_eq!(plain("a AND b OR c"), r#"(("a" AND "b") OR "c")"#);
    assert_eq!(plain("a NOT b c"), r#"(("a" NOT "b") AND "c")"#);
    assert_eq!(
        plain("(a OR b) NOT (c d)"),
        r#"(("a" OR "b") NOT ("c" AND "d"))"#
    );
    assert_eq!(plain("and or not"), r#"("and" AND "or" AND "not")"#);
}

#[test]
fn wordless_terms_are_dropped() {
    assert_eq!(plain("rust - + *"), r#""rust""#);
    assert_eq!(plain("rust NOT ---"), r#""rust""#);
    assert_eq!(
        error("-- ***"),
        "search query has no words to search for: -- ***"
    );
}

#[test]
fn syntax_errors_say_what_is_wrong() {
    assert_eq!(
        error(r#"say "foo"#),
        r#"unbalanced quote in search query: "foo"#
    );
    assert_eq!(error(""), "empty search query");
    assert_eq!(error("   "), "empty search query");
    assert!(error("NOT foo").starts_with("search query cannot start with NOT"));
    assert!(error("OR foo").starts_with("search query cannot start with OR"));
    assert_eq!(
        error("foo AND"),
        "search query ends with AND, which needs a term after it"
    );
    assert_eq!(
        error("foo AND OR bar"),
        "AND followed by OR in search query; put a term between them"
    );
    assert_eq!(
        error("(foo bar"),
        "unbalanced parenthesis in search query: missing \")\""
    );
    assert_eq!(
        error("foo bar)"),
        "unbalanced parenthesis in search query: unexpected \")\""
    );
    assert_eq!(error("foo ()"), "empty parentheses in search query");
    assert_eq!(
        error("(foo OR)"),
        "OR before \")\" in search query needs a term after it"
    );
    assert_eq!(
        error(&"(".repeat(40)),
        "search query nests parentheses too deeply"
    );
    assert!(error(&"x ".repeat(3000)).starts_with("search query is too long"));
}

#[test]
fn bad_queries_reach_the_caller_as_bad_query_without_sqlite_text() {
    let conn = db();
    for text in [r#""foo"#, "NOT x", "a OR", "(a", ""] {
        match search(&conn, &q(text)) {
            Err(StoreError::BadQuery(message)) => {
                assert!(!message.contains("fts5"), "{message}");
                assert!(!message.contains('\n'), "{message}");
            }
            other => panic!("{text}: {other:?}"),
        }
    }
    assert!(matches!(check_query("a AND"), Err(StoreError::BadQuery(_))));
    assert!(check_query("a AND b").is_ok());
    let mut role = q("x");
    role.role = Some("system".into());
    assert!(matches!(search(&conn, &role), Err(StoreError::BadQuery(_))));
}

#[test]
fn lenient_mode_drops_what_it_cannot_use() {
    let lenient = |t: &str| parse_lenient(t).map(|e| fts5(&e, Index::Plain));
    assert_eq!(lenient("OR nginx AND").as_deref(), Some(r#""nginx""#));
    assert_eq!(lenient("  AND "), None);
    assert_eq!(
        lenient(r#"say "foo"#).as_deref(),
        Some(r#"("say" AND "foo")"#)
    );
    assert_eq!(lenient("NOT foo").as_deref(), Some(r#""foo""#));
    assert_eq!(lenient("a OR NOT b").as_deref(), Some(r#"("a" OR "b")"#));
    assert_eq!(lenient("(a OR) b)").as_deref(), Some(r#"("a" AND "b")"#));
    assert_eq!(lenient("((a ( )").as_deref(), Some(r#""a""#));
    assert_eq!(
        fts_query("deploy nginx").as_deref(),
        Some(r#"("deploy" AND "nginx")"#)
    );
    assert_eq!(fts_query("***"), None);
}

#[test]
fn lenient_search_runs_what_strict_rejects() {
    let conn = db();
    session(&conn, "s1", "cli", None, "root");
    message(&conn, "s1", "user", "configure nginx proxy", 1);
    let mut query = q("nginx AND (proxy");
    assert!(matches!(
        search(&conn, &query),
        Err(StoreError::BadQuery(_))
    ));
    query.lenient = true;
    assert_eq!(search(&conn, &query).unwrap().len(), 1);
}

#[test]
fn cjk_terms_become_bigram_phrases() {
    assert_eq!(cjk("编程"), r#"" 编程 ""#);
    assert_eq!(cjk("喜欢编程"), r#"" 喜欢 欢编 编程 ""#);
    assert_eq!(cjk("编"), r#"" 编 "*"#);
    assert_eq!(cjk("rust编程"), r#""rust 编程 ""#);
    assert_eq!(cjk("编程rust"), r#"" 编程 程 rust""#);
    assert_eq!(cjk("A股"), r#""A 股 "*"#);
    assert_eq!(cjk("rust 编程"), r#"("rust" AND " 编程 ")"#);
    // The plain index gets CJK text as it is.
    assert_eq!(plain("编程"), r#""编程""#);
}

#[test]
fn snippets_mark_positive_terms_only() {
    use super::super::snippet::{needles, snippet};
    let expr = parse_strict("Rust编程 OR (list* NOT 中文)").unwrap();
    let needles = needles(&expr, None);
    assert_eq!(
        snippet("用rust编程 listing, blacklist, 中文", &needles),
        "用«rust»«编程» «list»ing, blacklist, 中文"
    );
    let only: std::collections::HashSet<String> = ["list".to_string()].into();
    let expr = parse_strict("rust list*").unwrap();
    assert_eq!(
        snippet(
            "rust lists",
            &super::super::snippet::needles(&expr, Some(&only))
        ),
        "rust «list»s"
    );
}
