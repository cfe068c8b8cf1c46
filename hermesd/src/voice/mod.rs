//! Voice: speech to text for voice messages (`stt`) and text to speech for `text_to_speech` and
//! spoken replies (`tts`), with Hermes' providers and settings; the command providers' safe
//! runner (`command`), conversion with ffmpeg (`ffmpeg`), the bounded audio cache (`cache`) and
//! multipart bodies (`multipart`). [`Voice`] holds the sections in force and the HTTP client,
//! built on the first request, so nothing of this runs or stays resident until a voice message
//! or a speech call comes.

pub mod cache;
pub mod command;
pub mod ffmpeg;
pub mod multipart;
pub mod stt;
pub mod tts;

use std::{
    sync::{Arc, Mutex, RwLock},
    time::Duration,
};

use crate::{
    config::settings::{SttSection, TtsSection},
    llm::HttpClient,
};

/// How long a connection to a speech endpoint may take to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The voice settings in force and the client for speech endpoints.
#[derive(Default)]
pub struct Voice {
    stt: RwLock<Arc<SttSection>>,
    tts: RwLock<Arc<TtsSection>>,
    client: Mutex<Option<HttpClient>>,
}

impl std::fmt::Debug for Voice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Voice").finish_non_exhaustive()
    }
}

impl Voice {
    /// Put the `stt` and `tts` sections in force (start and reload).
    pub fn apply(&self, stt: &SttSection, tts: &TtsSection) {
        if let Ok(mut s) = self.stt.write() {
            *s = Arc::new(stt.clone());
        }
        if let Ok(mut t) = self.tts.write() {
            *t = Arc::new(tts.clone());
        }
    }

    pub fn stt(&self) -> Arc<SttSection> {
        self.stt.read().map(|s| Arc::clone(&s)).unwrap_or_default()
    }

    pub fn tts(&self) -> Arc<TtsSection> {
        self.tts.read().map(|t| Arc::clone(&t)).unwrap_or_default()
    }

    /// The client for speech endpoints, built on first use (it reads the system's certificates).
    pub async fn client(&self) -> Result<HttpClient, String> {
        if let Ok(slot) = self.client.lock()
            && let Some(client) = slot.as_ref()
        {
            return Ok(client.clone());
        }
        let client = tokio::task::spawn_blocking(|| HttpClient::new(CONNECT_TIMEOUT))
            .await
            .map_err(|e| format!("cannot build the HTTP client: {e}"))??;
        if let Ok(mut slot) = self.client.lock() {
            *slot = Some(client.clone());
        }
        Ok(client)
    }
}

/// The MIME type of an audio file, by its name.
pub fn mime_of(name: &str) -> &'static str {
    let ext = name.rsplit('.').next().unwrap_or_default().to_lowercase();
    match ext.as_str() {
        "ogg" | "oga" | "opus" => "audio/ogg",
        "mp3" | "mpga" | "mpeg" => "audio/mpeg",
        "wav" => "audio/wav",
        "m4a" | "mp4" => "audio/mp4",
        "webm" => "audio/webm",
        "flac" => "audio/flac",
        "aac" => "audio/aac",
        _ => "application/octet-stream",
    }
}
