//! `delegate_task`'s work: each task becomes a child agent — a fresh session of source
//! `subagent` linked to its parent (deleted with it), with a focused prompt, its own budget and
//! the parent's tools minus [`DELEGATE_BLOCKED_TOOLS`] — run at most
//! `delegation.max_concurrent_children` at once, the rest queued.
//!
//! From the user's agent (depth 0) a delegation runs in the background: the tool answers at
//! once, and when every child has ended their results re-enter the parent conversation as one
//! new turn (after a running one), whose answer also goes to the conversation's chat
//! (`unattended`). An interrupt of the parent conversation stops every child, queued ones
//! included, and nothing re-enters. In a session whose answer is taken once, when its turn ends
//! (cron, webhook, API), and from an orchestrator child, the call waits for its children.
//! A child's approval requests are asked of the user's conversation, labelled with the child.

mod prompt;

use std::{
    sync::{Arc, Weak},
    time::Instant,
};

use async_trait::async_trait;
use hermes_proto::pb::{self, session_event::Kind};
use serde_json::{Value, json};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use self::prompt::{ChildReport, child_system_prompt, results_message};
use super::{
    BusyPolicy, TurnEnd, TurnInput, TurnRunner,
    history::parse_tool_calls,
    spawn_turn,
    unattended::{Unasked, run_unasked},
};
use crate::{
    config::settings::DelegationSection,
    hub::{LiveSession, TurnHandle},
    ids, llm,
    store::{self, Lineage, NewSession, SessionRow},
    tools::{
        DELEGATE_BLOCKED_TOOLS, DelegateHandle, DelegatedTask, DelegationPlace, ToolContext,
        ToolError, Toolbox,
    },
};

/// Background delegations one conversation may have running at once (Hermes'
/// `max_async_children` default); one more is refused until one ends.
const MAX_BACKGROUND_DELEGATIONS: usize = 3;

/// The background delegations running for a loaded conversation.
#[derive(Default)]
struct RunningDelegations(Arc<std::sync::atomic::AtomicUsize>);

/// Counts one background delegation until dropped.
struct DelegationSlot(Arc<std::sync::atomic::AtomicUsize>);

impl Drop for DelegationSlot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
    }
}

/// Take a place for a background delegation of `live`'s conversation, if one is free.
fn background_slot(live: &LiveSession) -> Option<DelegationSlot> {
    let running = live.memo(|r: &mut RunningDelegations| Arc::clone(&r.0));
    let taken = running.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
    let slot = DelegationSlot(running);
    (taken < MAX_BACKGROUND_DELEGATIONS).then_some(slot)
}

/// The source of child sessions.
pub const SUBAGENT_SOURCE: &str = "subagent";

/// What a child turn runs with beyond an ordinary turn's input.
pub struct Delegated {
    /// Exactly the tools the child may use.
    pub tools: Toolbox,
    /// Its place in the tree (depth, the user's conversation, its label).
    pub place: DelegationPlace,
    /// The user's conversation: its clients answer the child's approval requests.
    pub asker: TurnHandle,
    /// Its budget of model calls.
    pub max_iterations: u32,
    /// `delegation.subagent_auto_approve`.
    pub auto_approve: bool,
}

impl std::fmt::Debug for Delegated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Delegated")
            .field("place", &self.place)
            .finish_non_exhaustive()
    }
}

/// Delegation for the tools: holds the runner weakly (the runner holds the tools).
pub struct Delegator {
    runner: Weak<TurnRunner>,
}

impl Delegator {
    pub fn new(runner: &Arc<TurnRunner>) -> Self {
        Self {
            runner: Arc::downgrade(runner),
        }
    }
}

/// One child, made and not yet run.
struct Child {
    task: DelegatedTask,
    row: SessionRow,
    delegated: Arc<Delegated>,
}

#[async_trait]
impl DelegateHandle for Delegator {
    async fn delegate(
        &self,
        tasks: Vec<DelegatedTask>,
        ctx: &ToolContext,
    ) -> Result<Value, ToolError> {
        let runner = self
            .runner
            .upgrade()
            .ok_or_else(|| ToolError::Failed("the daemon is stopping".into()))?;
        let settings = runner.config().settings.delegation;
        let place = &ctx.settings.delegation;
        let depth = place.depth + 1;
        if depth > settings.max_spawn_depth {
            return Err(ToolError::Failed(format!(
                "Delegation depth limit reached (depth={}, max_spawn_depth={}). Do the work \
                 yourself, or raise delegation.max_spawn_depth in config.yaml.",
                place.depth, settings.max_spawn_depth
            )));
        }
        // The conversation the user talks to: the caller's own at depth 0.
        let root = if place.depth == 0 {
            ctx.scope.conversation.clone()
        } else {
            place.root.clone()
        };
        let root_live = runner
            .hub
            .get(&root)
            .ok_or_else(|| ToolError::Failed(format!("conversation {root} is not loaded")))?;
        let caller = runner.hub.get(&ctx.scope.conversation);
        // An orchestrator needs its workers' results within its own turn; so does a session
        // whose answer is taken once, when its turn ends.
        let waits = place.depth > 0 || !ctx.settings.receives_later_messages();
        let slot = if !waits {
            Some(background_slot(&root_live).ok_or_else(|| {
                ToolError::Failed(format!(
                    "{MAX_BACKGROUND_DELEGATIONS} delegations of this conversation are still \
                     running; their results will arrive as new messages. Wait for one, or do \
                     this part yourself."
                ))
            })?)
        } else {
            None
        };
        // Children use the configured model, as their parent does.
        let chain = chain(&runner).await.map_err(ToolError::Failed)?;
        let model = chain
            .endpoints
            .first()
            .map(llm::Endpoint::label)
            .unwrap_or_default();
        let children =
            make_children(&runner, &settings, tasks, ctx, (depth, model), &root_live).await?;
        let delegation_id = ids::short_id("deleg");
        let goals: Vec<&str> = children.iter().map(|c| c.task.goal.as_str()).collect();
        let sessions: Vec<&str> = children.iter().map(|c| c.row.id.as_str()).collect();
        tracing::info!(
            session = %ctx.session_id, delegation = %delegation_id, depth,
            children = children.len(), "delegation started"
        );
        if waits {
            let reports =
                run_children(&runner, children, &chain, caller, &ctx.cancel, &settings).await;
            let mut result = json!({
                "delegation_id": delegation_id,
                "results": reports.iter().enumerate().map(|(i, r)| r.to_json(i)).collect::<Vec<_>>(),
            });
            if place.depth == 0 {
                result["note"] = json!(
                    "Background delegation is not available in this session: its answer is \
                     taken once, when this turn ends (a cron job, a webhook, an API request), so \
                     a later message would reach nobody. The subagents ran synchronously and \
                     their results are above."
                );
            }
            return Ok(result);
        }
        let answer = json!({
            "status": "dispatched",
            "mode": "background",
            "count": children.len(),
            "delegation_id": delegation_id,
            "goals": goals,
            "sessions": sessions,
            "note": "The subagents run in the background. You and the user can keep working; \
                their results re-enter the conversation as one new message once all of them \
                finish. Do not wait or poll.",
        });
        let stop = root_live.background_work();
        let parent_segment = ctx.session_id.clone();
        let work_runner = Arc::clone(&runner);
        let spawned = runner.hub.spawn(async move {
            let _slot = slot;
            let reports =
                run_children(&work_runner, children, &chain, caller, &stop, &settings).await;
            deliver(
                &work_runner,
                &root_live,
                &parent_segment,
                &delegation_id,
                &reports,
                &stop,
            )
            .await;
        });
        match spawned {
            Some(_) => Ok(answer),
            None => Err(ToolError::Failed(crate::hub::STOPPING.into())),
        }
    }
}

/// Create the children's sessions (with their prompts stored) in one transaction.
async fn make_children(
    runner: &Arc<TurnRunner>,
    settings: &DelegationSection,
    tasks: Vec<DelegatedTask>,
    ctx: &ToolContext,
    (depth, model): (u32, String),
    root_live: &Arc<LiveSession>,
) -> Result<Vec<Child>, ToolError> {
    let parent = ctx.session_id.clone();
    let cwd = ctx.cwd.to_string_lossy().into_owned();
    let n = tasks.len();
    let may_delegate = |task: &DelegatedTask| {
        task.orchestrator && settings.orchestrator_enabled && depth < settings.max_spawn_depth
    };
    let prompts: Vec<String> = tasks
        .iter()
        .map(|t| child_system_prompt(t, &cwd, depth, may_delegate(t), settings.max_spawn_depth))
        .collect();
    let titles: Vec<String> = tasks
        .iter()
        .enumerate()
        .map(|(i, t)| format!("subagent {}/{n}: {}", i + 1, short(&t.goal, 60)))
        .collect();
    let (row_titles, row_cwd) = (titles.clone(), cwd.clone());
    let rows = runner
        .store
        .write(move |tx| {
            let mut rows = Vec::with_capacity(prompts.len());
            for (prompt, title) in prompts.iter().zip(row_titles) {
                let row = store::insert_session(
                    tx,
                    &NewSession {
                        source: SUBAGENT_SOURCE.into(),
                        title: Some(title),
                        model: model.clone(),
                        cwd: row_cwd.clone(),
                        parent_session_id: Some(parent.clone()),
                        lineage: Lineage::Subagent,
                    },
                )?;
                store::set_system_prompt(tx, &row.id, prompt)?;
                rows.push(row);
            }
            Ok(rows)
        })
        .await
        .map_err(|e| ToolError::Failed(format!("cannot create the subagents' sessions: {e}")))?;
    let root = root_live.conversation().to_string();
    let asker = TurnHandle::new(Arc::clone(root_live));
    Ok(tasks
        .into_iter()
        .zip(rows)
        .zip(titles)
        .map(|((task, row), label)| {
            let blocked: Vec<&str> = DELEGATE_BLOCKED_TOOLS
                .iter()
                .copied()
                .filter(|name| !(*name == "delegate_task" && may_delegate(&task)))
                .collect();
            let delegated = Arc::new(Delegated {
                tools: ctx.toolbox.without(&blocked),
                place: DelegationPlace {
                    depth,
                    root: root.clone(),
                    label,
                },
                asker: asker.clone(),
                max_iterations: settings.max_iterations,
                auto_approve: settings.subagent_auto_approve,
            });
            Child {
                task,
                row,
                delegated,
            }
        })
        .collect())
}

/// Run `children`, at most `max_concurrent_children` at once, in task order; every report, in
/// task order. `stop` stops the running ones and keeps the queued ones from starting.
async fn run_children(
    runner: &Arc<TurnRunner>,
    children: Vec<Child>,
    chain: &llm::Chain,
    caller: Option<Arc<LiveSession>>,
    stop: &CancellationToken,
    settings: &DelegationSection,
) -> Vec<ChildReport> {
    let permits = Arc::new(Semaphore::new(settings.max_concurrent_children));
    let n = children.len();
    let runs = children.into_iter().enumerate().map(|(i, child)| {
        let permits = Arc::clone(&permits);
        let caller = caller.clone();
        async move {
            let permit = tokio::select! {
                permit = permits.acquire_owned() => permit.ok(),
                () = stop.cancelled() => None,
            };
            let Some(_permit) = permit else {
                return not_started(&child);
            };
            notice(caller.as_deref(), "subagent_started", || {
                format!(
                    "{} started (session {})",
                    child.delegated.place.label, child.row.id
                )
            })
            .await;
            let report = run_child(runner, child, chain.clone(), stop, settings).await;
            notice(caller.as_deref(), "subagent_finished", || {
                format!(
                    "subagent {}/{n} {} (session {})",
                    i + 1,
                    report.status,
                    report.session_id
                )
            })
            .await;
            report
        }
    });
    futures_util::future::join_all(runs).await
}

fn not_started(child: &Child) -> ChildReport {
    ChildReport {
        goal: child.task.goal.clone(),
        session_id: child.row.id.clone(),
        status: "not_started",
        summary: String::new(),
        error: Some("stopped before it started".into()),
        files: Vec::new(),
        tool_calls: 0,
        seconds: 0.0,
    }
}

/// Run one child's turn to its end (or its time limit) and report how it went.
async fn run_child(
    runner: &Arc<TurnRunner>,
    child: Child,
    chain: llm::Chain,
    stop: &CancellationToken,
    settings: &DelegationSection,
) -> ChildReport {
    let started = Instant::now();
    let mut report = not_started(&child);
    report.error = None;
    let own_stop = stop.child_token();
    let input = TurnInput {
        text: child.task.goal.clone(),
        source_client: "delegate_task".into(),
        yolo: false,
        busy: Some(BusyPolicy::Queue),
        toolsets: Vec::new(),
        context_from: None,
        turn_id: None,
        stop: Some(own_stop.clone()),
        delegated: Some(Arc::clone(&child.delegated)),
    };
    let first_segment = child.row.id.clone();
    let turn = spawn_turn(runner, child.row, chain, input);
    let limit = settings.child_timeout;
    let outcome = match limit {
        Some(limit) => {
            tokio::pin!(turn);
            match tokio::time::timeout(limit, &mut turn).await {
                Ok(done) => done,
                Err(_) => {
                    own_stop.cancel();
                    report.status = "timed_out";
                    report.error = Some(format!(
                        "stopped after delegation.child_timeout_seconds ({} s)",
                        limit.as_secs()
                    ));
                    turn.await
                }
            }
        }
        None => turn.await,
    };
    report.seconds = started.elapsed().as_secs_f64();
    let outcome = match outcome {
        Ok(Ok(outcome)) => outcome,
        Ok(Err(e)) => {
            report.status = "failed";
            report.error = Some(e.to_string());
            return report;
        }
        Err(e) => {
            report.status = "failed";
            report.error = Some(format!("the subagent's task failed: {e}"));
            return report;
        }
    };
    report.session_id = outcome.session_id.clone();
    report.summary = outcome.answer.clone();
    report.tool_calls = outcome.tool_calls;
    report.files = files_touched(runner, &first_segment, &outcome.session_id).await;
    if report.status == "timed_out" {
        return report;
    }
    match &outcome.end {
        TurnEnd::Finished => report.status = "completed",
        TurnEnd::Interrupted => {
            report.status = "interrupted";
            report.error = Some("interrupted".into());
        }
        TurnEnd::Failed { message, .. } => {
            report.status = "failed";
            report.error = Some(message.clone());
        }
    }
    report
}

/// The provider chain children use: the configured model, as the parent's.
async fn chain(runner: &Arc<TurnRunner>) -> Result<llm::Chain, String> {
    let config = runner.config();
    let client = runner.http_client().await?;
    llm::chain_from_config(
        &config.settings.llm,
        &config.env,
        client,
        &runner.credentials,
    )
    .await
    .map_err(|e| e.to_string())
}

/// The paths a child's successful `write_file` and `patch` calls named, first use first.
async fn files_touched(runner: &Arc<TurnRunner>, first: &str, newest: &str) -> Vec<String> {
    let mut segments = vec![first.to_string()];
    if newest != first {
        segments.push(newest.to_string());
    }
    let rows = runner
        .store
        .read(move |conn| {
            let mut rows = Vec::new();
            for segment in &segments {
                rows.extend(store::list_messages(conn, segment, 0, 0)?);
            }
            Ok(rows)
        })
        .await
        .unwrap_or_default();
    let mut files: Vec<String> = Vec::new();
    for row in rows.iter().filter_map(|r| r.tool_calls.as_deref()) {
        for call in parse_tool_calls(row) {
            if !matches!(call.name.as_str(), "write_file" | "patch") {
                continue;
            }
            let args: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
            if let Some(path) = args.get("path").and_then(Value::as_str)
                && !files.iter().any(|f| f == path)
                && files.len() < 50
            {
                files.push(path.to_string());
            }
        }
    }
    files
}

/// A stored notice on the delegating session (where the user sees the children start and end).
async fn notice(live: Option<&LiveSession>, kind: &str, text: impl FnOnce() -> String) {
    let Some(live) = live else {
        return;
    };
    let event = Kind::Notice(pb::Notice {
        kind: kind.to_string(),
        text: text(),
    });
    if let Err(e) = live.emit_durable("", event).await {
        tracing::warn!(session = %live.id(), error = %e, "cannot store a delegation notice");
    }
}

/// A background delegation is over: its results re-enter the parent conversation as one turn
/// queued after a running one (`unattended`) — unless it was stopped, which the conversation is
/// told instead.
async fn deliver(
    runner: &Arc<TurnRunner>,
    root: &Arc<LiveSession>,
    parent_segment: &str,
    delegation_id: &str,
    reports: &[ChildReport],
    stop: &CancellationToken,
) {
    let ok = reports.iter().filter(|r| r.ok()).count();
    tracing::info!(
        delegation = %delegation_id, ok, children = reports.len(),
        stopped = stop.is_cancelled(), "delegation finished"
    );
    if stop.is_cancelled() || runner.hub.is_stopping() {
        notice(Some(root), "delegation_stopped", || {
            format!(
                "delegation {delegation_id} stopped: {ok} of {} subagents had finished; their \
                 results were not sent to the conversation",
                reports.len()
            )
        })
        .await;
        return;
    }
    let unasked = Unasked {
        text: results_message(delegation_id, reports),
        from: "delegate_task",
    };
    // On a task of its own: the delegation's place is free while the results turn runs, and
    // its answer goes to the conversation's chat when it has one.
    let runner_for_turn = Arc::clone(runner);
    let segment = parent_segment.to_string();
    runner
        .hub
        .spawn(async move { run_unasked(&runner_for_turn, &segment, unasked).await });
}

/// `text`'s first line, cut to `max` characters.
fn short(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or_default();
    if line.chars().count() <= max {
        return line.to_string();
    }
    let kept: String = line.chars().take(max).collect();
    format!("{kept}…")
}
