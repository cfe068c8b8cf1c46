//! The page as the model reads it: Chromium's accessibility tree rendered as an indented list
//! (`- button "Send" [ref=e3]`), with element refs the model clicks and types by. A ref names
//! one DOM node for as long as the document lives: the same element keeps its ref across
//! snapshots, and refs start again at `e1` on a new document.

use std::collections::HashMap;

use serde_json::Value;

/// Refs kept per document; past this the numbering starts again.
const MAX_REFS: usize = 20_000;

/// Roles that can be clicked or typed into, which get a ref.
const INTERACTIVE: &[&str] = &[
    "button",
    "link",
    "textbox",
    "searchbox",
    "checkbox",
    "radio",
    "combobox",
    "listbox",
    "option",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "tab",
    "slider",
    "spinbutton",
    "switch",
    "treeitem",
];
/// Roles that only group others; their children are shown in their place.
const TRANSPARENT: &[&str] = &[
    "generic",
    "none",
    "presentation",
    "InlineTextBox",
    "LineBreak",
    "RootWebArea",
    "WebArea",
    "paragraph",
    "group",
    "LayoutTable",
    "LayoutTableRow",
    "LayoutTableCell",
    "section",
];

/// The refs of the current document: ref number ↔ backend DOM node id.
#[derive(Debug, Default)]
pub struct Refs {
    by_node: HashMap<i64, u32>,
    by_ref: HashMap<u32, i64>,
    next: u32,
}

impl Refs {
    /// Forget every ref (a new document).
    pub fn reset(&mut self) {
        *self = Self::default();
    }

    fn assign(&mut self, node: i64) -> u32 {
        if let Some(r) = self.by_node.get(&node) {
            return *r;
        }
        if self.by_node.len() >= MAX_REFS {
            self.reset();
        }
        self.next += 1;
        self.by_node.insert(node, self.next);
        self.by_ref.insert(self.next, node);
        self.next
    }

    /// The backend node of `r` (`@e5`, `e5`).
    pub fn node(&self, r: &str) -> Option<i64> {
        let n: u32 = r
            .trim()
            .trim_start_matches('@')
            .strip_prefix('e')?
            .parse()
            .ok()?;
        self.by_ref.get(&n).copied()
    }
}

/// A rendered snapshot: the text and how many elements have refs in it.
#[derive(Debug)]
pub struct Snapshot {
    pub text: String,
    pub elements: usize,
}

struct Node<'a> {
    role: &'a str,
    name: &'a str,
    value: Option<String>,
    ignored: bool,
    backend: Option<i64>,
    children: Vec<&'a str>,
    props: Vec<String>,
}

fn node_of(v: &Value) -> Option<(&str, Node<'_>)> {
    let id = v.get("nodeId")?.as_str()?;
    let text = |key: &str| -> Option<&Value> { v.get(key)?.get("value") };
    let props = v
        .get("properties")
        .and_then(Value::as_array)
        .map(|props| {
            props
                .iter()
                .filter_map(|p| {
                    let name = p.get("name")?.as_str()?;
                    let value = p.get("value")?.get("value")?;
                    match (name, value) {
                        ("level", Value::Number(n)) => Some(format!("level={n}")),
                        ("checked" | "pressed" | "selected" | "expanded", Value::Bool(true)) => {
                            Some(name.to_string())
                        }
                        ("checked", Value::String(s)) if s == "true" || s == "mixed" => {
                            Some(format!("checked={s}"))
                        }
                        ("disabled" | "required", Value::Bool(true)) => Some(name.to_string()),
                        _ => None,
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    Some((
        id,
        Node {
            role: text("role").and_then(Value::as_str).unwrap_or(""),
            name: text("name").and_then(Value::as_str).unwrap_or(""),
            value: text("value").and_then(|v| match v {
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                _ => None,
            }),
            ignored: v.get("ignored").and_then(Value::as_bool).unwrap_or(false),
            backend: v.get("backendDOMNodeId").and_then(Value::as_i64),
            children: v
                .get("childIds")
                .and_then(Value::as_array)
                .map(|c| c.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default(),
            props,
        },
    ))
}

/// Render `nodes` (an `Accessibility.getFullAXTree` answer's `nodes`): `full` shows every
/// named node, otherwise only the interactive ones, headings and images.
pub fn render(nodes: &[Value], refs: &mut Refs, full: bool) -> Snapshot {
    let mut by_id: HashMap<&str, Node<'_>> = HashMap::with_capacity(nodes.len());
    let mut root = None;
    for v in nodes {
        if let Some((id, node)) = node_of(v) {
            if root.is_none() && v.get("parentId").is_none() {
                root = Some(id);
            }
            by_id.insert(id, node);
        }
    }
    let mut out = Snapshot {
        text: String::new(),
        elements: 0,
    };
    // Depth-first with an explicit stack: (node, depth).
    let mut stack: Vec<(&str, usize)> = root.into_iter().map(|r| (r, 0)).collect();
    while let Some((id, depth)) = stack.pop() {
        let Some(node) = by_id.get(id) else { continue };
        let interactive = INTERACTIVE.contains(&node.role);
        let shown = !node.ignored
            && !TRANSPARENT.contains(&node.role)
            && (interactive
                || node.role == "heading"
                || (node.role == "img" && !node.name.is_empty())
                || (full && !node.name.trim().is_empty()));
        let child_depth = if shown { depth + 1 } else { depth };
        if shown {
            line(&mut out, node, depth, interactive, refs);
        }
        // Text the parent already shows as its name is not repeated.
        let skip_text = shown && !node.name.is_empty();
        for child in node.children.iter().rev() {
            if skip_text && by_id.get(child).is_some_and(|c| c.role == "StaticText") {
                continue;
            }
            stack.push((child, child_depth));
        }
    }
    out
}

fn line(out: &mut Snapshot, node: &Node<'_>, depth: usize, interactive: bool, refs: &mut Refs) {
    use std::fmt::Write;
    for _ in 0..depth {
        out.text.push_str("  ");
    }
    let role = if node.role == "StaticText" {
        "text"
    } else {
        node.role
    };
    let name = node.name.trim();
    let _ = if name.is_empty() {
        write!(out.text, "- {role}")
    } else {
        write!(out.text, "- {role} {:?}", clip(name, 300))
    };
    if let Some(value) = node.value.as_deref().filter(|v| !v.is_empty()) {
        let _ = write!(out.text, ": {:?}", clip(value, 300));
    }
    if interactive && let Some(backend) = node.backend {
        let r = refs.assign(backend);
        out.elements += 1;
        let _ = write!(out.text, " [ref=e{r}]");
    }
    for prop in &node.props {
        let _ = write!(out.text, " [{prop}]");
    }
    out.text.push('\n');
}

/// `s` cut to `max` characters with an ellipsis.
fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ax(id: &str, role: &str, name: &str, children: &[&str], backend: i64) -> Value {
        json!({"nodeId": id, "role": {"value": role}, "name": {"value": name},
               "childIds": children, "backendDOMNodeId": backend})
    }

    #[test]
    fn refs_are_stable_and_text_is_shown_only_in_full() {
        let mut nodes = vec![
            ax("1", "RootWebArea", "t", &["2", "3", "4"], 1),
            ax("2", "heading", "Title", &["5"], 2),
            ax("3", "textbox", "Name", &[], 3),
            ax("4", "button", "Send", &["6"], 4),
            ax("5", "StaticText", "Title", &[], 5),
            ax("6", "StaticText", "Send", &[], 6),
        ];
        nodes[0].as_object_mut().map(|o| o.remove("parentId"));
        let mut refs = Refs::default();
        let compact = render(&nodes, &mut refs, false);
        assert_eq!(
            compact.text,
            "- heading \"Title\"\n- textbox \"Name\" [ref=e1]\n- button \"Send\" [ref=e2]\n"
        );
        assert_eq!(compact.elements, 2);
        // The button keeps its ref when the page is read again.
        let again = render(&nodes[..], &mut refs, true);
        assert!(
            again.text.contains("button \"Send\" [ref=e2]"),
            "{}",
            again.text
        );
        assert_eq!(refs.node("@e2"), Some(4));
        assert_eq!(refs.node("e9"), None);
        assert_eq!(refs.node("button"), None);
    }
}
