//! Delivering an update to the webhook `setWebhook` recorded, as Telegram does: a JSON `POST`
//! with `X-Telegram-Bot-Api-Secret-Token` when a secret is given. Plain `http://` only.

use std::time::Duration;

use axum::http::{Request, header};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::{
    client::legacy::{Client, connect::HttpConnector},
    rt::TokioExecutor,
};
use serde_json::Value;

use super::FakeTelegram;

/// How long a delivery may take before the test fails.
const DELIVERY_TIMEOUT: Duration = Duration::from_secs(10);

impl FakeTelegram {
    /// POSTs `update` to the webhook URL (an `update_id` is added when missing), with
    /// `secret` as `X-Telegram-Bot-Api-Secret-Token` when given; returns the HTTP status.
    /// Panics when no webhook is set or the request fails.
    pub async fn deliver_webhook(&self, mut update: Value, secret: Option<&str>) -> u16 {
        let Some((url, _)) = self.webhook() else {
            panic!("fake-telegram: deliver_webhook without a webhook (setWebhook was not called)");
        };
        if update.get("update_id").is_none()
            && let Some(fields) = update.as_object_mut()
        {
            let id = self.shared.write(|world| {
                world.next_update_id += 1;
                world.next_update_id - 1
            });
            fields.insert("update_id".to_owned(), id.into());
        }
        match tokio::time::timeout(DELIVERY_TIMEOUT, post_json(&url, &update, secret)).await {
            Ok(Ok(status)) => status,
            Ok(Err(error)) => panic!("fake-telegram: webhook POST {url}: {error}"),
            Err(_) => {
                panic!("fake-telegram: webhook POST {url}: no answer in {DELIVERY_TIMEOUT:?}")
            }
        }
    }
}

/// POSTs `body` as JSON to `url`; the response status.
async fn post_json(url: &str, body: &Value, secret: Option<&str>) -> Result<u16, String> {
    let client: Client<HttpConnector, Full<Bytes>> =
        Client::builder(TokioExecutor::new()).build_http();
    let mut request = Request::post(url).header(header::CONTENT_TYPE, "application/json");
    if let Some(secret) = secret {
        request = request.header("X-Telegram-Bot-Api-Secret-Token", secret);
    }
    let request = request
        .body(Full::new(Bytes::from(body.to_string())))
        .map_err(|e| e.to_string())?;
    let response = client.request(request).await.map_err(|e| e.to_string())?;
    let status = response.status().as_u16();
    response
        .into_body()
        .collect()
        .await
        .map_err(|e| e.to_string())?;
    Ok(status)
}
