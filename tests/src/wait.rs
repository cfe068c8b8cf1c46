//! Waiting for a condition that no event announces. Everything the daemon announces is waited
//! for on the announcement instead (a session event through `Sessions.Attach`, READY, a request
//! reaching the fake model, a pipe or lock the kernel releases); this is for the few states that
//! are only visible by looking, such as a cron run's record leaving `running` right after its
//! turn ended. The caller waits on the nearest real event first, so what is left to look for is
//! a moment away; the deadline turns a state that never comes into a failure naming it.

use std::{future::Future, time::Duration};

/// How often the condition is looked at.
const LOOK_EVERY: Duration = Duration::from_millis(50);

/// Look at `check` until it yields a value, failing the test with `what` after `deadline`.
pub async fn until<T, F, Fut>(what: &str, deadline: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let looking = async {
        loop {
            if let Some(value) = check().await {
                return value;
            }
            tokio::time::sleep(LOOK_EVERY).await;
        }
    };
    tokio::time::timeout(deadline, looking)
        .await
        .unwrap_or_else(|_| panic!("waited {deadline:?} in vain until {what}"))
}
