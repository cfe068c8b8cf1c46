//! Login-env capture and child-env stripping.

use std::ffi::OsString;
use std::path::Path;
use std::sync::Arc;

use super::super::env::{ENV_MARKER, parse_env_output, run_capture};
use super::super::env_blocklist::PROVIDER_ENV_BLOCKLIST;
use super::super::{EnvOrigin, LoginEnv, capture_login_env, child_env, child_env_with_passthrough};
use crate::config::settings::EnvPassthrough;

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
        ("CLAUDE_CODE_OAUTH_TOKEN", "sk-ant-oat01-x"),
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
        // The block list kept it (stripping it logs the user out of Claude Code, Python
        // #55878); under the allow-list it is a credential like any other, passed only when
        // `terminal.env_passthrough` names it (`passthrough_lets_a_listed_variable_through`).
        "CLAUDE_CODE_OAUTH_TOKEN",
    ] {
        assert_eq!(lookup(&env, gone), None, "{gone} leaked");
    }
    assert_eq!(lookup(&env, "HOME"), Some("/home/u"));
    assert_eq!(lookup(&env, "LANG"), Some("C.UTF-8"));
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

/// A skill's declared variables pass (secret-named or not, and only those); a Hermes provider
/// credential does not even when declared.
#[test]
fn passthrough_reallows_only_non_provider_secrets() {
    let src = login(&[
        ("PATH", "/bin"),
        ("NOTION_TOKEN", "n"),
        ("NOTION_WORKSPACE", "w"),
        ("OTHER_SETTING", "o"),
        ("OPENAI_API_KEY", "sk"),
    ]);
    let env = child_env_with_passthrough(
        &src,
        &[],
        &["NOTION_TOKEN", "NOTION_WORKSPACE", "OPENAI_API_KEY"],
    );
    assert_eq!(lookup(&env, "NOTION_TOKEN"), Some("n"));
    assert_eq!(lookup(&env, "NOTION_WORKSPACE"), Some("w"));
    assert_eq!(lookup(&env, "OTHER_SETTING"), None);
    assert_eq!(lookup(&env, "OPENAI_API_KEY"), None);
}

fn listed(name: &str, value: Option<&str>) -> EnvPassthrough {
    EnvPassthrough {
        name: name.to_owned(),
        value: value.map(str::to_owned),
    }
}

/// `terminal.env_passthrough`: a listed variable passes with the login environment's value,
/// else the daemon's own (`.env`); a provider credential never; an unlisted one does not.
#[test]
fn passthrough_lets_a_listed_variable_through() {
    let src = login(&[
        ("PATH", "/bin"),
        ("MY_CREDS", "from-login"),
        ("CLAUDE_CODE_OAUTH_TOKEN", "oat"),
        ("OPENAI_API_KEY", "sk-login"),
        ("UNLISTED", "u"),
    ])
    .with_passthrough(Arc::from([
        listed("MY_CREDS", Some("from-dotenv")),
        listed("CLAUDE_CODE_OAUTH_TOKEN", None),
        listed("DOTENV_ONLY", Some("d")),
        listed("NOWHERE", None),
        listed("OPENAI_API_KEY", Some("sk-dotenv")),
        listed("HERMESD_CONTROL_SOCKET", Some("/run/x")),
    ]));
    assert_eq!(src.passthrough().len(), 6);
    let env = child_env(&src, &[("SERVICE_TOKEN".to_owned(), "t".to_owned())]);
    assert_eq!(lookup(&env, "MY_CREDS"), Some("from-login"));
    assert_eq!(lookup(&env, "CLAUDE_CODE_OAUTH_TOKEN"), Some("oat"));
    assert_eq!(lookup(&env, "DOTENV_ONLY"), Some("d"));
    for gone in [
        "NOWHERE",
        "OPENAI_API_KEY",
        "HERMESD_CONTROL_SOCKET",
        "UNLISTED",
        "SERVICE_TOKEN",
    ] {
        assert_eq!(lookup(&env, gone), None, "{gone} leaked");
    }
    // A secret-named `extra` variable passes when listed.
    let src = src.with_passthrough(Arc::from([listed("SERVICE_TOKEN", None)]));
    let env = child_env(&src, &[("SERVICE_TOKEN".to_owned(), "t".to_owned())]);
    assert_eq!(lookup(&env, "SERVICE_TOKEN"), Some("t"));
    assert_eq!(
        lookup(&env, "MY_CREDS"),
        None,
        "the new list replaced the old"
    );
}

/// The examples: secrets under names no block list shape catches.
const ODD_SECRETS: &[(&str, &str)] = &[
    (
        "AWS_SECRET_ACCESS_KEY",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ),
    ("AWS_ACCESS_KEY_ID", "AKIAIOSFODNN7EXAMPLE"),
    ("DATABASE_URL", "postgres://u:pw@h/db"),
    ("STRIPE_SK", "sk_live_0123456789abcdef"),
    ("OPENAI_KEY", "sk-proj-0123456789"),
    ("MY_CREDS", "admin:hunter2hunter2"),
];

/// What a shell and ordinary developer tools need reaches a command; everything else the login
/// environment holds (a secret under any name, an unknown setting) does not.
#[test]
fn only_allow_listed_variables_reach_a_command() {
    let kept: &[(&str, &str)] = &[
        ("HOME", "/home/u"),
        ("USER", "u"),
        ("LOGNAME", "u"),
        ("SHELL", "/bin/bash"),
        ("LANG", "en_US.UTF-8"),
        ("LANGUAGE", "en_US:en"),
        ("LC_ALL", "C.UTF-8"),
        ("LC_TIME", "de_DE.UTF-8"),
        ("TERM", "xterm-256color"),
        ("COLORTERM", "truecolor"),
        ("TZ", "Europe/Berlin"),
        ("TMPDIR", "/tmp/u"),
        ("EDITOR", "vim"),
        ("VISUAL", "vim"),
        ("PAGER", "less"),
        ("DISPLAY", ":0"),
        ("WAYLAND_DISPLAY", "wayland-0"),
        ("SSH_AUTH_SOCK", "/run/user/1000/ssh-agent.socket"),
        ("GPG_TTY", "/dev/pts/3"),
        ("HOSTNAME", "box"),
        ("MAIL", "/var/mail/u"),
        ("MANPATH", "/usr/share/man"),
        ("INFOPATH", "/usr/share/info"),
        ("XDG_RUNTIME_DIR", "/run/user/1000"),
        ("XDG_CONFIG_HOME", "/home/u/.config"),
        ("JAVA_HOME", "/usr/lib/jvm/java-17-openjdk-amd64"),
        ("CARGO_HOME", "/home/u/.cargo"),
        ("RUSTUP_HOME", "/home/u/.rustup"),
        ("GOROOT", "/usr/local/go"),
        ("GOPATH", "/home/u/go"),
        ("NVM_DIR", "/home/u/.nvm"),
        ("NVM_BIN", "/home/u/.nvm/versions/node/v20.11.1/bin"),
        ("PYENV_ROOT", "/home/u/.pyenv"),
        ("VOLTA_HOME", "/home/u/.volta"),
        ("BUN_INSTALL", "/home/u/.bun"),
        ("PNPM_HOME", "/home/u/.local/share/pnpm"),
        ("DENO_INSTALL", "/home/u/.deno"),
        ("npm_config_prefix", "/home/u/.npm-global"),
        ("PKG_CONFIG_PATH", "/usr/local/lib/pkgconfig"),
        ("LD_LIBRARY_PATH", "/usr/local/cuda/lib64"),
        ("HERMES_HOME", "/home/u/.hermes"),
        ("https_proxy", "http://proxy.corp:3128"),
        ("NO_PROXY", "localhost,127.0.0.1"),
        ("SSL_CERT_FILE", "/etc/ssl/certs/ca-certificates.crt"),
        ("GIT_AUTHOR_NAME", "U Ser"),
    ];
    let dropped: &[(&str, &str)] = &[
        ("KEEP_ME", "yes"),
        ("NOTIFY_SOCKET", "/run/systemd/notify"),
        ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/1000/bus"),
        ("LD_PRELOAD", "/tmp/evil.so"),
        ("PWD", "/somewhere"),
        // A family member whose name says secret, or whose value is not a location.
        ("XDG_SESSION_COOKIE", "c0ffee-1700000000.1-42"),
        ("BACKUP_HOME", "s3://AKIAIOSFODNN7EXAMPLE:secret@bucket"),
        // A proxy that carries a password.
        ("HTTPS_PROXY", "http://me:s3cret@proxy.corp:3128"),
        // Kept by the old block list (Python #55878); now only when passed through.
        ("CLAUDE_CODE_OAUTH_TOKEN", "sk-ant-oat01-xyz"),
        ("npm_config__auth", "dXNlcjpwYXNz"),
        ("HOMEBREW_GITHUB_API_TOKEN", "ghp_x"),
    ];
    let mut vars: Vec<(&str, &str)> = vec![("PATH", "/usr/bin")];
    vars.extend_from_slice(kept);
    vars.extend_from_slice(dropped);
    vars.extend_from_slice(ODD_SECRETS);
    let env = child_env(&login(&vars), &[]);
    for (name, value) in kept {
        assert_eq!(lookup(&env, name), Some(*value), "{name} was dropped");
    }
    for (name, _) in dropped.iter().chain(ODD_SECRETS) {
        assert_eq!(lookup(&env, name), None, "{name} leaked");
    }
    assert!(lookup(&env, "PATH").unwrap().starts_with("/usr/bin:"));
    assert_eq!(env.len(), kept.len() + 1, "{env:?}");
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

/// In a real shell: a secret and an unknown setting are gone (the block list let `KEEP_ME`
/// through; the allow-list does not), an allow-listed and a passed-through variable are there.
#[tokio::test]
async fn stripped_key_is_absent_in_a_real_child() {
    let src = login(&[
        ("PATH", "/usr/bin:/bin"),
        ("ACME_API_KEY", "secret-value"),
        ("KEEP_ME", "yes"),
        ("LANG", "C.UTF-8"),
        ("MY_TOOL", "on"),
    ])
    .with_passthrough(Arc::from([listed("MY_TOOL", None)]));
    let env = child_env(&src, &[]);
    let req = super::super::RunRequest::new(
        &crate::policy::command::Clearance::unjudged(
            "echo \"[$ACME_API_KEY][$KEEP_ME][$LANG][$MY_TOOL]\"",
        ),
        "/",
        env,
    );
    let result =
        super::super::run_foreground(req, tokio_util::sync::CancellationToken::new(), |_| {}).await;
    assert_eq!(result.output, "[][][C.UTF-8][on]");
}
