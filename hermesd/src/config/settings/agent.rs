//! `agent.*`: the iteration budget of a turn, the loop guard, the configured system message and
//! when the tool-use enforcement block is added to the system prompt.

use std::fmt;

use serde_yaml::Value;

use super::read::{Reader, Verdict};

/// The `agent` keys a turn reads (the review budget and disabled toolsets are in
/// [`super::ReviewSection`] and [`super::ToolsetSelection`]).
#[derive(Debug, Clone, PartialEq)]
pub struct AgentSection {
    /// `agent.max_turns`: model calls per turn (Hermes' iteration budget), 1 to 10,000.
    pub max_turns: u32,
    /// `agent.loop_guard`: identical consecutive calls before a warning (stop at twice as many);
    /// at most 1,000, 0 turns it off.
    pub loop_guard: u32,
    /// `agent.system_prompt`, when not empty.
    pub system_prompt: Option<String>,
    /// `agent.tool_use_enforcement`.
    pub tool_use_enforcement: Enforcement,
    /// `agent.image_input_mode`: how images the user attaches reach the main model.
    pub image_input_mode: ImageInputMode,
    /// `agent.reasoning_effort`: `none`, `minimal` … `ultra`; `None` is the provider's default.
    pub reasoning_effort: Option<String>,
}

/// Hermes' effort words (`false` and `disabled` mean `none`).
const EFFORTS: [&str; 8] = [
    "none", "minimal", "low", "medium", "high", "xhigh", "max", "ultra",
];

fn read_effort(r: &mut Reader<'_>) -> Option<String> {
    r.value(
        "agent.reasoning_effort",
        None,
        &"the provider's default",
        |value| {
            let word = match value {
                Value::Bool(false) => "none".to_string(),
                Value::String(s) => s.trim().to_ascii_lowercase(),
                _ => return Verdict::Bad(format!("is not one of {}", EFFORTS.join(", "))),
            };
            match word.as_str() {
                "" => Verdict::Use(None),
                "false" | "disabled" => Verdict::Use(Some("none".into())),
                w if EFFORTS.contains(&w) => Verdict::Use(Some(word)),
                _ => Verdict::Bad(format!("is not one of {}", EFFORTS.join(", "))),
            }
        },
    )
}

impl Default for AgentSection {
    fn default() -> Self {
        Self {
            max_turns: 90,
            loop_guard: 3,
            system_prompt: None,
            tool_use_enforcement: Enforcement::Auto,
            image_input_mode: ImageInputMode::Auto,
            reasoning_effort: None,
        }
    }
}

impl AgentSection {
    pub fn read(r: &mut Reader<'_>) -> Self {
        let d = Self::default();
        Self {
            max_turns: r.whole("agent.max_turns", d.max_turns.into(), 1, 10_000) as u32,
            loop_guard: r.whole("agent.loop_guard", d.loop_guard.into(), 0, 1_000) as u32,
            system_prompt: Some(r.text("agent.system_prompt")).filter(|s| !s.is_empty()),
            tool_use_enforcement: r.value(
                "agent.tool_use_enforcement",
                Enforcement::Auto,
                &Enforcement::Auto,
                Enforcement::parse,
            ),
            image_input_mode: r.word(
                "agent.image_input_mode",
                d.image_input_mode,
                &[
                    ("auto", ImageInputMode::Auto),
                    ("native", ImageInputMode::Native),
                    ("text", ImageInputMode::Text),
                ],
            ),
            reasoning_effort: read_effort(r),
        }
    }
}

/// How images the user attaches reach the main model (Hermes' `agent.image_input_mode`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ImageInputMode {
    /// As image content when the model takes images (`model.supports_vision`, else what the
    /// endpoint says, else the shipped table), else as a path for `vision_analyze`.
    #[default]
    Auto,
    /// Always as image content.
    Native,
    /// Always as a path for `vision_analyze`, the model never sees the pixels.
    Text,
}

impl ImageInputMode {
    /// Whether images go to the main model as image content, given whether it takes them.
    pub fn native(self, model_sees: bool) -> bool {
        match self {
            Self::Auto => model_sees,
            Self::Native => true,
            Self::Text => false,
        }
    }
}

impl fmt::Display for ImageInputMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Auto => "auto",
            Self::Native => "native",
            Self::Text => "text",
        })
    }
}

/// When the tool-use enforcement block is added to the system prompt.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Enforcement {
    /// For the model families that need it (gpt, codex, gemini, gemma, grok).
    #[default]
    Auto,
    Always,
    Never,
    /// For models whose name contains one of these (lowercase).
    Models(Vec<String>),
}

impl Enforcement {
    fn parse(value: &Value) -> Verdict<Self> {
        const WHY: &str = "is not auto, true, false or a list of model names";
        match value {
            Value::Bool(true) => Verdict::Use(Self::Always),
            Value::Bool(false) => Verdict::Use(Self::Never),
            Value::Sequence(items) => {
                let names: Vec<String> = items
                    .iter()
                    .filter_map(|i| i.as_str().map(str::to_lowercase))
                    .collect();
                let complete = names.len() == items.len();
                let models = Self::Models(names);
                if complete {
                    Verdict::Use(models)
                } else {
                    let why = format!("has items that are not model names; using {models}");
                    Verdict::Clamp(models, why)
                }
            }
            Value::String(s) => match s.trim().to_lowercase().as_str() {
                "true" | "always" | "on" => Verdict::Use(Self::Always),
                "false" | "never" | "off" => Verdict::Use(Self::Never),
                "auto" | "" => Verdict::Use(Self::Auto),
                _ => Verdict::Bad(WHY.into()),
            },
            _ => Verdict::Bad(WHY.into()),
        }
    }

    /// Whether the block is added for `model` (`provider:model`).
    pub fn applies(&self, model: &str) -> bool {
        let model = model.to_lowercase();
        match self {
            Self::Always => true,
            Self::Never => false,
            Self::Auto => ["gpt", "codex", "gemini", "gemma", "grok"]
                .iter()
                .any(|m| model.contains(m)),
            Self::Models(list) => list.iter().any(|m| model.contains(m.as_str())),
        }
    }
}

impl fmt::Display for Enforcement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Auto => f.write_str("auto"),
            Self::Always => f.write_str("true"),
            Self::Never => f.write_str("false"),
            Self::Models(list) => write!(f, "[{}]", list.join(", ")),
        }
    }
}
