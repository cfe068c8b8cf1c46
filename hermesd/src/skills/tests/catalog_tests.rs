//! Loading the fixture tree: good skills load, bad ones are reported, none hides another.

use std::fs;
use std::time::{Duration, SystemTime};

use super::super::catalog::Catalog;
use super::fixture::{self, write};

fn names(catalog: &Catalog) -> Vec<&str> {
    catalog.entries.iter().map(|e| e.name.as_str()).collect()
}

#[test]
fn good_skills_load_sorted_by_category_then_name() {
    let fx = fixture::build();
    let catalog = Catalog::load(&fx.roots());
    assert_eq!(
        names(&catalog),
        [
            "block-scalar",
            "bom-skill",
            "crlf-skill",
            "ext-only",
            "plain-notes",
            "renamed-skill",
            "tags-comma",
            "tags-inline",
            "mac-only",
            "needs-terminal",
            "web-fallback",
            "github-pr-workflow",
            "obsidian",
        ]
    );
}

#[test]
fn broken_skills_are_reported_with_reasons() {
    let fx = fixture::build();
    let catalog = Catalog::load(&fx.roots());
    let reason_for = |suffix: &str| {
        catalog
            .problems
            .iter()
            .find(|p| p.path.ends_with(suffix))
            .map(|p| p.reason.clone())
            .unwrap_or_else(|| panic!("no problem for {suffix}: {:?}", catalog.problems))
    };
    assert!(reason_for("unclosed/SKILL.md").contains("never closed"));
    assert!(reason_for("yaml-error/SKILL.md").contains("not valid YAML (line"));
    assert!(reason_for("list-frontmatter/SKILL.md").contains("found a list"));
    assert!(reason_for("name-is-list/SKILL.md").contains("'name' must be text"));
    assert!(reason_for("broken/DESCRIPTION.md").contains("not valid YAML"));
    let duplicate = reason_for("external/obsidian/SKILL.md");
    assert!(
        duplicate.contains("already used by") && duplicate.contains("skills/note-taking/obsidian"),
        "{duplicate}"
    );
    assert_eq!(catalog.problems.len(), 6, "{:?}", catalog.problems);
}

#[test]
fn hidden_and_dependency_dirs_are_skipped() {
    let fx = fixture::build();
    let catalog = Catalog::load(&fx.roots());
    for hidden in ["hub-skill", "git", "pkg"] {
        assert!(catalog.find(hidden).is_none(), "{hidden} should be skipped");
    }
}

#[test]
fn fields_are_interpreted() {
    let fx = fixture::build();
    let catalog = Catalog::load(&fx.roots());
    let pr = catalog.find("github-pr-workflow").unwrap();
    assert_eq!(
        pr.description,
        "GitHub PR lifecycle: branch, commit, open, CI, merge."
    );
    assert_eq!(pr.category.as_deref(), Some("github"));
    assert_eq!(
        pr.tags,
        [
            "GitHub",
            "Pull-Requests",
            "CI/CD",
            "Git",
            "Automation",
            "Merge"
        ]
    );
    assert_eq!(pr.related_skills, ["github-auth", "github-code-review"]);
    assert_eq!(pr.platforms, ["linux", "macos", "windows"]);
    assert_eq!(pr.version.as_deref(), Some("1.1.0"));
    assert_eq!(pr.root_index, 0);
    assert!(pr.frontmatter.get("author").is_some());

    let block = catalog.find("block-scalar").unwrap();
    assert_eq!(
        block.description,
        "Summarise long documents\ninto short notes."
    );
    assert!(block.frontmatter.get("custom_key").is_some());
    assert_eq!(
        catalog.find("tags-inline").unwrap().tags,
        ["alpha", "beta", "gamma"]
    );
    let comma = catalog.find("tags-comma").unwrap();
    assert_eq!(comma.tags, ["one", "two", "three"]);
    assert_eq!(comma.related_skills, ["obsidian"]);
    assert_eq!(
        catalog.find("bom-skill").unwrap().description,
        "Has a byte order mark"
    );
    let plain = catalog.find("plain-notes").unwrap();
    assert_eq!(plain.description, "Remember to water the plants.");
    assert!(plain.frontmatter.is_empty());
    let crlf = catalog.find("crlf-skill").unwrap();
    assert_eq!(crlf.description, "Windows line endings");
    assert_eq!(crlf.tags, ["crlf"]);
    let fallback = catalog.find("web-fallback").unwrap();
    assert_eq!(fallback.conditions.fallback_for_toolsets, ["web"]);
    let needs = catalog.find("needs-terminal").unwrap();
    assert_eq!(needs.conditions.requires_toolsets, ["terminal"]);
    assert_eq!(needs.conditions.requires_tools, ["terminal"]);
    let external = catalog.find("ext-only").unwrap();
    assert_eq!(external.root_index, 1);
    assert_eq!(
        catalog.find("obsidian").unwrap().description,
        "Read, search, create, and edit notes in the Obsidian vault."
    );
}

#[test]
fn category_descriptions_first_root_wins() {
    let fx = fixture::build();
    let catalog = Catalog::load(&fx.roots());
    assert_eq!(
        catalog
            .category_descriptions
            .get("github")
            .map(String::as_str),
        Some("GitHub workflows: PRs, issues, CI.")
    );
    assert!(!catalog.category_descriptions.contains_key("broken"));
}

#[test]
fn find_accepts_name_dir_and_category_path() {
    let fx = fixture::build();
    let catalog = Catalog::load(&fx.roots());
    assert_eq!(catalog.find("renamed-skill").unwrap().dir_name, "dir-name");
    assert_eq!(catalog.find("dir-name").unwrap().name, "renamed-skill");
    assert_eq!(
        catalog.find("github/github-pr-workflow").unwrap().name,
        "github-pr-workflow"
    );
    assert_eq!(catalog.find("note-taking:obsidian").unwrap().root_index, 0);
    assert!(catalog.find("github/obsidian").is_none());
    assert!(catalog.find("nope").is_none());
}

#[test]
fn description_truncation_and_name_limit() {
    let tmp = tempfile::TempDir::new().unwrap();
    let long_desc = "é".repeat(1100);
    let long_name = "n".repeat(80);
    write(
        tmp.path(),
        "long/SKILL.md",
        format!("---\nname: {long_name}\ndescription: {long_desc}\n---\n"),
    );
    let catalog = Catalog::load(&[tmp.path().to_path_buf()]);
    let entry = &catalog.entries[0];
    assert_eq!(entry.name.chars().count(), 64);
    assert_eq!(entry.description.chars().count(), 1024);
    assert!(entry.description.ends_with("é..."));
}

#[test]
fn missing_roots_are_fine() {
    let tmp = tempfile::TempDir::new().unwrap();
    let catalog = Catalog::load(&[tmp.path().join("absent"), tmp.path().join("also-absent")]);
    assert!(catalog.entries.is_empty());
    assert!(catalog.problems.is_empty());
}

#[test]
fn non_utf8_skill_is_reported_and_others_still_load() {
    let tmp = tempfile::TempDir::new().unwrap();
    write(tmp.path(), "bad/SKILL.md", [0xffu8, 0xfe, b'x']);
    write(tmp.path(), "good/SKILL.md", "---\nname: good\n---\n");
    let catalog = Catalog::load(&[tmp.path().to_path_buf()]);
    assert_eq!(names(&catalog), ["good"]);
    assert!(catalog.problems[0].reason.contains("not valid UTF-8"));
}

#[test]
fn digest_covers_supporting_files_but_not_hidden_ones() {
    let fx = fixture::build();
    let digest = |fx: &fixture::Fixture| {
        Catalog::load(&fx.roots())
            .find("github-pr-workflow")
            .unwrap()
            .digest()
            .to_owned()
    };
    let before = digest(&fx);
    assert_eq!(before.len(), 64);
    assert!(before.bytes().all(|b| b.is_ascii_hexdigit()));
    assert_eq!(digest(&fx), before, "digest must be stable");
    let skill = fx.local.join("github/github-pr-workflow");
    fs::write(skill.join(".secret-notes"), "changed hidden file").unwrap();
    assert_eq!(
        digest(&fx),
        before,
        "hidden files are not part of the digest"
    );
    fs::write(skill.join("references/ci.md"), "# CI changed\n").unwrap();
    let after_edit = digest(&fx);
    assert_ne!(after_edit, before);
    fs::rename(
        skill.join("references/ci.md"),
        skill.join("references/cj.md"),
    )
    .unwrap();
    assert_ne!(digest(&fx), after_edit, "a rename changes the digest");
    let other = Catalog::load(&fx.roots());
    assert_ne!(
        other.find("obsidian").unwrap().digest(),
        other.find("bom-skill").unwrap().digest()
    );
    // The digest is computed once per entry: later edits show up in the next load only.
    let entry = other.find("obsidian").unwrap();
    let first = entry.digest().to_owned();
    fs::write(fx.local.join("note-taking/obsidian/extra.md"), "new").unwrap();
    assert_eq!(entry.digest(), first);
    assert_ne!(super::super::loader::skill_digest(&entry.dir), first);
}

#[test]
fn signature_changes_only_when_the_tree_changes() {
    let fx = fixture::build();
    let roots = fx.roots();
    let first = Catalog::signature(&roots);
    assert_eq!(Catalog::signature(&roots), first);

    // A rewritten SKILL.md (size and mtime change).
    let skill_md = fx.local.join("note-taking/obsidian/SKILL.md");
    fs::write(&skill_md, "---\nname: obsidian\ndescription: edited\n---\n").unwrap();
    let edited = Catalog::signature(&roots);
    assert_ne!(edited, first);

    // Same size, only the mtime moves.
    let file = fs::OpenOptions::new().write(true).open(&skill_md).unwrap();
    file.set_modified(SystemTime::now() + Duration::from_secs(60))
        .unwrap();
    let touched = Catalog::signature(&roots);
    assert_ne!(touched, edited);

    // A new skill inside a category.
    write(
        &fx.local,
        "github/new-skill/SKILL.md",
        "---\nname: new-skill\n---\n",
    );
    assert_ne!(Catalog::signature(&roots), touched);

    // An external root appearing.
    let with_absent = vec![fx.local.clone(), fx.local.with_file_name("later")];
    let before = Catalog::signature(&with_absent);
    write(
        &fx.local.with_file_name("later"),
        "x/SKILL.md",
        "---\nname: x\n---\n",
    );
    assert_ne!(Catalog::signature(&with_absent), before);
}
