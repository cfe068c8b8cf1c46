//! Enter in the input box: a slash command from the shared registry (handled here, or by an RPC
//! through [`Effect::Command`]), a `/<skill>` the daemon offers, or a message for the session.

use hermes_proto::{
    commands::{self, COMMANDS},
    pb::{self, client_frame},
};

use super::{App, Effect, Focus, conversation::Pending};

/// Images one message takes (the daemon's limit).
const MAX_IMAGES: usize = 8;

/// Commands the daemon link carries out with an RPC.
pub const RPC_COMMANDS: &[&str] = &[
    "model",
    "busy",
    "usage",
    "title",
    "branch",
    "undo",
    "retry",
    "compress",
    "reload_mcp",
];

impl App {
    pub(super) fn submit(&mut self) -> Vec<Effect> {
        let text = self.input.text();
        if text.trim().is_empty() {
            return Vec::new();
        }
        let text = self.input.take();
        self.flash = None;
        let Some((word, args)) = commands::split(&text).filter(|_| text.starts_with('/')) else {
            return self.send_text(text);
        };
        if let Some(command) = commands::lookup(&word).filter(|c| c.in_terminal()) {
            return self.builtin(command.name, &args);
        }
        let skill = word.replace('-', "_");
        if self
            .commands
            .iter()
            .any(|c| c.kind == "skill" && c.terminal && c.name == skill)
        {
            return self.send_text(commands::skill_request(&skill, &args));
        }
        let names = self
            .commands
            .iter()
            .filter(|c| c.terminal)
            .map(|c| c.name.as_str());
        let hint = commands::suggest(&word, names)
            .map(|s| format!(" (did you mean /{s}?)"))
            .unwrap_or_default();
        self.flash = Some(format!("unknown command /{word}{hint}"));
        Vec::new()
    }

    fn builtin(&mut self, name: &str, args: &str) -> Vec<Effect> {
        match name {
            "help" => {
                let mut help = String::from("commands:");
                for c in COMMANDS.iter().filter(|c| c.in_terminal()) {
                    help.push_str(&format!("\n  /{} {} — {}", c.name, c.args, c.description));
                }
                help.push_str("\n  /<skill> [request] — use a skill");
                self.note(help);
                Vec::new()
            }
            "new" => vec![Effect::CreateSession],
            "sessions" => {
                self.focus = Focus::Sessions;
                Vec::new()
            }
            "quit" | "detach" => {
                self.quit = true;
                vec![Effect::Quit]
            }
            "stop" => vec![Effect::Frame(client_frame::Kind::Interrupt(
                pb::InterruptTurn {},
            ))],
            "verbose" => {
                self.toggle_tools();
                Vec::new()
            }
            "image" => {
                self.attach_image(args.trim());
                Vec::new()
            }
            "resume" if !args.is_empty() => self.switch_to(args.trim()),
            "resume" => {
                self.focus = Focus::Sessions;
                Vec::new()
            }
            "approve" | "deny" => {
                let Some(Pending::Approval(a)) = self.pending().cloned() else {
                    self.flash = Some("nothing waits for an approval".into());
                    return Vec::new();
                };
                let decision = match (name, args.trim()) {
                    ("deny", _) => "deny",
                    (_, "session") => "session",
                    (_, "always") => "always",
                    _ => "once",
                };
                self.answer_pending(&Pending::Approval(a), decision.into())
            }
            name if RPC_COMMANDS.contains(&name) => match self.current.clone() {
                Some(session_id) => vec![Effect::Command {
                    session_id,
                    name: name.to_string(),
                    args: args.to_string(),
                }],
                None => {
                    self.flash = Some(format!("/{name} needs a session"));
                    Vec::new()
                }
            },
            other => {
                self.flash = Some(format!("/{other} is not available in the TUI"));
                Vec::new()
            }
        }
    }
}

impl App {
    /// `/image PATH`: keep the file for the next message (the daemon checks its type and size
    /// when it arrives); `/image` alone says what is attached.
    fn attach_image(&mut self, path: &str) {
        if path.is_empty() {
            self.flash = Some(if self.images.is_empty() {
                "/image PATH attaches an image (PNG, JPEG, GIF, WebP) to your next message".into()
            } else {
                format!("attached: {}", self.images.join(", "))
            });
            return;
        }
        let absolute = match std::path::absolute(path) {
            Ok(absolute) if absolute.is_file() => absolute,
            Ok(_) => {
                self.flash = Some(format!("/image {path}: no such file"));
                return;
            }
            Err(e) => {
                self.flash = Some(format!("/image {path}: {e}"));
                return;
            }
        };
        let absolute = absolute.display().to_string();
        if self.images.len() >= MAX_IMAGES && !self.images.contains(&absolute) {
            self.flash = Some(format!("a message takes at most {MAX_IMAGES} images"));
            return;
        }
        self.flash = Some(format!("attached {absolute} (sent with your next message)"));
        if !self.images.contains(&absolute) {
            self.images.push(absolute);
        }
    }
}
