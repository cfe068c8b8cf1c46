//! What we ship about models: context windows and prices, matched by model-name prefix, used when
//! an endpoint does not say (context) or never says (prices). Unknown stays unknown.

/// USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prices {
    pub input: f64,
    pub output: f64,
    /// Cached input read back (`None`: not published, the cost of such a call is unknown).
    pub cache_read: Option<f64>,
    /// Input written to the cache (Anthropic's 5-minute rate; OpenAI charges nothing extra).
    pub cache_write: Option<f64>,
}

/// Anthropic: reads at a tenth of input, 5-minute writes at 1.25 times.
const fn claude(input: f64, output: f64) -> Option<Prices> {
    Some(Prices {
        input,
        output,
        cache_read: Some(input * 0.1),
        cache_write: Some(input * 1.25),
    })
}

/// OpenAI and others: cached input at its own rate, no write charge.
const fn cached(input: f64, output: f64, cache_read: f64) -> Option<Prices> {
    Some(Prices {
        input,
        output,
        cache_read: Some(cache_read),
        cache_write: Some(0.0),
    })
}

/// (model-name prefix, context window, prices)
type Entry = (&'static str, u64, Option<Prices>);

const MODELS: &[Entry] = &[
    ("claude-opus-4", 200_000, claude(15.0, 75.0)),
    ("claude-sonnet-4", 200_000, claude(3.0, 15.0)),
    ("claude-3-7-sonnet", 200_000, claude(3.0, 15.0)),
    ("claude-3-5-sonnet", 200_000, claude(3.0, 15.0)),
    ("claude-3-5-haiku", 200_000, claude(0.8, 4.0)),
    ("claude-haiku-4", 200_000, claude(1.0, 5.0)),
    ("claude", 200_000, None),
    ("gpt-4o-mini", 128_000, cached(0.15, 0.6, 0.075)),
    ("gpt-4o", 128_000, cached(2.5, 10.0, 1.25)),
    ("gpt-4.1-nano", 1_047_576, cached(0.1, 0.4, 0.025)),
    ("gpt-4.1-mini", 1_047_576, cached(0.4, 1.6, 0.1)),
    ("gpt-4.1", 1_047_576, cached(2.0, 8.0, 0.5)),
    ("gpt-5-mini", 400_000, cached(0.25, 2.0, 0.025)),
    ("gpt-5", 400_000, cached(1.25, 10.0, 0.125)),
    ("o3", 200_000, None),
    ("o4-mini", 200_000, cached(1.1, 4.4, 0.275)),
    ("deepseek-chat", 128_000, cached(0.27, 1.1, 0.07)),
    ("deepseek-reasoner", 128_000, cached(0.55, 2.19, 0.14)),
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

/// Providers whose calls a subscription pays for (the Codex login).
const SUBSCRIPTIONS: &[&str] = &["openai-codex"];

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

/// Prices in USD per million tokens; `None` when unknown. A local server's are zero.
pub fn prices(provider: &str, model: &str) -> Option<Prices> {
    if super::providers::find(provider).is_some_and(|k| k.is_local()) {
        return Some(Prices {
            input: 0.0,
            output: 0.0,
            cache_read: Some(0.0),
            cache_write: Some(0.0),
        });
    }
    entry(model).and_then(|(_, _, prices)| *prices)
}

/// How a call's cost is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CostStatus {
    /// The provider said what it charged (OpenRouter's `usage.cost`).
    Actual,
    /// Tokens times the shipped prices.
    Estimated,
    /// A subscription pays for it.
    Included,
    /// No price for a bucket the call used.
    Unknown,
}

impl CostStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Actual => "actual",
            Self::Estimated => "estimated",
            Self::Included => "included",
            Self::Unknown => "unknown",
        }
    }

    /// The status of calls of both statuses together: unknown wins, then estimated.
    pub fn combine(self, other: Self) -> Self {
        let rank = |s: Self| match s {
            Self::Unknown => 3,
            Self::Estimated => 2,
            Self::Actual => 1,
            Self::Included => 0,
        };
        if rank(other) > rank(self) {
            other
        } else {
            self
        }
    }
}

/// What one call cost: USD (`None` when unknown) and how that is known. `input_includes_cache`
/// is true where the provider's input count holds the cached tokens too (OpenAI's shapes), false
/// where it reports them apart (Anthropic's).
pub fn call_cost(
    provider: &str,
    model: &str,
    usage: &super::Usage,
    input_includes_cache: bool,
) -> (Option<f64>, CostStatus) {
    if SUBSCRIPTIONS.contains(&provider) {
        return (Some(0.0), CostStatus::Included);
    }
    if let Some(reported) = usage.reported_cost_usd {
        return (Some(reported), CostStatus::Actual);
    }
    let Some(p) = prices(provider, model) else {
        return (None, CostStatus::Unknown);
    };
    let cached = usage.cache_read_tokens + usage.cache_write_tokens;
    let input = if input_includes_cache {
        usage.input_tokens.saturating_sub(cached)
    } else {
        usage.input_tokens
    };
    let rate = |tokens: u64, price: Option<f64>| match (tokens, price) {
        (0, _) => Some(0.0),
        (n, Some(price)) => Some(n as f64 * price),
        (_, None) => None,
    };
    let parts = [
        rate(input, Some(p.input)),
        rate(usage.output_tokens, Some(p.output)),
        rate(usage.cache_read_tokens, p.cache_read),
        rate(usage.cache_write_tokens, p.cache_write),
    ];
    match parts.into_iter().sum::<Option<f64>>() {
        Some(total) => (Some(total / 1_000_000.0), CostStatus::Estimated),
        None => (None, CostStatus::Unknown),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::Usage;

    fn usage(input: u64, output: u64, read: u64, write: u64) -> Usage {
        Usage {
            input_tokens: input,
            output_tokens: output,
            cache_read_tokens: read,
            cache_write_tokens: write,
            ..Usage::default()
        }
    }

    #[test]
    fn longest_listed_prefix_wins_and_vendor_prefixes_are_ignored() {
        assert_eq!(
            prices("openrouter", "openai/gpt-4o-mini").unwrap().input,
            0.15
        );
        assert_eq!(prices("openai", "gpt-4o-2024-08-06").unwrap().output, 10.0);
        assert_eq!(context_length("anthropic/claude-sonnet-4"), Some(200_000));
    }

    #[test]
    fn cache_reads_and_writes_are_priced_by_the_providers_own_rates() {
        // Anthropic reports cached tokens apart: 1,000 fresh + 10,000 read + 2,000 written.
        let (cost, status) = call_cost(
            "anthropic",
            "claude-sonnet-4",
            &usage(1_000, 500, 10_000, 2_000),
            false,
        );
        let by_hand = (1_000.0 * 3.0 + 500.0 * 15.0 + 10_000.0 * 0.3 + 2_000.0 * 3.75) / 1e6;
        assert!(
            (cost.unwrap() - by_hand).abs() < 1e-12,
            "{cost:?} vs {by_hand}"
        );
        assert_eq!(status, CostStatus::Estimated);
        // OpenAI counts the cached tokens inside prompt_tokens.
        let (cost, _) = call_cost("openai", "gpt-5", &usage(12_000, 100, 10_000, 0), true);
        let by_hand = (2_000.0 * 1.25 + 100.0 * 10.0 + 10_000.0 * 0.125) / 1e6;
        assert!((cost.unwrap() - by_hand).abs() < 1e-12);
    }

    #[test]
    fn unknown_stays_unknown_local_is_free_and_subscriptions_are_included() {
        assert_eq!(
            call_cost("custom", "my-finetune", &usage(10, 10, 0, 0), true),
            (None, CostStatus::Unknown)
        );
        assert_eq!(
            call_cost("ollama", "my-finetune", &usage(10, 10, 0, 0), true).0,
            Some(0.0)
        );
        assert_eq!(
            call_cost("openai-codex", "gpt-5", &usage(10, 10, 0, 0), true),
            (Some(0.0), CostStatus::Included)
        );
        let reported = Usage {
            reported_cost_usd: Some(0.0042),
            ..usage(10, 10, 0, 0)
        };
        assert_eq!(
            call_cost("openrouter", "x/y", &reported, true),
            (Some(0.0042), CostStatus::Actual)
        );
        assert_eq!(context_length("totally-new-model"), None);
        assert_eq!(
            CostStatus::Estimated.combine(CostStatus::Unknown),
            CostStatus::Unknown
        );
        assert_eq!(
            CostStatus::Included.combine(CostStatus::Actual),
            CostStatus::Actual
        );
    }
}
