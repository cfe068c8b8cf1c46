//! Knowing when the skills on disk may have changed without looking: an inotify watch (through
//! `notify`) on every skills root marks the library dirty on any create, change, rename or delete
//! below it. Reads are ignored. Without a watch (a root missing, the watch limit reached) every
//! look is a full check.

use std::{
    path::PathBuf,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
};

use notify::{EventKind, RecursiveMode, Watcher};

/// A watch over a set of roots.
pub struct RootsWatch {
    dirty: Arc<AtomicBool>,
    _watcher: notify::RecommendedWatcher,
}

impl std::fmt::Debug for RootsWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RootsWatch")
            .field("dirty", &self.is_dirty())
            .finish_non_exhaustive()
    }
}

impl RootsWatch {
    /// Watch every root (each must exist); `None` when that is not possible.
    pub fn start(roots: &[PathBuf]) -> Option<Self> {
        let dirty = Arc::new(AtomicBool::new(true));
        let flag = Arc::clone(&dirty);
        let mut watcher =
            notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                let changed = match event {
                    Ok(event) => !matches!(event.kind, EventKind::Access(_)),
                    // A lost event (queue overflow) may hide a change.
                    Err(_) => true,
                };
                if changed {
                    flag.store(true, Ordering::SeqCst);
                }
            })
            .inspect_err(
                |e| tracing::info!(error = %e, "skills are checked on every look (no watch)"),
            )
            .ok()?;
        for root in roots {
            if let Err(e) = watcher.watch(root, RecursiveMode::Recursive) {
                tracing::info!(root = %root.display(), error = %e, "skills root not watched; checked on every look");
                return None;
            }
        }
        Some(Self {
            dirty,
            _watcher: watcher,
        })
    }

    /// Take the dirty mark: true when something may have changed since the last take.
    pub fn take_dirty(&self) -> bool {
        self.dirty.swap(false, Ordering::SeqCst)
    }

    /// Whether something may have changed (without taking the mark).
    pub fn is_dirty(&self) -> bool {
        self.dirty.load(Ordering::SeqCst)
    }
}
