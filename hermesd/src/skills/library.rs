//! The skills hermesd serves: the catalog of every root (reloaded only when a SKILL.md changed),
//! each directory's record in `hermesd.db` (origin, digest, trust), and the security scan of
//! content hermesd did not write itself — when first seen and whenever it changes. Quarantined
//! skills stay on disk but are out of the `visible` catalog the model sees.

use std::{
    collections::HashMap,
    path::{Path, PathBuf},
    sync::Arc,
};

use super::{Catalog, Signature, SkillEntry, fingerprint::stat_fingerprint, scan, skill_digest};
use crate::store::{self, SkillRecord, Store};

/// One consistent picture of the skills.
#[derive(Debug)]
pub struct SkillsView {
    pub roots: Vec<PathBuf>,
    signature: Signature,
    fingerprints: HashMap<PathBuf, String>,
    /// Every skill that parsed, quarantined or not.
    pub all: Catalog,
    /// What the model may see: trusted skills only.
    pub visible: Catalog,
    /// Records by skill directory.
    pub records: HashMap<PathBuf, SkillRecord>,
}

impl SkillsView {
    pub fn record(&self, entry: &SkillEntry) -> Option<&SkillRecord> {
        self.records.get(&entry.dir)
    }

    /// Whether the skill in `dir` was written by hermesd's agent and not changed since.
    pub fn agent_created(&self, dir: &Path) -> bool {
        self.records.get(dir).is_some_and(|r| r.origin == "agent")
    }

    /// The quarantine reason of `name`, when it is quarantined.
    pub fn quarantined(&self, name: &str) -> Option<String> {
        let entry = self.all.find(name)?;
        let record = self.record(entry)?;
        (!record.is_trusted()).then(|| record.reason.clone().unwrap_or_default())
    }
}

/// The library: a cached view, refreshed on demand. The bundled skills are synced once, before
/// the first view is built, by whoever asks first (the daemon warms it at start).
#[derive(Debug, Default)]
pub struct SkillsLibrary {
    cache: tokio::sync::Mutex<Option<Arc<SkillsView>>>,
    bundled: tokio::sync::OnceCell<()>,
}

/// A record for `dir` as it is now, scanned unless `trusted_origin` says hermesd wrote it.
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
fn reconcile(
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
    for entry in &catalog.entries {
        let fingerprint = stat_fingerprint(&entry.dir);
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

impl SkillsLibrary {
    /// The skills as they are on disk now; reloads and rescans only what changed.
    pub async fn view(
        &self,
        store: &Store,
        roots: Vec<PathBuf>,
    ) -> Result<Arc<SkillsView>, String> {
        self.bundled
            .get_or_init(|| async {
                if let Err(e) = self.sync_bundled(store, roots.clone()).await {
                    tracing::warn!(error = %e, "bundled skills not synced");
                }
            })
            .await;
        let mut cache = self.cache.lock().await;
        let previous = cache.clone();
        let checked = {
            let roots = roots.clone();
            let previous = previous.clone();
            tokio::task::spawn_blocking(move || unchanged(previous.as_deref(), &roots))
                .await
                .map_err(|e| format!("the skills check stopped: {e}"))?
        };
        if let (true, Some(view)) = (checked, previous) {
            return Ok(view);
        }
        let stored: HashMap<PathBuf, SkillRecord> = store
            .read(store::skill_records)
            .await
            .map_err(|e| format!("read skill records: {e}"))?
            .into_iter()
            .map(|r| (PathBuf::from(&r.dir), r))
            .collect();
        let (view, changed, gone) = tokio::task::spawn_blocking(move || {
            let signature = Catalog::signature(&roots);
            let all = Catalog::load(&roots);
            let (records, fingerprints, changed) = reconcile(&all, &stored);
            let gone: Vec<String> = stored
                .keys()
                .filter(|dir| !records.contains_key(*dir) && !dir.join("SKILL.md").exists())
                .map(|d| d.display().to_string())
                .collect();
            let mut visible = all.clone();
            visible
                .entries
                .retain(|e| records.get(&e.dir).is_some_and(SkillRecord::is_trusted));
            let view = SkillsView {
                roots,
                signature,
                fingerprints,
                all,
                visible,
                records,
            };
            (view, changed, gone)
        })
        .await
        .map_err(|e| format!("loading skills stopped: {e}"))?;
        if !changed.is_empty() || !gone.is_empty() {
            store
                .write(move |tx| {
                    for record in &changed {
                        store::put_skill_record(tx, record)?;
                    }
                    for dir in &gone {
                        store::delete_skill_record(tx, dir)?;
                    }
                    Ok(())
                })
                .await
                .map_err(|e| format!("store skill records: {e}"))?;
        }
        let view = Arc::new(view);
        *cache = Some(Arc::clone(&view));
        Ok(view)
    }

    /// Record what hermesd itself wrote into `dir` (trusted; `origin` agent, bundled or installed
    /// — installs are scanned), or forget `dir` when it is gone. The next view sees it.
    pub async fn record_write(
        &self,
        store: &Store,
        dir: PathBuf,
        name: String,
        origin: &'static str,
    ) -> Result<Option<SkillRecord>, String> {
        let previous = store
            .read({
                let dir = dir.display().to_string();
                move |conn| store::skill_record(conn, &dir)
            })
            .await
            .map_err(|e| format!("read skill record: {e}"))?;
        let record = tokio::task::spawn_blocking(move || {
            if !dir.join("SKILL.md").is_file() {
                return None;
            }
            // The agent improving a skill it did not write leaves its origin alone.
            let origin = match (origin, previous.as_ref()) {
                ("agent", Some(old)) if old.origin != "agent" => old.origin.clone(),
                _ => origin.to_string(),
            };
            let scan_it = origin == "installed" || origin == "bundled";
            Some(classify(&dir, &name, &origin, scan_it))
        })
        .await
        .map_err(|e| format!("recording a skill stopped: {e}"))?;
        let saved = record.clone();
        let forget = self.forget_path(&saved);
        store
            .write(move |tx| match &saved {
                Some(record) => store::put_skill_record(tx, record),
                None => store::delete_skill_record(tx, &forget),
            })
            .await
            .map_err(|e| format!("store skill record: {e}"))?;
        *self.cache.lock().await = None;
        Ok(record)
    }

    fn forget_path(&self, record: &Option<SkillRecord>) -> String {
        record.as_ref().map(|r| r.dir.clone()).unwrap_or_default()
    }

    /// Forget a deleted skill directory.
    pub async fn forget(&self, store: &Store, dir: &Path) -> Result<(), String> {
        let dir = dir.display().to_string();
        store
            .write(move |tx| store::delete_skill_record(tx, &dir))
            .await
            .map_err(|e| format!("delete skill record: {e}"))?;
        *self.cache.lock().await = None;
        Ok(())
    }

    /// Trust `name` as it is now (`hermesctl skills trust`).
    pub async fn trust(
        &self,
        store: &Store,
        roots: Vec<PathBuf>,
        name: &str,
    ) -> Result<SkillRecord, String> {
        let view = self.view(store, roots).await?;
        let entry = view
            .all
            .find(name)
            .ok_or_else(|| format!("no skill named {name}"))?;
        let old = view.record(entry).cloned();
        let dir = entry.dir.clone();
        let name = entry.name.clone();
        let mut record = tokio::task::spawn_blocking(move || {
            let origin = old.map_or_else(|| "found".to_string(), |r| r.origin);
            classify(&dir, &name, &origin, false)
        })
        .await
        .map_err(|e| format!("trusting a skill stopped: {e}"))?;
        record.trust = "trusted".into();
        record.reason = None;
        let saved = record.clone();
        store
            .write(move |tx| store::put_skill_record(tx, &saved))
            .await
            .map_err(|e| format!("store skill record: {e}"))?;
        *self.cache.lock().await = None;
        Ok(record)
    }
}

impl SkillsLibrary {
    /// Bring the bundled skills into the first root (see `bundled`) and record what was written.
    async fn sync_bundled(&self, store: &Store, roots: Vec<PathBuf>) -> Result<(), String> {
        let report = tokio::task::spawn_blocking(move || {
            let names: std::collections::HashSet<String> = Catalog::load(&roots)
                .entries
                .into_iter()
                .map(|e| e.name)
                .collect();
            super::bundled::sync(&roots[0], &names, &|dir| Ok(skill_digest(dir)))
        })
        .await
        .map_err(|e| format!("the bundled skills sync stopped: {e}"))?
        .map_err(|e| format!("bundled skills: {e}"))?;
        for dir in report.written.iter().chain(&report.updated) {
            let name = dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if let Some(record) = self
                .record_write(store, dir.clone(), name.clone(), "bundled")
                .await?
                && let Some(reason) = &record.reason
            {
                tracing::error!(skill = %name, %reason, "a bundled skill failed the security scan");
            }
        }
        if !report.written.is_empty() || !report.updated.is_empty() {
            tracing::info!(
                written = report.written.len(),
                updated = report.updated.len(),
                "bundled skills synced"
            );
        }
        Ok(())
    }
}

/// Whether nothing changed since `previous` was built (blocking: stats the files).
fn unchanged(previous: Option<&SkillsView>, roots: &[PathBuf]) -> bool {
    let Some(view) = previous else {
        return false;
    };
    view.roots == roots
        && view.signature == Catalog::signature(roots)
        && view
            .all
            .entries
            .iter()
            .all(|e| view.fingerprints.get(&e.dir) == Some(&stat_fingerprint(&e.dir)))
}
