//! The model chain (`model.*`, `fallback_providers`) and `auxiliary.<task>`.

use std::time::Duration;

use super::{clean, one_notice};
use crate::config::settings::{ApiMode, AuxiliaryTask, LlmSection, Timing};

#[test]
fn model_defaults_and_values() {
    let d = clean("{}").llm;
    assert_eq!(d, LlmSection::default());
    assert_eq!(d.timing, Timing::default());
    assert_eq!(d.timing.stale_timeout, Duration::from_secs(90));
    assert_eq!(d.timing.connect_timeout, Duration::from_secs(10));
    assert_eq!(d.timing.max_retries, 3);
    assert_eq!(d.timing.retry_base_delay, Duration::from_secs(1));
    assert_eq!(d.context_length, None);
    let m = clean(
        "model: {default: ' m ', provider: OpenAI, api_key: k, api_mode: anthropic, \
         text_tool_calls: true, stale_timeout: 5.5, max_retries: 0, context_length: 32768}\n\
         fallback_providers: [{provider: ollama, model: q}]",
    )
    .llm;
    assert_eq!(m.primary.model, "m");
    assert_eq!(m.primary.provider, "OpenAI");
    assert_eq!(m.primary.api_key, "k");
    assert_eq!(m.primary.api_mode, Some(ApiMode::AnthropicMessages));
    assert_eq!(m.primary.text_tool_calls, Some(true));
    assert_eq!(m.timing.stale_timeout, Duration::from_secs_f64(5.5));
    assert_eq!(m.timing.max_retries, 0);
    assert_eq!(m.context_length, Some(32_768));
    assert_eq!(m.fallbacks.len(), 1);
    assert_eq!(
        (
            m.fallbacks[0].provider.as_str(),
            m.fallbacks[0].model.as_str()
        ),
        ("ollama", "q")
    );
    assert!(
        !format!("{:?}", m.primary).contains("\"k\""),
        "key not in Debug"
    );
}

#[test]
fn a_job_model_overrides_the_primary_only() {
    let m = clean("model: {default: main, provider: openai}\nfallback_providers: [{model: f}]").llm;
    let job = m.with_model(" other ");
    assert_eq!(job.primary.model, "other");
    assert_eq!(job.primary.provider, "openai");
    assert_eq!(job.fallbacks, m.fallbacks);
    assert_eq!(m.with_model("  "), m, "a blank model changes nothing");
}

#[test]
fn model_bad_values_are_one_notice_and_the_default() {
    let s = one_notice(
        "model: {stale_timeout: soon}",
        &["model.stale_timeout: \"soon\" is not a number of seconds; using 90"],
    );
    assert_eq!(s.llm.timing.stale_timeout, Duration::from_secs(90));
    let s = one_notice("model: {connect_timeout: -2}", &["negative", "using 10"]);
    assert_eq!(s.llm.timing.connect_timeout, Duration::from_secs(10));
    let s = one_notice(
        "model: {max_retries: 1.5}",
        &["model.max_retries", "using 3"],
    );
    assert_eq!(s.llm.timing.max_retries, 3);
    let s = one_notice("model: {max_retries: 9999999999}", &["using 4294967295"]);
    assert_eq!(s.llm.timing.max_retries, u32::MAX);
    let s = one_notice(
        "model: {context_length: big}",
        &["model.context_length", "endpoint"],
    );
    assert_eq!(s.llm.context_length, None);
    let s = one_notice(
        "model: {api_mode: grpc}",
        &[
            "model.api_mode: \"grpc\" is not one of chat_completions, anthropic_messages or codex_responses",
        ],
    );
    assert_eq!(s.llm.primary.api_mode, None);
    let s = one_notice(
        "model: {api_key: 123456789}",
        &["model.api_key: the value is not a string"],
    );
    assert_eq!(s.llm.primary.api_key, "");
    let (_, notices) = super::read("model: {api_key: 123456789}");
    assert!(
        !notices[0].contains("123456789"),
        "a key never reaches a notice"
    );
    let s = one_notice(
        "model: {text_tool_calls: sometimes}",
        &["model.text_tool_calls"],
    );
    assert_eq!(s.llm.primary.text_tool_calls, None);
}

#[test]
fn the_chain_keeps_its_own_notices() {
    let (s, notices) = super::read("agent: {max_turns: x}\nmodel: {api_mode: telepathy}");
    assert_eq!(notices.len(), 2, "{notices:?}");
    assert_eq!(
        s.llm.problems.len(),
        1,
        "only the chain's: {:?}",
        s.llm.problems
    );
    assert!(s.llm.problems[0].starts_with("model.api_mode: \"telepathy\""));
    assert!(clean("model: {default: m}").llm.problems.is_empty());
}

#[test]
fn fallback_bad_values_name_their_index() {
    let s = one_notice(
        "fallback_providers: openai",
        &["fallback_providers", "not a list"],
    );
    assert!(s.llm.fallbacks.is_empty());
    let s = one_notice(
        "fallback_providers: [{model: a}, {model: b, api_mode: x}]",
        &["fallback_providers[1].api_mode: \"x\""],
    );
    assert_eq!(s.llm.fallbacks.len(), 2);
    assert_eq!(s.llm.fallbacks[1].api_mode, None);
    let s = one_notice(
        "fallback_providers: [openai]",
        &[
            "fallback_providers[0]: \"openai\" is not a mapping",
            "empty entry",
        ],
    );
    assert_eq!(
        s.llm.fallbacks.len(),
        1,
        "kept, so later entries keep their index"
    );
    assert!(s.llm.fallbacks[0].model.is_empty());
}

#[test]
fn auxiliary_defaults_values_and_bad_values() {
    let d = clean("{}").auxiliary;
    assert_eq!(
        d.task(AuxiliaryTask::Compression).timeout,
        Duration::from_secs(120)
    );
    assert_eq!(
        d.task(AuxiliaryTask::TitleGeneration).timeout,
        Duration::from_secs(30)
    );
    assert!(d.title_generation.enabled);
    assert!(d.compression.endpoint.model.is_empty());
    assert_eq!(d.vision.timeout, Duration::from_secs(120));
    assert_eq!(d.vision.download_timeout, Duration::from_secs(30));
    let v =
        clean("auxiliary: {vision: {model: gpt-4o, timeout: 60, download_timeout: 5}}").auxiliary;
    assert_eq!(v.task(AuxiliaryTask::Vision).endpoint.model, "gpt-4o");
    assert_eq!(v.vision.timeout, Duration::from_secs(60));
    assert_eq!(v.vision.download_timeout, Duration::from_secs(5));
    let a = clean(
        "auxiliary: {title_generation: {enabled: false, timeout: 5}, \
         compression: {model: small, provider: openai}}",
    )
    .auxiliary;
    assert!(!a.title_generation.enabled);
    assert_eq!(a.title_generation.timeout, Duration::from_secs(5));
    assert_eq!(a.compression.endpoint.model, "small");
    assert_eq!(a.compression.endpoint.provider, "openai");
    let s = one_notice(
        "auxiliary: {title_generation: {enabled: perhaps}}",
        &[
            "auxiliary.title_generation.enabled: \"perhaps\"",
            "using true",
        ],
    );
    assert!(s.auxiliary.title_generation.enabled);
    let s = one_notice(
        "auxiliary: {compression: {timeout: -5}}",
        &["auxiliary.compression.timeout: -5 is negative; using 120"],
    );
    assert_eq!(s.auxiliary.compression.timeout, Duration::from_secs(120));
    let s = one_notice(
        "auxiliary: {compression: fast}",
        &["auxiliary.compression", "mapping"],
    );
    assert_eq!(s.auxiliary.compression.timeout, Duration::from_secs(120));
    let s = one_notice("auxiliary: [x]", &["auxiliary: [\"x\"] is not a mapping"]);
    assert!(s.auxiliary.title_generation.enabled);
}

#[test]
fn a_job_pinned_elsewhere_never_inherits_the_configured_key() {
    let s = clean(
        "model: {default: m, provider: custom, base_url: 'http://a:1/v1', api_key: sk-configured}",
    );
    let same = s.llm.for_job("other-model", "", "");
    assert_eq!(same.primary.api_key, "sk-configured");
    assert_eq!(same.primary.model, "other-model");
    let same_server = s.llm.for_job("", "custom", "http://a:1/v1/");
    assert_eq!(same_server.primary.api_key, "sk-configured");
    let elsewhere = s.llm.for_job("", "custom", "http://b:2/v1");
    assert_eq!(
        elsewhere.primary.api_key, "",
        "the key stays with its server"
    );
    assert_eq!(
        (
            elsewhere.primary.model.as_str(),
            elsewhere.primary.base_url.as_str()
        ),
        ("m", "http://b:2/v1")
    );
    let other = s.llm.for_job("gpt-x", "openai", "");
    assert_eq!(
        (
            other.primary.provider.as_str(),
            other.primary.api_key.as_str()
        ),
        ("openai", "")
    );
}
