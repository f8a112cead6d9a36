//! The wall clock in UTC, as sqb compares, prints and stores it. `SQB_NOW` (`YYYY-MM-DD` or
//! `YYYY-MM-DD HH:MM:SS`, UTC) stands in for it: for backfilling a drift history and for tests
//! (an unreadable value is ignored, with a warning in the log).

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
    let (y, m, d) = civil(secs.div_euclid(86_400));
    format!("{y:04}-{m:02}-{d:02}")
}

/// `YYYY-MM-DD HH:MM:SS` of a time.
pub fn timestamp(secs: i64) -> String {
    let rest = secs.rem_euclid(86_400);
    format!(
        "{} {:02}:{:02}:{:02}",
        date(secs),
        rest / 3_600,
        rest % 3_600 / 60,
        rest % 60
    )
}

/// Seconds since the epoch of `YYYY-MM-DD` or `YYYY-MM-DD HH:MM:SS` (UTC).
pub fn parse(text: &str) -> Option<i64> {
    let (day, time) = match text.trim().split_once([' ', 'T']) {
        Some((d, t)) => (d, Some(t.trim_end_matches('Z'))),
        None => (text.trim(), None),
    };
    let mut parts = day.splitn(3, '-').map(|p| p.parse::<i64>().ok());
    let (y, m, d) = (parts.next()??, parts.next()??, parts.next()??);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || day.len() != 10 {
        return None;
    }
    let days = days_from_civil(y, m, d);
    if date(days * 86_400) != day {
        return None; // 2026-02-30
    }
    let secs = match time {
        None => 0,
        Some(t) => {
            let mut hms = t.splitn(3, ':').map(|p| p.parse::<i64>().ok());
            let (h, mi, s) = (hms.next()??, hms.next()??, hms.next().unwrap_or(Some(0))?);
            if h > 23 || mi > 59 || s > 59 {
                return None;
            }
            h * 3_600 + mi * 60 + s
        }
    };
    Some(days * 86_400 + secs)
}

/// Howard Hinnant's days-to-civil: the date `days` after 1970-01-01.
fn civil(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// Its inverse: days from 1970-01-01 to a date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
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
        for bad in [
            "2026-02-30",
            "2026-13-01",
            "yesterday",
            "2026-12-01 25:00:00",
            "2026-1-1",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }
}
