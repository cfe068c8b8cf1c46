//! The skills block of the system prompt: active skills (name + short description) grouped by
//! category, in the shape of Hermes' `build_skills_system_prompt`.
//!
//! The output depends only on the catalog and the context, never on iteration order of hash
//! maps or on the clock, so the same inputs give the same bytes (the prompt prefix stays cacheable).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::activation::{ActivationContext, is_active};
use super::catalog::{Catalog, SkillEntry};
use super::fields::{collapse_whitespace, truncate_chars};

/// Category heading used for skills that sit directly under a root.
pub const UNCATEGORIZED: &str = "general";
/// Longest description shown per skill in the index (Hermes' limit).
pub const INDEX_DESCRIPTION_CHARS: usize = 60;
/// The tool whose presence adds the "fix or save skills" sentence.
const SKILL_MANAGE_TOOL: &str = "skill_manage";

const INTRO: &str = "## Skills\n\
Skills are saved procedures for specific tasks. Before replying, scan the list below; if a \
skill fits the task, even partly, load it with skill_view(name) and follow it.\n";

const MAINTENANCE: &str = "If a skill you used was wrong or incomplete, fix it with \
skill_manage(action='patch') before finishing. After a hard, multi-step task, offer to save \
the procedure as a skill.\n";

/// The system-prompt block listing the skills active for `ctx`; empty when none is active.
pub fn build_index(catalog: &Catalog, ctx: &ActivationContext<'_>) -> String {
    let mut by_category: BTreeMap<&str, Vec<&SkillEntry>> = BTreeMap::new();
    for entry in catalog.entries.iter().filter(|e| is_active(e, ctx)) {
        let category = entry.category.as_deref().unwrap_or(UNCATEGORIZED);
        by_category.entry(category).or_default().push(entry);
    }
    if by_category.is_empty() {
        return String::new();
    }

    let mut out =
        String::with_capacity(INTRO.len() + MAINTENANCE.len() + 64 * catalog.entries.len());
    out.push_str(INTRO);
    if ctx.available_tools.contains(SKILL_MANAGE_TOOL) {
        out.push_str(MAINTENANCE);
    }
    out.push_str("\n<available_skills>\n");
    for (category, mut entries) in by_category {
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        match catalog.category_descriptions.get(category) {
            Some(description) => {
                let _ = writeln!(out, "  {category}: {}", collapse_whitespace(description));
            }
            None => {
                let _ = writeln!(out, "  {category}:");
            }
        }
        for entry in entries {
            let description = index_description(&entry.description);
            if description.is_empty() {
                let _ = writeln!(out, "    - {}", entry.name);
            } else {
                let _ = writeln!(out, "    - {}: {description}", entry.name);
            }
        }
    }
    out.push_str("</available_skills>");
    out
}

/// A description shortened for the index: one line, unquoted, at most
/// [`INDEX_DESCRIPTION_CHARS`] characters.
pub fn index_description(description: &str) -> String {
    let one_line = collapse_whitespace(description);
    let unquoted = one_line.trim_matches(|c| c == '"' || c == '\'');
    truncate_chars(unquoted, INDEX_DESCRIPTION_CHARS)
}
