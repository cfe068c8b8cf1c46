//! Voice end to end through the real daemon and the fake Bot API: a Telegram voice note
//! transcribed by a fake OpenAI-compatible endpoint into the turn (echoed, stored, and its
//! failures — an error status, a stalled endpoint — said to the user); `text_to_speech` with
//! espeak-ng writing a real WAV whose header gives its length, converted to OGG/Opus and sent as a
//! voice message; `/voice tts` speaking every answer; a speech command that fails, hangs (killed)
//! or gets too much text.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use std::time::Duration;

use hermes_tests::{
    TestHome,
    audio::{self, Answer, FakeTranscriber},
    fake_llm::{FakeLlm, Reply},
    fake_telegram::{Chat, FakeTelegram, User},
    home::StopOnDrop,
    telegram_home,
};

const WAIT: Duration = Duration::from_secs(60);

fn ann() -> User {
    User::new(42, "Ann").with_username("ann")
}

fn dm() -> Chat {
    Chat::private(42)
}

async fn start(home: &TestHome, bot: &FakeTelegram) {
    home.ctl_async(&["status"]).await.ok();
    bot.wait_call("setMyCommands", WAIT).await;
}

/// The user message of the model's `n`th request, as JSON text.
fn asked(llm: &FakeLlm, n: usize) -> String {
    llm.requests()[n].body["messages"].to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_voice_note_becomes_the_transcript_of_the_turn() {
    let stt = FakeTranscriber::start(vec![
        Answer::Transcript("read me the summary".into()),
        Answer::Error(500),
        Answer::Hang,
    ])
    .await;
    let llm = FakeLlm::start(vec![
        Reply::text("here is the summary"),
        Reply::text("could not hear"),
        Reply::text("still could not hear"),
    ])
    .await;
    let bot = FakeTelegram::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let config = format!(
        "stt:\n  provider: openai\n  timeout: 2\n  openai:\n    base_url: {}\n",
        stt.base_url()
    );
    telegram_home::configure(
        &home,
        &llm,
        &bot,
        &config,
        "TELEGRAM_ALLOWED_USERS=42\nVOICE_TOOLS_OPENAI_KEY=sk-voice-test\n",
    );
    start(&home, &bot).await;

    let note = b"OggS\0voice-note-bytes".to_vec();
    bot.push_voice(&dm(), &ann(), note.clone(), 2, None);
    bot.wait_message_text(42, |t| t == "🎙️ \"read me the summary\"", WAIT)
        .await;
    bot.wait_message_text(42, |t| t == "here is the summary", WAIT)
        .await;
    let upload = &stt.uploads()[0];
    assert_eq!(upload.authorization, "Bearer sk-voice-test");
    assert_eq!(
        (upload.model.as_str(), upload.response_format.as_str()),
        ("whisper-1", "text")
    );
    assert!(upload.file_name.ends_with(".ogg"), "{}", upload.file_name);
    assert_eq!(upload.file.as_ref(), note.as_slice());
    let turn = asked(&llm, 0);
    assert!(turn.contains(r#"\"read me the summary\""#), "{turn}");
    assert!(
        !turn.contains("saved at"),
        "the transcript is the text: {turn}"
    );
    // The transcript is the stored user message.
    let listed = home.ctl_async(&["sessions", "list", "--json"]).await.json();
    let id = listed[0]["id"].as_str().unwrap().to_string();
    let shown = home
        .ctl_async(&["sessions", "show", &id, "--json"])
        .await
        .json();
    assert_eq!(
        shown["messages"][0]["content"], "\"read me the summary\"",
        "{shown}"
    );

    // An endpoint that fails: the user is told why, the model gets the saved audio's place.
    bot.push_voice(&dm(), &ann(), note.clone(), 2, None);
    bot.wait_message_text(
        42,
        |t| t.starts_with("⚠️ The voice message could not be transcribed") && t.contains("500"),
        WAIT,
    )
    .await;
    bot.wait_message_text(42, |t| t == "could not hear", WAIT)
        .await;
    let turn = asked(&llm, 1);
    assert!(
        turn.contains("could not be transcribed; the audio is saved at"),
        "{turn}"
    );

    // An endpoint that never answers: stt.timeout ends the wait.
    let started = std::time::Instant::now();
    bot.push_voice(&dm(), &ann(), note, 2, None);
    bot.wait_message_text(
        42,
        |t| t.contains("did not answer within 2s (stt.timeout)"),
        WAIT,
    )
    .await;
    bot.wait_message_text(42, |t| t == "still could not hear", WAIT)
        .await;
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(stt.uploads().len(), 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn espeak_speaks_a_real_file_that_arrives_as_a_voice_message() {
    audio::require("espeak-ng");
    audio::require("ffmpeg");
    let llm = FakeLlm::start(vec![
        Reply::tool_call(
            "text_to_speech",
            r#"{"text": "Hello from Hermes. This is the summary you asked for."}"#,
        ),
        Reply::text("Sent you a voice message."),
        Reply::text("This answer is **spoken** as well, because voice replies are on."),
    ])
    .await;
    let bot = FakeTelegram::start().await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    let config = "tts:\n  provider: espeak\n  providers:\n    espeak:\n      type: command\n      \
                  command: 'espeak-ng -w {output_path} -f {input_path}'\n      output_format: wav\n      \
                  voice_compatible: true\n";
    telegram_home::configure(&home, &llm, &bot, config, "TELEGRAM_ALLOWED_USERS=42\n");
    start(&home, &bot).await;

    bot.push_text(&dm(), &ann(), "read me the summary");
    let voice = bot
        .wait_until("a voice message", WAIT, |v| {
            v.uploads(42).into_iter().find(|u| u.method == "sendVoice")
        })
        .await;
    bot.wait_message_text(42, |t| t == "Sent you a voice message.", WAIT)
        .await;
    let result = asked(&llm, 1);
    assert!(result.contains("[[audio_as_voice]]"), "{result}");
    assert!(result.contains(r#"\"voice_compatible\":true"#), "{result}");
    // The WAV espeak-ng wrote, in the bounded audio cache, and the Opus sent from it.
    let cache = home.path().join("cache/audio");
    let wav = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "wav"))
        .expect("the WAV espeak-ng wrote");
    let wav_seconds = audio::wav_seconds(&std::fs::read(&wav).unwrap());
    assert!(
        (1.5..20.0).contains(&wav_seconds),
        "espeak-ng's WAV lasts {wav_seconds} s"
    );
    assert!(voice.file_name.ends_with(".ogg"), "{}", voice.file_name);
    let ogg_seconds = audio::ogg_opus_seconds(&voice.bytes);
    assert!(
        (ogg_seconds - wav_seconds).abs() < 0.25,
        "the voice message lasts {ogg_seconds} s, the speech {wav_seconds} s"
    );

    // `/voice tts`: every answer is also spoken, without the agent calling a tool.
    bot.push_text(&dm(), &ann(), "/voice tts");
    bot.wait_message_text(42, |t| t.starts_with("🔊 Voice replies on"), WAIT)
        .await;
    let modes = std::fs::read_to_string(home.path().join("gateway_voice_mode.json")).unwrap();
    assert!(modes.contains("\"telegram:42\": \"all\""), "{modes}");
    bot.push_text(&dm(), &ann(), "and now?");
    bot.wait_message_text(42, |t| t.starts_with("This answer is spoken"), WAIT)
        .await;
    let spoken = bot
        .wait_until("a second voice message", WAIT, |v| {
            let voices: Vec<_> = v
                .uploads(42)
                .into_iter()
                .filter(|u| u.method == "sendVoice")
                .collect();
            voices.get(1).cloned()
        })
        .await;
    let seconds = audio::ogg_opus_seconds(&spoken.bytes);
    assert!((1.0..30.0).contains(&seconds), "{seconds} s");
    bot.push_text(&dm(), &ann(), "/voice off");
    bot.wait_message_text(42, |t| t.starts_with("🔇 Voice mode off"), WAIT)
        .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_speech_command_that_fails_hangs_or_gets_too_much_text_is_bounded() {
    let marks = tempfile::tempdir().unwrap();
    let pid_file = marks.path().join("pid");
    let llm = FakeLlm::start(vec![
        Reply::tool_call("text_to_speech", r#"{"text": "fail please"}"#),
        Reply::text("one"),
        Reply::tool_call("text_to_speech", r#"{"text": "hang please"}"#),
        Reply::text("two"),
        Reply::tool_call(
            "text_to_speech",
            r#"{"text": "copy this text; $(touch /tmp/never) `id` it is longer than the cap"}"#,
        ),
        Reply::text("three"),
    ])
    .await;
    let home = TestHome::new();
    let _stop = StopOnDrop(&home);
    // The text decides what the command does; it reaches the command only as a file.
    let command = format!(
        "case \"$(cat {{input_path}})\" in fail*) echo boom >&2; exit 4;; hang*) echo $$ > {}; \
         exec sleep 30;; *) cp {{input_path}} {{output_path}};; esac",
        pid_file.display()
    );
    let config = format!(
        "tts:\n  provider: scripted\n  providers:\n    scripted:\n      type: command\n      \
         command: '{command}'\n      output_format: wav\n      timeout: 2\n      max_text_length: 40\n"
    );
    home.use_fake_model(&llm, &config);
    home.ctl_async(&["status"]).await.ok();

    let sent = home.ctl_async(&["send", "speak it"]).await;
    assert!(sent.stdout().contains("one"), "{}", sent.stdout());
    let result = asked(&llm, 1);
    assert!(
        result.contains("TTS provider 'scripted' exited with code 4: stderr: boom"),
        "{result}"
    );

    let started = std::time::Instant::now();
    let sent = home.ctl_async(&["send", "speak again"]).await;
    assert!(sent.stdout().contains("two"), "{}", sent.stdout());
    assert!(started.elapsed() < Duration::from_secs(20));
    let result = asked(&llm, 3);
    assert!(result.contains("timed out after 2s"), "{result}");
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let alive = std::path::Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .unwrap_or_default()
            .contains(") Z ");
    assert!(!alive, "the hung command {pid} was killed");

    let sent = home.ctl_async(&["send", "speak the long one"]).await;
    assert!(sent.stdout().contains("three"), "{}", sent.stdout());
    let result = asked(&llm, 5);
    let value: serde_json::Value = serde_json::from_str(
        llm.requests()[5].body["messages"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()["content"]
            .as_str()
            .unwrap(),
    )
    .unwrap_or_else(|_| panic!("{result}"));
    let file = value["file_path"].as_str().unwrap();
    assert!(file.starts_with(home.path().join("cache/audio").to_str().unwrap()));
    let spoken = std::fs::read_to_string(file).unwrap();
    assert_eq!(spoken, "copy this text; $(touch /tmp/never) `id`");
    assert!(!std::path::Path::new("/tmp/never").exists());
}
