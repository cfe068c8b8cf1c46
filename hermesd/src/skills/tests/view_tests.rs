//! `skills_list` and `skill_view` results, including path-safety refusals.

use serde_json::{Value, json};

use super::super::catalog::Catalog;
use super::super::files::MAX_VIEW_BYTES;
use super::super::view::{skill_view, skills_list};
use super::fixture::{self, Ctx, write};

#[test]
fn list_shape_and_category_filter() {
    let fx = fixture::build();
    let catalog = Catalog::load(&fx.roots());
    let ctx = Ctx::new(&[], &["web"]);
    let all = skills_list(&catalog, &ctx.on("linux", None), None);
    assert_eq!(all["success"], true);
    // mac-only is hidden on linux; web-fallback stays listed although the index hides it.
    assert_eq!(all["count"], 12);
    assert_eq!(
        all["categories"],
        json!(["conditional", "github", "note-taking"])
    );
    assert_eq!(
        all["hint"],
        "Use skill_view(name) to see full content, tags, and linked files"
    );
    assert_eq!(
        all["skills"][0],
        json!({"name": "block-scalar", "description": "Summarise long documents\ninto short notes.", "category": null})
    );
    assert!(
        all["skills"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["name"] == "web-fallback")
    );

    let github = skills_list(&catalog, &ctx.on("linux", None), Some("github"));
    assert_eq!(github["count"], 1);
    assert_eq!(github["skills"][0]["category"], "github");
    assert_eq!(github["categories"], json!(["github"]));
}

#[test]
fn empty_list_has_a_message() {
    let result = skills_list(
        &Catalog::default(),
        &Ctx::new(&[], &[]).on("linux", None),
        None,
    );
    assert_eq!(result["success"], true);
    assert_eq!(result["skills"], json!([]));
    assert!(
        result["message"]
            .as_str()
            .unwrap()
            .contains("No skills found")
    );
}

#[test]
fn view_returns_content_and_linked_files() {
    let fx = fixture::build();
    let catalog = Catalog::load(&fx.roots());
    let ctx = Ctx::new(&[], &[]);
    let result = skill_view(
        &catalog,
        &ctx.on("linux", None),
        "github-pr-workflow",
        None,
        &no_rules(),
    );
    assert_eq!(result["success"], true, "{result}");
    assert_eq!(result["name"], "github-pr-workflow");
    assert_eq!(result["tags"][0], "GitHub");
    assert_eq!(
        result["related_skills"],
        json!(["github-auth", "github-code-review"])
    );
    assert_eq!(result["path"], "github/github-pr-workflow/SKILL.md");
    let skill_dir = fx.local.join("github/github-pr-workflow");
    assert_eq!(result["skill_dir"], skill_dir.to_string_lossy().as_ref());
    let content = result["content"].as_str().unwrap();
    assert!(content.starts_with("---\nname: github-pr-workflow"));
    assert!(content.contains(&format!("bash {}/scripts/check.sh", skill_dir.display())));
    assert!(!content.contains("${HERMES_SKILL_DIR}"));
    assert_eq!(
        result["linked_files"],
        json!({
            "references": ["references/api.md", "references/ci.md"],
            "templates": ["templates/pr.md"],
            "assets": ["assets/logo.png"],
            "scripts": ["scripts/check.sh"],
        })
    );
    assert!(result["usage_hint"].as_str().unwrap().contains("file_path"));

    let plain = skill_view(
        &catalog,
        &ctx.on("linux", None),
        "plain-notes",
        None,
        &no_rules(),
    );
    assert_eq!(plain["linked_files"], Value::Null);
    assert_eq!(plain["usage_hint"], Value::Null);
    assert_eq!(plain["path"], "plain-notes/SKILL.md");

    let bom = skill_view(
        &catalog,
        &ctx.on("linux", None),
        "bom-skill",
        None,
        &no_rules(),
    );
    assert!(bom["content"].as_str().unwrap().starts_with("---\n"));
}

#[test]
fn view_supporting_files() {
    let fx = fixture::build();
    let catalog = Catalog::load(&fx.roots());
    let ctx = Ctx::new(&[], &[]);
    let ctx = ctx.on("linux", None);
    let text = skill_view(
        &catalog,
        &ctx,
        "github-pr-workflow",
        Some("references/api.md"),
        &no_rules(),
    );
    assert_eq!(
        text,
        json!({"success": true, "name": "github-pr-workflow", "file": "references/api.md", "content": "# API\nGET /repos\n", "file_type": ".md"})
    );

    let binary = skill_view(
        &catalog,
        &ctx,
        "github-pr-workflow",
        Some("assets/logo.png"),
        &no_rules(),
    );
    assert_eq!(binary["is_binary"], true);
    assert_eq!(binary["content"], "[Binary file: logo.png, size: 8 bytes]");

    let missing = skill_view(
        &catalog,
        &ctx,
        "github-pr-workflow",
        Some("references/nope.md"),
        &no_rules(),
    );
    assert_eq!(missing["success"], false);
    assert_eq!(
        missing["error"],
        "File 'references/nope.md' not found in skill 'github-pr-workflow'."
    );
    assert_eq!(
        missing["available_files"]["references"],
        json!(["references/api.md", "references/ci.md"])
    );

    let dir = skill_view(
        &catalog,
        &ctx,
        "github-pr-workflow",
        Some("references"),
        &no_rules(),
    );
    assert_eq!(dir["success"], false);
    assert!(dir["error"].as_str().unwrap().contains("not a file"));

    let empty_path = skill_view(&catalog, &ctx, "github-pr-workflow", Some(""), &no_rules());
    assert!(empty_path["content"].as_str().unwrap().starts_with("---"));
}

#[test]
fn path_traversal_is_refused() {
    let fx = fixture::build();
    let catalog = Catalog::load(&fx.roots());
    let ctx = Ctx::new(&[], &[]);
    let ctx = ctx.on("linux", None);
    for bad in [
        "../obsidian/SKILL.md",
        "references/../../../outside/secret.txt",
        "..\\..\\x",
    ] {
        let result = skill_view(&catalog, &ctx, "github-pr-workflow", Some(bad), &no_rules());
        assert_eq!(result["success"], false, "{bad}");
        assert_eq!(
            result["error"], "Path traversal ('..') is not allowed.",
            "{bad}"
        );
    }
    let secret = fx.outside.join("secret.txt");
    let absolute = skill_view(
        &catalog,
        &ctx,
        "github-pr-workflow",
        Some(secret.to_str().unwrap()),
        &no_rules(),
    );
    assert_eq!(absolute["success"], false);
    assert!(!absolute.to_string().contains("top secret"));

    #[cfg(unix)]
    {
        let skill_dir = fx.local.join("github/github-pr-workflow");
        std::os::unix::fs::symlink(&secret, skill_dir.join("references/escape.md")).unwrap();
        std::os::unix::fs::symlink(&fx.outside, skill_dir.join("templates/outdir")).unwrap();
        std::os::unix::fs::symlink(
            skill_dir.join("references/api.md"),
            skill_dir.join("inside.md"),
        )
        .unwrap();
        let catalog = Catalog::load(&fx.roots());
        for escaping in ["references/escape.md", "templates/outdir/secret.txt"] {
            let result = skill_view(
                &catalog,
                &ctx,
                "github-pr-workflow",
                Some(escaping),
                &no_rules(),
            );
            assert_eq!(
                result["error"], "Path escapes the skill directory.",
                "{escaping}"
            );
            assert!(!result.to_string().contains("top secret"));
        }
        let inside = skill_view(
            &catalog,
            &ctx,
            "github-pr-workflow",
            Some("inside.md"),
            &no_rules(),
        );
        assert_eq!(inside["content"], "# API\nGET /repos\n");
    }
}

#[test]
fn bad_skill_names_are_refused() {
    let fx = fixture::build();
    let catalog = Catalog::load(&fx.roots());
    let ctx = Ctx::new(&[], &[]);
    let ctx = ctx.on("linux", None);
    let abs = skill_view(&catalog, &ctx, "/etc/passwd", None, &no_rules());
    assert_eq!(
        abs["error"],
        "Skill name must be a relative path within the skills directory."
    );
    let drive = skill_view(&catalog, &ctx, "C:\\skills\\x", None, &no_rules());
    assert_eq!(
        drive["error"],
        "Skill name must be a relative path within the skills directory."
    );
    let up = skill_view(&catalog, &ctx, "github/../../outside", None, &no_rules());
    assert_eq!(
        up["error"],
        "Skill name cannot contain '..' path traversal components."
    );
}

#[test]
fn unknown_skill_suggests_closest_names() {
    let fx = fixture::build();
    let catalog = Catalog::load(&fx.roots());
    let ctx = Ctx::new(&[], &[]);
    let result = skill_view(
        &catalog,
        &ctx.on("linux", None),
        "obsidain",
        None,
        &no_rules(),
    );
    assert_eq!(result["success"], false);
    assert_eq!(result["error"], "Skill 'obsidain' not found.");
    assert_eq!(result["available_skills"][0], "obsidian");
    let github = skill_view(
        &catalog,
        &ctx.on("linux", None),
        "github",
        None,
        &no_rules(),
    );
    assert_eq!(github["available_skills"][0], "github-pr-workflow");
    assert!(github["available_skills"].as_array().unwrap().len() <= 10);
}

#[test]
fn unavailable_skills_are_refused() {
    let fx = fixture::build();
    let catalog = Catalog::load(&fx.roots());
    let mut ctx = Ctx::new(&[], &[]);
    let mac = skill_view(
        &catalog,
        &ctx.on("linux", None),
        "mac-only",
        None,
        &no_rules(),
    );
    assert_eq!(
        mac["error"],
        "Skill 'mac-only' is not supported on this platform."
    );
    assert_eq!(mac["readiness_status"], "unsupported");
    ctx.disabled.push("obsidian".into());
    let disabled = skill_view(
        &catalog,
        &ctx.on("linux", None),
        "obsidian",
        None,
        &no_rules(),
    );
    assert_eq!(disabled["error"], "Skill 'obsidian' is disabled in config.");
    let listed = skills_list(&catalog, &ctx.on("linux", None), None);
    assert!(!listed.to_string().contains("\"obsidian\""));
}

#[test]
fn large_files_are_capped() {
    let tmp = tempfile::TempDir::new().unwrap();
    let big = "é".repeat(usize::try_from(MAX_VIEW_BYTES).unwrap()); // twice the cap in bytes
    write(tmp.path(), "big/SKILL.md", "---\nname: big\n---\n");
    write(tmp.path(), "big/references/big.md", &big);
    let catalog = Catalog::load(&[tmp.path().to_path_buf()]);
    let ctx = Ctx::new(&[], &[]);
    let result = skill_view(
        &catalog,
        &ctx.on("linux", None),
        "big",
        Some("references/big.md"),
        &no_rules(),
    );
    assert_eq!(result["truncated"], true);
    assert_eq!(result["size"], big.len());
    let content = result["content"].as_str().unwrap();
    assert_eq!(content.len() as u64, MAX_VIEW_BYTES);
    assert!(content.chars().all(|c| c == 'é'));
}

/// A path policy for homes these tests never touch.
fn no_rules() -> crate::policy::paths::PathPolicy {
    crate::policy::paths::PathPolicy::new(std::path::Path::new("/nonexistent/hermes"), None)
}
