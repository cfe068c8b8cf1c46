//! How each platform's connection is doing, as `hermesctl gateway status` shows it: its state,
//! since when it is connected, when it last received and sent, how often it reconnected, and
//! its last error (with credentials already masked by the adapter).

use std::{
    sync::{Arc, Mutex},
    time::SystemTime,
};

/// A platform connection's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkState {
    Disabled,
    Connecting,
    Connected,
    Retrying,
    Fatal,
}

impl LinkState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Disabled => "disabled",
            Self::Connecting => "connecting",
            Self::Connected => "connected",
            Self::Retrying => "retrying",
            Self::Fatal => "fatal",
        }
    }
}

/// One platform's status.
#[derive(Debug, Clone)]
pub struct PlatformStatus {
    pub platform: String,
    pub state: LinkState,
    pub connected_since: Option<SystemTime>,
    pub last_received_at: Option<SystemTime>,
    pub last_sent_at: Option<SystemTime>,
    pub reconnects: u32,
    pub last_error: String,
}

/// The shared, updatable status of one platform.
#[derive(Debug, Clone)]
pub struct StatusCell(Arc<Mutex<PlatformStatus>>);

impl StatusCell {
    pub fn new(platform: &str, state: LinkState) -> Self {
        Self(Arc::new(Mutex::new(PlatformStatus {
            platform: platform.to_string(),
            state,
            connected_since: None,
            last_received_at: None,
            last_sent_at: None,
            reconnects: 0,
            last_error: String::new(),
        })))
    }

    fn update(&self, f: impl FnOnce(&mut PlatformStatus)) {
        let mut guard = match self.0.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        f(&mut guard);
    }

    pub fn get(&self) -> PlatformStatus {
        match self.0.lock() {
            Ok(guard) => guard.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    pub fn connecting(&self) {
        self.update(|s| {
            s.state = LinkState::Connecting;
            s.connected_since = None;
        });
    }

    pub fn connected(&self) {
        self.update(|s| {
            s.state = LinkState::Connected;
            s.connected_since = Some(SystemTime::now());
        });
    }

    /// Failed; retrying after a pause. Counts a reconnect when it was connected.
    pub fn retrying(&self, error: &str) {
        self.update(|s| {
            if s.state == LinkState::Connected {
                s.reconnects += 1;
            }
            s.state = LinkState::Retrying;
            s.connected_since = None;
            s.last_error = error.to_string();
        });
    }

    pub fn fatal(&self, error: &str) {
        self.update(|s| {
            s.state = LinkState::Fatal;
            s.connected_since = None;
            s.last_error = error.to_string();
        });
    }

    pub fn received(&self) {
        self.update(|s| s.last_received_at = Some(SystemTime::now()));
    }

    pub fn sent(&self) {
        self.update(|s| s.last_sent_at = Some(SystemTime::now()));
    }

    /// A failed send or edit, kept as the last error without changing the state.
    pub fn note_error(&self, error: &str) {
        self.update(|s| s.last_error = error.to_string());
    }
}
