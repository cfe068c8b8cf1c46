//! The chat client's slash commands: what each one does against the daemon.

use hermes_proto::pb::{self, client_frame};

use super::{
    Chat, Link, Next, attach, resolve_session, send,
    slash::{self, Slash},
};
use crate::{connection::Daemon, error::CliError};

impl Chat {
    pub(super) async fn command(
        &mut self,
        daemon: &Daemon,
        link: &mut Link,
        command: Slash,
    ) -> Result<Next, CliError> {
        let mut sessions = daemon.sessions();
        match command {
            Slash::Help => println!("{}", slash::help()),
            Slash::Detach => return Ok(Next::Detach),
            Slash::Quit => return Ok(Next::Quit),
            Slash::Verbose => {
                self.view.verbose = !self.view.verbose;
                println!("verbose {}", if self.view.verbose { "on" } else { "off" });
            }
            Slash::Stop => send(link, client_frame::Kind::Interrupt(pb::InterruptTurn {})).await,
            Slash::New => {
                self.session = resolve_session(daemon, None, false).await?;
                self.switch(daemon, link).await?;
                println!("new session {}", self.session.id);
            }
            Slash::Sessions => {
                let list = sessions
                    .list(pb::ListSessionsRequest {
                        limit: 10,
                        ..Default::default()
                    })
                    .await?
                    .into_inner()
                    .sessions;
                for s in list {
                    let here = if s.id == self.session.id { "*" } else { " " };
                    println!("{here} {}  {:>3} msgs  {}", s.id, s.message_count, s.title);
                }
            }
            Slash::Usage => {
                let s = sessions
                    .get(pb::GetSessionRequest {
                        id: self.session.id.clone(),
                        include_messages: false,
                    })
                    .await?
                    .into_inner()
                    .session
                    .unwrap_or_default();
                let u = s.usage.unwrap_or_default();
                let cost = u
                    .cost_usd
                    .map_or_else(|| "unknown".to_string(), |c| format!("${c:.4}"));
                println!(
                    "{} in / {} out tokens, cost {cost}, {} messages",
                    u.input_tokens, u.output_tokens, s.message_count
                );
            }
            Slash::Model => {
                let mut models = daemon.models();
                match models.get_default(pb::GetDefaultModelRequest {}).await {
                    Ok(reply) => {
                        let m = reply.into_inner().model.unwrap_or_default();
                        let r = m.r#ref.unwrap_or_default();
                        println!(
                            "{}:{} ({} tokens of context)",
                            r.provider, r.model, m.context_length
                        );
                    }
                    Err(status) => println!("{}", hermes_proto::client::describe_status(&status)),
                }
            }
            Slash::Tools => {
                let text = hermes_proto::yaml_edit::read_config(&daemon_config_path(daemon))
                    .unwrap_or_default();
                let toolsets = hermes_proto::yaml_edit::get(&text, "toolsets")
                    .ok()
                    .flatten();
                let disabled = hermes_proto::yaml_edit::get(&text, "agent.disabled_toolsets")
                    .ok()
                    .flatten();
                println!(
                    "toolsets: {} · disabled: {}",
                    toolsets.map_or("hermes-cli (default)".into(), |v| yaml_line(&v)),
                    disabled.map_or("none".into(), |v| yaml_line(&v))
                );
            }
            Slash::Image(None) if self.images.is_empty() => {
                println!(
                    "/image PATH attaches an image (PNG, JPEG, GIF, WebP) to your next message"
                )
            }
            Slash::Image(None) => println!("attached: {}", self.images.join(", ")),
            Slash::Image(Some(path)) => {
                match crate::commands::send::absolute_images(&[path.into()]) {
                    Ok(paths) => {
                        println!(
                            "attached {} (sent with your next message)",
                            paths.join(", ")
                        );
                        self.images.extend(paths);
                    }
                    Err(e) => println!("{}", e.message),
                }
            }
            Slash::Title(title) => self.title(daemon, title).await?,
            Slash::Branch(title) => {
                let branch = sessions
                    .branch(pb::BranchSessionRequest {
                        id: self.session.id.clone(),
                        up_to_message_id: 0,
                        title: title.unwrap_or_default(),
                    })
                    .await?
                    .into_inner()
                    .session
                    .ok_or_else(|| CliError::new("hermesd returned no session"))?;
                let from = std::mem::replace(&mut self.session, branch);
                self.switch(daemon, link).await?;
                println!(
                    "branched: now in {} (a copy of {}, which stays as it was)",
                    self.session.id, from.id
                );
            }
            Slash::Undo => {
                let undone = self.undo(daemon).await?;
                println!(
                    "removed the last exchange ({} messages)",
                    undone.removed_messages
                );
            }
            Slash::Retry => {
                let undone = self.undo(daemon).await?;
                println!("retrying: {}", undone.user_text);
                // Sent by the main loop, as if typed again.
                self.unsent = Some(undone.user_text);
            }
            Slash::Resume(None) => println!("/resume ID|TITLE — see /sessions"),
            Slash::Resume(Some(wanted)) => {
                self.session = resolve_session(daemon, Some(wanted), false).await?;
                self.switch(daemon, link).await?;
                println!(
                    "resumed {} {}",
                    self.session.id,
                    if self.session.title.is_empty() {
                        String::new()
                    } else {
                        format!("({})", self.session.title)
                    }
                );
            }
            Slash::ReloadMcp => {
                let reply = daemon
                    .mcp()
                    .reload(pb::ReloadMcpRequest {})
                    .await?
                    .into_inner();
                println!("{}", hermes_proto::mcp::summary(&reply.servers));
            }
            Slash::Compress => {
                println!("compressing…");
                let done = sessions
                    .compress(pb::CompressSessionRequest {
                        id: self.session.id.clone(),
                    })
                    .await?
                    .into_inner();
                println!(
                    "compressed: ~{} → ~{} tokens (segment {})",
                    done.tokens_before, done.tokens_after, done.new_segment_id
                );
            }
            Slash::Busy(policy) => {
                let busy = match policy.as_deref() {
                    Some("queue") => pb::BusyPolicy::Queue,
                    Some("steer") => pb::BusyPolicy::Steer,
                    Some("interrupt") => pb::BusyPolicy::Interrupt,
                    _ => {
                        println!(
                            "/busy queue|steer|interrupt — now: {}",
                            self.session.busy_policy().as_str_name()
                        );
                        return Ok(Next::Continue);
                    }
                };
                let updated = sessions
                    .set_busy_policy(pb::SetBusyPolicyRequest {
                        id: self.session.id.clone(),
                        busy_policy: busy as i32,
                    })
                    .await?
                    .into_inner()
                    .session;
                if let Some(updated) = updated {
                    self.session = updated;
                }
                println!("input during a turn will {}", policy.unwrap_or_default());
            }
        }
        Ok(Next::Continue)
    }
}

impl Chat {
    /// Attach to `self.session` instead of the session shown so far.
    async fn switch(&mut self, daemon: &Daemon, link: &mut Link) -> Result<(), CliError> {
        *link = attach(daemon, &self.session.id, None).await?;
        self.last_seq = None;
        Ok(())
    }

    async fn undo(&self, daemon: &Daemon) -> Result<pb::UndoSessionResponse, CliError> {
        let request = pb::UndoSessionRequest {
            id: self.session.id.clone(),
        };
        Ok(daemon.sessions().undo(request).await?.into_inner())
    }

    async fn title(&mut self, daemon: &Daemon, title: Option<String>) -> Result<(), CliError> {
        let mut sessions = daemon.sessions();
        let session = match title {
            Some(title) => {
                sessions
                    .rename(pb::RenameSessionRequest {
                        id: self.session.id.clone(),
                        title,
                    })
                    .await?
                    .into_inner()
                    .session
            }
            None => {
                sessions
                    .get(pb::GetSessionRequest {
                        id: self.session.id.clone(),
                        include_messages: false,
                    })
                    .await?
                    .into_inner()
                    .session
            }
        };
        if let Some(session) = session {
            self.session = session;
        }
        if self.session.title.is_empty() {
            println!("(untitled) — /title TEXT sets one");
        } else {
            println!("title: {}", self.session.title);
        }
        Ok(())
    }
}

fn daemon_config_path(daemon: &Daemon) -> std::path::PathBuf {
    std::path::PathBuf::from(&daemon.status.home).join("config.yaml")
}

fn yaml_line(value: &serde_yaml::Value) -> String {
    serde_yaml::to_string(value)
        .unwrap_or_default()
        .trim()
        .replace('\n', " ")
}
