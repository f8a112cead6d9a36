//! `contract migrate`'s pure core: the findings of one relation → the DDL statements that make
//! the warehouse match its declarations, the data checks some of them need first, and what no
//! statement can resolve.
//!
//! Only tables are altered: a view's or a materialized view's columns come from its SQL, which
//! the model owns. A statement is planned only when it keeps every value: a wider type, a
//! column added as NULL. Where a statement's safety depends on the data (SET NOT NULL, a
//! narrower type), it comes with the count of rows it would fail on, which the caller runs
//! read-only before it keeps the statement. No I/O happens here.

use crate::catalog::RelationKind;
use crate::contract::diff::{Finding, FindingKind};
use crate::engine::Engine;
use crate::ident::quoted;
use crate::source::Loc;
use crate::types::{self, DataType};

/// One relation as the warehouse has it: its quoted name, its kind and its findings.
pub struct Relation<'a> {
    /// `"schema"."name"`.
    pub quoted: String,
    /// `schema.name`, as reports show it.
    pub shown: String,
    pub schema: String,
    pub name: String,
    pub kind: Option<RelationKind>,
    pub findings: &'a [Finding],
}

/// A statement of the migration, with the declaration it comes from.
#[derive(Debug, Clone)]
pub struct Step {
    pub kind: FindingKind,
    pub relation: String,
    pub column: String,
    pub sql: String,
    /// Why: the declaration it makes true ("declared VARCHAR(40), stored VARCHAR(20)").
    pub why: String,
    pub loc: Option<Loc>,
    /// A statement whose safety depends on the data: the query counting the rows it would
    /// fail on (its first column), to run read-only first. Zero keeps the statement.
    pub check: Option<String>,
    /// A retype or a drop: the statement listing the views that read the column, which it
    /// would break (or the engine refuses). None keeps the statement.
    pub readers: Option<crate::rows::Statement>,
}

/// A finding no statement resolves, and why.
#[derive(Debug, Clone)]
pub struct Refusal {
    pub relation: String,
    pub column: Option<String>,
    pub kind: FindingKind,
    pub why: String,
    pub loc: Option<Loc>,
}

/// What one relation's findings become.
#[derive(Debug, Default)]
pub struct Plan {
    pub steps: Vec<Step>,
    pub refused: Vec<Refusal>,
}

/// Plans `relation`'s statements. `allow_drop` lets a column the warehouse has and the
/// declarations do not be dropped.
pub fn plan(engine: Engine, relation: &Relation<'_>, allow_drop: bool, out: &mut Plan) {
    for f in relation.findings {
        // What the contract leaves open (an undeclared column of a source or of a model in
        // implicit mode) is no drift to migrate.
        if matches!(f.severity, crate::diagnostics::Severity::Info) {
            continue;
        }
        match step(engine, relation, f, allow_drop) {
            Ok(Some(step)) => out.steps.push(step),
            Ok(None) => {}
            Err(why) => out.refused.push(Refusal {
                relation: relation.shown.clone(),
                column: f.column.clone(),
                kind: f.kind,
                why,
                loc: f.loc.clone(),
            }),
        }
    }
}

/// The statement resolving `f`; `None` for a finding that needs none (an undeclared column
/// without `--allow-drop`).
fn step(
    engine: Engine,
    relation: &Relation<'_>,
    f: &Finding,
    allow_drop: bool,
) -> Result<Option<Step>, String> {
    let resolvable = matches!(
        f.kind,
        FindingKind::MissingPhysicalColumn
            | FindingKind::TypeMismatch
            | FindingKind::NullabilityMismatch
            | FindingKind::UndeclaredPhysicalColumn
    );
    if !resolvable {
        return Err(match f.kind {
            FindingKind::RelationMissing => {
                "the relation does not exist: the model builds it, a migration does not".into()
            }
            FindingKind::NameConflict => {
                "a column whose name differs only in case: rename it, or the declaration".into()
            }
            FindingKind::MissingType => "the declaration has no type to migrate to".into(),
            _ => format!("no DDL statement resolves a `{}`", f.kind.as_str()),
        });
    }
    if f.kind == FindingKind::UndeclaredPhysicalColumn && !allow_drop {
        return Ok(None);
    }
    match relation.kind {
        Some(RelationKind::Table | RelationKind::PartitionedTable) => {}
        Some(kind) => {
            return Err(format!(
            "`{}` is a {}: its columns come from its SQL, so change the model, not the relation",
            relation.shown,
            kind_name(kind)
        ))
        }
        None => return Err("the relation's kind is unknown".into()),
    }
    let column = f.column.clone().unwrap_or_default();
    let col = quoted(&column);
    let table = &relation.quoted;
    let declared = || {
        let text = f.declared_type.as_deref().unwrap_or_default();
        types::parse(text, engine)
            .map_err(|e| format!("the declared type `{text}` does not parse: {e}"))
    };
    let (sql, why, check) = match f.kind {
        FindingKind::MissingPhysicalColumn => {
            let ty = declared()?;
            (
                format!("ALTER TABLE {table} ADD COLUMN {col} {ty}"),
                format!("declared {ty}, missing from the relation (added NULL in every row)"),
                None,
            )
        }
        FindingKind::TypeMismatch => {
            let to = declared()?;
            let stored = f.physical_type.as_deref().unwrap_or_default();
            let from = types::parse(stored, engine)
                .map_err(|e| format!("the stored type `{stored}` does not parse: {e}"))?;
            let check = match change(engine, &from, &to) {
                Change::Widen => None,
                Change::Narrow(failing) => Some(format!(
                    "SELECT count(*) FROM {table} WHERE {}",
                    failing.replace("{col}", &col)
                )),
                Change::Unsupported => {
                    return Err(format!(
                        "no ALTER TYPE turns {from} into {to} keeping every value: change the model that builds it"
                    ))
                }
            };
            (
                format!("ALTER TABLE {table} ALTER COLUMN {col} SET DATA TYPE {to}"),
                format!("declared {to}, stored {from}"),
                check,
            )
        }
        FindingKind::NullabilityMismatch => {
            let (declared_nullable, stored_nullable) = f.nullable.unwrap_or((true, true));
            if declared_nullable || !stored_nullable {
                return Err(
                    "the declaration allows NULL where the relation does not: drop the constraint by hand, or declare `nullable = false`"
                        .into(),
                );
            }
            (
                format!("ALTER TABLE {table} ALTER COLUMN {col} SET NOT NULL"),
                "declared `nullable = false`, the relation allows NULL".into(),
                Some(format!("SELECT count(*) FROM {table} WHERE {col} IS NULL")),
            )
        }
        _ => (
            format!("ALTER TABLE {table} DROP COLUMN {col}"),
            "in the relation, declared nowhere (--allow-drop)".into(),
            None,
        ),
    };
    let readers = matches!(
        f.kind,
        FindingKind::TypeMismatch | FindingKind::UndeclaredPhysicalColumn
    )
    .then(|| {
        crate::engine_rules::of(engine).column_readers(&relation.schema, &relation.name, &column)
    });
    Ok(Some(Step {
        readers,
        kind: f.kind,
        relation: relation.shown.clone(),
        column,
        sql,
        why,
        loc: f.loc.clone(),
        check,
    }))
}

fn kind_name(kind: RelationKind) -> &'static str {
    match kind {
        RelationKind::View => "view",
        RelationKind::MaterializedView => "materialized view",
        RelationKind::ForeignTable => "foreign table",
        RelationKind::PartitionedTable => "partitioned table",
        RelationKind::Query => "query",
        RelationKind::Table => "table",
    }
}

/// How a column's type can change.
#[derive(Debug, PartialEq, Eq)]
enum Change {
    /// Every value of the old type is one of the new.
    Widen,
    /// Some values may not fit: the SQL predicate (over `{col}`) of the rows that do not.
    Narrow(String),
    /// A change of meaning, or one sqb does not know to be safe.
    Unsupported,
}

/// The decimal digits an integer type holds, and its bounds.
fn integer(ty: &DataType) -> Option<(u32, i128, i128)> {
    Some(match ty {
        DataType::TinyInt => (3, i8::MIN.into(), i8::MAX.into()),
        DataType::SmallInt => (5, i16::MIN.into(), i16::MAX.into()),
        DataType::Integer => (10, i32::MIN.into(), i32::MAX.into()),
        DataType::BigInt => (19, i64::MIN.into(), i64::MAX.into()),
        _ => return None,
    })
}

fn change(engine: Engine, from: &DataType, to: &DataType) -> Change {
    use DataType::*;
    // A bare NUMERIC is the engine's default precision, or (None) any number.
    let bare = crate::engine_rules::of(engine).bare_numeric();
    let sized = |t: &DataType| match (t, bare) {
        (Numeric(None), Some((p, s))) => Numeric(Some((p, Some(s)))),
        _ => t.clone(),
    };
    let (from, to) = (&sized(from), &sized(to));
    let out_of = |lo: i128, hi: i128| Change::Narrow(format!("{{col}} NOT BETWEEN {lo} AND {hi}"));
    match (from, to) {
        (a, b) if a == b => Change::Widen,
        (a, b) if integer(a).is_some() && integer(b).is_some() => {
            let (da, _, _) = integer(a).unwrap_or_default();
            let (db, lo, hi) = integer(b).unwrap_or_default();
            match da <= db {
                true => Change::Widen,
                false => out_of(lo, hi),
            }
        }
        (a, Numeric(Some((p, s)))) if integer(a).is_some() => {
            let digits = integer(a).map_or(0, |(d, _, _)| d);
            let whole = p.saturating_sub(s.unwrap_or(0));
            match digits <= whole {
                true => Change::Widen,
                false => Change::Narrow(format!("abs({{col}}) >= 1e{whole}")),
            }
        }
        (a, Numeric(None)) if integer(a).is_some() => Change::Widen,
        (Numeric(Some((p, s))), Numeric(Some((p2, s2)))) => {
            let (s, s2) = (s.unwrap_or(0), s2.unwrap_or(0));
            let (whole, whole2) = (p.saturating_sub(s), p2.saturating_sub(s2));
            match s2 >= s && whole2 >= whole {
                true => Change::Widen,
                false => Change::Narrow(format!(
                    "{{col}} <> round({{col}}, {s2}) OR abs({{col}}) >= 1e{whole2}"
                )),
            }
        }
        (Numeric(Some(_)), Numeric(None)) => Change::Widen,
        (Numeric(None), Numeric(Some((p2, s2)))) => {
            let s2 = s2.unwrap_or(0);
            Change::Narrow(format!(
                "{{col}} <> round({{col}}, {s2}) OR abs({{col}}) >= 1e{}",
                p2.saturating_sub(s2)
            ))
        }
        (Real, Double) => Change::Widen,
        (SmallInt | Integer, Double) => Change::Widen,
        (Varchar(Some(n)), Varchar(Some(m))) => match m >= n {
            true => Change::Widen,
            false => Change::Narrow(format!("length({{col}}) > {m}")),
        },
        (Varchar(_), Varchar(None) | Text) => Change::Widen,
        (Varchar(None) | Text, Varchar(Some(m))) => {
            Change::Narrow(format!("length({{col}}) > {m}"))
        }
        _ => Change::Unsupported,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(text: &str) -> DataType {
        types::parse(text, Engine::Postgres).unwrap()
    }

    #[test]
    fn widening_keeps_every_value_and_narrowing_counts_what_would_not_fit() {
        let pg = Engine::Postgres;
        assert_eq!(change(pg, &t("integer"), &t("bigint")), Change::Widen);
        assert_eq!(
            change(pg, &t("varchar(20)"), &t("varchar(40)")),
            Change::Widen
        );
        assert_eq!(change(pg, &t("varchar(20)"), &t("text")), Change::Widen);
        assert_eq!(
            change(pg, &t("numeric(10,2)"), &t("numeric(12,3)")),
            Change::Widen
        );
        assert_eq!(
            change(pg, &t("integer"), &t("numeric(12,2)")),
            Change::Widen
        );
        assert_eq!(
            change(pg, &t("bigint"), &t("integer")),
            Change::Narrow("{col} NOT BETWEEN -2147483648 AND 2147483647".into())
        );
        assert_eq!(
            change(pg, &t("varchar(40)"), &t("varchar(10)")),
            Change::Narrow("length({col}) > 10".into())
        );
        assert_eq!(
            change(pg, &t("numeric(12,3)"), &t("numeric(10,2)")),
            Change::Narrow("{col} <> round({col}, 2) OR abs({col}) >= 1e8".into())
        );
        assert_eq!(
            change(pg, &t("integer"), &t("numeric(5,2)")),
            Change::Narrow("abs({col}) >= 1e3".into())
        );
        assert_eq!(change(pg, &t("text"), &t("integer")), Change::Unsupported);
        assert_eq!(
            change(pg, &t("char(3)"), &t("varchar(3)")),
            Change::Unsupported
        );
        assert_eq!(
            change(pg, &t("timestamp"), &t("timestamptz")),
            Change::Unsupported
        );
        assert_eq!(
            change(pg, &t("bigint"), &t("double precision")),
            Change::Unsupported
        );
    }
}
