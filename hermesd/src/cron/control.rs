//! Cron's control: the settings in force, waking the scheduler after a change, waking the
//! delivery of waiting results, and the permits that bound how many runs go at once.

use std::sync::{Arc, RwLock};

use tokio::sync::{Notify, Semaphore};

use crate::config::settings::CronSection;

/// Shared by the scheduler, the Cron service and the `cronjob` tool.
#[derive(Debug)]
pub struct Control {
    settings: RwLock<Arc<CronSection>>,
    wake: Notify,
    waiting: Notify,
    /// Runs in progress at most (`cron.max_parallel_jobs`, read at start).
    pub permits: Arc<Semaphore>,
}

impl Control {
    pub fn new(settings: CronSection) -> Self {
        let permits = Arc::new(Semaphore::new(settings.max_parallel));
        Self {
            settings: RwLock::new(Arc::new(settings)),
            wake: Notify::new(),
            waiting: Notify::new(),
            permits,
        }
    }

    /// The settings in force.
    pub fn settings(&self) -> Arc<CronSection> {
        match self.settings.read() {
            Ok(guard) => Arc::clone(&guard),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        }
    }

    /// Take new settings (start and reload). A changed zone can move next runs: wake the
    /// scheduler. `max_parallel_jobs` takes effect at the next start.
    pub fn apply(&self, settings: CronSection) {
        match self.settings.write() {
            Ok(mut guard) => *guard = Arc::new(settings),
            Err(poisoned) => *poisoned.into_inner() = Arc::new(settings),
        }
        self.changed();
    }

    /// Jobs changed: the scheduler looks at the database again and re-arms its timer.
    pub fn changed(&self) {
        self.wake.notify_one();
    }

    /// A run left deliveries waiting for their platform: look whether it is connected.
    pub fn deliveries_waiting(&self) {
        self.waiting.notify_one();
    }

    /// Wait until a run left deliveries waiting.
    pub async fn deliveries_added(&self) {
        self.waiting.notified().await;
    }

    /// Wait until something changed or the timer fired.
    pub async fn woken(&self) {
        self.wake.notified().await;
    }
}
