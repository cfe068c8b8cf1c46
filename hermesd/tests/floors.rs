//! The floors of `docs/architecture.md`, checked: every module of `hermesd/src` imports only
//! modules on lower floors. A new import that reaches up fails here, naming the file and the
//! module it reached.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use std::{
    collections::BTreeSet,
    path::{Path, PathBuf},
};

/// Each top-level module and its floor; a module may import only modules on lower floors.
const FLOORS: &[(&str, u32)] = &[
    ("config", 2),
    ("ids", 2),
    ("logging", 2),
    ("cli", 2),
    ("residency", 2),
    ("lockfile", 2),
    ("store", 3),
    ("hub", 4),
    ("policy", 4),
    ("confine", 5),
    ("auth", 5),
    ("llm", 6),
    ("exec", 6),
    ("browser", 6),
    ("memory", 7),
    ("skills", 7),
    ("mcp", 7),
    ("voice", 7),
    ("tools", 8),
    ("agent", 9),
    ("cron", 10),
    ("gateway", 10),
    ("maintenance", 11),
    ("export", 11),
    ("state", 12),
    ("server", 13),
    ("startup", 14),
];

fn floor(module: &str) -> Option<u32> {
    FLOORS.iter().find(|(m, _)| *m == module).map(|(_, f)| *f)
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a source file belongs to (`src/agent/turn.rs` → `agent`).
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let relative = file.strip_prefix(src).ok()?;
    let first = relative.components().next()?.as_os_str().to_str()?;
    Some(first.trim_end_matches(".rs").to_string())
}

/// The crate modules `text` names: `crate::x::…` paths and the first names in `use crate::{…}`.
fn imports(text: &str) -> BTreeSet<String> {
    let leading = |item: &str| -> String {
        item.trim()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut found = BTreeSet::new();
    let mut rest = text;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        let Some(group) = rest.strip_prefix('{') else {
            found.insert(leading(rest));
            continue;
        };
        // The items of the group, split at its top-level commas.
        let mut depth = 0usize;
        let mut item = String::new();
        for c in group.chars() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    found.insert(leading(&item));
                    item.clear();
                    continue;
                }
                _ => {}
            }
            item.push(c);
        }
        found.insert(leading(&item));
    }
    found.remove("");
    found
}

#[test]
fn every_module_imports_only_from_lower_floors() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut violations = Vec::new();
    for file in &files {
        let Some(module) = module_of(&src, file) else {
            continue;
        };
        let Some(own) = floor(&module) else {
            continue; // the crate root and main compose everything
        };
        let text = std::fs::read_to_string(file).unwrap();
        for imported in imports(&text) {
            if imported == module {
                continue;
            }
            if let Some(theirs) = floor(&imported)
                && theirs >= own
            {
                violations.push(format!(
                    "{} ({module}, floor {own}) imports {imported} (floor {theirs})",
                    file.strip_prefix(&src).unwrap().display()
                ));
            }
        }
    }
    assert!(
        violations.is_empty(),
        "imports reaching up a floor (see docs/architecture.md):\n{}",
        violations.join("\n")
    );
}

#[test]
fn the_import_reader_sees_paths_and_groups() {
    let text =
        "use crate::{agent::TurnRunner, store::{self, Store}, hub};\nlet x = crate::cron::run();";
    let found = imports(text);
    let names: Vec<&str> = found.iter().map(String::as_str).collect();
    assert_eq!(names, ["agent", "cron", "hub", "store"]);
}

/// A new top-level module gets a floor here (and in `docs/architecture.md`), or its imports
/// would go unchecked.
#[test]
fn every_module_has_a_floor() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let missing: BTreeSet<String> = files
        .iter()
        .filter_map(|file| module_of(&src, file))
        .filter(|module| !["lib", "main"].contains(&module.as_str()) && floor(module).is_none())
        .collect();
    assert!(missing.is_empty(), "modules without a floor: {missing:?}");
}
