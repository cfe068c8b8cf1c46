use super::*;

const T: Duration = Duration::from_secs(5);

fn refused(policy: UrlPolicy, url: &str) -> String {
    match policy.check_url(url) {
        Ok(d) => panic!("{url} passed as {d:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn private_addresses_need_the_setting_and_metadata_is_never_fetched() {
    let strict = UrlPolicy::new(false);
    let open = UrlPolicy::new(true);
    for url in [
        "http://127.0.0.1/",
        "http://localhost.:80@127.0.0.1:8080/x",
        "http://evil@127.0.0.1/",
        "http://2130706433/",
        "http://0x7f.1/",
        "http://0177.0.0.1/",
        "http://0.0.0.0:8080/",
        "http://0/",
        "http://[::]/",
        "http://[::1]:3000/",
        "http://[::ffff:127.0.0.1]/",
        "http://10.0.0.5/",
        "http://[fd12::1]/",
    ] {
        let text = refused(strict, url);
        assert!(text.starts_with("Blocked: "), "{text}");
        assert!(
            text.contains("security.allow_private_urls: true"),
            "{url}: {text}"
        );
        assert!(open.check_url(url).is_ok(), "{url} with the setting");
    }
    for url in [
        "http://169.254.169.254/latest/meta-data/",
        "http://169.254.170.2/v2/credentials",
        "http://100.100.100.200/",
        "http://[fd00:ec2::254]/",
        "http://[::ffff:169.254.169.254]/",
        "http://2852039166/",
        "http://0xa9.0xfe.0xa9.0xfe/",
        "http://[fe80::1]/",
        "http://metadata.google.internal/computeMetadata/v1/",
        "http://METADATA.google.internal./",
        "http://user@169.254.169.254/",
    ] {
        let text = refused(open, url);
        assert!(text.contains("never fetched"), "{url}: {text}");
        refused(strict, url);
    }
}

#[test]
fn only_http_urls_with_hosts_pass() {
    let open = UrlPolicy::new(true);
    for url in [
        "file:///etc/passwd",
        "ftp://example.com/",
        "gopher://x/",
        "example.com/x",
        "http://256.1.1.1/",
    ] {
        assert!(refused(open, url).starts_with("Blocked: "), "{url}");
    }
    let d = open.check_url("https://Example.com./a?b").unwrap();
    assert_eq!(d.host, Host::Name("example.com".into()));
    assert_eq!((d.port, d.https), (443, true));
    let d = UrlPolicy::new(false)
        .check_url("http://8.8.8.8:8080/")
        .unwrap();
    assert_eq!(d.port, 8080);
}

#[tokio::test]
async fn every_resolved_address_is_judged() {
    let strict = UrlPolicy::new(false);
    let open = UrlPolicy::new(true);
    // `localhost` resolves to loopback on every system: refused by name, after the lookup.
    let d = strict.check_url("http://localhost:9/").unwrap();
    let text = strict.addresses(&d, T).await.unwrap_err().to_string();
    assert!(
        text.contains("localhost (127.0.0.1)") || text.contains("localhost (::1)"),
        "{text}"
    );
    let addrs = open.addresses(&d, T).await.unwrap();
    assert!(
        addrs.iter().all(|a| a.ip().is_loopback() && a.port() == 9),
        "{addrs:?}"
    );
    let literal = open.check_url("http://127.0.0.1:7/").unwrap();
    assert_eq!(
        open.addresses(&literal, T).await.unwrap(),
        vec!["127.0.0.1:7".parse().unwrap()]
    );
}
