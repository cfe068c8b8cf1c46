//! The `skills` keys of config.yaml (Hermes' names): external skill directories and the
//! disabled lists.

use std::{
    collections::HashMap,
    path::{Path, PathBuf},
};

use crate::config::string_list as strings;

/// Skills settings, read on start and reload.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillsSettings {
    /// `skills.external_dirs`, `~` expanded (searched after `HERMES_HOME/skills`).
    pub external_dirs: Vec<PathBuf>,
    /// `skills.disabled`.
    pub disabled: Vec<String>,
    /// `skills.platform_disabled`: platform → names.
    pub platform_disabled: HashMap<String, Vec<String>>,
}

fn expand_home(path: &str) -> PathBuf {
    match (path.strip_prefix('~'), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest.trim_start_matches('/')),
        _ => PathBuf::from(path),
    }
}

impl SkillsSettings {
    pub fn from_config(tree: &serde_yaml::Value) -> Self {
        let section = tree.get("skills");
        let get = |key: &str| section.and_then(|s| s.get(key));
        let platform_disabled = match get("platform_disabled") {
            Some(serde_yaml::Value::Mapping(map)) => map
                .iter()
                .filter_map(|(k, v)| Some((k.as_str()?.to_string(), strings(Some(v)))))
                .collect(),
            _ => HashMap::new(),
        };
        Self {
            external_dirs: strings(get("external_dirs"))
                .iter()
                .map(|d| expand_home(d))
                .collect(),
            disabled: strings(get("disabled")),
            platform_disabled,
        }
    }

    /// Where new skills go: `HERMES_HOME/skills`, the first root.
    pub fn home_root(hermes_home: &Path) -> PathBuf {
        hermes_home.join("skills")
    }

    /// Every skills root, `HERMES_HOME/skills` first.
    pub fn roots(&self, hermes_home: &Path) -> Vec<PathBuf> {
        let mut roots = vec![Self::home_root(hermes_home)];
        for dir in &self.external_dirs {
            if !roots.contains(dir) {
                roots.push(dir.clone());
            }
        }
        roots
    }
}
