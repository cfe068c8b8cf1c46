//! Conditional activation: OS platforms, tool/toolset conditions, disabled lists.

use super::super::activation::{InactiveReason, activation, availability, current_os, is_active};
use super::super::catalog::Catalog;
use super::fixture::{self, Ctx};

#[test]
fn os_platform_lists() {
    let fx = fixture::build();
    let catalog = Catalog::load(&fx.roots());
    let ctx = Ctx::new(&[], &[]);
    let mac_only = catalog.find("mac-only").unwrap();
    assert!(is_active(mac_only, &ctx.on("macos", None)));
    assert_eq!(
        activation(mac_only, &ctx.on("linux", None)),
        Err(InactiveReason::UnsupportedOs {
            platforms: vec!["macos".into()]
        })
    );
    let everywhere = catalog.find("obsidian").unwrap();
    for os in ["linux", "macos", "windows"] {
        assert!(is_active(everywhere, &ctx.on(os, None)), "{os}");
    }
    assert!(is_active(
        catalog.find("plain-notes").unwrap(),
        &ctx.on("freebsd", None)
    ));
}

#[test]
fn os_aliases_and_android() {
    let tmp = tempfile::TempDir::new().unwrap();
    fixture::write(tmp.path(), "a/SKILL.md", "---\nplatforms: [Darwin]\n---\n");
    fixture::write(tmp.path(), "b/SKILL.md", "---\nplatforms: linux\n---\n");
    let catalog = Catalog::load(&[tmp.path().to_path_buf()]);
    let ctx = Ctx::new(&[], &[]);
    assert!(is_active(
        catalog.find("a").unwrap(),
        &ctx.on("macos", None)
    ));
    assert!(is_active(
        catalog.find("b").unwrap(),
        &ctx.on("android", None)
    ));
    assert!(!is_active(
        catalog.find("b").unwrap(),
        &ctx.on("windows", None)
    ));
}

#[test]
fn current_os_uses_skill_platform_names() {
    let expected = if cfg!(target_os = "linux") {
        "linux"
    } else if cfg!(target_os = "macos") {
        "macos"
    } else if cfg!(windows) {
        "windows"
    } else {
        return;
    };
    assert_eq!(current_os(), expected);
}

#[test]
fn fallback_skills_show_only_when_primary_is_missing() {
    let fx = fixture::build();
    let catalog = Catalog::load(&fx.roots());
    let fallback = catalog.find("web-fallback").unwrap();
    let with_web = Ctx::new(&["web_search"], &["web"]);
    assert_eq!(
        activation(fallback, &with_web.on("linux", None)),
        Err(InactiveReason::FallbackToolsetAvailable("web".into()))
    );
    assert!(is_active(
        fallback,
        &Ctx::new(&[], &["terminal"]).on("linux", None)
    ));
    // Tool conditions do not hide a skill from explicit listing / loading.
    assert!(availability(fallback, &with_web.on("linux", None)).is_ok());
}

#[test]
fn requirements_need_every_tool_and_toolset() {
    let fx = fixture::build();
    let catalog = Catalog::load(&fx.roots());
    let needs = catalog.find("needs-terminal").unwrap();
    assert_eq!(
        activation(needs, &Ctx::new(&["terminal"], &[]).on("linux", None)),
        Err(InactiveReason::MissingToolset("terminal".into()))
    );
    assert_eq!(
        activation(needs, &Ctx::new(&[], &["terminal"]).on("linux", None)),
        Err(InactiveReason::MissingTool("terminal".into()))
    );
    assert!(is_active(
        needs,
        &Ctx::new(&["terminal"], &["terminal"]).on("linux", None)
    ));
}

#[test]
fn fallback_for_tools_condition() {
    let tmp = tempfile::TempDir::new().unwrap();
    fixture::write(
        tmp.path(),
        "f/SKILL.md",
        "---\nmetadata:\n  hermes:\n    fallback_for_tools: web_search\n---\n",
    );
    let catalog = Catalog::load(&[tmp.path().to_path_buf()]);
    let entry = catalog.find("f").unwrap();
    assert_eq!(
        activation(entry, &Ctx::new(&["web_search"], &[]).on("linux", None)),
        Err(InactiveReason::FallbackToolAvailable("web_search".into()))
    );
    assert!(is_active(
        entry,
        &Ctx::new(&["other"], &[]).on("linux", None)
    ));
}

#[test]
fn disabled_lists_global_and_per_platform() {
    let fx = fixture::build();
    let catalog = Catalog::load(&fx.roots());
    let obsidian = catalog.find("obsidian").unwrap();
    let renamed = catalog.find("renamed-skill").unwrap();

    let mut ctx = Ctx::new(&[], &[]);
    ctx.disabled = vec!["obsidian".into(), "dir-name".into()];
    assert_eq!(
        activation(obsidian, &ctx.on("linux", None)),
        Err(InactiveReason::Disabled)
    );
    assert_eq!(
        activation(renamed, &ctx.on("linux", Some("cli"))),
        Err(InactiveReason::Disabled),
        "the directory name also disables"
    );

    let mut ctx = Ctx::new(&[], &[]);
    ctx.platform_disabled
        .insert("telegram".into(), vec!["obsidian".into()]);
    assert_eq!(
        activation(obsidian, &ctx.on("linux", Some("telegram"))),
        Err(InactiveReason::DisabledOnPlatform("telegram".into()))
    );
    assert!(is_active(obsidian, &ctx.on("linux", Some("cli"))));
    assert!(is_active(obsidian, &ctx.on("linux", None)));
    assert_eq!(
        InactiveReason::DisabledOnPlatform("telegram".into()).to_string(),
        "disabled on telegram"
    );
}
