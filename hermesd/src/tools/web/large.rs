//! Pages too large for readability's scoring (over [`LARGE_PAGE_BYTES`]): one html5ever parse
//! converted to Markdown by htmd, restricted to what the page itself marks as its main content
//! (`<main>`, `<article>`, `role="main"`) when it does, with the boilerplate readability would
//! drop first also dropped here — navigation, header, footer, aside, forms, scripts, and blocks
//! whose class or id name them as ads, banners, sidebars, share bars, cookie notices, comments.
//! Readability (`convert.rs`) scores every node several times: 60+ ms for a 1 MB page.

use std::rc::Rc;

use htmd::{
    Element, HtmlToMarkdown,
    element_handler::{HandlerResult, Handlers},
};
use markup5ever_rcdom::{Node, NodeData};

use super::convert::Page;

/// Pages from this size on take this path.
pub const LARGE_PAGE_BYTES: usize = 256 * 1024;

/// Tags never converted.
const SKIPPED: &[&str] = &[
    "head", "script", "style", "noscript", "nav", "header", "footer", "aside", "form", "iframe",
    "svg", "template", "button", "select",
];
/// Blocks whose class or id words are all boilerplate-free are kept; one of these drops it...
const BOILERPLATE_WORDS: &[&str] = &[
    "ad",
    "ads",
    "advert",
    "advertisement",
    "banner",
    "sponsor",
    "sponsored",
    "promo",
    "sidebar",
    "cookie",
    "cookies",
    "consent",
    "newsletter",
    "share",
    "sharing",
    "social",
    "related",
    "comment",
    "comments",
    "footer",
    "header",
    "nav",
    "navbar",
    "menu",
    "breadcrumb",
    "breadcrumbs",
    "pagination",
    "pager",
    "popup",
    "modal",
    "subscribe",
    "masthead",
    "widget",
];
/// ...unless one of these says it is the content.
const CONTENT_WORDS: &[&str] = &[
    "article", "content", "main", "body", "post", "entry", "story", "text",
];
/// Block tags whose class and id are looked at.
const BLOCKS: &[&str] = &["div", "section", "ul", "ol", "table", "p", "span", "figure"];
/// How much of the document's start is searched for `<title>`.
const TITLE_SCAN_BYTES: usize = 64 * 1024;

/// `html` as Markdown the fast way (see the module's note).
pub fn to_markdown(html: &str) -> Page {
    let converter = HtmlToMarkdown::builder()
        .skip_tags(SKIPPED.to_vec())
        .add_handler(BLOCKS.to_vec(), drop_boilerplate)
        .add_handler(vec!["body"], main_content_only)
        .build();
    let markdown = converter.convert(html).unwrap_or_default();
    let title = title_of(html);
    let markdown = markdown.trim();
    let markdown = if title.is_empty() || markdown.starts_with("# ") {
        markdown.to_string()
    } else {
        format!("# {title}\n\n{markdown}")
    };
    Page { title, markdown }
}

/// A block named as boilerplate converts to nothing; others as usual.
fn drop_boilerplate(handlers: &dyn Handlers, element: Element) -> Option<HandlerResult> {
    let mut boilerplate = false;
    for attr in element.attrs {
        let name = attr.name.local.as_ref();
        if name != "class" && name != "id" {
            continue;
        }
        for word in attr
            .value
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|w| !w.is_empty())
        {
            let word = word.to_ascii_lowercase();
            if CONTENT_WORDS.contains(&word.as_str()) {
                return handlers.fallback(element);
            }
            boilerplate |= BOILERPLATE_WORDS.contains(&word.as_str());
        }
    }
    if boilerplate {
        return None;
    }
    handlers.fallback(element)
}

/// The body's main content when the page marks it, else the whole body.
fn main_content_only(handlers: &dyn Handlers, element: Element) -> Option<HandlerResult> {
    match find_main(element.node) {
        Some(main) => Some(handlers.walk_children(&main)),
        None => handlers.fallback(element),
    }
}

/// The first `<main>`, else the first `role="main"`, else the only `<article>`, under `node`.
fn find_main(node: &Rc<Node>) -> Option<Rc<Node>> {
    let (mut role_main, mut articles) = (None, Vec::new());
    let mut stack = vec![Rc::clone(node)];
    while let Some(n) = stack.pop() {
        if let NodeData::Element { name, attrs, .. } = &n.data {
            let tag = name.local.as_ref();
            if tag == "main" {
                return Some(n);
            }
            if role_main.is_none()
                && attrs
                    .borrow()
                    .iter()
                    .any(|a| a.name.local.as_ref() == "role" && a.value.as_ref() == "main")
            {
                role_main = Some(Rc::clone(&n));
            }
            if tag == "article" && articles.len() < 2 {
                articles.push(Rc::clone(&n));
            }
        }
        let children = n.children.borrow();
        stack.extend(children.iter().rev().map(Rc::clone));
    }
    role_main.or_else(|| (articles.len() == 1).then(|| articles.remove(0)))
}

/// The text of the first `<title>`, entities decoded, whitespace collapsed.
fn title_of(html: &str) -> String {
    let mut end = html.len().min(TITLE_SCAN_BYTES);
    while !html.is_char_boundary(end) {
        end -= 1;
    }
    let head = &html[..end];
    let lower = head.to_ascii_lowercase();
    let Some(open) = lower.find("<title") else {
        return String::new();
    };
    let Some(start) = lower[open..].find('>').map(|i| open + i + 1) else {
        return String::new();
    };
    let Some(stop) = lower[start..].find("</title").map(|i| start + i) else {
        return String::new();
    };
    let text = htmd::convert(&format!("<p>{}</p>", &head[start..stop])).unwrap_or_default();
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_marked_main_content_is_kept_and_boilerplate_dropped() {
        let html = "<html><head><title>A &amp; B</title></head><body>\
            <nav><a href='/'>Home</a></nav><div class='ad-banner'>BUY NOW</div>\
            <main><h2>Part</h2><p>Text <a href='https://x.test/'>link</a>.</p>\
            <div class='share-bar'>Share this</div><div class='post-header'>By Ann</div>\
            <table><tr><th>k</th></tr><tr><td>v</td></tr></table>\
            <pre><code>let x = 1;</code></pre></main>\
            <footer>Copyright</footer></body></html>";
        let page = to_markdown(html);
        assert_eq!(page.title, "A & B");
        let md = &page.markdown;
        assert!(md.starts_with("# A & B\n\n## Part"), "{md}");
        assert!(md.contains("[link](https://x.test/)"), "{md}");
        assert!(md.contains("By Ann"), "{md}");
        assert!(md.contains("let x = 1;"), "{md}");
        assert!(md.contains("| k |") || md.contains("k"), "{md}");
        for gone in ["Home", "BUY NOW", "Share this", "Copyright"] {
            assert!(!md.contains(gone), "{gone} in {md}");
        }
    }

    #[test]
    fn without_a_marked_main_the_body_is_converted() {
        let page = to_markdown("<body><h1>T</h1><p>one</p><aside>side</aside></body>");
        assert_eq!(page.markdown, "# T\n\none");
    }
}
