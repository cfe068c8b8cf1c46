//! What the background review is asked (Hermes' review guidance, in our words): what belongs in
//! memory, what makes a skill worth creating or patching, and what never to record.

use super::review::Focus;

const MEMORY_PROMPT: &str = "Look back over the conversation above and decide whether anything in it \
belongs in long-term memory.\n\nWorth keeping: what the user told you about themselves (role, \
projects, environment, preferences, personal details they shared) and how they want you to work \
(style, format, what to do or avoid). Use the memory tool: target \"user\" for who they are, \
\"memory\" for your own working notes. Keep entries short and durable; replace an outdated entry \
rather than adding a near-duplicate.\n\nNot worth keeping: task progress, one-off results, errors \
that resolved themselves. If nothing qualifies, answer \"Nothing to save.\" and stop.";

const SKILLS_PROMPT: &str = "Look back over the conversation above and improve the skill library \
with what it taught you.\n\nSignals: the user corrected your approach, format or tone; a \
non-trivial technique, fix or workaround emerged; a skill you read turned out wrong, incomplete \
or outdated.\n\nPrefer, in order: (1) patch a skill that was used in the conversation; (2) patch \
an existing skill that covers this kind of task (skills_list, then skill_view); (3) add a \
references/, templates/ or scripts/ file to such a skill and point to it from its SKILL.md; \
(4) create a new skill named for the class of task (never for a ticket, an error string or \
today's one-off), with when-to-use, numbered steps with exact commands, pitfalls and a \
verification step.\n\nDo not record environment accidents (a missing binary, an unset key), \
claims that a tool does not work, or errors that went away on retry. Skills you did not write \
(bundled, installed, or edited by the user) are read-only to you. If nothing qualifies, answer \
\"Nothing to save.\" and stop.";

const BOTH_PROMPT: &str = "Look back over the conversation above and decide what to keep, in two \
places.\n\nMemory (the memory tool): who the user is and how they want you to work — facts and \
durable preferences, short entries, replacing outdated ones.\n\nSkills (skills_list, skill_view, \
skill_manage): how to do this kind of task. Patch a skill used in the conversation or an existing \
one covering the task before creating a new one; a new skill is named for the class of task and \
has when-to-use, numbered steps with exact commands, pitfalls and a verification step. Skills you \
did not write are read-only to you.\n\nSkip task progress, one-off results, environment accidents \
and errors that went away on retry. If nothing qualifies, answer \"Nothing to save.\" and stop.";

pub(super) fn prompt(focus: Focus) -> &'static str {
    match focus {
        Focus::Memory => MEMORY_PROMPT,
        Focus::Skills => SKILLS_PROMPT,
        Focus::Both => BOTH_PROMPT,
    }
}
