//! `getUpdates`, the long poll, as the reference server runs it: a positive `offset` confirms
//! (forgets) every update below it, a negative one keeps only the last `-offset`; pending updates
//! answer at once; otherwise the poll waits up to `timeout` seconds (at most 50) for one, woken
//! by the state's change counter. A newer poll that has to wait terminates the waiting one with
//! 409, as does `setWebhook`; a poll while a webhook is set is a 409. A [`PollGuard`] counts the
//! request in flight while its client is connected: dropping the handler (the client went away)
//! releases it.

use std::{sync::Arc, time::Duration};

use serde_json::Value;

use super::{
    methods::strings,
    params::Params,
    reply::{Answer, ApiError, Outcome},
    state::{Shared, World},
};

pub(super) const CONFLICT_OTHER: &str = "Conflict: terminated by other getUpdates request; make \
     sure that only one bot instance is running";
const CONFLICT_WEBHOOK: &str = "Conflict: can't use getUpdates method while webhook is active; \
     use deleteWebhook to delete the webhook first";
/// The longest `timeout` the server honours, in seconds.
const MAX_TIMEOUT: i64 = 50;
/// The update kinds delivered when `allowed_updates` was never given (or given empty).
const NOT_BY_DEFAULT: &[&str] = &["chat_member", "message_reaction", "message_reaction_count"];

/// A `getUpdates` request in flight; dropping it (answered, or abandoned by its client) frees
/// its place.
pub(super) struct PollGuard {
    shared: Arc<Shared>,
    pub(super) id: u64,
}

impl PollGuard {
    pub(super) fn enter(shared: &Arc<Shared>) -> Self {
        let id = shared.write(|world| {
            world.polls.in_flight += 1;
            world.polls.next_id += 1;
            world.polls.next_id
        });
        Self {
            shared: shared.clone(),
            id,
        }
    }
}

impl Drop for PollGuard {
    fn drop(&mut self) {
        let id = self.id;
        self.shared.write(|world| {
            world.polls.in_flight = world.polls.in_flight.saturating_sub(1);
            if world.polls.waiting == Some(id) {
                world.polls.waiting = None;
            }
            world.polls.terminated.remove(&id);
        });
    }
}

/// The parameters of one poll.
struct Request {
    offset: i64,
    limit: usize,
    timeout: Duration,
    allowed: Option<Vec<String>>,
}

impl Request {
    fn new(params: &Params) -> Self {
        let allowed = match params.json("allowed_updates") {
            Ok(Some(Value::Array(kinds))) => Some(strings(&kinds)),
            _ => None,
        };
        let limit = params.int("limit").unwrap_or(100).clamp(1, 100);
        let timeout = params.int("timeout").unwrap_or(0).clamp(0, MAX_TIMEOUT);
        Self {
            offset: params.int("offset").unwrap_or(0),
            limit: usize::try_from(limit).unwrap_or(100),
            timeout: Duration::from_secs(u64::try_from(timeout).unwrap_or(0)),
            allowed,
        }
    }
}

/// What a waiting poll sees when it looks.
enum Verdict {
    Wait,
    Ready,
    Terminated(&'static str),
}

/// Answers one `getUpdates` request.
pub(super) async fn get_updates(shared: &Shared, params: &Params, poll: &PollGuard) -> Outcome {
    if shared.read(|world| world.hang_polls) {
        return shared.hang().await;
    }
    let request = Request::new(params);
    let mut changes = shared.subscribe();
    if let Some(outcome) = shared.write(|world| start(world, &request, poll.id)) {
        return outcome;
    }
    let deadline = tokio::time::Instant::now() + request.timeout;
    loop {
        changes.borrow_and_update();
        let verdict = shared.read(|world| look(world, poll.id));
        if !matches!(verdict, Verdict::Wait) {
            return shared.write(|world| finish(world, &request, poll.id, &verdict));
        }
        tokio::select! {
            changed = changes.changed() => {
                if changed.is_err() {
                    return Err(ApiError::closing());
                }
            }
            () = tokio::time::sleep_until(deadline) => {
                return shared.write(|world| finish(world, &request, poll.id, &Verdict::Ready));
            }
            () = shared.stop.cancelled() => return Err(ApiError::closing()),
        }
    }
}

/// The poll's first look: an answer now, or `None` to wait (as the waiting poll).
fn start(world: &mut World, request: &Request, id: u64) -> Option<Outcome> {
    if world.conflict {
        world.abort_waiting_poll(CONFLICT_OTHER);
        return Some(Err(ApiError::conflict(CONFLICT_OTHER)));
    }
    if world.webhook.is_some() {
        return Some(Err(ApiError::conflict(CONFLICT_WEBHOOK)));
    }
    confirm(world, request.offset);
    if let Some(allowed) = &request.allowed {
        world.allowed_updates.clone_from(allowed);
    }
    let updates = batch(world, request.limit);
    if !updates.is_empty() || request.timeout.is_zero() {
        return Some(Ok(Answer::new(Value::Array(updates))));
    }
    world.abort_waiting_poll(CONFLICT_OTHER);
    world.polls.waiting = Some(id);
    None
}

fn look(world: &World, id: u64) -> Verdict {
    if let Some(reason) = world.polls.terminated.get(&id) {
        return Verdict::Terminated(reason);
    }
    if world.conflict {
        return Verdict::Terminated(CONFLICT_OTHER);
    }
    if world.queue.iter().any(|u| allowed(world, &u.kind)) {
        return Verdict::Ready;
    }
    Verdict::Wait
}

fn finish(world: &mut World, request: &Request, id: u64, verdict: &Verdict) -> Outcome {
    world.polls.terminated.remove(&id);
    if world.polls.waiting == Some(id) {
        world.polls.waiting = None;
    }
    match verdict {
        Verdict::Terminated(reason) => Err(ApiError::conflict(reason)),
        Verdict::Ready | Verdict::Wait => {
            Ok(Answer::new(Value::Array(batch(world, request.limit))))
        }
    }
}

/// Forgets the updates `offset` confirms.
fn confirm(world: &mut World, offset: i64) {
    if offset < 0 {
        let keep = usize::try_from(offset.unsigned_abs()).unwrap_or(usize::MAX);
        while world.queue.len() > keep {
            if let Some(update) = world.queue.pop_front() {
                world.confirmed = world.confirmed.max(update.id + 1);
            }
        }
        return;
    }
    if offset == 0 {
        return;
    }
    world.queue.retain(|update| update.id >= offset);
    world.confirmed = world.confirmed.max(offset);
}

/// Whether updates of `kind` are delivered (the last `allowed_updates`, or the default set).
fn allowed(world: &World, kind: &str) -> bool {
    if world.allowed_updates.is_empty() {
        return !NOT_BY_DEFAULT.contains(&kind);
    }
    world.allowed_updates.iter().any(|k| k == kind)
}

/// The first `limit` deliverable updates; updates of kinds not asked for are dropped, as
/// Telegram never queues them.
fn batch(world: &mut World, limit: usize) -> Vec<Value> {
    let kinds: Vec<bool> = world
        .queue
        .iter()
        .map(|u| allowed(world, &u.kind))
        .collect();
    let mut keep = kinds.into_iter();
    world.queue.retain(|_| keep.next().unwrap_or(true));
    world
        .queue
        .iter()
        .take(limit)
        .map(|u| u.json.clone())
        .collect()
}
