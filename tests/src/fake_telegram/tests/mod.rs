//! Tests of the fake Telegram server through a real HTTP client (hyper's), plus the HTML
//! parser on its own. Waits are on the fake's own events; timeouts only guard them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod faults;
mod files;
mod html;
mod messages;
mod polling;

use std::time::Duration;

use axum::http::{HeaderMap, Request, header};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::{
    client::legacy::{Client, connect::HttpConnector},
    rt::TokioExecutor,
};
use serde_json::{Value, json};

use super::{Chat, FakeTelegram, User};

/// How long a test waits for something that should happen at once.
pub(super) const WAIT: Duration = Duration::from_secs(10);

/// A bot client talking to a fresh fake.
#[derive(Clone)]
pub(super) struct Bot {
    http: Client<HttpConnector, Full<Bytes>>,
    pub(super) tg: FakeTelegram,
}

/// An HTTP answer.
#[derive(Debug)]
pub(super) struct Reply {
    pub(super) status: u16,
    pub(super) headers: HeaderMap,
    pub(super) body: Bytes,
}

impl Reply {
    pub(super) fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("a JSON body")
    }

    /// The `result` of a successful answer.
    pub(super) fn result(&self) -> Value {
        let json = self.json();
        assert_eq!((self.status, &json["ok"]), (200, &json!(true)), "{json}");
        json["result"].clone()
    }

    /// The `description` of a failed answer, checked to carry `status` both ways.
    pub(super) fn error(&self, status: u16) -> String {
        let json = self.json();
        assert_eq!(self.status, status, "{json}");
        assert_eq!(json["ok"], false);
        assert_eq!(json["error_code"], status);
        json["description"].as_str().unwrap().to_owned()
    }
}

impl Bot {
    pub(super) async fn start() -> Self {
        Self {
            http: Client::builder(TokioExecutor::new()).build_http(),
            tg: FakeTelegram::start().await,
        }
    }

    /// Calls `method` with a JSON body, with the bot's token.
    pub(super) async fn call(&self, method: &str, params: Value) -> Reply {
        self.call_as(&self.tg.token(), method, params).await
    }

    pub(super) async fn call_as(&self, token: &str, method: &str, params: Value) -> Reply {
        let url = format!("{}{token}/{method}", self.tg.base_url());
        let request = Request::post(url)
            .header(header::CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from(params.to_string())))
            .unwrap();
        self.send(request).await
    }

    /// Calls `method` with a form body, as many clients do.
    pub(super) async fn call_form(&self, method: &str, form: &str) -> Reply {
        let url = format!("{}{}/{method}", self.tg.base_url(), self.tg.token());
        let request = Request::post(url)
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(Full::new(Bytes::from(form.to_owned())))
            .unwrap();
        self.send(request).await
    }

    pub(super) async fn get(&self, url: &str) -> Reply {
        let request = Request::get(url).body(Full::new(Bytes::new())).unwrap();
        self.send(request).await
    }

    async fn send(&self, request: Request<Full<Bytes>>) -> Reply {
        let response = self.http.request(request).await.expect("the fake answers");
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        Reply {
            status,
            headers,
            body,
        }
    }

    /// A poll in the background.
    pub(super) fn spawn_call(&self, method: &str, params: Value) -> tokio::task::JoinHandle<Reply> {
        let bot = self.clone();
        let method = method.to_owned();
        tokio::spawn(async move { bot.call(&method, params).await })
    }
}

/// Alice, and her private chat with the bot.
pub(super) fn alice() -> (Chat, User) {
    (
        Chat::private(1001),
        User::new(1001, "Alice").with_username("alice"),
    )
}

/// Awaits a background call, failing after [`WAIT`].
pub(super) async fn joined(task: tokio::task::JoinHandle<Reply>) -> Reply {
    tokio::time::timeout(WAIT, task)
        .await
        .expect("the call answers in time")
        .unwrap()
}
