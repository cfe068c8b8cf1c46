//! Server-sent events over a streamed HTTP body: each received chunk is scanned once and the unread
//! rest is never copied (eventsource-stream copied the whole rest of its buffer for every line, which
//! made SSE parsing the largest cost of a streamed response).

use std::time::Duration;

use super::{
    endpoint::Endpoint,
    error::{ErrorClass, LlmError},
    http::Watchdog,
};

/// One event: its `event:` name (empty for unnamed events) and its joined `data:` lines.
#[cfg(test)]
#[derive(Debug, Default, PartialEq, Eq)]
pub struct SseEvent {
    pub event: String,
    pub data: String,
}

/// Incremental SSE parser.
#[derive(Debug, Default)]
pub struct SseDecoder {
    buf: Vec<u8>,
    /// Start of the unread part of `buf`.
    start: usize,
    event: String,
    data: String,
    has_data: bool,
    /// `event`/`data` hold a dispatched event, cleared on the next call.
    dispatched: bool,
}

impl SseDecoder {
    pub fn push(&mut self, bytes: &[u8]) {
        if self.start > 0 && self.start >= self.buf.len() / 2 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// The next complete event, if the buffer holds one. Invalid UTF-8 in a line is an error.
    #[cfg(test)]
    pub fn next_event(&mut self) -> Result<Option<SseEvent>, std::str::Utf8Error> {
        Ok(self.next_ready()?.then(|| SseEvent {
            event: std::mem::take(&mut self.event),
            data: std::mem::take(&mut self.data),
        }))
    }

    /// Parse up to the end of the next event; `true` when `event`/`data` hold it (the caller reads
    /// them in place and they are reset by the next call).
    pub fn next_ready(&mut self) -> Result<bool, std::str::Utf8Error> {
        if self.dispatched {
            self.dispatched = false;
            self.event.clear();
            self.data.clear();
        }
        while let Some(offset) = memchr::memchr(b'\n', &self.buf[self.start..]) {
            let end = self.start + offset;
            let mut line = &self.buf[self.start..end];
            self.start = end + 1;
            if let Some(stripped) = line.strip_suffix(b"\r") {
                line = stripped;
            }
            if line.is_empty() {
                if self.has_data {
                    self.has_data = false;
                    if self.data.ends_with('\n') {
                        self.data.pop();
                    }
                    self.dispatched = true;
                    return Ok(true);
                }
                self.event.clear();
                continue;
            }
            let line = std::str::from_utf8(line)?;
            if line.starts_with(':') {
                continue;
            }
            let (field, value) = match line.split_once(':') {
                Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
                None => (line, ""),
            };
            match field {
                "data" => {
                    self.data.push_str(value);
                    self.data.push('\n');
                    self.has_data = true;
                }
                "event" => {
                    self.event.clear();
                    self.event.push_str(value);
                }
                _ => {}
            }
        }
        Ok(false)
    }
}

impl SseDecoder {
    /// The data of the event `next_ready` reported.
    pub fn data(&self) -> &str {
        &self.data
    }
}

/// Why reading a stream stopped.
#[derive(Debug)]
pub enum StreamEnd<E> {
    /// The handler said the response is complete.
    Done,
    /// The body ended.
    Eof,
    /// Nothing arrived for the stale timeout.
    Stale,
    /// The body broke, or carried invalid UTF-8.
    Broken(String),
    /// The handler failed.
    Handler(E),
}

impl StreamEnd<LlmError> {
    /// The outcome for the caller: an end of body counts as complete only when `eof_is_complete`.
    pub fn into_result(self, endpoint: &Endpoint, eof_is_complete: bool) -> Result<(), LlmError> {
        let cut =
            |message: String| LlmError::new(ErrorClass::StreamCut, &endpoint.label(), message);
        match self {
            Self::Done => Ok(()),
            Self::Eof if eof_is_complete => Ok(()),
            Self::Eof => Err(cut(
                "the stream ended before the response was complete".into()
            )),
            Self::Stale => Err(super::http::stale(endpoint)),
            Self::Broken(e) => Err(cut(format!("the stream broke: {e}"))),
            Self::Handler(e) => Err(e),
        }
    }
}

/// Feed the `data` of every event of `response` to `handle` until it returns `Ok(true)`
/// (complete) or an error. The data is lent, not allocated per event.
pub async fn read_events<E>(
    response: super::transport::Response,
    stale_timeout: Duration,
    mut handle: impl FnMut(&str) -> Result<bool, E>,
) -> StreamEnd<E> {
    let mut body = response.into_stream();
    let mut decoder = SseDecoder::default();
    let mut watchdog = Watchdog::new(stale_timeout);
    loop {
        loop {
            match decoder.next_ready() {
                Ok(true) => match handle(&decoder.data) {
                    Ok(true) => return StreamEnd::Done,
                    Ok(false) => {}
                    Err(e) => return StreamEnd::Handler(e),
                },
                Ok(false) => break,
                Err(e) => return StreamEnd::Broken(format!("invalid UTF-8 in the stream ({e})")),
            }
        }
        match watchdog.next(&mut body).await {
            None => return StreamEnd::Stale,
            Some(None) => return StreamEnd::Eof,
            Some(Some(Err(e))) => return StreamEnd::Broken(e.to_string()),
            Some(Some(Ok(bytes))) => decoder.push(&bytes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(chunks: &[&str]) -> Vec<SseEvent> {
        let mut decoder = SseDecoder::default();
        let mut out = Vec::new();
        for chunk in chunks {
            decoder.push(chunk.as_bytes());
            while let Some(event) = decoder.next_event().unwrap() {
                out.push(event);
            }
        }
        out
    }

    #[test]
    fn events_split_anywhere_and_multi_line_data() {
        let got = events(&[
            "da",
            "ta: {\"a\"",
            ":1}\n\nevent: ping\r\ndata: x\r\n",
            "data: y\r\n\r\n: comment\n\ndata:z\n\n",
        ]);
        assert_eq!(
            got,
            vec![
                SseEvent {
                    event: String::new(),
                    data: "{\"a\":1}".into()
                },
                SseEvent {
                    event: "ping".into(),
                    data: "x\ny".into()
                },
                SseEvent {
                    event: String::new(),
                    data: "z".into()
                },
            ]
        );
    }

    #[test]
    fn an_unfinished_event_waits_and_invalid_utf8_is_an_error() {
        assert!(events(&["data: half"]).is_empty());
        let mut decoder = SseDecoder::default();
        decoder.push(b"data: \xff\n\n");
        assert!(decoder.next_event().is_err());
    }

    #[test]
    fn a_long_stream_keeps_the_buffer_small() {
        let mut decoder = SseDecoder::default();
        for i in 0..10_000 {
            decoder.push(format!("data: {i}\n\n").as_bytes());
            assert_eq!(decoder.next_event().unwrap().unwrap().data, i.to_string());
        }
        assert!(decoder.buf.len() < 64, "{}", decoder.buf.len());
    }
}
