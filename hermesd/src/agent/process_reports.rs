//! What background processes report (`exec::ProcessNotification`: their end, a watched line)
//! becomes turns of the conversations that started them. One worker per conversation with
//! reports waiting runs them one at a time, oldest first, each once the conversation runs no
//! turn. At most [`MAX_WAITING`] wait per conversation (a process's newer watch match replaces
//! its older one still waiting); a completion the agent has seen by then (`process wait`, `log`,
//! `kill`) is dropped. The text reaches the model masked of secrets, as a tool result does.

use std::{
    collections::{HashMap, VecDeque},
    sync::{Arc, Mutex, MutexGuard},
};

use tokio::sync::broadcast::error::RecvError;

use super::{
    TurnRunner,
    unattended::{Unasked, run_unasked},
};
use crate::{
    exec::{NotificationKind, ProcessNotification},
    hub::Received,
};

/// Reports waiting per conversation; beyond it the oldest watch report (else the oldest) goes.
const MAX_WAITING: usize = 8;

/// The reports waiting, per conversation; a conversation is here while its worker runs.
#[derive(Default)]
struct Waiting(Mutex<HashMap<String, VecDeque<ProcessNotification>>>);

impl Waiting {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, VecDeque<ProcessNotification>>> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Queue `report`; true when its conversation has no worker yet (start one).
    fn push(&self, report: ProcessNotification) -> bool {
        let mut waiting = self.lock();
        let new_worker = !waiting.contains_key(&report.owner);
        let queue = waiting.entry(report.owner.clone()).or_default();
        if report.kind == NotificationKind::WatchMatch {
            queue.retain(|r| {
                !(r.kind == NotificationKind::WatchMatch && r.process_id == report.process_id)
            });
        }
        if queue.len() >= MAX_WAITING {
            let oldest_watch = queue
                .iter()
                .position(|r| r.kind != NotificationKind::Completion);
            if let Some(dropped) = queue.remove(oldest_watch.unwrap_or(0)) {
                tracing::warn!(
                    session = %dropped.owner, process = %dropped.process_id,
                    "a background process report was dropped: {MAX_WAITING} were waiting"
                );
            }
        }
        queue.push_back(report);
        new_worker
    }

    /// The next report for `owner`; `None` ends its worker (and forgets the conversation).
    fn next(&self, owner: &str) -> Option<ProcessNotification> {
        let mut waiting = self.lock();
        let next = waiting.get_mut(owner).and_then(VecDeque::pop_front);
        if next.is_none() {
            waiting.remove(owner);
        }
        next
    }
}

/// Deliver what background processes report until the daemon stops.
pub async fn deliver_process_reports(runner: Arc<TurnRunner>) {
    let mut reports = runner.tool_services.processes.notifications();
    let waiting = Arc::new(Waiting::default());
    loop {
        let report = tokio::select! {
            () = runner.shutdown.cancelled() => return,
            report = reports.recv() => report,
        };
        match report {
            // A process started outside any conversation has nobody to tell.
            Ok(report) if report.owner.is_empty() => {}
            Ok(report) => {
                let owner = report.owner.clone();
                if waiting.push(report) {
                    let (runner_for_worker, waiting) = (Arc::clone(&runner), Arc::clone(&waiting));
                    let worker = work(runner_for_worker, waiting, owner);
                    if runner.hub.spawn(worker).is_none() {
                        return;
                    }
                }
            }
            Err(RecvError::Lagged(lost)) => {
                tracing::warn!(
                    lost,
                    "background process reports were lost: too many at once"
                );
            }
            Err(RecvError::Closed) => return,
        }
    }
}

/// Run `owner`'s waiting reports, one turn at a time.
async fn work(runner: Arc<TurnRunner>, waiting: Arc<Waiting>, owner: String) {
    while let Some(report) = waiting.next(&owner) {
        if !idle(&runner, &owner).await {
            return;
        }
        let processes = &runner.tool_services.processes;
        if report.kind == NotificationKind::Completion
            && processes.is_completion_consumed(&report.process_id)
        {
            tracing::debug!(process = %report.process_id, "completion already seen by the agent");
            continue;
        }
        tracing::info!(
            session = %owner, process = %report.process_id, kind = ?report.kind,
            "a background process reports to its conversation"
        );
        let text = runner
            .tool_services
            .masker()
            .mask(&report.text)
            .into_owned();
        let unasked = Unasked {
            text,
            from: "process",
        };
        run_unasked(&runner, &owner, unasked).await;
    }
}

/// Wait until `conversation` runs no turn; false when the daemon stops first.
async fn idle(runner: &Arc<TurnRunner>, conversation: &str) -> bool {
    let Some(live) = runner.hub.get(conversation) else {
        return true;
    };
    loop {
        // Subscribed before looking: the end of the turn (`StateChanged` to idle, sent after
        // the turn is marked over) cannot pass unseen.
        let (mut events, _) = live.subscribe();
        loop {
            if !live.is_running() {
                return true;
            }
            let received = tokio::select! {
                () = runner.shutdown.cancelled() => return false,
                received = events.recv() => received,
            };
            match received {
                Received::Event(_) => {}
                // Cut off for falling behind: subscribe again.
                Received::Lagged => break,
                Received::Closed => return true,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn report(
        owner: &str,
        process: &str,
        kind: NotificationKind,
        text: &str,
    ) -> ProcessNotification {
        ProcessNotification {
            owner: owner.into(),
            process_id: process.into(),
            kind,
            text: text.into(),
        }
    }

    #[test]
    fn one_worker_per_conversation_in_order_and_a_newer_match_replaces_the_older() {
        let waiting = Waiting::default();
        assert!(waiting.push(report("a", "p1", NotificationKind::WatchMatch, "old")));
        assert!(!waiting.push(report("a", "p2", NotificationKind::Completion, "p2 done")));
        assert!(!waiting.push(report("a", "p1", NotificationKind::WatchMatch, "new")));
        assert!(waiting.push(report("b", "p3", NotificationKind::Completion, "b's")));
        let texts: Vec<String> = std::iter::from_fn(|| waiting.next("a"))
            .map(|r| r.text)
            .collect();
        assert_eq!(texts, ["p2 done", "new"]);
        // The worker ended: the next report starts another.
        assert!(waiting.push(report("a", "p1", NotificationKind::Completion, "p1 done")));
        assert_eq!(waiting.next("b").unwrap().text, "b's");
    }

    #[test]
    fn at_most_eight_wait_and_completions_are_kept_over_watch_reports() {
        let waiting = Waiting::default();
        waiting.push(report(
            "a",
            "w",
            NotificationKind::WatchDisabled,
            "disabled",
        ));
        for n in 0..MAX_WAITING {
            waiting.push(report(
                "a",
                &format!("p{n}"),
                NotificationKind::Completion,
                &n.to_string(),
            ));
        }
        let kinds: Vec<NotificationKind> = std::iter::from_fn(|| waiting.next("a"))
            .map(|r| r.kind)
            .collect();
        assert_eq!(kinds, vec![NotificationKind::Completion; MAX_WAITING]);
    }
}
