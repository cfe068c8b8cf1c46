//! Layered configuration: built-in defaults < `config.yaml` < process environment < `$HERMES_HOME/.env`
//! < command-line flags, then `${VAR}` expansion, then typed sections: `daemon`, `logging` and the
//! model's name strictly (a wrong type stops the load), everything else leniently into
//! [`settings::Settings`] (a bad value is a notice and the default). Unknown keys are kept.

pub mod edit;
mod error;
mod layers;
pub mod providers;
mod sections;
pub mod settings;

pub use error::ConfigError;
pub use sections::{DaemonSection, LoggingSection, ModelSection};
pub use settings::Settings;

use hermes_proto::{env::Env, place::Home};
use serde_yaml::Value;

/// The effective configuration of a daemon.
#[derive(Debug, Clone)]
pub struct Config {
    /// The merged tree, every key kept (including ones hermesd does not use). The daemon's parts
    /// read [`Config::settings`] and the sections above, never this.
    pub tree: Value,
    pub daemon: DaemonSection,
    pub logging: LoggingSection,
    pub model: ModelSection,
    /// Every other setting hermesd reads, typed.
    pub settings: Settings,
    /// Things the user may want to know (unknown keys kept and ignored, legacy keys moved, bad
    /// values replaced by their defaults).
    pub notices: Vec<String>,
    /// The environment the configuration was loaded with (process env overlaid by `.env`):
    /// provider keys come from here.
    pub env: Env,
}

/// The configuration in force, shared by the daemon's parts: readers clone the `Arc` and never
/// hold the lock across an await; a reload swaps in a new one.
#[derive(Debug)]
pub struct SharedConfig(std::sync::RwLock<std::sync::Arc<Config>>);

impl SharedConfig {
    pub fn new(config: Config) -> Self {
        Self(std::sync::RwLock::new(std::sync::Arc::new(config)))
    }

    /// The configuration in force now.
    pub fn get(&self) -> std::sync::Arc<Config> {
        match self.0.read() {
            Ok(guard) => std::sync::Arc::clone(&guard),
            Err(poisoned) => std::sync::Arc::clone(&poisoned.into_inner()),
        }
    }

    /// Put `config` in force.
    pub fn set(&self, config: Config) {
        let config = std::sync::Arc::new(config);
        match self.0.write() {
            Ok(mut guard) => *guard = config,
            Err(poisoned) => *poisoned.into_inner() = config,
        }
    }
}

/// Values given on the command line, the top layer.
#[derive(Debug, Clone, Default)]
pub struct FlagOverrides {
    /// `KEY=VALUE` pairs with dotted keys; values are parsed as YAML scalars.
    pub pairs: Vec<(String, String)>,
}

impl Config {
    /// Load the configuration of `home` given its environment (process env overlaid by `.env`).
    pub fn load(home: &Home, env: &Env, flags: &FlagOverrides) -> Result<Self, ConfigError> {
        let path = home.config_file();
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => Some(text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                return Err(ConfigError::Read {
                    path: path.display().to_string(),
                    source: e,
                });
            }
        };
        let mut notices = Vec::new();
        let mut tree = layers::defaults()?;
        if let Some(text) = &text {
            let user = layers::parse_user_file(&path, text)?;
            notices.extend(layers::unknown_key_notices(&user));
            let user = layers::normalize_legacy(user, &mut notices);
            layers::deep_merge(&mut tree, user);
        }
        layers::apply_env(&mut tree, env);
        layers::apply_flags(&mut tree, flags)?;
        layers::expand(&mut tree, env);
        let sections = sections::Sections::from_tree(&tree, &path, text.as_deref())?;
        let (settings, bad_values) = Settings::read(&tree, env);
        notices.extend(bad_values);
        Ok(Self {
            tree,
            daemon: sections.daemon,
            logging: sections.logging,
            model: sections.model,
            settings,
            notices,
            env: env.clone(),
        })
    }

    /// The configured socket path, if any.
    pub fn socket(&self) -> Option<&str> {
        Some(self.daemon.socket.as_str()).filter(|s| !s.is_empty())
    }
}
