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

/// A humane duration in seconds: one or more `<number><unit>` parts (`30d`, `1w`, `12h`,
/// `1w2d`, `90 minutes`), units `s`, `m`/`min`, `h`, `d`, `w` and their spelled-out forms.
/// `None` for anything else (months and years have no fixed length).
pub fn duration_secs(text: &str) -> Option<i64> {
    let mut rest = text.trim();
    let mut total: i64 = 0;
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let number: i64 = rest[..digits].parse().ok()?;
        rest = rest[digits..].trim_start();
        let letters = rest
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(rest.len());
        let unit = match rest[..letters].to_ascii_lowercase().as_str() {
            "s" | "sec" | "secs" | "second" | "seconds" => 1,
            "m" | "min" | "mins" | "minute" | "minutes" => 60,
            "h" | "hr" | "hrs" | "hour" | "hours" => 3_600,
            "d" | "day" | "days" => 86_400,
            "w" | "week" | "weeks" => 604_800,
            _ => return None,
        };
        total = total.checked_add(number.checked_mul(unit)?)?;
        rest = rest[letters..].trim_start();
    }
    Some(total)
}

#[cfg(test)]
mod duration_tests {
    use super::duration_secs;

    #[test]
    fn humane_durations_are_read_and_odd_ones_refused() {
        assert_eq!(duration_secs("30d"), Some(30 * 86_400));
        assert_eq!(duration_secs("1w"), Some(604_800));
        assert_eq!(duration_secs("1w2d"), Some(604_800 + 2 * 86_400));
        assert_eq!(duration_secs("12h"), Some(43_200));
        assert_eq!(duration_secs("90 minutes"), Some(5_400));
        assert_eq!(duration_secs("2 weeks"), Some(1_209_600));
        for bad in ["", "d", "3", "1mo", "1y", "-1d", "1.5d", "2026-11-01"] {
            assert_eq!(duration_secs(bad), None, "{bad}");
        }
        assert_eq!(duration_secs("99999999999999999w"), None);
    }
}
