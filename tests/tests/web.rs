//! The web toolset through the real daemon: the fake model calls `web_extract` and
//! `web_search`, and each test reads the results from the model's next request. Pages and
//! search APIs are a local fixture server (`hermes_tests::web_fixture`); since it listens on
//! 127.0.0.1, fetches of it need `security.allow_private_urls: true`, and the tests prove both
//! that without the setting it is refused and that metadata addresses are refused with it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use hermes_tests::{
    TestHome,
    fake_llm::{FakeLlm, Reply, ToolCall},
    home::StopOnDrop,
    web_fixture::{self, WebFixture},
};
use serde_json::{Value, json};

/// Run one turn whose first step makes `calls`; the results the model read, in call order.
async fn results_of(home: &TestHome, config: &str, calls: Vec<ToolCall>) -> Vec<Value> {
    let server = FakeLlm::start(vec![Reply::tool_calls(calls), Reply::text("done")]).await;
    home.use_fake_model(&server, config);
    let cwd = home.path().to_str().unwrap().to_string();
    let out = home
        .ctl_async(&["send", "--json", "--cwd", &cwd, "go"])
        .await
        .json();
    assert_eq!(out["answer"], "done", "{out}");
    let requests = server.requests();
    requests[1]
        .tool_results()
        .into_iter()
        .map(|text| serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}")))
        .collect()
}

fn extract(urls: &[String]) -> ToolCall {
    ToolCall::new("web_extract", &json!({ "urls": urls }).to_string())
}

fn page(result: &Value, i: usize) -> (&str, &str) {
    let r = &result["results"][i];
    (
        r["content"].as_str().unwrap_or_default(),
        r["error"].as_str().unwrap_or_default(),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn pages_become_clean_markdown_and_metadata_is_refused_even_when_private_urls_are_allowed() {
    let web = WebFixture::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let first = [
        web.url("/article"),
        web.url("/latin1"),
        web.url("/paper.pdf"),
        web.url("/chain/3"),
        web.url("/to-loopback"),
    ];
    let second = [
        web.url("/to-metadata"),
        web.url("/to-metadata-decimal"),
        web.url("/loop"),
        web.url("/huge"),
        web.url("/image.png"),
    ];
    let results = results_of(
        &home,
        "security: {allow_private_urls: true}\n",
        vec![
            extract(&first),
            extract(&second),
            extract(&["http://169.254.169.254/latest/meta-data/".into()]),
        ],
    )
    .await;

    let (article, error) = page(&results[0], 0);
    assert_eq!(error, "", "{}", results[0]);
    assert_eq!(
        results[0]["results"][0]["title"],
        "Measuring rivers | The Example Times"
    );
    for kept in [
        "Measuring rivers",
        "## The stations",
        "rating curve",
        "Midstream station under the rail bridge",
        "our guide to rating curves](http",
        "| Bridge | 2.08 | 61.2 |",
        "def discharge(level, a=12.1, b=1.63, h0=0.2):",
        "```",
    ] {
        assert!(article.contains(kept), "{kept:?} missing from:\n{article}");
    }
    for dropped in [
        "Subscribe now",
        "BUY CHEAP WIDGETS",
        "SPONSORED",
        "Celebrity gossip",
        "All rights reserved",
        "UA-123",
    ] {
        assert!(
            !article.contains(dropped),
            "{dropped:?} kept in:\n{article}"
        );
    }
    let (latin1, error) = page(&results[0], 1);
    assert_eq!(error, "");
    assert!(latin1.contains("Un café crème coûte 20 € – et"), "{latin1}");
    let (pdf, error) = page(&results[0], 2);
    assert_eq!(error, "");
    assert!(
        pdf.contains("Quarterly results grew by seven percent"),
        "{pdf}"
    );
    for i in [3, 4] {
        let (redirected, error) = page(&results[0], i);
        assert_eq!(error, "", "{}", results[0]["results"][i]);
        assert!(redirected.contains("## The stations"), "{redirected}");
    }

    for i in [0, 1] {
        let (content, error) = page(&results[1], i);
        assert_eq!(content, "");
        assert!(error.starts_with("Blocked: "), "{error}");
        assert!(error.contains("169.254.169.254"), "{error}");
        assert!(error.contains("never fetched"), "{error}");
        assert!(
            error.contains("redirected from"),
            "refused at the redirect: {error}"
        );
    }
    let (_, error) = page(&results[1], 2);
    assert!(error.contains("redirected more than 5 times"), "{error}");
    let (huge, error) = page(&results[1], 3);
    assert_eq!(error, "");
    assert!(
        huge.contains("[TRUNCATED]"),
        "{}",
        &huge[huge.len().saturating_sub(800)..]
    );
    assert!(huge.contains("THE END OF THE REPORT"), "the tail is kept");
    assert!(huge.chars().count() < 16_000, "{}", huge.chars().count());
    let stored = huge
        .lines()
        .find_map(|l| l.strip_prefix("Full text saved to: "))
        .expect("the footer names the stored text");
    let whole = std::fs::read_to_string(stored).unwrap();
    assert!(
        whole.contains("## Section 2000"),
        "the stored file is the whole text"
    );
    // A page this large takes the one-pass path: still its main content only.
    assert!(whole.starts_with("# Measuring rivers"), "{}", &whole[..200]);
    for boilerplate in [
        "Subscribe now",
        "BUY CHEAP WIDGETS",
        "Celebrity gossip",
        "Copyright",
    ] {
        assert!(!whole.contains(boilerplate), "{boilerplate}");
    }
    let (_, error) = page(&results[1], 4);
    assert!(error.contains("image/png"), "{error}");

    let (_, error) = page(&results[2], 0);
    assert!(error.starts_with("Blocked: 169.254.169.254"), "{error}");
}

#[tokio::test(flavor = "multi_thread")]
async fn loopback_and_names_resolving_to_it_are_refused_without_the_setting() {
    let web = WebFixture::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let port = web.addr.port();
    let urls = [
        web.url("/article"),
        format!("http://localhost:{port}/article"),
        format!("http://2130706433:{port}/article"),
        format!("http://evil.example@127.0.0.1:{port}/article"),
        format!("http://[::ffff:127.0.0.1]:{port}/article"),
    ];
    let results = results_of(&home, "{}", vec![extract(&urls)]).await;
    for (i, url) in urls.iter().enumerate() {
        let (content, error) = page(&results[0], i);
        assert_eq!(content, "", "{url}");
        assert!(error.starts_with("Blocked: "), "{url}: {error}");
        // User info in a URL is refused as a secret before the host is even looked at.
        let why = if i == 3 {
            "looks like a secret"
        } else {
            "security.allow_private_urls: true"
        };
        assert!(error.contains(why), "{url}: {error}");
    }
    assert!(
        page(&results[0], 1).1.contains("localhost ("),
        "the name was resolved and judged"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn urls_carrying_credentials_are_refused_before_any_fetch() {
    let web = WebFixture::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let urls = [
        web.url("/article?token=abc123"),
        web.url("/article?X-Amz-Signature=deadbeef"),
        web.url("/article?next=sk-abcdefghijklmnop1234"),
        web.url("/article?code=1234"),
    ];
    let config = "security: {allow_private_urls: true}\n";
    let results = results_of(&home, config, vec![extract(&urls)]).await;
    for (i, what) in ["(token)", "(x-amz-signature)", "API key or token"]
        .iter()
        .enumerate()
    {
        let (content, error) = page(&results[0], i);
        assert_eq!(content, "", "{}", urls[i]);
        assert!(
            error.starts_with("Blocked: ") && error.contains(what),
            "{}: {error}",
            urls[i]
        );
    }
    // `code` is an ordinary page facet (Hermes' narrow list): fetched.
    let (content, error) = page(&results[0], 3);
    assert_eq!(error, "", "{content}");
    assert!(content.contains("river"), "{content}");
}

fn search(query: &str, limit: u64) -> ToolCall {
    ToolCall::new(
        "web_search",
        &json!({"query": query, "limit": limit}).to_string(),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn each_search_backend_answers_with_titles_urls_and_descriptions() {
    let web = WebFixture::start().await;
    let backends = [
        (
            "searxng",
            format!("SEARXNG_URL={}\n", web.url("/searxng")),
            "First",
        ),
        (
            "brave-free",
            format!(
                "BRAVE_SEARCH_API_KEY={}\nBRAVE_SEARCH_BASE_URL={}\n",
                web_fixture::BRAVE_KEY,
                web.url("/brave")
            ),
            "Brave hit",
        ),
        (
            "tavily",
            format!(
                "TAVILY_API_KEY={}\nTAVILY_BASE_URL={}\n",
                web_fixture::TAVILY_KEY,
                web.url("/tavily")
            ),
            "Tavily 1",
        ),
        (
            "exa",
            format!(
                "EXA_API_KEY={}\nEXA_BASE_URL={}\n",
                web_fixture::EXA_KEY,
                web.url("/exa")
            ),
            "Exa hit",
        ),
        (
            "ddgs",
            format!("DDGS_BASE_URL={}\n", web.url("/ddg")),
            "Rust Programming Language",
        ),
    ];
    for (backend, env, first_title) in backends {
        let home = TestHome::new();
        let _stop = StopOnDrop(&home);
        home.write(".env", &env);
        let config = format!("web: {{backend: {backend}}}\n");
        let results = results_of(&home, &config, vec![search("rust & \"rivers\"", 2)]).await;
        let result = &results[0];
        assert_eq!(result["success"], true, "{backend}: {result}");
        let hits = result["data"]["web"].as_array().unwrap();
        assert!(!hits.is_empty() && hits.len() <= 2, "{backend}: {result}");
        assert_eq!(hits[0]["title"], first_title, "{backend}: {result}");
        assert_eq!(hits[0]["position"], 1);
        assert!(
            hits[0]["url"].as_str().unwrap().starts_with("https://"),
            "{result}"
        );
        for hit in hits {
            assert!(
                hit["description"].as_str().unwrap().chars().count() <= 601,
                "{hit}"
            );
        }
    }
    let queries = web.queries();
    for backend in ["searxng", "brave", "tavily", "exa", "ddgs"] {
        assert!(
            queries.contains(&format!("{backend}: rust & \"rivers\"")),
            "{backend} got the query whole: {queries:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_or_wrong_key_is_an_error_naming_what_to_fix() {
    let web = WebFixture::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let results = results_of(&home, "web: {backend: brave-free}\n", vec![search("x", 3)]).await;
    let error = results[0]["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("BRAVE_SEARCH_API_KEY is not set"),
        "{}",
        results[0]
    );
    assert!(error.contains("web.search_backend"), "{error}");
    drop(_stop);

    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.write(
        ".env",
        &format!("EXA_API_KEY=wrong\nEXA_BASE_URL={}\n", web.url("/exa")),
    );
    let results = results_of(&home, "web: {search_backend: exa}\n", vec![search("x", 3)]).await;
    let error = results[0]["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("Exa returned HTTP 401 (is the API key right?)"),
        "{}",
        results[0]
    );

    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let results = results_of(&home, "web: {backend: firecrawl}\n", vec![search("x", 3)]).await;
    let error = results[0]["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("web.backend is \"firecrawl\""),
        "{}",
        results[0]
    );
}
