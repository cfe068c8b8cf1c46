//! The chat platforms the gateway can run, as adapters built from their settings: the one place
//! that names each platform's adapter type. Everything else in the gateway sees only
//! [`Adapter`]s and their capabilities.

use std::sync::Arc;

use super::{Adapter, discord, slack, telegram};
use crate::{config::settings::GatewaySection, llm::HttpClient};

/// The adapter of `platform` when its settings say it runs.
pub fn adapter(
    platform: &str,
    settings: &GatewaySection,
    client: &HttpClient,
) -> Option<Arc<dyn Adapter>> {
    let client = client.clone();
    match platform {
        "telegram" => settings
            .telegram
            .clone()
            .map(|s| Arc::new(telegram::Telegram::new(s, client)) as Arc<dyn Adapter>),
        "discord" => settings.discord.clone().map(|s| {
            let free = settings.rules("discord").groups.free_response_chats.clone();
            Arc::new(discord::Discord::new(s, client).with_free_response(free)) as Arc<dyn Adapter>
        }),
        "slack" => settings
            .slack
            .clone()
            .map(|s| Arc::new(slack::Slack::new(s, client)) as Arc<dyn Adapter>),
        _ => None,
    }
}
