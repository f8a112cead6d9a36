//! The plain data a read-only statement returns (the warehouse decodes both engines to it): exact
//! decimals stay decimal text, integers stay integers, dates and times are ISO 8601.

/// One statement to run: its SQL and the values bound to `$1`, `$2`, … (as text).
#[derive(Debug, Clone, PartialEq)]
pub struct Statement {
    pub sql: String,
    pub params: Vec<String>,
}

/// One value of a result.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Null,
    Bool(bool),
    Int(i128),
    /// An exact decimal, as plain digits (`-12.50`): never through a float.
    Decimal(String),
    Float(f64),
    Text(String),
    /// `2026-04-01`.
    Date(String),
    /// `2026-04-01T08:30:00`, with a trailing `Z` for an instant (TIMESTAMPTZ, in UTC).
    Timestamp(String),
}

impl Cell {
    /// The value as text, the way CSV and the text table show it (NULL is empty).
    pub fn display(&self) -> String {
        match self {
            Cell::Null => String::new(),
            Cell::Bool(b) => b.to_string(),
            Cell::Int(i) => i.to_string(),
            Cell::Float(f) => f.to_string(),
            Cell::Decimal(s) | Cell::Text(s) | Cell::Date(s) | Cell::Timestamp(s) => s.clone(),
        }
    }
}

/// An output column: its name and the engine's name of its type.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub name: String,
    pub type_name: String,
}

/// A statement's result.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Rows {
    pub columns: Vec<Column>,
    pub rows: Vec<Vec<Cell>>,
}

/// A date from days since 1970-01-01.
pub fn date_from_days(days: i64) -> Option<String> {
    let epoch = chrono::NaiveDate::from_ymd_opt(1970, 1, 1)?;
    let date = epoch.checked_add_signed(chrono::TimeDelta::try_days(days)?)?;
    Some(date.format("%Y-%m-%d").to_string())
}

/// A date-time from microseconds since 1970-01-01 00:00:00; `instant` adds the `Z` of UTC.
pub fn timestamp_from_micros(micros: i64, instant: bool) -> Option<String> {
    let at = chrono::DateTime::from_timestamp_micros(micros)?.naive_utc();
    Some(format_timestamp(&at, instant))
}

pub fn format_timestamp(at: &chrono::NaiveDateTime, instant: bool) -> String {
    let mut text = at.format("%Y-%m-%dT%H:%M:%S%.f").to_string();
    if instant {
        text.push('Z');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_times_are_iso() {
        assert_eq!(date_from_days(0).unwrap(), "1970-01-01");
        assert_eq!(date_from_days(20543).unwrap(), "2026-03-31");
        assert_eq!(
            timestamp_from_micros(1_775_001_600_000_000, false).unwrap(),
            "2026-04-01T00:00:00"
        );
        assert_eq!(
            timestamp_from_micros(1_775_001_600_500_000, true).unwrap(),
            "2026-04-01T00:00:00.500Z"
        );
    }
}
