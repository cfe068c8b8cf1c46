//! Bounded line scanning over a buffered reader: skip, read a capped line,
//! and count the rest, without ever holding more than one capped line.

use std::io::{self, BufRead};

/// Streams a reader line by line (`\n`-terminated; a final unterminated line
/// counts as a line) with bounded memory, whatever the line lengths.
pub(crate) struct LineScanner<R> {
    reader: R,
}

impl<R: BufRead> LineScanner<R> {
    /// Wraps a buffered reader positioned at the start of a line.
    pub(crate) fn new(reader: R) -> Self {
        Self { reader }
    }

    /// Skips up to `count` lines and returns how many were skipped.
    pub(crate) fn skip_lines(&mut self, count: usize) -> io::Result<usize> {
        let mut skipped = 0;
        let mut mid_line = false;
        while skipped < count {
            let buf = self.reader.fill_buf()?;
            if buf.is_empty() {
                if mid_line {
                    skipped += 1;
                }
                break;
            }
            match buf.iter().position(|&b| b == b'\n') {
                Some(i) => {
                    self.reader.consume(i + 1);
                    skipped += 1;
                    mid_line = false;
                }
                None => {
                    let len = buf.len();
                    self.reader.consume(len);
                    mid_line = true;
                }
            }
        }
        Ok(skipped)
    }

    /// Reads the next line without its `\n` into `out`, keeping at most `cap`
    /// bytes. Returns `None` at end of input, else whether bytes were dropped.
    pub(crate) fn next_line_capped(
        &mut self,
        out: &mut Vec<u8>,
        cap: usize,
    ) -> io::Result<Option<bool>> {
        out.clear();
        let mut clipped = false;
        let mut started = false;
        loop {
            let buf = self.reader.fill_buf()?;
            if buf.is_empty() {
                return Ok(started.then_some(clipped));
            }
            started = true;
            let (len, complete) = match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (i, true),
                None => (buf.len(), false),
            };
            let room = cap.saturating_sub(out.len());
            clipped |= len > room;
            out.extend_from_slice(&buf[..len.min(room)]);
            self.reader.consume(len + usize::from(complete));
            if complete {
                return Ok(Some(clipped));
            }
        }
    }

    /// Counts the lines left until end of input.
    pub(crate) fn count_remaining(&mut self) -> io::Result<usize> {
        let mut newlines = 0;
        let mut last_byte = None;
        loop {
            let buf = self.reader.fill_buf()?;
            let Some(&last) = buf.last() else {
                break;
            };
            newlines += buf.iter().filter(|&&b| b == b'\n').count();
            last_byte = Some(last);
            let len = buf.len();
            self.reader.consume(len);
        }
        let unterminated = last_byte.is_some_and(|b| b != b'\n');
        Ok(newlines + usize::from(unterminated))
    }
}
