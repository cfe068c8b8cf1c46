//! Which models take images: a shipped table of model-name families, overridden by the user's
//! `model.supports_vision`. A model that is not known is treated as text-only (it is given the
//! image's path instead, which `vision_analyze` can look at), since an image sent to a text
//! model is an error or silently ignored.

/// Families that never take images, checked first (`gpt-4o-mini` sees, `o1-mini` does not).
const TEXT_ONLY: &[&str] = &[
    "gpt-3.5",
    "o1-mini",
    "o3-mini",
    "deepseek",
    "embed",
    "whisper",
    "tts",
    "codestral",
];

/// Families that take images (a name containing one of these, in lower case).
const SEES: &[&str] = &[
    "gpt-4o",
    "gpt-4.1",
    "gpt-4-turbo",
    "gpt-4-vision",
    "gpt-5",
    "chatgpt-4o",
    "o1",
    "o3",
    "o4",
    "claude-3",
    "claude-sonnet-4",
    "claude-opus-4",
    "claude-haiku-4",
    "claude-4",
    "gemini",
    "gemma-3",
    "llava",
    "bakllava",
    "pixtral",
    "-vl",
    "vision",
    "grok-4",
    "llama-4",
    "llama3.2-vision",
    "minicpm-v",
    "moondream",
    "glm-4v",
    "glm-4.5v",
    "mistral-small-3",
    "mistral-medium-3",
    "qvq",
];

/// Whether `model` (an endpoint's model name, with or without a `vendor/` prefix) takes images,
/// with `setting` (`model.supports_vision`) deciding when given.
pub fn supports_vision(model: &str, setting: Option<bool>) -> bool {
    if let Some(setting) = setting {
        return setting;
    }
    let name = model.to_ascii_lowercase();
    let name = name.rsplit('/').next().unwrap_or(&name);
    if TEXT_ONLY.iter().any(|family| name.contains(family)) {
        return false;
    }
    SEES.iter().any(|family| name.contains(family))
}

#[cfg(test)]
mod tests {
    use super::supports_vision;

    #[test]
    fn the_table_knows_the_common_families_and_the_setting_wins() {
        for sees in [
            "gpt-4o-mini",
            "openai/gpt-4.1",
            "claude-sonnet-4-5",
            "claude-3-5-haiku-latest",
            "google/gemini-2.5-flash",
            "qwen2.5-vl-72b-instruct",
            "llava:13b",
        ] {
            assert!(supports_vision(sees, None), "{sees}");
        }
        for text in [
            "gpt-3.5-turbo",
            "deepseek-chat",
            "o3-mini",
            "fake-model",
            "hermes-4-70b",
        ] {
            assert!(!supports_vision(text, None), "{text}");
        }
        assert!(supports_vision("fake-model", Some(true)));
        assert!(!supports_vision("gpt-4o", Some(false)));
    }
}
