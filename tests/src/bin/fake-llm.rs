//! The scripted fake LLM server for manual runs:
//! `cargo run -p hermes-tests --bin fake-llm -- --script FILE.yaml [--port N]`.
//! Prints its base URLs, logs each request to stderr, and serves until Ctrl-C.
//! The script file is a list of replies or `{models: [...], replies: [...]}`, each reply tagged
//! by `type` (`text`, `tool_calls`, `error`, `stall_before_headers`, `loop`, …).

use std::{error::Error, time::Duration};

use hermes_tests::fake_llm::{FakeLlm, ScriptFile};

const USAGE: &str = "usage: fake-llm --script FILE.yaml [--port N]";

/// Command-line options.
struct Options {
    script: String,
    port: u16,
}

fn parse_args() -> Result<Options, Box<dyn Error>> {
    let mut args = std::env::args().skip(1);
    let (mut script, mut port) = (None, 0);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--script" => script = args.next(),
            "--port" => port = args.next().ok_or(USAGE)?.parse()?,
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other}\n{USAGE}").into()),
        }
    }
    Ok(Options {
        script: script.ok_or(USAGE)?,
        port,
    })
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let options = parse_args()?;
    let text = std::fs::read_to_string(&options.script)
        .map_err(|e| format!("cannot read {}: {e}", options.script))?;
    let script = ScriptFile::parse(&text).map_err(|e| format!("{}: {e}", options.script))?;
    let replies = script.replies.len();
    let server = FakeLlm::start_on_port(options.port, script.replies)
        .await?
        .with_models(script.models);
    println!("fake-llm: {replies} scripted replies");
    println!("OpenAI base URL:    {}", server.openai_base());
    println!("Anthropic base URL: {}", server.anthropic_base());

    let log_requests = async {
        let mut seen = 0;
        loop {
            let requests = server
                .wait_for_requests(seen + 1, Duration::from_secs(3600))
                .await;
            for request in &requests[seen..] {
                eprintln!("{} {} {}", request.method, request.path, request.body);
            }
            seen = requests.len();
        }
    };
    tokio::select! {
        result = tokio::signal::ctrl_c() => result?,
        () = log_requests => {}
    }
    eprintln!("fake-llm: {} replies left unused", server.remaining());
    Ok(())
}
