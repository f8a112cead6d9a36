//! Column-level lineage: which upstream columns each output column is computed from, and which
//! columns a SELECT uses outside its projection (joins, filters, grouping, windows, ordering).

use std::ops::ControlFlow;

use sqlparser::ast::{
    Expr, FunctionArguments, GroupByExpr, Ident, JoinConstraint, OrderByKind, Query, Select,
    SelectItem, Visit, Visitor, WindowType,
};

use super::{
    same_column, stored_name, ColumnRef, Lineage, Merged, OutColumn, Rel, Unattributed, Use,
};
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
pub(super) fn refs(expr: &Expr, rels: &[Rel], merged: &Merged, engine: Engine) -> Lineage {
    let mut out = Lineage::default();
    for (rel, col) in own_level_columns(expr) {
        out.merge(&resolve(rel.as_ref(), &col, rels, merged, engine));
    }
    out.columns.sort();
    out.unattributed.sort();
    out
}

/// Whether a relation is known to hold a column: its shape has it, or it declares it.
fn holds(rel: &Rel, name: &str, engine: Engine) -> bool {
    let has = |cols: &[OutColumn]| cols.iter().any(|c| same_column(&c.name, name, engine));
    rel.shape.as_deref().is_some_and(has) || has(&rel.facts)
}

/// What a column reference reads. An unqualified one belongs to the one relation known to
/// hold it (valid SQL has no other that does), else to the one relation of unknown shape;
/// where more than one may hold it, it is unattributed, with them as candidates. A column that
/// `USING` or `NATURAL` merges reads every side that holds it.
fn resolve(
    relation: Option<&Ident>,
    column: &Ident,
    rels: &[Rel],
    merged: &Merged,
    engine: Engine,
) -> Lineage {
    let name = stored_name(column, engine);
    let from = |rel: &Rel| traced(rel, &name, engine);
    if let Some(r) = relation {
        let key = r.value.to_lowercase();
        return rels
            .iter()
            .find(|x| x.key == key)
            .map(from)
            .unwrap_or_default();
    }
    if let [one] = rels {
        return from(one);
    }
    let holders: Vec<&Rel> = rels.iter().filter(|r| holds(r, &name, engine)).collect();
    let candidates = match holders.as_slice() {
        [one] => return from(one),
        [] => rels.iter().filter(|r| r.shape.is_none()).collect(),
        _ if merged.has(&name, engine) => {
            let mut out = Lineage::default();
            holders.iter().for_each(|r| out.merge(&from(r)));
            return out;
        }
        _ => holders,
    };
    match candidates.as_slice() {
        [] => Lineage::default(),
        [one] => from(one),
        many => Lineage {
            columns: Vec::new(),
            unattributed: vec![Unattributed {
                column: name.clone(),
                candidates: many.iter().map(|r| candidate(r)).collect(),
            }],
        },
    }
}

/// A candidate relation by the name a reader knows it by.
fn candidate(rel: &Rel) -> String {
    match &rel.origin {
        Some((_, resource)) => resource.clone(),
        None => rel.key.clone(),
    }
}

/// What a column of one relation reads: the column itself for a model, source or external
/// relation; its own lineage for a CTE or subquery.
fn traced(rel: &Rel, name: &str, engine: Engine) -> Lineage {
    match &rel.origin {
        Some((kind, resource)) => Lineage::of(ColumnRef {
            resource_type: kind,
            resource: resource.clone(),
            column: name.to_string(),
        }),
        None => rel
            .facts
            .iter()
            .find(|c| same_column(&c.name, name, engine))
            .map(|c| c.lineage.clone())
            .unwrap_or_default(),
    }
}

/// Columns a SELECT uses outside its projection; `order_by` is its query's ORDER BY.
pub(super) fn uses(
    select: &Select,
    order_by: Option<&[Expr]>,
    (rels, merged): (&[Rel], &Merged),
    engine: Engine,
) -> Vec<Use> {
    let mut out = Vec::new();
    let mut add = |context: &'static str, expr: &Expr| {
        out.extend(
            refs(expr, rels, merged, engine)
                .columns
                .into_iter()
                .map(|column| Use { context, column }),
        );
    };
    for item in &select.from {
        for join in &item.joins {
            match constraint(&join.join_operator) {
                Some(JoinConstraint::On(on)) => add("join_on", on),
                Some(JoinConstraint::Using(names) | JoinConstraint::UsingAlias(names, _)) => {
                    for ident in names.iter().filter_map(|n| n.0.last()?.as_ident()) {
                        add("join_using", &Expr::Identifier(ident.clone()));
                    }
                }
                Some(JoinConstraint::Natural) => {
                    for name in shared_columns(rels, engine) {
                        add(
                            "join_using",
                            &Expr::Identifier(Ident::with_quote('"', name)),
                        );
                    }
                }
                _ => {}
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

fn constraint(op: &sqlparser::ast::JoinOperator) -> Option<&JoinConstraint> {
    use sqlparser::ast::JoinOperator::*;
    match op {
        Join(c) | Inner(c) | Left(c) | LeftOuter(c) | Right(c) | RightOuter(c) | FullOuter(c)
        | CrossJoin(c) | Semi(c) | LeftSemi(c) | RightSemi(c) | Anti(c) | LeftAnti(c)
        | RightAnti(c) => Some(c),
        _ => None,
    }
}

/// The column names more than one relation in scope holds: what a NATURAL join joins on
/// (over-approximated when the scope has more than its two sides).
fn shared_columns(rels: &[Rel], engine: Engine) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut shared = Vec::new();
    for rel in rels {
        let own = rel.shape.as_deref().unwrap_or(&rel.facts);
        for c in own {
            if names.iter().any(|n| same_column(n, &c.name, engine)) {
                if !shared
                    .iter()
                    .any(|n: &String| same_column(n, &c.name, engine))
                {
                    shared.push(c.name.clone());
                }
            } else {
                names.push(c.name.clone());
            }
        }
    }
    shared
}

/// The expressions of a query's ORDER BY.
pub(super) fn order_by(query: &Query) -> Option<Vec<Expr>> {
    match &query.order_by.as_ref()?.kind {
        OrderByKind::Expressions(list) => Some(list.iter().map(|o| o.expr.clone()).collect()),
        _ => None,
    }
}
