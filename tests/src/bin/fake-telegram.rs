//! The fake Telegram Bot API server for manual runs:
//! `cargo run -p hermes-tests --bin fake-telegram -- [--port N] [--chat ID]`.
//! Prints its base URLs and token, logs each request to stderr, and serves until Ctrl-C. Each
//! line read from stdin is pushed as a text message from a user in the private chat `--chat`
//! (default 1001), so a bot pointed at it can be talked to by hand.

use std::error::Error;

use hermes_tests::fake_telegram::{Chat, FakeTelegram, User};

const USAGE: &str = "usage: fake-telegram [--port N] [--chat ID]";

/// Command-line options.
struct Options {
    port: u16,
    chat: i64,
}

fn parse_args() -> Result<Options, Box<dyn Error>> {
    let mut args = std::env::args().skip(1);
    let mut options = Options {
        port: 0,
        chat: 1001,
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--port" => options.port = args.next().ok_or(USAGE)?.parse()?,
            "--chat" => options.chat = args.next().ok_or(USAGE)?.parse()?,
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other}\n{USAGE}").into()),
        }
    }
    Ok(options)
}

/// Pushes each stdin line as a message from the chat's user (a thread: stdin blocks).
fn push_lines(server: FakeTelegram, chat_id: i64) {
    let chat = Chat::private(chat_id);
    let user = User::new(chat_id, "Tester").with_username("tester");
    for line in std::io::stdin().lines() {
        let Ok(line) = line else { return };
        if !line.trim().is_empty() {
            let update_id = server.push_text(&chat, &user, &line);
            eprintln!("pushed update {update_id}: {line}");
        }
    }
}

/// Logs every request as it arrives.
async fn log_calls(server: FakeTelegram) {
    let mut changes = server.changes();
    let mut seen = 0;
    loop {
        changes.borrow_and_update();
        let calls = server.calls();
        for call in calls.iter().skip(seen) {
            eprintln!("{} {}", call.method, call.params);
        }
        seen = calls.len();
        if changes.changed().await.is_err() {
            return;
        }
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let options = parse_args()?;
    let server = FakeTelegram::start_on_port(options.port).await?;
    println!("Bot API base URL: {}", server.base_url());
    println!("File base URL:    {}", server.file_base_url());
    println!("Token:            {}", server.token());
    println!("stdin lines are messages in chat {}", options.chat);
    let pusher = server.clone();
    std::thread::spawn(move || push_lines(pusher, options.chat));
    tokio::select! {
        result = tokio::signal::ctrl_c() => result?,
        () = log_calls(server.clone()) => {}
    }
    eprintln!("fake-telegram: {} requests served", server.calls().len());
    Ok(())
}
