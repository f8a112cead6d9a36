//! Column-level lineage: which upstream columns each output column is computed from, and which
//! columns a SELECT uses outside its projection (joins, filters, grouping, windows, ordering).

use std::ops::ControlFlow;

use sqlparser::ast::{
    Expr, FunctionArguments, GroupByExpr, Ident, OrderByKind, Query, Select, SelectItem, Visit,
    Visitor, WindowType,
};

use super::{same_column, stored_name, ColumnRef, Rel, Use};
use crate::engine::Engine;

/// Column references of an expression at its own level (not inside subqueries or lambdas).
#[derive(Default)]
struct Idents {
    depth: usize,
    found: Vec<(Option<Ident>, Ident)>,
}

impl Visitor for Idents {
    type Break = ();

    fn pre_visit_query(&mut self, _: &Query) -> ControlFlow<()> {
        self.depth += 1;
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _: &Query) -> ControlFlow<()> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<()> {
        match expr {
            Expr::Lambda(_) => self.depth += 1,
            _ if self.depth > 0 => {}
            Expr::Identifier(i) => self.found.push((None, i.clone())),
            Expr::CompoundIdentifier(parts) if parts.len() == 2 => {
                self.found.push((Some(parts[0].clone()), parts[1].clone()))
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, expr: &Expr) -> ControlFlow<()> {
        if matches!(expr, Expr::Lambda(_)) {
            self.depth -= 1;
        }
        ControlFlow::Continue(())
    }
}

/// The column references of a node at its own level: `(relation, column)` for `t.c`, `(None, c)`
/// for `c`; subqueries and lambdas have scopes of their own and are not looked into.
pub(super) fn own_level_columns(node: &impl Visit) -> Vec<(Option<Ident>, Ident)> {
    let mut idents = Idents::default();
    let _ = node.visit(&mut idents);
    idents.found
}

/// The upstream columns an expression reads, through CTEs and subqueries in FROM.
pub(super) fn refs(expr: &Expr, rels: &[Rel], engine: Engine) -> Vec<ColumnRef> {
    let mut out: Vec<ColumnRef> = own_level_columns(expr)
        .iter()
        .flat_map(|(rel, col)| resolve(rel.as_ref(), col, rels, engine))
        .collect();
    out.sort();
    out.dedup();
    out
}

fn resolve(
    relation: Option<&Ident>,
    column: &Ident,
    rels: &[Rel],
    engine: Engine,
) -> Vec<ColumnRef> {
    let name = stored_name(column, engine);
    let rel = match relation {
        Some(r) => rels.iter().find(|x| x.key == r.value.to_lowercase()),
        None if rels.len() == 1 => rels.first(),
        None => {
            let holders: Vec<&Rel> = rels
                .iter()
                .filter(|r| {
                    r.shape
                        .as_ref()
                        .is_some_and(|s| s.iter().any(|c| same_column(&c.name, &name, engine)))
                })
                .collect();
            match holders.as_slice() {
                [one] => Some(*one),
                // One relation of unknown shape may hold it, if no other one does.
                [] => match rels
                    .iter()
                    .filter(|r| r.shape.is_none())
                    .collect::<Vec<_>>()
                    .as_slice()
                {
                    [one] => Some(*one),
                    _ => None,
                },
                _ => None,
            }
        }
    };
    let Some(rel) = rel else { return Vec::new() };
    match &rel.origin {
        Some((kind, resource)) => vec![ColumnRef {
            resource_type: kind,
            resource: resource.clone(),
            column: name,
        }],
        None => rel
            .facts
            .iter()
            .find(|c| same_column(&c.name, &name, engine))
            .map(|c| c.lineage.clone())
            .unwrap_or_default(),
    }
}

/// Columns a SELECT uses outside its projection; `order_by` is its query's ORDER BY.
pub(super) fn uses(
    select: &Select,
    order_by: Option<&[Expr]>,
    rels: &[Rel],
    engine: Engine,
) -> Vec<Use> {
    let mut out = Vec::new();
    let mut add = |context: &'static str, expr: &Expr| {
        out.extend(
            refs(expr, rels, engine)
                .into_iter()
                .map(|column| Use { context, column }),
        );
    };
    for item in &select.from {
        for join in &item.joins {
            if let Some(on) = join_on(&join.join_operator) {
                add("join_on", on);
            }
        }
    }
    if let Some(e) = &select.selection {
        add("where", e);
    }
    if let GroupByExpr::Expressions(exprs, _) = &select.group_by {
        exprs.iter().for_each(|e| add("group_by", e));
    }
    if let Some(e) = &select.having {
        add("having", e);
    }
    if let Some(e) = &select.qualify {
        add("qualify", e);
    }
    for item in &select.projection {
        let expr = match item {
            SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => e,
            _ => continue,
        };
        if let Expr::Function(f) = expr {
            if let Some(WindowType::WindowSpec(spec)) = &f.over {
                spec.partition_by
                    .iter()
                    .for_each(|e| add("window_partition_by", e));
                spec.order_by
                    .iter()
                    .for_each(|o| add("window_order_by", &o.expr));
            }
            let _ = matches!(f.args, FunctionArguments::None);
        }
    }
    for e in order_by.unwrap_or_default() {
        add("order_by", e);
    }
    out.sort();
    out.dedup();
    out
}

fn join_on(op: &sqlparser::ast::JoinOperator) -> Option<&Expr> {
    use sqlparser::ast::{JoinConstraint, JoinOperator::*};
    let constraint = match op {
        Join(c) | Inner(c) | Left(c) | LeftOuter(c) | Right(c) | RightOuter(c) | FullOuter(c)
        | CrossJoin(c) | Semi(c) | LeftSemi(c) | RightSemi(c) | Anti(c) | LeftAnti(c)
        | RightAnti(c) => c,
        _ => return None,
    };
    match constraint {
        JoinConstraint::On(e) => Some(e),
        _ => None,
    }
}

/// The expressions of a query's ORDER BY.
pub(super) fn order_by(query: &Query) -> Option<Vec<Expr>> {
    match &query.order_by.as_ref()?.kind {
        OrderByKind::Expressions(list) => Some(list.iter().map(|o| o.expr.clone()).collect()),
        _ => None,
    }
}
