//! The `tts` section (Hermes' keys) and `voice.auto_tts`: which provider speaks
//! (`tts.provider`, default `edge`), OpenAI's model, voice, speed and address (`tts.openai.*`,
//! `tts.speed`, `VOICE_TOOLS_OPENAI_KEY` / `OPENAI_API_KEY`), the `tts.providers.<name>` commands,
//! and each provider's text cap (`tts.<provider>.max_text_length`, else Hermes' per-provider
//! limits). hermesd speaks `openai` (any OpenAI-compatible `/audio/speech`) and commands; the
//! other Hermes providers are named in the error when chosen. hermesd adds `tts.timeout`, the
//! limit of one request to a speech endpoint.

use std::time::Duration;

use hermes_proto::env::Env;

use super::{
    read::Reader,
    voice_command::{CommandProvider, read_commands},
};

/// Hermes' built-in TTS provider names.
pub const BUILTIN_TTS: &[&str] = &[
    "edge",
    "elevenlabs",
    "openai",
    "minimax",
    "xai",
    "mistral",
    "gemini",
    "neutts",
    "kittentts",
    "piper",
    "deepinfra",
];
const COMMAND_FORMATS: &[&str] = &["mp3", "wav", "ogg", "flac"];
/// Hermes' cap when a provider is not known, and a command provider's.
pub const FALLBACK_MAX_TEXT_LENGTH: usize = 4000;
pub const COMMAND_MAX_TEXT_LENGTH: usize = 5000;

/// The provider that speaks.
#[derive(Debug, Clone, PartialEq)]
pub enum TtsProvider {
    /// An OpenAI-compatible `/audio/speech` endpoint.
    OpenAi {
        base_url: String,
        api_key: String,
        model: String,
        voice: String,
        speed: f64,
    },
    Command(CommandProvider),
}

#[derive(Debug, Clone, PartialEq)]
pub struct TtsSection {
    /// `tts.provider`, lower-cased (default `edge`).
    pub provider: String,
    pub openai_model: String,
    pub openai_voice: String,
    pub openai_base_url: String,
    pub openai_api_key: String,
    pub openai_speed: f64,
    /// `tts.<provider>.max_text_length` of the chosen provider, when positive.
    pub max_text_length: Option<usize>,
    pub commands: Vec<CommandProvider>,
    /// `voice.auto_tts`: chats without a `/voice` choice get spoken replies to voice messages.
    pub auto_tts: bool,
    /// `tts.timeout`: one request to a speech endpoint (default 60 s).
    pub timeout: Duration,
}

impl Default for TtsSection {
    fn default() -> Self {
        Self::read(&mut Reader::new(&serde_yaml::Value::Null), &Env::default())
    }
}

impl TtsSection {
    pub fn read(r: &mut Reader<'_>, env: &Env) -> Self {
        let var = |name: &str| env.get(name).map(str::trim).unwrap_or_default().to_string();
        let provider = match r.text("tts.provider").to_lowercase() {
            p if p.is_empty() => "edge".to_string(),
            p => p,
        };
        let text_or = |r: &mut Reader<'_>, key: &str, default: &str| match r.text(key) {
            v if v.is_empty() => default.to_string(),
            v => v,
        };
        let speed = r.seconds("tts.speed", 1.0);
        let max_key = format!("tts.{provider}.max_text_length");
        let max_text_length = r
            .whole_opt(&max_key, "the provider's limit")
            .filter(|n| *n > 0)
            .map(|n| n as usize);
        let key = match var("VOICE_TOOLS_OPENAI_KEY") {
            k if k.is_empty() => var("OPENAI_API_KEY"),
            k => k,
        };
        Self {
            openai_model: text_or(r, "tts.openai.model", "gpt-4o-mini-tts"),
            openai_voice: text_or(r, "tts.openai.voice", "alloy"),
            openai_base_url: text_or(r, "tts.openai.base_url", "https://api.openai.com/v1")
                .trim_end_matches('/')
                .to_string(),
            openai_api_key: key,
            openai_speed: r.seconds("tts.openai.speed", speed),
            max_text_length,
            commands: read_commands(r, "tts", BUILTIN_TTS, 120.0, COMMAND_FORMATS, "mp3"),
            auto_tts: r.flag("voice.auto_tts", false),
            timeout: Duration::from_secs_f64(r.seconds("tts.timeout", 60.0).max(0.1)),
            provider,
        }
    }

    /// The provider that speaks; `Err` says what to set.
    pub fn resolve(&self) -> Result<TtsProvider, String> {
        if !BUILTIN_TTS.contains(&self.provider.as_str())
            && let Some(command) = self.commands.iter().find(|c| c.name == self.provider)
        {
            return Ok(TtsProvider::Command(command.clone()));
        }
        match self.provider.as_str() {
            "openai" if self.openai_api_key.is_empty() => Err(
                "tts.provider is openai but neither VOICE_TOOLS_OPENAI_KEY nor \
                     OPENAI_API_KEY is set"
                    .into(),
            ),
            "openai" => Ok(TtsProvider::OpenAi {
                base_url: self.openai_base_url.clone(),
                api_key: self.openai_api_key.clone(),
                model: self.openai_model.clone(),
                voice: self.openai_voice.clone(),
                speed: self.openai_speed,
            }),
            name => Err(format!(
                "tts.provider is {name:?}, which hermesd does not speak with; set tts.provider \
                 to openai (any OpenAI-compatible /audio/speech endpoint) or to the name of a \
                 tts.providers.<name> entry of type command (espeak-ng, piper, …)"
            )),
        }
    }

    /// The input-character cap of the chosen provider (Hermes' table and overrides).
    pub fn max_text_length(&self) -> usize {
        if let Some(n) = self.max_text_length {
            return n;
        }
        let table = match self.provider.as_str() {
            "edge" | "piper" => Some(5000),
            "openai" => Some(4096),
            "xai" => Some(15000),
            "minimax" | "elevenlabs" => Some(10000),
            "mistral" => Some(4000),
            "gemini" => Some(32000),
            "neutts" | "kittentts" => Some(2000),
            _ => None,
        };
        if let Some(n) = table {
            return n;
        }
        match self.commands.iter().find(|c| c.name == self.provider) {
            Some(c) => c.max_text_length.unwrap_or(COMMAND_MAX_TEXT_LENGTH),
            None => FALLBACK_MAX_TEXT_LENGTH,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(yaml: &str, env: &[(&str, &str)]) -> TtsSection {
        let tree: serde_yaml::Value = serde_yaml::from_str(yaml).unwrap();
        TtsSection::read(
            &mut Reader::new(&tree),
            &Env::from_pairs(env.iter().copied()),
        )
    }

    #[test]
    fn providers_and_caps_are_hermes() {
        let default = read("{}", &[("OPENAI_API_KEY", "k")]);
        assert_eq!(default.provider, "edge");
        assert!(
            default
                .resolve()
                .unwrap_err()
                .contains("tts.provider is \"edge\"")
        );
        let openai = read("tts: {provider: openai}", &[("OPENAI_API_KEY", "k")]);
        assert!(matches!(openai.resolve(), Ok(TtsProvider::OpenAi { .. })));
        assert_eq!(openai.max_text_length(), 4096);
        let keyless = read("tts: {provider: openai}", &[]);
        assert!(keyless.resolve().unwrap_err().contains("OPENAI_API_KEY"));
        let espeak = read(
            "tts: {provider: espeak, providers: {espeak: {type: command, command: 'espeak-ng -w {output_path} -f {input_path}', output_format: wav, voice_compatible: true}}}",
            &[],
        );
        match espeak.resolve() {
            Ok(TtsProvider::Command(c)) => {
                assert_eq!(c.format, "wav");
                assert!(c.voice_compatible);
                assert_eq!(c.timeout, Duration::from_secs(120));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(espeak.max_text_length(), 5000);
        let capped = read(
            "tts: {provider: espeak, espeak: {max_text_length: 12}, providers: {espeak: {command: x}}}",
            &[],
        );
        assert_eq!(capped.max_text_length(), 12);
        // A built-in name under providers never shadows the built-in.
        let shadow = read(
            "tts: {provider: openai, providers: {openai: {command: x}}}",
            &[],
        );
        assert!(shadow.resolve().is_err());
    }
}
