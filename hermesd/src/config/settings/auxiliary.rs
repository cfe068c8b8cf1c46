//! `auxiliary.<task>` (Python Hermes' keys) for the side tasks hermesd runs on a model — context
//! compression summaries and conversation titles: their own model (else the main one), their
//! time limit, and whether titles are written at all.

use std::time::Duration;

use super::{provider::ProviderEntry, read::Reader};

/// The auxiliary tasks hermesd has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuxiliaryTask {
    Compression,
    TitleGeneration,
}

impl AuxiliaryTask {
    /// The task's key under `auxiliary`.
    pub fn key(self) -> &'static str {
        match self {
            Self::Compression => "compression",
            Self::TitleGeneration => "title_generation",
        }
    }

    /// Seconds the task may take when `timeout` is not set.
    fn default_timeout(self) -> f64 {
        match self {
            Self::Compression => 120.0,
            Self::TitleGeneration => 30.0,
        }
    }
}

/// One task's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskSettings {
    /// Its own provider entry; an empty `model` means the main chain serves it.
    pub endpoint: ProviderEntry,
    /// `timeout` in seconds.
    pub timeout: Duration,
    /// `enabled` (read for titles; default true).
    pub enabled: bool,
}

impl TaskSettings {
    fn defaults(task: AuxiliaryTask) -> Self {
        Self {
            endpoint: ProviderEntry::default(),
            timeout: Duration::from_secs_f64(task.default_timeout()),
            enabled: true,
        }
    }

    fn read(r: &mut Reader<'_>, task: AuxiliaryTask) -> Self {
        let key = format!("auxiliary.{}", task.key());
        let d = Self::defaults(task);
        let Some(node) = r.get(&key) else {
            return d;
        };
        let mut part = Reader::under(node, r.name(&format!("{key}.")));
        let endpoint = ProviderEntry::read_at(r, &key, "model").unwrap_or_default();
        let read = Self {
            endpoint,
            timeout: Duration::from_secs_f64(part.seconds("timeout", d.timeout.as_secs_f64())),
            enabled: match task {
                AuxiliaryTask::TitleGeneration => part.flag("enabled", d.enabled),
                AuxiliaryTask::Compression => d.enabled,
            },
        };
        r.absorb(part);
        read
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct AuxiliarySection {
    pub compression: TaskSettings,
    pub title_generation: TaskSettings,
}

impl Default for AuxiliarySection {
    fn default() -> Self {
        Self {
            compression: TaskSettings::defaults(AuxiliaryTask::Compression),
            title_generation: TaskSettings::defaults(AuxiliaryTask::TitleGeneration),
        }
    }
}

impl AuxiliarySection {
    pub fn read(r: &mut Reader<'_>) -> Self {
        Self {
            compression: TaskSettings::read(r, AuxiliaryTask::Compression),
            title_generation: TaskSettings::read(r, AuxiliaryTask::TitleGeneration),
        }
    }

    pub fn task(&self, task: AuxiliaryTask) -> &TaskSettings {
        match task {
            AuxiliaryTask::Compression => &self.compression,
            AuxiliaryTask::TitleGeneration => &self.title_generation,
        }
    }
}
