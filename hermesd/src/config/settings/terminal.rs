//! `terminal.*`: the default foreground timeout of the `terminal` tool, the working directory of
//! sessions created without one, how many background processes a conversation may run, and the
//! variables commands get beyond the allow-listed ones (`env_passthrough`).

use std::time::Duration;

use hermes_proto::env::Env;

use super::read::Reader;

/// Background processes one conversation may have running at once, by default.
pub const DEFAULT_MAX_BACKGROUND: usize = 16;

/// One name of `terminal.env_passthrough` (Hermes' key): a command gets the variable from the
/// login environment, else `value`, the daemon's own (`.env` included), as Hermes, which loads
/// `.env` into its environment, passes it. Hermes' provider credentials never pass.
#[derive(Clone, PartialEq, Eq)]
pub struct EnvPassthrough {
    pub name: String,
    pub value: Option<String>,
}

impl std::fmt::Debug for EnvPassthrough {
    /// The name only: the value may be a credential.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EnvPassthrough")
            .field("name", &self.name)
            .field("value", &self.value.as_ref().map(|_| "…"))
            .finish()
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TerminalSection {
    /// `terminal.timeout`: whole seconds (at least 1).
    pub timeout: Duration,
    /// `terminal.cwd`: empty means the user's home.
    pub cwd: String,
    /// `terminal.max_background`.
    pub max_background: usize,
    /// `terminal.env_passthrough`: variable names, a list or one comma-separated string.
    pub env_passthrough: Vec<EnvPassthrough>,
}

impl Default for TerminalSection {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(180),
            cwd: String::new(),
            max_background: DEFAULT_MAX_BACKGROUND,
            env_passthrough: Vec::new(),
        }
    }
}

impl TerminalSection {
    /// `env` (the process environment overlaid by `.env`) gives the passed-through values.
    pub fn read(r: &mut Reader<'_>, env: &Env) -> Self {
        let d = Self::default();
        let mut env_passthrough: Vec<EnvPassthrough> = Vec::new();
        for name in r.list("terminal.env_passthrough", &[]) {
            if name.contains(['=', '\0']) || name.chars().any(char::is_whitespace) {
                r.notice_raw(format!(
                    "terminal.env_passthrough: {name:?} is not a variable name; it is left out"
                ));
                continue;
            }
            if env_passthrough.iter().all(|p| p.name != name) {
                let value = env.get(&name).map(str::to_string);
                env_passthrough.push(EnvPassthrough { name, value });
            }
        }
        Self {
            timeout: Duration::from_secs(r.whole(
                "terminal.timeout",
                d.timeout.as_secs(),
                1,
                u64::MAX,
            )),
            cwd: r.text("terminal.cwd"),
            max_background: r.whole(
                "terminal.max_background",
                d.max_background as u64,
                0,
                usize::MAX as u64,
            ) as usize,
            env_passthrough,
        }
    }
}
