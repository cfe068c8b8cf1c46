//! Discord's files, long answers and command settings end to end: an attachment is fetched from
//! the CDN, saved and named to the model (one over the cap is refused, not fetched); a long
//! answer is split within 2,000 characters and code blocks stay whole; the command menu is
//! registered in the guild the settings name, or not at all with sync off.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use std::time::Duration;

use hermes_tests::{
    TestHome, discord_home,
    fake_discord::{FakeDiscord, MAX_CONTENT, Post, User},
    fake_llm::{FakeLlm, Reply},
    home::StopOnDrop,
};

const WAIT: Duration = Duration::from_secs(30);

fn ann() -> User {
    User::new("4242", "Ann")
}

async fn start(home: &TestHome, llm: &FakeLlm, discord: &FakeDiscord, env: &str) {
    let env = format!("DISCORD_ALLOWED_USERS=4242\n{env}");
    discord_home::configure(home, llm, discord, "", &env);
    home.ctl_async(&["status"]).await.ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn an_attachment_is_saved_and_named_and_one_over_the_cap_is_not_fetched() {
    let llm = FakeLlm::start(vec![Reply::text("got it"), Reply::text("too big")]).await;
    let discord = FakeDiscord::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let dm = discord.dm(&ann());
    start(&home, &llm, &discord, "DISCORD_MAX_ATTACHMENT_BYTES=1000\n").await;
    discord.wait_ready(WAIT).await;

    let notes = b"line one\nline two\n";
    discord.push(&Post::new(&dm, &ann(), "read this").file("notes.txt", notes, "text/plain"));
    discord.wait_message(&dm, |t| t == "got it", WAIT).await;
    let sent = llm.requests()[0].body["messages"].to_string();
    assert!(sent.contains("saved at"), "{sent}");
    let path = sent
        .split("saved at ")
        .nth(1)
        .and_then(|rest| rest.split(']').next())
        .unwrap()
        .to_string();
    assert_eq!(std::fs::read(&path).unwrap(), notes, "{path}");

    let big = vec![b'x'; 5000];
    discord.push(&Post::new(&dm, &ann(), "and this").file(
        "big.bin",
        &big,
        "application/octet-stream",
    ));
    discord.wait_message(&dm, |t| t == "too big", WAIT).await;
    let sent = llm.requests()[1].body["messages"].to_string();
    assert!(sent.contains("and this"), "{sent}");
    let fetched = |name: &str| {
        discord.view(|v| {
            v.calls()
                .into_iter()
                .filter(|c| c.path.starts_with("/attachments/") && c.path.ends_with(name))
                .collect::<Vec<_>>()
        })
    };
    let notes_fetches = fetched("notes.txt");
    assert_eq!(notes_fetches.len(), 1);
    assert!(
        !notes_fetches[0].authorized,
        "the bot token never goes to the CDN"
    );
    assert!(
        fetched("big.bin").is_empty(),
        "nothing over the cap is downloaded"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_file_the_answer_names_goes_as_an_attachment() {
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let report = home.work_dir().join("report.csv");
    std::fs::write(&report, "month,total\njan,3\n").unwrap();
    let answer = format!("Here is the report:\nMEDIA:{}", report.display());
    let llm = FakeLlm::start(vec![Reply::text(&answer)]).await;
    let discord = FakeDiscord::start().await;
    let dm = discord.dm(&ann());
    start(&home, &llm, &discord, "").await;
    discord.wait_ready(WAIT).await;
    discord.push(&Post::new(&dm, &ann(), "the report please"));
    let upload = discord
        .wait_until("the report as an attachment", WAIT, |v| {
            v.messages(&dm)
                .into_iter()
                .find(|m| m.files == ["report.csv"])
        })
        .await;
    let bytes = discord.view(|v| v.file(&upload.id, "report.csv")).unwrap();
    assert_eq!(bytes, b"month,total\njan,3\n");
    let shown = discord
        .wait_message(&dm, |t| t.starts_with("Here is the report"), WAIT)
        .await;
    assert!(!shown.content.contains("MEDIA:"), "{}", shown.content);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_long_answer_is_split_within_two_thousand_characters() {
    let paragraph = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. ".repeat(15);
    let code = format!("```rust\n{}```", "let x = 1; // é\n".repeat(80));
    let long = format!("{paragraph}\n\n{paragraph}\n\n{code}\n\n{paragraph}\n\n{paragraph}");
    assert!(long.chars().count() > 2 * MAX_CONTENT);
    let llm = FakeLlm::start(vec![Reply::text(&long)]).await;
    let discord = FakeDiscord::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let dm = discord.dm(&ann());
    start(&home, &llm, &discord, "").await;
    discord.wait_ready(WAIT).await;
    discord.push(&Post::new(&dm, &ann(), "write a lot"));
    let pieces = discord
        .wait_until("the whole answer in pieces", WAIT, |v| {
            let messages = v.messages(&dm);
            let last = messages.last()?;
            let total = messages.len();
            last.content
                .ends_with(&format!("({total}/{total})"))
                .then_some(messages)
        })
        .await;
    assert!(pieces.len() >= 3, "{}", pieces.len());
    for piece in &pieces {
        assert!(
            piece.content.chars().count() <= MAX_CONTENT,
            "{}",
            piece.content.len()
        );
        assert_eq!(
            piece.content.matches("```").count() % 2,
            0,
            "a code block cut in two is closed and reopened: {}",
            piece.content
        );
    }
    let refused = discord.view(|v| v.calls().iter().filter(|c| c.status == Some(400)).count());
    assert_eq!(refused, 0, "Discord refused nothing");
}

#[tokio::test(flavor = "multi_thread")]
async fn commands_go_to_the_named_guild_or_nowhere_with_sync_off() {
    let llm = FakeLlm::start(vec![Reply::text("hi")]).await;
    let discord = FakeDiscord::start().await;
    let guild = discord.guild("Friends");
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    start(
        &home,
        &llm,
        &discord,
        &format!("DISCORD_COMMAND_GUILD_ID={guild}\n"),
    )
    .await;
    discord.wait_ready(WAIT).await;
    let commands = discord.view(|v| v.commands());
    assert_eq!(commands.len(), 1);
    assert_eq!(commands[0].0, guild);

    let quiet = FakeDiscord::start().await;
    let other = TestHome::new();
    let _stop_other = StopOnDrop(&other);
    let dm = quiet.dm(&ann());
    start(&other, &llm, &quiet, "DISCORD_COMMAND_SYNC_POLICY=off\n").await;
    quiet
        .wait_until("a session", WAIT, |v| {
            (v.gateway().sessions == 1).then_some(())
        })
        .await;
    quiet.push(&Post::new(&dm, &ann(), "hello"));
    quiet.wait_message(&dm, |t| t == "hi", WAIT).await;
    assert!(
        quiet.view(|v| v.commands()).is_empty(),
        "nothing registered"
    );
}
