//! One cron run from lease to record: wait for a permit, run the job's script if it has one,
//! start a fresh `cron` session with the job's model, toolsets and skills, run the turn while watching it make progress (stopping it
//! after the inactivity limit), write the output file, deliver, and close the run and its job.

use super::Cron;
use std::{collections::HashSet, sync::Arc, time::Duration};

use chrono::Utc;
use tokio::task::JoinHandle;

use super::{
    delivery,
    output::{self, RunReport},
    prompt::{self, JobSkill},
    script::{self, ScriptOutcome},
};
use crate::{
    agent::{self, BusyPolicy, TurnEnd, TurnError, TurnInput, TurnOutcome},
    config::settings::CronSection,
    hub::{LiveSession, Received},
    llm,
    skills::{self, ActivationContext},
    store::{self, CronJobRow, CronRunRow, Lineage, NewSession, StoreError},
};

/// Runs of one job to go through in order (several when missed slots are caught up).
#[derive(Debug, Clone)]
pub struct Batch {
    pub job: CronJobRow,
    pub runs: Vec<CronRunRow>,
    /// Whether the runs count toward the job's repeats (scheduled ones do, manual ones do not).
    pub counts: bool,
}

/// How the agent part of a run went.
struct Attempt {
    status: &'static str,
    answer: String,
    error: Option<String>,
    session_id: String,
}

impl Attempt {
    fn ok(answer: String) -> Self {
        Self {
            status: "ok",
            answer,
            error: None,
            session_id: String::new(),
        }
    }

    fn failed(error: impl Into<String>, session_id: &str) -> Self {
        Self {
            status: "failed",
            answer: String::new(),
            error: Some(error.into()),
            session_id: session_id.to_string(),
        }
    }
}

/// Go through a batch; returns the closed runs.
pub async fn execute(state: Arc<Cron>, batch: Batch) -> Vec<CronRunRow> {
    let total = batch.runs.len();
    let mut closed = Vec::with_capacity(total);
    for (index, run) in batch.runs.into_iter().enumerate() {
        let last = index + 1 == total;
        closed.push(execute_one(&state, &batch.job, run, batch.counts, last).await);
    }
    state.control.changed();
    // The job's history stays within cron.keep_runs / cron.keep_days.
    if let Err(e) =
        super::retention::prune(&state, super::retention::Scope::Job(&batch.job.id)).await
    {
        tracing::warn!(job = %batch.job.id, error = %e, "cannot prune old cron runs");
    }
    closed
}

async fn execute_one(
    state: &Arc<Cron>,
    job: &CronJobRow,
    run: CronRunRow,
    counts: bool,
    last: bool,
) -> CronRunRow {
    let permits = Arc::clone(&state.control.permits);
    let _permit = permits.acquire_owned().await.ok();
    let settings = state.control.settings();
    let run_id = run.id.clone();
    if let Err(e) = state
        .runner
        .store
        .write(move |tx| store::cron_run_started(tx, &run_id))
        .await
    {
        tracing::warn!(run = %run.id, error = %e, "cannot mark the cron run started");
    }
    let started = Utc::now();
    tracing::info!(job = %job.id, run = %run.id, "cron run started");
    let attempt = attempt(state, job, &run, &settings).await;
    let report = RunReport {
        job_id: &job.id,
        job_name: &job.name,
        run_id: &run.id,
        schedule: &job.schedule,
        script: &job.script,
        no_agent: job.no_agent,
        prompt: &job.prompt,
        session_id: &attempt.session_id,
        started,
        zone: settings.zone_of(&job.timezone),
        status: attempt.status,
        answer: &attempt.answer,
        error: attempt.error.as_deref(),
    };
    let home = state.runner.home.dir.clone();
    let rendered = output::render(&report);
    let written = write_output(home, &report, rendered).await;
    let mut error = attempt.error.clone();
    let output_path = match written {
        Ok(path) => Some(path.display().to_string()),
        Err(e) => {
            tracing::error!(job = %job.id, run = %run.id, error = %e, "cron output not written");
            error = Some(match error {
                Some(first) => format!("{first}; {e}"),
                None => e,
            });
            None
        }
    };
    let messenger = state.runner.tool_services.messenger();
    let delivered = delivery::deliver(
        messenger.as_ref(),
        &state.runner.store,
        delivery::Job {
            id: &job.id,
            name: &job.name,
            deliver: &job.deliver,
            origin: job.origin.as_deref(),
            wrap: settings.wrap_response,
        },
        delivery::Outcome {
            ok: attempt.status == "ok",
            answer: &attempt.answer,
            error: error.as_deref(),
        },
    )
    .await;
    let closed = CronRunRow {
        status: attempt.status.to_string(),
        ended_at: Some(Utc::now().timestamp_millis()),
        error,
        output_path,
        session_id: Some(attempt.session_id.clone()).filter(|s| !s.is_empty()),
        delivery: Some(delivered.said),
        ..run
    };
    tracing::info!(
        job = %job.id, run = %closed.id, status = %closed.status,
        delivery = closed.delivery.as_deref().unwrap_or_default(), "cron run finished"
    );
    let record = closed.clone();
    let session = attempt.session_id;
    let waiting = delivered.waiting;
    let any_waiting = !waiting.is_empty();
    let stored = state
        .runner
        .store
        .write(move |tx| {
            if !session.is_empty() {
                store::end_session(tx, &session, "cron_complete")?;
            }
            let row = store::finish_cron_job_run(tx, &record, counts, last)?;
            // A run whose job was removed meanwhile is gone, and so is what it would wait for.
            for wait in waiting.into_iter().filter(|_| row.is_some()) {
                store::add_pending_delivery(
                    tx,
                    &store::PendingDelivery {
                        run_id: record.id.clone(),
                        target: wait.target,
                        platform: wait.platform,
                        text: Some(wait.text),
                        reason: wait.reason,
                        created_at: record.ended_at.unwrap_or_default(),
                    },
                )?;
            }
            Ok(row)
        })
        .await;
    if any_waiting {
        // Its platform may have connected since the send was refused.
        state.control.deliveries_waiting();
    }
    match stored {
        Ok(Some(row)) => row,
        Ok(None) => closed,
        Err(e) => {
            tracing::error!(run = %closed.id, error = %e, "cannot record the cron run");
            closed
        }
    }
}

async fn write_output(
    home: std::path::PathBuf,
    report: &RunReport<'_>,
    rendered: String,
) -> Result<std::path::PathBuf, String> {
    let stamp = report.started.with_timezone(&report.zone);
    let job_id = report.job_id.to_string();
    tokio::task::spawn_blocking(move || output::write_text(&home, &job_id, stamp, &rendered))
        .await
        .map_err(|e| format!("the output task failed: {e}"))?
}

/// The run: the job's script first when it has one (which may end the run: silent, its output
/// as the result, or its failure), then the agent.
async fn attempt(
    state: &Arc<Cron>,
    job: &CronJobRow,
    run: &CronRunRow,
    settings: &CronSection,
) -> Attempt {
    if job.script.is_empty() {
        return agent_attempt(state, job, run, settings, job.prompt.clone()).await;
    }
    let services = &state.runner.tool_services;
    let stop = state.runner.shutdown.child_token();
    let outcome = script::run(services, &job.script, settings.script_timeout, stop).await;
    tracing::info!(
        job = %job.id, script = %job.script,
        ok = matches!(outcome, ScriptOutcome::Output(_)), "cron script finished"
    );
    match &outcome {
        // Nothing to report, or the script said not to wake the agent: a silent success.
        ScriptOutcome::Output(out) if out.is_empty() || script::agent_asleep(out) => {
            Attempt::ok(prompt::SILENT.into())
        }
        ScriptOutcome::Output(out) if job.no_agent => Attempt::ok(out.clone()),
        ScriptOutcome::Failed(why) if job.no_agent => Attempt::failed(why.clone(), ""),
        _ => {
            let instruction = script::with_script(&outcome, &job.prompt);
            agent_attempt(state, job, run, settings, instruction).await
        }
    }
}

async fn agent_attempt(
    state: &Arc<Cron>,
    job: &CronJobRow,
    run: &CronRunRow,
    settings: &CronSection,
    instruction: String,
) -> Attempt {
    let config = state.runner.config();
    if let Err(why) = llm::check_job_base_url(&job.provider, &job.base_url) {
        return Attempt::failed(format!("cannot start the run: {why}"), "");
    }
    let client = match state.runner.http_client().await {
        Ok(client) => client,
        Err(e) => return Attempt::failed(format!("cannot start the run: {e}"), ""),
    };
    let models = config
        .settings
        .llm
        .for_job(&job.model, &job.provider, &job.base_url);
    let chain =
        match llm::chain_from_config(&models, &config.env, client, &state.runner.credentials).await
        {
            Ok(chain) => chain,
            Err(e) => return Attempt::failed(format!("cannot start the run: {e}"), ""),
        };
    let new = NewSession {
        source: "cron".into(),
        title: Some(format!("cron: {}", job.name)),
        model: chain
            .endpoints
            .first()
            .map(llm::Endpoint::label)
            .unwrap_or_default(),
        cwd: job.workdir.clone(),
        parent_session_id: None,
        lineage: Lineage::Root,
    };
    let run_id = run.id.clone();
    let session = state
        .runner
        .store
        .write(move |tx| {
            let session = store::insert_session(tx, &new)?;
            store::link_cron_run_session(tx, &run_id, &session.id)?;
            Ok::<_, StoreError>(session)
        })
        .await;
    let session = match session {
        Ok(session) => session,
        Err(e) => return Attempt::failed(format!("cannot create the run's session: {e}"), ""),
    };
    let session_id = session.id.clone();
    let conversation = session.conversation_id.clone();
    let skills = load_skills(state, &job.skills).await;
    let input = TurnInput {
        text: prompt::build(&job.name, &job.deliver, &skills, &instruction),
        source_client: "cron".into(),
        yolo: false,
        busy: Some(BusyPolicy::Queue),
        toolsets: job.toolsets.clone(),
        context_from: None,
        turn_id: None,
        stop: None,
        delegated: None,
    };
    let turn = agent::spawn_turn(&state.runner, session, chain, input);
    let live = state.runner.hub.get(&conversation);
    let (joined, idle) = watch(turn, live, settings.inactivity_timeout).await;
    let outcome: Result<TurnOutcome, String> = match joined {
        Ok(Ok(outcome)) => Ok(outcome),
        Ok(Err(TurnError::Store(e))) => Err(format!("the run could not be stored: {e}")),
        Ok(Err(TurnError::Stopping)) => {
            return Attempt {
                status: "interrupted",
                answer: String::new(),
                error: Some(format!("{}; the run did not start", crate::hub::STOPPING)),
                session_id,
            };
        }
        Ok(Err(e)) => Err(e.to_string()),
        Err(e) => Err(format!("the run's task failed: {e}")),
    };
    match (outcome, idle) {
        (Ok(done), Some(limit)) => Attempt {
            status: "timed_out",
            answer: done.answer,
            error: Some(format!(
                "no progress for {} s (cron.inactivity_timeout); the run was stopped",
                limit.as_secs()
            )),
            session_id,
        },
        (Ok(done), None) => match done.end {
            TurnEnd::Finished => Attempt {
                status: "ok",
                answer: done.answer,
                error: None,
                session_id,
            },
            TurnEnd::Interrupted => Attempt {
                status: "interrupted",
                answer: done.answer,
                error: Some(if state.runner.hub.is_stopping() {
                    format!("the run was interrupted: {}", crate::hub::STOPPING)
                } else {
                    "the run was interrupted".into()
                }),
                session_id,
            },
            TurnEnd::Failed { message, hint, .. } => Attempt {
                status: "failed",
                answer: done.answer,
                error: Some(format!("{message} ({hint})")),
                session_id,
            },
        },
        (Err(e), _) => Attempt::failed(e, &session_id),
    }
}

/// Wait for the turn; stop it when no event came for `limit`. Returns the turn's result and,
/// when it was stopped for inactivity, the limit.
async fn watch(
    mut turn: JoinHandle<Result<TurnOutcome, TurnError>>,
    live: Option<Arc<LiveSession>>,
    limit: Option<Duration>,
) -> (
    Result<Result<TurnOutcome, TurnError>, tokio::task::JoinError>,
    Option<Duration>,
) {
    let (Some(live), Some(limit)) = (live, limit) else {
        return (turn.await, None);
    };
    let (mut events, _partial) = live.subscribe();
    let mut deadline = tokio::time::Instant::now() + limit;
    loop {
        tokio::select! {
            joined = &mut turn => return (joined, None),
            event = events.recv() => match event {
                Received::Event(_) => deadline = tokio::time::Instant::now() + limit,
                Received::Lagged => {
                    deadline = tokio::time::Instant::now() + limit;
                    events = live.subscribe().0;
                }
                Received::Closed => return (turn.await, None),
            },
            () = tokio::time::sleep_until(deadline) => {
                tracing::warn!(session = %live.id(), "cron run idle too long; stopping it");
                live.interrupt();
                drop(events);
                drop(live);
                return (turn.await, Some(limit));
            }
        }
    }
}

/// The job's skills as the run loads them: trusted and available ones in full, the others
/// named with the reason.
async fn load_skills(state: &Arc<Cron>, names: &[String]) -> Vec<JobSkill> {
    if names.is_empty() {
        return Vec::new();
    }
    let services = &state.runner.tool_services;
    let settings = services.skills_settings();
    let roots = settings.roots(&services.hermes_home);
    let unavailable = |why: String| {
        names
            .iter()
            .map(|name| JobSkill::Unavailable {
                name: name.clone(),
                why: why.clone(),
            })
            .collect()
    };
    let view = match services.skills.view(&services.store, roots).await {
        Ok(view) => view,
        Err(e) => return unavailable(format!("the skills could not be read: {e}")),
    };
    let wanted = names.to_vec();
    let paths = services.paths.clone();
    let loaded = tokio::task::spawn_blocking(move || {
        let (tools, toolsets) = (HashSet::new(), HashSet::new());
        let ctx = ActivationContext {
            os: skills::current_os(),
            platform: Some("cron"),
            available_tools: &tools,
            available_toolsets: &toolsets,
            disabled: &settings.disabled,
            platform_disabled: &settings.platform_disabled,
        };
        wanted
            .iter()
            .map(|name| match view.quarantined(name) {
                Some(reason) => JobSkill::Unavailable {
                    name: name.clone(),
                    why: format!("quarantined: {reason}"),
                },
                None => prompt::from_view(
                    name,
                    &skills::skill_view(&view.visible, &ctx, name, None, &paths),
                ),
            })
            .collect::<Vec<_>>()
    })
    .await;
    loaded.unwrap_or_else(|e| unavailable(format!("loading the skills failed: {e}")))
}
