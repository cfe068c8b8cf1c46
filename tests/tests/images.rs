//! Images in, end to end through the real daemon: an image attached with `hermesctl send
//! --image` reaches a model that sees as an OpenAI `image_url` part or an Anthropic image block
//! (scaled down when over the limit), is kept once in the session's cache and stored by path
//! only; a text-only model gets the path and looks through `vision_analyze`, answered by the
//! auxiliary vision model; a Telegram photo arrives the same way. Bad input — a non-image, an
//! oversized file, a missing file, an unknown session, a protected path, a private URL — gets a
//! clear error and stores nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use std::{io::Cursor, os::unix::fs::PermissionsExt, path::Path, time::Duration};

use base64::Engine as _;
use hermes_tests::{
    TestHome,
    fake_llm::{FakeLlm, FakeModel, Reply},
    fake_telegram::{Chat, FakeTelegram, User},
    home::StopOnDrop,
    telegram_home,
};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(30);

/// A PNG of `width`x`height` with some structure.
fn png(width: u32, height: u32) -> Vec<u8> {
    let image = image::RgbImage::from_fn(width, height, |x, y| {
        image::Rgb([
            (x * 7 % 256) as u8,
            (y * 5 % 256) as u8,
            ((x ^ y) % 256) as u8,
        ])
    });
    let mut out = Cursor::new(Vec::new());
    image.write_to(&mut out, image::ImageFormat::Png).unwrap();
    out.into_inner()
}

/// A noisy JPEG of `width`x`height` (a photo's worth of detail).
fn photo(width: u32, height: u32) -> Vec<u8> {
    let mut seed = 0x2545_f491_u32;
    let image = image::RgbImage::from_fn(width, height, |x, y| {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        let noise = seed % 64;
        image::Rgb([
            ((x / 8 + noise) % 256) as u8,
            ((y / 8 + noise) % 256) as u8,
            ((x + y) / 16 % 256) as u8,
        ])
    });
    let mut out = Cursor::new(Vec::new());
    image.write_to(&mut out, image::ImageFormat::Jpeg).unwrap();
    out.into_inner()
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn unb64(text: &str) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .unwrap()
}

fn use_anthropic(home: &TestHome, llm: &FakeLlm) {
    let config = std::fs::read_to_string(home.path().join("config.yaml")).unwrap();
    let config = config
        .replace("provider: custom", "provider: anthropic")
        .replace(&llm.openai_base(), &llm.anthropic_base());
    home.write("config.yaml", &config);
}

/// Every file kept under the homes's session caches' `images/` directories.
fn kept_images(home: &TestHome) -> Vec<std::path::PathBuf> {
    let root = home.path().join("cache/tool-results");
    let Ok(sessions) = std::fs::read_dir(&root) else {
        return Vec::new();
    };
    sessions
        .filter_map(|s| std::fs::read_dir(s.unwrap().path().join("images")).ok())
        .flat_map(|files| files.map(|f| f.unwrap().path()))
        .filter(|path| path.extension().is_none_or(|e| e != "description"))
        .collect()
}

/// The database's files, as bytes (the WAL too): what the store holds.
fn database_bytes(home: &TestHome) -> Vec<u8> {
    ["hermesd.db", "hermesd.db-wal"]
        .iter()
        .filter_map(|f| std::fs::read(home.path().join(f)).ok())
        .flatten()
        .collect()
}

/// The OpenAI user message parts of a request body's user messages that carry images.
fn openai_image_urls(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|p| p["type"] == "image_url")
        .map(|p| p["image_url"]["url"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_attached_image_reaches_an_openai_model_and_is_stored_by_path_only() {
    let llm = FakeLlm::start(vec![Reply::text("a pattern"), Reply::text("still it")]).await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(&llm, "model:\n  supports_vision: true\n");
    let work = tempfile::tempdir().unwrap();
    let file = work.path().join("shot.png");
    let bytes = png(64, 48);
    std::fs::write(&file, &bytes).unwrap();
    let out = home
        .ctl_async(&[
            "send",
            "--json",
            "--image",
            file.to_str().unwrap(),
            "what is this",
        ])
        .await
        .json();
    assert_eq!(out["answer"], "a pattern");
    let body = &llm.chat_requests()[0].body;
    let user = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|m| m["role"] == "user")
        .unwrap();
    assert!(
        user["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("what is this"),
        "{user}"
    );
    let url = user["content"][1]["image_url"]["url"].as_str().unwrap();
    assert_eq!(url, format!("data:image/png;base64,{}", b64(&bytes)));

    // Kept once, in the session's cache; the store has the path and never the pixels.
    let kept = kept_images(&home);
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(std::fs::read(&kept[0]).unwrap(), bytes);
    let session = out["session_id"].as_str().unwrap();
    assert!(kept[0].starts_with(home.path().join("cache/tool-results").join(session)));
    let shown = home
        .ctl_async(&["sessions", "show", session, "--json"])
        .await
        .ok();
    assert!(
        shown.contains(&format!("MEDIA:{}", kept[0].display())),
        "{shown}"
    );
    let db = database_bytes(&home);
    let probe = &b64(&bytes)[..40];
    assert!(!db.is_empty());
    assert!(
        !db.windows(probe.len()).any(|w| w == probe.as_bytes()),
        "no base64 in the database"
    );

    // The next turn of the session reads it from the cache again.
    home.ctl_async(&["send", "--session", session, "and now?"])
        .await
        .ok();
    assert_eq!(
        openai_image_urls(&llm.chat_requests()[1].body),
        [url.to_string()]
    );
}

/// Send `file` with a question through a daemon on `llm` configured with `extra`; the image URLs
/// of the one model request, and whether its text names the kept file.
async fn images_sent(llm: &FakeLlm, extra: &str, file: &Path) -> (Vec<String>, bool) {
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(llm, extra);
    let before = llm.chat_requests().len();
    let out = home
        .ctl_async(&[
            "send",
            "--json",
            "--image",
            file.to_str().unwrap(),
            "what is it",
        ])
        .await
        .json();
    assert_eq!(out["answer"], "seen", "{out}");
    let requests = llm.chat_requests();
    assert_eq!(requests.len(), before + 1);
    let body = &requests[before].body;
    let kept = kept_images(&home);
    let named = body
        .to_string()
        .contains(&format!("MEDIA:{}", kept[0].display()));
    (openai_image_urls(body), named)
}

#[tokio::test(flavor = "multi_thread")]
async fn whether_a_model_sees_comes_from_its_endpoint_unless_configured() {
    let work = tempfile::tempdir().unwrap();
    let file = work.path().join("dot.png");
    let bytes = png(16, 16);
    std::fs::write(&file, &bytes).unwrap();
    let url = format!("data:image/png;base64,{}", b64(&bytes));
    let llm = FakeLlm::start(vec![Reply::text("seen"); 6]).await;
    // A turn without images does not ask the endpoint anything.
    let plain = TestHome::new();
    let _stop_plain = StopOnDrop(&plain);
    plain.use_fake_model(&llm, "");
    assert_eq!(
        plain.ctl_async(&["send", "hello"]).await.ok().trim(),
        "seen"
    );
    assert!(llm.lookups().is_empty(), "{:?}", llm.lookups());
    // "fake-model" is in no table: nothing said, it is text-only and gets the path.
    llm.set_models(vec![FakeModel::new("fake-model")]);
    let (urls, named) = images_sent(&llm, "", &file).await;
    assert!(urls.is_empty() && named, "{urls:?}");
    // One daemon asks the listing once, for the context length and the image input together.
    let listings = |llm: &FakeLlm| {
        let lookups = llm.lookups();
        lookups.iter().filter(|r| r.path == "/v1/models").count()
    };
    assert_eq!(listings(&llm), 1);
    // OpenRouter's listing says it takes images.
    llm.set_models(vec![
        FakeModel::new("fake-model").with_input_modalities(&["text", "image"]),
    ]);
    assert_eq!(images_sent(&llm, "", &file).await.0, [url.as_str()]);
    // Ollama's /api/show says so.
    llm.set_models(vec![
        FakeModel::new("fake-model").with_ollama_capabilities(&["completion", "vision"]),
    ]);
    assert_eq!(images_sent(&llm, "", &file).await.0, [url.as_str()]);
    // The setting wins over the endpoint, and agent.image_input_mode over both.
    let (urls, named) = images_sent(&llm, "model:\n  supports_vision: false\n", &file).await;
    assert!(urls.is_empty() && named, "{urls:?}");
    let text_mode = "agent:\n  image_input_mode: text\n";
    let (urls, named) = images_sent(&llm, text_mode, &file).await;
    assert!(urls.is_empty() && named, "{urls:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_large_photo_reaches_an_anthropic_model_scaled_down_as_an_image_block() {
    let llm = FakeLlm::start(vec![Reply::text("a landscape")]).await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(&llm, "model:\n  supports_vision: true\n");
    use_anthropic(&home, &llm);
    let work = tempfile::tempdir().unwrap();
    let file = work.path().join("big.jpg");
    std::fs::write(&file, photo(3000, 2000)).unwrap();
    let sent = home
        .ctl_async(&["send", "--image", file.to_str().unwrap(), "describe"])
        .await
        .ok();
    assert!(sent.contains("a landscape"), "{sent}");
    let body = &llm.chat_requests()[0].body;
    let blocks: Vec<Value> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_array().cloned())
        .flatten()
        .filter(|b| b["type"] == "image")
        .collect();
    assert_eq!(blocks.len(), 1, "{body}");
    assert_eq!(blocks[0]["source"]["type"], "base64");
    assert_eq!(blocks[0]["source"]["media_type"], "image/jpeg");
    let data = unb64(blocks[0]["source"]["data"].as_str().unwrap());
    let scaled = image::load_from_memory(&data).unwrap();
    assert_eq!((scaled.width(), scaled.height()), (1568, 1045));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_text_only_model_gets_a_description_and_can_look_closer_with_vision_analyze() {
    let work = tempfile::tempdir().unwrap();
    let file = work.path().join("chart.png");
    let bytes = png(32, 32);
    std::fs::write(&file, &bytes).unwrap();
    let call = json!({"image_url": file, "question": "what colour dominates?"}).to_string();
    let llm = FakeLlm::start(vec![
        Reply::text("A bar chart titled Q3 sales."),
        Reply::tool_call("vision_analyze", &call),
        Reply::text("mostly green"),
        Reply::text("The chart is mostly green."),
        Reply::text("It is titled Q3 sales."),
    ])
    .await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(&llm, "auxiliary:\n  vision:\n    model: fake-vision\n");
    let out = home
        .ctl_async(&[
            "send",
            "--json",
            "--image",
            file.to_str().unwrap(),
            "look at this",
        ])
        .await
        .json();
    assert!(
        out["answer"].as_str().unwrap().contains("mostly green"),
        "{out}"
    );
    let requests = llm.chat_requests();
    assert_eq!(requests.len(), 4);
    // The auxiliary vision model describes the image first: its own model, the image, no tools.
    let describe = &requests[0];
    assert_eq!(describe.body["model"], "fake-vision");
    assert!(describe.body.get("tools").is_none_or(Value::is_null));
    assert!(
        describe.body["messages"]
            .to_string()
            .contains("Describe this image")
    );
    let sent = [format!("data:image/png;base64,{}", b64(&bytes))];
    assert_eq!(openai_image_urls(&describe.body), sent);
    // The main model: no pixels, the description, the kept file's path and the tool to look with.
    let first = &requests[1];
    assert!(openai_image_urls(&first.body).is_empty(), "text-only");
    let kept = kept_images(&home);
    let text = first.body["messages"].to_string();
    assert!(
        text.contains("The vision model describes it:\\nA bar chart titled Q3 sales."),
        "{text}"
    );
    assert!(text.contains(&format!(
        "vision_analyze with image_url: {}",
        kept[0].display()
    )));
    assert!(first.tool_names().contains(&"vision_analyze".to_string()));
    // vision_analyze asks the auxiliary model the question, with the image.
    let vision = &requests[2];
    assert_eq!(vision.body["model"], "fake-vision");
    assert!(
        vision.body["messages"]
            .to_string()
            .contains("what colour dominates?")
    );
    assert_eq!(openai_image_urls(&vision.body), sent);
    let result = requests[3].tool_results()[0].clone();
    assert!(result.contains("mostly green"), "{result}");
    // The description is kept beside the image: after a restart the next turn sends the same text
    // without asking again.
    let description = std::path::PathBuf::from(format!("{}.description", kept[0].display()));
    let mode = std::fs::metadata(&description)
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    home.ctl_async(&["daemon", "restart"]).await.ok();
    let id = out["session_id"].as_str().unwrap();
    let again = home
        .ctl_async(&["send", "--session", id, "and its title?"])
        .await
        .ok();
    assert!(again.contains("Q3 sales"), "{again}");
    let requests = llm.chat_requests();
    assert_eq!(requests.len(), 5, "no second description");
    let text = requests[4].body["messages"].to_string();
    assert!(text.contains("A bar chart titled Q3 sales."), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn without_an_auxiliary_model_a_seeing_main_model_gets_the_image_from_vision_analyze() {
    let work = tempfile::tempdir().unwrap();
    let file = work.path().join("plot.png");
    let bytes = png(20, 10);
    std::fs::write(&file, &bytes).unwrap();
    let call = json!({"image_url": file, "question": "what is it?"}).to_string();
    let llm = FakeLlm::start(vec![
        Reply::tool_call("vision_analyze", &call),
        Reply::text("a plot"),
    ])
    .await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(&llm, "model:\n  supports_vision: true\n");
    let cwd = work.path().to_str().unwrap();
    home.ctl_async(&["send", "--cwd", cwd, "what is plot.png?"])
        .await
        .ok();
    let requests = llm.chat_requests();
    assert_eq!(requests.len(), 2, "no auxiliary call");
    assert_eq!(
        openai_image_urls(&requests[1].body),
        [format!("data:image/png;base64,{}", b64(&bytes))]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn non_images_oversized_missing_files_and_unknown_sessions_are_refused_storing_nothing() {
    let llm = FakeLlm::start(vec![]).await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    home.use_fake_model(&llm, "model:\n  supports_vision: true\n");
    let work = tempfile::tempdir().unwrap();
    let text = work.path().join("notes.png");
    std::fs::write(&text, "not an image at all").unwrap();
    let huge = work.path().join("huge.png");
    let mut header = png(4, 4);
    header.truncate(33);
    std::fs::write(&huge, &header).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&huge)
        .unwrap()
        .set_len(51 * 1024 * 1024)
        .unwrap();
    let good = work.path().join("good.png");
    std::fs::write(&good, png(8, 8)).unwrap();
    let missing = work.path().join("gone.png");

    let err = |args: Vec<String>| {
        let home = &home;
        async move {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            home.ctl_async(&args).await.err()
        }
    };
    let path = |p: &Path| p.display().to_string();
    let e = err(vec![
        "send".into(),
        "--image".into(),
        path(&text),
        "hi".into(),
    ])
    .await;
    assert!(e.contains("notes.png") && e.contains("not an image"), "{e}");
    let e = err(vec![
        "send".into(),
        "--image".into(),
        path(&huge),
        "hi".into(),
    ])
    .await;
    assert!(e.contains("huge.png") && e.contains("over the"), "{e}");
    let e = err(vec![
        "send".into(),
        "--image".into(),
        path(&missing),
        "hi".into(),
    ])
    .await;
    assert!(e.contains("gone.png") && e.contains("no such file"), "{e}");
    let e = err(vec![
        "send".into(),
        "--session".into(),
        "no-such-session".into(),
        "--image".into(),
        path(&good),
        "hi".into(),
    ])
    .await;
    assert!(e.contains("no-such-session"), "{e}");

    assert!(llm.requests().is_empty(), "no model was asked");
    assert!(kept_images(&home).is_empty(), "nothing kept");
    let sessions = home.ctl_async(&["sessions", "list", "--json"]).await.json();
    assert_eq!(sessions.as_array().map_or(0, Vec::len), 0, "{sessions}");
}

#[tokio::test(flavor = "multi_thread")]
async fn vision_analyze_refuses_protected_paths_private_urls_and_non_images() {
    let work = tempfile::tempdir().unwrap();
    let text = work.path().join("fake.png");
    std::fs::write(&text, "plain text").unwrap();
    let home = TestHome::new();
    let call = |source: String| json!({"image_url": source, "question": "?"}).to_string();
    let llm = FakeLlm::start(vec![
        Reply::tool_call(
            "vision_analyze",
            &call(home.path().join(".env").display().to_string()),
        ),
        Reply::tool_call(
            "vision_analyze",
            &call(home.path().join("hermesd.db").display().to_string()),
        ),
        Reply::tool_call("vision_analyze", &call("http://127.0.0.1:9/cat.png".into())),
        Reply::tool_call("vision_analyze", &call(text.display().to_string())),
        Reply::text("none of them"),
    ])
    .await;
    let _stop = StopOnDrop(&home);
    home.use_fake_model(&llm, "auxiliary:\n  vision:\n    model: fake-vision\n");
    home.write(".env", "OPENAI_API_KEY=sk-secret-value\n");
    home.ctl_async(&["send", "look at these"]).await.ok();
    let requests = llm.chat_requests();
    assert_eq!(requests.len(), 5, "the vision model was never asked");
    let result = |i: usize| requests[i].tool_results().last().cloned().unwrap();
    assert!(result(1).contains("Access denied"), "{}", result(1));
    assert!(result(2).contains("Access denied"), "{}", result(2));
    assert!(result(3).contains("allow_private_urls"), "{}", result(3));
    assert!(result(4).contains("not an image"), "{}", result(4));
    for i in 1..5 {
        assert!(result(i).contains("\"success\":false"), "{}", result(i));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_telegram_photo_reaches_a_model_that_sees_as_an_image() {
    let llm = FakeLlm::start(vec![Reply::text("a fine photo")]).await;
    let bot = FakeTelegram::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    telegram_home::configure(
        &home,
        &llm,
        &bot,
        "model:\n  supports_vision: true\n",
        "TELEGRAM_ALLOWED_USERS=42\n",
    );
    home.ctl_async(&["status"]).await.ok();
    bot.wait_call("setMyCommands", WAIT).await;
    let jpeg = photo(320, 240);
    let ann = User::new(42, "Ann").with_username("ann");
    bot.push_photo(
        &Chat::private(42),
        &ann,
        jpeg.clone(),
        Some("what is this?"),
    );
    bot.wait_message_text(42, |t| t == "a fine photo", WAIT)
        .await;
    let body = &llm.chat_requests()[0].body;
    assert!(body.to_string().contains("what is this?"));
    assert_eq!(
        openai_image_urls(body),
        [format!("data:image/jpeg;base64,{}", b64(&jpeg))]
    );
    assert_eq!(kept_images(&home).len(), 1);
}
