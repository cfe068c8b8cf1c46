//! The browser tools through the real daemon and Debian's chromium, on local pages only: the
//! fake model navigates, types into a form and clicks by ref, reads the greeting the page's
//! script made and its console; navigations to refused addresses (and a redirect to one) are
//! blocked; a killed browser is started again; an idle browser is reaped.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use std::time::Duration;

use hermes_tests::{
    TestHome,
    browser_fixture::{Pages, browser_pids, chromium},
    fake_llm::{FakeLlm, Reply},
    home::StopOnDrop,
    wait,
};
use serde_json::{Value, json};

fn call(name: &str, args: Value) -> Reply {
    Reply::tool_call(name, &args.to_string())
}

/// The tool results the model was shown, in call order (one call per step).
fn results(server: &FakeLlm) -> Vec<Value> {
    let requests = server.requests();
    let mut seen = 0;
    let mut out = Vec::new();
    for request in &requests {
        let results = request.tool_results();
        for text in results.iter().skip(seen) {
            out.push(serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}")));
        }
        seen = seen.max(results.len());
    }
    out
}

async fn send(home: &TestHome) -> Value {
    let cwd = home.path().to_str().unwrap().to_string();
    home.ctl_async(&["send", "--json", "--cwd", &cwd, "go"])
        .await
        .json()
}

/// Another message in conversation `id`.
async fn send_again(home: &TestHome, id: &str) -> Value {
    home.ctl_async(&["send", "--json", "--session", id, "again"])
        .await
        .json()
}

/// Private addresses allowed: the fixture server is on 127.0.0.1.
const LOCAL: &str = "security:\n  allow_private_urls: true\n";

#[tokio::test(flavor = "multi_thread")]
async fn a_form_is_filled_and_clicked_by_ref_and_the_scripted_result_read_back() {
    chromium();
    let pages = Pages::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let server = FakeLlm::start(vec![
        call("browser_navigate", json!({"url": pages.url("/form")})),
        call("browser_type", json!({"ref": "@e1", "text": "Ada"})),
        call("browser_click", json!({"ref": "e2"})),
        call("browser_snapshot", json!({"full": true})),
        call("browser_console", json!({})),
        call(
            "browser_console",
            json!({"expression": "document.getElementById('out').textContent"}),
        ),
        call("browser_click", json!({"ref": "@e99"})),
        Reply::text("done"),
    ])
    .await;
    home.use_fake_model(
        &server,
        &format!("{LOCAL}browser:\n  dialog_policy: auto_dismiss\n"),
    );
    assert_eq!(send(&home).await["answer"], "done");
    let r = results(&server);
    assert_eq!(r.len(), 7, "{r:?}");
    let nav = &r[0];
    assert_eq!(nav["success"], true, "{nav}");
    assert_eq!(nav["title"], "Greeter", "{nav}");
    let snap = nav["snapshot"].as_str().unwrap();
    assert!(snap.contains("heading \"Greeter\""), "{snap}");
    assert!(snap.contains("textbox \"Name\" [ref=e1]"), "{snap}");
    assert!(snap.contains("button \"Greet\" [ref=e2]"), "{snap}");
    assert!(snap.contains("heading \"Greeter\" [level=1]"), "{snap}");
    // Hidden elements are not offered.
    assert!(
        !snap.contains("Hidden") && !snap.contains("Ghost"),
        "{snap}"
    );
    assert_eq!(r[1]["typed"], "Ada", "{}", r[1]);
    assert_eq!(r[2]["clicked"], "@e2", "{}", r[2]);
    let full = r[3]["snapshot"].as_str().unwrap();
    assert!(full.contains("Hello, Ada!"), "{full}");
    // The same elements keep their refs in a later snapshot.
    assert!(full.contains("button \"Greet\" [ref=e2]"), "{full}");
    let console = &r[4];
    let texts: Vec<&str> = console["console_messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["text"].as_str().unwrap())
        .collect();
    assert!(texts.contains(&"page ready"), "{console}");
    assert!(texts.contains(&"greeted Ada"), "{console}");
    // The confirm() was answered by browser.dialog_policy: auto_dismiss.
    assert!(texts.contains(&"confirmed false"), "{console}");
    assert_eq!(console["dialogs"][0]["message"], "Greet Ada?", "{console}");
    assert_eq!(console["dialogs"][0]["handled"], "dismissed", "{console}");
    let errors = console["js_errors"].as_array().unwrap();
    assert!(
        errors
            .iter()
            .any(|e| e["message"].as_str().unwrap().contains("TypeError")),
        "{console}"
    );
    assert_eq!(r[5]["result"], "Hello, Ada!", "{}", r[5]);
    let unknown = r[6]["error"].as_str().unwrap();
    assert!(unknown.contains("unknown ref @e99"), "{unknown}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dialog_waits_for_the_model_and_the_page_is_seen_and_driven_raw() {
    chromium();
    let pages = Pages::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let server = FakeLlm::start(vec![
        call("browser_navigate", json!({"url": pages.url("/form")})),
        call("browser_type", json!({"ref": "@e1", "text": "Ada"})),
        call("browser_click", json!({"ref": "@e2"})),
        call("browser_snapshot", json!({})),
        call("browser_console", json!({"expression": "1 + 1"})),
        call(
            "browser_dialog",
            json!({"action": "accept", "dialog_id": "d-9"}),
        ),
        call("browser_dialog", json!({"action": "accept"})),
        call("browser_console", json!({})),
        call(
            "browser_vision",
            json!({"question": "what is shown?", "annotate": true}),
        ),
        call(
            "browser_cdp",
            json!({"method": "Runtime.evaluate",
                   "params": {"expression": "document.title", "returnByValue": true}}),
        ),
        call("browser_cdp", json!({"method": "Fetch.disable"})),
        call(
            "browser_cdp",
            json!({"method": "Browser.setDownloadBehavior", "params": {"behavior": "allow"}}),
        ),
        call("browser_navigate", json!({"url": pages.url("/files")})),
        call("browser_click", json!({"ref": "@e1"})),
        Reply::text("done"),
    ])
    .await;
    // must_respond is the default, as in Hermes.
    home.use_fake_model(
        &server,
        &format!("{LOCAL}model:\n  supports_vision: true\n"),
    );
    assert_eq!(send(&home).await["answer"], "done");
    let r = results(&server);
    assert_eq!(r.len(), 14, "{r:?}");
    // The click opened a confirm(): the click returned, and the dialog is reported.
    assert_eq!(r[2]["success"], true, "{}", r[2]);
    let pending = &r[2]["pending_dialogs"][0];
    assert_eq!(pending["type"], "confirm", "{}", r[2]);
    assert_eq!(pending["message"], "Greet Ada?", "{}", r[2]);
    let snap = r[3]["snapshot"].as_str().unwrap();
    assert!(
        snap.contains("blocks the page") && snap.contains("browser_dialog"),
        "{snap}"
    );
    let blocked = r[4]["error"].as_str().unwrap();
    assert!(
        blocked.contains("answer it with browser_dialog"),
        "{blocked}"
    );
    let wrong = r[5]["error"].as_str().unwrap();
    assert!(wrong.contains("no dialog d-9"), "{wrong}");
    assert_eq!(r[6]["success"], true, "{}", r[6]);
    assert_eq!(r[6]["dialog"]["message"], "Greet Ada?", "{}", r[6]);
    assert!(r[6].get("pending_dialogs").is_none(), "{}", r[6]);
    let texts: Vec<&str> = r[7]["console_messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["text"].as_str().unwrap())
        .collect();
    assert!(texts.contains(&"confirmed true"), "{:?}", r[7]);
    // The screenshot is a PNG in the session's result cache, and reaches a model that sees.
    let path = r[8]["screenshot_path"].as_str().unwrap();
    let png = std::fs::read(path).unwrap();
    assert!(png.starts_with(b"\x89PNG"), "{path}");
    assert!(path.contains("tool-results"), "{path}");
    let seen = server.chat_requests()[9].body.to_string();
    assert!(
        seen.contains("data:image/png;base64,"),
        "no image in the next request"
    );
    assert_eq!(r[9]["result"]["result"]["value"], "Greeter", "{}", r[9]);
    let fetch = r[10]["error"].as_str().unwrap();
    assert!(fetch.contains("URL rule"), "{fetch}");
    let browser = r[11]["error"].as_str().unwrap();
    assert!(browser.contains("not allowed"), "{browser}");
    // A download lands in the session's own result directory, under a name the page did not
    // choose (its "../../report.csv" goes nowhere else).
    assert_eq!(r[13]["success"], true, "{}", r[13]);
    let results_dir = home.path().join("cache/tool-results");
    let saved = wait::until("the download is saved", Duration::from_secs(20), || async {
        let session = std::fs::read_dir(&results_dir).ok()?.next()?.ok()?.path();
        let file = std::fs::read_dir(session.join("downloads"))
            .ok()?
            .next()?
            .ok()?
            .path();
        let text = std::fs::read_to_string(&file).ok()?;
        text.contains("Rhine").then_some(file)
    })
    .await;
    assert!(!saved.to_string_lossy().contains("report.csv"), "{saved:?}");
    assert!(!home.path().join("report.csv").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn navigations_to_refused_addresses_and_redirects_to_them_are_blocked() {
    chromium();
    let pages = Pages::start().await;
    // Without allow_private_urls the loopback fixture itself is refused, before any browser.
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let server = FakeLlm::start(vec![
        call("browser_navigate", json!({"url": pages.url("/form")})),
        call(
            "browser_navigate",
            json!({"url": "http://169.254.169.254/latest/meta-data/"}),
        ),
        call("browser_navigate", json!({"url": "file:///etc/passwd"})),
        call("browser_snapshot", json!({})),
        Reply::text("refused"),
    ])
    .await;
    home.use_fake_model(&server, "");
    assert_eq!(send(&home).await["answer"], "refused");
    let r = results(&server);
    let loopback = r[0]["error"].as_str().unwrap();
    assert!(loopback.starts_with("Blocked:"), "{loopback}");
    assert!(loopback.contains("allow_private_urls"), "{loopback}");
    let metadata = r[1]["error"].as_str().unwrap();
    assert!(metadata.starts_with("Blocked:"), "{metadata}");
    assert!(metadata.contains("never fetched"), "{metadata}");
    assert!(
        r[2]["error"].as_str().unwrap().starts_with("Blocked:"),
        "{}",
        r[2]
    );
    assert!(
        r[3]["error"]
            .as_str()
            .unwrap()
            .contains("browser_navigate first"),
        "{}",
        r[3]
    );
    assert!(
        browser_pids(home.path()).is_empty(),
        "no browser was needed"
    );

    // With private addresses allowed, a redirect to the metadata address is still refused by
    // the browser's request guard, and nothing of it can be read.
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let server = FakeLlm::start(vec![
        call(
            "browser_navigate",
            json!({"url": pages.url("/to-metadata")}),
        ),
        call("browser_console", json!({"expression": "location.href"})),
        // A page's WebSocket is not paused by the request guard: the browser's own proxy
        // judges its connection.
        call("browser_navigate", json!({"url": pages.url("/ws-probe")})),
        Reply::text("refused"),
    ])
    .await;
    home.use_fake_model(&server, LOCAL);
    assert_eq!(send(&home).await["answer"], "refused");
    let r = results(&server);
    let redirect = r[0]["error"].as_str().unwrap();
    assert!(redirect.starts_with("Blocked:"), "{redirect}");
    assert!(redirect.contains("169.254.169.254"), "{redirect}");
    assert_eq!(r[1]["result"], "about:blank", "{}", r[1]);
    assert_eq!(r[2]["success"], true, "{}", r[2]);
    let log = home.path().join("logs/hermesd.log");
    wait::until(
        "the proxy refuses the page's WebSocket to the metadata address",
        Duration::from_secs(20),
        || async {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            text.lines()
                .any(|l| l.contains("browser connection refused") && l.contains("169.254.169.254"))
                .then_some(())
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_killed_browser_is_started_again_and_an_idle_one_is_reaped() {
    chromium();
    let pages = Pages::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let server = FakeLlm::start(vec![
        call("browser_navigate", json!({"url": pages.url("/images")})),
        Reply::text("opened"),
    ])
    .await;
    home.use_fake_model(
        &server,
        &format!("{LOCAL}browser:\n  inactivity_timeout: 3\n"),
    );
    let out = send(&home).await;
    assert_eq!(out["answer"], "opened", "{out}");
    let session = out["session_id"].as_str().unwrap().to_string();
    let first = browser_pids(home.path());
    assert_eq!(
        first.len(),
        1,
        "one browser for the conversation: {first:?}"
    );
    // Killed from outside: the next call says so, a navigation starts a new one.
    nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(first[0] as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    wait::until(
        "the killed browser is gone",
        Duration::from_secs(10),
        || async {
            (!std::path::Path::new(&format!("/proc/{}/cmdline", first[0])).exists()
                || browser_pids(home.path()).is_empty())
            .then_some(())
        },
    )
    .await;
    server.push(call("browser_get_images", json!({})));
    server.push(call(
        "browser_navigate",
        json!({"url": pages.url("/images")}),
    ));
    server.push(call("browser_get_images", json!({})));
    server.push(Reply::text("again"));
    let out = send_again(&home, &session).await;
    assert_eq!(out["answer"], "again", "{out}");
    let r = results(&server);
    let gone = r[1]["error"].as_str().unwrap_or_default();
    assert!(gone.contains("browser_navigate"), "{}", r[1]);
    assert_eq!(r[2]["success"], true, "{}", r[2]);
    assert_eq!(r[3]["count"], 2, "{}", r[3]);
    assert_eq!(r[3]["images"][0]["alt"], "a dot", "{}", r[3]);
    let second = browser_pids(home.path());
    assert_eq!(second.len(), 1, "{second:?}");
    assert_ne!(second, first);
    // Idle past browser.inactivity_timeout: the reaper ends the process, then its profile.
    let profiles = home.path().join("cache/browser");
    wait::until(
        "the idle browser and its profile are gone",
        Duration::from_secs(30),
        || async {
            let left = std::fs::read_dir(&profiles).map(|d| d.count()).unwrap_or(0);
            (browser_pids(home.path()).is_empty() && left == 0).then_some(())
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_text_only_model_gets_the_screenshot_described_by_the_auxiliary_vision_model() {
    chromium();
    let pages = Pages::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let server = FakeLlm::start(vec![
        call("browser_navigate", json!({"url": pages.url("/form")})),
        call("browser_vision", json!({"question": "is there a button?"})),
        // The auxiliary vision model's answer.
        Reply::text("A form with a Greet button."),
        Reply::text("done"),
    ])
    .await;
    home.use_fake_model(
        &server,
        &format!("{LOCAL}auxiliary:\n  vision:\n    model: fake-vision\n"),
    );
    assert_eq!(send(&home).await["answer"], "done");
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 4);
    let vision = &requests[2].body;
    assert_eq!(vision["model"], "fake-vision");
    let asked = vision["messages"].to_string();
    assert!(asked.contains("is there a button?"), "{asked}");
    assert!(
        asked.contains("data:image/png;base64,"),
        "the screenshot is sent"
    );
    let r = results(&server);
    assert_eq!(r[1]["analysis"], "A form with a Greet button.", "{}", r[1]);
    // The main model, text-only, got no image.
    assert!(!requests[3].body.to_string().contains("data:image/png"));
}

#[tokio::test(flavor = "multi_thread")]
async fn browser_cdp_hands_a_page_only_files_of_the_workspace() {
    chromium();
    let pages = Pages::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.write(".env", "OPENAI_API_KEY=sk-not-for-pages-1234567890\n");
    let work = tempfile::tempdir_in("/tmp").unwrap();
    std::fs::write(work.path().join("notes.txt"), "notes").unwrap();
    std::os::unix::fs::symlink(home.path().join(".env"), work.path().join("innocent.txt")).unwrap();
    let env = home.path().join(".env").display().to_string();
    let drag = |files: Value| {
        call(
            "browser_cdp",
            json!({"method": "Input.dispatchDragEvent",
                   "params": {"type": "dragEnter", "x": 10, "y": 10,
                              "data": {"items": [], "files": files, "dragOperationsMask": 1}}}),
        )
    };
    let server = FakeLlm::start(vec![
        call("browser_navigate", json!({"url": pages.url("/form")})),
        drag(json!(["notes.txt"])),
        drag(json!([env])),
        drag(json!(["innocent.txt"])),
        drag(json!(["."])),
        drag(json!(["/etc/hostname"])),
        Reply::text("done"),
    ])
    .await;
    home.use_fake_model(&server, LOCAL);
    let cwd = work.path().to_str().unwrap().to_string();
    let out = home
        .ctl_async(&["send", "--json", "--cwd", &cwd, "go"])
        .await
        .json();
    assert_eq!(out["answer"], "done");
    let r = results(&server);
    assert_eq!(r[1]["success"], true, "a workspace file: {}", r[1]);
    for (i, named) in [
        (2, ".env"),
        (3, "innocent.txt"),
        (4, "not a file"),
        (5, "/etc/hostname"),
    ] {
        let refused = r[i]["error"].as_str().unwrap_or_else(|| panic!("{}", r[i]));
        assert!(refused.contains(named), "{refused}");
    }
}
