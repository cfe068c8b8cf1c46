//! Line input for the chat client: rustyline on its own thread (it blocks), asked for one line
//! at a time, with the history kept in `$HERMES_HOME/chat_history`. A line ending in `\` goes on
//! on the next line (multi-line input).

use std::{path::PathBuf, sync::mpsc as std_mpsc, thread};

use rustyline::{DefaultEditor, error::ReadlineError};
use tokio::sync::oneshot;

/// What the user did at a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    Text(String),
    /// Ctrl-C at the prompt.
    Interrupted,
    /// Ctrl-D at the prompt (or input closed).
    Eof,
}

struct Request {
    prompt: String,
    initial: String,
    reply: oneshot::Sender<Line>,
}

/// Prints while the prompt is up (events that arrive as the user types): the prompt line is
/// cleared first on a terminal. (rustyline's external printer lost keystrokes typed quickly, as
/// tmux and pastes do, so it is not used.)
pub struct Printer {
    terminal: bool,
}

impl Printer {
    pub fn print(&mut self, text: String) {
        use std::io::Write;
        let clear = if self.terminal { "\r\x1b[K" } else { "" };
        print!("{clear}{text}");
        let _ = std::io::stdout().flush();
    }
}

/// A handle on the input thread.
#[derive(Clone)]
pub struct LineInput {
    requests: std_mpsc::Sender<Request>,
}

impl LineInput {
    pub fn start(history: PathBuf) -> (Self, Printer) {
        let (requests, inbox) = std_mpsc::channel::<Request>();
        thread::spawn(move || {
            let mut editor = match DefaultEditor::new() {
                Ok(editor) => Some(editor),
                Err(e) => {
                    eprintln!("line editing is unavailable ({e}); reading plain lines");
                    None
                }
            };
            if let Some(editor) = editor.as_mut() {
                let _ = editor.load_history(&history);
            }
            while let Ok(request) = inbox.recv() {
                let line = match editor.as_mut() {
                    Some(editor) => read(editor, &request.prompt, &request.initial),
                    None => read_plain(&request.prompt),
                };
                if let (Line::Text(text), Some(editor)) = (&line, editor.as_mut())
                    && !text.trim().is_empty()
                {
                    let _ = editor.add_history_entry(text.as_str());
                    let _ = editor.save_history(&history);
                }
                let _ = request.reply.send(line);
            }
        });
        let terminal = std::io::IsTerminal::is_terminal(&std::io::stdout());
        (Self { requests }, Printer { terminal })
    }

    /// Ask for one (possibly multi-line) entry, the line starting with `initial`.
    pub async fn read(&self, prompt: &str, initial: &str) -> Line {
        let (reply, answer) = oneshot::channel();
        let request = Request {
            prompt: prompt.to_string(),
            initial: initial.to_string(),
            reply,
        };
        if self.requests.send(request).is_err() {
            return Line::Eof;
        }
        answer.await.unwrap_or(Line::Eof)
    }
}

fn read(editor: &mut DefaultEditor, prompt: &str, initial: &str) -> Line {
    let mut text = String::new();
    let mut prompt = prompt.to_string();
    let mut initial = initial.to_string();
    loop {
        match editor.readline_with_initial(&prompt, (&std::mem::take(&mut initial), "")) {
            Ok(line) => match line.strip_suffix('\\') {
                Some(head) => {
                    text.push_str(head);
                    text.push('\n');
                    prompt = "… ".into();
                }
                None => {
                    text.push_str(&line);
                    return Line::Text(text);
                }
            },
            Err(ReadlineError::Interrupted) => return Line::Interrupted,
            Err(_) => return Line::Eof,
        }
    }
}

fn read_plain(prompt: &str) -> Line {
    use std::io::Write;
    print!("{prompt}");
    let _ = std::io::stdout().flush();
    let mut line = String::new();
    match std::io::stdin().read_line(&mut line) {
        Ok(0) | Err(_) => Line::Eof,
        Ok(_) => Line::Text(line.trim_end_matches(['\n', '\r']).to_string()),
    }
}
