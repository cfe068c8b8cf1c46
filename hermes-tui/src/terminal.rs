//! The terminal while the TUI owns it: raw mode, the alternate screen, bracketed paste and (when
//! configured) the mouse — and putting all of it back on every way out: a normal quit, an error,
//! a panic (the hook restores before the message prints) and a signal (the main loop ends).

use std::io::{self, Stdout, Write};

use crossterm::{
    cursor,
    event::{DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture},
    execute,
    terminal::{self, EnterAlternateScreen, LeaveAlternateScreen},
};
use ratatui::{Terminal, backend::CrosstermBackend};

pub type Screen = Terminal<CrosstermBackend<Stdout>>;

/// Restores the terminal when dropped.
pub struct Guard {
    mouse: bool,
}

impl Guard {
    /// Take the terminal over.
    pub fn enter(mouse: bool) -> io::Result<(Self, Screen)> {
        terminal::enable_raw_mode()?;
        let guard = Self { mouse };
        let mut out = io::stdout();
        execute!(out, EnterAlternateScreen, EnableBracketedPaste)?;
        if mouse {
            execute!(out, EnableMouseCapture)?;
        }
        install_panic_hook(mouse);
        let screen = Terminal::new(CrosstermBackend::new(io::stdout()))?;
        Ok((guard, screen))
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        restore(self.mouse);
    }
}

/// Put the terminal back as it was; safe to call more than once.
pub fn restore(mouse: bool) {
    let mut out = io::stdout();
    if mouse {
        let _ = execute!(out, DisableMouseCapture);
    }
    let _ = execute!(
        out,
        DisableBracketedPaste,
        LeaveAlternateScreen,
        cursor::Show
    );
    let _ = terminal::disable_raw_mode();
    let _ = out.flush();
}

/// A panic restores the terminal first, so its message lands on a sane screen.
fn install_panic_hook(mouse: bool) {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore(mouse);
        previous(info);
    }));
}
