//! The auxiliary vision model behind `vision_analyze` (`auxiliary.vision.*`, Hermes' keys): one
//! request of the question and the image, no tools, within `auxiliary.vision.timeout`. The main
//! chain follows it as fallback only when the main model takes images.

use std::{
    sync::{Arc, Weak},
    time::Duration,
};

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use super::{TurnRunner, auxiliary};
use crate::{
    config::settings::AuxiliaryTask,
    llm::{ChatMessage, ChatRequest, Image},
    tools::VisionHandle,
};

/// Hermes' limit on a vision answer.
const MAX_ANSWER_TOKENS: u32 = 2000;

/// The vision model of this daemon.
pub struct VisionModel {
    runner: Weak<TurnRunner>,
}

impl VisionModel {
    pub fn new(runner: &Arc<TurnRunner>) -> Self {
        Self {
            runner: Arc::downgrade(runner),
        }
    }
}

#[async_trait]
impl VisionHandle for VisionModel {
    async fn analyze(
        &self,
        image: Image,
        prompt: &str,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, String> {
        let Some(state) = self.runner.upgrade() else {
            return Err("the daemon is stopping".into());
        };
        if state
            .config()
            .settings
            .auxiliary
            .vision
            .endpoint
            .model
            .is_empty()
        {
            return Ok(None);
        }
        let request = ChatRequest {
            system: String::new(),
            messages: vec![ChatMessage {
                images: vec![image],
                ..ChatMessage::user(prompt)
            }],
            tools: Vec::new(),
            max_tokens: Some(MAX_ANSWER_TOKENS),
            reasoning_effort: None,
            cache_ttl: None,
        };
        auxiliary::complete(&state, AuxiliaryTask::Vision, &request, cancel)
            .await
            .map(Some)
            .map_err(|e| format!("the vision model gave no answer: {e}"))
    }

    fn download_timeout(&self) -> Duration {
        self.runner
            .upgrade()
            .map_or(Duration::from_secs(30), |state| {
                state.config().settings.auxiliary.vision.download_timeout
            })
    }
}
