//! `auxiliary.<task>` (Python Hermes' keys) for the side tasks hermesd runs on a model — context
//! compression summaries, conversation titles and `vision_analyze`: their own model (else the
//! main one), their time limit, whether titles are written at all, and how long an image URL
//! may take to download.

use std::time::Duration;

use super::{provider::ProviderEntry, read::Reader};

/// The auxiliary tasks hermesd has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuxiliaryTask {
    Compression,
    TitleGeneration,
    Vision,
}

impl AuxiliaryTask {
    /// The task's key under `auxiliary`.
    pub fn key(self) -> &'static str {
        match self {
            Self::Compression => "compression",
            Self::TitleGeneration => "title_generation",
            Self::Vision => "vision",
        }
    }

    /// Seconds the task may take when `timeout` is not set.
    fn default_timeout(self) -> f64 {
        match self {
            Self::Compression => 120.0,
            Self::TitleGeneration => 30.0,
            Self::Vision => 120.0,
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
    /// `download_timeout` in seconds (read for vision: an image URL's download; default 30).
    pub download_timeout: Duration,
}

impl TaskSettings {
    fn defaults(task: AuxiliaryTask) -> Self {
        Self {
            endpoint: ProviderEntry::default(),
            timeout: Duration::from_secs_f64(task.default_timeout()),
            enabled: true,
            download_timeout: Duration::from_secs(30),
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
                AuxiliaryTask::Compression | AuxiliaryTask::Vision => d.enabled,
            },
            download_timeout: match task {
                AuxiliaryTask::Vision => Duration::from_secs_f64(
                    part.seconds("download_timeout", d.download_timeout.as_secs_f64()),
                ),
                _ => d.download_timeout,
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
    pub vision: TaskSettings,
}

impl Default for AuxiliarySection {
    fn default() -> Self {
        Self {
            compression: TaskSettings::defaults(AuxiliaryTask::Compression),
            title_generation: TaskSettings::defaults(AuxiliaryTask::TitleGeneration),
            vision: TaskSettings::defaults(AuxiliaryTask::Vision),
        }
    }
}

impl AuxiliarySection {
    pub fn read(r: &mut Reader<'_>) -> Self {
        Self {
            compression: TaskSettings::read(r, AuxiliaryTask::Compression),
            title_generation: TaskSettings::read(r, AuxiliaryTask::TitleGeneration),
            vision: TaskSettings::read(r, AuxiliaryTask::Vision),
        }
    }

    pub fn task(&self, task: AuxiliaryTask) -> &TaskSettings {
        match task {
            AuxiliaryTask::Compression => &self.compression,
            AuxiliaryTask::TitleGeneration => &self.title_generation,
            AuxiliaryTask::Vision => &self.vision,
        }
    }
}
