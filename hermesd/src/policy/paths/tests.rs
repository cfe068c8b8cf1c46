//! Tests of `PathPolicy`: what is read, written, asked and refused in every home, through
//! symlinks and spellings.

use std::path::{Path, PathBuf};

use super::*;

/// A user home with a Hermes root, a profile and a daemon home elsewhere (as `--home` gives).
struct Layout {
    _dir: tempfile::TempDir,
    user: PathBuf,
}

impl Layout {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let user = std::fs::canonicalize(dir.path()).unwrap().join("u");
        for d in [".hermes/profiles/work", "elsewhere/home", "project", ".ssh"] {
            std::fs::create_dir_all(user.join(d)).unwrap();
        }
        Self { _dir: dir, user }
    }
    fn policy(&self, home: &str) -> PathPolicy {
        PathPolicy::new(&self.user.join(home), Some(&self.user))
    }
    fn at(&self, rel: &str) -> PathBuf {
        self.user.join(rel)
    }
}

#[test]
fn every_hermes_home_is_protected_whichever_the_daemon_runs() {
    let l = Layout::new();
    for home in [".hermes", ".hermes/profiles/work", "elsewhere/home"] {
        let p = l.policy(home);
        for file in [
            ".hermes/config.yaml",
            ".hermes/.env",
            ".hermes/hermesd.db",
            ".hermes/profiles/work/config.yaml",
            ".hermes/profiles/work/.env",
            ".hermes/profiles/work/hermesd.db-wal",
        ] {
            let path = l.at(file);
            assert!(p.protected(&path).is_some(), "{home}: {file}");
            assert!(
                matches!(p.check_write(&path), WriteVerdict::Refused(_)),
                "{home}: {file}"
            );
        }
        let own = l.at(home).join("config.yaml");
        assert!(
            matches!(p.check_write(&own), WriteVerdict::Refused(_)),
            "{home}"
        );
        assert!(p.check_read(&l.at(home).join(".env")).is_err());
        assert!(p.check_read(&l.at(home).join("hermesd.db")).is_err());
        assert!(p.check_read(&own).is_ok(), "config.yaml stays readable");
    }
}

#[test]
fn a_symlink_is_judged_by_its_target() {
    let l = Layout::new();
    let p = l.policy("elsewhere/home");
    let link = l.at("project/innocent.yaml");
    std::os::unix::fs::symlink(l.at("elsewhere/home/config.yaml"), &link).unwrap();
    let resolved = p.resolve("innocent.yaml", &l.at("project"));
    assert_eq!(resolved, l.at("elsewhere/home/config.yaml"));
    assert!(matches!(p.check_write(&resolved), WriteVerdict::Refused(_)));
    let dir_link = l.at("project/h");
    std::os::unix::fs::symlink(l.at(".hermes"), &dir_link).unwrap();
    let through = p.resolve("h/../h/.env", &l.at("project"));
    assert!(p.check_read(&through).is_err());
}

#[test]
fn a_scripts_directory_that_is_a_symlink_guards_its_target() {
    let l = Layout::new();
    std::fs::create_dir_all(l.at("dotfiles/hermes-scripts")).unwrap();
    std::os::unix::fs::symlink(l.at("dotfiles/hermes-scripts"), l.at(".hermes/scripts")).unwrap();
    let p = l.policy(".hermes");
    let through = p.resolve("~/.hermes/scripts/x.sh", &l.at("project"));
    assert!(matches!(
        p.check_write(&through),
        WriteVerdict::NeedsApproval {
            key: "write to the cron scripts",
            ..
        }
    ));
    assert_eq!(
        p.check_write(&l.at("dotfiles/other.sh")),
        WriteVerdict::Allowed
    );
}

#[test]
fn prompt_sources_and_shell_files_need_approval_credentials_are_refused() {
    let l = Layout::new();
    let p = l.policy(".hermes");
    for file in [
        ".hermes/SOUL.md",
        ".hermes/memories/MEMORY.md",
        ".hermes/skills/x/SKILL.md",
        ".hermes/scripts/watch.sh",
        ".hermes/profiles/work/scripts/sub/collect.py",
    ] {
        assert!(
            matches!(
                p.check_write(&l.at(file)),
                WriteVerdict::NeedsApproval { .. }
            ),
            "{file}"
        );
    }
    assert!(matches!(
        p.check_write(&l.at(".bashrc")),
        WriteVerdict::NeedsApproval { .. }
    ));
    for file in [".ssh/authorized_keys", ".aws/config", ".netrc"] {
        assert!(
            matches!(p.check_write(&l.at(file)), WriteVerdict::Refused(_)),
            "{file}"
        );
    }
    assert!(matches!(
        p.check_write(Path::new("/etc/hosts")),
        WriteVerdict::Refused(_)
    ));
    assert_eq!(
        p.check_write(&l.at("project/.bashrc")),
        WriteVerdict::Allowed
    );
    assert_eq!(
        p.check_write(&l.at("project/notes.md")),
        WriteVerdict::Allowed
    );
    assert_eq!(
        p.check_write(Path::new("/etcetera/file")),
        WriteVerdict::Allowed
    );
}

#[test]
fn reads_of_secrets_are_denied_and_ordinary_files_are_not() {
    let l = Layout::new();
    let p = l.policy(".hermes");
    for file in [
        ".hermes/auth.json",
        ".hermes/mcp-tokens/github.json",
        "project/.env.local",
        "project/.ENV",
        ".ssh/id_ed25519",
        ".aws/credentials",
        ".hermes/skills/.hub/index-cache/x.json",
    ] {
        assert!(p.check_read(&l.at(file)).is_err(), "{file}");
    }
    for file in [
        "project/.env.example",
        "project/src/env.rs",
        ".ssh/id_ed25519.pub",
        ".ssh/known_hosts",
        ".hermes/config.yaml",
        ".hermes/skills/x/SKILL.md",
    ] {
        assert!(p.check_read(&l.at(file)).is_ok(), "{file}");
    }
}

#[test]
fn working_directories_that_hold_credentials_are_refused() {
    let l = Layout::new();
    let p = l.policy(".hermes");
    assert!(p.check_workdir(&l.at(".ssh")).is_err());
    assert!(p.check_workdir(&l.at(".hermes/mcp-tokens")).is_err());
    assert!(p.check_workdir(&l.at("project")).is_ok());
    assert!(p.check_workdir(&l.at(".hermes")).is_ok());
    assert!(p.is_hermes_home(&l.at(".hermes/profiles/work")));
    assert!(!p.is_hermes_home(&l.at("project")));
}
