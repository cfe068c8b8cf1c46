//! Screens drawn on ratatui's TestBackend and compared with the snapshot files in `snapshots/`
//! (insta; `cargo insta review` after an intended change).

use hermes_proto::pb::{self, session_event::Kind};
use ratatui::{Terminal, backend::TestBackend, style::Color};

use super::{BlockCache, draw};
use crate::{
    app::{App, Msg},
    config::TuiConfig,
};

const NOW: i64 = 1_800_000_000;

fn session(id: &str, title: &str, source: &str, state: pb::SessionState, ago: i64) -> pb::Session {
    pb::Session {
        id: id.into(),
        title: title.into(),
        source: source.into(),
        state: state as i32,
        updated_at: Some(prost_types::Timestamp {
            seconds: NOW - ago,
            nanos: 0,
        }),
        model: "openrouter:anthropic/claude-sonnet-4".into(),
        usage: Some(pb::Usage {
            cost_usd: Some(0.0123),
            ..pb::Usage::default()
        }),
        ..pb::Session::default()
    }
}

fn app_with(config: TuiConfig) -> App {
    let mut app = App::new(config, Vec::new(), NOW);
    app.update(Msg::Model {
        model: "openrouter:anthropic/claude-sonnet-4".into(),
        context_length: 200_000,
    });
    app
}

fn app() -> App {
    app_with(TuiConfig::default())
}

fn sessions() -> Vec<pb::Session> {
    use pb::SessionState as S;
    vec![
        session(
            "20261204_101500_a1b2c3",
            "Fix the flaky deploy script",
            "cli",
            S::Running,
            5,
        ),
        session(
            "20261204_093000_d4e5f6",
            "Groceries and the week's plan",
            "telegram",
            S::Idle,
            1_800,
        ),
        session(
            "20261204_070000_g7h8i9",
            "Morning briefing",
            "cron",
            S::Idle,
            11_000,
        ),
        session(
            "20261203_180000_j1k2l3",
            "Open WebUI: summarise the RFC",
            "api_server",
            S::WaitingApproval,
            90_000,
        ),
        session("20261203_120000_m4n5o6", "", "webhook", S::Idle, 200_000),
    ]
}

fn event(app: &mut App, seq: u64, kind: Kind) {
    let id = app.current.clone().unwrap_or_default();
    app.update(Msg::Event(pb::SessionEvent {
        session_id: id,
        seq,
        turn_id: "t1".into(),
        kind: Some(kind),
        ..pb::SessionEvent::default()
    }));
}

/// Open the first listed session and stream half an answer with a finished tool call.
fn streaming(app: &mut App) {
    app.update(Msg::Sessions(sessions()));
    app.update(Msg::Created(sessions()[0].clone()));
    let id = sessions()[0].id.clone();
    app.update(Msg::Attached { session_id: id });
    event(
        app,
        1,
        Kind::UserMessage(pb::UserMessage {
            message_id: 1,
            text: "Why does deploy.sh fail on the second run?".into(),
        }),
    );
    event(app, 2, Kind::TurnStarted(pb::TurnStarted::default()));
    event(
        app,
        3,
        Kind::ReasoningDelta(pb::ReasoningDelta {
            text: "The lock file is probably left behind by the first run.".into(),
        }),
    );
    event(
        app,
        4,
        Kind::ToolStarted(pb::ToolStarted {
            call_id: "c1".into(),
            name: "terminal".into(),
            arguments: r#"{"command":"bash deploy.sh --dry-run"}"#.into(),
        }),
    );
    event(
        app,
        5,
        Kind::ToolOutput(pb::ToolOutput {
            call_id: "c1".into(),
            chunk: "error: /tmp/deploy.lock exists\n".into(),
        }),
    );
    event(
        app,
        6,
        Kind::ToolFinished(pb::ToolFinished {
            call_id: "c1".into(),
            ok: false,
            summary: "exit status 1".into(),
            duration_ms: 412,
        }),
    );
    event(
        app,
        7,
        Kind::TextDelta(pb::TextDelta {
            text: "## Cause\n\nThe script takes a **lock** and never removes it:\n\n- first run: creates `/tmp/deploy.lock`\n- second run: finds it and exits\n\n```bash\ntrap 'rm -f /tmp/deploy.lock' EXIT\n".into(),
        }),
    );
}

fn render(app: &mut App, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    let mut cache = BlockCache::default();
    app.size = (width, height);
    terminal.draw(|frame| draw(frame, app, &mut cache)).unwrap();
    let buffer = terminal.backend().buffer();
    let mut out = String::new();
    for y in 0..buffer.area.height {
        let mut line = String::new();
        for x in 0..buffer.area.width {
            line.push_str(buffer[(x, y)].symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[test]
fn empty() {
    insta::assert_snapshot!(render(&mut app(), 80, 24));
}

#[test]
fn a_streamed_answer_with_a_tool_block_at_120_columns() {
    let mut app = app();
    streaming(&mut app);
    insta::assert_snapshot!(render(&mut app, 120, 30));
}

#[test]
fn the_tool_block_unfolded() {
    let mut app = app();
    streaming(&mut app);
    app.toggle_tools();
    insta::assert_snapshot!(render(&mut app, 100, 30));
}

#[test]
fn an_approval_modal() {
    let mut app = app();
    streaming(&mut app);
    event(
        &mut app,
        8,
        Kind::ApprovalRequested(pb::ApprovalRequested {
            id: "ap1".into(),
            command: "rm -f /tmp/deploy.lock".into(),
            reason: "deletes a file outside the workspace".into(),
            choices: vec![
                "once".into(),
                "session".into(),
                "always".into(),
                "deny".into(),
            ],
        }),
    );
    insta::assert_snapshot!(render(&mut app, 100, 30));
}

#[test]
fn the_session_list_with_several_sources_focused() {
    let mut app = app();
    streaming(&mut app);
    app.focus = crate::app::Focus::Sessions;
    app.sessions.move_by(2);
    insta::assert_snapshot!(render(&mut app, 120, 24));
}

#[test]
fn search_results() {
    let mut app = app();
    streaming(&mut app);
    app.search = Some(crate::app::search::Search {
        query: "deploy".into(),
        searched: Some("deploy".into()),
        hits: vec![
            pb::SearchHit {
                session_id: "20261204_101500_a1b2c3".into(),
                title: "Fix the flaky deploy script".into(),
                role: "user".into(),
                source: "cli".into(),
                snippet: "Why does «deploy».sh fail on the second run?".into(),
                ..pb::SearchHit::default()
            },
            pb::SearchHit {
                session_id: "20261201_080000_zz".into(),
                title: "Release checklist".into(),
                role: "assistant".into(),
                source: "telegram".into(),
                snippet: "…then «deploy» to staging and wait for the smoke tests…".into(),
                ..pb::SearchHit::default()
            },
        ],
        ..crate::app::search::Search::default()
    });
    insta::assert_snapshot!(render(&mut app, 100, 24));
}

#[test]
fn at_80_by_24() {
    let mut app = app();
    streaming(&mut app);
    insta::assert_snapshot!(render(&mut app, 80, 24));
}

#[test]
fn at_200_by_60() {
    let mut app = app();
    streaming(&mut app);
    insta::assert_snapshot!(render(&mut app, 200, 60));
}

#[test]
fn titles_keep_at_least_20_characters_at_120_columns() {
    let mut app = app();
    streaming(&mut app);
    let screen = render(&mut app, 120, 24);
    assert!(screen.contains("Groceries and the week's"), "{screen}");
}

#[test]
fn no_color_uses_no_colours_at_all() {
    let (config, _) = TuiConfig::from_yaml("", true);
    let mut app = app_with(config);
    streaming(&mut app);
    let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
    let mut cache = BlockCache::default();
    terminal
        .draw(|frame| draw(frame, &mut app, &mut cache))
        .unwrap();
    let buffer = terminal.backend().buffer();
    let coloured = buffer
        .content
        .iter()
        .filter(|cell| cell.fg != Color::Reset || cell.bg != Color::Reset)
        .count();
    assert_eq!(coloured, 0);
}

#[test]
fn a_scrolled_back_view_stays_put_while_text_arrives() {
    let mut app = app();
    streaming(&mut app);
    for i in 0..40 {
        event(
            &mut app,
            100 + i * 2,
            Kind::UserMessage(pb::UserMessage {
                message_id: 10 + i,
                text: format!("message {i}"),
            }),
        );
    }
    render(&mut app, 100, 30);
    app.scroll.back = 10;
    let before = render(&mut app, 100, 30);
    event(
        &mut app,
        500,
        Kind::TextDelta(pb::TextDelta {
            text: "more\n\nand more\n".into(),
        }),
    );
    let after = render(&mut app, 100, 30);
    let pane = |s: &str| {
        s.lines()
            .skip(1)
            .take(20)
            .map(|l| l.chars().skip(40).collect::<String>())
            .collect::<Vec<_>>()
    };
    assert_eq!(pane(&before), pane(&after));
}
