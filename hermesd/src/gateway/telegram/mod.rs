//! Telegram, the gateway's first platform: connect (`getMe` → `deleteWebhook` or `setWebhook` →
//! `setMyCommands`), long polling with `getUpdates` (or the webhook's deliveries), and sending:
//! Markdown rendered as Telegram's HTML with a plain-text retry when Telegram rejects it, inline
//! buttons, typing, files fetched with `getFile`.

mod addressing;
mod api;
mod convert;
mod webhook;

use std::time::Duration;

use frankenstein::{
    AsyncTelegramApi, ParseMode,
    methods::{
        AnswerCallbackQueryParams, DeleteWebhookParams, EditMessageTextParams, GetFileParams,
        GetUpdatesParams, SendChatActionParams, SendMessageParams, SetMyCommandsParams,
        SetWebhookParams,
    },
    response::MethodResponse,
    types::{
        AllowedUpdate, BotCommand, ChatAction, ChatId, InlineKeyboardButton, InlineKeyboardMarkup,
        ReplyMarkup, ReplyParameters,
    },
};
use serde_json::Value;
use tokio::sync::Mutex;

pub use api::BotApi;

use super::{
    adapter::{Adapter, Attachment, Batch, Capabilities, ChatRef, Outgoing, PlatformError},
    markup,
    split::{self, TELEGRAM_MAX},
};
use crate::{config::settings::TelegramSettings, llm::HttpClient};

/// Updates taken per poll.
const BATCH: u32 = 100;

/// The Telegram adapter.
pub struct Telegram {
    settings: TelegramSettings,
    api: BotApi,
    poll_api: BotApi,
    webhook: Mutex<Option<webhook::Receiver>>,
    /// The bot, as `getMe` answered at the last connection (who a message addresses).
    me: std::sync::RwLock<addressing::Me>,
}

impl std::fmt::Debug for Telegram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Telegram")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl Telegram {
    pub fn new(settings: TelegramSettings, client: HttpClient) -> Self {
        let api = BotApi::new(
            client,
            &settings.base_url,
            &settings.file_base_url,
            &settings.token,
        );
        // The long poll's own limit is past the runner's watchdog, which is what trips.
        let poll_api = api.with_timeout(settings.poll_timeout + Duration::from_secs(30));
        Self {
            settings,
            api,
            poll_api,
            webhook: Mutex::new(None),
            me: std::sync::RwLock::default(),
        }
    }

    fn me(&self) -> addressing::Me {
        match self.me.read() {
            Ok(me) => me.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    fn chat_id(chat: &ChatRef) -> ChatId {
        match chat.chat_id.parse::<i64>() {
            Ok(id) => ChatId::Integer(id),
            Err(_) => ChatId::String(chat.chat_id.clone()),
        }
    }

    fn thread(chat: &ChatRef) -> Option<i32> {
        chat.thread_id.parse().ok()
    }

    fn keyboard(message: &Outgoing) -> Option<InlineKeyboardMarkup> {
        (!message.buttons.is_empty()).then(|| InlineKeyboardMarkup {
            inline_keyboard: vec![
                message
                    .buttons
                    .iter()
                    .map(|b| {
                        InlineKeyboardButton::builder()
                            .text(b.label.clone())
                            .callback_data(b.data.clone())
                            .build()
                    })
                    .collect(),
            ],
        })
    }

    async fn send_once(
        &self,
        chat: &ChatRef,
        message: &Outgoing,
        html: bool,
    ) -> Result<String, PlatformError> {
        let (text, parse_mode) = rendered(&message.markdown, html);
        let params = SendMessageParams {
            business_connection_id: None,
            chat_id: Self::chat_id(chat),
            message_thread_id: Self::thread(chat),
            direct_messages_topic_id: None,
            text,
            parse_mode,
            entities: None,
            link_preview_options: None,
            disable_notification: None,
            protect_content: None,
            allow_paid_broadcast: None,
            message_effect_id: None,
            suggested_post_parameters: None,
            reply_parameters: message
                .reply_to
                .as_deref()
                .and_then(|id| id.parse().ok())
                .map(|message_id| {
                    ReplyParameters::builder()
                        .message_id(message_id)
                        .allow_sending_without_reply(true)
                        .build()
                }),
            reply_markup: Self::keyboard(message).map(ReplyMarkup::InlineKeyboardMarkup),
        };
        let sent = self.api.send_message(&params).await?;
        Ok(sent.result.message_id.to_string())
    }

    async fn edit_once(
        &self,
        chat: &ChatRef,
        message_id: &str,
        message: &Outgoing,
        html: bool,
    ) -> Result<(), PlatformError> {
        let (text, parse_mode) = rendered(&message.markdown, html);
        let params = EditMessageTextParams {
            business_connection_id: None,
            chat_id: Some(Self::chat_id(chat)),
            message_id: message_id.parse().ok(),
            inline_message_id: None,
            text: Some(text),
            parse_mode,
            entities: None,
            link_preview_options: None,
            rich_message: None,
            reply_markup: Self::keyboard(message),
        };
        self.api.edit_message_text(&params).await.map(drop)
    }
}

/// The text to send for `markdown`: Telegram's HTML, or the plain text.
fn rendered(markdown: &str, html: bool) -> (String, Option<ParseMode>) {
    if html {
        (markup::to_telegram_html(markdown), Some(ParseMode::Html))
    } else {
        (markup::to_plain_text(markdown), None)
    }
}

#[async_trait::async_trait]
impl Adapter for Telegram {
    fn platform(&self) -> &'static str {
        "telegram"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            max_len: TELEGRAM_MAX,
            measure: split::Measure::Rendered,
            edits: true,
            buttons: true,
        }
    }

    fn identity(&self) -> &str {
        &self.settings.token
    }

    async fn connect(&self, commands: &[(String, String)]) -> Result<(), PlatformError> {
        let me = self.api.get_me().await?;
        tracing::info!(
            bot = me.result.username.as_deref().unwrap_or_default(),
            "telegram: the token is accepted"
        );
        let known = addressing::Me::new(me.result.id, me.result.username.as_deref());
        match self.me.write() {
            Ok(mut me) => *me = known,
            Err(poisoned) => *poisoned.into_inner() = known,
        }
        match &self.settings.webhook_url {
            Some(url) => {
                let mut receiver = self.webhook.lock().await;
                if receiver.is_none() {
                    *receiver = Some(
                        webhook::Receiver::start(
                            &self.settings.webhook_listen,
                            &self.settings.webhook_secret,
                        )
                        .await?,
                    );
                }
                let params = SetWebhookParams {
                    url: url.clone(),
                    certificate: None,
                    ip_address: None,
                    max_connections: None,
                    allowed_updates: Some(allowed_updates()),
                    drop_pending_updates: Some(false),
                    secret_token: Some(self.settings.webhook_secret.clone()),
                };
                self.api.set_webhook(&params).await?;
            }
            None => {
                let params = DeleteWebhookParams {
                    drop_pending_updates: Some(false),
                };
                self.api.delete_webhook(&params).await?;
            }
        }
        let params = SetMyCommandsParams {
            commands: commands
                .iter()
                .map(|(name, description)| BotCommand {
                    command: name.clone(),
                    description: description.clone(),
                })
                .collect(),
            scope: None,
            language_code: None,
        };
        if let Err(e) = self.api.set_my_commands(&params).await {
            // The menu is a convenience: a refusal does not stop the connection.
            tracing::warn!(error = %e, "telegram: the command menu was not set");
        }
        Ok(())
    }

    async fn next_batch(&self, offset: Option<i64>) -> Result<Batch, PlatformError> {
        if let Some(receiver) = self.webhook.lock().await.as_mut() {
            return receiver.next_batch(&self.me()).await;
        }
        let params = GetUpdatesParams {
            offset,
            limit: Some(BATCH),
            timeout: Some(self.settings.poll_timeout.as_secs() as u32),
            allowed_updates: Some(allowed_updates()),
        };
        let raw: MethodResponse<Vec<Value>> =
            self.poll_api.request("getUpdates", Some(params)).await?;
        let mut batch = Batch::default();
        let me = self.me();
        for update in raw.result {
            if let Some(id) = convert::update_id(&update) {
                batch.next_offset = Some(batch.next_offset.unwrap_or(id + 1).max(id + 1));
            }
            if let Some(inbound) = convert::inbound(update, &me) {
                batch.updates.push(inbound);
            }
        }
        Ok(batch)
    }

    fn poll_deadline(&self) -> Duration {
        if self.settings.webhook_url.is_some() {
            // Deliveries come when Telegram has something: no poll to watch.
            return Duration::from_secs(365 * 86_400);
        }
        self.settings.poll_timeout + Duration::from_secs(15)
    }

    async fn send(&self, chat: &ChatRef, message: &Outgoing) -> Result<String, PlatformError> {
        match self.send_once(chat, message, true).await {
            Err(PlatformError::BadMarkup(why)) => {
                tracing::debug!(%why, "telegram: the HTML was refused; sending plain text");
                self.send_once(chat, message, false).await
            }
            other => other,
        }
    }

    async fn edit(
        &self,
        chat: &ChatRef,
        message_id: &str,
        message: &Outgoing,
    ) -> Result<(), PlatformError> {
        let result = match self.edit_once(chat, message_id, message, true).await {
            Err(PlatformError::BadMarkup(_)) => {
                self.edit_once(chat, message_id, message, false).await
            }
            other => other,
        };
        match result {
            Err(PlatformError::NotModified) => Ok(()),
            other => other,
        }
    }

    async fn typing(&self, chat: &ChatRef) -> Result<(), PlatformError> {
        let params = SendChatActionParams {
            business_connection_id: None,
            chat_id: Self::chat_id(chat),
            message_thread_id: Self::thread(chat),
            action: ChatAction::Typing,
        };
        self.api.send_chat_action(&params).await.map(drop)
    }

    async fn answer_press(&self, press_id: &str, note: &str) -> Result<(), PlatformError> {
        let params = AnswerCallbackQueryParams {
            callback_query_id: press_id.to_string(),
            text: (!note.is_empty()).then(|| note.to_string()),
            show_alert: None,
            url: None,
            cache_time: None,
        };
        self.api.answer_callback_query(&params).await.map(drop)
    }

    async fn send_file(
        &self,
        chat: &ChatRef,
        path: &std::path::Path,
        as_voice: bool,
    ) -> Result<String, PlatformError> {
        let file_name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("audio")
            .to_string();
        let ext = file_name
            .rsplit('.')
            .next()
            .unwrap_or_default()
            .to_lowercase();
        let (method, field) = match ext.as_str() {
            "ogg" | "opus" | "oga" if as_voice => ("sendVoice", "voice"),
            "mp3" | "m4a" => ("sendAudio", "audio"),
            _ => ("sendDocument", "document"),
        };
        let bytes = read_upload(path).await?;
        let mut fields = vec![("chat_id", chat.chat_id.clone())];
        if let Some(thread) = Self::thread(chat) {
            fields.push(("message_thread_id", thread.to_string()));
        }
        self.api
            .upload(method, &fields, field, &file_name, &bytes)
            .await
    }

    async fn fetch_file(
        &self,
        attachment: &Attachment,
        max_bytes: u64,
    ) -> Result<Vec<u8>, PlatformError> {
        if attachment.size > max_bytes {
            return Err(PlatformError::Rejected(format!(
                "the {} is {} bytes; the limit is {max_bytes}",
                attachment.kind, attachment.size
            )));
        }
        let params = GetFileParams {
            file_id: attachment.file_id.clone(),
        };
        let file = self.api.get_file(&params).await?;
        let path = file
            .result
            .file_path
            .ok_or_else(|| PlatformError::Rejected("Telegram gave no path for the file".into()))?;
        self.api.download(&path, max_bytes).await
    }
}

/// Telegram's largest upload from a bot.
const MAX_UPLOAD_BYTES: u64 = 50 * 1024 * 1024;

/// The bytes of a file to upload: a plain file of at most [`MAX_UPLOAD_BYTES`].
async fn read_upload(path: &std::path::Path) -> Result<Vec<u8>, PlatformError> {
    let meta = tokio::fs::symlink_metadata(path)
        .await
        .map_err(|e| PlatformError::Rejected(format!("cannot read {}: {e}", path.display())))?;
    if !meta.is_file() {
        return Err(PlatformError::Rejected(format!(
            "{} is not a plain file",
            path.display()
        )));
    }
    if meta.len() > MAX_UPLOAD_BYTES {
        return Err(PlatformError::Rejected(format!(
            "{} is {} bytes; Telegram takes at most {MAX_UPLOAD_BYTES}",
            path.display(),
            meta.len()
        )));
    }
    tokio::fs::read(path)
        .await
        .map_err(|e| PlatformError::Rejected(format!("cannot read {}: {e}", path.display())))
}

fn allowed_updates() -> Vec<AllowedUpdate> {
    vec![
        AllowedUpdate::Message,
        AllowedUpdate::EditedMessage,
        AllowedUpdate::CallbackQuery,
    ]
}
