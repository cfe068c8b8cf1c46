//! The skills hermesd serves: the catalog of every root (reloaded only when a SKILL.md changed),
//! each directory's record in `hermesd.db` (origin, digest, trust), and the security scan of
//! content hermesd did not write itself — when first seen and whenever it changes. Quarantined
//! skills stay on disk but are out of the `visible` catalog the model sees.

use std::{
    collections::HashMap,
    path::{Path, PathBuf},
    sync::Arc,
};

use super::{
    Catalog, Signature, SkillEntry,
    fingerprint::stat_fingerprints,
    skill_digest,
    trust::{classify, reconcile},
    watch::RootsWatch,
};
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
/// the first view is built, by whoever asks first (the first session, or a `skills` command) —
/// not at daemon start, so an idle daemon never pages in the skills code.
#[derive(Debug, Default)]
pub struct SkillsLibrary {
    cache: tokio::sync::Mutex<Option<Arc<SkillsView>>>,
    bundled: tokio::sync::OnceCell<()>,
    /// Says when the roots may have changed; without a watch every view checks the files.
    watch: Arc<std::sync::Mutex<WatchSlot>>,
}

/// The watch over the roots last looked at (`None` when it could not be set up).
#[derive(Debug, Default)]
struct WatchSlot {
    roots: Vec<PathBuf>,
    watch: Option<RootsWatch>,
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
        if let Some(view) = cache.as_ref()
            && view.roots == roots
            && self.quiet(&roots)
        {
            return Ok(Arc::clone(view));
        }
        self.take_dirty(&roots);
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
        self.ensure_watch(&view.roots);
        Ok(view)
    }

    /// Record what hermesd wrote into `dir` (`origin` agent, installed or bundled; all but the
    /// bundled sync's are scanned), or forget `dir` when it is gone. The next view sees it.
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
            let writer = origin;
            // The agent improving a skill it did not write leaves its origin alone.
            let origin = match (origin, previous.as_ref()) {
                ("agent", Some(old)) if old.origin != "agent" => old.origin.clone(),
                _ => origin.to_string(),
            };
            // Scanned whatever wrote it — the agent's own writes too (`skill_manage` scanned the
            // file it wrote; this reads the whole directory) — except the bundled sync: hermesd
            // ships those files itself, and a test holds every one of them to the scan.
            let scan_it = writer != "bundled";
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

    /// Whether the watch over `roots` saw nothing since the last full check.
    fn quiet(&self, roots: &[PathBuf]) -> bool {
        self.watch.lock().is_ok_and(|slot| {
            slot.roots == roots && slot.watch.as_ref().is_some_and(|w| !w.is_dirty())
        })
    }

    /// Before a full check: take the dirty mark (changes from now on mark it again).
    fn take_dirty(&self, roots: &[PathBuf]) {
        if let Ok(slot) = self.watch.lock()
            && slot.roots == roots
            && let Some(watch) = slot.watch.as_ref()
        {
            watch.take_dirty();
        }
    }

    /// After a full check: watch `roots` if they are not watched yet. The watch is set up in the
    /// background (it walks every directory) and starts dirty, so the first look after it is
    /// ready checks the files once more.
    fn ensure_watch(&self, roots: &[PathBuf]) {
        let Ok(mut slot) = self.watch.lock() else {
            return;
        };
        if slot.roots == roots {
            return;
        }
        *slot = WatchSlot {
            roots: roots.to_vec(),
            watch: None,
        };
        let shared = Arc::clone(&self.watch);
        let roots = roots.to_vec();
        tokio::task::spawn_blocking(move || {
            let watch = RootsWatch::start(&roots);
            if let Ok(mut slot) = shared.lock()
                && slot.roots == roots
            {
                slot.watch = watch;
            }
        });
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
            // Loaded only when a bundled skill is about to be written for the first time.
            let names = std::sync::OnceLock::new();
            let name_taken = |name: &str| {
                names
                    .get_or_init(|| {
                        Catalog::load(&roots)
                            .entries
                            .into_iter()
                            .map(|e| e.name)
                            .collect::<std::collections::HashSet<String>>()
                    })
                    .contains(name)
            };
            let Some(home_root) = roots.first() else {
                return Ok(super::bundled::SyncReport::default());
            };
            super::bundled::sync(home_root, &name_taken, &|dir| Ok(skill_digest(dir)))
        })
        .await
        .map_err(|e| format!("the bundled skills sync stopped: {e}"))?
        .map_err(|e| format!("bundled skills: {e}"))?;
        for dir in report
            .written
            .iter()
            .chain(&report.updated)
            .chain(&report.adopted)
        {
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
        if !report.written.is_empty() || !report.updated.is_empty() || !report.adopted.is_empty() {
            tracing::info!(
                written = report.written.len(),
                updated = report.updated.len(),
                adopted = report.adopted.len(),
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
    if view.roots != roots || view.signature != Catalog::signature(roots) {
        return false;
    }
    let dirs: Vec<&Path> = view.all.entries.iter().map(|e| e.dir.as_path()).collect();
    let now = stat_fingerprints(&dirs);
    view.all
        .entries
        .iter()
        .zip(now)
        .all(|(e, fingerprint)| view.fingerprints.get(&e.dir) == Some(&fingerprint))
}
