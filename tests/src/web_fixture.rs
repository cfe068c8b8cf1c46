//! A local web for the web tools' tests: real-world-shaped pages (an article with navigation,
//! ads and a footer, a table and code; a page in windows-1252; a huge page; a PDF), redirect
//! chains (within the server, into 127.0.0.1, into 169.254.169.254, a loop), and fake search
//! APIs (SearXNG, Brave, Tavily, Exa, DuckDuckGo's HTML page) that check their keys and record
//! the queries they were sent.

use std::{
    net::SocketAddr,
    sync::{Arc, Mutex},
};

use axum::{
    Json, Router,
    extract::{Path, RawQuery, State},
    http::{HeaderMap, StatusCode, header},
    response::{IntoResponse, Redirect, Response},
    routing::{get, post},
};
use serde_json::{Value, json};

/// The keys the fake APIs accept.
pub const BRAVE_KEY: &str = "brave-test-key";
pub const TAVILY_KEY: &str = "tvly-test-key";
pub const EXA_KEY: &str = "exa-test-key";

/// A running fixture server; dropped, it stops.
pub struct WebFixture {
    pub addr: SocketAddr,
    queries: Arc<Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for WebFixture {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl WebFixture {
    pub async fn start() -> Self {
        let queries = Arc::new(Mutex::new(Vec::new()));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the fixture server");
        let addr = listener.local_addr().expect("its address");
        let app = Router::new()
            .route("/article", get(|| async { html(ARTICLE.to_string()) }))
            .route("/latin1", get(latin1))
            .route("/huge", get(|| async { html(huge_article(1_500_000)) }))
            .route("/paper.pdf", get(pdf))
            .route(
                "/image.png",
                get(|| async {
                    (
                        [(header::CONTENT_TYPE, "image/png")],
                        b"\x89PNG\r\n".to_vec(),
                    )
                }),
            )
            .route("/chain/{n}", get(chain))
            .route("/to-loopback", get(to_loopback))
            .route(
                "/to-metadata",
                get(|| async { Redirect::to("http://169.254.169.254/latest/meta-data/") }),
            )
            .route(
                "/to-metadata-decimal",
                get(|| async { Redirect::to("http://2852039166/") }),
            )
            .route("/loop", get(|| async { Redirect::to("/loop") }))
            .route("/searxng/search", get(searxng))
            .route("/brave/res/v1/web/search", get(brave))
            .route("/tavily/search", post(tavily))
            .route("/exa/search", post(exa))
            .route("/ddg/html/", get(ddg))
            .with_state(Fixture {
                queries: queries.clone(),
                addr,
            });
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self {
            addr,
            queries,
            task,
        }
    }

    /// `http://127.0.0.1:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// The queries the fake search APIs were sent, as `<backend>: <query>`.
    pub fn queries(&self) -> Vec<String> {
        self.queries.lock().expect("queries").clone()
    }
}

#[derive(Clone)]
struct Fixture {
    queries: Arc<Mutex<Vec<String>>>,
    addr: SocketAddr,
}

impl Fixture {
    fn record(&self, backend: &str, query: &str) {
        self.queries
            .lock()
            .expect("queries")
            .push(format!("{backend}: {query}"));
    }
}

fn html(body: String) -> Response {
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response()
}

async fn latin1() -> Response {
    // windows-1252 with the charset only in the page: "Café crème – 20 €".
    let mut body = b"<html><head><meta charset=\"windows-1252\"><title>Caf\xe9</title></head><body><article><h1>Caf\xe9 cr\xe8me</h1>".to_vec();
    for _ in 0..5 {
        body.extend_from_slice(b"<p>Un caf\xe9 cr\xe8me co\xfbte 20 \x80 \x96 et c'est tr\xe8s bon, disent les habitu\xe9s du quartier depuis des ann\xe9es.</p>");
    }
    body.extend_from_slice(b"</article></body></html>");
    ([(header::CONTENT_TYPE, "text/html")], body).into_response()
}

async fn pdf() -> Response {
    (
        [(header::CONTENT_TYPE, "application/pdf")],
        minimal_pdf("Quarterly results grew by seven percent"),
    )
        .into_response()
}

async fn chain(Path(n): Path<u32>) -> Response {
    if n == 0 {
        Redirect::to("/article").into_response()
    } else {
        Redirect::to(&format!("/chain/{}", n - 1)).into_response()
    }
}

async fn to_loopback(State(f): State<Fixture>) -> Response {
    Redirect::to(&format!("http://127.0.0.1:{}/article", f.addr.port())).into_response()
}

async fn searxng(State(f): State<Fixture>, RawQuery(q): RawQuery) -> Response {
    let get = |k: &str| param(&q, k);
    if get("format") != "json" {
        return (StatusCode::BAD_REQUEST, "format=json expected").into_response();
    }
    f.record("searxng", &get("q"));
    Json(json!({"query": get("q"), "results": [
        {"title": "Second", "url": "https://two.example/", "content": "less relevant", "score": 1.0},
        {"title": "First", "url": "https://one.example/", "content": "most relevant", "score": 3.5},
        {"title": "Third", "url": "https://three.example/", "content": "least", "score": 0.2}
    ]}))
    .into_response()
}

async fn brave(State(f): State<Fixture>, headers: HeaderMap, RawQuery(q): RawQuery) -> Response {
    if headers
        .get("x-subscription-token")
        .and_then(|v| v.to_str().ok())
        != Some(BRAVE_KEY)
    {
        return (StatusCode::UNAUTHORIZED, "bad token").into_response();
    }
    let query = param(&q, "q");
    f.record("brave", &query);
    Json(json!({"web": {"results": [
        {"title": "Brave hit", "url": "https://brave.example/a", "description": "from <strong>Brave</strong>"}
    ]}}))
    .into_response()
}

async fn tavily(State(f): State<Fixture>, Json(body): Json<Value>) -> Response {
    if body["api_key"] != TAVILY_KEY {
        return (
            StatusCode::UNAUTHORIZED,
            Json(json!({"detail": {"error": "Unauthorized: missing or invalid API key."}})),
        )
            .into_response();
    }
    f.record("tavily", body["query"].as_str().unwrap_or_default());
    let n = body["max_results"].as_u64().unwrap_or(5);
    let results: Vec<Value> = (1..=n.min(30))
        .map(|i| json!({"title": format!("Tavily {i}"), "url": format!("https://tavily.example/{i}"), "content": "x".repeat(5000), "score": 0.9}))
        .collect();
    Json(json!({"query": body["query"], "results": results})).into_response()
}

async fn exa(State(f): State<Fixture>, headers: HeaderMap, Json(body): Json<Value>) -> Response {
    if headers.get("x-api-key").and_then(|v| v.to_str().ok()) != Some(EXA_KEY) {
        return (StatusCode::UNAUTHORIZED, "bad key").into_response();
    }
    f.record("exa", body["query"].as_str().unwrap_or_default());
    Json(json!({"results": [
        {"title": "Exa hit", "url": "https://exa.example/p", "highlights": ["first highlight", "second"]}
    ]}))
    .into_response()
}

async fn ddg(State(f): State<Fixture>, RawQuery(q): RawQuery) -> Response {
    let query = param(&q, "q");
    f.record("ddgs", &query);
    html(r#"<html><body><div class="results">
      <div class="result result--ad"><a class="result__a" href="https://ads.example/">Sponsored</a></div>
      <div class="result results_links web-result"><h2 class="result__title"><a class="result__a"
        href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fwww.rust-lang.org%2F&amp;rut=abc">Rust <b>Programming</b> Language</a></h2>
        <a class="result__snippet" href="//duckduckgo.com/l/?uddg=x">A language empowering everyone.</a></div>
      <div class="result results_links web-result"><h2><a class="result__a" href="https://doc.rust-lang.org/book/">The Book</a></h2>
        <a class="result__snippet">Learn Rust.</a></div>
    </div></body></html>"#.to_string())
}

/// The decoded value of `key` in a query string.
fn param(query: &Option<String>, key: &str) -> String {
    let Some(value) = query
        .as_deref()
        .unwrap_or_default()
        .split('&')
        .find_map(|pair| pair.strip_prefix(&format!("{key}=")))
    else {
        return String::new();
    };
    let bytes = value.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("zz");
                out.push(u8::from_str_radix(hex, 16).unwrap_or(b'?'));
                i += 3;
                continue;
            }
            b'+' => out.push(b' '),
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A one-page PDF whose text is `text`, in Helvetica (a standard font needs no embedding).
pub fn minimal_pdf(text: &str) -> Vec<u8> {
    let stream = format!("BT /F1 18 Tf 72 720 Td ({text}) Tj ET");
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_string(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_string(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>".to_string(),
        format!("<< /Length {} >>\nstream\n{stream}\nendstream", stream.len()),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>".to_string(),
    ];
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, object) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n{object}\nendobj\n", i + 1).as_bytes());
    }
    let xref = out.len();
    out.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
    );
    for offset in offsets {
        out.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}

/// An article page of about `bytes` bytes: navigation, ads and a footer around many sections.
pub fn huge_article(bytes: usize) -> String {
    let mut body = String::with_capacity(bytes + 4096);
    body.push_str(ARTICLE_HEAD);
    let mut i = 0;
    while body.len() < bytes {
        i += 1;
        body.push_str(&format!(
            "<h2>Section {i}</h2><p>Paragraph {i} of the long report explains, in plain words, how \
             the measurements were taken, which instruments were used and why the results of \
             run {i} differ from the ones before it.</p><ul><li>point {i}a</li><li>point {i}b</li></ul>\n"
        ));
    }
    body.push_str("<p>THE END OF THE REPORT</p>");
    body.push_str(ARTICLE_TAIL);
    body
}

const ARTICLE_HEAD: &str = r#"<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<title>Measuring rivers | The Example Times</title>
<script>window.tracker = {id: "UA-123"};</script><style>body{font-family:serif}</style></head>
<body><header class="site-header"><nav class="main-nav"><ul><li><a href="/">Home</a></li>
<li><a href="/world">World</a></li><li><a href="/sport">Sport</a></li><li><a href="/subscribe">Subscribe now</a></li></ul></nav></header>
<div class="ad-banner advertisement" id="ad-top">BUY CHEAP WIDGETS TODAY</div>
<main><article class="post"><h1>Measuring rivers</h1>"#;

const ARTICLE_TAIL: &str = r#"</article></main>
<aside class="sidebar"><div class="ad sponsored">SPONSORED: Win a cruise</div><h3>Most read</h3><ul><li><a href="/x">Celebrity gossip</a></li></ul></aside>
<footer class="site-footer"><p>Copyright 2026 The Example Times. All rights reserved.</p><a href="/privacy">Privacy policy</a></footer>
</body></html>"#;

/// The article: headings, paragraphs, a list, a link, a table and code among the boilerplate.
pub const ARTICLE: &str = r#"<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<title>Measuring rivers | The Example Times</title>
<script>window.tracker = {id: "UA-123"};</script><style>body{font-family:serif}</style></head>
<body><header class="site-header"><nav class="main-nav"><ul><li><a href="/">Home</a></li>
<li><a href="/world">World</a></li><li><a href="/sport">Sport</a></li><li><a href="/subscribe">Subscribe now</a></li></ul></nav></header>
<div class="ad-banner advertisement" id="ad-top">BUY CHEAP WIDGETS TODAY</div>
<main><article class="post"><h1>Measuring rivers</h1>
<p class="byline">By Ada Hydro</p>
<p>Hydrologists measure the flow of a river by combining the area of a cross-section with the
speed of the water through it. The method is old, but modern sensors have made it far more precise,
and the data now feeds flood warnings across the whole valley every fifteen minutes.</p>
<h2>The stations</h2>
<p>Each gauging station records the water level continuously. A rating curve, fitted from
occasional manual measurements, turns that level into a discharge. The curve has to be checked
after every large flood, because the river bed moves and the old relation no longer holds.</p>
<ul><li>Upstream station at the old mill</li><li>Midstream station under the rail bridge</li><li>Estuary station at the harbour</li></ul>
<p>More on the method in <a href="/methods/rating-curves">our guide to rating curves</a>, which explains the
fitting step by step with worked examples from the valley's own stations.</p>
<h2>Last week's readings</h2>
<table><thead><tr><th>Station</th><th>Level (m)</th><th>Flow (m³/s)</th></tr></thead>
<tbody><tr><td>Mill</td><td>1.42</td><td>37.5</td></tr><tr><td>Bridge</td><td>2.08</td><td>61.2</td></tr><tr><td>Harbour</td><td>3.75</td><td>88.9</td></tr></tbody></table>
<h2>Computing the discharge</h2>
<p>The computation itself is short. Given the level, the fitted curve gives the flow, and the
daily mean is the average of those values over the day's readings:</p>
<pre><code>def discharge(level, a=12.1, b=1.63, h0=0.2):
    return a * (level - h0) ** b
</code></pre>
<p>Engineers at the agency say the new sensors cut the error of the estimates by half, and that
the next step is to publish the readings as open data for anyone to use.</p>
</article></main>
<aside class="sidebar"><div class="ad sponsored">SPONSORED: Win a cruise</div><h3>Most read</h3><ul><li><a href="/x">Celebrity gossip</a></li></ul></aside>
<footer class="site-footer"><p>Copyright 2026 The Example Times. All rights reserved.</p><a href="/privacy">Privacy policy</a></footer>
</body></html>"#;
