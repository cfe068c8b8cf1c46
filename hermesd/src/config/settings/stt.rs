//! The `stt` section (Hermes' keys): whether voice messages are transcribed (`stt.enabled`) and
//! their transcripts echoed (`stt.echo_transcripts`, or the top-level `stt_echo_transcripts`),
//! which provider transcribes (`stt.provider`: `openai`, `groq`, `local` through
//! `HERMES_LOCAL_STT_COMMAND`, or a `stt.providers.<name>` command), and each provider's model,
//! key and address (`stt.openai.*`, `VOICE_TOOLS_OPENAI_KEY`, `OPENAI_API_KEY`,
//! `STT_OPENAI_BASE_URL`, `GROQ_API_KEY`, `GROQ_BASE_URL`, `STT_*_MODEL`). hermesd adds
//! `stt.timeout`, the limit of one request to a transcription endpoint.

use std::time::Duration;

use hermes_proto::env::Env;

use super::{
    read::Reader,
    voice_command::{CommandProvider, read_commands},
};

/// Hermes' built-in STT provider names (a `stt.providers.<name>` of these is ignored).
pub const BUILTIN_STT: &[&str] = &[
    "local",
    "local_command",
    "groq",
    "openai",
    "mistral",
    "xai",
    "elevenlabs",
    "deepinfra",
];
/// Output formats a command provider may write.
const COMMAND_FORMATS: &[&str] = &["txt", "json", "srt", "vtt"];

/// Which provider transcribes, resolved as Hermes resolves it.
#[derive(Debug, Clone, PartialEq)]
pub enum SttProvider {
    /// An OpenAI-compatible `/audio/transcriptions` endpoint (OpenAI, Groq, a local server).
    Endpoint {
        name: &'static str,
        base_url: String,
        api_key: String,
        model: String,
    },
    /// `HERMES_LOCAL_STT_COMMAND` (Hermes' `local_command`).
    LocalCommand { template: String, model: String },
    /// A `stt.providers.<name>` command.
    Command(CommandProvider),
}

#[derive(Debug, Clone, PartialEq)]
pub struct SttSection {
    pub enabled: bool,
    pub echo_transcripts: bool,
    /// `stt.provider` lower-cased; empty when the configuration does not name one.
    pub provider: String,
    pub openai_model: String,
    pub openai_api_key: String,
    pub openai_base_url: String,
    pub groq_model: String,
    pub groq_api_key: String,
    pub groq_base_url: String,
    /// `HERMES_LOCAL_STT_COMMAND`.
    pub local_command: String,
    /// `stt.local.model`.
    pub local_model: String,
    /// `stt.local.language`, else `HERMES_LOCAL_STT_LANGUAGE`, else `en`.
    pub local_language: String,
    pub commands: Vec<CommandProvider>,
    /// `stt.timeout`: one request to an endpoint (default 30 s, Hermes' client timeout).
    pub timeout: Duration,
}

impl Default for SttSection {
    fn default() -> Self {
        Self::read(&mut Reader::new(&serde_yaml::Value::Null), &Env::default())
    }
}

impl SttSection {
    pub fn read(r: &mut Reader<'_>, env: &Env) -> Self {
        let var = |name: &str| env.get(name).map(str::trim).unwrap_or_default().to_string();
        let or = |value: String, default: &str| {
            if value.is_empty() {
                default.to_string()
            } else {
                value
            }
        };
        let echo_default = r.flag("stt_echo_transcripts", true);
        let openai_key = or(
            r.secret("stt.openai.api_key"),
            &or(var("VOICE_TOOLS_OPENAI_KEY"), &var("OPENAI_API_KEY")),
        );
        let openai_base = or(
            r.text("stt.openai.base_url"),
            &or(var("STT_OPENAI_BASE_URL"), "https://api.openai.com/v1"),
        );
        let local_language = or(
            r.text("stt.local.language"),
            &or(var("HERMES_LOCAL_STT_LANGUAGE"), "en"),
        );
        Self {
            enabled: r.flag("stt.enabled", true),
            echo_transcripts: r.flag("stt.echo_transcripts", echo_default),
            provider: r.text("stt.provider").to_lowercase(),
            openai_model: or(
                r.text("stt.openai.model"),
                &or(var("STT_OPENAI_MODEL"), "whisper-1"),
            ),
            openai_api_key: openai_key,
            openai_base_url: openai_base.trim_end_matches('/').to_string(),
            groq_model: or(
                r.text("stt.groq.model"),
                &or(var("STT_GROQ_MODEL"), "whisper-large-v3-turbo"),
            ),
            groq_api_key: var("GROQ_API_KEY"),
            groq_base_url: or(var("GROQ_BASE_URL"), "https://api.groq.com/openai/v1")
                .trim_end_matches('/')
                .to_string(),
            local_command: var("HERMES_LOCAL_STT_COMMAND"),
            local_model: or(r.text("stt.local.model"), "base"),
            local_language,
            commands: read_commands(r, "stt", BUILTIN_STT, 300.0, COMMAND_FORMATS, "txt"),
            timeout: Duration::from_secs_f64(r.seconds("stt.timeout", 30.0).max(0.1)),
        }
    }

    fn openai(&self) -> SttProvider {
        SttProvider::Endpoint {
            name: "openai",
            base_url: self.openai_base_url.clone(),
            api_key: self.openai_api_key.clone(),
            model: self.openai_model.clone(),
        }
    }

    fn groq(&self) -> SttProvider {
        SttProvider::Endpoint {
            name: "groq",
            base_url: self.groq_base_url.clone(),
            api_key: self.groq_api_key.clone(),
            model: self.groq_model.clone(),
        }
    }

    fn local(&self) -> SttProvider {
        SttProvider::LocalCommand {
            template: self.local_command.clone(),
            model: self.local_model.clone(),
        }
    }

    /// The provider that transcribes, as Hermes picks it: the one `stt.provider` names (its
    /// key checked), else the first usable of the local command, Groq and OpenAI. `Err` says
    /// what to set.
    pub fn resolve(&self) -> Result<SttProvider, String> {
        if !self.enabled {
            return Err("STT is disabled in config.yaml (stt.enabled: false).".into());
        }
        match self.provider.as_str() {
            "" => {}
            "local" | "local_command" if !self.local_command.is_empty() => return Ok(self.local()),
            "local" | "local_command" => {
                return Err(format!(
                    "stt.provider is {:?}, which in hermesd runs HERMES_LOCAL_STT_COMMAND (there \
                     is no built-in faster-whisper); set HERMES_LOCAL_STT_COMMAND, or set \
                     stt.provider to openai, groq or a stt.providers.<name> command",
                    self.provider
                ));
            }
            "groq" if self.groq_api_key.is_empty() => {
                return Err("stt.provider is groq but GROQ_API_KEY is not set".into());
            }
            "groq" => return Ok(self.groq()),
            "openai" if self.openai_api_key.is_empty() => {
                return Err(
                    "stt.provider is openai but neither stt.openai.api_key in config \
                            nor VOICE_TOOLS_OPENAI_KEY/OPENAI_API_KEY is set"
                        .into(),
                );
            }
            "openai" => return Ok(self.openai()),
            name => {
                if let Some(command) = self.commands.iter().find(|c| c.name == name) {
                    return Ok(SttProvider::Command(command.clone()));
                }
                return Err(format!(
                    "stt.provider is {name:?}, which hermesd cannot transcribe with; set it to \
                     openai, groq, local (with HERMES_LOCAL_STT_COMMAND) or the name of a \
                     stt.providers.<name> entry of type command"
                ));
            }
        }
        if !self.local_command.is_empty() {
            Ok(self.local())
        } else if !self.groq_api_key.is_empty() {
            Ok(self.groq())
        } else if !self.openai_api_key.is_empty() {
            Ok(self.openai())
        } else {
            Err(
                "No STT provider available: set stt.provider (openai, groq, or a \
                 stt.providers.<name> command), HERMES_LOCAL_STT_COMMAND, GROQ_API_KEY, or \
                 VOICE_TOOLS_OPENAI_KEY / OPENAI_API_KEY"
                    .into(),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(yaml: &str, env: &[(&str, &str)]) -> SttSection {
        let tree: serde_yaml::Value = serde_yaml::from_str(yaml).unwrap();
        SttSection::read(
            &mut Reader::new(&tree),
            &Env::from_pairs(env.iter().copied()),
        )
    }

    #[test]
    fn providers_resolve_as_hermes_resolves_them() {
        assert!(
            read("{}", &[])
                .resolve()
                .unwrap_err()
                .contains("No STT provider")
        );
        let auto = read("{}", &[("GROQ_API_KEY", "g"), ("OPENAI_API_KEY", "o")]);
        assert!(matches!(
            auto.resolve(),
            Ok(SttProvider::Endpoint { name: "groq", .. })
        ));
        let missing = read("stt: {provider: openai}", &[("GROQ_API_KEY", "g")]);
        assert!(missing.resolve().unwrap_err().contains("OPENAI_API_KEY"));
        let voice_key = read(
            "stt: {provider: openai, openai: {base_url: 'http://127.0.0.1:9/v1/'}}",
            &[("VOICE_TOOLS_OPENAI_KEY", "v"), ("OPENAI_API_KEY", "o")],
        );
        assert_eq!(
            voice_key.resolve(),
            Ok(SttProvider::Endpoint {
                name: "openai",
                base_url: "http://127.0.0.1:9/v1".into(),
                api_key: "v".into(),
                model: "whisper-1".into(),
            })
        );
        let command = read(
            "stt: {provider: mine, providers: {mine: {type: command, command: 'w {input_path}', timeout: 5}}}",
            &[],
        );
        match command.resolve() {
            Ok(SttProvider::Command(c)) => {
                assert_eq!(
                    (c.format.as_str(), c.timeout),
                    ("txt", Duration::from_secs(5))
                );
            }
            other => panic!("{other:?}"),
        }
        let off = read("stt: {enabled: false}", &[("OPENAI_API_KEY", "o")]);
        assert!(off.resolve().unwrap_err().contains("stt.enabled"));
        assert!(!read("stt_echo_transcripts: false", &[]).echo_transcripts);
    }
}
