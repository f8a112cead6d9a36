//! What changed in one imported column between the accepted baseline and the current snapshot,
//! and how it bears on a reader: a dropped column, a narrowed or widened type, nullability
//! either way. A type change that is neither a narrowing nor a widening, or one between types
//! sqb cannot rank, is treated as narrowing: it fails closed.

use crate::engine::Engine;
use crate::team_contracts::snapshot::PublishedColumn;
use crate::types::{self, DataType};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    Dropped,
    Narrowed {
        from: String,
        to: String,
    },
    Widened {
        from: String,
        to: String,
    },
    /// nullable → NOT NULL.
    BecameNotNull,
    /// NOT NULL → nullable.
    BecameNullable,
}

/// The changes of one column present in the baseline (`now` is `None` when it is gone).
pub fn column(
    before: &PublishedColumn,
    now: Option<&PublishedColumn>,
    engine: Engine,
) -> Vec<Change> {
    let Some(now) = now else {
        return vec![Change::Dropped];
    };
    let mut out = Vec::new();
    let (from, to) = (&before.canonical_type, &now.canonical_type);
    match (types::parse(from, engine), types::parse(to, engine)) {
        (Ok(a), Ok(b)) if same(&a, &b, engine) => {}
        (Ok(a), Ok(b)) if widens(&a, &b) => out.push(Change::Widened {
            from: from.clone(),
            to: to.clone(),
        }),
        _ if from == to => {}
        _ => out.push(Change::Narrowed {
            from: from.clone(),
            to: to.clone(),
        }),
    }
    if before.enum_members != now.enum_members && out.is_empty() {
        let lost = match (&before.enum_members, &now.enum_members) {
            (Some(a), Some(b)) => a.iter().any(|m| !b.contains(m)),
            _ => true,
        };
        let change = |from: &Option<Vec<String>>| match from {
            Some(m) => format!("one of {}", m.join(", ")),
            None => before.canonical_type.clone(),
        };
        let (from, to) = (change(&before.enum_members), change(&now.enum_members));
        out.push(match lost {
            true => Change::Narrowed { from, to },
            false => Change::Widened { from, to },
        });
    }
    match (before.nullable, now.nullable) {
        (true, false) => out.push(Change::BecameNotNull),
        (false, true) => out.push(Change::BecameNullable),
        _ => {}
    }
    out
}

/// The same published type. Declared lengths count even where the engine ignores them (DuckDB
/// stores every string as VARCHAR): the snapshot is a contract, not a catalog.
fn same(a: &DataType, b: &DataType, _engine: Engine) -> bool {
    // Postgres's normalization keeps every string kind and length apart.
    types::normalize(a, Engine::Postgres) == types::normalize(b, Engine::Postgres)
}

/// Integer digits a type holds: an integer's, or a decimal's `p - s`.
fn integer_digits(t: &DataType) -> Option<(u32, u32)> {
    Some(match t {
        DataType::TinyInt => (3, 0),
        DataType::SmallInt => (5, 0),
        DataType::Integer => (10, 0),
        DataType::BigInt => (19, 0),
        DataType::HugeInt => (39, 0),
        DataType::Numeric(Some((p, s))) => {
            let s = s.unwrap_or(0);
            (p.saturating_sub(s), s)
        }
        _ => return None,
    })
}

fn is_integer(t: &DataType) -> bool {
    matches!(
        t,
        DataType::TinyInt
            | DataType::SmallInt
            | DataType::Integer
            | DataType::BigInt
            | DataType::HugeInt
    )
}

/// Whether every value of `a` is a value of `b` (and they differ).
fn widens(a: &DataType, b: &DataType) -> bool {
    use DataType::*;
    match (a, b) {
        (Varchar(Some(n)), Varchar(Some(m))) => m > n,
        (Varchar(Some(_)) | Char(_), Varchar(None) | Text) => true,
        (Varchar(None), Text) | (Text, Varchar(None)) => true,
        (Real, Double) => true,
        (x, y) if is_integer(x) && is_integer(y) => integer_digits(y) > integer_digits(x),
        // An integer into a decimal with room for its digits; a decimal into a wider one.
        (x, Numeric(Some(_))) if is_integer(x) => integer_digits(b)
            .zip(integer_digits(a))
            .is_some_and(|(nb, na)| nb.0 >= na.0),
        (Numeric(Some(_)), Numeric(Some(_))) => {
            let (na, nb) = (integer_digits(a).unwrap(), integer_digits(b).unwrap());
            nb.0 >= na.0 && nb.1 >= na.1
        }
        (Numeric(Some(_)) | SmallInt | Integer | BigInt, Numeric(None)) => true,
        (
            Timestamp { precision: p, tz },
            Timestamp {
                precision: q,
                tz: tz2,
            },
        ) => tz == tz2 && q.unwrap_or(6) > p.unwrap_or(6),
        (Array { element: x, .. }, Array { element: y, .. }) => widens(x, y),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(ty: &str, nullable: bool) -> PublishedColumn {
        PublishedColumn {
            name: "c".into(),
            ty: ty.into(),
            canonical_type: ty.into(),
            nullable,
            enum_members: None,
            deprecated: None,
            deprecation_date: None,
        }
    }

    fn kind(from: &str, to: &str) -> &'static str {
        let changes = column(&col(from, true), Some(&col(to, true)), Engine::DuckDb);
        match changes.as_slice() {
            [] => "same",
            [Change::Narrowed { .. }] => "narrowed",
            [Change::Widened { .. }] => "widened",
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn type_changes_are_ranked_and_fail_closed() {
        assert_eq!(kind("VARCHAR(255)", "VARCHAR(50)"), "narrowed");
        assert_eq!(kind("VARCHAR(50)", "VARCHAR(255)"), "widened");
        assert_eq!(kind("NUMERIC(10,2)", "NUMERIC(10,4)"), "narrowed");
        assert_eq!(kind("NUMERIC(10,2)", "NUMERIC(12,2)"), "widened");
        assert_eq!(kind("INTEGER", "BIGINT"), "widened");
        assert_eq!(kind("BIGINT", "INTEGER"), "narrowed");
        assert_eq!(kind("BIGINT", "BOOLEAN"), "narrowed");
        assert_eq!(kind("TIMESTAMP", "TIMESTAMPTZ"), "narrowed");
        assert_eq!(kind("TIMESTAMPTZ", "TIMESTAMP"), "narrowed");
        assert_eq!(kind("INTEGER", "NUMERIC(12,0)"), "widened");
        assert_eq!(kind("INTEGER", "NUMERIC(8,0)"), "narrowed");
        assert_eq!(kind("INTEGER", "INT4"), "same");
        assert_eq!(kind("geometry", "geography"), "narrowed");
    }

    #[test]
    fn nullability_and_drops() {
        let c = col("INTEGER", true);
        assert_eq!(column(&c, None, Engine::DuckDb), vec![Change::Dropped]);
        assert_eq!(
            column(&c, Some(&col("INTEGER", false)), Engine::DuckDb),
            vec![Change::BecameNotNull]
        );
        assert_eq!(
            column(&col("INTEGER", false), Some(&c), Engine::DuckDb),
            vec![Change::BecameNullable]
        );
    }
}
