//! `search_files` tests on a small temp tree (a git repo with ignores).

use std::fs;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};

use crate::tools::files::search::{OutputMode, SearchRequest, SearchTarget, search_files};

fn put(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir(root.join(".git")).unwrap();
    put(root, ".gitignore", "ignored.txt\n");
    put(root, "ignored.txt", "needle\n");
    put(root, ".hidden/secret.rs", "needle\n");
    put(root, "docs/readme.md", "needle in docs\n");
    put(root, "src/lib.rs", "pub fn needle() {}\n// other\n");
    put(
        root,
        "src/main.rs",
        "fn main() {\n    let needle = 1;\n    println!(\"{}\", needle);\n}\n",
    );
    dir
}

/// A daemon home the tests never search, and the real user home.
fn policy() -> crate::policy::paths::PathPolicy {
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    crate::policy::paths::PathPolicy::new(Path::new("/nonexistent/hermes"), home.as_deref())
}

fn run(req: &SearchRequest) -> Value {
    search_files(req, &policy(), &AtomicBool::new(false))
}

fn request(pattern: &str, root: &Path) -> SearchRequest {
    SearchRequest::new(pattern, root)
}

#[test]
fn content_matches_skip_ignored_and_hidden_files() {
    let dir = tree();
    let result = run(&request("needle", dir.path()));
    assert_eq!(
        result,
        json!({
            "total_count": 4,
            "matches": [
                {"path": "./docs/readme.md", "line": 1, "content": "needle in docs"},
                {"path": "./src/lib.rs", "line": 1, "content": "pub fn needle() {}"},
                {"path": "./src/main.rs", "line": 2, "content": "    let needle = 1;"},
                {"path": "./src/main.rs", "line": 3, "content": "    println!(\"{}\", needle);"},
            ]
        })
    );
}

#[test]
fn dot_ignore_applies_outside_git() {
    let dir = tempfile::tempdir().unwrap();
    put(dir.path(), ".ignore", "skip.txt\n");
    put(dir.path(), "skip.txt", "needle\n");
    put(dir.path(), "keep.txt", "needle\n");
    let mut req = request("needle", dir.path());
    req.output_mode = OutputMode::FilesOnly;
    assert_eq!(run(&req)["files"], json!(["./keep.txt"]));
}

#[test]
fn context_lines_are_included_and_many_rows_are_densified() {
    let dir = tree();
    let mut req = request("let needle", dir.path());
    req.context = 1;
    req.path = "src".into();
    let result = run(&req);
    assert_eq!(result["total_count"], 3);
    assert_eq!(
        result["matches"][0],
        json!({"path": "src/main.rs", "line": 1, "content": "fn main() {"})
    );
    assert_eq!(result["matches"][2]["line"], 3);

    req.path = "src/lib.rs".into();
    req.pattern = "other".into();
    req.context = 0;
    assert_eq!(
        run(&req)["matches"],
        json!([{"path": "src/lib.rs", "line": 2, "content": "// other"}])
    );

    req.pattern = "needle".into();
    req.path = ".".into();
    req.context = 1;
    let dense = run(&req);
    assert_eq!(dense["total_count"], 7);
    assert!(dense.get("matches").is_none());
    assert_eq!(
        dense["matches_text"],
        "./docs/readme.md\n  1: needle in docs\n./src/lib.rs\n  1: pub fn needle() {}\n  2: // other\n\
         ./src/main.rs\n  1: fn main() {\n  2:     let needle = 1;\n  3:     println!(\"{}\", needle);\n  4: }"
    );
    assert!(
        dense["matches_format"]
            .as_str()
            .unwrap()
            .starts_with("path-grouped")
    );
}

#[test]
fn files_only_and_count_modes() {
    let dir = tree();
    let mut req = request("needle", dir.path());
    req.output_mode = OutputMode::FilesOnly;
    assert_eq!(
        run(&req),
        json!({"total_count": 3, "files": ["./docs/readme.md", "./src/lib.rs", "./src/main.rs"]})
    );
    req.output_mode = OutputMode::Count;
    assert_eq!(
        run(&req),
        json!({"total_count": 4, "counts": {"./docs/readme.md": 1, "./src/lib.rs": 1, "./src/main.rs": 2}})
    );
}

#[test]
fn file_glob_limits_the_files_searched() {
    let dir = tree();
    let mut req = request("needle", dir.path());
    req.file_glob = Some("*.md".into());
    let result = run(&req);
    assert_eq!(result["total_count"], 1);
    assert_eq!(result["matches"][0]["path"], "./docs/readme.md");
    req.file_glob = Some("[".into());
    assert!(
        run(&req)["error"]
            .as_str()
            .unwrap()
            .starts_with("Search failed: invalid glob '['")
    );
}

#[test]
fn limit_and_offset_page_through_results() {
    let dir = tree();
    let mut req = request("needle", dir.path());
    req.limit = 1;
    req.offset = 1;
    let result = run(&req);
    assert_eq!(
        result["matches"],
        json!([{"path": "./src/lib.rs", "line": 1, "content": "pub fn needle() {}"}])
    );
    assert_eq!(result["truncated"], true);
    // The walk stops once one result beyond the page is seen.
    assert_eq!(result["total_count"], 3);
    assert_eq!(
        result["hint"],
        "Results truncated. Use offset=2 to see more, or narrow with a more specific pattern or file_glob."
    );
    req.offset = 3;
    let last = run(&req);
    assert_eq!(last["matches"][0]["line"], 3);
    assert!(last.get("truncated").is_none());
}

#[test]
fn file_name_search_is_newest_first() {
    let dir = tempfile::tempdir().unwrap();
    let base = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    for (name, age) in [
        ("old.txt", 30),
        ("mid.txt", 20),
        ("new.txt", 10),
        ("other.rs", 0),
    ] {
        put(dir.path(), &format!("d/{name}"), "x");
        let file = fs::File::options()
            .write(true)
            .open(dir.path().join("d").join(name))
            .unwrap();
        file.set_modified(base - Duration::from_secs(age)).unwrap();
    }
    let mut req = request("*.txt", dir.path());
    req.target = SearchTarget::Files;
    assert_eq!(
        run(&req),
        json!({"total_count": 3, "files": ["./d/new.txt", "./d/mid.txt", "./d/old.txt"]})
    );
    req.limit = 1;
    req.offset = 1;
    let page = run(&req);
    assert_eq!(page["files"], json!(["./d/mid.txt"]));
    assert_eq!(page["truncated"], true);
    req.pattern = "old.txt".into();
    req.limit = 50;
    req.offset = 0;
    assert_eq!(run(&req)["files"], json!(["./d/old.txt"]));
}

#[test]
fn invalid_regex_is_an_error_not_a_panic() {
    let dir = tree();
    let result = run(&request("fn (", dir.path()));
    assert_eq!(result["total_count"], 0);
    assert!(
        result["error"]
            .as_str()
            .unwrap()
            .starts_with("Search failed: "),
        "{result}"
    );
}

#[test]
fn newline_in_regex_gives_the_line_oriented_warning() {
    let dir = tree();
    let result = run(&request("needle\\nfoo", dir.path()));
    assert!(result.get("error").is_none(), "{result}");
    assert!(
        result["warning"]
            .as_str()
            .unwrap()
            .starts_with("0 results found. Note: search_files")
    );
}

#[test]
fn cancel_flag_stops_the_search() {
    let dir = tree();
    for target in [SearchTarget::Content, SearchTarget::Files] {
        let mut req = request("needle", dir.path());
        req.target = target;
        let result = search_files(&req, &policy(), &AtomicBool::new(true));
        assert_eq!(result["total_count"], 0);
        assert_eq!(result["limit_reason"], "cancelled");
        assert_eq!(result["truncated"], true);
    }
}

#[test]
fn missing_path_suggests_siblings() {
    let dir = tree();
    let mut req = request("needle", dir.path());
    req.path = "sr".into();
    assert_eq!(
        run(&req),
        json!({"total_count": 0, "error": "Path not found: sr. Similar paths: ./src"})
    );
}

#[test]
fn request_deserialises_like_the_python_handler() {
    let args = json!({"pattern": "x", "target": "find", "limit": "10", "offset": -3, "path": null,
                      "output_mode": "count", "context": 2});
    let req: SearchRequest = serde_json::from_value(args).unwrap();
    assert_eq!(req.target, SearchTarget::Files);
    assert_eq!((req.limit, req.offset, req.context), (10, 0, 2));
    assert_eq!(req.path, ".");
    assert_eq!(req.output_mode, OutputMode::Count);
    let defaults: SearchRequest = serde_json::from_value(json!({"pattern": "y"})).unwrap();
    assert_eq!(
        (defaults.limit, defaults.offset, defaults.target),
        (50, 0, SearchTarget::Content)
    );
    assert_eq!(defaults.file_glob, None);
}
