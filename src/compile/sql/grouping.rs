//! Grouping sets: which grouping expressions of a `GROUP BY ROLLUP (..)`, `CUBE (..)` or
//! `GROUPING SETS (..)` are left out of at least one set, and so are NULL in that set's rows
//! (the subtotals and the grand total).
//!
//! An expression is kept only where it is in every set: a plain `GROUP BY` item next to the
//! grouping sets, or an item of every set of a `GROUPING SETS`. Ordinals (`ROLLUP (1)`) stand for
//! the projection item they number; a bare name stands for the input column and for the output
//! alias it may also be. Where the grouping cannot be read, every output is unknown.

use sqlparser::ast::{Expr, GroupByExpr, GroupByWithModifier, Select, SelectItem, Value};

use super::same_column;
use crate::engine::Engine;

/// What the GROUP BY of a SELECT does to the nullability of the expressions it groups by.
pub enum Grouping {
    /// No grouping sets: grouping leaves every value as it is.
    Plain,
    /// These expressions are NULL in the rows of some grouping set.
    Rolled(Vec<Expr>),
    /// Grouping sets that are not modelled (`GROUP BY ALL WITH ROLLUP`): nothing is proven.
    Unknown,
}

/// The grouping of a SELECT.
pub fn of(select: &Select) -> Grouping {
    let (exprs, modifiers) = match &select.group_by {
        GroupByExpr::Expressions(exprs, modifiers) => (exprs, modifiers),
        GroupByExpr::All(modifiers) if modifiers.is_empty() => return Grouping::Plain,
        GroupByExpr::All(_) => return Grouping::Unknown,
    };
    let mut kept = Vec::new();
    let mut rolled = Vec::new();
    for expr in exprs {
        element(expr, &mut kept, &mut rolled);
    }
    for modifier in modifiers {
        match modifier {
            // `WITH ROLLUP` / `WITH CUBE` roll up every item of the list.
            GroupByWithModifier::Rollup | GroupByWithModifier::Cube => {
                rolled.append(&mut kept);
            }
            GroupByWithModifier::GroupingSets(expr) => element(expr, &mut kept, &mut rolled),
            GroupByWithModifier::Totals => return Grouping::Unknown,
        }
    }
    if rolled.is_empty() {
        return Grouping::Plain;
    }
    // Only what is certainly in every set keeps a value: a bare name may be the input column
    // or the output alias, so for a rolled name both are rolled, and for a kept one neither
    // interpretation is taken for the other, and only the very same spelling is kept.
    let kept = resolve(kept, select, false);
    let mut rolled = resolve(rolled, select, true);
    rolled.retain(|r| !kept.iter().any(|k| identical(k, r)));
    match rolled.is_empty() {
        true => Grouping::Plain,
        false => Grouping::Rolled(rolled),
    }
}

/// Sorts one item of a GROUP BY list into kept (in every set) and rolled (absent from one).
fn element(expr: &Expr, kept: &mut Vec<Expr>, rolled: &mut Vec<Expr>) {
    match expr {
        Expr::Rollup(sets) | Expr::Cube(sets) => {
            // Every prefix (ROLLUP) or subset (CUBE) includes the empty one.
            for e in sets.iter().flatten() {
                let mut inner = Vec::new();
                element(e, &mut inner, rolled);
                rolled.append(&mut inner);
            }
        }
        Expr::GroupingSets(sets) => {
            let mut in_sets: Vec<Vec<Expr>> = Vec::new();
            for set in sets {
                let mut present = Vec::new();
                for e in set {
                    element(e, &mut present, rolled);
                }
                in_sets.push(present);
            }
            for (i, set) in in_sets.iter().enumerate() {
                for e in set {
                    let everywhere = in_sets.iter().all(|other| other.contains(e));
                    match everywhere {
                        true if !in_sets[..i].iter().any(|s| s.contains(e)) => kept.push(e.clone()),
                        true => {}
                        false => rolled.push(e.clone()),
                    }
                }
            }
        }
        Expr::Nested(inner) => element(inner, kept, rolled),
        // `GROUPING SETS ((a, b))` may reach here as a tuple.
        Expr::Tuple(items) => items.iter().for_each(|e| element(e, kept, rolled)),
        other => kept.push(other.clone()),
    }
}

/// Replaces ordinals by the projection item they number; with `aliases`, adds for a bare name
/// that is also an output alias the expression behind the alias.
fn resolve(exprs: Vec<Expr>, select: &Select, aliases: bool) -> Vec<Expr> {
    let item = |i: usize| match select.projection.get(i) {
        Some(SelectItem::UnnamedExpr(e)) | Some(SelectItem::ExprWithAlias { expr: e, .. }) => {
            Some(e.clone())
        }
        _ => None,
    };
    let mut out = Vec::new();
    for expr in exprs {
        match &expr {
            Expr::Value(v) => match &v.value {
                Value::Number(n, _) => match n.parse::<usize>() {
                    Ok(i) if i >= 1 => out.extend(item(i - 1)),
                    _ => out.push(expr),
                },
                _ => out.push(expr),
            },
            Expr::Identifier(name) if aliases => {
                let aliased = select.projection.iter().find_map(|p| match p {
                    SelectItem::ExprWithAlias { alias, expr } if alias.value == name.value => {
                        Some(expr.clone())
                    }
                    _ => None,
                });
                out.extend(aliased);
                out.push(expr);
            }
            _ => out.push(expr),
        }
    }
    out
}

/// Whether an expression may be a grouping expression: the same column (qualified alike, or
/// either unqualified), or the same text ignoring case and parentheses. Erring towards "the same"
/// only makes more outputs nullable, never a wrong proof.
pub fn same(a: &Expr, b: &Expr, engine: Engine) -> bool {
    let (a, b) = (strip(a), strip(b));
    match (column(a), column(b)) {
        (Some((qa, na)), Some((qb, nb))) => {
            same_column(&na, &nb, engine)
                && match (qa, qb) {
                    (Some(qa), Some(qb)) => qa == qb,
                    _ => true,
                }
        }
        (None, None) => a.to_string().to_lowercase() == b.to_string().to_lowercase(),
        _ => false,
    }
}

/// Whether two grouping expressions are spelled the same (parentheses aside).
fn identical(a: &Expr, b: &Expr) -> bool {
    strip(a) == strip(b)
}

fn strip(expr: &Expr) -> &Expr {
    match expr {
        Expr::Nested(inner) => strip(inner),
        other => other,
    }
}

/// A column reference as (qualifier, name), compared case-insensitively.
fn column(expr: &Expr) -> Option<(Option<String>, String)> {
    match expr {
        Expr::Identifier(name) => Some((None, name.value.to_lowercase())),
        Expr::CompoundIdentifier(parts) if parts.len() >= 2 => Some((
            Some(parts[parts.len() - 2].value.to_lowercase()),
            parts[parts.len() - 1].value.to_lowercase(),
        )),
        _ => None,
    }
}
