//! The `cronjob` tool's narrow handle on cron: the operations the agent may ask for, sent to a
//! task that owns cron (so the tools, which every turn holds, never hold the turn runner
//! themselves). Each request runs as its own task and answers on its own channel.

use std::sync::Arc;

use tokio::sync::{mpsc, oneshot};

use super::{
    Cron,
    jobs::JobSpec,
    manage::{self, CronError},
};
use crate::store::{CronJobRow, CronRunRow};

/// Requests waiting for the cron task, at most (a turn's calls are sequential; this bounds a
/// burst of parallel ones).
const QUEUE: usize = 32;

/// What the agent may do to jobs.
#[derive(Debug)]
pub enum Op {
    Add(JobSpec),
    List,
    Edit {
        id: String,
        spec: JobSpec,
        fields: Vec<String>,
    },
    Pause {
        id: String,
        reason: String,
    },
    Resume(String),
    Remove(String),
    /// Run now, without waiting for the run to end.
    Run(String),
}

/// What an operation gave back.
#[derive(Debug)]
pub enum Done {
    Job(Box<CronJobRow>),
    Jobs(Vec<CronJobRow>),
    Run(CronRunRow),
}

type Request = (Op, oneshot::Sender<Result<Done, CronError>>);

/// A cloneable handle for sending operations to cron.
#[derive(Debug, Clone)]
pub struct CronOps {
    requests: mpsc::Sender<Request>,
}

/// The receiving end, served by [`serve`] once the daemon is composed.
#[derive(Debug)]
pub struct CronRequests(mpsc::Receiver<Request>);

/// A handle and the queue it feeds.
pub fn channel() -> (CronOps, CronRequests) {
    let (requests, queue) = mpsc::channel(QUEUE);
    (CronOps { requests }, CronRequests(queue))
}

impl CronOps {
    /// Run `op`; `Stopping` when cron is not serving (the daemon is starting or stopping).
    pub async fn call(&self, op: Op) -> Result<Done, CronError> {
        let (reply, answer) = oneshot::channel();
        self.requests
            .send((op, reply))
            .await
            .map_err(|_| CronError::Stopping)?;
        answer.await.map_err(|_| CronError::Stopping)?
    }
}

/// Serve operations until the daemon stops.
pub async fn serve(cron: Arc<Cron>, CronRequests(mut queue): CronRequests) {
    loop {
        let request = tokio::select! {
            request = queue.recv() => request,
            () = cron.runner.shutdown.cancelled() => None,
        };
        let Some((op, reply)) = request else {
            return;
        };
        let cron = Arc::clone(&cron);
        tokio::spawn(async move {
            let _ = reply.send(execute(&cron, op).await);
        });
    }
}

async fn execute(cron: &Arc<Cron>, op: Op) -> Result<Done, CronError> {
    Ok(match op {
        Op::Add(spec) => Done::Job(Box::new(manage::add(cron, spec).await?)),
        Op::List => Done::Jobs(
            cron.runner
                .store
                .read(crate::store::cron_jobs)
                .await
                .map_err(CronError::from)?,
        ),
        Op::Edit { id, spec, fields } => {
            Done::Job(Box::new(manage::edit(cron, &id, spec, fields).await?))
        }
        Op::Pause { id, reason } => Done::Job(Box::new(manage::pause(cron, &id, &reason).await?)),
        Op::Resume(id) => Done::Job(Box::new(manage::resume(cron, &id).await?)),
        Op::Remove(id) => Done::Job(Box::new(manage::remove(cron, &id).await?)),
        Op::Run(id) => Done::Run(manage::run_now(cron, &id, false).await?),
    })
}
