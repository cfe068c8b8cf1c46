//! Secret values in a Hermes home's `config.yaml`, through the real daemon: `read_file` and
//! `search_files` show the file with every value of a secret-holding key (`api_key`, `token`,
//! `secret`, `password`, `*_KEY`, `Authorization`, …) and every key-shaped value replaced by
//! the file-content marker — a value that is in no `.env` and has no vendor shape included —
//! while the rest of the file stays readable; the daemon's home, a profile's, and a symlink to
//! one alike.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use hermes_tests::{
    TestHome,
    fake_llm::{FakeLlm, Reply},
    home::StopOnDrop,
};
use serde_json::json;

/// In no `.env`, of no vendor shape: only its key says it is a secret.
const PLAIN: &str = "plainvalue1234567890";
const PROVIDER_KEY: &str = "sk-live-4f9a2b7c1e8d3f6a5b0c";
const GITHUB: &str = "ghp_R4nd0mT0k3nV4lu3F0rT3st1ngAbCdEf12";
const BEARER: &str = "opaque-bearer-7731";
const DB_PASSWORD: &str = "hunter2hunter2";
const NESTED: &str = "nested-secret-9911";
const BLOCK: &str = "block-secret-line-5521";

/// A profile's settings: secrets in every place Hermes keeps them.
fn profile_config() -> String {
    format!(
        "model:\n  default: gpt-profile\n  api_key: \"{PLAIN}\"\n\
         providers:\n  x:\n    base_url: https://api.x.example/v1\n    api_key: {PROVIDER_KEY}\n\
         mcp_servers:\n  y:\n    command: npx\n    args: [\"-y\", \"@modelcontextprotocol/server-github\"]\n    \
         env:\n      GITHUB_TOKEN: {GITHUB}\n      LOG_LEVEL: debug\n  \
         z:\n    url: https://mcp.z.example/mcp\n    headers:\n      Authorization: Bearer {BEARER}\n\
         database:\n  password: {DB_PASSWORD}\n  host: db.internal\n\
         credentials:\n  primary: {NESTED}\n\
         private_key: |\n  {BLOCK}\n  second-line\n\
         display:\n  skin: mono\n"
    )
}

fn call(name: &str, args: serde_json::Value) -> Reply {
    Reply::tool_call(name, &args.to_string())
}

fn assert_hidden(what: &str, text: &str) {
    for secret in [
        PLAIN,
        PROVIDER_KEY,
        GITHUB,
        BEARER,
        DB_PASSWORD,
        NESTED,
        BLOCK,
    ] {
        assert!(
            !text.contains(secret),
            "{secret} is visible in {what}: {text}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn secret_values_of_config_yaml_are_masked_when_read_or_searched() {
    let server = FakeLlm::start(vec![]).await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(
        &server,
        &format!("agent:\n  max_turns: 40\nnotes_sync:\n  api_key: {PLAIN}\n"),
    );
    home.write("profiles/work/config.yaml", &profile_config());
    let work = tempfile::tempdir_in("/tmp").unwrap();
    std::os::unix::fs::symlink(
        home.path().join("profiles/work/config.yaml"),
        work.path().join("settings.yaml"),
    )
    .unwrap();
    let own = home.path().join("config.yaml").display().to_string();
    let profile = home.path().join("profiles/work").display().to_string();
    let link = work.path().join("settings.yaml").display().to_string();
    for reply in [
        call("read_file", json!({"path": own})),
        call(
            "read_file",
            json!({"path": format!("{profile}/config.yaml")}),
        ),
        call("read_file", json!({"path": link, "offset": 9, "limit": 20})),
        call(
            "search_files",
            json!({"pattern": "api_key|TOKEN|primary|line", "path": profile}),
        ),
        call(
            "search_files",
            json!({"pattern": "plainvalue[0-9]+", "path": profile, "output_mode": "count"}),
        ),
        Reply::text("done"),
    ] {
        server.push(reply);
    }
    home.ctl_async(&["send", "--cwd", work.path().to_str().unwrap(), "look"])
        .await
        .ok();
    let requests = server.chat_requests();
    for request in &requests {
        assert_hidden("a model request", &request.body.to_string());
    }
    let results = requests.last().unwrap().tool_results();
    let read = |i: usize| -> serde_json::Value { serde_json::from_str(&results[i]).unwrap() };

    let own = read(0)["content"].as_str().unwrap().to_owned();
    assert!(own.contains("api_key: «redacted-secret»"), "{own}");
    assert!(own.contains("max_turns: 40"), "other values stay: {own}");
    assert!(own.contains("default: fake-model"), "{own}");

    let profile = read(1)["content"].as_str().unwrap().to_owned();
    for shown in [
        "api_key: \"«redacted-secret»\"",
        "api_key: «redacted:sk-…»",
        "GITHUB_TOKEN: «redacted",
        "LOG_LEVEL: debug",
        "Authorization: «redacted-secret»",
        "password: «redacted-secret»",
        "host: db.internal",
        "primary: «redacted-secret»",
        "base_url: https://api.x.example/v1",
        "skin: mono",
        "default: gpt-profile",
    ] {
        assert!(profile.contains(shown), "{shown:?} in {profile}");
    }
    assert!(
        !profile.contains("second-line"),
        "a block scalar is masked whole: {profile}"
    );
    assert_eq!(read(1)["total_lines"], 28, "no line is added or lost");

    let linked = read(2)["content"].as_str().unwrap().to_owned();
    assert!(linked.starts_with("9|"), "{linked}");
    assert!(linked.contains("GITHUB_TOKEN: «redacted"), "{linked}");

    let found = &results[3];
    assert!(found.contains("«redacted"), "{found}");
    assert!(found.contains("GITHUB_TOKEN"), "{found}");
    assert_hidden("search results", found);
    let counted = read(4);
    assert_eq!(
        counted["total_count"], 0,
        "a search for a secret value finds nothing: {counted}"
    );
}
