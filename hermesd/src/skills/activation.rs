//! Whether a skill is offered in a session: OS platforms, disabled lists and the tool/toolset
//! conditions, with Hermes' semantics.

use std::collections::{HashMap, HashSet};
use std::fmt;

use super::catalog::SkillEntry;

/// What a session offers, against which skills are checked.
#[derive(Debug, Clone, Copy)]
pub struct ActivationContext<'a> {
    /// Host OS: "linux", "macos", "windows" (see [`current_os`]).
    pub os: &'a str,
    /// Chat platform of the session ("cli", "telegram", ...), for `platform_disabled`.
    pub platform: Option<&'a str>,
    /// Names of the tools available to the session.
    pub available_tools: &'a HashSet<String>,
    /// Names of the toolsets available to the session.
    pub available_toolsets: &'a HashSet<String>,
    /// `skills.disabled`: skills disabled everywhere.
    pub disabled: &'a [String],
    /// `skills.platform_disabled`: chat platform → skills disabled there.
    pub platform_disabled: &'a HashMap<String, Vec<String>>,
}

/// The host OS in skill `platforms` terms: "linux", "macos", "windows", else Rust's own name.
pub fn current_os() -> &'static str {
    std::env::consts::OS
}

/// Why a skill is not offered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InactiveReason {
    /// Listed in `skills.disabled`.
    Disabled,
    /// Listed in `skills.platform_disabled` for this chat platform.
    DisabledOnPlatform(String),
    /// The skill's `platforms` list excludes this OS.
    UnsupportedOs {
        /// The skill's platforms.
        platforms: Vec<String>,
    },
    /// A toolset from `requires_toolsets` is not available.
    MissingToolset(String),
    /// A tool from `requires_tools` is not available.
    MissingTool(String),
    /// A toolset from `fallback_for_toolsets` is available, so the substitute is not needed.
    FallbackToolsetAvailable(String),
    /// A tool from `fallback_for_tools` is available, so the substitute is not needed.
    FallbackToolAvailable(String),
}

impl fmt::Display for InactiveReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Disabled => write!(f, "disabled in config"),
            Self::DisabledOnPlatform(platform) => write!(f, "disabled on {platform}"),
            Self::UnsupportedOs { platforms } => {
                write!(f, "only for {}", platforms.join(", "))
            }
            Self::MissingToolset(name) => write!(f, "needs toolset {name}"),
            Self::MissingTool(name) => write!(f, "needs tool {name}"),
            Self::FallbackToolsetAvailable(name) => {
                write!(f, "fallback not needed: toolset {name} is available")
            }
            Self::FallbackToolAvailable(name) => {
                write!(f, "fallback not needed: tool {name} is available")
            }
        }
    }
}

/// True when the skill is offered in the index for `ctx`.
pub fn is_active(entry: &SkillEntry, ctx: &ActivationContext<'_>) -> bool {
    activation(entry, ctx).is_ok()
}

/// `Ok` when the skill is offered for `ctx`, else the first reason it is not (checked in order:
/// disabled lists, OS platforms, fallback conditions, requirements).
pub fn activation(entry: &SkillEntry, ctx: &ActivationContext<'_>) -> Result<(), InactiveReason> {
    availability(entry, ctx)?;
    let conditions = &entry.conditions;
    if let Some(ts) = conditions
        .fallback_for_toolsets
        .iter()
        .find(|ts| ctx.available_toolsets.contains(*ts))
    {
        return Err(InactiveReason::FallbackToolsetAvailable(ts.clone()));
    }
    if let Some(tool) = conditions
        .fallback_for_tools
        .iter()
        .find(|t| ctx.available_tools.contains(*t))
    {
        return Err(InactiveReason::FallbackToolAvailable(tool.clone()));
    }
    if let Some(ts) = conditions
        .requires_toolsets
        .iter()
        .find(|ts| !ctx.available_toolsets.contains(*ts))
    {
        return Err(InactiveReason::MissingToolset(ts.clone()));
    }
    if let Some(tool) = conditions
        .requires_tools
        .iter()
        .find(|t| !ctx.available_tools.contains(*t))
    {
        return Err(InactiveReason::MissingTool(tool.clone()));
    }
    Ok(())
}

/// The subset of [`activation`] that Hermes applies to `skills_list` and `skill_view`: disabled
/// lists and OS platforms only. Tool conditions shape the index but do not hide a skill from an
/// explicit listing or load.
pub fn availability(entry: &SkillEntry, ctx: &ActivationContext<'_>) -> Result<(), InactiveReason> {
    let named = |list: &[String]| {
        list.iter()
            .any(|n| *n == entry.name || *n == entry.dir_name)
    };
    if named(ctx.disabled) {
        return Err(InactiveReason::Disabled);
    }
    if let Some(platform) = ctx.platform
        && ctx
            .platform_disabled
            .get(platform)
            .is_some_and(|list| named(list))
    {
        return Err(InactiveReason::DisabledOnPlatform(platform.to_owned()));
    }
    if !os_matches(&entry.platforms, ctx.os) {
        return Err(InactiveReason::UnsupportedOs {
            platforms: entry.platforms.clone(),
        });
    }
    Ok(())
}

/// Hermes' `skill_matches_platform`: an empty list fits every OS; `darwin`/`win32` are accepted
/// as aliases; on Android (Termux) `linux`, `android` and `termux` all fit.
fn os_matches(platforms: &[String], os: &str) -> bool {
    if platforms.is_empty() {
        return true;
    }
    platforms.iter().any(|platform| {
        let normalized = match platform.trim() {
            "darwin" | "osx" => "macos",
            "win32" | "win" => "windows",
            other => other,
        };
        normalized == os
            || (os == "android" && matches!(normalized, "linux" | "android" | "termux"))
    })
}
