//! The input box: a multi-line editor (a newline with Shift+Enter or Alt+Enter), history of what
//! was sent (Up/Down on the first/last line), and slash-command completion from the commands the
//! daemon offers (built-ins and skills). Positions are in characters, never bytes.

/// Entries of input history kept.
pub const HISTORY_LIMIT: usize = 1_000;

#[derive(Debug, Default)]
pub struct Input {
    lines: Vec<String>,
    row: usize,
    col: usize,
    pub history: Vec<String>,
    /// Position while walking history; `None` when editing new text.
    browsing: Option<usize>,
    /// What was being typed when history browsing began.
    draft: String,
}

fn byte_at(line: &str, col: usize) -> usize {
    line.char_indices().nth(col).map_or(line.len(), |(i, _)| i)
}

impl Input {
    pub fn new(history: Vec<String>) -> Self {
        Self {
            lines: vec![String::new()],
            history,
            ..Self::default()
        }
    }

    pub fn text(&self) -> String {
        self.lines.join("\n")
    }

    pub fn lines(&self) -> &[String] {
        &self.lines
    }

    pub fn cursor(&self) -> (usize, usize) {
        (self.row, self.col)
    }

    pub fn is_empty(&self) -> bool {
        self.lines.len() == 1 && self.lines[0].is_empty()
    }

    pub fn set_text(&mut self, text: &str) {
        self.lines = text.split('\n').map(str::to_string).collect();
        if self.lines.is_empty() {
            self.lines.push(String::new());
        }
        self.row = self.lines.len() - 1;
        self.col = self.lines[self.row].chars().count();
    }

    /// Take the text to send, remembering it in history.
    pub fn take(&mut self) -> String {
        let text = self.text();
        self.lines = vec![String::new()];
        self.row = 0;
        self.col = 0;
        self.browsing = None;
        if !text.trim().is_empty() && self.history.last() != Some(&text) {
            self.history.push(text.clone());
            if self.history.len() > HISTORY_LIMIT {
                let excess = self.history.len() - HISTORY_LIMIT;
                self.history.drain(..excess);
            }
        }
        text
    }

    fn line(&mut self) -> &mut String {
        &mut self.lines[self.row]
    }

    pub fn insert_char(&mut self, c: char) {
        let col = self.col;
        let line = self.line();
        let at = byte_at(line, col);
        line.insert(at, c);
        self.col += 1;
    }

    /// Insert pasted or typed text, newlines included, in one step (a 70 KB paste is one edit).
    pub fn insert_str(&mut self, text: &str) {
        let text = text.replace("\r\n", "\n").replace('\r', "\n");
        let col = self.col;
        let at = byte_at(&self.lines[self.row], col);
        let tail = self.lines[self.row].split_off(at);
        let mut pieces = text.split('\n');
        if let Some(first) = pieces.next() {
            self.lines[self.row].push_str(first);
            self.col += first.chars().count();
        }
        for piece in pieces {
            self.row += 1;
            self.lines.insert(self.row, piece.to_string());
            self.col = piece.chars().count();
        }
        self.lines[self.row].push_str(&tail);
    }

    pub fn newline(&mut self) {
        self.insert_str("\n");
    }

    pub fn backspace(&mut self) {
        if self.col > 0 {
            let col = self.col;
            let line = self.line();
            let at = byte_at(line, col - 1);
            line.remove(at);
            self.col -= 1;
        } else if self.row > 0 {
            let line = self.lines.remove(self.row);
            self.row -= 1;
            self.col = self.lines[self.row].chars().count();
            self.lines[self.row].push_str(&line);
        }
    }

    pub fn delete(&mut self) {
        let len = self.lines[self.row].chars().count();
        if self.col < len {
            let col = self.col;
            let line = self.line();
            let at = byte_at(line, col);
            line.remove(at);
        } else if self.row + 1 < self.lines.len() {
            let next = self.lines.remove(self.row + 1);
            self.lines[self.row].push_str(&next);
        }
    }

    /// Delete the word before the cursor (Ctrl-W).
    pub fn delete_word(&mut self) {
        let chars: Vec<char> = self.lines[self.row].chars().collect();
        let mut start = self.col;
        while start > 0 && chars[start - 1].is_whitespace() {
            start -= 1;
        }
        while start > 0 && !chars[start - 1].is_whitespace() {
            start -= 1;
        }
        let line: String = chars[..start].iter().chain(&chars[self.col..]).collect();
        self.lines[self.row] = line;
        self.col = start;
    }

    /// Delete from the line's start to the cursor (Ctrl-U).
    pub fn delete_to_start(&mut self) {
        let col = self.col;
        let line = self.line();
        let at = byte_at(line, col);
        line.drain(..at);
        self.col = 0;
    }

    pub fn left(&mut self) {
        if self.col > 0 {
            self.col -= 1;
        } else if self.row > 0 {
            self.row -= 1;
            self.col = self.lines[self.row].chars().count();
        }
    }

    pub fn right(&mut self) {
        if self.col < self.lines[self.row].chars().count() {
            self.col += 1;
        } else if self.row + 1 < self.lines.len() {
            self.row += 1;
            self.col = 0;
        }
    }

    pub fn home(&mut self) {
        self.col = 0;
    }

    pub fn end(&mut self) {
        self.col = self.lines[self.row].chars().count();
    }

    /// Up: the line above, or the previous history entry on the first line.
    pub fn up(&mut self) {
        if self.row > 0 {
            self.row -= 1;
            self.col = self.col.min(self.lines[self.row].chars().count());
            return;
        }
        let next = match self.browsing {
            None if !self.history.is_empty() => {
                self.draft = self.text();
                self.history.len() - 1
            }
            Some(i) if i > 0 => i - 1,
            _ => return,
        };
        self.browsing = Some(next);
        let entry = self.history[next].clone();
        self.set_text(&entry);
    }

    /// Down: the line below, or the next history entry (then the draft) on the last line.
    pub fn down(&mut self) {
        if self.row + 1 < self.lines.len() {
            self.row += 1;
            self.col = self.col.min(self.lines[self.row].chars().count());
            return;
        }
        match self.browsing {
            Some(i) if i + 1 < self.history.len() => {
                self.browsing = Some(i + 1);
                let entry = self.history[i + 1].clone();
                self.set_text(&entry);
            }
            Some(_) => {
                self.browsing = None;
                let draft = std::mem::take(&mut self.draft);
                self.set_text(&draft);
            }
            None => {}
        }
    }

    /// The slash-command word being typed (`/he` → `he`), when the input is one.
    pub fn command_prefix(&self) -> Option<&str> {
        if self.lines.len() != 1 {
            return None;
        }
        let word = self.lines[0].strip_prefix('/')?;
        (!word.contains(char::is_whitespace)).then_some(word)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multi_line_editing_keeps_characters_not_bytes() {
        let mut input = Input::new(Vec::new());
        for c in "héllo".chars() {
            input.insert_char(c);
        }
        input.left();
        input.left();
        input.newline();
        input.insert_char('→');
        assert_eq!(input.text(), "hél\n→lo");
        input.home();
        input.backspace();
        assert_eq!(input.text(), "hél→lo");
        assert_eq!(input.cursor(), (0, 3));
    }

    #[test]
    fn a_paste_is_inserted_whole_at_the_cursor() {
        let mut input = Input::new(Vec::new());
        input.insert_str("ab");
        input.left();
        let big = "x".repeat(70_000) + "\r\nlast";
        input.insert_str(&big);
        assert_eq!(input.lines().len(), 2);
        assert_eq!(input.text().len(), 2 + 70_000 + 1 + 4);
        assert!(input.text().ends_with("lastb"));
    }

    #[test]
    fn history_walks_back_and_returns_to_the_draft() {
        let mut input = Input::new(vec!["one".into(), "two".into()]);
        input.insert_str("dra");
        input.up();
        assert_eq!(input.text(), "two");
        input.up();
        assert_eq!(input.text(), "one");
        input.down();
        input.down();
        assert_eq!(input.text(), "dra");
        assert_eq!(input.take(), "dra");
        assert_eq!(input.history.last().map(String::as_str), Some("dra"));
        assert!(input.is_empty());
    }

    #[test]
    fn only_a_single_slash_word_is_a_command_prefix() {
        let mut input = Input::new(Vec::new());
        input.insert_str("/he");
        assert_eq!(input.command_prefix(), Some("he"));
        input.insert_str(" x");
        assert_eq!(input.command_prefix(), None);
        input.delete_word();
        input.delete_word();
        assert_eq!(input.text(), "");
    }
}
