//! Splitting long answers (placeholder until the splitter lands).

pub const TELEGRAM_MAX: usize = 4096;

pub fn utf16_len(s: &str) -> usize {
    s.encode_utf16().count()
}

pub fn split_markdown(markdown: &str, limit: usize) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut current = String::new();
    for c in markdown.chars() {
        if utf16_len(&current) + c.len_utf16() > limit {
            pieces.push(std::mem::take(&mut current));
        }
        current.push(c);
    }
    if !current.is_empty() {
        pieces.push(current);
    }
    pieces
}
