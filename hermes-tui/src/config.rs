//! The `tui:` section of `config.yaml`: key bindings and the theme (names of the terminal's own
//! palette colours only). A value that does not parse is reported once and its default kept;
//! the file itself is never written here.

use std::collections::BTreeMap;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::style::Color;
use serde::Deserialize;

/// Everything a binding can do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Action {
    Send,
    Newline,
    Interrupt,
    Search,
    NewSession,
    Focus,
    ToggleTools,
    ScrollUp,
    ScrollDown,
    Follow,
    Quit,
    SourceFilter,
    Filter,
}

/// Every action with its config name, default keys and what `--help` says of it.
pub const ACTIONS: &[(Action, &str, &str, &str)] = &[
    (Action::Send, "send", "enter", "send the input"),
    (
        Action::Newline,
        "newline",
        "shift+enter alt+enter ctrl+j",
        "a new line in the input",
    ),
    (
        Action::Interrupt,
        "interrupt",
        "ctrl+c",
        "stop the running turn; twice within 2 s quits",
    ),
    (
        Action::Search,
        "search",
        "ctrl+f",
        "search every session (also / in the list)",
    ),
    (
        Action::NewSession,
        "new_session",
        "ctrl+n",
        "a new session (also n in the list)",
    ),
    (
        Action::Focus,
        "focus",
        "tab",
        "move between the input and the session list",
    ),
    (
        Action::ToggleTools,
        "toggle_tools",
        "ctrl+o",
        "unfold or fold tool calls and reasoning",
    ),
    (
        Action::ScrollUp,
        "scroll_up",
        "pageup",
        "scroll the conversation back",
    ),
    (
        Action::ScrollDown,
        "scroll_down",
        "pagedown",
        "scroll the conversation on",
    ),
    (
        Action::Follow,
        "follow",
        "end",
        "follow the newest text again",
    ),
    (Action::Quit, "quit", "q", "quit (in the session list)"),
    (
        Action::SourceFilter,
        "source_filter",
        "s",
        "show one source at a time (in the session list)",
    ),
    (
        Action::Filter,
        "filter",
        "f",
        "filter the list by title (in the session list)",
    ),
];

/// One key with its modifiers, as written in config: `ctrl+f`, `alt+enter`, `pageup`, `q`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chord {
    pub code: KeyCode,
    pub modifiers: KeyModifiers,
}

impl Chord {
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut modifiers = KeyModifiers::NONE;
        let parts: Vec<&str> = text.trim().split('+').collect();
        let (key, mods) = parts.split_last().ok_or_else(|| "empty key".to_string())?;
        for m in mods {
            modifiers |= match m.to_lowercase().as_str() {
                "ctrl" | "control" => KeyModifiers::CONTROL,
                "alt" | "meta" => KeyModifiers::ALT,
                "shift" => KeyModifiers::SHIFT,
                other => return Err(format!("unknown modifier `{other}` in `{text}`")),
            };
        }
        let lower = key.to_lowercase();
        let code = match lower.as_str() {
            "enter" | "return" => KeyCode::Enter,
            "tab" => KeyCode::Tab,
            "esc" | "escape" => KeyCode::Esc,
            "pageup" | "pgup" => KeyCode::PageUp,
            "pagedown" | "pgdn" => KeyCode::PageDown,
            "home" => KeyCode::Home,
            "end" => KeyCode::End,
            "up" => KeyCode::Up,
            "down" => KeyCode::Down,
            "left" => KeyCode::Left,
            "right" => KeyCode::Right,
            "space" => KeyCode::Char(' '),
            "backspace" => KeyCode::Backspace,
            f if f.starts_with('f') && f.len() > 1 && f[1..].parse::<u8>().is_ok() => {
                KeyCode::F(f[1..].parse().unwrap_or(1))
            }
            _ => {
                let mut chars = key.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) => KeyCode::Char(c),
                    _ => return Err(format!("unknown key `{key}` in `{text}`")),
                }
            }
        };
        Ok(Self { code, modifiers })
    }

    pub fn matches(&self, key: &KeyEvent) -> bool {
        let code_matches = match (self.code, key.code) {
            (KeyCode::Char(a), KeyCode::Char(b)) => a.eq_ignore_ascii_case(&b),
            (a, b) => a == b,
        };
        // Shift is part of an upper-case letter; compare the other modifiers only.
        let relevant = KeyModifiers::CONTROL | KeyModifiers::ALT | KeyModifiers::SHIFT;
        let mut wanted = self.modifiers & relevant;
        let mut got = key.modifiers & relevant;
        if matches!(key.code, KeyCode::Char(_)) {
            wanted -= KeyModifiers::SHIFT;
            got -= KeyModifiers::SHIFT;
        }
        code_matches && wanted == got
    }
}

/// The key bindings in force.
#[derive(Debug, Clone)]
pub struct Keys {
    bindings: BTreeMap<Action, Vec<Chord>>,
}

impl Keys {
    pub fn is(&self, action: Action, key: &KeyEvent) -> bool {
        self.bindings
            .get(&action)
            .is_some_and(|chords| chords.iter().any(|c| c.matches(key)))
    }
}

fn parse_chords(text: &str) -> Result<Vec<Chord>, String> {
    text.split_whitespace().map(Chord::parse).collect()
}

impl Default for Keys {
    fn default() -> Self {
        let bindings = ACTIONS
            .iter()
            .map(|(action, _, keys, _)| (*action, parse_chords(keys).unwrap_or_default()))
            .collect();
        Self { bindings }
    }
}

/// The colours in use: palette names only, or none at all (`NO_COLOR`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Theme {
    /// False with `NO_COLOR`: styles are bold, dim and reverse only.
    pub color: bool,
    pub accent: Color,
    pub user: Color,
    pub error: Color,
    pub ok: Color,
    pub code: Color,
}

impl Default for Theme {
    fn default() -> Self {
        Self {
            color: true,
            accent: Color::Cyan,
            user: Color::Green,
            error: Color::Red,
            ok: Color::Green,
            code: Color::Yellow,
        }
    }
}

/// Theme entries and their config names.
pub const THEME_KEYS: &[&str] = &["accent", "user", "error", "ok", "code"];

/// A palette colour by name: the 16 ANSI colours and `reset`.
pub fn palette_color(name: &str) -> Option<Color> {
    let color = match name.trim().to_lowercase().replace(['-', ' '], "_").as_str() {
        "black" => Color::Black,
        "red" => Color::Red,
        "green" => Color::Green,
        "yellow" => Color::Yellow,
        "blue" => Color::Blue,
        "magenta" => Color::Magenta,
        "cyan" => Color::Cyan,
        "gray" | "grey" | "white" => Color::Gray,
        "dark_gray" | "dark_grey" | "bright_black" => Color::DarkGray,
        "light_red" | "bright_red" => Color::LightRed,
        "light_green" | "bright_green" => Color::LightGreen,
        "light_yellow" | "bright_yellow" => Color::LightYellow,
        "light_blue" | "bright_blue" => Color::LightBlue,
        "light_magenta" | "bright_magenta" => Color::LightMagenta,
        "light_cyan" | "bright_cyan" => Color::LightCyan,
        "bright_white" => Color::White,
        "reset" | "default" => Color::Reset,
        _ => return None,
    };
    Some(color)
}

/// The whole `tui:` section.
#[derive(Debug, Clone)]
pub struct TuiConfig {
    pub keys: Keys,
    pub theme: Theme,
    pub mouse: bool,
    pub sidebar_width: u16,
}

impl Default for TuiConfig {
    fn default() -> Self {
        Self {
            keys: Keys::default(),
            theme: Theme::default(),
            mouse: true,
            sidebar_width: 36,
        }
    }
}

#[derive(Debug, Default, Deserialize)]
struct RawFile {
    #[serde(default)]
    tui: RawTui,
}

#[derive(Debug, Default, Deserialize)]
struct RawTui {
    #[serde(default)]
    keys: BTreeMap<String, serde_yaml::Value>,
    #[serde(default)]
    theme: BTreeMap<String, String>,
    mouse: Option<bool>,
    sidebar_width: Option<u16>,
}

impl TuiConfig {
    /// Read the section from the text of `config.yaml`; `no_color` is `NO_COLOR`'s verdict.
    /// Returns the configuration and one line per value that was ignored.
    pub fn from_yaml(text: &str, no_color: bool) -> (Self, Vec<String>) {
        let mut config = Self::default();
        let mut problems = Vec::new();
        let raw: RawFile = match serde_yaml::from_str::<Option<RawFile>>(text) {
            Ok(raw) => raw.unwrap_or_default(),
            Err(e) => {
                problems.push(format!("config.yaml: the tui section is ignored: {e}"));
                RawFile::default()
            }
        };
        for (name, value) in &raw.tui.keys {
            let Some((action, ..)) = ACTIONS.iter().find(|(_, n, ..)| n == name) else {
                problems.push(format!("tui.keys.{name}: no such action"));
                continue;
            };
            let text = match value {
                serde_yaml::Value::String(s) => s.clone(),
                serde_yaml::Value::Sequence(items) => items
                    .iter()
                    .filter_map(|v| v.as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
                _ => {
                    problems.push(format!("tui.keys.{name}: expected a key or a list of keys"));
                    continue;
                }
            };
            match parse_chords(&text) {
                Ok(chords) => {
                    config.keys.bindings.insert(*action, chords);
                }
                Err(e) => problems.push(format!("tui.keys.{name}: {e}")),
            }
        }
        for (name, value) in &raw.tui.theme {
            let Some(color) = palette_color(value) else {
                problems.push(format!(
                    "tui.theme.{name}: `{value}` is not a palette colour"
                ));
                continue;
            };
            let slot = match name.as_str() {
                "accent" => &mut config.theme.accent,
                "user" => &mut config.theme.user,
                "error" => &mut config.theme.error,
                "ok" => &mut config.theme.ok,
                "code" => &mut config.theme.code,
                _ => {
                    problems.push(format!("tui.theme.{name}: no such colour"));
                    continue;
                }
            };
            *slot = color;
        }
        if let Some(mouse) = raw.tui.mouse {
            config.mouse = mouse;
        }
        if let Some(width) = raw.tui.sidebar_width {
            config.sidebar_width = width.clamp(16, 80);
        }
        config.theme.color = !no_color;
        (config, problems)
    }

    /// The bindings and theme as `--help` shows them.
    pub fn help_text() -> String {
        let mut out = String::from("Keys (tui.keys in config.yaml; a key or a list of keys):\n");
        for (_, name, keys, what) in ACTIONS {
            out.push_str(&format!("  {name:<14} {keys:<28} {what}\n"));
        }
        out.push_str(
            "\nTheme (tui.theme; the terminal's palette names: red, light_blue, dark_gray…):\n",
        );
        out.push_str(&format!("  {}\n", THEME_KEYS.join(", ")));
        out.push_str(
            "\nAlso: tui.mouse (true), tui.sidebar_width (36). NO_COLOR turns colour off.\n",
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, modifiers)
    }

    #[test]
    fn defaults_bind_the_documented_keys() {
        let keys = Keys::default();
        assert!(keys.is(
            Action::Search,
            &key(KeyCode::Char('f'), KeyModifiers::CONTROL)
        ));
        assert!(keys.is(Action::Newline, &key(KeyCode::Enter, KeyModifiers::ALT)));
        assert!(keys.is(Action::Newline, &key(KeyCode::Enter, KeyModifiers::SHIFT)));
        assert!(keys.is(Action::Send, &key(KeyCode::Enter, KeyModifiers::NONE)));
        assert!(!keys.is(Action::Send, &key(KeyCode::Enter, KeyModifiers::ALT)));
    }

    #[test]
    fn config_rebinds_and_reports_what_it_ignores() {
        let yaml = "tui:\n  keys:\n    search: [ctrl+s, f3]\n    bogus: x\n    quit: hyper+q\n  theme:\n    accent: magenta\n    user: '#ff0000'\n";
        let (config, problems) = TuiConfig::from_yaml(yaml, false);
        assert!(config.keys.is(
            Action::Search,
            &key(KeyCode::Char('s'), KeyModifiers::CONTROL)
        ));
        assert!(
            config
                .keys
                .is(Action::Search, &key(KeyCode::F(3), KeyModifiers::NONE))
        );
        assert!(!config.keys.is(
            Action::Search,
            &key(KeyCode::Char('f'), KeyModifiers::CONTROL)
        ));
        assert_eq!(config.theme.accent, Color::Magenta);
        assert_eq!(config.theme.user, Color::Green);
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(
            config
                .keys
                .is(Action::Quit, &key(KeyCode::Char('q'), KeyModifiers::NONE))
        );
    }

    #[test]
    fn no_color_and_a_broken_file_keep_defaults() {
        let (config, problems) = TuiConfig::from_yaml("tui: [", true);
        assert!(!config.theme.color);
        assert_eq!(problems.len(), 1);
    }
}
