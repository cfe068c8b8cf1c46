//! The lists: which files the agent may not read, may not write, or may write only when the user
//! agrees. Paths are relative to a Hermes home (the daemon's, the root `~/.hermes` and every
//! profile under it), to the user's home, or absolute. Hermes' `agent/file_safety.py` is the
//! source; hermesd adds its own database and records.

/// Files in a Hermes home that hold credentials: never read, never written by the agent.
pub const HOME_SECRETS: &[&str] = &[
    ".env",
    "auth.json",
    "auth.lock",
    ".anthropic_oauth.json",
    "webhook_subscriptions.json",
    "auth/google_oauth.json",
    "cache/bws_cache.json",
];

/// Directories in a Hermes home whose every file holds credentials or feeds the prompt behind
/// the scanner's back (the skills hub cache).
pub const HOME_SECRET_DIRS: &[&str] = &["mcp-tokens", "pairing", "skills/.hub", "hermesd-auth"];

/// The daemon's own state in a Hermes home: the database (approvals, transcripts) and its
/// journal files, and the record of background processes it stops at start-up. The agent reads
/// them through tools made for it, and never writes them.
pub const HOME_STATE: &[&str] = &[
    "hermesd.db",
    "hermesd.db-wal",
    "hermesd.db-shm",
    "hermesd.db-journal",
    "state.db",
    "processes.json",
    "hermesd.pid",
];

/// The user's settings in a Hermes home: readable, never written by the agent.
pub const HOME_SETTINGS: &[&str] = &["config.yaml"];

/// What a Hermes home feeds into every prompt: the agent changes it only with the user's
/// consent (memory has its own tool, skills `skill_manage`, both of which scan what they write).
pub const HOME_PROMPT_SOURCES: &[&str] = &["SOUL.md", "memories", "skills"];

/// What a Hermes home runs unattended: cron jobs' pre-run scripts run without an approval, so
/// the agent adds or changes one only with the user's consent.
pub const HOME_UNATTENDED: &[&str] = &["scripts"];

/// Environment files anywhere on disk (compared case-insensitively): never read.
pub const ENV_FILE_NAMES: &[&str] = &[
    ".env",
    ".env.local",
    ".env.development",
    ".env.production",
    ".env.test",
    ".env.staging",
    ".envrc",
];

/// Credential files in the user's home: never read, never written.
pub const USER_SECRETS: &[&str] = &[
    ".netrc",
    ".pgpass",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    ".vault-token",
    ".aws/credentials",
    ".docker/config.json",
    ".kube/config",
    ".config/gh/hosts.yml",
];

/// Directories in the user's home: never written (Hermes refuses them outright).
pub const USER_PROTECTED_DIRS: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".kube",
    ".docker",
    ".azure",
    ".config/gh",
    ".config/gcloud",
];

/// Shell start-up files in the user's home: written only with the user's consent.
pub const SHELL_STARTUP: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zprofile",
    ".zshenv",
    ".zlogin",
    ".config/fish/config.fish",
];

/// System locations: never written.
pub const SYSTEM_PREFIXES: &[&str] = &[
    "/etc",
    "/boot",
    "/usr/lib/systemd",
    "/private/etc",
    "/private/var",
];
pub const SYSTEM_EXACT: &[&str] = &["/var/run/docker.sock", "/run/docker.sock"];
