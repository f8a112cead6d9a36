//! Exact decimals from Postgres keep the scale the server prints: a `numeric(p,s)` value, and
//! a sum of such values, read through sqb's warehouse session equal psql's text of them, digit
//! for digit (`2328.60`, never `2328.6000`). A property test on the real server.

mod common;

use proptest::prelude::*;
use sqb::engine::Engine;
use sqb::rows::{Cell, Statement};
use sqb::warehouse::session::{run, Connect};
use sqb::warehouse::Timeouts;

fn connect(url: &str) -> Connect {
    let timeouts = Timeouts {
        connect: std::time::Duration::from_secs(10),
        statement: std::time::Duration::from_secs(30),
    };
    Connect::new(
        Engine::Postgres,
        Some(url.to_string()),
        Default::default(),
        timeouts,
    )
    .unwrap()
}

/// A numeric type and literal values of it: `(precision, scale, [digits])`.
fn case() -> impl Strategy<Value = (u32, u32, Vec<(bool, u64, u64)>)> {
    (1u32..=28).prop_flat_map(|precision| {
        (0..=precision.min(12)).prop_flat_map(move |scale| {
            let int_digits = precision - scale;
            let int_max = 10u64.saturating_pow(int_digits.min(15)).saturating_sub(1);
            let frac_max = 10u64.pow(scale).saturating_sub(1);
            (
                Just(precision),
                Just(scale),
                prop::collection::vec((any::<bool>(), 0..=int_max, 0..=frac_max), 1..6),
            )
        })
    })
}

fn literal(scale: u32, (negative, int, frac): (bool, u64, u64)) -> String {
    let sign = if negative { "-" } else { "" };
    match scale {
        0 => format!("{sign}{int}"),
        s => format!("{sign}{int}.{frac:0width$}", width = s as usize),
    }
}

#[test]
fn decimals_keep_the_scale_postgres_prints() {
    let Some(url) = common::postgres_url() else {
        return;
    };
    let config = ProptestConfig {
        cases: 64,
        ..ProptestConfig::default()
    };
    proptest!(config, |((precision, scale, values) in case())| {
        let ty = format!("numeric({precision},{scale})");
        let rows: Vec<String> = values
            .iter()
            .map(|v| format!("({}::{ty})", literal(scale, *v)))
            .collect();
        let table = format!("(VALUES {}) AS t(x)", rows.join(", "));
        let sql = format!(
            "SELECT x, x::text FROM {table} UNION ALL SELECT sum(x), sum(x)::text FROM {table}"
        );
        let results = run(connect(&url), None, vec![Statement { sql, params: vec![] }], 1).unwrap();
        let rows = results.answers.into_iter().next().unwrap().unwrap();
        for row in &rows.rows {
            let Cell::Text(expected) = &row[1] else { panic!("{row:?}") };
            prop_assert_eq!(&row[0], &Cell::Decimal(expected.clone()), "{}", ty);
        }
    });
}
