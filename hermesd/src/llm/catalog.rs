//! What we ship about models: context windows and prices, matched by model-name prefix, used when
//! an endpoint does not say (context) or never says (prices). Unknown stays unknown.

/// USD per million tokens: (input, output).
type Prices = (f64, f64);
/// (model-name prefix, context window, prices)
type Entry = (&'static str, u64, Option<Prices>);

const MODELS: &[Entry] = &[
    ("claude-opus-4", 200_000, Some((15.0, 75.0))),
    ("claude-sonnet-4", 200_000, Some((3.0, 15.0))),
    ("claude-3-7-sonnet", 200_000, Some((3.0, 15.0))),
    ("claude-3-5-sonnet", 200_000, Some((3.0, 15.0))),
    ("claude-3-5-haiku", 200_000, Some((0.8, 4.0))),
    ("claude-haiku-4", 200_000, Some((1.0, 5.0))),
    ("claude", 200_000, None),
    ("gpt-4o-mini", 128_000, Some((0.15, 0.6))),
    ("gpt-4o", 128_000, Some((2.5, 10.0))),
    ("gpt-4.1-nano", 1_047_576, Some((0.1, 0.4))),
    ("gpt-4.1-mini", 1_047_576, Some((0.4, 1.6))),
    ("gpt-4.1", 1_047_576, Some((2.0, 8.0))),
    ("gpt-5-mini", 400_000, Some((0.25, 2.0))),
    ("gpt-5", 400_000, Some((1.25, 10.0))),
    ("o3", 200_000, None),
    ("o4-mini", 200_000, Some((1.1, 4.4))),
    ("deepseek-chat", 128_000, Some((0.27, 1.1))),
    ("deepseek-reasoner", 128_000, Some((0.55, 2.19))),
    ("deepseek", 128_000, None),
    ("hermes-4", 131_072, None),
    ("hermes-3", 131_072, None),
    ("llama-3.3", 131_072, None),
    ("llama-3.1", 131_072, None),
    ("qwen3", 131_072, None),
    ("qwen2.5", 32_768, None),
    ("gemini-2.5", 1_048_576, None),
    ("kimi-k2", 131_072, None),
];

/// The smallest context window assumed for a model nobody describes.
pub const CONTEXT_FLOOR: u64 = 8_192;

/// Providers that run on the user's machine: their calls cost nothing.
const LOCAL_PROVIDERS: &[&str] = &["ollama", "llamacpp", "lmstudio"];

/// `anthropic/claude-sonnet-4.5` → `claude-sonnet-4.5`; lower case.
fn bare(model: &str) -> String {
    model.rsplit('/').next().unwrap_or(model).to_lowercase()
}

fn entry(model: &str) -> Option<&'static Entry> {
    let name = bare(model);
    MODELS
        .iter()
        .find(|(prefix, _, _)| name.starts_with(prefix))
}

/// The shipped context window of a model, if we know it.
pub fn context_length(model: &str) -> Option<u64> {
    entry(model).map(|(_, context, _)| *context)
}

/// Prices in USD per million tokens (input, output); `None` when unknown.
pub fn prices(provider: &str, model: &str) -> Option<(f64, f64)> {
    if LOCAL_PROVIDERS.contains(&provider) {
        return Some((0.0, 0.0));
    }
    entry(model).and_then(|(_, _, prices)| *prices)
}

/// Estimated cost of a call in USD; `None` when the model's prices are unknown.
pub fn cost_usd(provider: &str, model: &str, input_tokens: u64, output_tokens: u64) -> Option<f64> {
    prices(provider, model).map(|(input, output)| {
        (input_tokens as f64 * input + output_tokens as f64 * output) / 1_000_000.0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_listed_prefix_wins_and_vendor_prefixes_are_ignored() {
        assert_eq!(
            prices("openrouter", "openai/gpt-4o-mini"),
            Some((0.15, 0.6))
        );
        assert_eq!(prices("openai", "gpt-4o-2024-08-06"), Some((2.5, 10.0)));
        assert_eq!(context_length("anthropic/claude-sonnet-4"), Some(200_000));
    }

    #[test]
    fn unknown_stays_unknown_and_local_is_free() {
        assert_eq!(cost_usd("custom", "my-finetune", 1000, 1000), None);
        assert_eq!(cost_usd("ollama", "my-finetune", 1000, 1000), Some(0.0));
        let cost = cost_usd("anthropic", "claude-sonnet-4", 1_000_000, 100_000).unwrap();
        assert!((cost - 4.5).abs() < 1e-9);
        assert_eq!(context_length("totally-new-model"), None);
    }
}
