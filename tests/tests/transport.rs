//! Model calls over the daemon's own HTTP client: HTTPS verified against the system's trust store
//! (`SSL_CERT_FILE` stands in for it), and the environment's proxies, as Hermes' HTTP stack honours
//! them: plain HTTP through `HTTP_PROXY` in absolute form with its credentials, HTTPS through a
//! CONNECT tunnel from `HTTPS_PROXY`, and `NO_PROXY` hosts directly.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use hermes_tests::{
    DaemonProcess, TestHome,
    fake_llm::{FakeLlm, Reply},
    proxy::RecordingProxy,
    tls::TlsFront,
};

fn use_model_at(home: &TestHome, base_url: &str) {
    home.write(
        "config.yaml",
        &format!(
            "model:\n  provider: custom\n  default: m\n  base_url: {base_url}\n  api_key: sk-test\n  \
             max_retries: 0\n{}",
            hermes_tests::home::QUIET_AUXILIARY
        ),
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn https_to_a_server_the_trust_store_vouches_for() {
    let server = FakeLlm::start(vec![Reply::text("over TLS")]).await;
    let home = TestHome::new();
    let front = TlsFront::start(server.addr(), home.path()).await;
    use_model_at(&home, &front.openai_base());
    let daemon = DaemonProcess::start_with(&home, &[], |c| {
        c.env("SSL_CERT_FILE", front.ca_file());
    });

    let answer = home.ctl_async(&["send", "hello"]).await.ok();
    assert_eq!(answer.trim(), "over TLS");
    let request = &server.chat_requests()[0];
    assert_eq!(request.header("authorization"), Some("Bearer sk-test"));
    assert!(
        request
            .header("user-agent")
            .unwrap()
            .starts_with("hermesd/")
    );
    assert_eq!(request.header("content-type"), Some("application/json"));
    daemon.terminate();
}

#[tokio::test(flavor = "multi_thread")]
async fn an_untrusted_certificate_is_refused_before_anything_is_sent() {
    let server = FakeLlm::start(vec![Reply::text("never")]).await;
    let home = TestHome::new();
    let front = TlsFront::start(server.addr(), home.path()).await;
    use_model_at(&home, &front.openai_base());
    let elsewhere = tempfile::tempdir().unwrap();
    let other_ca = TlsFront::start(server.addr(), elsewhere.path()).await;
    let daemon = DaemonProcess::start_with(&home, &[], |c| {
        c.env("SSL_CERT_FILE", other_ca.ca_file());
    });

    let error = home.ctl_async(&["send", "hello"]).await.err();
    assert!(error.contains("cannot connect"), "{error}");
    assert!(error.contains("invalid peer certificate"), "{error}");
    assert!(server.requests().is_empty());
    daemon.terminate();
}

#[tokio::test(flavor = "multi_thread")]
async fn with_no_ca_certificates_https_fails_clearly_and_plain_http_still_works() {
    let server = FakeLlm::start(vec![Reply::text("local model")]).await;
    let home = TestHome::new();
    let empty_store = home.path().join("no-ca.pem");
    std::fs::write(&empty_store, "").unwrap();
    use_model_at(&home, "https://api.example.test/v1");
    let daemon = DaemonProcess::start_with(&home, &[], |c| {
        c.env("SSL_CERT_FILE", &empty_store);
    });
    let error = home.ctl_async(&["send", "hello"]).await.err();
    assert!(
        error.contains("cannot verify HTTPS servers") && error.contains("No CA certificates"),
        "{error}"
    );

    let local = server.openai_base();
    home.ctl_async(&["config", "set", "model.base_url", &local])
        .await
        .ok();
    let answer = home.ctl_async(&["send", "hello"]).await.ok();
    assert_eq!(answer.trim(), "local model");
    daemon.terminate();
}

#[tokio::test(flavor = "multi_thread")]
async fn plain_http_goes_through_the_proxy_with_its_credentials() {
    let server = FakeLlm::start(vec![Reply::text("via the proxy")]).await;
    let proxy = RecordingProxy::start().await;
    let home = TestHome::new();
    home.use_fake_model(&server, "");
    let daemon = DaemonProcess::start_with(&home, &[], |c| {
        c.env("HTTP_PROXY", proxy.url_with_credentials());
    });

    let answer = home.ctl_async(&["send", "hello"]).await.ok();
    assert_eq!(answer.trim(), "via the proxy");
    let heads = proxy.heads();
    let chat = format!("POST http://{}/v1/chat/completions HTTP/1.1", server.addr());
    let head = heads
        .iter()
        .find(|h| h.starts_with(&chat))
        .unwrap_or_else(|| panic!("no {chat:?} among {heads:#?}"));
    let auth = format!("proxy-authorization: {}", RecordingProxy::EXPECTED_AUTH);
    assert!(head.to_lowercase().contains(&auth.to_lowercase()), "{head}");
    assert_eq!(server.chat_requests().len(), 1);
    daemon.terminate();
}

#[tokio::test(flavor = "multi_thread")]
async fn no_proxy_hosts_are_reached_directly() {
    let server = FakeLlm::start(vec![Reply::text("direct")]).await;
    let proxy = RecordingProxy::start().await;
    let home = TestHome::new();
    home.use_fake_model(&server, "");
    let daemon = DaemonProcess::start_with(&home, &[], |c| {
        c.env("HTTP_PROXY", proxy.url_with_credentials())
            .env("NO_PROXY", "localhost,127.0.0.1");
    });

    let answer = home.ctl_async(&["send", "hello"]).await.ok();
    assert_eq!(answer.trim(), "direct");
    assert_eq!(proxy.heads(), Vec::<String>::new());
    daemon.terminate();
}

#[tokio::test(flavor = "multi_thread")]
async fn https_goes_through_a_connect_tunnel_and_a_refusal_is_a_clear_error() {
    let proxy = RecordingProxy::start().await;
    let home = TestHome::new();
    use_model_at(&home, "https://api.example.test/v1");
    let daemon = DaemonProcess::start_with(&home, &[], |c| {
        c.env("HTTPS_PROXY", proxy.url_with_credentials());
    });

    let out = home.ctl_async(&["send", "hello"]).await;
    let error = out.err();
    assert!(error.contains("cannot connect"), "{error}");
    assert!(error.contains("tunnel"), "{error}");
    let heads = proxy.heads();
    assert!(!heads.is_empty());
    for head in &heads {
        assert!(
            head.starts_with("CONNECT api.example.test:443 HTTP/1.1"),
            "{head}"
        );
        let auth = format!("proxy-authorization: {}", RecordingProxy::EXPECTED_AUTH);
        assert!(head.to_lowercase().contains(&auth.to_lowercase()), "{head}");
    }
    daemon.terminate();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_proxy_other_than_http_is_refused_without_showing_its_password() {
    let home = TestHome::new();
    use_model_at(&home, "https://api.example.test/v1");
    let daemon = DaemonProcess::start_with(&home, &[], |c| {
        c.env("HTTPS_PROXY", "https://user:hunter2@127.0.0.1:9");
    });
    let error = home.ctl_async(&["send", "hello"]).await.err();
    assert!(
        error.contains("proxy https://127.0.0.1: only http:// proxies are supported"),
        "{error}"
    );
    assert!(!error.contains("hunter2"), "{error}");
    daemon.terminate();
}
