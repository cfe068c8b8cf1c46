//! False-positive guard: realistic, harmless skills must not produce a blocking finding.
//! Medium/low findings are allowed where Hermes flags the same thing (cron, sudo, pip…).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::{Severity, scan_text};

const FIXTURES: &[(&str, &str)] = &[
    (
        "git-workflow.md",
        include_str!("fixtures/benign/git-workflow.md"),
    ),
    (
        "systemd-debugging.md",
        include_str!("fixtures/benign/systemd-debugging.md"),
    ),
    ("cron-jobs.md", include_str!("fixtures/benign/cron-jobs.md")),
    (
        "weather-script.md",
        include_str!("fixtures/benign/weather-script.md"),
    ),
    (
        "writing-docs.md",
        include_str!("fixtures/benign/writing-docs.md"),
    ),
    (
        "python-packaging.md",
        include_str!("fixtures/benign/python-packaging.md"),
    ),
    (
        "installer-review.md",
        include_str!("fixtures/benign/installer-review.md"),
    ),
    (
        "docker-ops.md",
        include_str!("fixtures/benign/docker-ops.md"),
    ),
    (
        "emoji-i18n.md",
        include_str!("fixtures/benign/emoji-i18n.md"),
    ),
];

#[test]
fn benign_skills_have_no_blocking_finding() {
    let mut blocking = Vec::new();
    for (name, text) in FIXTURES {
        for f in scan_text(name, text) {
            if f.severity >= Severity::High {
                blocking.push(format!(
                    "{}:{} {} {}",
                    f.file, f.line, f.pattern_id, f.matched
                ));
            }
        }
    }
    assert!(
        blocking.is_empty(),
        "blocking findings in benign skills:\n{}",
        blocking.join("\n")
    );
}

/// The informational findings Hermes would also raise do show up (the scanner is not blind).
#[test]
fn benign_skills_still_get_expected_informational_findings() {
    let ids = |name: &str| -> Vec<&'static str> {
        let (_, text) = FIXTURES.iter().find(|(n, _)| *n == name).unwrap();
        scan_text(name, text)
            .into_iter()
            .map(|f| f.pattern_id)
            .collect()
    };
    assert!(ids("cron-jobs.md").contains(&"persistence_cron"));
    assert!(ids("git-workflow.md").contains(&"git_config_global"));
    assert!(ids("git-workflow.md").contains(&"ssh_keygen"));
    assert!(ids("systemd-debugging.md").contains(&"systemd_service"));
    assert!(ids("systemd-debugging.md").contains(&"sudo_usage"));
    assert!(ids("python-packaging.md").contains(&"unpinned_pip_install"));
    assert!(ids("installer-review.md").contains(&"remote_fetch"));
    assert!(
        ids("weather-script.md").contains(&"python_getenv_secret")
            || ids("weather-script.md").contains(&"python_environ_get_secret")
    );
    assert!(ids("weather-script.md").contains(&"secret_in_request"));
}
