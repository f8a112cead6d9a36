//! The wall clock in UTC, as sqb compares, prints and stores it. `SQB_NOW` (`YYYY-MM-DD` or
//! `YYYY-MM-DD HH:MM:SS`, UTC) stands in for it: for backfilling a drift history and for tests
//! (an unreadable value is ignored, with a warning in the log). Calendar arithmetic is chrono's.

use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime};

/// Seconds since the Unix epoch, now.
pub fn now_secs() -> i64 {
    if let Ok(text) = std::env::var("SQB_NOW") {
        match parse(&text) {
            Some(secs) => return secs,
            None => tracing::warn!("SQB_NOW={text:?} is not YYYY-MM-DD[ HH:MM:SS]: ignored"),
        }
    }
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// `YYYY-MM-DD`, today.
pub fn today() -> String {
    date(now_secs())
}

/// `YYYY-MM-DD HH:MM:SS`, now.
pub fn now() -> String {
    timestamp(now_secs())
}

/// `YYYY-MM-DD` of a time.
pub fn date(secs: i64) -> String {
    utc(secs).format("%Y-%m-%d").to_string()
}

/// `YYYY-MM-DD HH:MM:SS` of a time.
pub fn timestamp(secs: i64) -> String {
    utc(secs).format("%Y-%m-%d %H:%M:%S").to_string()
}

/// The UTC time `secs` after the epoch (the epoch itself for one out of chrono's range).
fn utc(secs: i64) -> NaiveDateTime {
    DateTime::from_timestamp(secs, 0)
        .unwrap_or_default()
        .naive_utc()
}

/// Seconds since the epoch of `YYYY-MM-DD` or `YYYY-MM-DD HH:MM[:SS]` (UTC; a `T` may stand for
/// the space, and a `Z` may end it).
pub fn parse(text: &str) -> Option<i64> {
    let text = text.trim();
    let (day, time) = match text.split_once([' ', 'T']) {
        Some((d, t)) => (d, Some(t.trim_end_matches('Z'))),
        None => (text, None),
    };
    // chrono reads `2026-1-1` too; sqb's dates are always written in full.
    if day.len() != 10 {
        return None;
    }
    let date = NaiveDate::parse_from_str(day, "%Y-%m-%d").ok()?;
    let time = match time {
        None => NaiveTime::MIN,
        Some(t) => NaiveTime::parse_from_str(t, "%H:%M:%S")
            .or_else(|_| NaiveTime::parse_from_str(t, "%H:%M"))
            .ok()?,
    };
    Some(date.and_time(time).and_utc().timestamp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_round_trip() {
        for secs in [0, 951_782_400, 1_764_547_200 + 86_399, -86_400] {
            assert_eq!(parse(&timestamp(secs)), Some(secs), "{}", timestamp(secs));
        }
        assert_eq!(timestamp(0), "1970-01-01 00:00:00");
        assert_eq!(parse("2026-12-01"), Some(1_796_083_200));
        assert_eq!(parse("2026-12-01T02:00:00Z"), Some(1_796_083_200 + 7_200));
        assert_eq!(parse(" 2026-12-01 02:30 "), Some(1_796_083_200 + 9_000));
        for bad in [
            "2026-02-30",
            "2026-13-01",
            "yesterday",
            "2026-12-01 25:00:00",
            "2026-1-1",
            "2026-12-01 12:60:00",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }
}
