//! What an output expression's type and nullability are, proven from evidence only: casts,
//! literals, upstream declarations and inferred upstream columns, and the engine's rules for
//! common operators and functions. Anything else is unknown.

use sqlparser::ast::{
    BinaryOperator, CastKind, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, Ident, Value,
};

use super::{grouping, same_column, stored_name, Merged, OutColumn, Rel};
use crate::engine::Engine;
use crate::engine_rules::{self, EngineRules};
use crate::types::{self, DataType};

/// What is proven of one expression.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Facts {
    pub ty: Option<DataType>,
    /// `Some(false)`: never null; `Some(true)`: may be null; `None`: unknown.
    pub nullable: Option<bool>,
}

fn known(ty: DataType, nullable: Option<bool>) -> Facts {
    Facts {
        ty: Some(ty),
        nullable,
    }
}

/// The columns a top-level `WHERE a IS NOT NULL AND …` proves non-null: (relation, column).
pub(super) fn not_null_filters(
    selection: Option<&Expr>,
    engine: Engine,
) -> Vec<(Option<String>, String)> {
    let mut out = Vec::new();
    let mut stack: Vec<&Expr> = selection.into_iter().collect();
    while let Some(expr) = stack.pop() {
        match expr {
            Expr::BinaryOp {
                left,
                op: BinaryOperator::And,
                right,
            } => {
                stack.push(left);
                stack.push(right);
            }
            Expr::Nested(inner) => stack.push(inner),
            Expr::IsNotNull(inner) => match inner.as_ref() {
                Expr::Identifier(c) => out.push((None, stored_name(c, engine))),
                Expr::CompoundIdentifier(parts) if parts.len() >= 2 => {
                    let rel = parts[parts.len() - 2].value.to_lowercase();
                    out.push((Some(rel), stored_name(&parts[parts.len() - 1], engine)));
                }
                _ => {}
            },
            _ => {}
        }
    }
    out
}

#[derive(Clone, Copy)]
pub struct Scope<'a> {
    pub rels: &'a [Rel],
    /// The columns `USING` and `NATURAL` joins merge.
    pub merged: &'a Merged,
    pub engine: Engine,
    pub not_null: &'a [(Option<String>, String)],
    /// Grouping expressions that grouping sets leave NULL in some rows (outside aggregates).
    pub rolled: &'a [Expr],
}

/// Functions whose arguments are read row by row before grouping (outside a window).
const AGGREGATES: &[&str] = &[
    "count",
    "sum",
    "min",
    "max",
    "avg",
    "any_value",
    "first",
    "last",
    "string_agg",
    "array_agg",
    "list",
    "bool_and",
    "bool_or",
    "every",
    "stddev",
    "variance",
    "median",
    "mode",
];

impl Scope<'_> {
    fn rules(&self) -> &'static dyn EngineRules {
        engine_rules::of(self.engine)
    }

    pub fn expr(&self, expr: &Expr) -> Facts {
        if self
            .rolled
            .iter()
            .any(|r| grouping::same(r, expr, self.engine))
        {
            let unrolled = Scope {
                rolled: &[],
                ..*self
            };
            return Facts {
                ty: unrolled.expr(expr).ty,
                nullable: Some(true),
            };
        }
        match expr {
            Expr::Identifier(column) => self.column(None, column),
            Expr::CompoundIdentifier(parts) if parts.len() >= 2 => self.column(
                Some(parts[parts.len() - 2].value.to_lowercase()),
                &parts[parts.len() - 1],
            ),
            Expr::Nested(inner) => self.expr(inner),
            Expr::Value(v) => literal(&v.value, self.engine),
            Expr::Cast {
                kind,
                expr: inner,
                data_type,
                ..
            } => Facts {
                ty: types::parse(&data_type.to_string(), self.engine)
                    .ok()
                    .filter(|t| t.named_types().is_empty()),
                nullable: match kind {
                    // TRY_CAST / SAFE_CAST give NULL for what does not convert.
                    CastKind::TryCast | CastKind::SafeCast => {
                        self.expr(inner).nullable.filter(|n| *n)
                    }
                    CastKind::Cast | CastKind::DoubleColon => self.expr(inner).nullable,
                },
            },
            // `substr(s, a, b)`, `substring(s FROM a FOR b)`: of a string, the engine's text.
            Expr::Substring {
                expr: inner,
                substring_from,
                substring_for,
                ..
            } => {
                let of = self.expr(inner);
                let bounds = [substring_from, substring_for]
                    .into_iter()
                    .flatten()
                    .all(|e| self.expr(e).nullable == Some(false));
                match of.ty.as_ref().is_some_and(is_string) {
                    true => Facts {
                        ty: Some(self.rules().text()),
                        nullable: (of.nullable == Some(false) && bounds).then_some(false),
                    },
                    false => Facts::default(),
                }
            }
            Expr::IsNull(_) | Expr::IsNotNull(_) => known(DataType::Boolean, Some(false)),
            Expr::BinaryOp { left, op, right } => self.binary(left, op, right),
            Expr::UnaryOp {
                op: sqlparser::ast::UnaryOperator::Not,
                expr: inner,
            } => known(DataType::Boolean, self.expr(inner).nullable),
            Expr::Function(f) => self.function(f),
            Expr::Case {
                conditions,
                else_result,
                ..
            } => {
                let mut branches: Vec<&Expr> = conditions.iter().map(|c| &c.result).collect();
                branches.extend(else_result.as_deref());
                let facts = self.branches(&branches);
                Facts {
                    ty: facts.ty,
                    // Without ELSE, a row no branch matches is NULL.
                    nullable: facts.nullable.filter(|_| else_result.is_some()),
                }
            }
            _ => Facts::default(),
        }
    }

    /// A column of a FROM relation: from its facts, made nullable on an outer-joined side and
    /// non-null by a `WHERE … IS NOT NULL` filter.
    fn column(&self, rel: Option<String>, column: &Ident) -> Facts {
        let name = stored_name(column, self.engine);
        let candidates: Vec<&Rel> = match &rel {
            Some(key) => self.rels.iter().filter(|r| r.key == *key).collect(),
            None => self.rels.iter().collect(),
        };
        let found: Vec<(&Rel, &OutColumn)> = candidates
            .iter()
            .filter_map(|r| {
                r.facts
                    .iter()
                    .find(|c| same_column(&c.name, &name, self.engine))
                    .map(|c| (*r, c))
            })
            .collect();
        // An unqualified name must be found in exactly one relation. In valid SQL no other
        // relation has it then, unless a USING or NATURAL join merges it with a relation of
        // unknown shape, whose own column (and type) may be part of the value.
        let unique = match (&rel, found.as_slice()) {
            (Some(_), [one]) => Some(*one),
            (None, [one])
                if !self.merged.has(&name, self.engine)
                    || self
                        .rels
                        .iter()
                        .all(|r| std::ptr::eq(r, one.0) || r.shape.is_some()) =>
            {
                Some(*one)
            }
            // A column USING or NATURAL merges has the type every side declares, if the same.
            (None, [first, rest @ ..]) if self.merged.has(&name, self.engine) => {
                let same = rest.iter().all(|(_, c)| c.ty == first.1.ty);
                let others_known = self
                    .rels
                    .iter()
                    .all(|r| found.iter().any(|(f, _)| std::ptr::eq(r, *f)) || r.shape.is_some());
                return Facts {
                    ty: first.1.ty.clone().filter(|_| same && others_known),
                    nullable: None,
                };
            }
            _ => None,
        };
        let Some((source, col)) = unique else {
            return Facts::default();
        };
        let filtered = self.not_null.iter().any(|(r, c)| {
            same_column(c, &name, self.engine) && r.as_ref().is_none_or(|r| *r == source.key)
        });
        let nullable = if filtered {
            Some(false)
        } else if source.outer {
            Some(true)
        } else {
            col.nullable
        };
        Facts {
            ty: col.ty.clone(),
            nullable,
        }
    }

    fn binary(&self, left: &Expr, op: &BinaryOperator, right: &Expr) -> Facts {
        use BinaryOperator::*;
        let (l, r) = (self.expr(left), self.expr(right));
        let nullable = match (l.nullable, r.nullable) {
            (Some(false), Some(false)) => Some(false),
            (Some(true), _) | (_, Some(true)) => Some(true),
            _ => None,
        };
        // DuckDB sizes a literal in decimal arithmetic from its value: not modelled.
        let literal = matches!(left, Expr::Value(_)) || matches!(right, Expr::Value(_));
        let both = l.ty.as_ref().zip(r.ty.as_ref());
        let arithmetic = |multiply: bool| {
            both.and_then(|(a, b)| self.rules().arithmetic(a, b, multiply, literal))
        };
        match op {
            Eq | NotEq | Lt | LtEq | Gt | GtEq | And | Or => known(DataType::Boolean, nullable),
            Plus | Minus => Facts {
                ty: arithmetic(false),
                nullable,
            },
            Multiply => Facts {
                ty: arithmetic(true),
                nullable,
            },
            // DuckDB gives NULL for a division by zero; Postgres an error.
            Divide => Facts {
                ty: both.and_then(|(a, b)| self.rules().divide(a, b)),
                nullable: None,
            },
            Modulo => Facts {
                ty: both.and_then(|(a, b)| engine_rules::modulo(a, b)),
                nullable: None,
            },
            StringConcat => Facts {
                ty: Some(self.rules().text()),
                nullable,
            },
            _ => Facts::default(),
        }
    }

    /// What the branches of a CASE or the arguments of COALESCE resolve to: their common type,
    /// where a string literal takes the string type of the others; non-null where all are.
    fn branches(&self, exprs: &[&Expr]) -> Facts {
        let is_string_literal = |e: &Expr| {
            matches!(
                e,
                Expr::Value(v) if matches!(v.value, Value::SingleQuotedString(_))
            )
        };
        let is_null = |e: &Expr| matches!(e, Expr::Value(v) if v.value == Value::Null);
        let facts: Vec<Facts> = exprs.iter().map(|e| self.expr(e)).collect();
        let typed: Vec<Option<DataType>> = exprs
            .iter()
            .zip(&facts)
            .filter(|(e, _)| !is_null(e))
            .map(|(_, f)| f.ty.clone())
            .collect();
        let others: Vec<Option<DataType>> = exprs
            .iter()
            .zip(&facts)
            .filter(|(e, _)| !is_null(e) && !is_string_literal(e))
            .map(|(_, f)| f.ty.clone())
            .collect();
        let ty = match engine_rules::common(&others) {
            Some(t) if t == self.rules().text() => Some(t),
            Some(_) if others.len() < typed.len() => None,
            Some(t) => Some(t),
            // Only string literals (and NULLs): text.
            None if others.is_empty() && !typed.is_empty() => Some(self.rules().text()),
            None => None,
        };
        let nullable = facts
            .iter()
            .all(|f| f.nullable == Some(false))
            .then_some(false);
        Facts { ty, nullable }
    }

    fn function(&self, f: &sqlparser::ast::Function) -> Facts {
        let name = f
            .name
            .0
            .last()
            .and_then(|p| p.as_ident())
            .map(|i| i.value.to_lowercase())
            .unwrap_or_default();
        let args: Vec<&FunctionArgExpr> = match &f.args {
            FunctionArguments::List(list) => list
                .args
                .iter()
                .map(|a| match a {
                    FunctionArg::Unnamed(e)
                    | FunctionArg::Named { arg: e, .. }
                    | FunctionArg::ExprNamed { arg: e, .. } => e,
                })
                .collect(),
            _ => Vec::new(),
        };
        // An aggregate reads its arguments before grouping sets roll anything up.
        let rows = match f.over.is_none() && AGGREGATES.contains(&name.as_str()) {
            true => Scope {
                rolled: &[],
                ..*self
            },
            false => *self,
        };
        let arg = |i: usize| match args.get(i) {
            Some(FunctionArgExpr::Expr(e)) => rows.expr(e),
            _ => Facts::default(),
        };
        let rules = self.rules();
        let of = |rule: fn(&dyn EngineRules, &DataType) -> Option<DataType>| Facts {
            ty: arg(0).ty.and_then(|t| rule(rules, &t)),
            // An aggregate over no rows is NULL.
            nullable: None,
        };
        match (name.as_str(), args.len()) {
            ("count", 1) => known(DataType::BigInt, Some(false)),
            ("row_number" | "rank" | "dense_rank", 0) => known(DataType::BigInt, Some(false)),
            ("now" | "current_timestamp", 0) => known(
                DataType::Timestamp {
                    precision: None,
                    tz: true,
                },
                Some(false),
            ),
            ("current_date", 0) => known(DataType::Date, Some(false)),
            ("sum", 1) => of(|r, t| r.sum(t)),
            (
                "avg" | "stddev" | "stddev_samp" | "stddev_pop" | "variance" | "var_samp"
                | "var_pop",
                1,
            ) => of(|r, t| r.mean(t)),
            ("min" | "max", 1) => of(|r, t| r.extreme(t)),
            ("upper" | "lower" | "trim" | "ltrim" | "rtrim" | "initcap", 1) => Facts {
                ty: Some(self.rules().text()),
                nullable: arg(0).nullable,
            },
            ("length" | "char_length", 1) => known(rules.length(), arg(0).nullable),
            // Of a string (not of bytes, which stay bytes): the engine's text type.
            ("substr" | "substring", 2 | 3) if arg(0).ty.as_ref().is_some_and(is_string) => Facts {
                ty: Some(rules.text()),
                nullable: (0..args.len())
                    .all(|i| arg(i).nullable == Some(false))
                    .then_some(false),
            },
            ("grouping", n) if n > 0 => known(rules.grouping(), Some(false)),
            ("coalesce", n) if n > 0 => {
                let exprs: Vec<&Expr> = args
                    .iter()
                    .filter_map(|a| match a {
                        FunctionArgExpr::Expr(e) => Some(e),
                        _ => None,
                    })
                    .collect();
                let facts = rows.branches(&exprs);
                Facts {
                    ty: facts.ty.filter(|_| exprs.len() == n),
                    // Non-null when any argument is.
                    nullable: (0..n)
                        .any(|i| arg(i).nullable == Some(false))
                        .then_some(false),
                }
            }
            ("date_trunc", 2) => match arg(1).ty.and_then(|t| rules.date_trunc(&t)) {
                Some(ty) => known(ty, arg(1).nullable),
                None => Facts::default(),
            },
            _ => Facts::default(),
        }
    }
}

fn literal(value: &Value, engine: Engine) -> Facts {
    match value {
        Value::Number(n, _) if !n.contains(['.', 'e', 'E']) => match n.parse::<i64>() {
            Ok(v) if i32::try_from(v).is_ok() => known(DataType::Integer, Some(false)),
            Ok(_) => known(DataType::BigInt, Some(false)),
            Err(_) => Facts {
                ty: None,
                nullable: Some(false),
            },
        },
        Value::Number(n, _) if !n.contains(['e', 'E']) => Facts {
            ty: engine_rules::of(engine).decimal_literal(),
            nullable: Some(false),
        },
        Value::SingleQuotedString(_) => known(engine_rules::of(engine).text(), Some(false)),
        Value::Boolean(_) => known(DataType::Boolean, Some(false)),
        Value::Null => Facts {
            ty: None,
            nullable: Some(true),
        },
        _ => Facts {
            ty: None,
            nullable: Some(false),
        },
    }
}

fn is_string(ty: &DataType) -> bool {
    matches!(
        ty,
        DataType::Varchar(_) | DataType::Char(_) | DataType::Text
    )
}
