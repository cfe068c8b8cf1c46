//! `compression.*` (Hermes' keys): whether a conversation's context is compressed, at which share
//! of the window, and how much of the start and end stays verbatim.

use super::read::Reader;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CompressionSection {
    /// `compression.enabled`: automatic compression (a `/compress` always runs).
    pub enabled: bool,
    /// `compression.threshold`: compress once the prompt reaches this share of the window.
    pub threshold: f64,
    /// `compression.target_ratio`: token budget of a shrunk tail, as a share of the threshold.
    pub target_ratio: f64,
    /// `compression.protect_first_n`: messages kept verbatim at the start (at most 10,000).
    pub protect_first_n: usize,
    /// `compression.protect_last_n`: messages kept verbatim at the end (at most 10,000).
    pub protect_last_n: usize,
}

impl Default for CompressionSection {
    fn default() -> Self {
        Self {
            enabled: true,
            threshold: 0.5,
            target_ratio: 0.2,
            protect_first_n: 3,
            protect_last_n: 20,
        }
    }
}

impl CompressionSection {
    pub fn read(r: &mut Reader<'_>) -> Self {
        let d = Self::default();
        let count = |r: &mut Reader<'_>, key: &str, default: usize| {
            r.whole(key, default as u64, 0, 10_000) as usize
        };
        Self {
            enabled: r.flag("compression.enabled", d.enabled),
            threshold: r.ratio("compression.threshold", d.threshold),
            target_ratio: r.ratio("compression.target_ratio", d.target_ratio),
            protect_first_n: count(r, "compression.protect_first_n", d.protect_first_n),
            protect_last_n: count(r, "compression.protect_last_n", d.protect_last_n),
        }
    }
}
