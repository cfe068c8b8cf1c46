//! The HTTP steps every provider shares: send with a stale timeout, turn error responses into
//! classified errors, read a whole JSON body within the stale timeout.

use std::{pin::Pin, time::Duration};

use futures_util::{Stream, StreamExt};
use serde_json::Value;
use tokio::time::{Instant, Sleep};

use super::{
    endpoint::Endpoint,
    error::{ErrorClass, LlmError, classify_http, classify_transport},
    transport::{RequestBuilder, Response},
};

/// The error for an endpoint that went silent.
pub fn stale(endpoint: &Endpoint) -> LlmError {
    LlmError::new(
        ErrorClass::Timeout,
        &endpoint.label(),
        format!(
            "no data for {} s (model.stale_timeout)",
            endpoint.stale_timeout.as_secs_f64()
        ),
    )
}

/// Send the request; the headers must arrive within the stale timeout. Non-2xx is an error.
pub async fn send(builder: RequestBuilder, endpoint: &Endpoint) -> Result<Response, LlmError> {
    let label = endpoint.label();
    let response = match tokio::time::timeout(endpoint.stale_timeout, builder.send()).await {
        Err(_) => return Err(stale(endpoint)),
        Ok(Err(e)) => return Err(classify_transport(&label, &e)),
        Ok(Ok(response)) => response,
    };
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    let retry_after = response
        .headers()
        .get(http::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    if status.is_redirection() {
        let location = response
            .headers()
            .get(http::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("elsewhere");
        let said = format!(
            "redirected to {location}; model calls do not follow redirects, so set base_url to \
             the final address"
        );
        return Err(classify_http(&label, status.as_u16(), None, &said));
    }
    let body = tokio::time::timeout(endpoint.stale_timeout, response.text())
        .await
        .ok()
        .and_then(Result::ok)
        .unwrap_or_default();
    Err(classify_http(
        &label,
        status.as_u16(),
        retry_after.as_deref(),
        &body,
    ))
}

/// Read a whole JSON response within the stale timeout.
pub async fn read_json(response: Response, endpoint: &Endpoint) -> Result<Value, LlmError> {
    let label = endpoint.label();
    let text = match tokio::time::timeout(endpoint.stale_timeout, response.text()).await {
        Err(_) => return Err(stale(endpoint)),
        Ok(Err(e)) => return Err(classify_transport(&label, &e)),
        Ok(Ok(text)) => text,
    };
    serde_json::from_str(&text).map_err(|e| {
        LlmError::new(
            ErrorClass::Server,
            &label,
            format!("the response is not JSON ({e})"),
        )
    })
}

/// How far a stream's deadline may lag behind its last event: re-arming a timer for every chunk
/// costs more than the chunk, so it is re-armed at most this often. A silent stream is therefore
/// abandoned between `stale_timeout − 250 ms` and `stale_timeout` after its last data.
const REARM_EVERY: Duration = Duration::from_millis(250);

/// The stale-stream timer of one response.
pub struct Watchdog {
    sleep: Pin<Box<Sleep>>,
    armed_at: Instant,
    stale: Duration,
}

impl Watchdog {
    pub fn new(stale: Duration) -> Self {
        let now = Instant::now();
        Self {
            sleep: Box::pin(tokio::time::sleep_until(now + stale)),
            armed_at: now,
            stale,
        }
    }

    /// The next item of `stream`, or `None` when the stream stayed silent too long.
    pub async fn next<S: Stream + Unpin>(&mut self, stream: &mut S) -> Option<Option<S::Item>> {
        tokio::select! {
            biased;
            item = stream.next() => {
                let now = Instant::now();
                if now - self.armed_at >= REARM_EVERY {
                    self.sleep.as_mut().reset(now + self.stale);
                    self.armed_at = now;
                }
                Some(item)
            }
            () = &mut self.sleep => None,
        }
    }
}
