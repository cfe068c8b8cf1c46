//! A realistic skills tree (two roots) with good and broken skills, written into a temp dir.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};

use tempfile::TempDir;

use super::super::activation::ActivationContext;

/// Writes `content` at `root/rel`, creating parent directories.
pub fn write(root: &Path, rel: &str, content: impl AsRef<[u8]>) {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, content).unwrap();
}

pub struct Fixture {
    pub _tmp: TempDir,
    pub local: PathBuf,
    pub external: PathBuf,
    pub outside: PathBuf,
}

impl Fixture {
    pub fn roots(&self) -> Vec<PathBuf> {
        vec![self.local.clone(), self.external.clone()]
    }
}

const PR_WORKFLOW: &str = "---
name: github-pr-workflow
description: \"GitHub PR lifecycle: branch, commit, open, CI, merge.\"
version: 1.1.0
author: Hermes Agent
license: MIT
platforms: [linux, macos, windows]
metadata:
  hermes:
    tags: [GitHub, Pull-Requests, CI/CD, Git, Automation, Merge]
    related_skills: [github-auth, github-code-review]
---
# GitHub PR workflow

Run scripts with `bash ${HERMES_SKILL_DIR}/scripts/check.sh`.
";

const OBSIDIAN: &str = "---
name: obsidian
description: Read, search, create, and edit notes in the Obsidian vault.
platforms: [linux, macos, windows]
---
# Obsidian
";

const BLOCK_SCALAR: &str = "---
name: 'block-scalar'
description: |
  Summarise long documents
  into short notes.
custom_key: {nested: [1, 2]}
---
Body.
";

pub fn build() -> Fixture {
    let tmp = TempDir::new().unwrap();
    let local = tmp.path().join("skills");
    let external = tmp.path().join("external");
    let outside = tmp.path().join("outside");
    let l = local.as_path();
    write(&outside, "secret.txt", "top secret");

    write(
        l,
        "github/DESCRIPTION.md",
        "---\ndescription: \"GitHub workflows: PRs, issues, CI.\"\n---\n",
    );
    write(l, "github/github-pr-workflow/SKILL.md", PR_WORKFLOW);
    write(
        l,
        "github/github-pr-workflow/references/api.md",
        "# API\nGET /repos\n",
    );
    write(l, "github/github-pr-workflow/references/ci.md", "# CI\n");
    write(
        l,
        "github/github-pr-workflow/templates/pr.md",
        "## Summary\n",
    );
    write(
        l,
        "github/github-pr-workflow/scripts/check.sh",
        "#!/bin/sh\necho ok\n",
    );
    write(
        l,
        "github/github-pr-workflow/assets/logo.png",
        [0x89u8, b'P', b'N', b'G', 0, 0, 1, 2],
    );
    write(l, "github/github-pr-workflow/.secret-notes", "hidden");
    write(l, "note-taking/obsidian/SKILL.md", OBSIDIAN);
    write(l, "block-scalar/SKILL.md", BLOCK_SCALAR);
    write(
        l,
        "tags-inline/SKILL.md",
        "---\nname: tags-inline\ndescription: Inline tags\ntags: \"[alpha, 'beta', gamma]\"\n---\n",
    );
    write(
        l,
        "tags-comma/SKILL.md",
        "---\nname: tags-comma\ndescription: Comma tags\ntags: \"one, two , three\"\nrelated_skills: [obsidian]\n---\n",
    );
    write(
        l,
        "bom-skill/SKILL.md",
        "\u{feff}---\nname: bom-skill\ndescription: Has a byte order mark\n---\n# Body\n",
    );
    write(
        l,
        "plain-notes/SKILL.md",
        "# Plain Notes\n\nRemember to water the plants.\nSecond line.\n",
    );
    write(
        l,
        "crlf-skill/SKILL.md",
        "---\r\nname: crlf-skill\r\ndescription: Windows line endings\r\nmetadata:\r\n  hermes:\r\n    tags: [crlf]\r\n---\r\n# CRLF\r\n",
    );
    write(
        l,
        "dir-name/SKILL.md",
        "---\nname: renamed-skill\ndescription: Name differs from directory\n---\n",
    );
    write(
        l,
        "conditional/web-fallback/SKILL.md",
        "---\nname: web-fallback\ndescription: Search without the web toolset\nmetadata:\n  hermes:\n    fallback_for_toolsets: [web]\n---\n",
    );
    write(
        l,
        "conditional/needs-terminal/SKILL.md",
        "---\nname: needs-terminal\ndescription: Needs a shell\nmetadata:\n  hermes:\n    requires_toolsets: [terminal]\n    requires_tools: [terminal]\n---\n",
    );
    write(
        l,
        "conditional/mac-only/SKILL.md",
        "---\nname: mac-only\ndescription: macOS only\nplatforms: [macos]\n---\n",
    );
    write(
        l,
        ".hub/hub-skill/SKILL.md",
        "---\nname: hub-skill\ndescription: must stay hidden\n---\n",
    );
    write(l, ".git/SKILL.md", "---\nname: git\n---\n");
    write(l, "node_modules/pkg/SKILL.md", "---\nname: pkg\n---\n");
    write(
        l,
        "broken/unclosed/SKILL.md",
        "---\nname: unclosed\ndescription: never closed\n",
    );
    write(
        l,
        "broken/yaml-error/SKILL.md",
        "---\nname: yaml-error\ndescription: [unterminated\n---\nbody\n",
    );
    write(
        l,
        "broken/list-frontmatter/SKILL.md",
        "---\n- a\n- b\n---\nbody\n",
    );
    write(
        l,
        "broken/name-is-list/SKILL.md",
        "---\nname: [a, b]\n---\nbody\n",
    );
    write(l, "broken/DESCRIPTION.md", "---\ndescription: [bad\n---\n");

    let e = external.as_path();
    write(
        e,
        "obsidian/SKILL.md",
        "---\nname: obsidian\ndescription: external copy\n---\n",
    );
    write(
        e,
        "ext-only/SKILL.md",
        "---\nname: ext-only\ndescription: From the external dir\n---\n",
    );
    write(
        e,
        "github/DESCRIPTION.md",
        "---\ndescription: ignored, the local root wins\n---\n",
    );

    Fixture {
        _tmp: tmp,
        local,
        external,
        outside,
    }
}

/// Owned pieces of an [`ActivationContext`].
pub struct Ctx {
    pub tools: HashSet<String>,
    pub toolsets: HashSet<String>,
    pub disabled: Vec<String>,
    pub platform_disabled: HashMap<String, Vec<String>>,
}

impl Ctx {
    pub fn new(tools: &[&str], toolsets: &[&str]) -> Ctx {
        Ctx {
            tools: tools.iter().map(|s| s.to_string()).collect(),
            toolsets: toolsets.iter().map(|s| s.to_string()).collect(),
            disabled: Vec::new(),
            platform_disabled: HashMap::new(),
        }
    }

    pub fn on<'a>(&'a self, os: &'a str, platform: Option<&'a str>) -> ActivationContext<'a> {
        ActivationContext {
            os,
            platform,
            available_tools: &self.tools,
            available_toolsets: &self.toolsets,
            disabled: &self.disabled,
            platform_disabled: &self.platform_disabled,
        }
    }
}
