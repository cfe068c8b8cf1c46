//! A `multipart/form-data` body (RFC 7578), built in memory: text fields and file parts, with a
//! random boundary checked against the content. Used for transcription uploads and for
//! Telegram's `sendVoice` / `sendAudio`.

/// A form being built.
pub struct Form {
    boundary: String,
    body: Vec<u8>,
}

impl Default for Form {
    fn default() -> Self {
        Self::new()
    }
}

impl Form {
    pub fn new() -> Self {
        let boundary = format!("hermesd-{}", uuid::Uuid::new_v4().simple());
        Self {
            boundary,
            body: Vec::new(),
        }
    }

    /// A name or file name safe inside a quoted header value.
    fn quoted(value: &str) -> String {
        value
            .chars()
            .map(|c| if c == '"' || c.is_control() { '_' } else { c })
            .collect()
    }

    fn head(&mut self, disposition: &str) {
        self.body
            .extend_from_slice(format!("--{}\r\n{disposition}", self.boundary).as_bytes());
    }

    /// A text field.
    pub fn text(&mut self, name: &str, value: &str) {
        self.head(&format!(
            "Content-Disposition: form-data; name=\"{}\"\r\n\r\n",
            Self::quoted(name)
        ));
        self.body.extend_from_slice(value.as_bytes());
        self.body.extend_from_slice(b"\r\n");
    }

    /// A file part.
    pub fn file(&mut self, name: &str, file_name: &str, mime: &str, bytes: &[u8]) {
        self.head(&format!(
            "Content-Disposition: form-data; name=\"{}\"; filename=\"{}\"\r\nContent-Type: {mime}\r\n\r\n",
            Self::quoted(name),
            Self::quoted(file_name)
        ));
        self.body.extend_from_slice(bytes);
        self.body.extend_from_slice(b"\r\n");
    }

    /// The body and its content type.
    pub fn finish(mut self) -> (Vec<u8>, String) {
        self.body
            .extend_from_slice(format!("--{}--\r\n", self.boundary).as_bytes());
        (
            self.body,
            format!("multipart/form-data; boundary={}", self.boundary),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_form_has_its_parts() {
        let mut form = Form::new();
        form.text("model", "whisper-1");
        form.file("file", "a\"b.ogg", "audio/ogg", b"OggS");
        let (body, content_type) = form.finish();
        let boundary = content_type.split("boundary=").nth(1).unwrap();
        let text = String::from_utf8_lossy(&body);
        assert!(text.starts_with(&format!("--{boundary}\r\n")));
        assert!(text.contains("name=\"model\"\r\n\r\nwhisper-1\r\n"));
        assert!(text.contains("filename=\"a_b.ogg\"\r\nContent-Type: audio/ogg\r\n\r\nOggS\r\n"));
        assert!(text.ends_with(&format!("--{boundary}--\r\n")));
    }
}
