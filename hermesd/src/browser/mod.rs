//! The browsers of the browser tools, over the Chrome DevTools Protocol: at most one per
//! conversation, started on its first `browser_navigate` (nothing is started or connected
//! before), closed by the idle reaper after `browser.inactivity_timeout`, with its conversation
//! and at daemon shutdown (the process group killed, the profile removed). A browser that
//! crashed or was killed is started again on the next call. Every request a page makes is
//! judged by `policy::url` first (`events.rs`).

mod actions;
mod cdp;
mod dialogs;
mod events;
mod launch;
mod page;
mod proxy;
mod raw;
mod raw_files;
mod screenshot;
mod snapshot;

use std::{
    collections::HashMap,
    path::{Path, PathBuf},
    sync::{Arc, Mutex, RwLock, Weak},
    time::Instant,
};

use tokio::sync::OwnedMutexGuard;
use tokio_util::sync::CancellationToken;

pub use events::check as check_url;
pub use launch::{EXECUTABLES, find_executable};
pub use page::Page;

use crate::{config::settings::BrowserSection, policy::url::UrlPolicy};

/// Browsers open at once (one per conversation).
pub const MAX_BROWSERS: usize = 8;

/// Why a browser command failed; the text goes to the model.
#[derive(Debug, thiserror::Error)]
pub enum BrowserError {
    #[error("the browser could not start: {0}")]
    Start(String),
    #[error(
        "the browser closed the connection (it exited or crashed); call browser_navigate to start \
         it again"
    )]
    Gone,
    #[error("{0}")]
    Timeout(String),
    #[error("the browser refused the command: {0}")]
    Protocol(String),
    #[error("{0}")]
    Page(String),
    /// The URL rule refused a navigation or a redirect; the text starts with `Blocked:`.
    #[error("{0}")]
    Refused(String),
    #[error("{0}")]
    Arguments(String),
}

/// Why the browser tools are not offered, in one line.
pub fn unavailable_reason() -> &'static str {
    "no chromium, chromium-browser, google-chrome or google-chrome-stable on PATH and no \
     browser.cdp_url set"
}

/// What starting a browser needs, taken from the settings in force.
#[derive(Debug, Clone)]
pub struct Start {
    pub settings: BrowserSection,
    pub policy: UrlPolicy,
    pub executable: Option<PathBuf>,
    /// Where profile directories are made.
    pub profiles: PathBuf,
    /// Where the page's downloads go.
    pub downloads: PathBuf,
}

struct Slot {
    page: Arc<tokio::sync::Mutex<Option<Page>>>,
    last_used: Mutex<Instant>,
}

impl Slot {
    fn touch(&self) {
        if let Ok(mut t) = self.last_used.lock() {
            *t = Instant::now();
        }
    }

    fn idle_since(&self) -> Instant {
        self.last_used
            .lock()
            .map(|t| *t)
            .unwrap_or_else(|_| Instant::now())
    }
}

struct Inner {
    home: PathBuf,
    settings: RwLock<(BrowserSection, UrlPolicy)>,
    slots: Mutex<HashMap<String, Arc<Slot>>>,
    stale_cleaned: std::sync::Once,
    closing: CancellationToken,
}

/// Every conversation's browser. Cheap to hold: nothing is loaded until the first navigation.
#[derive(Clone)]
pub struct Browsers {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Browsers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Browsers").finish_non_exhaustive()
    }
}

/// One call's hold on its conversation's page: other calls of the conversation (and the
/// reaper) wait until it is dropped, which counts as the page's last use.
pub struct Lease {
    guard: OwnedMutexGuard<Option<Page>>,
    slot: Arc<Slot>,
    /// The browser had exited and was started again for this call.
    pub restarted: bool,
}

impl Lease {
    /// The page; a lease always holds one.
    pub fn page(&mut self) -> Result<&mut Page, BrowserError> {
        self.guard.as_mut().ok_or(BrowserError::Gone)
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.slot.touch();
    }
}

impl Browsers {
    pub fn new(home: &Path) -> Self {
        Self {
            inner: Arc::new(Inner {
                home: home.to_path_buf(),
                settings: RwLock::new((BrowserSection::default(), UrlPolicy::default())),
                slots: Mutex::default(),
                stale_cleaned: std::sync::Once::new(),
                closing: CancellationToken::new(),
            }),
        }
    }

    /// Put the `browser` section and `security.allow_private_urls` in force (start, reload).
    pub fn apply(&self, settings: &BrowserSection, allow_private_urls: bool) {
        if let Ok(mut s) = self.inner.settings.write() {
            *s = (settings.clone(), UrlPolicy::new(allow_private_urls));
        }
    }

    fn settings(&self) -> (BrowserSection, UrlPolicy) {
        self.inner
            .settings
            .read()
            .map(|s| s.clone())
            .unwrap_or_default()
    }

    /// The URL rule in force.
    pub fn policy(&self) -> UrlPolicy {
        self.settings().1
    }

    /// Whether a browser can be had: `browser.cdp_url` is set or one is on PATH.
    pub fn available(&self) -> bool {
        !self.settings().0.cdp_url.is_empty()
            || find_executable(std::env::var_os("PATH").as_deref()).is_some()
    }

    /// The browser processes this daemon runs now (for tests and diagnostics).
    pub fn pids(&self) -> Vec<u32> {
        let slots: Vec<_> = self
            .inner
            .slots
            .lock()
            .map(|s| s.values().cloned().collect())
            .unwrap_or_default();
        slots
            .iter()
            .filter_map(|s| s.page.try_lock().ok()?.as_ref()?.pid())
            .collect()
    }

    /// Hold `conversation`'s page for one call. `create` (the directory its downloads go to,
    /// the session's own) starts a browser when there is none (or the one there died); without
    /// it a missing page is an error telling the model to navigate.
    pub async fn lease(
        &self,
        conversation: &str,
        create: Option<&Path>,
    ) -> Result<Lease, BrowserError> {
        if self.inner.closing.is_cancelled() {
            return Err(BrowserError::Page("the daemon is stopping".into()));
        }
        let slot = {
            let mut slots = self
                .inner
                .slots
                .lock()
                .map_err(|_| BrowserError::Page("the browser table is unusable".into()))?;
            match slots.get(conversation) {
                Some(slot) => Arc::clone(slot),
                None if create.is_none() => return Err(no_page()),
                None if slots.len() >= MAX_BROWSERS => {
                    return Err(BrowserError::Page(format!(
                        "{MAX_BROWSERS} browsers are open already (one per conversation); \
                         try again when one is idle"
                    )));
                }
                None => {
                    let slot = Arc::new(Slot {
                        page: Arc::default(),
                        last_used: Mutex::new(Instant::now()),
                    });
                    slots.insert(conversation.to_string(), Arc::clone(&slot));
                    slot
                }
            }
        };
        let mut guard = Arc::clone(&slot.page).lock_owned().await;
        let mut restarted = false;
        if let Some(page) = guard.as_mut()
            && !page.alive()
        {
            tracing::warn!(
                conversation,
                "the browser exited or crashed; starting it again"
            );
            if let Some(dead) = guard.take() {
                tokio::spawn(dead.close());
            }
            restarted = true;
        }
        if guard.is_none() {
            let Some(downloads) = create else {
                drop(guard);
                self.forget(conversation, &slot);
                return Err(if restarted {
                    BrowserError::Page(
                        "the browser had exited; call browser_navigate to start it again".into(),
                    )
                } else {
                    no_page()
                });
            };
            match self.open(downloads).await {
                Ok(page) => *guard = Some(page),
                Err(e) => {
                    drop(guard);
                    self.forget(conversation, &slot);
                    return Err(e);
                }
            }
            self.arm_reaper(conversation, &slot);
        }
        Ok(Lease {
            guard,
            slot,
            restarted,
        })
    }

    async fn open(&self, downloads: &Path) -> Result<Page, BrowserError> {
        let (settings, policy) = self.settings();
        let cache = self.inner.home.join("cache");
        let profiles = cache.join("browser");
        let downloads = downloads.to_path_buf();
        let start = Start {
            executable: find_executable(std::env::var_os("PATH").as_deref()),
            settings,
            policy,
            profiles: profiles.clone(),
            downloads,
        };
        page::ensure_dir(&start.downloads)?;
        let clean = profiles.clone();
        let inner = Arc::clone(&self.inner);
        // Once per daemon: profiles (and browsers) a killed daemon left behind.
        let _ = tokio::task::spawn_blocking(move || {
            inner.stale_cleaned.call_once(|| {
                let removed = launch::clean_stale(&clean);
                if removed > 0 {
                    tracing::info!(removed, "browser profiles of an earlier daemon removed");
                }
            });
        })
        .await;
        Page::open(&start).await
    }

    /// Drop `conversation`'s slot when it is still `slot` and empty.
    fn forget(&self, conversation: &str, slot: &Arc<Slot>) {
        if let Ok(mut slots) = self.inner.slots.lock()
            && slots
                .get(conversation)
                .is_some_and(|s| Arc::ptr_eq(s, slot))
        {
            slots.remove(conversation);
        }
    }

    /// Close the browser when it has been idle for `browser.inactivity_timeout`.
    fn arm_reaper(&self, conversation: &str, slot: &Arc<Slot>) {
        let weak: Weak<Slot> = Arc::downgrade(slot);
        let browsers = self.clone();
        let conversation = conversation.to_string();
        let closing = self.inner.closing.clone();
        tokio::spawn(async move {
            loop {
                let Some(slot) = weak.upgrade() else { return };
                let timeout = browsers.settings().0.inactivity_timeout;
                let deadline = slot.idle_since() + timeout;
                drop(slot);
                tokio::select! {
                    () = closing.cancelled() => return,
                    () = tokio::time::sleep_until(deadline.into()) => {}
                }
                let Some(slot) = weak.upgrade() else { return };
                // A call in progress holds the page; its end is a use.
                let mut guard = slot.page.lock().await;
                if guard.is_none() {
                    return;
                }
                if slot.idle_since().elapsed() >= timeout {
                    let page = guard.take();
                    drop(guard);
                    browsers.forget(&conversation, &slot);
                    if let Some(page) = page {
                        tracing::info!(conversation, "closing an idle browser");
                        page.close().await;
                        give_back_heap().await;
                    }
                    return;
                }
            }
        });
    }

    /// Close `conversation`'s browser (the conversation ended or was deleted).
    pub async fn close(&self, conversation: &str) {
        let slot = self
            .inner
            .slots
            .lock()
            .ok()
            .and_then(|mut s| s.remove(conversation));
        if let Some(slot) = slot {
            let page = slot.page.lock().await.take();
            if let Some(page) = page {
                page.close().await;
                give_back_heap().await;
            }
        }
    }

    /// Close every browser (daemon shutdown); returns how many were open.
    pub async fn close_all(&self) -> usize {
        self.inner.closing.cancel();
        let slots: Vec<_> = self
            .inner
            .slots
            .lock()
            .map(|mut s| s.drain().map(|(_, slot)| slot).collect())
            .unwrap_or_default();
        let closing = slots.into_iter().map(|slot| async move {
            let page = slot.page.lock().await.take();
            match page {
                Some(page) => {
                    page.close().await;
                    1
                }
                None => 0,
            }
        });
        futures_util::future::join_all(closing)
            .await
            .into_iter()
            .sum()
    }
}

/// A page's answers (a large page's tree is megabytes) leave free heap behind; it goes back to
/// the system when its browser closes.
async fn give_back_heap() {
    let _ = tokio::task::spawn_blocking(crate::residency::trim_heaps).await;
}

fn no_page() -> BrowserError {
    BrowserError::Page("no page is open: call browser_navigate first".into())
}
