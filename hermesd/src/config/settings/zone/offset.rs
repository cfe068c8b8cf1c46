//! chrono's view of a [`Zone`]: the offset in effect at an instant, and the offsets a wall-clock
//! time may have (none in a spring-forward gap, two in a fall-back overlap).

use std::fmt;

use chrono::{FixedOffset, MappedLocalTime, NaiveDate, NaiveDateTime, Offset, TimeZone, Utc};

use super::Zone;

/// The offset of a zone at one instant, with its abbreviation (`CET`, `EDT`).
#[derive(Clone, Copy)]
pub struct ZoneOffset {
    zone: Zone,
    kind: &'static tz::LocalTimeType,
}

impl ZoneOffset {
    fn seconds(&self) -> i32 {
        self.kind.ut_offset()
    }
}

impl Offset for ZoneOffset {
    fn fix(&self) -> FixedOffset {
        FixedOffset::east_opt(self.seconds()).unwrap_or(Utc.fix())
    }
}

impl fmt::Debug for ZoneOffset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.kind.time_zone_designation(), self.fix())
    }
}

/// The abbreviation, which is what `%Z` prints.
impl fmt::Display for ZoneOffset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.kind.time_zone_designation())
    }
}

/// The type in effect when no rule covers an instant (never for a well-formed zone file).
fn utc_kind() -> &'static tz::LocalTimeType {
    static UTC: tz::LocalTimeType = tz::LocalTimeType::utc();
    &UTC
}

impl Zone {
    /// The offset in effect at `unix_time` seconds.
    fn offset_at(self, unix_time: i64) -> ZoneOffset {
        let kind = self
            .rules()
            .find_local_time_type(unix_time)
            .unwrap_or_else(|_| utc_kind());
        ZoneOffset { zone: self, kind }
    }
}

const DAY: i64 = 86_400;

impl TimeZone for Zone {
    type Offset = ZoneOffset;

    fn from_offset(offset: &ZoneOffset) -> Self {
        offset.zone
    }

    fn offset_from_local_date(&self, local: &NaiveDate) -> MappedLocalTime<ZoneOffset> {
        match local.and_hms_opt(0, 0, 0) {
            Some(midnight) => self.offset_from_local_datetime(&midnight),
            None => MappedLocalTime::None,
        }
    }

    /// The offsets under which `local` is a real time: every offset that holds a day either side
    /// is tried (zones change offset at most once in two days, by less than a day).
    fn offset_from_local_datetime(&self, local: &NaiveDateTime) -> MappedLocalTime<ZoneOffset> {
        let wall = local.and_utc().timestamp();
        // Each candidate offset, resolved at the instant it would make `local`; it fits when the
        // zone has that offset there.
        let resolve = |guess: ZoneOffset| {
            let at = self.offset_at(wall - i64::from(guess.seconds()));
            (at.seconds() == guess.seconds()).then_some(at)
        };
        let before = resolve(self.offset_at(wall - DAY));
        let after = resolve(self.offset_at(wall + DAY));
        match (before, after) {
            (Some(a), Some(b)) if a.seconds() != b.seconds() => {
                // The larger offset is the earlier instant: the first pass of the wall time.
                if a.seconds() > b.seconds() {
                    MappedLocalTime::Ambiguous(a, b)
                } else {
                    MappedLocalTime::Ambiguous(b, a)
                }
            }
            (Some(one), _) | (None, Some(one)) => MappedLocalTime::Single(one),
            (None, None) => MappedLocalTime::None,
        }
    }

    fn offset_from_utc_date(&self, utc: &NaiveDate) -> ZoneOffset {
        match utc.and_hms_opt(0, 0, 0) {
            Some(midnight) => self.offset_from_utc_datetime(&midnight),
            None => self.offset_at(0),
        }
    }

    fn offset_from_utc_datetime(&self, utc: &NaiveDateTime) -> ZoneOffset {
        self.offset_at(utc.and_utc().timestamp())
    }
}
