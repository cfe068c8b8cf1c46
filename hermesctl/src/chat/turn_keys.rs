//! The keyboard while a turn runs and no line editor is up: Ctrl-C and Ctrl-D arrive as keys, and
//! whatever else is typed is kept for the next prompt. The terminal is switched to
//! non-canonical input without echo or signals (so a Ctrl-C is a byte in order with the rest, never
//! a signal that lands between two waits), output processing untouched; it is put back as it was
//! when the reader stops, which dropping it also does.

use std::{
    io::{Read, Write},
    os::{fd::AsFd, unix::net::UnixStream},
    thread::JoinHandle,
};

use nix::{
    poll::{PollFd, PollFlags, PollTimeout, poll},
    sys::termios::{self, LocalFlags, SetArg, SpecialCharacterIndices},
};
use tokio::sync::mpsc;

/// A key that means something during a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnKey {
    Interrupt,
    Detach,
}

/// The reader thread and its stop line.
pub struct TurnKeys {
    keys: mpsc::UnboundedReceiver<TurnKey>,
    stop: UnixStream,
    thread: Option<JoinHandle<String>>,
}

impl TurnKeys {
    /// Start reading keys; `None` when stdin is not a terminal (the caller listens for SIGINT).
    pub fn start() -> Option<Self> {
        let stdin = std::io::stdin();
        let saved = termios::tcgetattr(stdin.as_fd()).ok()?;
        let mut keyed = saved.clone();
        keyed
            .local_flags
            .remove(LocalFlags::ICANON | LocalFlags::ECHO | LocalFlags::ISIG | LocalFlags::IEXTEN);
        keyed.control_chars[SpecialCharacterIndices::VMIN as usize] = 1;
        keyed.control_chars[SpecialCharacterIndices::VTIME as usize] = 0;
        termios::tcsetattr(stdin.as_fd(), SetArg::TCSANOW, &keyed).ok()?;
        let (stop, stop_seen) = UnixStream::pair().ok()?;
        let (tx, keys) = mpsc::unbounded_channel();
        let thread = std::thread::spawn(move || {
            let typed = read_keys(&stop_seen, &tx);
            let _ = termios::tcsetattr(std::io::stdin().as_fd(), SetArg::TCSANOW, &saved);
            typed
        });
        Some(Self {
            keys,
            stop,
            thread: Some(thread),
        })
    }

    /// The next Ctrl-C or Ctrl-D.
    pub async fn next(&mut self) -> Option<TurnKey> {
        self.keys.recv().await
    }

    /// Stop reading, put the terminal back, and hand over the text typed meanwhile.
    pub fn finish(mut self) -> String {
        self.stop_thread()
    }

    fn stop_thread(&mut self) -> String {
        let _ = self.stop.write_all(b"x");
        self.thread
            .take()
            .and_then(|thread| thread.join().ok())
            .unwrap_or_default()
    }
}

impl Drop for TurnKeys {
    fn drop(&mut self) {
        if self.thread.is_some() {
            self.stop_thread();
        }
    }
}

/// Read stdin until the stop line speaks or input ends; returns the text typed ahead.
fn read_keys(stop: &UnixStream, keys: &mpsc::UnboundedSender<TurnKey>) -> String {
    let stdin = std::io::stdin();
    let mut typed = TypedAhead::default();
    let mut buffer = [0u8; 256];
    loop {
        let mut fds = [
            PollFd::new(stdin.as_fd(), PollFlags::POLLIN),
            PollFd::new(stop.as_fd(), PollFlags::POLLIN),
        ];
        if poll(&mut fds, PollTimeout::NONE).is_err() {
            continue;
        }
        let stop_now = fds[1].any().unwrap_or(true);
        let input_ready = fds[0].any().unwrap_or(false);
        if stop_now {
            break;
        }
        if !input_ready {
            continue;
        }
        let n = match stdin.lock().read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        for key in typed.feed(&buffer[..n]) {
            let _ = keys.send(key);
        }
    }
    typed.text()
}

/// Bytes typed during a turn: control keys become [`TurnKey`]s, Backspace edits, escape sequences
/// (arrows and the like) and other control bytes are dropped, the rest is kept.
#[derive(Default)]
struct TypedAhead {
    bytes: Vec<u8>,
    in_escape: bool,
}

impl TypedAhead {
    fn feed(&mut self, input: &[u8]) -> Vec<TurnKey> {
        let mut keys = Vec::new();
        for &byte in input {
            if self.in_escape {
                // ESC [ … final byte, or ESC O x, or ESC x.
                if (0x40..=0x7e).contains(&byte) && byte != b'[' && byte != b'O' {
                    self.in_escape = false;
                }
                continue;
            }
            match byte {
                0x03 => keys.push(TurnKey::Interrupt),
                0x04 => keys.push(TurnKey::Detach),
                0x1b => self.in_escape = true,
                0x7f | 0x08 => self.backspace(),
                b'\t' => self.bytes.push(b' '),
                0x00..=0x1f => {}
                _ => self.bytes.push(byte),
            }
        }
        keys
    }

    /// Remove the last character (all of its UTF-8 bytes).
    fn backspace(&mut self) {
        while let Some(byte) = self.bytes.pop() {
            if byte & 0xc0 != 0x80 {
                break;
            }
        }
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_keys_are_keys_and_the_rest_is_kept() {
        let mut typed = TypedAhead::default();
        assert_eq!(typed.feed(b"ab\x03c"), vec![TurnKey::Interrupt]);
        assert_eq!(typed.feed(b"\x04"), vec![TurnKey::Detach]);
        assert_eq!(typed.text(), "abc");
    }

    #[test]
    fn escape_sequences_and_enter_are_dropped_backspace_edits() {
        let mut typed = TypedAhead::default();
        typed.feed("noé\x1b[A\x1bOB\r\x7f\x7fo!".as_bytes());
        assert_eq!(typed.text(), "no!");
        typed.feed(b"\x1b[1;5C\tx");
        assert_eq!(typed.text(), "no! x");
    }
}
