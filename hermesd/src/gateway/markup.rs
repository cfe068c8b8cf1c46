//! Markdown rendered for Telegram (placeholder until the renderer lands).

pub fn to_telegram_html(markdown: &str) -> String {
    markdown
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

pub fn to_plain_text(markdown: &str) -> String {
    markdown.to_string()
}
