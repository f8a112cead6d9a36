//! An assertion's expected answer compared with the rows its query returned: the row count,
//! keyed rows matched by their dimension values whatever their order, each value in exact
//! decimal arithmetic within the tolerance, NULL only where `{ null = true }` says so.
//!
//! Pure: data in, findings out.

use std::str::FromStr;

use bigdecimal::{BigDecimal, Zero as _};

use crate::project::contracts::{Expect, ExpectRow, Expected, Tolerance};
use crate::rows::{Cell, Rows};
use crate::source::Loc;

/// One way the answer differs from the expectation.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    /// Where the expectation is written.
    pub loc: Loc,
    pub message: String,
    pub expected: String,
    pub actual: String,
}

/// Every difference between `rows` and `expect`; none when the assertion passes.
/// `dimensions` are the query's dimension columns: the key of a `[[expect.rows]]` row.
pub fn compare(expect: &Expect, dimensions: &[String], rows: &Rows) -> Vec<Mismatch> {
    let mut out = Vec::new();
    let tolerance = expect.tolerance.as_ref().map(|t| t.value);
    if let Some(count) = &expect.row_count {
        let actual = rows.rows.len() as i64;
        if actual != count.value {
            out.push(Mismatch {
                loc: count.loc.clone(),
                message: "the number of rows differs".into(),
                expected: count.value.to_string(),
                actual: actual.to_string(),
            });
        }
    }
    if let Some(values) = &expect.values {
        match rows.rows.first() {
            Some(first) => cells(values, rows, first, tolerance, "the first row", &mut out),
            None => out.push(Mismatch {
                loc: values.loc.clone(),
                message: "the query returned no row".into(),
                expected: "a row".into(),
                actual: "none".into(),
            }),
        }
    }
    if !expect.rows.is_empty() {
        keyed(expect, dimensions, rows, tolerance, &mut out);
    }
    out
}

/// `[[expect.rows]]`: exactly these rows, each found by its dimension values.
fn keyed(
    expect: &Expect,
    dimensions: &[String],
    rows: &Rows,
    tolerance: Option<Tolerance>,
    out: &mut Vec<Mismatch>,
) {
    let mut matched = vec![false; rows.rows.len()];
    for row in &expect.rows {
        let key: Vec<&(
            crate::source::Spanned<String>,
            crate::source::Spanned<Expected>,
        )> = row
            .cells
            .iter()
            .filter(|(k, _)| dimensions.iter().any(|d| d == &k.value))
            .collect();
        let found = rows.rows.iter().enumerate().position(|(i, actual)| {
            !matched[i]
                && key.iter().all(|(k, v)| {
                    column(rows, &k.value)
                        .is_some_and(|c| same(&v.value, &actual[c], None).unwrap_or(false))
                })
        });
        let shown = describe_key(&key);
        match found {
            Some(i) => {
                matched[i] = true;
                cells(row, rows, &rows.rows[i], tolerance, &shown, out);
            }
            None => out.push(Mismatch {
                loc: row.loc.clone(),
                message: format!("no row has {shown}"),
                expected: "a row".into(),
                actual: "none".into(),
            }),
        }
    }
    for (i, row) in rows.rows.iter().enumerate() {
        if matched[i] {
            continue;
        }
        let key: Vec<String> = dimensions
            .iter()
            .filter_map(|d| column(rows, d).map(|c| format!("{d} = {}", shown(&row[c]))))
            .collect();
        out.push(Mismatch {
            loc: expect.loc.clone(),
            message: format!("an unexpected row: {}", key.join(", ")),
            expected: "no such row".into(),
            actual: "a row".into(),
        });
    }
}

fn describe_key(
    key: &[&(
        crate::source::Spanned<String>,
        crate::source::Spanned<Expected>,
    )],
) -> String {
    match key.is_empty() {
        true => "the one row".into(),
        false => key
            .iter()
            .map(|(k, v)| format!("{} = {}", k.value, expected_text(&v.value)))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// Each expected cell of `row` against the actual row.
fn cells(
    row: &ExpectRow,
    rows: &Rows,
    actual: &[Cell],
    tolerance: Option<Tolerance>,
    at: &str,
    out: &mut Vec<Mismatch>,
) {
    for (name, expected) in &row.cells {
        let Some(c) = column(rows, &name.value) else {
            out.push(Mismatch {
                loc: name.loc.clone(),
                message: format!("the result has no column `{}`", name.value),
                expected: expected_text(&expected.value),
                actual: "no column".into(),
            });
            continue;
        };
        let cell = &actual[c];
        let ok = same(&expected.value, cell, tolerance);
        if ok != Some(true) {
            out.push(Mismatch {
                loc: expected.loc.clone(),
                message: match ok {
                    None => format!("`{}` of {at} is not comparable", name.value),
                    Some(_) => format!("`{}` of {at} differs", name.value),
                },
                expected: expected_text(&expected.value),
                actual: shown(cell),
            });
        }
    }
}

fn column(rows: &Rows, name: &str) -> Option<usize> {
    rows.columns.iter().position(|c| c.name == name)
}

/// Whether the actual value is the expected one (within the tolerance, for numbers); `None`
/// when they cannot be compared (a number against a date).
fn same(expected: &Expected, actual: &Cell, tolerance: Option<Tolerance>) -> Option<bool> {
    match (expected, actual) {
        (Expected::Null, Cell::Null) => Some(true),
        (Expected::Null, _) | (_, Cell::Null) => Some(false),
        (Expected::Bool(e), Cell::Bool(a)) => Some(e == a),
        (e, Cell::Int(_) | Cell::Decimal(_) | Cell::Float(_)) => {
            let expected = expected_number(e)?;
            let actual = number(actual)?;
            Some(within(&expected, &actual, tolerance))
        }
        (Expected::Text(e) | Expected::Temporal(e), Cell::Date(_) | Cell::Timestamp(_)) => {
            Some(instant(e)? == instant(&actual.display())?)
        }
        (Expected::Text(e), Cell::Text(a)) => Some(e == a),
        _ => None,
    }
}

fn within(expected: &BigDecimal, actual: &BigDecimal, tolerance: Option<Tolerance>) -> bool {
    let diff = (actual - expected).abs();
    match tolerance {
        None => diff.is_zero(),
        Some(Tolerance::Absolute(t)) => {
            BigDecimal::from_str(&t.to_string()).is_ok_and(|t| diff <= t)
        }
        Some(Tolerance::Relative(t)) => {
            BigDecimal::from_str(&t.to_string()).is_ok_and(|t| diff <= t * expected.abs())
        }
    }
}

fn expected_number(e: &Expected) -> Option<BigDecimal> {
    match e {
        Expected::Integer(i) => Some(BigDecimal::from(*i)),
        Expected::Float(f) if f.is_finite() => BigDecimal::from_str(&f.to_string()).ok(),
        Expected::Text(t) => BigDecimal::from_str(t.trim()).ok(),
        _ => None,
    }
}

fn number(cell: &Cell) -> Option<BigDecimal> {
    match cell {
        Cell::Int(i) => BigDecimal::from_str(&i.to_string()).ok(),
        Cell::Decimal(d) => BigDecimal::from_str(d).ok(),
        // The shortest text that reads back as the same double: what a person would write.
        Cell::Float(f) if f.is_finite() => BigDecimal::from_str(&f.to_string()).ok(),
        _ => None,
    }
}

/// A date or date-time as a UTC wall time: a date is its midnight, `Z` or an offset is
/// converted, a bare date-time is taken as written.
fn instant(text: &str) -> Option<chrono::NaiveDateTime> {
    let text = text.trim();
    if let Ok(d) = chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        return d.and_hms_opt(0, 0, 0);
    }
    if let Ok(at) = chrono::DateTime::parse_from_rfc3339(&text.replacen(' ', "T", 1)) {
        return Some(at.naive_utc());
    }
    let bare = text.trim_end_matches('Z').replacen(' ', "T", 1);
    chrono::NaiveDateTime::parse_from_str(&bare, "%Y-%m-%dT%H:%M:%S%.f").ok()
}

/// For additive metrics: in every group (by the dimension columns), the unscoped value is the
/// sum of the tenants' values. Each group where it is not: what differs, the unscoped total
/// (expected) and the sum over the tenants (actual).
pub fn sums_over_tenants(
    total: &Rows,
    tenants: &[(String, Rows)],
    dimensions: &[String],
    metrics: &[String],
) -> Vec<(String, String, String)> {
    let key = |rows: &Rows, row: &[Cell]| -> Vec<String> {
        dimensions
            .iter()
            .map(|d| column(rows, d).map_or(String::new(), |c| shown(&row[c])))
            .collect()
    };
    let mut out = Vec::new();
    for metric in metrics {
        let Some(mc) = column(total, metric) else {
            continue;
        };
        let mut keys: Vec<Vec<String>> = total.rows.iter().map(|r| key(total, r)).collect();
        for (_, rows) in tenants {
            for r in &rows.rows {
                let k = key(rows, r);
                if !keys.contains(&k) {
                    keys.push(k);
                }
            }
        }
        for k in keys {
            let value_in = |rows: &Rows| -> Option<BigDecimal> {
                let c = column(rows, metric)?;
                rows.rows
                    .iter()
                    .find(|r| key(rows, r) == k)
                    .and_then(|r| number(&r[c]))
            };
            let expected = total
                .rows
                .iter()
                .find(|r| key(total, r) == k)
                .and_then(|r| number(&r[mc]))
                .unwrap_or_default();
            let sum: BigDecimal = tenants
                .iter()
                .filter_map(|(_, rows)| value_in(rows))
                .fold(BigDecimal::zero(), |a, b| a + b);
            if sum != expected {
                let names: Vec<&str> = tenants.iter().map(|(t, _)| t.as_str()).collect();
                let group = match k.iter().all(String::is_empty) {
                    true => String::new(),
                    false => format!(" where {}", describe_group(dimensions, &k)),
                };
                out.push((
                    format!(
                        "`{metric}`{group}: the sum over tenants {} is not the unscoped total",
                        names.join(", ")
                    ),
                    expected.normalized().to_string(),
                    sum.normalized().to_string(),
                ));
            }
        }
    }
    out
}

fn describe_group(dimensions: &[String], key: &[String]) -> String {
    dimensions
        .iter()
        .zip(key)
        .map(|(d, v)| format!("{d} = {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn expected_text(e: &Expected) -> String {
    match e {
        Expected::Null => "NULL".into(),
        Expected::Bool(b) => b.to_string(),
        Expected::Integer(i) => i.to_string(),
        Expected::Float(f) => f.to_string(),
        Expected::Text(t) => format!("\"{t}\""),
        Expected::Temporal(t) => t.clone(),
    }
}

fn shown(cell: &Cell) -> String {
    match cell {
        Cell::Null => "NULL".into(),
        Cell::Text(t) => format!("\"{t}\""),
        other => other.display(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_compare_exactly_or_within_the_tolerance() {
        let e = Expected::Text("210.49".into());
        assert_eq!(same(&e, &Cell::Decimal("210.490".into()), None), Some(true));
        assert_eq!(same(&e, &Cell::Decimal("210.48".into()), None), Some(false));
        let abs = Some(Tolerance::Absolute(0.005));
        assert_eq!(same(&e, &Cell::Decimal("210.494".into()), abs), Some(true));
        assert_eq!(same(&e, &Cell::Decimal("210.496".into()), abs), Some(false));
        let rel = Some(Tolerance::Relative(0.01));
        assert_eq!(
            same(&Expected::Integer(100), &Cell::Float(100.9), rel),
            Some(true)
        );
        assert_eq!(
            same(&Expected::Integer(100), &Cell::Float(101.1), rel),
            Some(false)
        );
        // 0.1 + 0.2 is not 0.3 in floats; exact decimals never drift.
        assert_eq!(
            same(
                &Expected::Text("0.3".into()),
                &Cell::Decimal("0.30".into()),
                None
            ),
            Some(true)
        );
    }

    #[test]
    fn nulls_match_only_nulls() {
        assert_eq!(same(&Expected::Null, &Cell::Null, None), Some(true));
        assert_eq!(same(&Expected::Null, &Cell::Int(0), None), Some(false));
        assert_eq!(same(&Expected::Integer(0), &Cell::Null, None), Some(false));
    }

    #[test]
    fn dates_and_instants_compare_as_utc_wall_times() {
        let april = Expected::Temporal("2026-04-01".into());
        assert_eq!(
            same(
                &april,
                &Cell::Timestamp("2026-04-01T00:00:00Z".into()),
                None
            ),
            Some(true)
        );
        assert_eq!(
            same(&april, &Cell::Date("2026-04-01".into()), None),
            Some(true)
        );
        let at = Expected::Temporal("2026-04-01T02:00:00+02:00".into());
        assert_eq!(
            same(&at, &Cell::Timestamp("2026-04-01T00:00:00Z".into()), None),
            Some(true)
        );
        assert_eq!(same(&april, &Cell::Int(1), None), None);
    }
}
