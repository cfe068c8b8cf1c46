//! `read_file` tests: numbering, pagination, limits, guards and streaming.

use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::tools::files::read::{MAX_READ_CHARS, ReadHints, read_file, read_file_with};

fn write_lines(dir: &Path, name: &str, count: usize) -> PathBuf {
    let path = dir.join(name);
    let text: String = (1..=count).map(|i| format!("line{i}\n")).collect();
    fs::write(&path, text).unwrap();
    path
}

#[test]
fn page_is_numbered_and_hints_at_the_next_offset() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_lines(dir.path(), "ten.txt", 10);
    let result = read_file(&path, 3, 4);
    assert_eq!(result["content"], "3|line3\n4|line4\n5|line5\n6|line6");
    assert_eq!(result["total_lines"], 10);
    assert_eq!(result["truncated"], true);
    assert_eq!(
        result["hint"],
        "Use offset=7 to continue reading (showing 3-6 of 10 lines)"
    );
    assert_eq!(result["file_size"], fs::metadata(&path).unwrap().len());
    assert_eq!(result["is_binary"], false);
}

#[test]
fn whole_file_has_no_hint_and_no_phantom_last_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_lines(dir.path(), "three.txt", 3);
    let result = read_file(&path, 1, 500);
    assert_eq!(result["content"], "1|line1\n2|line2\n3|line3");
    assert_eq!(result["truncated"], false);
    assert!(result.get("hint").is_none());
}

#[test]
fn unterminated_last_line_counts_and_offset_zero_means_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("n.txt");
    fs::write(&path, "x\ny").unwrap();
    let result = read_file(&path, 0, 500);
    assert_eq!(result["content"], "1|x\n2|y");
    assert_eq!(result["total_lines"], 2);
}

#[test]
fn empty_file_and_offset_past_end_return_no_lines() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.txt");
    fs::write(&empty, "").unwrap();
    assert_eq!(read_file(&empty, 1, 10)["content"], "");
    assert_eq!(read_file(&empty, 1, 10)["total_lines"], 0);
    let three = write_lines(dir.path(), "three.txt", 3);
    let past = read_file(&three, 9, 10);
    assert_eq!(past["content"], "");
    assert_eq!(past["total_lines"], 3);
    assert_eq!(past["truncated"], false);
}

#[test]
fn limit_is_clamped_to_two_thousand() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_lines(dir.path(), "many.txt", 2500);
    let result = read_file(&path, 1, 100_000);
    assert_eq!(
        result["hint"],
        "Use offset=2001 to continue reading (showing 1-2000 of 2500 lines)"
    );
    assert!(
        result["content"]
            .as_str()
            .unwrap()
            .ends_with("\n2000|line2000")
    );
}

#[test]
fn long_lines_are_cut_with_a_marker() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.txt");
    fs::write(&path, format!("{}\nshort\n", "é".repeat(2500))).unwrap();
    let content = read_file(&path, 1, 10)["content"]
        .as_str()
        .unwrap()
        .to_owned();
    let expected = format!("1|{}... [truncated]\n2|short", "é".repeat(2000));
    assert_eq!(content, expected);
}

#[test]
fn char_budget_cuts_on_a_line_boundary_with_next_offset() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wide.txt");
    let text: String = (0..100)
        .map(|_| format!("{}\n", "w".repeat(1990)))
        .collect();
    fs::write(&path, text).unwrap();
    let result = read_file(&path, 1, 500);
    let content = result["content"].as_str().unwrap();
    let kept = content.lines().count();
    assert!(content.chars().count() <= MAX_READ_CHARS);
    assert!(kept > 40 && kept < 100);
    assert_eq!(result["truncated"], true);
    assert_eq!(result["truncated_by"], "bytes");
    assert_eq!(result["next_offset"], kept + 1);
    let hint = result["hint"].as_str().unwrap();
    assert!(
        hint.starts_with("Output truncated at the 100,000-char read budget"),
        "{hint}"
    );
    assert!(
        hint.contains(&format!("of 100). Use offset={}", kept + 1)),
        "{hint}"
    );
}

#[test]
fn leading_bom_is_stripped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bom.txt");
    fs::write(&path, "\u{feff}first\nsecond\n").unwrap();
    assert_eq!(read_file(&path, 1, 10)["content"], "1|first\n2|second");
}

#[test]
fn binary_content_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("blob");
    let mut bytes = vec![0u8; 600];
    bytes.extend_from_slice(b"some text");
    fs::write(&path, bytes).unwrap();
    let result = read_file(&path, 1, 10);
    assert_eq!(result["is_binary"], true);
    assert_eq!(
        result["error"],
        "Binary file - cannot display as text. Use appropriate tools to handle this file type."
    );
    assert_eq!(result["content"], "");
}

#[test]
fn binary_extensions_are_refused_without_reading() {
    let path = Path::new("/nonexistent/dir/Photo.PNG");
    assert_eq!(
        read_file(path, 1, 10)["error"],
        "Cannot read '/nonexistent/dir/Photo.PNG' (.png): it is an image, and read_file returns \
         text only."
    );
    let archive = Path::new("/nonexistent/dir/logs.tar.gz");
    assert_eq!(
        read_file(archive, 1, 10)["error"],
        "Cannot read '/nonexistent/dir/logs.tar.gz' (.gz): it is a binary file, and read_file \
         returns text only."
    );
}

#[test]
fn a_refusal_names_only_tools_the_session_has() {
    let image = Path::new("/nonexistent/dir/Photo.png");
    let archive = Path::new("/nonexistent/dir/logs.zip");
    let terminal_only = ReadHints {
        terminal: true,
        ..ReadHints::default()
    };
    let image_error = read_file_with(image, 1, 10, terminal_only)["error"].to_string();
    assert!(!image_error.contains("vision_analyze"), "{image_error}");
    assert!(image_error.contains("it is an image"), "{image_error}");
    assert!(image_error.contains("Use terminal"), "{image_error}");
    let archive_error = read_file_with(archive, 1, 10, terminal_only)["error"].to_string();
    assert!(archive_error.contains("Use terminal"), "{archive_error}");

    let with_vision = ReadHints {
        vision_analyze: true,
        terminal: true,
    };
    let image_error = read_file_with(image, 1, 10, with_vision)["error"].to_string();
    assert!(
        image_error.ends_with("Use vision_analyze to look at it.\""),
        "{image_error}"
    );
    let archive_error = read_file_with(archive, 1, 10, with_vision)["error"].to_string();
    assert!(!archive_error.contains("vision_analyze"), "{archive_error}");

    for ext in ["png", "zip"] {
        let path = format!("/nonexistent/x.{ext}");
        let bare = read_file(Path::new(&path), 1, 10)["error"].to_string();
        assert!(!bare.contains("Use "), "no tool to suggest: {bare}");
    }
}

#[test]
fn device_paths_and_links_to_them_are_refused() {
    let message = "Cannot read '/dev/zero': this is a device file that would block or produce infinite output.";
    assert_eq!(read_file(Path::new("/dev/zero"), 1, 10)["error"], message);
    assert!(
        read_file(Path::new("/proc/self/environ"), 1, 10)["error"]
            .as_str()
            .unwrap()
            .contains("device file")
    );
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("zeros");
    std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
    assert!(
        read_file(&link, 1, 10)["error"]
            .as_str()
            .unwrap()
            .contains("device file")
    );
}

#[test]
fn missing_file_suggests_similar_names() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("config.yaml"), "a: 1\n").unwrap();
    fs::write(dir.path().join("unrelated.rs"), "").unwrap();
    let missing = dir.path().join("config.yml");
    let result = read_file(&missing, 1, 10);
    assert_eq!(
        result["error"],
        format!("File not found: {}", missing.display())
    );
    let similar: Vec<&str> = result["similar_files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(similar, [dir.path().join("config.yaml").to_str().unwrap()]);
}

#[test]
fn directories_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let result = read_file(dir.path(), 1, 10);
    assert!(result["error"].as_str().unwrap().contains("is a directory"));
}

#[test]
fn huge_file_is_paged_by_streaming() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.log");
    let mut out = BufWriter::new(fs::File::create(&path).unwrap());
    let line = format!("{}\n", "z".repeat(99));
    for _ in 0..500_000 {
        out.write_all(line.as_bytes()).unwrap();
    }
    out.into_inner().unwrap().sync_all().unwrap();
    let result = read_file(&path, 499_995, 10);
    assert_eq!(result["total_lines"], 500_000);
    assert_eq!(result["file_size"], 50_000_000);
    let content = result["content"].as_str().unwrap();
    assert_eq!(content.lines().count(), 6);
    assert!(content.starts_with("499995|zzz"));
    let first = read_file(&path, 1, 10);
    assert_eq!(
        first["hint"],
        "Use offset=11 to continue reading (showing 1-10 of 500000 lines)"
    );
    assert!(first.get("_hint").is_none());
    let wide = read_file(&path, 1, 300);
    assert!(
        wide["_hint"]
            .as_str()
            .unwrap()
            .starts_with("This file is large (50,000,000 bytes).")
    );
}

#[test]
fn huge_single_line_is_cut_without_loading_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("one-line.txt");
    let mut out = BufWriter::new(fs::File::create(&path).unwrap());
    let chunk = vec![b'q'; 1 << 20];
    for _ in 0..50 {
        out.write_all(&chunk).unwrap();
    }
    out.into_inner().unwrap().sync_all().unwrap();
    let result = read_file(&path, 1, 10);
    assert_eq!(result["total_lines"], 1);
    let content = result["content"].as_str().unwrap();
    assert_eq!(content.len(), "1|".len() + 2000 + "... [truncated]".len());
    assert_eq!(result.get("error"), None::<&Value>);
}
