//! Audio for the voice tests: a fake OpenAI-compatible transcription endpoint
//! (`POST /v1/audio/transcriptions`) that records each upload and answers as the test queued
//! (a transcript, an error status, or never), and the durations of real audio files read from
//! their headers — a WAV's data size over its byte rate, an Ogg stream's last granule position
//! over Opus' 48 kHz — plus the check that the programs the voice tests need are installed.

use std::{
    collections::VecDeque,
    sync::{Arc, Mutex},
    time::Duration,
};

use axum::{Router, extract::State, http::HeaderMap, response::IntoResponse, routing::post};
use bytes::Bytes;

/// How the endpoint answers one request.
#[derive(Clone, Debug)]
pub enum Answer {
    /// 200 with this text (`response_format=text`) or `{"text": …}` (json).
    Transcript(String),
    /// This status with a JSON error body.
    Error(u16),
    /// No answer at all (the client's timeout must end it).
    Hang,
}

/// One upload the endpoint received.
#[derive(Clone, Debug)]
pub struct Upload {
    pub authorization: String,
    pub model: String,
    pub response_format: String,
    pub file_name: String,
    pub file: Bytes,
}

#[derive(Default)]
struct World {
    answers: VecDeque<Answer>,
    uploads: Vec<Upload>,
}

/// The fake endpoint; dropped, it stops.
pub struct FakeTranscriber {
    world: Arc<Mutex<World>>,
    port: u16,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeTranscriber {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FakeTranscriber {
    pub async fn start(answers: Vec<Answer>) -> Self {
        let world = Arc::new(Mutex::new(World {
            answers: answers.into(),
            uploads: Vec::new(),
        }));
        let app = Router::new()
            .route("/v1/audio/transcriptions", post(transcribe))
            .with_state(Arc::clone(&world));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.ok();
        });
        Self { world, port, task }
    }

    /// The base URL to configure (`…/v1`).
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    pub fn uploads(&self) -> Vec<Upload> {
        self.world.lock().unwrap().uploads.clone()
    }
}

async fn transcribe(
    State(world): State<Arc<Mutex<World>>>,
    headers: HeaderMap,
    body: Bytes,
) -> axum::response::Response {
    let content_type = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_ascii_lowercase();
    let Some((fields, files)) = crate::fake_telegram::form_data(&content_type, &body) else {
        return (axum::http::StatusCode::BAD_REQUEST, "not multipart").into_response();
    };
    let text = |name: &str| {
        fields
            .get(name)
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_string()
    };
    let file = files.into_iter().find(|f| f.field == "file");
    let upload = Upload {
        authorization: headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string(),
        model: text("model"),
        response_format: text("response_format"),
        file_name: file
            .as_ref()
            .map(|f| f.file_name.clone())
            .unwrap_or_default(),
        file: file.map(|f| f.bytes).unwrap_or_default(),
    };
    let json = upload.response_format == "json";
    let answer = {
        let mut world = world.lock().unwrap();
        world.uploads.push(upload);
        world.answers.pop_front().unwrap_or(Answer::Error(500))
    };
    match answer {
        Answer::Transcript(text) if json => {
            axum::Json(serde_json::json!({"text": text})).into_response()
        }
        Answer::Transcript(text) => text.into_response(),
        Answer::Error(status) => (
            axum::http::StatusCode::from_u16(status).unwrap(),
            axum::Json(serde_json::json!({"error": {"message": "the fake failed on purpose"}})),
        )
            .into_response(),
        Answer::Hang => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            ().into_response()
        }
    }
}

/// Seconds of sound in a WAV file: the `data` chunk's size over the `fmt ` chunk's byte rate.
pub fn wav_seconds(bytes: &[u8]) -> f64 {
    assert!(
        bytes.len() > 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WAVE",
        "not a WAV file"
    );
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    let (mut at, mut byte_rate, mut data) = (12, 0, 0);
    while at + 8 <= bytes.len() {
        let (id, size) = (&bytes[at..at + 4], u32_at(at + 4) as usize);
        if id == b"fmt " {
            byte_rate = u32_at(at + 16);
        } else if id == b"data" {
            // espeak-ng streams its WAV and may leave the size at its maximum: count what is there.
            data = size.min(bytes.len() - at - 8);
            break;
        }
        at += 8 + size + (size & 1);
    }
    assert!(byte_rate > 0 && data > 0, "no fmt or data chunk");
    data as f64 / f64::from(byte_rate)
}

/// Seconds of an Ogg/Opus stream: the last page's granule position (48 kHz samples) minus the
/// pre-skip of its `OpusHead`.
pub fn ogg_opus_seconds(bytes: &[u8]) -> f64 {
    assert!(bytes.starts_with(b"OggS"), "not an Ogg stream");
    let head = bytes
        .windows(8)
        .position(|w| w == b"OpusHead")
        .expect("an OpusHead packet");
    let pre_skip = u16::from_le_bytes([bytes[head + 10], bytes[head + 11]]);
    let mut at = 0;
    let mut granule = 0u64;
    while at + 27 <= bytes.len() && &bytes[at..at + 4] == b"OggS" {
        granule = u64::from_le_bytes(bytes[at + 6..at + 14].try_into().unwrap());
        let segments = bytes[at + 26] as usize;
        let body: usize = bytes[at + 27..at + 27 + segments]
            .iter()
            .map(|b| *b as usize)
            .sum();
        at += 27 + segments + body;
    }
    assert_eq!(at, bytes.len(), "the Ogg pages do not fill the file");
    (granule.saturating_sub(u64::from(pre_skip))) as f64 / 48_000.0
}

/// Fail loudly (never skip) when a program the voice tests need is missing: `scripts/test`
/// installs them.
pub fn require(program: &str) {
    let found = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(program).is_file()));
    assert!(
        found,
        "{program} is not installed; the voice tests need it (scripts/test installs espeak-ng \
         and ffmpeg with apt-get)"
    );
}
