use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use hermes_proto::pb::{self, client_frame, session_event::Kind};

use super::{App, Connection, Effect, Focus, Msg};
use crate::config::TuiConfig;

fn app() -> App {
    App::new(TuiConfig::default(), Vec::new(), 1_000_000)
}

fn key(code: KeyCode) -> Msg {
    Msg::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

fn ctrl(c: char) -> Msg {
    Msg::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL))
}

fn session(id: &str, source: &str, last_seq: u64) -> pb::Session {
    pb::Session {
        id: id.into(),
        title: format!("title of {id}"),
        source: source.into(),
        last_seq,
        ..pb::Session::default()
    }
}

fn typed(app: &mut App, text: &str) {
    for c in text.chars() {
        app.update(key(KeyCode::Char(c)));
    }
}

fn attached(app: &mut App, id: &str) {
    let effects = app.update(Msg::Created(session(id, "tui", 0)));
    assert_eq!(
        effects,
        [Effect::Attach {
            session_id: id.into(),
            since_seq: 0,
            last_messages: super::BACKLOG_MESSAGES
        }]
    );
    app.update(Msg::Attached {
        session_id: id.into(),
    });
}

fn event(seq: u64, kind: Kind) -> Msg {
    Msg::Event(pb::SessionEvent {
        session_id: "a".into(),
        seq,
        kind: Some(kind),
        ..pb::SessionEvent::default()
    })
}

#[test]
fn the_first_message_without_a_session_makes_one_and_is_sent_once_attached() {
    let mut app = app();
    typed(&mut app, "hello");
    assert_eq!(app.update(key(KeyCode::Enter)), [Effect::CreateSession]);
    app.update(Msg::Created(session("a", "tui", 0)));
    assert_eq!(app.connection, Connection::Connecting);
    let effects = app.update(Msg::Attached {
        session_id: "a".into(),
    });
    assert_eq!(
        effects,
        [Effect::Frame(client_frame::Kind::UserInput(
            pb::UserInput {
                text: "hello".into(),
                ..pb::UserInput::default()
            }
        ))]
    );
    assert!(app.unsent.is_none());
}

#[test]
fn ctrl_c_interrupts_a_running_turn_and_twice_quits() {
    let mut app = app();
    attached(&mut app, "a");
    app.update(event(1, Kind::TurnStarted(pb::TurnStarted::default())));
    assert_eq!(
        app.update(ctrl('c')),
        [Effect::Frame(client_frame::Kind::Interrupt(
            pb::InterruptTurn {}
        ))]
    );
    app.now += std::time::Duration::from_millis(1_500);
    assert_eq!(app.update(ctrl('c')), [Effect::Quit]);
    assert!(app.quit);
}

#[test]
fn ctrl_c_twice_but_slowly_does_not_quit() {
    let mut app = app();
    assert!(app.update(ctrl('c')).is_empty());
    app.now += std::time::Duration::from_secs(3);
    assert!(app.update(ctrl('c')).is_empty());
    assert!(!app.quit);
}

#[test]
fn an_approval_is_answered_by_its_first_letter() {
    let mut app = app();
    attached(&mut app, "a");
    app.update(event(
        1,
        Kind::ApprovalRequested(pb::ApprovalRequested {
            id: "ap".into(),
            command: "rm -rf /tmp/x".into(),
            reason: "delete".into(),
            choices: vec![
                "once".into(),
                "session".into(),
                "always".into(),
                "deny".into(),
            ],
        }),
    ));
    // Keys go to the modal, not the input.
    assert_eq!(
        app.update(key(KeyCode::Char('s'))),
        [Effect::Frame(client_frame::Kind::ApprovalResponse(
            pb::ApprovalResponse {
                id: "ap".into(),
                decision: "session".into(),
            }
        ))]
    );
    assert!(app.input.is_empty());
    assert!(app.pending().is_none());
}

#[test]
fn a_clarify_question_takes_a_number_or_free_text() {
    let mut app = app();
    attached(&mut app, "a");
    let ask = |id: &str| {
        Kind::ClarifyRequested(pb::ClarifyRequested {
            id: id.into(),
            question: "which?".into(),
            choices: vec!["red".into(), "blue".into()],
        })
    };
    app.update(event(1, ask("q1")));
    assert_eq!(
        app.update(key(KeyCode::Char('2'))),
        [Effect::Frame(client_frame::Kind::ClarifyResponse(
            pb::ClarifyResponse {
                id: "q1".into(),
                answer: "blue".into(),
            }
        ))]
    );
    app.update(event(2, ask("q2")));
    typed(&mut app, "green");
    assert_eq!(
        app.update(key(KeyCode::Enter)),
        [Effect::Frame(client_frame::Kind::ClarifyResponse(
            pb::ClarifyResponse {
                id: "q2".into(),
                answer: "green".into(),
            }
        ))]
    );
}

#[test]
fn switching_back_re_attaches_from_the_last_seq_seen() {
    let mut app = app();
    app.update(Msg::Sessions(vec![
        session("a", "cli", 5),
        session("b", "telegram", 9),
    ]));
    attached(&mut app, "a");
    app.update(event(
        5,
        Kind::TextDelta(pb::TextDelta { text: "x".into() }),
    ));
    app.update(Msg::Key(KeyEvent::new(KeyCode::Tab, KeyModifiers::NONE)));
    assert_eq!(app.focus, Focus::Sessions);
    app.update(key(KeyCode::Char('j')));
    let effects = app.update(key(KeyCode::Enter));
    assert_eq!(
        effects,
        [Effect::Attach {
            session_id: "b".into(),
            since_seq: 0,
            last_messages: super::BACKLOG_MESSAGES
        }]
    );
    let effects = app.switch_to("a");
    assert_eq!(
        effects,
        [Effect::Attach {
            session_id: "a".into(),
            since_seq: 5,
            last_messages: 0
        }]
    );
}

#[test]
fn a_lost_link_reattaches_from_the_last_seq_and_keeps_typed_input() {
    let mut app = app();
    attached(&mut app, "a");
    app.update(event(
        7,
        Kind::TextDelta(pb::TextDelta { text: "x".into() }),
    ));
    let effects = app.update(Msg::LinkLost {
        session_id: "a".into(),
        reason: "gone".into(),
    });
    assert_eq!(
        effects,
        [Effect::Attach {
            session_id: "a".into(),
            since_seq: 7,
            last_messages: 0
        }]
    );
    typed(&mut app, "later");
    assert!(app.update(key(KeyCode::Enter)).is_empty());
    let effects = app.update(Msg::Attached {
        session_id: "a".into(),
    });
    assert!(
        matches!(&effects[..], [Effect::Frame(client_frame::Kind::UserInput(u))] if u.text == "later")
    );
}

#[test]
fn unread_marks_sessions_that_moved_since_the_first_listing() {
    let mut app = app();
    app.update(Msg::Sessions(vec![
        session("a", "cli", 5),
        session("b", "cron", 3),
    ]));
    assert!(!app.sessions.is_unread(&session("b", "cron", 3)));
    app.update(Msg::Sessions(vec![
        session("a", "cli", 5),
        session("b", "cron", 4),
        session("c", "api_server", 1),
    ]));
    let unread: Vec<&str> = app
        .sessions
        .rows
        .iter()
        .filter(|s| app.sessions.is_unread(s))
        .map(|s| s.id.as_str())
        .collect();
    assert_eq!(unread, ["b", "c"]);
}

#[test]
fn the_source_filter_and_the_text_filter_narrow_the_list() {
    let mut app = app();
    app.update(Msg::Sessions(vec![
        session("a", "cli", 1),
        session("b", "telegram", 1),
        session("c", "cron", 1),
    ]));
    app.focus = Focus::Sessions;
    app.update(key(KeyCode::Char('s')));
    assert_eq!(app.sessions.source.as_deref(), Some("cli"));
    app.update(key(KeyCode::Char('s')));
    assert_eq!(app.sessions.visible().len(), 1);
    assert_eq!(app.sessions.visible()[0].id, "c");
    app.sessions.source = None;
    app.update(key(KeyCode::Char('f')));
    typed(&mut app, "of b");
    assert_eq!(
        app.sessions
            .visible()
            .iter()
            .map(|s| s.id.as_str())
            .collect::<Vec<_>>(),
        ["b"]
    );
    app.update(key(KeyCode::Enter));
    assert!(!app.sessions.filtering);
    assert_eq!(app.update(key(KeyCode::Char('q'))), [Effect::Quit]);
}

#[test]
fn search_runs_then_opens_the_hit_with_a_full_replay() {
    let mut app = app();
    attached(&mut app, "a");
    app.update(ctrl('f'));
    typed(&mut app, "deploy");
    assert_eq!(
        app.update(key(KeyCode::Enter)),
        [Effect::Search("deploy".into())]
    );
    let hit = pb::SearchHit {
        session_id: "b".into(),
        message_id: 42,
        snippet: "the «deploy» failed".into(),
        ..pb::SearchHit::default()
    };
    // An answer to another query is ignored.
    app.update(Msg::SearchResults {
        query: "other".into(),
        hits: vec![hit.clone()],
    });
    assert!(app.search.as_ref().is_some_and(|s| s.hits.is_empty()));
    app.update(Msg::SearchResults {
        query: "deploy".into(),
        hits: vec![hit],
    });
    let effects = app.update(key(KeyCode::Enter));
    assert_eq!(
        effects,
        [Effect::Attach {
            session_id: "b".into(),
            since_seq: 0,
            last_messages: 0
        }]
    );
    assert!(app.search.is_none());
    assert_eq!(app.jump_to, Some(42));
}

#[test]
fn slash_commands_complete_and_run_here_or_over_rpc() {
    let mut app = app();
    attached(&mut app, "a");
    app.update(Msg::Commands(vec![
        pb::SlashCommand {
            name: "compress".into(),
            kind: "builtin".into(),
            terminal: true,
            ..Default::default()
        },
        pb::SlashCommand {
            name: "code_review".into(),
            kind: "skill".into(),
            terminal: true,
            ..Default::default()
        },
    ]));
    typed(&mut app, "/comp");
    assert_eq!(app.completions().len(), 1);
    app.update(Msg::Key(KeyEvent::new(KeyCode::Tab, KeyModifiers::NONE)));
    assert_eq!(app.input.text(), "/compress ");
    assert_eq!(
        app.update(key(KeyCode::Enter)),
        [Effect::Command {
            session_id: "a".into(),
            name: "compress".into(),
            args: String::new()
        }]
    );
    typed(&mut app, "/code-review the diff");
    let effects = app.update(key(KeyCode::Enter));
    assert!(
        matches!(&effects[..], [Effect::Frame(client_frame::Kind::UserInput(u))] if u.text.contains("code_review"))
    );
    typed(&mut app, "/nosuch");
    assert!(app.update(key(KeyCode::Enter)).is_empty());
    assert!(
        app.flash
            .as_deref()
            .is_some_and(|f| f.contains("unknown command /nosuch"))
    );
}

#[test]
fn alt_enter_adds_a_line_and_enter_sends_both() {
    let mut app = app();
    attached(&mut app, "a");
    typed(&mut app, "one");
    app.update(Msg::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT)));
    typed(&mut app, "two");
    let effects = app.update(key(KeyCode::Enter));
    assert!(
        matches!(&effects[..], [Effect::Frame(client_frame::Kind::UserInput(u))] if u.text == "one\ntwo")
    );
}

#[test]
fn an_image_attached_with_slash_image_goes_with_the_next_message_only() {
    let mut app = app();
    attached(&mut app, "a");
    let dir = tempfile::tempdir().unwrap();
    let photo = dir.path().join("photo.png");
    std::fs::write(&photo, b"\x89PNG\r\n\x1a\n").unwrap();
    typed(
        &mut app,
        &format!("/image {}", dir.path().join("missing.png").display()),
    );
    assert!(app.update(key(KeyCode::Enter)).is_empty());
    assert!(
        app.flash
            .as_deref()
            .is_some_and(|f| f.contains("no such file"))
    );
    typed(&mut app, &format!("/image {}", photo.display()));
    assert!(app.update(key(KeyCode::Enter)).is_empty());
    assert!(
        app.flash
            .as_deref()
            .is_some_and(|f| f.starts_with("attached "))
    );
    typed(&mut app, "what is it");
    let sent = |effects: Vec<Effect>| match &effects[..] {
        [Effect::Frame(client_frame::Kind::UserInput(u))] => {
            (u.text.clone(), u.attachments.clone())
        }
        other => panic!("{other:?}"),
    };
    let first = sent(app.update(key(KeyCode::Enter)));
    assert_eq!(
        first,
        ("what is it".into(), vec![photo.display().to_string()])
    );
    typed(&mut app, "and now");
    assert!(sent(app.update(key(KeyCode::Enter))).1.is_empty());
    // Attached, then another conversation opened: the image is not sent there.
    typed(&mut app, &format!("/image {}", photo.display()));
    app.update(key(KeyCode::Enter));
    app.switch_to("b");
    assert!(app.images.is_empty());
    assert!(app.flash.as_deref().is_some_and(|f| f.contains("dropped")));
}
