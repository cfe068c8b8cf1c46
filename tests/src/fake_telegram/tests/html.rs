//! The HTML parser on its own, on the reference parser's own cases: error texts and byte
//! offsets, entity decoding, `</>`, `pre`+`code` merging, links, blockquotes.

use crate::fake_telegram::{
    entities::{Entity, Kind},
    html::parse,
};

fn error(html: &str) -> String {
    parse(html).expect_err(html)
}

fn text(html: &str) -> String {
    parse(html).expect(html).text
}

fn entities(html: &str) -> Vec<(Kind, usize, usize, String)> {
    let parsed = parse(html).expect(html);
    parsed
        .entities
        .into_iter()
        .map(
            |Entity {
                 kind,
                 offset,
                 length,
                 argument,
             }| (kind, offset, length, argument),
        )
        .collect()
}

#[test]
fn errors_name_the_problem_and_its_byte_offset() {
    assert_eq!(
        error("🏟 🏟&lt;<abacaba"),
        "Unclosed start tag at byte offset 13"
    );
    assert_eq!(
        error("🏟 🏟&lt;<abac aba>"),
        "Unsupported start tag \"abac\" at byte offset 13"
    );
    assert_eq!(
        error("🏟 🏟&lt;<i   =aba>"),
        "Empty attribute name in the tag \"i\" at byte offset 13"
    );
    assert_eq!(
        error("🏟 🏟&lt;<i    aba>"),
        "Expected equal sign in declaration of an attribute of the tag \"i\" at byte offset 13"
    );
    assert_eq!(
        error("🏟 🏟&lt;<i    aba  =  "),
        "Unclosed start tag \"i\" at byte offset 13"
    );
    assert_eq!(
        error("🏟 🏟&lt;<i    aba  =  190azAz-.,"),
        "Unexpected end of name token at byte offset 27"
    );
    assert_eq!(
        error("🏟 🏟&lt;<i    aba  =  \"&lt;&gt;&quot;>"),
        "Unclosed start tag at byte offset 13"
    );
    assert_eq!(error("🏟 🏟&lt;</"), "Unexpected end tag at byte offset 13");
    assert_eq!(
        error("🏟 🏟&lt;<b></b></"),
        "Unexpected end tag at byte offset 20"
    );
    assert_eq!(
        error("🏟 🏟&lt;<i>a</i   "),
        "Unclosed end tag at byte offset 17"
    );
    assert_eq!(
        error("🏟 🏟&lt;<i>a</em   >"),
        "Unmatched end tag at byte offset 17, expected \"</i>\", found \"</em>\""
    );
    assert_eq!(
        error("<b>x"),
        "Can't find end tag corresponding to start tag b"
    );
    assert_eq!(
        error("a < b"),
        "Unsupported start tag \"\" at byte offset 2"
    );
    assert_eq!(
        error("<span>x</span>"),
        "Tag \"span\" must have class \"tg-spoiler\" at byte offset 0"
    );
    assert!(error("&#xDFDF;").starts_with("Text contains invalid Unicode characters"));
}

#[test]
fn entities_decode_and_unknown_ones_stay() {
    assert_eq!(
        text("&lt;&gt;&amp;&quot;&laquo;&raquo;&#12345678;"),
        "<>&\"&laquo;&raquo;&#12345678;"
    );
    assert_eq!(text("a & b &amp c &#33; &#x21;"), "a & b & c ! !");
    assert_eq!(text("🏟 🏟<i>🏟 &lt🏟</i>"), "🏟 🏟🏟 <🏟");
    assert_eq!(
        entities("🏟 🏟<i>🏟 &lt🏟</i>"),
        [(Kind::Italic, 5, 6, String::new())]
    );
}

#[test]
fn tags_nest_and_close() {
    let nested = entities("🏟 🏟<i>🏟 &gt;<b aba   =   caba>&lt🏟</b></i>");
    assert_eq!(
        nested,
        [
            (Kind::Italic, 5, 7, String::new()),
            (Kind::Bold, 9, 3, String::new())
        ]
    );
    assert_eq!(entities("<i>a</>"), [(Kind::Italic, 0, 1, String::new())]);
    assert_eq!(
        entities("<I>a</i   >"),
        [(Kind::Italic, 0, 1, String::new())]
    );
    assert!(
        entities("<b></b>x").is_empty(),
        "empty entities are dropped"
    );
    let spoilers = entities("<tg-spoiler>a</tg-spoiler><span class=\"tg-spoiler\">b</span>");
    assert_eq!(
        spoilers.iter().map(|e| e.0).collect::<Vec<_>>(),
        [Kind::Spoiler, Kind::Spoiler]
    );
}

#[test]
fn pre_and_code_merge_into_a_language_block() {
    let block = "<pre><code class=\"language-rust\">fn</code></pre>";
    assert_eq!(entities(block), [(Kind::PreCode, 0, 2, "rust".to_owned())]);
    let inverted = "<code class=\"language-fift\"><pre>x</pre></code>";
    assert_eq!(
        entities(inverted),
        [(Kind::PreCode, 0, 1, "fift".to_owned())]
    );
    let apart = "<pre><code class=\"language-fift\">x</code> </pre>";
    assert_eq!(
        entities(apart),
        [
            (Kind::Pre, 0, 2, String::new()),
            (Kind::Code, 0, 1, String::new())
        ]
    );
}

#[test]
fn links_are_made_absolute() {
    let link = |html: &str| {
        entities(html)
            .into_iter()
            .map(|e| (e.0, e.3))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        link("<a href=telegram.org>x</a>"),
        [(Kind::TextUrl, "http://telegram.org/".to_owned())]
    );
    assert_eq!(
        link("<a href='telegram.org?&lt;'>x</a>"),
        [(Kind::TextUrl, "http://telegram.org/?<".to_owned())]
    );
    assert_eq!(
        link("<a>telegram.org</a>"),
        [(Kind::TextUrl, "http://telegram.org/".to_owned())]
    );
    assert!(link("<a>not a link</a>").is_empty());
    assert_eq!(
        link("<a href=\"tg://user?id=42\">Bob</a>"),
        [(Kind::TextMention, "42".to_owned())]
    );
}

#[test]
fn blockquotes_and_custom_emoji() {
    assert_eq!(
        entities("<blockquote>q</blockquote>")[0].0,
        Kind::BlockQuote
    );
    assert_eq!(
        entities("<blockquote expandable>q</blockquote>")[0].0,
        Kind::ExpandableBlockQuote
    );
    assert_eq!(
        entities("<tg-emoji emoji-id=\"5368324170671202286\">👍</tg-emoji>"),
        [(Kind::CustomEmoji, 0, 2, "5368324170671202286".to_owned())]
    );
    assert_eq!(
        error("<tg-emoji>👍</tg-emoji>"),
        "Invalid custom emoji identifier specified"
    );
}
