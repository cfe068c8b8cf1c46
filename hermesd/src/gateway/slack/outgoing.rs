//! What goes out to Slack: a message (`chat.postMessage`, in the chat's thread when it has one)
//! and its edits (`chat.update`), as mrkdwn, with Block Kit buttons when it has any (a section
//! holding the text and an actions block; each button's `value` is the gateway's button data),
//! sent with the token of the workspace the channel belongs to (tried on each workspace when
//! the channel is not known yet, as after a restart); and files with Slack's external upload
//! flow (`files.getUploadURLExternal`, the bytes POSTed to the URL it gave,
//! `files.completeUploadExternal` sharing it in the chat).

use serde_json::{Value, json};

use super::{Slack, api::Args, mrkdwn::to_mrkdwn};
use crate::gateway::adapter::{ChatRef, Outgoing, PlatformError};

/// Slack's limit on a section block's text.
const SECTION_MAX: usize = 3000;
/// The largest file sent (Slack takes up to 1 GB; the daemon reads it whole).
const MAX_UPLOAD_BYTES: u64 = 100 * 1024 * 1024;

/// The Block Kit of `message`'s buttons around `text`; `None` without buttons.
pub fn blocks(text: &str, message: &Outgoing) -> Option<Value> {
    if message.buttons.is_empty() {
        return None;
    }
    let shown: String = if text.chars().count() > SECTION_MAX {
        let mut cut: String = text.chars().take(SECTION_MAX - 1).collect();
        cut.push('…');
        cut
    } else {
        text.to_string()
    };
    let buttons: Vec<Value> = message
        .buttons
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let mut button = json!({
                "type": "button",
                "text": {"type": "plain_text", "text": b.label, "emoji": true},
                "action_id": format!("hermes_button_{i}"),
                "value": b.data,
            });
            if b.data.ends_with(":deny") {
                button["style"] = json!("danger");
            } else if i == 0 {
                button["style"] = json!("primary");
            }
            button
        })
        .collect();
    Some(json!([
        {"type": "section", "text": {"type": "mrkdwn", "text": shown}},
        {"type": "actions", "block_id": "hermes_actions", "elements": buttons},
    ]))
}

impl Slack {
    /// The tokens to try for `channel`: its workspace's, else every workspace's, primary first.
    pub(super) fn tokens_for(&self, channel: &str) -> Vec<(String, String)> {
        let memory = self.memory();
        if let Some(team) = memory.team_of(channel)
            && let Some(w) = memory.workspaces.iter().find(|w| w.team == team)
        {
            return vec![(w.team.clone(), w.token.clone())];
        }
        memory
            .workspaces
            .iter()
            .map(|w| (w.team.clone(), w.token.clone()))
            .collect()
    }

    /// Call `method` about `channel` with its workspace's token; an unknown channel is tried
    /// in each workspace until one knows it (then remembered).
    pub(super) async fn call_for(
        &self,
        channel: &str,
        method: &str,
        args: &Value,
    ) -> Result<Value, PlatformError> {
        let tokens = self.tokens_for(channel);
        let several = tokens.len() > 1;
        let mut last =
            PlatformError::Rejected(format!("{method}: no Slack workspace is connected"));
        for (team, token) in tokens {
            let pace = if method == "chat.postMessage" {
                format!("{team}:{channel}")
            } else {
                team.clone()
            };
            match self.api.call(method, &token, &pace, Args::Json(args)).await {
                Ok(answer) => {
                    if several {
                        self.memory_mut().note_channel(channel, &team);
                    }
                    return Ok(answer);
                }
                Err(PlatformError::Rejected(why))
                    if several
                        && (why.ends_with("channel_not_found")
                            || why.ends_with("not_in_channel")) =>
                {
                    last = PlatformError::Rejected(why);
                }
                Err(e) => return Err(e),
            }
        }
        Err(last)
    }

    pub(super) async fn post(
        &self,
        chat: &ChatRef,
        message: &Outgoing,
        with_blocks: bool,
    ) -> Result<String, PlatformError> {
        let text = to_mrkdwn(&message.markdown);
        let mut args = json!({"channel": chat.chat_id, "text": text, "mrkdwn": true});
        if !chat.thread_id.is_empty() {
            args["thread_ts"] = json!(chat.thread_id);
        }
        if with_blocks && let Some(blocks) = blocks(&text, message) {
            args["blocks"] = blocks;
        }
        let answer = self
            .call_for(&chat.chat_id, "chat.postMessage", &args)
            .await?;
        let ts = answer["ts"].as_str().unwrap_or_default().to_string();
        // A reply to the bot's message, or in a thread it answered in, is for it.
        let mut memory = self.memory_mut();
        memory.note_thread(&chat.chat_id, &ts);
        memory.note_thread(&chat.chat_id, &chat.thread_id);
        Ok(ts)
    }

    pub(super) async fn update(
        &self,
        chat: &ChatRef,
        ts: &str,
        message: &Outgoing,
        with_blocks: bool,
    ) -> Result<(), PlatformError> {
        let text = to_mrkdwn(&message.markdown);
        let mut args = json!({"channel": chat.chat_id, "ts": ts, "text": text});
        // An edit without buttons takes them away.
        args["blocks"] = match with_blocks.then(|| blocks(&text, message)).flatten() {
            Some(blocks) => blocks,
            None => json!([]),
        };
        self.call_for(&chat.chat_id, "chat.update", &args)
            .await
            .map(drop)
    }

    /// Upload `path` into `chat` (its thread); returns the file's id.
    pub(super) async fn upload(
        &self,
        chat: &ChatRef,
        path: &std::path::Path,
    ) -> Result<String, PlatformError> {
        let bytes = read_upload(path).await?;
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("file")
            .to_string();
        let (team, token) = self
            .tokens_for(&chat.chat_id)
            .into_iter()
            .next()
            .ok_or_else(|| PlatformError::Rejected("no Slack workspace is connected".into()))?;
        let asked = [
            ("filename", name.clone()),
            ("length", bytes.len().to_string()),
        ];
        let granted = self
            .api
            .call(
                "files.getUploadURLExternal",
                &token,
                &team,
                Args::Form(&asked),
            )
            .await?;
        let (Some(url), Some(file_id)) =
            (granted["upload_url"].as_str(), granted["file_id"].as_str())
        else {
            return Err(PlatformError::Unavailable(
                "files.getUploadURLExternal gave no upload URL".into(),
            ));
        };
        self.api.upload(url, bytes).await?;
        let files = json!([{"id": file_id, "title": name}]).to_string();
        let mut done = vec![("files", files), ("channel_id", chat.chat_id.clone())];
        if !chat.thread_id.is_empty() {
            done.push(("thread_ts", chat.thread_id.clone()));
        }
        self.api
            .call(
                "files.completeUploadExternal",
                &token,
                &team,
                Args::Form(&done),
            )
            .await?;
        Ok(file_id.to_string())
    }
}

/// The bytes of a file to upload: a plain file of at most [`MAX_UPLOAD_BYTES`].
async fn read_upload(path: &std::path::Path) -> Result<Vec<u8>, PlatformError> {
    let refused = |why: String| PlatformError::Rejected(why);
    let meta = tokio::fs::symlink_metadata(path)
        .await
        .map_err(|e| refused(format!("cannot read {}: {e}", path.display())))?;
    if !meta.is_file() {
        return Err(refused(format!("{} is not a plain file", path.display())));
    }
    if meta.len() > MAX_UPLOAD_BYTES {
        return Err(refused(format!(
            "{} is {} bytes; at most {MAX_UPLOAD_BYTES} are sent",
            path.display(),
            meta.len()
        )));
    }
    tokio::fs::read(path)
        .await
        .map_err(|e| refused(format!("cannot read {}: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gateway::adapter::Button;

    #[test]
    fn buttons_are_an_actions_block_carrying_their_data() {
        let message = Outgoing {
            markdown: "approve?".into(),
            buttons: vec![
                Button {
                    label: "✅ Once".into(),
                    data: "approve:q:once".into(),
                },
                Button {
                    label: "❌ Deny".into(),
                    data: "approve:q:deny".into(),
                },
            ],
            reply_to: None,
        };
        let got = blocks("approve?", &message).unwrap();
        assert_eq!(got[0]["text"]["text"], "approve?");
        assert_eq!(got[1]["elements"][0]["value"], "approve:q:once");
        assert_eq!(got[1]["elements"][1]["style"], "danger");
        assert!(blocks("x", &Outgoing::text("x")).is_none());
        let long = "a".repeat(5000);
        let cut = blocks(&long, &message).unwrap();
        assert_eq!(
            cut[0]["text"]["text"].as_str().unwrap().chars().count(),
            SECTION_MAX
        );
    }
}
