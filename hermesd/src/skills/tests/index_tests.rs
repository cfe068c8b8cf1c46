//! The system-prompt skills block.

use super::super::catalog::Catalog;
use super::super::index::{build_index, index_description};
use super::fixture::{self, Ctx, write};

#[test]
fn exact_block_for_a_small_catalog() {
    let tmp = tempfile::TempDir::new().unwrap();
    let root = tmp.path();
    write(
        root,
        "devops/DESCRIPTION.md",
        "---\ndescription: 'Deploying and\n  operating services'\n---\n",
    );
    write(
        root,
        "devops/k8s-deploy/SKILL.md",
        "---\nname: k8s-deploy\ndescription: Roll out a Deployment and watch it become ready safely and quickly\n---\n",
    );
    write(
        root,
        "devops/docker-build/SKILL.md",
        "---\ndescription: \"Build images\"\n---\n",
    );
    write(
        root,
        "research/arxiv/SKILL.md",
        "---\nname: arxiv\n---\n# Arxiv\n",
    );
    write(
        root,
        "notes/SKILL.md",
        "---\nname: notes\ndescription: |\n  Keep notes\n  tidy\n---\n",
    );
    let catalog = Catalog::load(&[root.to_path_buf()]);
    let ctx = Ctx::new(&["skill_manage"], &[]);
    let expected = "## Skills\n\
Skills are saved procedures for specific tasks. Before replying, scan the list below; if a skill fits the task, even partly, load it with skill_view(name) and follow it.\n\
If a skill you used was wrong or incomplete, fix it with skill_manage(action='patch') before finishing. After a hard, multi-step task, offer to save the procedure as a skill.\n\
\n\
<available_skills>\n  devops: Deploying and operating services\n    - docker-build: Build images\n    - k8s-deploy: Roll out a Deployment and watch it become ready safely an...\n  general:\n    - notes: Keep notes tidy\n  research:\n    - arxiv\n</available_skills>";
    assert_eq!(build_index(&catalog, &ctx.on("linux", None)), expected);

    let without_manage = build_index(&catalog, &Ctx::new(&[], &[]).on("linux", None));
    assert!(!without_manage.contains("skill_manage"));
    assert!(without_manage.contains("<available_skills>\n  devops:"));
}

#[test]
fn bytes_are_stable_across_loads() {
    let fx = fixture::build();
    let ctx = Ctx::new(&["terminal", "skill_manage"], &["terminal"]);
    let first = build_index(&Catalog::load(&fx.roots()), &ctx.on("linux", Some("cli")));
    for _ in 0..3 {
        let again = build_index(&Catalog::load(&fx.roots()), &ctx.on("linux", Some("cli")));
        assert_eq!(again.as_bytes(), first.as_bytes());
    }
    assert!(first.contains("    - needs-terminal: Needs a shell\n"));
    assert!(first.contains("    - web-fallback:"));
    assert!(!first.contains("mac-only"));
    assert!(!first.contains("external copy"));
    assert!(first.contains("  github: GitHub workflows: PRs, issues, CI.\n    - github-pr-workflow: GitHub PR lifecycle: branch, commit, open, CI, merge.\n"));
}

#[test]
fn inactive_skills_are_left_out_and_empty_when_none_active() {
    let fx = fixture::build();
    let catalog = Catalog::load(&fx.roots());
    let with_web = Ctx::new(&[], &["web"]);
    let block = build_index(&catalog, &with_web.on("linux", None));
    assert!(!block.contains("web-fallback"));
    assert!(!block.contains("needs-terminal"));

    let mut all_disabled = Ctx::new(&[], &[]);
    all_disabled.disabled = catalog.entries.iter().map(|e| e.name.clone()).collect();
    assert_eq!(build_index(&catalog, &all_disabled.on("linux", None)), "");
    assert_eq!(
        build_index(&Catalog::default(), &with_web.on("linux", None)),
        ""
    );
}

#[test]
fn index_descriptions_are_one_short_line() {
    assert_eq!(index_description("  'quoted'  "), "quoted");
    assert_eq!(index_description("a\n  b"), "a b");
    let long = "x".repeat(70);
    assert_eq!(index_description(&long), format!("{}...", "x".repeat(57)));
}
