//! The providers a Hermes user picks by name, from one table: each one's names, base URL (and the
//! variable that overrides it), key variables, wire format, and whether it runs on the user's
//! machine. Python Hermes 0.19's provider registry is the source of the names and variables.

use hermes_proto::env::Env;

use super::settings::ApiMode;

/// How a provider is signed in to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Login {
    /// A key from one of `key_envs` or the credential pool.
    ApiKey,
    /// An OAuth login (`hermesctl login <name>`), kept in the credential pool.
    OAuth,
    /// Nothing: a server on the user's machine.
    None,
}

/// One named provider.
#[derive(Debug)]
pub struct Known {
    pub name: &'static str,
    /// Other names Hermes accepts for it.
    pub aliases: &'static [&'static str],
    pub base_url: &'static str,
    /// The variable that replaces `base_url` when set (`OPENROUTER_BASE_URL`, …).
    pub base_url_env: Option<&'static str>,
    /// Where its key is read from, in order.
    pub key_envs: &'static [&'static str],
    pub mode: ApiMode,
    pub login: Login,
    /// A bare JSON object that is the whole reply counts as a tool call (local models).
    pub text_tool_calls: bool,
    /// Guessed from its key when `model.provider` is `auto` (in table order).
    pub guessed: bool,
}

const fn hosted(
    name: &'static str,
    aliases: &'static [&'static str],
    base_url: &'static str,
    base_url_env: Option<&'static str>,
    key_envs: &'static [&'static str],
    mode: ApiMode,
) -> Known {
    Known {
        name,
        aliases,
        base_url,
        base_url_env,
        key_envs,
        mode,
        login: Login::ApiKey,
        text_tool_calls: false,
        guessed: false,
    }
}

const fn guessed(known: Known) -> Known {
    Known {
        guessed: true,
        ..known
    }
}

const fn oauth(known: Known) -> Known {
    Known {
        login: Login::OAuth,
        ..known
    }
}

const fn local(
    name: &'static str,
    aliases: &'static [&'static str],
    port_url: &'static str,
    key: &'static [&'static str],
    base_url_env: Option<&'static str>,
) -> Known {
    Known {
        name,
        aliases,
        base_url: port_url,
        base_url_env,
        key_envs: key,
        mode: ApiMode::ChatCompletions,
        login: Login::None,
        text_tool_calls: true,
        guessed: false,
    }
}

use ApiMode::{
    AnthropicMessages as Anthropic, ChatCompletions as Chat, CodexResponses as Responses,
};

/// Every named provider. The first five are guessed from their keys, in this order.
pub const KNOWN: &[Known] = &[
    guessed(hosted(
        "openrouter",
        &["or", "open-router"],
        "https://openrouter.ai/api/v1",
        Some("OPENROUTER_BASE_URL"),
        &["OPENROUTER_API_KEY"],
        Chat,
    )),
    guessed(hosted(
        "anthropic",
        &["claude", "claude-code", "claude-oauth"],
        "https://api.anthropic.com",
        Some("ANTHROPIC_BASE_URL"),
        &[
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_TOKEN",
            "CLAUDE_CODE_OAUTH_TOKEN",
        ],
        Anthropic,
    )),
    guessed(hosted(
        "openai",
        &["openai-api"],
        "https://api.openai.com/v1",
        Some("OPENAI_BASE_URL"),
        &["OPENAI_API_KEY"],
        Chat,
    )),
    guessed(oauth(hosted(
        "nous",
        &["nous-portal", "nousresearch"],
        "https://inference-api.nousresearch.com/v1",
        Some("NOUS_INFERENCE_BASE_URL"),
        &["NOUS_API_KEY"],
        Chat,
    ))),
    guessed(hosted(
        "deepseek",
        &["deepseek-chat"],
        "https://api.deepseek.com/v1",
        Some("DEEPSEEK_BASE_URL"),
        &["DEEPSEEK_API_KEY"],
        Chat,
    )),
    oauth(hosted(
        "openai-codex",
        &["codex", "openai_codex"],
        "https://chatgpt.com/backend-api/codex",
        Some("HERMES_CODEX_BASE_URL"),
        &[],
        Responses,
    )),
    hosted(
        "gemini",
        &["google", "google-gemini", "google-ai-studio"],
        "https://generativelanguage.googleapis.com/v1beta/openai",
        Some("GEMINI_BASE_URL"),
        &["GOOGLE_API_KEY", "GEMINI_API_KEY"],
        Chat,
    ),
    hosted(
        "xai",
        &["grok", "x-ai", "x.ai"],
        "https://api.x.ai/v1",
        Some("XAI_BASE_URL"),
        &["XAI_API_KEY"],
        Chat,
    ),
    hosted(
        "groq",
        &[],
        "https://api.groq.com/openai/v1",
        Some("GROQ_BASE_URL"),
        &["GROQ_API_KEY"],
        Chat,
    ),
    hosted(
        "mistral",
        &["mistralai"],
        "https://api.mistral.ai/v1",
        Some("MISTRAL_BASE_URL"),
        &["MISTRAL_API_KEY"],
        Chat,
    ),
    hosted(
        "together",
        &["together-ai", "togetherai"],
        "https://api.together.xyz/v1",
        Some("TOGETHER_BASE_URL"),
        &["TOGETHER_API_KEY"],
        Chat,
    ),
    hosted(
        "fireworks",
        &["fireworks-ai", "fw"],
        "https://api.fireworks.ai/inference/v1",
        None,
        &["FIREWORKS_API_KEY"],
        Chat,
    ),
    hosted(
        "zai",
        &["glm", "z-ai", "z.ai", "zhipu"],
        "https://api.z.ai/api/paas/v4",
        Some("GLM_BASE_URL"),
        &["GLM_API_KEY", "ZAI_API_KEY", "Z_AI_API_KEY"],
        Chat,
    ),
    hosted(
        "kimi-coding",
        &["kimi", "moonshot", "kimi-for-coding"],
        "https://api.moonshot.ai/v1",
        Some("KIMI_BASE_URL"),
        &["KIMI_API_KEY", "KIMI_CODING_API_KEY"],
        Chat,
    ),
    hosted(
        "minimax",
        &["mini-max"],
        "https://api.minimax.io/anthropic",
        Some("MINIMAX_BASE_URL"),
        &["MINIMAX_API_KEY"],
        Anthropic,
    ),
    hosted(
        "alibaba",
        &["dashscope", "alibaba-cloud", "qwen-dashscope"],
        "https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
        Some("DASHSCOPE_BASE_URL"),
        &["DASHSCOPE_API_KEY"],
        Chat,
    ),
    hosted(
        "huggingface",
        &["hf", "hugging-face", "huggingface-hub"],
        "https://router.huggingface.co/v1",
        Some("HF_BASE_URL"),
        &["HF_TOKEN"],
        Chat,
    ),
    hosted(
        "nvidia",
        &["nvidia-nim"],
        "https://integrate.api.nvidia.com/v1",
        Some("NVIDIA_BASE_URL"),
        &["NVIDIA_API_KEY"],
        Chat,
    ),
    hosted(
        "deepinfra",
        &["deep-infra", "deepinfra-ai"],
        "https://api.deepinfra.com/v1/openai",
        Some("DEEPINFRA_BASE_URL"),
        &["DEEPINFRA_API_KEY"],
        Chat,
    ),
    hosted(
        "novita",
        &["novita-ai", "novitaai"],
        "https://api.novita.ai/openai/v1",
        Some("NOVITA_BASE_URL"),
        &["NOVITA_API_KEY"],
        Chat,
    ),
    hosted(
        "ollama-cloud",
        &["ollama_cloud"],
        "https://ollama.com/v1",
        None,
        &["OLLAMA_API_KEY"],
        Chat,
    ),
    local(
        "ollama",
        &[],
        "http://127.0.0.1:11434/v1",
        &["OLLAMA_API_KEY"],
        Some("OLLAMA_BASE_URL"),
    ),
    local(
        "lmstudio",
        &["lm-studio", "lm_studio"],
        "http://127.0.0.1:1234/v1",
        &["LM_API_KEY", "LMSTUDIO_API_KEY"],
        Some("LM_BASE_URL"),
    ),
    local(
        "llamacpp",
        &["llama.cpp", "llama-cpp"],
        "http://127.0.0.1:8080/v1",
        &["LLAMACPP_API_KEY"],
        None,
    ),
    local(
        "vllm",
        &[],
        "http://127.0.0.1:8000/v1",
        &["VLLM_API_KEY"],
        Some("VLLM_BASE_URL"),
    ),
];

/// The provider `name` means (its own name or an alias, any case).
pub fn find(name: &str) -> Option<&'static Known> {
    let name = name.trim().to_ascii_lowercase();
    KNOWN
        .iter()
        .find(|k| k.name == name || k.aliases.contains(&name.as_str()))
}

impl Known {
    /// The base URL to call: the override variable's value when set, else the table's.
    pub fn base_url(&self, env: &Env) -> String {
        self.base_url_env
            .and_then(|var| env.get(var))
            .map(str::trim)
            .filter(|url| !url.is_empty())
            .unwrap_or(self.base_url)
            .to_string()
    }

    /// The first of its key variables that is set, with its value.
    pub fn env_key<'e>(&self, env: &'e Env) -> Option<(&'static str, &'e str)> {
        self.key_envs.iter().find_map(|var| {
            env.get(var)
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(|v| (*var, v))
        })
    }

    /// Whether it runs on the user's machine (its calls cost nothing).
    pub fn is_local(&self) -> bool {
        self.login == Login::None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases_find_one_entry_each() {
        assert_eq!(find("OpenRouter").map(|k| k.name), Some("openrouter"));
        assert_eq!(find("claude").map(|k| k.name), Some("anthropic"));
        assert_eq!(find("openai-api").map(|k| k.name), Some("openai"));
        assert_eq!(find("llama.cpp").map(|k| k.name), Some("llamacpp"));
        assert!(find("nowhere").is_none());
        let mut names: Vec<&str> = KNOWN
            .iter()
            .flat_map(|k| std::iter::once(k.name).chain(k.aliases.iter().copied()))
            .collect();
        let all = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all, "a name or alias is listed twice");
    }

    #[test]
    fn base_url_override_and_first_key_set() {
        let env = Env::from_pairs([
            ("OPENROUTER_BASE_URL", "http://127.0.0.1:9/v1"),
            ("GEMINI_API_KEY", "g"),
        ]);
        let openrouter = find("openrouter").unwrap();
        assert_eq!(openrouter.base_url(&env), "http://127.0.0.1:9/v1");
        assert_eq!(
            find("anthropic").unwrap().base_url(&env),
            "https://api.anthropic.com"
        );
        assert_eq!(
            find("gemini").unwrap().env_key(&env),
            Some(("GEMINI_API_KEY", "g"))
        );
        assert!(find("vllm").unwrap().is_local());
    }
}
