//! Which variables of the user's login environment a command gets without being asked: what a
//! shell and ordinary developer tools need, and nothing else. A secret can hide under any name
//! (`AWS_SECRET_ACCESS_KEY`, `DATABASE_URL`, `STRIPE_SK`, `MY_CREDS`), so a block list of name
//! shapes cannot keep them out; an allow-list can. The user adds more with
//! `terminal.env_passthrough`; Hermes' provider list (`env_blocklist.rs`) wins over both.
//!
//! Left out on purpose, each passable by name through `terminal.env_passthrough`:
//! `LD_PRELOAD`/`LD_AUDIT` (they load code into every command), `DBUS_SESSION_BUS_ADDRESS` (the
//! user's desktop session and keyring), `KUBECONFIG`, `DOCKER_HOST`, `GOPROXY`, `PYTHONPATH`,
//! askpass helpers, `npm_config_*` other than the prefix (`npm_config__auth` is a credential),
//! `HOMEBREW_*` other than its locations (`HOMEBREW_GITHUB_API_TOKEN`), and every secret.

/// Exact names that always pass (when the login environment has them).
pub(super) const ALLOWED_NAMES: &[&str] = &[
    // Who and where: the shell and every tool read these.
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "HOSTNAME",
    "MAIL",
    "TMPDIR",
    "TZ",
    // Language and terminal.
    "LANG",
    "LANGUAGE",
    "TERM",
    "COLORTERM",
    "TERMINFO",
    "TERMINFO_DIRS",
    "LS_COLORS",
    // The user's programs for editing and paging.
    "EDITOR",
    "VISUAL",
    "PAGER",
    "MANPAGER",
    // The desktop: a GUI program started on purpose finds its display.
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "XAUTHORITY",
    // Agents that hold keys without handing them out: `git push` over ssh and signed commits
    // keep working through the user's ssh-agent and gpg-agent.
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "GPG_TTY",
    "GNUPGHOME",
    // Documentation search paths.
    "MANPATH",
    "INFOPATH",
    // Hermes' own home (Hermes sets it for its commands too).
    "HERMES_HOME",
    // Who commits, and how git reaches ssh.
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_EDITOR",
    "GIT_PAGER",
    "GIT_SSH_COMMAND",
    // Where the toolchains are (a `*_HOME`, `*_ROOT` or `*_DIR` holding a path passes too).
    "GOROOT",
    "GOPATH",
    "GOBIN",
    "GOCACHE",
    "GOMODCACHE",
    "NVM_BIN",
    "NVM_INC",
    "BUN_INSTALL",
    "DENO_INSTALL",
    "npm_config_prefix",
    "NPM_CONFIG_PREFIX",
    "NODE_PATH",
    "GEM_PATH",
    "HOMEBREW_PREFIX",
    "HOMEBREW_CELLAR",
    "HOMEBREW_REPOSITORY",
    // Libraries and headers outside the system's directories (CUDA, /opt, ~/.local): without
    // them a program the user's own shell runs fails to load here; they name directories only.
    "PKG_CONFIG_PATH",
    "LD_LIBRARY_PATH",
    "LIBRARY_PATH",
    "CPATH",
    "CMAKE_PREFIX_PATH",
    // Certificate authorities of a network that inspects TLS: pip, npm, curl and git fail
    // without them behind such a proxy.
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "NODE_EXTRA_CA_CERTS",
    "GIT_SSL_CAINFO",
];

/// Name prefixes that pass: the locale (`LC_ALL`, `LC_TIME`, …) and the XDG base directories and
/// session (`XDG_RUNTIME_DIR`, `XDG_CONFIG_HOME`, `XDG_SESSION_TYPE`, …).
const ALLOWED_PREFIXES: &[&str] = &["LC_", "XDG_"];

/// Name suffixes of tool locations (`JAVA_HOME`, `CARGO_HOME`, `RUSTUP_HOME`, `PYENV_ROOT`,
/// `NVM_DIR`, …): they pass when their value is a path.
const LOCATION_SUFFIXES: &[&str] = &["_HOME", "_ROOT", "_DIR"];

/// The proxy settings: they pass unless the proxy's address carries a password.
const PROXY_NAMES: &[&str] = &[
    "http_proxy",
    "https_proxy",
    "ftp_proxy",
    "all_proxy",
    "no_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "FTP_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
];

/// Words that make a family member (`XDG_SESSION_COOKIE`, `SSH_KEY_DIR`) not pass by family.
const SECRET_WORDS: &[&str] = &[
    "KEY",
    "KEYS",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PASS",
    "CREDENTIAL",
    "CREDENTIALS",
    "CREDS",
    "COOKIE",
    "AUTH",
    "APIKEY",
    "PRIVATE",
];

fn has_secret_word(name: &str) -> bool {
    name.to_ascii_uppercase()
        .split('_')
        .any(|word| SECRET_WORDS.contains(&word))
}

/// A directory or file name: absolute or under `~`, no scheme.
fn is_path(value: &str) -> bool {
    (value.starts_with('/') || value.starts_with("~/") || value == "~") && !value.contains("://")
}

/// Whether a URL-shaped proxy address has a password in it (`http://me:pw@proxy:3128`).
fn has_credentials(value: &str) -> bool {
    let rest = value.split_once("://").map_or(value, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    authority.contains('@')
}

/// Whether `name` (with `value`) passes to a command without being asked for.
pub(super) fn is_allowed(name: &str, value: &str) -> bool {
    if ALLOWED_NAMES.contains(&name) {
        return true;
    }
    if PROXY_NAMES.contains(&name) {
        return !has_credentials(value);
    }
    if has_secret_word(name) {
        return false;
    }
    if ALLOWED_PREFIXES.iter().any(|p| name.starts_with(p)) {
        return true;
    }
    LOCATION_SUFFIXES.iter().any(|s| name.ends_with(s)) && is_path(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An exact name is chosen on purpose and wins over the secret words, which guard only the
    /// families: `SSH_AUTH_SOCK` names the agent's socket, not a credential.
    #[test]
    fn exact_names_win_over_secret_words() {
        assert!(has_secret_word("SSH_AUTH_SOCK"));
        assert!(is_allowed(
            "SSH_AUTH_SOCK",
            "/run/user/1000/ssh-agent.socket"
        ));
        let worded: Vec<&&str> = ALLOWED_NAMES
            .iter()
            .filter(|n| has_secret_word(n))
            .collect();
        assert_eq!(worded, [&"SSH_AUTH_SOCK"]);
    }

    #[test]
    fn families_pass_by_name_and_value() {
        assert!(is_allowed("LC_MESSAGES", "C"));
        assert!(is_allowed("XDG_DATA_DIRS", "/usr/share"));
        assert!(is_allowed("ANDROID_SDK_ROOT", "/opt/android"));
        assert!(is_allowed("SDKMAN_DIR", "~/.sdkman"));
        assert!(is_allowed("GRADLE_HOME", "/opt/gradle"));
        assert!(!is_allowed("GRADLE_HOME", "gradle"));
        assert!(!is_allowed("STORE_ROOT", "https://x/y"));
        assert!(!is_allowed("XDG_SESSION_COOKIE", "abc"));
        assert!(!is_allowed("SSH_KEY_DIR", "/home/u/.ssh"));
        assert!(!is_allowed("VAULT_PASS_HOME", "/x"));
        assert!(is_allowed("no_proxy", "localhost"));
        assert!(is_allowed("HTTP_PROXY", "http://proxy:3128/"));
        assert!(!is_allowed("HTTP_PROXY", "http://u:p@proxy:3128/"));
        assert!(!is_allowed("all_proxy", "socks5://token@proxy:1080"));
        assert!(!is_allowed("LD_PRELOAD", "/x.so"));
        assert!(!is_allowed("OPENAI_KEY", "sk-x"));
    }
}
