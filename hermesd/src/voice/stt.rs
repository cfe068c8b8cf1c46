//! Speech to text, as Hermes' `transcribe_audio`: the file is checked (a plain file, not a link,
//! a supported format, at most 25 MB), then sent to the provider `stt` resolves — an
//! OpenAI-compatible `/audio/transcriptions` endpoint (multipart, `response_format` text for
//! `whisper-1`, JSON otherwise) within `stt.timeout`, `HERMES_LOCAL_STT_COMMAND` (the audio
//! converted to WAV first, as Hermes does) or a `stt.providers.<name>` command. The transcript is
//! capped at [`MAX_TRANSCRIPT_CHARS`].

use std::{
    ffi::OsString,
    path::{Path, PathBuf},
};

use super::{command, ffmpeg};
use crate::{
    config::settings::{SttProvider, SttSection},
    llm::HttpClient,
};

/// Hermes' largest audio file.
pub const MAX_FILE_BYTES: u64 = 25 * 1024 * 1024;
/// Formats the endpoints take (Hermes' list); others are converted to WAV first.
const SUPPORTED: &[&str] = &[
    "mp3", "mp4", "mpeg", "mpga", "m4a", "wav", "webm", "ogg", "aac", "flac",
];
/// The longest transcript kept (about an hour of speech); the rest is cut with a note.
pub const MAX_TRANSCRIPT_CHARS: usize = 50_000;
/// The most of an endpoint's answer read.
const MAX_ANSWER_BYTES: usize = 4 * 1024 * 1024;

/// Transcribe `file` with the provider `stt` resolves; `Err` is the reason, for the user.
pub async fn transcribe(
    file: &Path,
    stt: &SttSection,
    client: &HttpClient,
    env: Vec<(OsString, OsString)>,
) -> Result<String, String> {
    let ext = validate(file)?;
    let provider = stt.resolve()?;
    let text = match provider {
        SttProvider::Endpoint {
            name,
            base_url,
            api_key,
            model,
        } => {
            let work = tempfile::tempdir().map_err(|e| format!("cannot make a work dir: {e}"))?;
            let upload = if SUPPORTED.contains(&ext.as_str()) {
                file.to_path_buf()
            } else {
                let wav = work.path().join("audio.wav");
                ffmpeg::to_wav(env, file, &wav).await.map_err(|e| {
                    format!("the {ext} audio must be converted to WAV for {name}: {e}")
                })?;
                wav
            };
            let call = endpoint(client, &base_url, &api_key, &model, &upload);
            match tokio::time::timeout(stt.timeout, call).await {
                Ok(result) => result.map_err(|e| format!("{name} transcription failed: {e}"))?,
                Err(_) => {
                    return Err(format!(
                        "{name} transcription: the endpoint did not answer within {}s (stt.timeout)",
                        stt.timeout.as_secs_f64()
                    ));
                }
            }
        }
        SttProvider::LocalCommand { template, model } => {
            let work = tempfile::tempdir().map_err(|e| format!("cannot make a work dir: {e}"))?;
            let input = if matches!(ext.as_str(), "wav" | "aiff" | "aif") {
                file.to_path_buf()
            } else {
                let wav = work.path().join("audio.wav");
                ffmpeg::to_wav(env.clone(), file, &wav)
                    .await
                    .map_err(|e| format!("Local STT needs a WAV file: {e}"))?;
                wav
            };
            let out_dir = work.path().join("out");
            std::fs::create_dir(&out_dir).map_err(|e| format!("cannot make {e}"))?;
            let values = [
                input.display().to_string(),
                out_dir.display().to_string(),
                stt.local_language.clone(),
                model,
            ];
            let names = ["input_path", "output_dir", "language", "model"];
            command::run(
                "The local STT command (HERMES_LOCAL_STT_COMMAND)",
                &template,
                &names,
                &values,
                env,
                work.path().to_path_buf(),
                std::time::Duration::from_secs(300),
            )
            .await?;
            first_txt(&out_dir)?
        }
        SttProvider::Command(provider) => {
            let work = tempfile::tempdir().map_err(|e| format!("cannot make a work dir: {e}"))?;
            let output = work.path().join(format!("transcript.{}", provider.format));
            let language = if provider.language.is_empty() {
                "en".to_string()
            } else {
                provider.language.clone()
            };
            let values = [
                file.display().to_string(),
                output.display().to_string(),
                work.path().display().to_string(),
                provider.format.clone(),
                language,
                provider.model.clone(),
            ];
            let names = [
                "input_path",
                "output_path",
                "output_dir",
                "format",
                "language",
                "model",
            ];
            let what = format!("STT command provider '{}'", provider.name);
            let ran = command::run(
                &what,
                &provider.command,
                &names,
                &values,
                env,
                work.path().to_path_buf(),
                provider.timeout,
            )
            .await?;
            let written = std::fs::read(&output)
                .map(|b| String::from_utf8_lossy(&b).trim().to_string())
                .unwrap_or_default();
            match (written.is_empty(), ran.stdout.trim()) {
                (false, _) => written,
                (true, out) if !out.is_empty() => out.to_string(),
                _ => return Err(format!("{what} wrote no transcript and printed nothing")),
            }
        }
    };
    Ok(capped(text.trim()))
}

/// The transcript cut at [`MAX_TRANSCRIPT_CHARS`], with a note when it was longer.
pub fn capped(text: &str) -> String {
    match text.char_indices().nth(MAX_TRANSCRIPT_CHARS) {
        Some((end, _)) => format!("{} […transcript cut]", &text[..end]),
        None => text.to_string(),
    }
}

/// The file's extension when it may be transcribed; else why not (Hermes' checks).
fn validate(file: &Path) -> Result<String, String> {
    let meta = std::fs::symlink_metadata(file)
        .map_err(|_| format!("Audio file not found: {}", file.display()))?;
    if meta.file_type().is_symlink() {
        return Err(format!("Path is a symbolic link: {}", file.display()));
    }
    if !meta.is_file() {
        return Err(format!("Path is not a file: {}", file.display()));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(format!(
            "File too large: {:.1}MB (max 25MB)",
            meta.len() as f64 / (1024.0 * 1024.0)
        ));
    }
    let ext = file
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default()
        .to_lowercase();
    let convertible = ["oga", "opus", "aiff", "aif"];
    if !SUPPORTED.contains(&ext.as_str()) && !convertible.contains(&ext.as_str()) {
        return Err(format!(
            "Unsupported format: .{ext}. Supported: .{}",
            SUPPORTED.join(", .")
        ));
    }
    Ok(ext)
}

fn first_txt(dir: &Path) -> Result<String, String> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    found.sort();
    let first = found.first().ok_or_else(|| {
        "Local STT command completed but did not produce a .txt transcript".to_string()
    })?;
    std::fs::read_to_string(first).map_err(|e| format!("cannot read {}: {e}", first.display()))
}

/// One multipart request to `{base_url}/audio/transcriptions`.
async fn endpoint(
    client: &HttpClient,
    base_url: &str,
    api_key: &str,
    model: &str,
    file: &Path,
) -> Result<String, String> {
    let bytes = tokio::fs::read(file)
        .await
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let name = file
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("audio.ogg");
    let format = if model == "whisper-1" || base_url.contains("groq") {
        "text"
    } else {
        "json"
    };
    let mut form = super::multipart::Form::new();
    form.text("model", model);
    form.text("response_format", format);
    form.file("file", name, super::mime_of(name), &bytes);
    let (body, content_type) = form.finish();
    let response = client
        .post(format!("{base_url}/audio/transcriptions"))
        .bearer_auth(api_key)
        .body(body, &content_type)
        .send()
        .await
        .map_err(|e| format!("Connection error: {e}"))?;
    let status = response.status();
    let answer = response
        .bytes_limited(MAX_ANSWER_BYTES)
        .await
        .map_err(|e| format!("the answer could not be read: {e}"))?;
    let text = String::from_utf8_lossy(&answer).into_owned();
    if !status.is_success() {
        let excerpt: String = text.chars().take(300).collect();
        return Err(format!("API error: HTTP {status}: {}", excerpt.trim()));
    }
    Ok(
        match serde_json::from_str::<serde_json::Value>(text.trim()) {
            Ok(value) => match value.get("text").and_then(serde_json::Value::as_str) {
                Some(t) => t.to_string(),
                None => text,
            },
            Err(_) => text,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_checked_and_transcripts_capped() {
        let dir = tempfile::tempdir().unwrap();
        let ok = dir.path().join("a.ogg");
        std::fs::write(&ok, b"x").unwrap();
        assert_eq!(validate(&ok).unwrap(), "ogg");
        let exe = dir.path().join("a.exe");
        std::fs::write(&exe, b"x").unwrap();
        assert!(
            validate(&exe)
                .unwrap_err()
                .starts_with("Unsupported format: .exe")
        );
        let link = dir.path().join("l.ogg");
        std::os::unix::fs::symlink(&ok, &link).unwrap();
        assert!(validate(&link).unwrap_err().contains("symbolic link"));
        assert!(validate(&dir.path().join("none.ogg")).is_err());
        let long = "a".repeat(MAX_TRANSCRIPT_CHARS + 10);
        assert!(capped(&long).ends_with("[…transcript cut]"));
        assert_eq!(capped("short"), "short");
    }
}
