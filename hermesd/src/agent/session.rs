//! Running turns of a session: resolve or create the session, load it live, and run the turn as
//! its own task — a client that goes away never cancels it — one turn at a time per session.

use super::TurnRunner;
use std::{
    path::{Path, PathBuf},
    sync::Arc,
};

use tokio::task::JoinHandle;

use super::{
    compaction::CompactionSettings,
    port::{self, ApprovalPolicy, LivePort},
    review,
    session_prompt::{PromptFor, system_prompt},
    settings::TurnSettings,
    turn::{Turn, TurnEnd, TurnOutcome},
};
use crate::{
    hub::LiveSession,
    ids,
    llm::{self, Chain},
    policy::paths::PathPolicy,
    store::{self, Lineage, NewSession, SessionRow, StoreError},
    tools::ToolSettings,
};

/// A loaded conversation's `todo` list (goes with the live session).
#[derive(Default)]
struct SessionTodos(Arc<std::sync::Mutex<Vec<crate::tools::TodoItem>>>);

/// Largest user message accepted, in bytes.
pub const MAX_INPUT_BYTES: usize = 1_000_000;

/// Why a turn could not start.
#[derive(Debug, thiserror::Error)]
pub enum TurnError {
    #[error("{0}")]
    Setup(#[from] llm::SettingsError),
    #[error("{0}")]
    Http(String),
    #[error("{0}")]
    Store(#[from] StoreError),
    #[error("a message is required")]
    Empty,
    #[error("the message is {0} bytes; the limit is {MAX_INPUT_BYTES}")]
    TooLarge(usize),
    #[error("the turn task failed: {0}")]
    Task(String),
    #[error("{}; the message was not taken", crate::hub::STOPPING)]
    Stopping,
    /// An attached image cannot be taken (missing, not an image, too large).
    #[error("{0}; the message was not taken")]
    Image(String),
}

/// A turn to run.
#[derive(Debug, Clone)]
pub struct TurnInput {
    pub text: String,
    /// Name of the client that sent it.
    pub source_client: String,
    /// Approve every dangerous command (`--yolo`).
    pub yolo: bool,
    /// What to do when a turn is already running; `None` uses the session's policy.
    pub busy: Option<BusyPolicy>,
    /// Toolsets for this turn instead of config `toolsets` (a cron job's); empty = config.
    pub toolsets: Vec<String>,
    /// A segment whose messages come before the session's own in the model's context, read
    /// when the turn starts and never copied (a background review reads the conversation it
    /// reviews this way).
    pub context_from: Option<String>,
    /// The turn's id, chosen by the caller to follow its events (the gateway's); `None` makes
    /// one.
    pub turn_id: Option<String>,
    /// Cancels this turn alone, whether it runs or still waits its turn (an API run's stop).
    pub stop: Option<tokio_util::sync::CancellationToken>,
    /// A delegated child's turn: its tools, budget, place in the tree and who approves for it.
    pub delegated: Option<Arc<super::delegation::Delegated>>,
}

/// What happens to input that arrives while a turn runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BusyPolicy {
    /// Run it after the running turn (the default).
    Queue,
    /// Hand it to the running turn, which takes it at its next step.
    Steer,
    /// Stop the running turn, then run it.
    Interrupt,
}

impl BusyPolicy {
    pub fn parse(word: &str) -> Option<Self> {
        match word.trim().to_lowercase().as_str() {
            "queue" => Some(Self::Queue),
            "steer" => Some(Self::Steer),
            "interrupt" => Some(Self::Interrupt),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Queue => "queue",
            Self::Steer => "steer",
            Self::Interrupt => "interrupt",
        }
    }
}

/// How input was taken.
#[derive(Debug)]
pub enum Submitted {
    /// A turn of its own, running or waiting for the one before.
    Turn(JoinHandle<Result<TurnOutcome, TurnError>>),
    /// Handed to the running turn.
    Steered,
}

/// Take input for `session` following the busy policy: a new turn (queued after a running one,
/// or after interrupting it) or input steered into the running turn.
pub fn submit(
    state: &Arc<TurnRunner>,
    session: SessionRow,
    chain: Chain,
    input: TurnInput,
) -> Submitted {
    let policy = input
        .busy
        .or_else(|| BusyPolicy::parse(&session.busy_policy))
        .unwrap_or(BusyPolicy::Queue);
    let live = state.hub.load(&session);
    let input = match policy {
        BusyPolicy::Steer => match live.steer(input.text.clone()) {
            Ok(()) => {
                tracing::info!(session = %session.id, "input steered into the running turn");
                return Submitted::Steered;
            }
            Err(_) => input,
        },
        BusyPolicy::Interrupt => {
            if live.interrupt() {
                tracing::info!(session = %session.id, "running turn interrupted by new input");
            }
            input
        }
        BusyPolicy::Queue => input,
    };
    state.hub.release(live);
    Submitted::Turn(spawn_turn(state, session, chain, input))
}

/// Where a turn goes: an existing conversation, or a new session with this cwd and source.
#[derive(Debug, Clone, Default)]
pub struct Target {
    pub session_id: Option<String>,
    pub cwd: String,
    pub source: String,
}

/// Check the input, build the provider chain, and resolve (or create) the session.
pub async fn prepare(
    state: &Arc<TurnRunner>,
    target: Target,
    text: &str,
) -> Result<(SessionRow, Chain), TurnError> {
    if text.trim().is_empty() {
        return Err(TurnError::Empty);
    }
    if text.len() > MAX_INPUT_BYTES {
        return Err(TurnError::TooLarge(text.len()));
    }
    let config = state.config();
    let client = state.http_client().await.map_err(TurnError::Http)?;
    let chain = llm::chain_from_config(
        &config.settings.llm,
        &config.env,
        client,
        &state.credentials,
    )
    .await?;
    let model = chain
        .endpoints
        .first()
        .map(llm::Endpoint::label)
        .unwrap_or_default();
    let row = state
        .store
        .write(move |tx| match &target.session_id {
            Some(id) => {
                let row = store::resolve_conversation(tx, id)?;
                if row.source == super::delegation::SUBAGENT_SOURCE {
                    return Err(store::StoreError::Refused(format!(
                        "session {id} is a subagent of {}: it takes no input; talk to its parent",
                        row.parent_session_id
                            .as_deref()
                            .unwrap_or("another session")
                    )));
                }
                Ok(row)
            }
            None => store::insert_session(
                tx,
                &NewSession {
                    source: target.source.clone(),
                    title: None,
                    model,
                    cwd: target.cwd.clone(),
                    parent_session_id: None,
                    lineage: Lineage::Root,
                },
            ),
        })
        .await?;
    Ok((row, chain))
}

/// [`prepare`] for a message with images attached (absolute paths): the images are checked
/// first, so a bad one fails before any session is made, then kept in the session's cache and
/// named in the text returned.
pub async fn prepare_with_images(
    state: &Arc<TurnRunner>,
    target: Target,
    text: &str,
    images: Vec<String>,
) -> Result<(SessionRow, Chain, String), TurnError> {
    let images = super::attachments::load(images).await?;
    prepare_with_loaded(state, target, text, images).await
}

/// [`prepare_with_images`] for images already read and checked.
pub async fn prepare_with_loaded(
    state: &Arc<TurnRunner>,
    target: Target,
    text: &str,
    images: Vec<crate::llm::image_prep::Prepared>,
) -> Result<(SessionRow, Chain, String), TurnError> {
    let checked = if text.trim().is_empty() && !images.is_empty() {
        "[Attached image]"
    } else {
        text
    };
    let (session, chain) = prepare(state, target, checked).await?;
    let text = super::attachments::attach(&state.home.dir, &session.id, text, images).await?;
    Ok((session, chain, text))
}

/// Start a turn as its own task; it waits for the session's previous turn first.
pub fn spawn_turn(
    state: &Arc<TurnRunner>,
    session: SessionRow,
    chain: Chain,
    input: TurnInput,
) -> JoinHandle<Result<TurnOutcome, TurnError>> {
    let state = Arc::clone(state);
    let live = state.hub.load(&session);
    let hub_state = Arc::clone(&state);
    let turn = async move {
        let result = {
            let _turn = live.turn_lock.lock().await;
            run(&state, &live, &session.id, chain, &input).await
        };
        state.hub.release(live);
        result
    };
    // Tracked by the hub, so a stopping daemon waits for the turn to store how it ended; once it
    // is stopping, no new turn starts.
    hub_state
        .hub
        .spawn(turn)
        .unwrap_or_else(|| tokio::spawn(async { Err(TurnError::Stopping) }))
}

/// Run one turn and wait for it (the `Send` RPC and `hermesctl send` without a terminal).
pub async fn send(
    state: &Arc<TurnRunner>,
    target: Target,
    input: TurnInput,
) -> Result<TurnOutcome, TurnError> {
    let (session, chain) = prepare(state, target, &input.text).await?;
    run_prepared(state, session, chain, input).await
}

/// Run one turn of a [`prepare`]d session and wait for it.
pub async fn run_prepared(
    state: &Arc<TurnRunner>,
    session: SessionRow,
    chain: Chain,
    input: TurnInput,
) -> Result<TurnOutcome, TurnError> {
    let id = session.id.clone();
    match submit(state, session, chain, input) {
        Submitted::Turn(turn) => turn.await.map_err(|e| TurnError::Task(e.to_string()))?,
        Submitted::Steered => steered_outcome(state, &id).await,
    }
}

/// The answer of the turn that took steered input, once it has finished.
async fn steered_outcome(
    state: &Arc<TurnRunner>,
    session_id: &str,
) -> Result<TurnOutcome, TurnError> {
    let id = session_id.to_string();
    let row = state
        .store
        .read(move |conn| store::resolve_conversation(conn, &id))
        .await?;
    if let Some(live) = state.hub.get(&row.conversation_id) {
        let _finished = live.turn_lock.lock().await;
    }
    // The newest segment now that the turn is over (it may have compressed).
    let id = row.id.clone();
    let row = state
        .store
        .read(move |conn| store::resolve_conversation(conn, &id))
        .await?;
    let id = row.id.clone();
    let messages = state
        .store
        .read(move |conn| store::list_messages(conn, &id, 0, 0))
        .await?;
    let answer = messages
        .iter()
        .rev()
        .find(|m| m.role == "assistant")
        .map(|m| m.content.clone())
        .unwrap_or_default();
    Ok(TurnOutcome {
        session_id: session_id.to_string(),
        answer,
        usage: llm::Usage::default(),
        cost_usd: None,
        cost_status: llm::CostStatus::Unknown,
        answered_by: String::new(),
        iterations: 0,
        tool_calls: 0,
        tool_iterations: 0,
        tools_used: Vec::new(),
        end: super::turn::TurnEnd::Finished,
    })
}

/// The session's working directory: its own, else `terminal.cwd`, else the user's home (`~`
/// expanded from the daemon's homes, as the file tools expand it), else `/`.
fn session_cwd(session: &SessionRow, settings: &TurnSettings, paths: &PathPolicy) -> PathBuf {
    let home = paths.user_home();
    [session.cwd.as_str(), settings.default_cwd.as_str()]
        .iter()
        .filter(|p| !p.is_empty() && **p != ".")
        .map(|p| paths.expand(p))
        .find(|p| p.is_absolute() && p.is_dir())
        .or_else(|| home.map(Path::to_path_buf))
        .unwrap_or_else(|| PathBuf::from("/"))
}

/// A loaded conversation's tools and the MCP generation they were taken at.
#[derive(Default)]
struct SessionTools(Option<(u64, crate::tools::Toolbox)>);

/// The tools a turn of `source` gets under `selection`; waits a moment for MCP servers still on
/// their first connection, then goes without them.
async fn session_toolbox(
    state: &Arc<TurnRunner>,
    selection: &crate::tools::ToolsetSelection,
    source: &str,
) -> crate::tools::Toolbox {
    if let Some(mcp) = state.tool_services.mcp() {
        mcp.settle().await;
    }
    state
        .registry
        .toolbox(selection, &state.tool_services, excluded_tools(source))
}

/// Tools a session's source may not have. A cron run cannot ask (`clarify`), schedule more
/// jobs (`cronjob`), send messages itself (delivery is the scheduler's) or write the user's
/// memory (it runs without it, as in Hermes).
fn excluded_tools(source: &str) -> &'static [&'static str] {
    match source {
        "cron" => &["clarify", "cronjob", "send_message", "memory"],
        _ => &[],
    }
}

async fn run(
    state: &Arc<TurnRunner>,
    live: &Arc<LiveSession>,
    session_id: &str,
    chain: Chain,
    input: &TurnInput,
) -> Result<TurnOutcome, TurnError> {
    let config = state.config();
    let mut settings = TurnSettings::new(&config.settings);
    let id = session_id.to_string();
    let session = state
        .store
        .read(move |conn| store::resolve_conversation(conn, &id))
        .await?;
    let reviewing = session.source == review::REVIEW_SOURCE;
    let toolbox = if let Some(delegated) = &input.delegated {
        settings.max_iterations = delegated.max_iterations;
        delegated.tools.clone()
    } else if reviewing {
        settings.max_iterations = config.settings.review.budget;
        state
            .registry
            .toolbox_of(&review::REVIEW_TOOLS, &state.tool_services)
    } else if !input.toolsets.is_empty() {
        // A cron job's own toolsets, for its one run.
        let mut selection = config.settings.toolsets.clone();
        selection.enabled = input.toolsets.clone();
        session_toolbox(state, &selection, &session.source).await
    } else {
        // Fixed while the conversation is loaded, so its requests stay byte-stable: a server's
        // new tool reaches conversations loaded after it; a change of the servers themselves
        // (config) reaches every conversation.
        let generation = state.tool_services.mcp().map_or(0, |m| m.generation());
        let kept = live.memo(|kept: &mut SessionTools| {
            kept.0
                .as_ref()
                .filter(|(g, _)| *g == generation)
                .map(|(_, toolbox)| toolbox.clone())
        });
        match kept {
            Some(toolbox) => toolbox,
            None => {
                let toolbox =
                    session_toolbox(state, &config.settings.toolsets, &session.source).await;
                let stored = toolbox.clone();
                live.memo(|kept: &mut SessionTools| kept.0 = Some((generation, stored)));
                toolbox
            }
        }
    };
    let tool_names: Vec<String> = toolbox.names().into_iter().map(str::to_string).collect();
    let tool_name_refs: Vec<&str> = tool_names.iter().map(String::as_str).collect();
    let session_skills = Arc::new(toolbox.session_skills(&session.source));
    let cwd = session_cwd(&session, &settings, &state.tool_services.paths);
    let model = chain
        .endpoints
        .first()
        .map(llm::Endpoint::label)
        .unwrap_or_default();
    // Whether the main model takes images, and whether the user's images reach it as pixels
    // (`agent.image_input_mode`). The endpoint is asked only when this input carries images.
    let has_images = input.text.contains(super::attachments::ATTACHED_IMAGE);
    let model_sees = super::auxiliary::main_sees_images(state, &chain, has_images).await;
    let native_images = config.settings.agent.image_input_mode.native(model_sees);
    let system = system_prompt(
        state,
        &session,
        &PromptFor {
            tools: &tool_name_refs,
            session_skills: &session_skills,
            settings: &settings,
            model: &model,
            cwd: &cwd,
        },
    )
    .await?;
    let mut allowlist = settings.allowlist.clone();
    allowlist.extend(state.store.read(port::stored_allowlist).await?);
    let unattended = session.source == "cron";
    let turn_id = input
        .turn_id
        .clone()
        .unwrap_or_else(|| ids::short_id("turn"));
    // The turn and its tools get a narrow handle on the live session; beginning and ending the
    // turn stay here.
    let handle = crate::hub::TurnHandle::new(Arc::clone(live));
    let cancel = state.hub.begin_turn(live, input.stop.as_ref());
    live.set_state(&turn_id, hermes_proto::pb::SessionState::Running);
    let port = Arc::new(LivePort {
        live: handle.clone(),
        turn_id: turn_id.clone(),
        store: state.store.clone(),
        asker: input.delegated.as_ref().map(|d| port::Asker {
            live: d.asker.clone(),
            label: d.place.label.clone(),
        }),
        policy: ApprovalPolicy {
            off: settings.approvals_off
                || input.yolo
                || (unattended && settings.cron_approve)
                || input.delegated.as_ref().is_some_and(|d| d.auto_approve),
            unattended,
            timeout: settings.approval_timeout,
            allowlist,
        },
        cancel: cancel.clone(),
        output: port::OutputStreams::new(state.tool_services.masker()),
    });
    let tool_settings = Arc::new(ToolSettings {
        terminal_timeout: settings.terminal_timeout,
        spill_dir: crate::tools::spill_dir(&state.home.dir, &session.id),
        background_review: reviewing,
        skills: session_skills,
        code_execution: config.settings.code_execution,
        delegation: input
            .delegated
            .as_ref()
            .map(|d| d.place.clone())
            .unwrap_or_default(),
        // Whether images reach the model with the turn (`media` below), not whether it could
        // see them: with `image_input_mode: text` a tool's image must go to the vision model.
        main_sees_images: native_images,
    });
    let turn = Turn {
        state: Arc::clone(state),
        live: handle.clone(),
        segment: std::sync::Mutex::new(session.id.clone()),
        turn_id: turn_id.clone(),
        cancel,
        chain,
        toolbox,
        settings,
        system: std::sync::Mutex::new(system),
        model,
        cwd,
        port,
        tool_settings,
        compaction: CompactionSettings::new(&config.settings.compression),
        context_length: tokio::sync::OnceCell::new(),
        writes: std::sync::Mutex::new(Vec::new()),
        media: native_images.then(|| {
            Arc::new(super::media::TurnMedia::new(&crate::tools::spill_root(
                &state.home.dir,
            )))
        }),
        described: described_images(state, native_images),
        context_from: input.context_from.clone(),
        scope: crate::tools::SessionScope {
            conversation: live.conversation().to_string(),
            todos: live.memo(|t: &mut SessionTodos| std::sync::Arc::clone(&t.0)),
            processes: state.tool_services.processes.scoped(live.conversation()),
        },
    };
    let outcome = turn.drive(&input.text, &input.source_client).await;
    if let Ok(done) = &outcome {
        review::after_turn(state, &handle, &session, done, &tool_name_refs);
        let first_exchange = session.message_count == 0 && session.title.is_none();
        let untitled_source = reviewing || input.delegated.is_some() || session.source == "cron";
        if first_exchange && done.end == TurnEnd::Finished && !untitled_source {
            super::title::after_turn(state, &handle, &input.text, &done.answer);
        }
    }
    if let Err(e) = &outcome {
        // The store failed mid-turn: clients still learn that the turn is over.
        tracing::error!(session = %session.id, error = %e, "turn aborted");
        live.emit_transient(
            &turn_id,
            hermes_proto::pb::session_event::Kind::TurnFailed(hermes_proto::pb::TurnFailed {
                error_class: hermes_proto::pb::ErrorClass::Internal as i32,
                message: format!("the conversation could not be stored: {e}"),
                hint: "see hermesd.log; the disk may be full or the database unwritable".into(),
            }),
        );
    }
    let late = live.end_turn();
    live.set_state(&turn_id, hermes_proto::pb::SessionState::Idle);
    // Input steered in after the turn's last look runs as the next turn. A stopping daemon
    // starts no turn: the text is stored as a notice on the conversation instead of dropped.
    if state.hub.is_stopping() {
        for text in late {
            tracing::warn!(session = %session.id, bytes = text.len(), "steered input not run: the daemon is stopping");
            let notice = hermes_proto::pb::session_event::Kind::Notice(hermes_proto::pb::Notice {
                kind: "input_not_run".into(),
                text: format!("not run ({}): {text}", crate::hub::STOPPING),
            });
            if let Err(e) = handle.emit_durable("", notice).await {
                tracing::warn!(session = %session.id, error = %e, "steered input could not be kept");
            }
        }
        return Ok(outcome?);
    }
    for text in late {
        let next = TurnInput {
            text,
            busy: Some(BusyPolicy::Queue),
            turn_id: None,
            stop: None,
            ..input.clone()
        };
        let target = Target {
            session_id: Some(session.id.clone()),
            ..Target::default()
        };
        match prepare(state, target, &next.text).await {
            Ok((row, chain)) => drop(spawn_turn(state, row, chain, next)),
            Err(e) => {
                tracing::warn!(session = %session.id, error = %e, "steered input could not run")
            }
        }
    }
    Ok(outcome?)
}

/// The user's images as descriptions, for a main model that does not get them as pixels, when
/// `auxiliary.vision` names a model to describe them; else the model reads their paths.
fn described_images(
    state: &Arc<TurnRunner>,
    native_images: bool,
) -> Option<Arc<super::described::TurnDescriptions>> {
    let config = state.config();
    if native_images || config.settings.auxiliary.vision.endpoint.model.is_empty() {
        return None;
    }
    let vision = Arc::clone(state.tool_services.vision()?);
    Some(Arc::new(super::described::TurnDescriptions::new(
        &crate::tools::spill_root(&state.home.dir),
        vision,
        state.tool_services.masker(),
    )))
}
