//! Trust decisions: a skill directory's record as it is now (digest, stat fingerprint, origin,
//! and the scan's verdict), and reconciling the catalog with the stored records — unchanged
//! skills keep their record (a stat comparison), new or changed ones are scanned.

use std::{
    collections::HashMap,
    path::{Path, PathBuf},
};

use super::{
    Catalog,
    fingerprint::{stat_fingerprint, stat_fingerprints},
    scan, skill_digest,
};
use crate::store::SkillRecord;

/// A record for `dir` as it is now; scanned when `scan_it` (content hermesd did not write).
pub fn classify(dir: &Path, name: &str, origin: &str, scan_it: bool) -> SkillRecord {
    let fingerprint = stat_fingerprint(dir);
    let digest = skill_digest(dir);
    let reason = if scan_it {
        match scan::scan_skill_dir(dir) {
            Ok(report) => report.blocking(),
            Err(e) => Some(format!("could not be scanned: {e}")),
        }
    } else {
        None
    };
    SkillRecord {
        dir: dir.display().to_string(),
        name: name.to_string(),
        digest,
        fingerprint,
        origin: origin.to_string(),
        trust: if reason.is_some() {
            "quarantined"
        } else {
            "trusted"
        }
        .to_string(),
        reason,
    }
}

/// Where a changed skill now comes from: hermesd's own writes changed by someone else are
/// "edited" (the review may no longer touch them).
fn origin_after_change(old: &str) -> &'static str {
    match old {
        "agent" | "bundled" | "installed" | "edited" => "edited",
        _ => "found",
    }
}

/// Compare the catalog with the records: unchanged skills keep their record, new or changed
/// ones are scanned. Returns the records to keep and those to write.
pub(super) fn reconcile(
    catalog: &Catalog,
    stored: &HashMap<PathBuf, SkillRecord>,
) -> (
    HashMap<PathBuf, SkillRecord>,
    HashMap<PathBuf, String>,
    Vec<SkillRecord>,
) {
    let mut records = HashMap::new();
    let mut fingerprints = HashMap::new();
    let mut changed = Vec::new();
    let dirs: Vec<&Path> = catalog.entries.iter().map(|e| e.dir.as_path()).collect();
    let now = stat_fingerprints(&dirs);
    for (entry, fingerprint) in catalog.entries.iter().zip(now) {
        fingerprints.insert(entry.dir.clone(), fingerprint.clone());
        let record = match stored.get(&entry.dir) {
            Some(old) if old.fingerprint == fingerprint => old.clone(),
            Some(old) if old.digest == entry.digest() => {
                let mut kept = old.clone();
                kept.fingerprint = fingerprint;
                changed.push(kept.clone());
                kept
            }
            Some(old) => {
                let origin = origin_after_change(&old.origin);
                let fresh = classify(&entry.dir, &entry.name, origin, true);
                tracing::info!(skill = %entry.name, origin, trust = %fresh.trust, "skill changed on disk; scanned");
                changed.push(fresh.clone());
                fresh
            }
            None => {
                let fresh = classify(&entry.dir, &entry.name, "found", true);
                if let Some(reason) = &fresh.reason {
                    tracing::warn!(skill = %entry.name, %reason, "skill quarantined");
                }
                changed.push(fresh.clone());
                fresh
            }
        };
        records.insert(entry.dir.clone(), record);
    }
    (records, fingerprints, changed)
}
