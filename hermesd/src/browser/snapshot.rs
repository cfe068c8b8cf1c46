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

/// One node of `Accessibility.getFullAXTree`, with only the fields the snapshot shows (the
/// rest of a large answer is skipped while it is read).
#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AxNode {
    node_id: String,
    #[serde(default)]
    parent_id: Option<String>,
    #[serde(default)]
    ignored: bool,
    #[serde(default)]
    role: Option<AxValue>,
    #[serde(default)]
    name: Option<AxValue>,
    #[serde(default)]
    value: Option<AxValue>,
    #[serde(default)]
    properties: Vec<AxProperty>,
    #[serde(default)]
    child_ids: Vec<String>,
    #[serde(default, rename = "backendDOMNodeId")]
    backend: Option<i64>,
}

#[derive(Debug, serde::Deserialize)]
struct AxValue {
    #[serde(default)]
    value: Value,
}

#[derive(Debug, serde::Deserialize)]
struct AxProperty {
    name: String,
    value: AxValue,
}

/// The answer of `Accessibility.getFullAXTree`.
#[derive(Debug, serde::Deserialize)]
pub struct AxTree {
    #[serde(default)]
    pub nodes: Vec<AxNode>,
}

impl AxNode {
    fn role(&self) -> &str {
        self.role
            .as_ref()
            .and_then(|v| v.value.as_str())
            .unwrap_or("")
    }

    fn name(&self) -> &str {
        self.name
            .as_ref()
            .and_then(|v| v.value.as_str())
            .unwrap_or("")
    }

    fn value(&self) -> Option<String> {
        match &self.value.as_ref()?.value {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        }
    }

    fn props(&self) -> Vec<String> {
        self.properties
            .iter()
            .filter_map(|p| match (p.name.as_str(), &p.value.value) {
                ("level", Value::Number(n)) => Some(format!("level={n}")),
                ("checked" | "pressed" | "selected" | "expanded", Value::Bool(true)) => {
                    Some(p.name.clone())
                }
                ("checked", Value::String(s)) if s == "true" || s == "mixed" => {
                    Some(format!("checked={s}"))
                }
                ("disabled" | "required", Value::Bool(true)) => Some(p.name.clone()),
                _ => None,
            })
            .collect()
    }
}

/// Render `nodes` (an `Accessibility.getFullAXTree` answer's `nodes`): `full` shows every
/// named node, otherwise only the interactive ones, headings and images.
pub fn render(nodes: &[AxNode], refs: &mut Refs, full: bool) -> Snapshot {
    let by_id: HashMap<&str, &AxNode> = nodes.iter().map(|n| (n.node_id.as_str(), n)).collect();
    let root = nodes.iter().find(|n| n.parent_id.is_none());
    let mut out = Snapshot {
        text: String::new(),
        elements: 0,
    };
    // Depth-first with an explicit stack: (node, depth).
    let mut stack: Vec<(&AxNode, usize)> = root.into_iter().map(|r| (r, 0)).collect();
    while let Some((node, depth)) = stack.pop() {
        let role = node.role();
        let name = node.name();
        let interactive = INTERACTIVE.contains(&role);
        let shown = !node.ignored
            && !TRANSPARENT.contains(&role)
            && (interactive
                || role == "heading"
                || (role == "img" && !name.is_empty())
                || (full && !name.trim().is_empty()));
        let child_depth = if shown { depth + 1 } else { depth };
        if shown {
            line(&mut out, node, depth, interactive, refs);
        }
        // Text the parent already shows as its name is not repeated.
        let skip_text = shown && !name.is_empty();
        for child in node.child_ids.iter().rev() {
            let Some(child) = by_id.get(child.as_str()) else {
                continue;
            };
            if skip_text && child.role() == "StaticText" {
                continue;
            }
            stack.push((child, child_depth));
        }
    }
    out
}

fn line(out: &mut Snapshot, node: &AxNode, depth: usize, interactive: bool, refs: &mut Refs) {
    use std::fmt::Write;
    for _ in 0..depth {
        out.text.push_str("  ");
    }
    let role = match node.role() {
        "StaticText" => "text",
        role => role,
    };
    let name = node.name().trim();
    let _ = if name.is_empty() {
        write!(out.text, "- {role}")
    } else {
        write!(out.text, "- {role} {:?}", clip(name, 300))
    };
    if let Some(value) = node.value().filter(|v| !v.is_empty()) {
        let _ = write!(out.text, ": {:?}", clip(&value, 300));
    }
    if interactive && let Some(backend) = node.backend {
        let r = refs.assign(backend);
        out.elements += 1;
        let _ = write!(out.text, " [ref=e{r}]");
    }
    for prop in node.props() {
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
        let mut values = vec![
            ax("1", "RootWebArea", "t", &["2", "3", "4"], 1),
            ax("2", "heading", "Title", &["5"], 2),
            ax("3", "textbox", "Name", &[], 3),
            ax("4", "button", "Send", &["6"], 4),
            ax("5", "StaticText", "Title", &[], 5),
            ax("6", "StaticText", "Send", &[], 6),
        ];
        for v in &mut values[1..] {
            v["parentId"] = json!("1");
        }
        let nodes: Vec<AxNode> = values
            .into_iter()
            .map(|v| serde_json::from_value(v).unwrap())
            .collect();
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
