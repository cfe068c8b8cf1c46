use chrono::{DateTime, MappedLocalTime, NaiveDate, Offset, TimeZone, Utc};

use super::{Zone, parse_zone};

fn zone(name: &str) -> Zone {
    parse_zone(name).unwrap_or_else(|| panic!("{name} is not in this machine's tz database"))
}

fn wall(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> chrono::NaiveDateTime {
    NaiveDate::from_ymd_opt(y, mo, d)
        .and_then(|day| day.and_hms_opt(h, mi, 0))
        .unwrap()
}

#[test]
fn names_are_loaded_once_and_compare_by_name() {
    let berlin = zone(" Europe/Berlin ");
    assert_eq!(berlin, zone("Europe/Berlin"));
    assert!(std::ptr::eq(berlin.0, zone("Europe/Berlin").0));
    assert_eq!(berlin.to_string(), "Europe/Berlin");
    assert_eq!(zone("UTC"), Zone::utc());
    assert_ne!(berlin, Zone::utc());
}

#[test]
fn a_name_outside_the_database_is_no_zone() {
    for name in [
        "Mars/Base",
        "",
        "../../etc/passwd",
        "/etc/localtime",
        "Europe/../../../etc/passwd",
        "EST5EDT,M3.2.0,M11.1.0",
        ":Europe/Berlin",
        "Europe//Berlin",
        "Europe",
    ] {
        assert_eq!(parse_zone(name), None, "{name:?}");
    }
}

#[test]
fn the_abbreviation_is_what_percent_z_prints() {
    let berlin = zone("Europe/Berlin");
    let winter = DateTime::<Utc>::from_timestamp(1_796_000_000, 0).unwrap(); // 2026-11-30
    let summer = DateTime::<Utc>::from_timestamp(1_783_000_000, 0).unwrap(); // 2026-07-02
    assert_eq!(
        winter
            .with_timezone(&berlin)
            .format("%H %Z %z")
            .to_string()
            .split(' ')
            .nth(1),
        Some("CET")
    );
    assert_eq!(
        summer
            .with_timezone(&berlin)
            .offset()
            .fix()
            .local_minus_utc(),
        7_200
    );
    assert_eq!(
        summer.with_timezone(&berlin).format("%Z").to_string(),
        "CEST"
    );
}

#[test]
fn a_wall_time_in_a_gap_is_none_and_in_an_overlap_is_two() {
    let berlin = zone("Europe/Berlin");
    assert_eq!(
        berlin.from_local_datetime(&wall(2026, 3, 29, 2, 30)),
        MappedLocalTime::None
    );
    let MappedLocalTime::Ambiguous(first, second) =
        berlin.from_local_datetime(&wall(2026, 10, 25, 2, 30))
    else {
        panic!("02:30 on the fall-back night is two instants in Berlin");
    };
    assert_eq!(first.offset().fix().local_minus_utc(), 7_200);
    assert_eq!(second.offset().fix().local_minus_utc(), 3_600);
    assert_eq!((second - first).num_hours(), 1);
    // Samoa skipped 2011-12-30 whole; Lord Howe moves by half an hour.
    assert_eq!(
        zone("Pacific/Apia").from_local_datetime(&wall(2011, 12, 30, 12, 0)),
        MappedLocalTime::None
    );
    assert!(matches!(
        zone("Australia/Lord_Howe").from_local_datetime(&wall(2026, 4, 5, 1, 45)),
        MappedLocalTime::Ambiguous(..)
    ));
}

/// Every zone both know, every three days from 2000 to 2035, and every hour of the wall clock of
/// the zones with unusual rules from 2020 to 2030, agree with chrono-tz's compiled tables.
#[test]
fn zones_agree_with_compiled_tables() {
    let mut checked = 0;
    for compiled in chrono_tz::TZ_VARIANTS {
        let Some(ours) = parse_zone(compiled.name()) else {
            continue;
        };
        let mut t = 946_684_800; // 2000-01-01
        while t < 2_082_758_400 {
            let utc = DateTime::<Utc>::from_timestamp(t, 0).unwrap().naive_utc();
            assert_eq!(
                ours.offset_from_utc_datetime(&utc).fix(),
                compiled.offset_from_utc_datetime(&utc).fix(),
                "{} at {utc}",
                compiled.name()
            );
            t += 3 * 86_400;
        }
        checked += 1;
    }
    assert!(
        checked > 400,
        "only {checked} zones found in the system tz database"
    );
    for name in [
        "Europe/Berlin",
        "America/New_York",
        "Australia/Lord_Howe",
        "Pacific/Chatham",
        "America/Santiago",
        "Asia/Tehran",
        "Africa/Casablanca",
        "America/St_Johns",
    ] {
        let ours = zone(name);
        let compiled: chrono_tz::Tz = name.parse().unwrap();
        let mut t = 1_577_836_800; // 2020-01-01
        while t < 1_893_456_000 {
            let local = DateTime::<Utc>::from_timestamp(t, 0).unwrap().naive_utc();
            let mine = ours
                .from_local_datetime(&local)
                .map(|at| at.with_timezone(&Utc));
            let theirs = compiled
                .from_local_datetime(&local)
                .map(|at| at.with_timezone(&Utc));
            assert_eq!(mine, theirs, "{name} at wall time {local}");
            t += 1_800;
        }
    }
}
