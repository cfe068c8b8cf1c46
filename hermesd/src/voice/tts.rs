//! Text to speech, as Hermes' `text_to_speech_tool` generates it: an OpenAI-compatible
//! `/audio/speech` endpoint (the format from the file's extension: `.ogg` asks for Opus) within
//! `tts.timeout`, or a `tts.providers.<name>` command. The text goes to a command in a file
//! (`{input_path}` / `{text_path}`), never in its command line; the command must write a
//! non-empty `{output_path}` within its timeout.

use std::{
    ffi::OsString,
    path::{Path, PathBuf},
};

use super::command;
use crate::{
    config::settings::{TtsProvider, TtsSection},
    llm::HttpClient,
};

/// The largest audio accepted from an endpoint.
const MAX_AUDIO_BYTES: usize = 50 * 1024 * 1024;

/// The provider's name for results and errors.
pub fn provider_name(tts: &TtsSection) -> String {
    tts.provider.clone()
}

/// The file extension a provider writes when the caller does not choose: a command's format;
/// for an endpoint `.ogg` (Opus) when the audio is for a voice message, else `.mp3`.
pub fn extension(provider: &TtsProvider, want_opus: bool) -> String {
    match provider {
        TtsProvider::Command(c) => c.format.clone(),
        TtsProvider::OpenAi { .. } if want_opus => "ogg".into(),
        TtsProvider::OpenAi { .. } => "mp3".into(),
    }
}

/// Speak `text` into `output` with `provider`; returns the file written.
pub async fn speak(
    text: &str,
    output: &Path,
    provider: &TtsProvider,
    tts: &TtsSection,
    client: &HttpClient,
    env: Vec<(OsString, OsString)>,
) -> Result<PathBuf, String> {
    if output.exists() {
        std::fs::remove_file(output)
            .map_err(|e| format!("cannot replace {}: {e}", output.display()))?;
    }
    match provider {
        TtsProvider::OpenAi {
            base_url,
            api_key,
            model,
            voice,
            speed,
        } => {
            let format = match output.extension().and_then(|e| e.to_str()) {
                Some("ogg") => "opus",
                Some("wav") => "wav",
                Some("flac") => "flac",
                _ => "mp3",
            };
            let mut body = serde_json::json!({
                "model": model, "voice": voice, "input": text, "response_format": format,
            });
            if (*speed - 1.0).abs() > f64::EPSILON {
                body["speed"] = serde_json::json!(speed.clamp(0.25, 4.0));
            }
            let call = async {
                let response = client
                    .post(format!("{base_url}/audio/speech"))
                    .bearer_auth(api_key)
                    .header("x-idempotency-key", &uuid::Uuid::new_v4().to_string())
                    .json(&body)
                    .send()
                    .await
                    .map_err(|e| format!("Connection error: {e}"))?;
                let status = response.status();
                let bytes = response
                    .bytes_limited(MAX_AUDIO_BYTES)
                    .await
                    .map_err(|e| format!("the audio could not be read: {e}"))?;
                if !status.is_success() {
                    let excerpt: String =
                        String::from_utf8_lossy(&bytes).chars().take(300).collect();
                    return Err(format!("API error: HTTP {status}: {}", excerpt.trim()));
                }
                Ok(bytes)
            };
            let bytes = tokio::time::timeout(tts.timeout, call)
                .await
                .map_err(|_| {
                    format!(
                        "the speech endpoint did not answer within {}s (tts.timeout)",
                        tts.timeout.as_secs_f64()
                    )
                })??;
            write_private(output, &bytes)?;
        }
        TtsProvider::Command(c) => {
            let work = tempfile::tempdir().map_err(|e| format!("cannot make a work dir: {e}"))?;
            let text_path = work.path().join("input.txt");
            std::fs::write(&text_path, text)
                .map_err(|e| format!("cannot write {}: {e}", text_path.display()))?;
            let speed = c.speed.clone();
            let values = [
                text_path.display().to_string(),
                text_path.display().to_string(),
                output.display().to_string(),
                c.format.clone(),
                c.voice.clone(),
                c.model.clone(),
                speed,
            ];
            let names = [
                "input_path",
                "text_path",
                "output_path",
                "format",
                "voice",
                "model",
                "speed",
            ];
            let what = format!("TTS provider '{}'", c.name);
            command::run(
                &what,
                &c.command,
                &names,
                &values,
                env,
                work.path().to_path_buf(),
                c.timeout,
            )
            .await?;
            if !std::fs::metadata(output).is_ok_and(|m| m.len() > 0) {
                return Err(format!("{what} produced no output at {}", output.display()));
            }
        }
    }
    Ok(output.to_path_buf())
}

fn write_private(path: &Path, bytes: &[u8]) -> Result<(), String> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    std::io::Write::write_all(&mut file, bytes)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Markdown made speakable (Hermes' `_strip_markdown_for_tts`): code blocks, links' targets,
/// URLs, emphasis, headers, list marks and rules removed.
pub fn strip_markdown(text: &str) -> String {
    let mut out = String::new();
    let mut in_code = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        let mut l = line.trim_start_matches('#').trim_start().to_string();
        for mark in ["- ", "* "] {
            if let Some(rest) = l.trim_start().strip_prefix(mark) {
                l = rest.to_string();
            }
        }
        if l.trim().chars().all(|c| c == '-') && l.trim().len() >= 3 {
            continue;
        }
        let words: Vec<String> = l
            .split(' ')
            .filter(|w| !w.starts_with("http://") && !w.starts_with("https://"))
            .map(|w| w.replace("**", "").replace(['*', '`'], ""))
            .collect();
        let mut joined = words.join(" ");
        // [label](target) → label
        while let (Some(open), Some(mid)) = (joined.find('['), joined.find("](")) {
            let Some(close) = joined[mid..].find(')').map(|c| c + mid) else {
                break;
            };
            if open > mid {
                break;
            }
            let label = joined[open + 1..mid].to_string();
            joined.replace_range(open..=close, &label);
        }
        out.push_str(&joined);
        out.push('\n');
    }
    let mut text = out.trim().to_string();
    while text.contains("\n\n\n") {
        text = text.replace("\n\n\n", "\n\n");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_becomes_speakable() {
        let md = "# Title\n\n**Bold** and *it* with `code` and [a link](http://x.y).\n\n```\nfn x() {}\n```\n- item one\n---\nSee https://example.com now";
        assert_eq!(
            strip_markdown(md),
            "Title\n\nBold and it with code and a link.\n\nitem one\nSee now"
        );
    }
}
