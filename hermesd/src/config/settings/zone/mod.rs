//! Time zones by IANA name: the configured `timezone`, a cron job's own zone, and this machine's.
//!
//! A zone is read from the system tz database (`TZDIR`, else `/usr/share/zoneinfo` and the other
//! usual places), as Python's `zoneinfo` reads it, instead of tables compiled into the binary:
//! compiled tables cost 1.4 MiB of relocated, dirty pages in every idle daemon. Each name is
//! loaded once and kept for the life of the process (a tz database has a bounded number of
//! zones, about 600), which makes [`Zone`] a `Copy` handle like the type it replaces.

mod offset;

use std::{
    collections::HashMap,
    fmt,
    path::PathBuf,
    sync::{Mutex, OnceLock},
};

pub use offset::ZoneOffset;

/// One zone of the tz database, loaded once.
pub struct Loaded {
    name: String,
    rules: tz::TimeZone,
}

/// A time zone: a cheap handle to zone rules loaded once for the process.
#[derive(Clone, Copy)]
pub struct Zone(&'static Loaded);

impl Zone {
    /// Coordinated Universal Time, which needs no database.
    pub fn utc() -> Self {
        static UTC: OnceLock<Loaded> = OnceLock::new();
        Zone(UTC.get_or_init(|| Loaded {
            name: "UTC".to_owned(),
            rules: tz::TimeZone::utc(),
        }))
    }

    /// The zone's IANA name, as it was asked for.
    pub fn name(self) -> &'static str {
        &self.0.name
    }

    fn rules(self) -> &'static tz::TimeZone {
        &self.0.rules
    }
}

impl PartialEq for Zone {
    fn eq(&self, other: &Self) -> bool {
        self.0.name == other.0.name
    }
}

impl Eq for Zone {}

impl fmt::Debug for Zone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for Zone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The most distinct names the process keeps: more than any tz database holds.
const MAX_ZONES: usize = 4_096;

/// The zone an IANA name such as `Europe/Berlin` or `UTC` names (surrounding blanks ignored);
/// `None` when the name is not a zone of this machine's tz database.
pub fn parse_zone(name: &str) -> Option<Zone> {
    let name = name.trim();
    if name == "UTC" {
        return Some(Zone::utc());
    }
    if !is_zone_name(name) {
        return None;
    }
    static LOADED: OnceLock<Mutex<HashMap<String, Zone>>> = OnceLock::new();
    let mut loaded = LOADED
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(zone) = loaded.get(name) {
        return Some(*zone);
    }
    if loaded.len() >= MAX_ZONES {
        return None;
    }
    let rules = zone_dirs()
        .into_iter()
        .find_map(|dir| std::fs::read(dir.join(name)).ok())
        .and_then(|bytes| tz::TimeZone::from_tz_data(&bytes).ok())?;
    let zone = Zone(Box::leak(Box::new(Loaded {
        name: name.to_owned(),
        rules,
    })));
    loaded.insert(name.to_owned(), zone);
    Some(zone)
}

/// A name shaped like a tz database entry (`Area/Location`, `Etc/GMT+5`, `EST5EDT`): never a
/// path that leaves the database, nor a POSIX rule string.
fn is_zone_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name.split('/').all(|part| {
            !part.is_empty()
                && !part.starts_with('.')
                && part
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'+' | b'.'))
        })
}

/// Where tz databases live: `TZDIR` when set, else the usual system places.
fn zone_dirs() -> Vec<PathBuf> {
    match std::env::var_os("TZDIR") {
        Some(dir) if !dir.is_empty() => vec![PathBuf::from(dir)],
        _ => [
            "/usr/share/zoneinfo",
            "/usr/lib/zoneinfo",
            "/usr/share/lib/zoneinfo",
            "/etc/zoneinfo",
        ]
        .into_iter()
        .map(PathBuf::from)
        .collect(),
    }
}

/// What a notice or an error says about a name that is not a zone.
pub const ZONE_HINT: &str = "use an IANA name such as \"Europe/Berlin\", \"America/New_York\" or \
                             \"UTC\" (zones are read from the system tz database: install tzdata)";

/// The zone of this machine: `TZ` when it names an IANA zone, else the system setting, else UTC.
pub fn system_zone() -> Zone {
    std::env::var("TZ")
        .ok()
        .and_then(|tz| parse_zone(tz.trim_start_matches(':')))
        .or_else(|| {
            iana_time_zone::get_timezone()
                .ok()
                .and_then(|tz| parse_zone(&tz))
        })
        .unwrap_or_else(Zone::utc)
}

#[cfg(test)]
mod tests;
