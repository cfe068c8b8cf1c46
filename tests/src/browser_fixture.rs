//! Local pages for the browser tests and bench, served by axum on 127.0.0.1 (no outside
//! network): a form whose button asks to confirm, writes a greeting from script, logs and
//! throws; a page of many elements; images; a redirect to the cloud metadata address. Also where the browser
//! is: `HERMESD_TEST_CHROMIUM` (set by `scripts/test`), else `chromium` on PATH; a missing
//! browser fails the test with the fix.

use std::{net::SocketAddr, path::PathBuf};

use axum::{
    Router,
    http::Uri,
    response::{Html, IntoResponse, Redirect},
    routing::get,
};

const FORM: &str = r#"<!doctype html><html><head><title>Greeter</title></head><body>
<h1>Greeter</h1>
<label for="name">Name</label> <input id="name" type="text">
<button id="greet" onclick="greet()">Greet</button>
<p id="out"></p>
<button hidden>Hidden</button><div style="display:none"><a href="/x">Ghost</a></div>
<script>
console.log('page ready');
// A page cannot reach the refs: the snapshot keeps them in an isolated world.
window.__hermesd = { els: new Map([[2, { deref: () => document.body }]]), ids: new WeakMap() };
function greet() {
  const n = document.getElementById('name').value;
  console.log('confirmed ' + confirm('Greet ' + n + '?'));
  document.getElementById('out').textContent = 'Hello, ' + n + '!';
  console.error('greeted ' + n);
  null.boom();
}
</script></body></html>"#;

/// A one-pixel PNG.
const PIXEL: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x00, 0x01, 0x00, 0x00,
    0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d, 0xb4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae,
    0x42, 0x60, 0x82,
];

/// A page of `n` interactive elements (links, buttons and inputs in turn) with some text.
pub fn big_page(n: usize) -> String {
    let mut html = String::from("<!doctype html><title>Big</title><h1>Many elements</h1>\n");
    for i in 0..n {
        match i % 3 {
            0 => html.push_str(&format!("<p>Item {i} <a href=\"#i{i}\">link {i}</a></p>\n")),
            1 => html.push_str(&format!("<button>button {i}</button>\n")),
            _ => html.push_str(&format!(
                "<input aria-label=\"field {i}\" value=\"v{i}\">\n"
            )),
        }
    }
    html
}

/// `n` of a `?n=…` query.
fn count(uri: &Uri) -> Option<usize> {
    uri.query()?
        .split('&')
        .find_map(|pair| pair.strip_prefix("n=")?.parse().ok())
}

/// The fixture server; it stops when dropped.
pub struct Pages {
    pub addr: SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Pages {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Pages {
    pub async fn start() -> Self {
        let app = Router::new()
            .route("/form", get(|| async { Html(FORM) }))
            .route(
                "/big",
                get(|uri: Uri| async move { Html(big_page(count(&uri).unwrap_or(1000))) }),
            )
            .route(
                "/images",
                get(|| async {
                    Html("<!doctype html><title>Pictures</title><img src=\"/pixel.png\" alt=\"a dot\">\
                          <img src=\"/pixel.png?2\" alt=\"\">")
                }),
            )
            .route(
                "/pixel.png",
                get(|| async { ([("content-type", "image/png")], PIXEL).into_response() }),
            )
            .route(
                "/ws-probe",
                get(|| async {
                    Html("<!doctype html><title>Probe</title><script>\
                          new WebSocket('ws://169.254.169.254:80/');</script>")
                }),
            )
            .route(
                "/files",
                get(|| async {
                    Html("<!doctype html><title>Files</title>\
                          <a href=\"/report.csv\">the report</a>")
                }),
            )
            .route(
                "/report.csv",
                get(|| async {
                    (
                        [
                            ("content-type", "text/csv"),
                            ("content-disposition", "attachment; filename=\"../../report.csv\""),
                        ],
                        "river,level\nRhine,2.08\n",
                    )
                        .into_response()
                }),
            )
            .route(
                "/to-metadata",
                get(|| async { Redirect::temporary("http://169.254.169.254/latest/meta-data/") }),
            );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self { addr, task }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

/// The browser the tests drive; panics with the fix when there is none.
pub fn chromium() -> PathBuf {
    if let Some(path) = std::env::var_os("HERMESD_TEST_CHROMIUM") {
        let path = PathBuf::from(path);
        assert!(
            path.is_file(),
            "HERMESD_TEST_CHROMIUM={} is not a file: run the tests with scripts/test, which \
             installs Debian's chromium",
            path.display()
        );
        let on_path = hermesd::browser::find_executable(std::env::var_os("PATH").as_deref());
        assert!(
            on_path.is_some(),
            "HERMESD_TEST_CHROMIUM={} but no browser is on PATH, where the daemon looks",
            path.display()
        );
        return path;
    }
    hermesd::browser::find_executable(std::env::var_os("PATH").as_deref()).unwrap_or_else(|| {
        panic!(
            "no browser for the browser tests: run them with scripts/test (it installs Debian's \
             chromium and sets HERMESD_TEST_CHROMIUM) or `apt-get install chromium`"
        )
    })
}

/// The pids of the browsers whose profile lies under `home` (the daemon's `cache/browser`).
pub fn browser_pids(home: &std::path::Path) -> Vec<u32> {
    let needle = format!("--user-data-dir={}", home.join("cache/browser").display());
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
            let cmdline = String::from_utf8_lossy(&cmdline);
            // The browser itself, not its renderers and helpers (which carry --type=).
            (cmdline.contains(&needle) && !cmdline.contains("--type=")).then_some(pid)
        })
        .collect()
}
