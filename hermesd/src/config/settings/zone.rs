//! Time zones by IANA name: the configured `timezone`, a cron job's own zone, and this machine's.

use chrono_tz::Tz;

/// The zone an IANA name such as `Europe/Berlin` or `UTC` names (surrounding blanks ignored).
pub fn parse_zone(name: &str) -> Option<Tz> {
    name.trim().parse::<Tz>().ok()
}

/// What a notice or an error says about a name that is not a zone.
pub const ZONE_HINT: &str =
    "use an IANA name such as \"Europe/Berlin\", \"America/New_York\" or \"UTC\"";

/// The zone of this machine: `TZ` when it names an IANA zone, else the system setting, else UTC.
pub fn system_zone() -> Tz {
    std::env::var("TZ")
        .ok()
        .and_then(|tz| parse_zone(tz.trim_start_matches(':')))
        .or_else(|| {
            iana_time_zone::get_timezone()
                .ok()
                .and_then(|tz| parse_zone(&tz))
        })
        .unwrap_or(Tz::UTC)
}
