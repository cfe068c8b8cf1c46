//! Code blocks coloured by syntect's grammars, mapped onto the terminal's own palette (scopes to
//! the 16 ANSI colours, never RGB), so the user's colour scheme decides how code looks. The
//! grammars load on the first code block, not at start-up.

use std::sync::LazyLock;

use ratatui::style::{Color, Modifier, Style};
use syntect::parsing::{ParseState, Scope, ScopeStack, SyntaxSet};

use super::wrap::Piece;

static SYNTAXES: LazyLock<SyntaxSet> = LazyLock::new(SyntaxSet::load_defaults_newlines);

/// Palette colour for the innermost scope that has one, by scope prefix.
fn scope_style(stack: &ScopeStack, base: Style) -> Style {
    const RULES: &[(&str, Color)] = &[
        ("comment", Color::DarkGray),
        ("string", Color::Green),
        ("constant.numeric", Color::Yellow),
        ("constant.character", Color::Yellow),
        ("constant.language", Color::Yellow),
        ("keyword", Color::Magenta),
        ("storage.type", Color::Cyan),
        ("storage", Color::Magenta),
        ("entity.name.function", Color::Blue),
        ("support.function", Color::Blue),
        ("entity.name", Color::Cyan),
        ("support.type", Color::Cyan),
        ("variable.parameter", Color::Red),
        ("punctuation.definition.string", Color::Green),
    ];
    for scope in stack.as_slice().iter().rev() {
        let name = scope_name(*scope);
        if let Some((_, color)) = RULES.iter().find(|(prefix, _)| name.starts_with(prefix)) {
            let style = base.fg(*color);
            return if *color == Color::DarkGray {
                style.add_modifier(Modifier::ITALIC)
            } else {
                style
            };
        }
    }
    base
}

fn scope_name(scope: Scope) -> String {
    scope.build_string()
}

/// The lines of `code` as styled pieces; plain in `base` when the language is unknown or
/// colour is off.
pub fn highlight(code: &str, language: &str, base: Style, color: bool) -> Vec<Vec<Piece>> {
    let plain = || {
        code.lines()
            .map(|l| vec![Piece::styled(l.to_string(), base)])
            .collect()
    };
    let language = language.split([',', ' ']).next().unwrap_or("").trim();
    if !color || language.is_empty() {
        return plain();
    }
    let Some(syntax) = SYNTAXES.find_syntax_by_token(language) else {
        return plain();
    };
    let mut state = ParseState::new(syntax);
    let mut stack = ScopeStack::new();
    let mut out = Vec::new();
    for line in code.lines() {
        let with_newline = format!("{line}\n");
        let Ok(ops) = state.parse_line(&with_newline, &SYNTAXES) else {
            return plain();
        };
        let mut pieces = Vec::new();
        let mut at = 0;
        for (offset, op) in ops {
            let offset = offset.min(line.len());
            if offset > at {
                pieces.push(Piece::styled(
                    line[at..offset].to_string(),
                    scope_style(&stack, base),
                ));
                at = offset;
            }
            if stack.apply(&op).is_err() {
                return plain();
            }
        }
        if at < line.len() {
            pieces.push(Piece::styled(
                line[at..].to_string(),
                scope_style(&stack, base),
            ));
        }
        out.push(pieces);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_keywords_and_strings_get_palette_colours() {
        let lines = highlight("fn main() { let s = \"hi\"; }", "rust", Style::new(), true);
        let styled: Vec<(String, Option<Color>)> = lines[0]
            .iter()
            .map(|p| (p.content.to_string(), p.style.fg))
            .collect();
        assert!(
            styled.contains(&("fn".into(), Some(Color::Cyan)))
                || styled.iter().any(|(t, c)| t == "fn" && c.is_some()),
            "{styled:?}"
        );
        assert!(
            styled
                .iter()
                .any(|(t, c)| t.contains("hi") && *c == Some(Color::Green)),
            "{styled:?}"
        );
        let text: String = lines[0].iter().map(|p| p.content.as_ref()).collect();
        assert_eq!(text, "fn main() { let s = \"hi\"; }");
    }

    #[test]
    fn no_colour_or_an_unknown_language_is_plain() {
        let lines = highlight("let x = 1;", "rust", Style::new(), false);
        assert_eq!(lines[0].len(), 1);
        let lines = highlight("x", "no-such-language", Style::new(), true);
        assert_eq!(lines[0][0].style.fg, None);
    }
}
