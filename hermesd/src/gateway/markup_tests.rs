//! Tests for the Telegram rendering, and the well-formedness checker the
//! splitter's tests share.

use super::{to_plain_text, to_telegram_html};

const TAGS: [&str; 7] = ["b", "i", "s", "code", "pre", "a", "blockquote"];

/// Checks `html` against Telegram's HTML parse mode and returns its visible
/// text: only Telegram's tags (with only their attributes), balanced and
/// properly nested under Telegram's rules, no bare `<`, `>` or `&`, and only
/// the four named entities.
pub(crate) fn check_telegram_html(html: &str) -> Result<String, String> {
    let mut visible = String::new();
    let mut open: Vec<(String, bool)> = Vec::new(); // (tag, has content yet)
    let mut rest = html;
    while let Some(c) = rest.chars().next() {
        match c {
            '<' => {
                let end = rest
                    .find('>')
                    .ok_or(format!("unterminated tag in {rest:?}"))?;
                check_tag(&rest[1..end], &mut open)?;
                rest = &rest[end + 1..];
                continue;
            }
            '&' => {
                let (entity, text) = [
                    ("&lt;", '<'),
                    ("&gt;", '>'),
                    ("&amp;", '&'),
                    ("&quot;", '"'),
                ]
                .into_iter()
                .find(|(entity, _)| rest.starts_with(entity))
                .ok_or(format!("bare & at {rest:?}"))?;
                visible.push(text);
                rest = &rest[entity.len()..];
            }
            '>' => return Err(format!("bare > at {rest:?}")),
            _ => {
                visible.push(c);
                rest = &rest[c.len_utf8()..];
            }
        }
        if let Some(top) = open.last_mut() {
            top.1 = true;
        }
    }
    match open.last() {
        Some((tag, _)) => Err(format!("<{tag}> never closed")),
        None => Ok(visible),
    }
}

fn check_tag(tag: &str, open: &mut Vec<(String, bool)>) -> Result<(), String> {
    if let Some(name) = tag.strip_prefix('/') {
        return match open.pop() {
            Some((top, _)) if top == name => Ok(()),
            other => Err(format!("</{name}> closes {other:?}")),
        };
    }
    let (name, attributes) = tag.split_once(' ').unwrap_or((tag, ""));
    if !TAGS.contains(&name) {
        return Err(format!("<{name}> is not a Telegram tag"));
    }
    let inside = |wanted: &str| open.iter().any(|(tag, _)| tag == wanted);
    let parent = open.last().map(|(tag, content)| (tag.as_str(), *content));
    let attributes_ok = match name {
        "a" => {
            attributes.starts_with("href=\"")
                && attributes.ends_with('"')
                && !attributes[6..attributes.len() - 1].contains(['"', '<', '>'])
        }
        "code" if parent == Some(("pre", false)) => {
            attributes.is_empty() || is_language_class(attributes)
        }
        _ => attributes.is_empty(),
    };
    if !attributes_ok {
        return Err(format!("bad attributes on <{tag}>"));
    }
    let nesting_ok = match name {
        "code" => {
            !inside("code") && !inside("a") && (!inside("pre") || parent == Some(("pre", false)))
        }
        "pre" => {
            !inside("pre") && !inside("code") && open.iter().all(|(tag, _)| tag == "blockquote")
        }
        "a" => !inside("a") && !inside("pre") && !inside("code"),
        "blockquote" => !inside("blockquote") && open.is_empty(),
        _ => !inside("pre") && !inside("code"),
    };
    if !nesting_ok {
        return Err(format!("<{name}> may not be inside {open:?}"));
    }
    open.push((name.to_owned(), false));
    Ok(())
}

fn is_language_class(attributes: &str) -> bool {
    let language = attributes
        .strip_prefix("class=\"language-")
        .and_then(|rest| rest.strip_suffix('"'));
    language.is_some_and(|lang| {
        !lang.is_empty()
            && lang
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_+-".contains(c))
    })
}

/// The HTML for `markdown`, asserted well-formed.
fn html(markdown: &str) -> String {
    let html = to_telegram_html(markdown);
    if let Err(problem) = check_telegram_html(&html) {
        panic!("{problem}\nmarkdown: {markdown:?}\nhtml: {html:?}");
    }
    html
}

#[test]
fn checker_rejects_what_telegram_rejects() {
    for bad in [
        "<b>x",
        "x</b>",
        "<u>x</u>",
        "<b><i>x</b></i>",
        "a < b",
        "a > b",
        "a & b",
        "&nbsp;",
        "<pre><b>x</b></pre>",
        "<code><i>x</i></code>",
        "<a href=\"x\"><a href=\"y\">z</a></a>",
        "<blockquote><blockquote>x</blockquote></blockquote>",
        "<b class=\"x\">y</b>",
        "<pre>x<code class=\"language-rs\">y</code></pre>",
        "<code class=\"language-rs\">y</code>",
        "<a href=\"https://x\"><code>y</code></a>",
        "<script>x</script>",
        "<b>x<pre>y</pre></b>",
    ] {
        assert!(
            check_telegram_html(bad).is_err(),
            "{bad:?} should be rejected"
        );
    }
    let good = "<blockquote><b>x &lt; <a href=\"https://x?a&amp;b\">y</a></b></blockquote>";
    assert_eq!(check_telegram_html(good), Ok("x < y".to_owned()));
}

#[test]
fn inline_formatting() {
    assert_eq!(
        html("**bold** and __strong__"),
        "<b>bold</b> and <b>strong</b>"
    );
    assert_eq!(html("*it* and _em_"), "<i>it</i> and <i>em</i>");
    assert_eq!(html("~~gone~~"), "<s>gone</s>");
    assert_eq!(html("run `ls -l`"), "run <code>ls -l</code>");
    assert_eq!(html("***both***"), "<i><b>both</b></i>");
    assert_eq!(html("**a *b* c**"), "<b>a <i>b</i> c</b>");
    assert_eq!(html("**bold `code`**"), "<b>bold <code>code</code></b>");
}

#[test]
fn escapes_text_everywhere() {
    assert_eq!(
        html("<script>alert('x')</script>"),
        "&lt;script&gt;alert('x')&lt;/script&gt;"
    );
    assert_eq!(html("a < b && c > d"), "a &lt; b &amp;&amp; c &gt; d");
    assert_eq!(html("&amp; and &lt; and &copy;"), "&amp; and &lt; and ©");
    assert_eq!(
        html("a <b>bold</b> <u>c</u>"),
        "a &lt;b&gt;bold&lt;/b&gt; &lt;u&gt;c&lt;/u&gt;"
    );
    assert_eq!(
        html("`a<b && c>d`"),
        "<code>a&lt;b &amp;&amp; c&gt;d</code>"
    );
    assert_eq!(
        html("<!-- note -->\n\nafter"),
        "&lt;!-- note --&gt;\n\nafter"
    );
    assert_eq!(html("<div>\n*x*\n</div>"), "&lt;div&gt;\n*x*\n&lt;/div&gt;");
}

#[test]
fn unbalanced_markers_stay_literal() {
    assert_eq!(html("**bold"), "**bold");
    assert_eq!(html("an *open and `tick"), "an *open and `tick");
    assert_eq!(html("~~half"), "~~half");
    assert_eq!(html("[text](http://x"), "[text](http://x");
}

#[test]
fn code_blocks() {
    let rust = "```rust\nfn f() -> Vec<u8> { a && b }\n```";
    let expected = "<pre><code class=\"language-rust\">fn f() -&gt; Vec&lt;u8&gt; { a &amp;&amp; b }</code></pre>";
    assert_eq!(html(rust), expected);
    assert_eq!(
        html("```\nplain <x>\n```"),
        "<pre><code>plain &lt;x&gt;</code></pre>"
    );
    assert_eq!(
        html("    indented\n    code"),
        "<pre><code>indented\ncode</code></pre>"
    );
    assert_eq!(
        html("~~~python title=x\nprint(1)\n~~~"),
        "<pre><code class=\"language-python\">print(1)</code></pre>"
    );
    let hostile = html("```c\"><script>\nx\n```");
    assert_eq!(
        hostile,
        "<pre><code class=\"language-cscript\">x</code></pre>"
    );
    assert_eq!(
        html("```\n**not bold** [x](http://y)\n```"),
        "<pre><code>**not bold** [x](http://y)</code></pre>"
    );
    assert_eq!(html("```\n```\n\nafter"), "after");
}

#[test]
fn links() {
    assert_eq!(
        html("[site](https://example.com)"),
        "<a href=\"https://example.com\">site</a>"
    );
    assert_eq!(
        html("[s](http://x.org/?a=1&b=\"2\")"),
        "<a href=\"http://x.org/?a=1&amp;b=&quot;2&quot;\">s</a>"
    );
    assert_eq!(
        html("[me](tg://user?id=42)"),
        "<a href=\"tg://user?id=42\">me</a>"
    );
    assert_eq!(
        html("<me@example.org>"),
        "<a href=\"mailto:me@example.org\">me@example.org</a>"
    );
    assert_eq!(
        html("<https://x.io>"),
        "<a href=\"https://x.io\">https://x.io</a>"
    );
    assert_eq!(
        html("[`code`](https://x.io)"),
        "<a href=\"https://x.io\">code</a>"
    );
    assert_eq!(
        html("[**b** t](https://x.io)"),
        "<a href=\"https://x.io\"><b>b</b> t</a>"
    );
}

#[test]
fn unsafe_links_become_text_and_url() {
    let js = html("[click](javascript:alert(1))");
    assert_eq!(js, "click (javascript:alert(1))");
    assert_eq!(html("[docs](./README.md)"), "docs (./README.md)");
    assert_eq!(html("[f](ftp://host/f)"), "f (ftp://host/f)");
    assert_eq!(html("[x](http://)"), "x (http://)");
    assert_eq!(html("[JS](JavaScript:void(0))"), "JS (JavaScript:void(0))");
}

#[test]
fn images_become_links() {
    assert_eq!(
        html("![a cat](https://x.io/cat.png)"),
        "<a href=\"https://x.io/cat.png\">a cat</a>"
    );
    assert_eq!(
        html("![](https://x.io/c.png)"),
        "<a href=\"https://x.io/c.png\">https://x.io/c.png</a>"
    );
    assert_eq!(
        html("[![ci](https://i.io/b.svg)](https://ci.io)"),
        "<a href=\"https://ci.io\">ci</a>"
    );
    assert_eq!(
        html("![pic](data:image/png;base64,AAAA)"),
        "pic (data:image/png;base64,AAAA)"
    );
}

#[test]
fn headings_quotes_rules_and_breaks() {
    assert_eq!(html("# Title\nText"), "<b>Title</b>\n\nText");
    assert_eq!(
        html("Setext\n===\n\n### **Bold** head"),
        "<b>Setext</b>\n\n<b>Bold head</b>"
    );
    assert_eq!(html("#\n\ntext"), "text");
    assert_eq!(
        html("> quoted\n> more"),
        "<blockquote>quoted\nmore</blockquote>"
    );
    assert_eq!(html("> a\n>\n> > b"), "<blockquote>a\n\nb</blockquote>");
    assert_eq!(
        html("> ```\n> x\n> ```"),
        "<blockquote><pre><code>x</code></pre></blockquote>"
    );
    assert_eq!(html("a\n\n---\n\nb"), "a\n\n——————————\n\nb");
    assert_eq!(html("line one\nline two"), "line one\nline two");
    assert_eq!(html("hard  \nbreak\\\nagain"), "hard\nbreak\nagain");
    assert_eq!(html("p1\n\n\n\np2"), "p1\n\np2");
}

#[test]
fn lists() {
    assert_eq!(html("- a\n- b"), "• a\n• b");
    assert_eq!(html("* a\n+ b"), "• a\n\n• b");
    assert_eq!(html("1. one\n1. two\n1. three"), "1. one\n2. two\n3. three");
    assert_eq!(html("3) c\n4) d"), "3. c\n4. d");
    assert_eq!(html("- a\n\n- b"), "• a\n\n• b");
    assert_eq!(html("para\n- item"), "para\n\n• item");
    assert_eq!(
        html("- **bold** item\n- [l](https://x.io)"),
        "• <b>bold</b> item\n• <a href=\"https://x.io\">l</a>"
    );
}

#[test]
fn blocks_inside_list_items_start_on_their_own_line() {
    let code = "1. Run:\n   ```sh\n   cargo build\n   ```\n2. Done";
    let expected = "1. Run:\n<pre><code class=\"language-sh\">cargo build</code></pre>\n2. Done";
    assert_eq!(html(code), expected);
    assert_eq!(to_plain_text(code), "1. Run:\ncargo build\n2. Done");
    assert_eq!(
        html("- a\n  > q\n- b"),
        "• a\n  <blockquote>q</blockquote>\n• b"
    );
    assert_eq!(html("- ```\n  x\n  ```"), "• <pre><code>x</code></pre>");
    assert_eq!(html("- a\n\n  ---\n- b"), "• a\n\n  ——————————\n• b");
}

#[test]
fn nested_lists_indent() {
    let nested = "- a\n  - b\n    - c\n  - d\n- e";
    assert_eq!(html(nested), "• a\n  • b\n    • c\n  • d\n• e");
    assert_eq!(html("1. a\n   - b\n2. c"), "1. a\n   • b\n2. c");
    assert_eq!(html("- a\n  continued\n- b"), "• a\n  continued\n• b");
    assert_eq!(
        html("> - a\n>   - b"),
        "<blockquote>• a\n  • b</blockquote>"
    );
}

#[test]
fn tables_are_aligned_pre_blocks() {
    let table =
        "| Name | Qty | Note |\n|:-----|----:|:---:|\n| apple | 3 | a<b |\n| kiwi | 12 | **x** |";
    let expected =
        "<pre>Name  | Qty | Note\n------+-----+-----\napple |   3 | a&lt;b\nkiwi  |  12 |  x</pre>";
    assert_eq!(html(table), expected);
    let plain = "Name  | Qty | Note\n------+-----+-----\napple |   3 | a<b\nkiwi  |  12 |  x";
    assert_eq!(to_plain_text(table), plain);
    let linked = "| a |\n|---|\n| [t](https://x.io) `c` |";
    assert_eq!(
        html(linked),
        "<pre>a\n------------------\nt (https://x.io) c</pre>"
    );
    assert_eq!(
        html("before\n\n| x | y |\n|---|---|\n| 1 |"),
        "before\n\n<pre>x | y\n--+--\n1 |</pre>"
    );
}

#[test]
fn plain_text_drops_markup_keeps_targets() {
    let markdown =
        "# Head\n\n**b** *i* ~~s~~ `c` [l](https://x.io) <https://y.io>\n\n> q\n\n```rs\n<x>\n```";
    let expected = "Head\n\nb i s c l (https://x.io) https://y.io\n\nq\n\n<x>";
    assert_eq!(to_plain_text(markdown), expected);
    assert_eq!(to_plain_text("a < b && c > d &amp;"), "a < b && c > d &");
    assert_eq!(to_plain_text("- a\n  - b"), "• a\n  • b");
}

#[test]
fn plain_text_is_the_visible_text_plus_link_targets() {
    let samples = [
        "# T\n\n- a *b*\n  1. c\n\n> q `x<y`\n\n| h | i |\n|---|---|\n| 1 | 2 |\n\n---\n\n```\n&\n```",
        "[a](https://x.io) and [b](./rel) ![c](https://i.io) <m@x.io> &lt;tag&gt;",
    ];
    let with_targets = "a (https://x.io) and b (./rel) c (https://i.io) m@x.io <tag>";
    assert_eq!(to_plain_text(samples[1]), with_targets);
    assert_eq!(
        check_telegram_html(&to_telegram_html(samples[0])),
        Ok(to_plain_text(samples[0]))
    );
    let visible = check_telegram_html(&to_telegram_html(samples[1]));
    assert_eq!(visible, Ok("a and b (./rel) c m@x.io <tag>".to_owned()));
}

#[test]
fn empty_and_whitespace_input() {
    assert_eq!(html(""), "");
    assert_eq!(html("   \n\n  "), "");
    assert_eq!(html("****"), "——————————");
    assert_eq!(html("a ** b"), "a ** b");
    assert_eq!(
        html("[](https://x.io)"),
        "<a href=\"https://x.io\">https://x.io</a>"
    );
}
