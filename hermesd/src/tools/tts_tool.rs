//! `text_to_speech` (toolset `tts`), Hermes' tool: the text (capped at the provider's limit) is
//! spoken by the provider `tts` configures into `$HERMES_HOME/cache/audio/tts_<time>.<ext>`, or
//! into the `output_path` the model names once the write rules allow it (no `..`). On Telegram
//! the audio is made OGG/Opus when the provider can (a command provider with
//! `voice_compatible: true` through ffmpeg) so it arrives as a voice message. The result is
//! Hermes': `file_path`, `media_tag` (`MEDIA:<path>`, after `[[audio_as_voice]]` for a voice
//! bubble), `provider`, `voice_compatible`. Offered only when the configured provider is one
//! hermesd speaks with.

use std::path::{Component, Path, PathBuf};

use async_trait::async_trait;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError, ToolServices, optional_str, required_str};
use crate::{
    config::settings::TtsProvider,
    voice::{cache, ffmpeg, tts},
};

pub struct TextToSpeechTool;

#[async_trait]
impl Tool for TextToSpeechTool {
    fn name(&self) -> &str {
        "text_to_speech"
    }

    fn toolset(&self) -> &str {
        "tts"
    }

    fn schema(&self) -> Value {
        json!({
            "name": "text_to_speech",
            "description": "Convert text to speech audio. Returns a MEDIA: path that the platform delivers as native audio. Compatible providers render as a voice bubble on Telegram; otherwise audio is sent as a regular attachment. Voice and provider are user-configured (built-in providers like openai or custom command providers under tts.providers.<name>), not model-selected.",
            "parameters": {
                "type": "object",
                "properties": {
                    "text": {
                        "type": "string",
                        "description": "The text to convert to speech. Provider-specific character caps apply and are enforced automatically (OpenAI 4096, command providers 5000); over-long input is truncated."
                    },
                    "output_path": {
                        "type": "string",
                        "description": "Optional custom file path to save the audio. Defaults to $HERMES_HOME/cache/audio/<timestamp>.mp3"
                    }
                },
                "required": ["text"]
            }
        })
    }

    fn available(&self, services: &ToolServices) -> bool {
        services.voice.tts().resolve().is_ok()
    }

    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        let text = required_str(&args, "text")?;
        if text.trim().is_empty() {
            return Ok(json!({"success": false, "error": "Text is required"}));
        }
        let settings = ctx.services.voice.tts();
        let provider_name = tts::provider_name(&settings);
        let failed = |why: String| Ok(json!({"success": false, "error": why}));
        let provider = match settings.resolve() {
            Ok(p) => p,
            Err(why) => return failed(format!("TTS configuration error ({provider_name}): {why}")),
        };
        let cap = settings.max_text_length();
        let text: String = match text.char_indices().nth(cap) {
            Some((end, _)) => {
                tracing::warn!(
                    provider = %provider_name,
                    cap,
                    "text_to_speech: the text is longer than the provider takes; truncated"
                );
                text[..end].to_string()
            }
            None => text.to_string(),
        };
        let want_opus = ctx.settings.skills.platform == "telegram";
        let ext = tts::extension(&provider, want_opus);
        let file = match optional_str(&args, "output_path") {
            Some(path) => {
                if Path::new(path)
                    .components()
                    .any(|c| c == Component::ParentDir)
                {
                    return failed(format!(
                        "output_path contains '..' traversal component: {path}. Use an absolute \
                         path or one relative to the current directory without '..'."
                    ));
                }
                let mut file = ctx.resolve_path(path);
                if matches!(provider, TtsProvider::Command(_)) {
                    file.set_extension(&ext);
                }
                let mut writes = vec![file.clone()];
                if matches!(&provider, TtsProvider::Command(c) if c.voice_compatible) {
                    writes.push(file.with_extension("ogg"));
                }
                if let Err(why) = super::write_guard::guard_writes(ctx, &writes).await {
                    return failed(why);
                }
                if let Some(parent) = file.parent()
                    && let Err(e) = tokio::fs::create_dir_all(parent).await
                {
                    return failed(format!("cannot create {}: {e}", parent.display()));
                }
                file
            }
            None => {
                let home = ctx.services.hermes_home.clone();
                let dir = match tokio::task::spawn_blocking(move || cache::prepare(&home)).await {
                    Ok(Ok(dir)) => dir,
                    Ok(Err(why)) => return failed(why),
                    Err(e) => return failed(format!("cannot prepare the audio cache: {e}")),
                };
                let stamp = chrono::Local::now().format("%Y%m%d_%H%M%S_%3f");
                dir.join(format!("tts_{stamp}.{ext}"))
            }
        };
        let client = match ctx.services.voice.client().await {
            Ok(c) => c,
            Err(why) => return failed(why),
        };
        let login = ctx.services.login_env().await;
        let env = crate::exec::child_env(&login, &[]);
        let spoken = tokio::select! {
            spoken = tts::speak(&text, &file, &provider, &settings, &client, env.clone()) => spoken,
            () = ctx.cancel.cancelled() => return Err(ToolError::Interrupted),
        };
        let mut file: PathBuf = match spoken {
            Ok(f) => f,
            Err(why) => return failed(format!("TTS generation failed ({provider_name}): {why}")),
        };
        let voice_compatible = match &provider {
            TtsProvider::Command(c) if c.voice_compatible => {
                if !has_ext(&file, "ogg") {
                    match ffmpeg::to_opus(env, &file).await {
                        Ok(ogg) => file = ogg,
                        Err(why) => tracing::warn!(error = %why, "text_to_speech: no Opus copy"),
                    }
                }
                has_ext(&file, "ogg")
            }
            TtsProvider::Command(_) => false,
            TtsProvider::OpenAi { .. } => want_opus && has_ext(&file, "ogg"),
        };
        let shown = file.display().to_string();
        let mut media_tag = format!("MEDIA:{shown}");
        if voice_compatible {
            media_tag = format!("[[audio_as_voice]]\n{media_tag}");
        }
        Ok(json!({
            "success": true,
            "file_path": shown,
            "media_tag": media_tag,
            "provider": provider_name,
            "voice_compatible": voice_compatible,
        }))
    }
}

fn has_ext(path: &Path, ext: &str) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case(ext))
}
