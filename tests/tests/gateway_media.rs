//! Files an answer names with `MEDIA:` tags, end to end through the real daemon, the fake model
//! and the fake Bot API: a workspace file goes to the chat as a document after the answer, the
//! tags leave the text shown, and what the agent may not read — the Hermes `.env`, a link to it,
//! a system file — is not sent but named in a note.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use std::time::Duration;

use hermes_tests::{
    TestHome,
    fake_llm::{FakeLlm, Reply},
    fake_telegram::{Chat, FakeTelegram, User},
    home::StopOnDrop,
    telegram_home,
};

const WAIT: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread")]
async fn an_answers_files_go_to_the_chat_and_secrets_do_not() {
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let work = home.work_dir();
    let report = work.join("report.csv");
    std::fs::write(&report, "month,total\njan,3\n").unwrap();
    let link = work.join("innocent.txt");
    std::os::unix::fs::symlink(home.path().join(".env"), &link).unwrap();
    let answer = format!(
        "Here is the report:\nMEDIA:{}\nand `MEDIA:{}` and MEDIA:{} and MEDIA:/etc/hostname",
        report.display(),
        home.path().join(".env").display(),
        link.display(),
    );
    let llm = FakeLlm::start(vec![Reply::text(&answer)]).await;
    let bot = FakeTelegram::start().await;
    telegram_home::configure(&home, &llm, &bot, "", "TELEGRAM_ALLOWED_USERS=42\n");
    home.ctl_async(&["status"]).await.ok();

    bot.push_text(
        &Chat::private(42),
        &User::new(42, "Ann"),
        "the report please",
    );
    let upload = bot
        .wait_until("the report as a document", WAIT, |view| {
            view.uploads(42)
                .into_iter()
                .find(|u| u.method == "sendDocument")
        })
        .await;
    assert_eq!(upload.file_name, "report.csv");
    assert_eq!(&upload.bytes[..], b"month,total\njan,3\n");
    let note = bot
        .wait_message_text(42, |text| text.starts_with("⚠️ Not sent"), WAIT)
        .await;
    for name in [".env", "innocent.txt", "hostname"] {
        assert!(note.text.contains(name), "{name} named: {}", note.text);
    }
    let shown = bot
        .wait_message_text(42, |text| text.starts_with("Here is the report"), WAIT)
        .await;
    assert!(!shown.text.contains("MEDIA:"), "{}", shown.text);
    let sent: Vec<String> =
        bot.view(|v| v.uploads(42).iter().map(|u| u.file_name.clone()).collect());
    assert_eq!(sent, ["report.csv"], "only the report went");
}
