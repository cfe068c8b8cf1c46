//! Login-env capture and child-env stripping.

use std::ffi::OsString;
use std::path::Path;

use super::super::env::{ENV_MARKER, parse_env_output, run_capture};
use super::super::env_blocklist::PROVIDER_ENV_BLOCKLIST;
use super::super::{EnvOrigin, LoginEnv, capture_login_env, child_env, child_env_with_passthrough};

fn login(vars: &[(&str, &str)]) -> LoginEnv {
    LoginEnv::from_vars(
        vars.iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect(),
        EnvOrigin::DaemonFallback,
    )
}

fn lookup<'a>(env: &'a [(OsString, OsString)], key: &str) -> Option<&'a str> {
    env.iter()
        .find(|(k, _)| k == key)
        .and_then(|(_, v)| v.to_str())
}

#[test]
fn blocklist_is_sorted_for_binary_search() {
    assert!(PROVIDER_ENV_BLOCKLIST.windows(2).all(|w| w[0] < w[1]));
    assert!(PROVIDER_ENV_BLOCKLIST.contains(&"OPENROUTER_API_KEY"));
    assert!(!PROVIDER_ENV_BLOCKLIST.contains(&"CLAUDE_CODE_OAUTH_TOKEN"));
}

#[test]
fn secrets_are_stripped_and_basics_kept() {
    let src = login(&[
        ("PATH", "/usr/bin"),
        ("HOME", "/home/u"),
        ("LANG", "C.UTF-8"),
        ("OPENAI_API_KEY", "sk-1"),
        ("MY_SERVICE_TOKEN", "t"),
        ("DB_SECRET", "s"),
        ("SMTP_PASSWORD", "p"),
        ("TELEGRAM_HOME_CHANNEL", "42"),
        ("AUXILIARY_VISION_BASE_URL", "http://x"),
        ("GATEWAY_RELAY_DELIVERY_KEY", "k"),
        ("HERMESD_CONTROL_SOCKET", "/run/x"),
        ("_HERMES_FORCE_OPENAI_API_KEY", "sk-2"),
        ("VIRTUAL_ENV", "/venv"),
        ("CLAUDE_CODE_OAUTH_TOKEN", "keep"),
    ]);
    let env = child_env(&src, &[]);
    for gone in [
        "OPENAI_API_KEY",
        "MY_SERVICE_TOKEN",
        "DB_SECRET",
        "SMTP_PASSWORD",
        "TELEGRAM_HOME_CHANNEL",
        "AUXILIARY_VISION_BASE_URL",
        "GATEWAY_RELAY_DELIVERY_KEY",
        "HERMESD_CONTROL_SOCKET",
        "_HERMES_FORCE_OPENAI_API_KEY",
        "VIRTUAL_ENV",
    ] {
        assert_eq!(lookup(&env, gone), None, "{gone} leaked");
    }
    assert_eq!(lookup(&env, "HOME"), Some("/home/u"));
    assert_eq!(lookup(&env, "LANG"), Some("C.UTF-8"));
    assert_eq!(lookup(&env, "CLAUDE_CODE_OAUTH_TOKEN"), Some("keep"));
    let path = lookup(&env, "PATH").unwrap();
    assert!(path.starts_with("/usr/bin:"), "{path}");
    assert_eq!(
        path.split(':').filter(|p| *p == "/usr/bin").count(),
        1,
        "{path}"
    );
    assert!(path.contains("/usr/local/bin"));
}

#[test]
fn extra_overrides_is_filtered_and_can_force() {
    let src = login(&[("PATH", "/bin"), ("EDITOR", "vi")]);
    let extra = [
        ("EDITOR".to_owned(), "nano".to_owned()),
        ("GH_TOKEN".to_owned(), "ghp".to_owned()),
        ("_HERMES_FORCE_NOTION_TOKEN".to_owned(), "n".to_owned()),
        (
            "_HERMES_FORCE_AUXILIARY_X_API_KEY".to_owned(),
            "no".to_owned(),
        ),
    ];
    let env = child_env(&src, &extra);
    assert_eq!(lookup(&env, "EDITOR"), Some("nano"));
    assert_eq!(env.iter().filter(|(k, _)| k == "EDITOR").count(), 1);
    assert_eq!(lookup(&env, "GH_TOKEN"), None);
    assert_eq!(lookup(&env, "NOTION_TOKEN"), Some("n"));
    assert_eq!(lookup(&env, "AUXILIARY_X_API_KEY"), None);
}

#[test]
fn passthrough_reallows_only_non_provider_secrets() {
    let src = login(&[
        ("PATH", "/bin"),
        ("NOTION_TOKEN", "n"),
        ("OPENAI_API_KEY", "sk"),
    ]);
    let env = child_env_with_passthrough(&src, &[], &["NOTION_TOKEN", "OPENAI_API_KEY"]);
    assert_eq!(lookup(&env, "NOTION_TOKEN"), Some("n"));
    assert_eq!(lookup(&env, "OPENAI_API_KEY"), None);
}

#[test]
fn missing_path_gets_sane_default() {
    let env = child_env(&login(&[("HOME", "/h")]), &[]);
    assert_eq!(
        lookup(&env, "PATH"),
        Some(
            "/opt/homebrew/bin:/opt/homebrew/sbin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
        )
    );
}

#[test]
fn parses_env_after_profile_noise() {
    let mut out = b"Welcome!\nmotd line".to_vec();
    out.extend_from_slice(format!("\n{ENV_MARKER}\n").as_bytes());
    out.extend_from_slice(b"PATH=/usr/bin\0MULTI=a\nb=c\0SHLVL=2\0=bad\0EMPTY=\0");
    let vars = parse_env_output(&out).unwrap();
    let keys: Vec<_> = vars.iter().map(|(k, _)| k.to_str().unwrap()).collect();
    assert_eq!(keys, ["PATH", "MULTI", "EMPTY"]);
    assert_eq!(vars[1].1, "a\nb=c");
    assert!(parse_env_output(b"no marker").is_none());
}

/// The capture itself always yields a PATH, from the login shell or, when
/// the user's profile is slow or broken, from the daemon's own environment.
#[tokio::test]
async fn login_env_capture_returns_path() {
    let env = capture_login_env().await;
    let path = env.get("PATH").expect("PATH captured");
    assert!(!path.is_empty());
    assert!(env.get("SHLVL").is_none());
}

/// A hermetic HOME, so the user's own profile (which may run `pyenv init`
/// or worse) cannot make the run slow: what `.bash_profile` exports is in
/// the captured environment, the shell's bookkeeping is not.
#[tokio::test]
async fn login_env_capture_reads_the_login_profile() {
    let bash = ["/usr/bin/bash", "/bin/bash"]
        .into_iter()
        .map(Path::new)
        .find(|p| p.exists())
        .expect("bash is installed");
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join(".bash_profile"),
        "export HERMES_PROFILE_MARK=from-profile\necho 'welcome to the box'\n",
    )
    .unwrap();
    let base = [
        ("HOME", home.path().as_os_str()),
        ("PATH", std::ffi::OsStr::new("/usr/bin:/bin")),
    ]
    .map(|(k, v)| (OsString::from(k), v.to_owned()));
    let vars = run_capture(bash, base.to_vec()).await.expect("capture");
    assert_eq!(lookup(&vars, "HERMES_PROFILE_MARK"), Some("from-profile"));
    assert!(lookup(&vars, "PATH").is_some());
    assert_eq!(lookup(&vars, "SHLVL"), None);
}

#[tokio::test]
async fn stripped_key_is_absent_in_a_real_child() {
    let src = login(&[
        ("PATH", "/usr/bin:/bin"),
        ("ACME_API_KEY", "secret-value"),
        ("KEEP_ME", "yes"),
    ]);
    let env = child_env(&src, &[]);
    let req = super::super::RunRequest::new(
        &crate::policy::command::Clearance::unjudged("echo \"[$ACME_API_KEY][$KEEP_ME]\""),
        "/",
        env,
    );
    let result =
        super::super::run_foreground(req, tokio_util::sync::CancellationToken::new(), |_| {}).await;
    assert_eq!(result.output, "[][yes]");
}
