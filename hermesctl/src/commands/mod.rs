//! One module per command group.

pub mod auth;
pub mod config;
pub mod cron;
pub mod cron_request;
pub mod cron_show;
pub mod cron_text;
pub mod daemon;
pub mod docs;
pub mod events_json;
pub mod gateway;
pub mod history;
pub mod import;
pub mod mcp;
pub mod mcp_serve;
pub mod memory;
pub mod model;
pub mod send;
pub mod send_attached;
pub mod sessions;
pub mod skills;
pub mod tui;
pub mod watch;
