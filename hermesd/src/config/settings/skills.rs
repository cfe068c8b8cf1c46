//! `skills.*` (Hermes' keys): the skill roots (`$HERMES_HOME/skills`, then `skills.external_dirs`)
//! and the skills hidden everywhere or per platform. (`skills.creation_nudge_interval` belongs to the review:
//! [`super::ReviewSection`].)

use std::{
    collections::HashMap,
    path::{Path, PathBuf},
};

use super::read::Reader;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillsSection {
    /// `skills.external_dirs`, `~` expanded (searched after `HERMES_HOME/skills`, in order).
    pub external_dirs: Vec<PathBuf>,
    /// `skills.disabled`.
    pub disabled: Vec<String>,
    /// `skills.platform_disabled`: platform → names.
    pub platform_disabled: HashMap<String, Vec<String>>,
}

impl SkillsSection {
    /// `user_home` (the environment's `HOME`) expands `~` in `skills.external_dirs`.
    pub fn read(r: &mut Reader<'_>, user_home: Option<&str>) -> Self {
        const PLATFORMS: &str = "skills.platform_disabled";
        let mut platform_disabled = HashMap::new();
        match r.get(PLATFORMS) {
            Some(node @ serde_yaml::Value::Mapping(map)) => {
                let mut part = Reader::under(node, r.name("skills.platform_disabled."));
                for platform in map.keys().filter_map(serde_yaml::Value::as_str) {
                    platform_disabled.insert(platform.to_string(), part.list(platform, &[]));
                }
                r.absorb(part);
            }
            Some(other) => r.notice(PLATFORMS, other, "is not a mapping of platforms", &"{}"),
            None => {}
        }
        Self {
            external_dirs: r
                .list("skills.external_dirs", &[])
                .iter()
                .map(|d| expand_home(d, user_home))
                .collect(),
            disabled: r.list("skills.disabled", &[]),
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

/// `~/x` → `<user home>/x` (the `HOME` of the daemon's environment).
fn expand_home(path: &str, user_home: Option<&str>) -> PathBuf {
    match (path.strip_prefix('~'), user_home) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest.trim_start_matches('/')),
        _ => PathBuf::from(path),
    }
}
