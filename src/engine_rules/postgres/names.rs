//! The name Postgres gives an unaliased output expression (`FigureColname`): a column's own
//! name, a function's name (`count`, `sum`), a cast's inner name or else its type's (`int8`), a
//! CASE's ELSE branch's name or else `case`, and `?column?` for operators and literals.

use sqlparser::ast::{CastKind, DataType as SqlType, Expr, Ident, SelectItem, SetExpr};

use crate::engine::Engine;
use crate::types::{self, DataType};

fn stored(ident: &Ident) -> String {
    Engine::Postgres.stored_name(&ident.value, ident.quote_style.is_some())
}

/// Postgres's name and its strength: 2 for a column's or function's name, 1 for `case` or a
/// type's name, 0 for `?column?`.
pub(super) fn postgres(expr: &Expr) -> Option<(String, u8)> {
    const UNNAMED: &str = "?column?";
    Some(match expr {
        Expr::Identifier(ident) => (stored(ident), 2),
        Expr::CompoundIdentifier(parts) => (stored(parts.last()?), 2),
        Expr::Nested(inner) => postgres(inner)?,
        Expr::Function(f) => {
            let last = f.name.0.last()?.as_ident()?;
            (stored(last), 2)
        }
        Expr::Case { else_result, .. } => match else_result.as_deref().map(postgres) {
            Some(Some((name, 2))) => (name, 2),
            Some(None) => return None,
            _ => ("case".to_string(), 1),
        },
        Expr::Cast {
            kind: CastKind::Cast | CastKind::DoubleColon,
            expr,
            data_type,
            ..
        } => match postgres(expr)? {
            (name, 2) => (name, 2),
            _ => (postgres_type_name(data_type)?, 1),
        },
        Expr::TypedString(ts) => (postgres_type_name(&ts.data_type)?, 1),
        Expr::Exists { .. } => ("exists".to_string(), 2),
        Expr::Subquery(query) => match query.body.as_ref() {
            SetExpr::Select(select) => match select.projection.as_slice() {
                [SelectItem::ExprWithAlias { alias, .. }] => (stored(alias), 2),
                [SelectItem::UnnamedExpr(inner)] => postgres(inner)?,
                _ => return None,
            },
            _ => return None,
        },
        Expr::Value(_)
        | Expr::BinaryOp { .. }
        | Expr::UnaryOp { .. }
        | Expr::IsNull(_)
        | Expr::IsNotNull(_)
        | Expr::IsTrue(_)
        | Expr::IsFalse(_)
        | Expr::IsNotTrue(_)
        | Expr::IsNotFalse(_)
        | Expr::IsDistinctFrom(..)
        | Expr::IsNotDistinctFrom(..)
        | Expr::Between { .. }
        | Expr::In { .. }
        | Expr::Like { .. }
        | Expr::ILike { .. } => (UNNAMED.to_string(), 0),
        _ => return None,
    })
}

/// The name Postgres gives a cast to `ty`: its catalog name (`int4`, `float8`, `timestamptz`).
fn postgres_type_name(ty: &SqlType) -> Option<String> {
    use DataType::*;
    let parsed = types::parse(&ty.to_string(), Engine::Postgres).ok()?;
    Some(
        match parsed {
            SmallInt => "int2",
            Integer => "int4",
            BigInt => "int8",
            Numeric(_) => "numeric",
            Real => "float4",
            Double => "float8",
            Text => "text",
            Varchar(_) => "varchar",
            Char(_) => "bpchar",
            Boolean => "bool",
            Date => "date",
            Timestamp { tz: false, .. } => "timestamp",
            Timestamp { tz: true, .. } => "timestamptz",
            Time { tz: false, .. } => "time",
            Time { tz: true, .. } => "timetz",
            Interval => "interval",
            Uuid => "uuid",
            Json => "json",
            Jsonb => "jsonb",
            Bytes => "bytea",
            _ => return None,
        }
        .to_string(),
    )
}
