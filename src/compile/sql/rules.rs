//! What each engine's aggregates and operators return, from their argument types: Postgres's and
//! the bundled DuckDB's own rules, each checked against both engines by tests/engine_types.rs.
//! Anything a rule does not cover is `None` (not proven).

use crate::engine::Engine;
use crate::types::DataType;

/// The precision and scale of an exact number: a decimal's own, an integer's as the decimal
/// DuckDB widens it to.
fn exact(t: &DataType) -> Option<(u32, u32)> {
    match t {
        DataType::TinyInt => Some((3, 0)),
        DataType::SmallInt => Some((5, 0)),
        DataType::Integer => Some((10, 0)),
        DataType::BigInt => Some((19, 0)),
        DataType::HugeInt => Some((38, 0)),
        DataType::Numeric(Some((p, s))) => Some((*p, s.unwrap_or(0))),
        _ => None,
    }
}

pub(super) fn is_integer(t: &DataType) -> bool {
    matches!(
        t,
        DataType::TinyInt | DataType::SmallInt | DataType::Integer | DataType::BigInt
    )
}

fn is_numeric(t: &DataType) -> bool {
    matches!(t, DataType::Numeric(_))
}

/// `sum(x)`.
pub(super) fn sum(arg: &DataType, engine: Engine) -> Option<DataType> {
    use DataType::*;
    Some(match (engine, arg) {
        (Engine::Postgres, SmallInt | Integer) => BigInt,
        (Engine::Postgres, BigInt | Numeric(_)) => Numeric(None),
        (Engine::Postgres, Real) => Real,
        (Engine::DuckDb, t) if is_integer(t) => HugeInt,
        (Engine::DuckDb, Numeric(Some((_, s)))) => Numeric(Some((38, Some(s.unwrap_or(0))))),
        (Engine::DuckDb, Real) => Double,
        (_, Double) => Double,
        _ => return None,
    })
}

/// `avg(x)`, and the standard deviations and variances.
pub(super) fn mean(arg: &DataType, engine: Engine) -> Option<DataType> {
    match (engine, arg) {
        (Engine::Postgres, t) if is_integer(t) || is_numeric(t) => Some(DataType::Numeric(None)),
        (Engine::DuckDb, t) if is_integer(t) || is_numeric(t) => Some(DataType::Double),
        (_, DataType::Real | DataType::Double) => Some(DataType::Double),
        _ => None,
    }
}

/// `min(x)` and `max(x)`: the argument's type; Postgres drops its modifiers (a length, a
/// precision), as an aggregate's result has none.
pub(super) fn extreme(arg: &DataType, engine: Engine) -> Option<DataType> {
    use DataType::*;
    match (engine, arg) {
        (Engine::DuckDb, t) => Some(t.clone()),
        (Engine::Postgres, Numeric(_)) => Some(Numeric(None)),
        (Engine::Postgres, Varchar(_)) => Some(Varchar(None)),
        (Engine::Postgres, Timestamp { tz, .. }) => Some(Timestamp {
            precision: None,
            tz: *tz,
        }),
        (Engine::Postgres, Time { tz, .. }) => Some(Time {
            precision: None,
            tz: *tz,
        }),
        (Engine::Postgres, Char(_) | Array { .. } | Struct(_) | Named(_)) => None,
        (Engine::Postgres, t) => Some(t.clone()),
    }
}

/// `a + b`, `a - b` and `a * b` of two columns (literals mixed into DuckDB decimals are not
/// modelled: DuckDB sizes them from their value).
pub(super) fn arithmetic(
    l: &DataType,
    r: &DataType,
    multiply: bool,
    engine: Engine,
) -> Option<DataType> {
    if is_integer(l) && is_integer(r) {
        return Some(wider_integer(l, r));
    }
    let is_double = |t: &DataType| matches!(t, DataType::Double);
    let numberish = |t: &DataType| is_integer(t) || is_numeric(t) || is_double(t);
    if (is_double(l) || is_double(r)) && numberish(l) && numberish(r) {
        return Some(DataType::Double);
    }
    match engine {
        Engine::Postgres if numberish(l) && numberish(r) => Some(DataType::Numeric(None)),
        Engine::Postgres => None,
        Engine::DuckDb => {
            let ((p1, s1), (p2, s2)) = (exact(l)?, exact(r)?);
            let (p, s) = match multiply {
                true => (p1 + p2, s1 + s2),
                false => {
                    let s = s1.max(s2);
                    ((p1 - s1).max(p2 - s2) + s + 1, s)
                }
            };
            (p <= 38).then_some(DataType::Numeric(Some((p, Some(s)))))
        }
    }
}

/// `a / b`: integer division on Postgres, DOUBLE on DuckDB.
pub(super) fn divide(l: &DataType, r: &DataType, engine: Engine) -> Option<DataType> {
    let numberish = |t: &DataType| is_integer(t) || is_numeric(t) || matches!(t, DataType::Double);
    match engine {
        Engine::DuckDb if numberish(l) && numberish(r) => Some(DataType::Double),
        Engine::DuckDb => None,
        Engine::Postgres => arithmetic(l, r, true, engine),
    }
}

/// `a % b` of two integers: the wider one.
pub(super) fn modulo(l: &DataType, r: &DataType) -> Option<DataType> {
    (is_integer(l) && is_integer(r)).then(|| wider_integer(l, r))
}

fn wider_integer(l: &DataType, r: &DataType) -> DataType {
    let rank = |t: &DataType| exact(t).map_or(0, |(p, _)| p);
    match rank(l) >= rank(r) {
        true => l.clone(),
        false => r.clone(),
    }
}

/// The type CASE, COALESCE and the like resolve their branches to: one type they all have
/// (Postgres keeps its modifiers only then), or the widest of integers. `None` when any branch's
/// type is unknown.
pub(super) fn common(types: &[Option<DataType>]) -> Option<DataType> {
    let first = types.first()?.as_ref()?;
    let mut out = first.clone();
    for t in &types[1..] {
        let t = t.as_ref()?;
        out = match (&out, t) {
            (a, b) if a == b => out.clone(),
            (a, b) if is_integer(a) && is_integer(b) => wider_integer(a, b),
            _ => return None,
        };
    }
    Some(out)
}
