//! Voice in a chat, as Hermes' gateway does it: a voice message or audio file is transcribed
//! (`voice::stt`, the settings in force) and the transcript becomes the turn's text and so the
//! stored message; the transcript is echoed to the chat (`🎙️ "…"`, `stt.echo_transcripts`), and
//! a transcription that fails is said to the user with its reason while the model gets a neutral
//! note with the saved file. After an answer, the audio of the turn's `text_to_speech` calls is
//! sent (a voice message when made for one), and when the chat's `/voice` mode asks for it the
//! answer itself is spoken and sent as a voice message.

use std::{path::PathBuf, sync::Arc};

use super::{Gateway, Link, adapter::ChatRef, files::Fetched, outbox};
use crate::{
    store::{self, InboundRow},
    voice::{cache, ffmpeg, stt, tts},
};

/// Hermes' cap on the text of a spoken reply.
const SPOKEN_REPLY_CHARS: usize = 4000;

/// The note for the turn about a saved voice message or audio file at `path`, transcribed.
pub async fn heard(gateway: &Gateway, kind: &str, path: &str, fetched: &mut Fetched) -> String {
    let voice = &gateway.runner.tool_services.voice;
    let settings = voice.stt();
    if !settings.enabled {
        return format!("[The user sent a {kind} message: {path}]");
    }
    let login = gateway.runner.tool_services.login_env().await;
    let env = crate::exec::child_env(&login, &[]);
    let result = match voice.client().await {
        Ok(client) => stt::transcribe(std::path::Path::new(path), &settings, &client, env).await,
        Err(why) => Err(why),
    };
    match result {
        Ok(transcript) if !transcript.trim().is_empty() => {
            fetched.transcripts.push(transcript.clone());
            if kind == "audio" {
                format!(
                    "[The user sent an audio file, saved at {path}; its transcript:]\n\"{transcript}\""
                )
            } else {
                format!("\"{transcript}\"")
            }
        }
        Ok(_) => {
            fetched
                .problems
                .push(format!("The {kind} message held no speech to transcribe."));
            format!("[The user sent a {kind} message with no speech, saved at {path}]")
        }
        Err(why) => {
            tracing::info!(kind, error = %why, "gateway: a voice message could not be transcribed");
            fetched.problems.push(format!(
                "The {kind} message could not be transcribed: {why}"
            ));
            format!("[{kind} message could not be transcribed; the audio is saved at {path}]")
        }
    }
}

/// Tell the chat what was heard (`stt.echo_transcripts`) and what could not be transcribed.
pub async fn echo(gateway: &Arc<Gateway>, link: &Arc<Link>, row: &InboundRow, fetched: &Fetched) {
    let chat = super::chats::chat_of(row);
    if gateway.runner.tool_services.voice.stt().echo_transcripts {
        for transcript in &fetched.transcripts {
            let shown = format!("🎙️ \"{transcript}\"");
            outbox::send_now(gateway, link, &chat, Some(row.id), &shown).await;
        }
    }
    for problem in &fetched.problems {
        outbox::send_now(gateway, link, &chat, Some(row.id), &format!("⚠️ {problem}")).await;
    }
}

/// What a finished turn leaves for voice.
pub struct Turn {
    pub conversation: String,
    pub answer: String,
    pub tts_calls: Vec<String>,
    pub voice_input: bool,
}

/// Send the audio of the turn's `text_to_speech` calls, then the spoken answer when the chat's
/// mode asks for it and the agent spoke nothing itself.
pub async fn after_turn(
    gateway: &Arc<Gateway>,
    link: &Arc<Link>,
    row: &InboundRow,
    chat: &ChatRef,
    turn: Turn,
) {
    for (path, as_voice) in spoken_files(gateway, &turn).await {
        send(gateway, link, chat, &path, as_voice).await;
    }
    let mode = super::voice_mode::mode(gateway, link.platform(), &chat.chat_id).await;
    let wanted = mode == "all" || (mode == "voice_only" && turn.voice_input);
    let answer = turn.answer.trim();
    if !wanted || !turn.tts_calls.is_empty() || answer.is_empty() || answer.starts_with("Error:") {
        return;
    }
    match spoken_reply(gateway, answer).await {
        Ok(path) => send(gateway, link, chat, &path, true).await,
        Err(why) => {
            tracing::warn!(error = %why, "gateway: no spoken reply");
            let text = format!("⚠️ No spoken reply: {why}");
            outbox::send_now(gateway, link, chat, Some(row.id), &text).await;
        }
    }
}

/// The files the turn's `text_to_speech` calls wrote, and whether each is a voice message.
async fn spoken_files(gateway: &Gateway, turn: &Turn) -> Vec<(PathBuf, bool)> {
    let mut files = Vec::new();
    for call in &turn.tts_calls {
        let (conversation, call) = (turn.conversation.clone(), call.clone());
        let content = gateway
            .runner
            .store
            .read(move |conn| store::tool_result_in_conversation(conn, &conversation, &call))
            .await;
        let Ok(Some(content)) = content else { continue };
        let Ok(result) = serde_json::from_str::<serde_json::Value>(&content) else {
            continue;
        };
        if result.get("success") != Some(&serde_json::Value::Bool(true)) {
            continue;
        }
        if let Some(path) = result.get("file_path").and_then(|p| p.as_str()) {
            let as_voice = result.get("voice_compatible") == Some(&serde_json::Value::Bool(true));
            files.push((PathBuf::from(path), as_voice));
        }
    }
    files
}

/// The answer spoken into the audio cache as OGG/Opus (converted with ffmpeg when needed).
async fn spoken_reply(gateway: &Gateway, answer: &str) -> Result<PathBuf, String> {
    let voice = &gateway.runner.tool_services.voice;
    let settings = voice.tts();
    let provider = settings.resolve()?;
    let cut: String = answer.chars().take(SPOKEN_REPLY_CHARS).collect();
    let text = tts::strip_markdown(&cut);
    let text: String = text.chars().take(settings.max_text_length()).collect();
    if text.trim().is_empty() {
        return Err("the answer has nothing to speak".into());
    }
    let home = gateway.home.clone();
    let dir = tokio::task::spawn_blocking(move || cache::prepare(&home))
        .await
        .map_err(|e| format!("cannot prepare the audio cache: {e}"))??;
    let ext = tts::extension(&provider, true);
    let stamp = chrono::Local::now().format("%Y%m%d_%H%M%S_%3f");
    let file = dir.join(format!("tts_reply_{stamp}.{ext}"));
    let client = voice.client().await?;
    let login = gateway.runner.tool_services.login_env().await;
    let env = crate::exec::child_env(&login, &[]);
    let spoken = tts::speak(&text, &file, &provider, &settings, &client, env.clone()).await?;
    if spoken.extension().is_some_and(|e| e == "ogg") {
        return Ok(spoken);
    }
    let ogg = ffmpeg::to_opus(env, &spoken)
        .await
        .map_err(|e| format!("a voice message must be OGG/Opus: {e}"))?;
    let _ = std::fs::remove_file(&spoken);
    Ok(ogg)
}

async fn send(
    gateway: &Gateway,
    link: &Link,
    chat: &ChatRef,
    path: &std::path::Path,
    as_voice: bool,
) {
    let sent = outbox::retrying(gateway, link, false, || {
        link.adapter.send_file(chat, path, as_voice)
    })
    .await;
    match sent {
        Ok(_) => link.status.sent(),
        Err(e) => {
            tracing::warn!(error = %e, path = %path.display(), "gateway: audio not delivered");
            link.status.note_error(&e.to_string());
        }
    }
}
