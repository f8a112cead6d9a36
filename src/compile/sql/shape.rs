//! Output-shape inference: the columns a model's SQL produces, where that can be proven.
//!
//! Names only, and only from evidence: aliases, plain column references, `*` and `t.*` expanded
//! from an upstream shape that is complete (an enforced upstream declaration, or an upstream
//! whose own output was fully inferred), CTEs, subqueries, joins, set operations (the first
//! branch names the columns) and DuckDB's `* EXCLUDE (..)` / `* REPLACE (..)`. Anything else
//! leaves the shape unknown: missing metadata never becomes an error.

use sqlparser::ast::{
    ExcludeSelectItem, Expr, Ident, JoinConstraint, JoinOperator, Query, Select, SelectItem,
    SelectItemQualifiedWildcardKind, SetExpr, SetOperator, SetQuantifier, Spanned as _, Statement,
    TableAlias, TableFactor, TableWithJoins, WildcardAdditionalOptions,
};

use super::{grouping, interface, lineage, typing};
use super::{
    same_column, stored_name, ColumnRef, Interface, Issue, Lineage, Merged, OutColumn, Rel, Shape,
    Upstream, Use,
};
use crate::engine::Engine;

/// Infers the output of a model's statement, and the references that break an enforced
/// upstream interface. With `lineage`, also each output column's sources and the column uses
/// (only `sqb lineage` shows them; no check reads them).
pub fn infer(
    statement: &Statement,
    engine: Engine,
    upstream: &dyn Upstream,
    lineage: bool,
) -> (Shape, Vec<Issue>, Vec<Use>) {
    let Statement::Query(query) = statement else {
        return (None, Vec::new(), Vec::new());
    };
    let mut env = Env {
        engine,
        upstream,
        ctes: Vec::new(),
        interface: Vec::new(),
        issues: Vec::new(),
        uses: Vec::new(),
        order_by: None,
        lineage,
    };
    let shape = env.query(query);
    (shape, env.issues, env.uses)
}

struct Env<'a> {
    engine: Engine,
    upstream: &'a dyn Upstream,
    ctes: Vec<Cte>,
    /// The interfaces of the relations the query just read passes through whole
    /// (`SELECT * FROM o`): a CTE or subquery of it is bound by them too.
    interface: Vec<Interface>,
    issues: Vec<Issue>,
    uses: Vec<Use>,
    /// The ORDER BY of the query whose SELECT is being read.
    order_by: Option<Vec<Expr>>,
    /// Whether lineage (column sources and uses) is wanted.
    lineage: bool,
}

/// Whether a SELECT outputs exactly the columns of its relations' interfaces: only plain stars,
/// over relations that are all bound by one.
fn passes_through(select: &Select, relations: &[Rel]) -> bool {
    let plain = |o: &WildcardAdditionalOptions| {
        o.opt_ilike.is_none()
            && o.opt_exclude.is_none()
            && o.opt_except.is_none()
            && o.opt_replace.is_none()
            && o.opt_rename.is_none()
            && o.opt_alias.is_none()
    };
    !relations.is_empty()
        && relations.iter().all(|r| !r.interface.is_empty())
        && select.projection.iter().all(|item| match item {
            SelectItem::Wildcard(o) | SelectItem::QualifiedWildcard(_, o) => plain(o),
            _ => false,
        })
}

/// A CTE in scope: its name, shape, and the enforced interface it passes through, if any.
struct Cte {
    name: String,
    shape: Shape,
    interface: Vec<Interface>,
}

fn position(span: sqlparser::tokenizer::Span) -> Option<(usize, usize)> {
    (span.start.line > 0).then_some((span.start.line as usize, span.start.column as usize))
}

impl Env<'_> {
    fn query(&mut self, query: &Query) -> Shape {
        let depth = self.ctes.len();
        if let Some(with) = &query.with {
            // Under WITH RECURSIVE every name of the list is in scope in every definition
            // (itself and later ones too): unknown until it is read, never an upstream's.
            if with.recursive {
                self.ctes.extend(with.cte_tables.iter().map(|cte| Cte {
                    name: cte.alias.name.value.to_lowercase(),
                    shape: None,
                    interface: Vec::new(),
                }));
            }
            for (i, cte) in with.cte_tables.iter().enumerate() {
                let shape = self.query(&cte.query);
                let mut interface = std::mem::take(&mut self.interface);
                if !cte.alias.columns.is_empty() {
                    interface.clear();
                }
                let read = Cte {
                    name: cte.alias.name.value.to_lowercase(),
                    shape: rename(shape, &cte.alias, self.engine),
                    interface,
                };
                match with.recursive {
                    true => self.ctes[depth + i] = read,
                    false => self.ctes.push(read),
                }
            }
        }
        let outer_order = std::mem::replace(&mut self.order_by, lineage::order_by(query));
        let shape = self.set_expr(&query.body);
        self.order_by = outer_order;
        self.ctes.truncate(depth);
        shape
    }

    fn set_expr(&mut self, body: &SetExpr) -> Shape {
        self.interface.clear();
        match body {
            SetExpr::Select(select) => self.select(select),
            SetExpr::Query(query) => self.query(query),
            // The first branch names the columns of a UNION/INTERSECT/EXCEPT; a type holds only
            // where every branch proves the same one; nullability follows the operator.
            SetExpr::SetOperation {
                op,
                set_quantifier,
                left,
                right,
            } => {
                let (left, right) = (self.set_expr(left), self.set_expr(right));
                self.interface.clear();
                let left = left?;
                if matches!(
                    set_quantifier,
                    SetQuantifier::ByName
                        | SetQuantifier::AllByName
                        | SetQuantifier::DistinctByName
                ) {
                    return by_name(*op, left, right?, self.engine);
                }
                Some(
                    left.into_iter()
                        .enumerate()
                        .map(|(i, c)| combine(*op, c, right.as_ref().and_then(|r| r.get(i))))
                        .collect(),
                )
            }
            _ => None,
        }
    }

    fn cte(&self, parts: &[Ident]) -> Option<&Cte> {
        match parts {
            [single] if single.quote_style.is_none() => {
                let name = single.value.to_lowercase();
                self.ctes.iter().rev().find(|c| c.name == name)
            }
            _ => None,
        }
    }

    /// Pushes the relations of one FROM factor; `false` when `*` over them is not modelled.
    fn relation(&mut self, factor: &TableFactor, out: &mut Vec<Rel>, merged: &mut Merged) -> bool {
        match factor {
            TableFactor::Table {
                name,
                alias,
                args: None,
                ..
            } => {
                let parts: Vec<Ident> = name
                    .0
                    .iter()
                    .filter_map(|p| p.as_ident().cloned())
                    .collect();
                let (shape, facts, interface) = match self.cte(&parts) {
                    Some(cte) => (
                        cte.shape.clone(),
                        cte.shape.clone().unwrap_or_default(),
                        cte.interface.clone(),
                    ),
                    None => (
                        self.upstream.shape(&parts),
                        self.upstream.facts(&parts),
                        self.upstream.interface(&parts).into_iter().collect(),
                    ),
                };
                let key = match alias {
                    Some(a) => a.name.value.to_lowercase(),
                    None => parts
                        .last()
                        .map_or(String::new(), |p| p.value.to_lowercase()),
                };
                let mut rel = aliased(key, shape, facts, alias.as_ref(), self.engine);
                if alias.as_ref().is_none_or(|a| a.columns.is_empty()) {
                    rel.interface = interface;
                }
                if self.cte(&parts).is_none() {
                    rel.origin = Some(self.upstream.origin(&parts));
                }
                out.push(rel);
            }
            TableFactor::Derived {
                subquery, alias, ..
            } => {
                let shape = self.query(subquery);
                let interface = std::mem::take(&mut self.interface);
                let key = alias
                    .as_ref()
                    .map_or(String::new(), |a| a.name.value.to_lowercase());
                let facts = shape.clone().unwrap_or_default();
                let mut rel = aliased(key, shape, facts, alias.as_ref(), self.engine);
                if alias.as_ref().is_none_or(|a| a.columns.is_empty()) {
                    rel.interface = interface;
                }
                out.push(rel);
            }
            TableFactor::NestedJoin {
                table_with_joins,
                alias: None,
            } => return self.from(table_with_joins, out, merged),
            _ => out.push(Rel {
                key: String::new(),
                shape: None,
                facts: Vec::new(),
                outer: false,
                interface: Vec::new(),
                origin: None,
            }),
        }
        true
    }

    /// Pushes the relations of one FROM item, each marked nullable where an outer join makes it
    /// so; `false` when a join changes which columns `*` yields (USING, NATURAL, semi joins..).
    /// Every relation is pushed and marked even then: what a column reads must stay sound.
    fn from(&mut self, item: &TableWithJoins, out: &mut Vec<Rel>, merged: &mut Merged) -> bool {
        let first = out.len();
        let mut star_ok = self.relation(&item.relation, out, merged);
        for join in &item.joins {
            let join_kind = JoinKind::of(&join.join_operator);
            star_ok &= join_kind.star;
            merged.add(&join.join_operator, self.engine);
            let before = out.len();
            star_ok &= self.relation(&join.relation, out, merged);
            // Outer-joined sides become nullable; an unmodelled join proves nothing of either.
            for (i, rel) in out.iter_mut().enumerate().skip(first) {
                let outer = match i < before {
                    true => join_kind.left_outer,
                    false => join_kind.right_outer,
                };
                if join_kind.unmodelled {
                    rel.facts.iter_mut().for_each(|c| c.nullable = None);
                } else if outer {
                    rel.outer = true;
                }
            }
        }
        star_ok
    }

    fn select(&mut self, select: &Select) -> Shape {
        let mut relations = Vec::new();
        let mut star_ok = true;
        let mut merged = Merged::default();
        for item in &select.from {
            star_ok &= self.from(item, &mut relations, &mut merged);
        }
        self.interface.clear();
        let order_by = self.order_by.take();
        if relations.iter().any(|r| !r.interface.is_empty()) {
            let outputs = output_names(select, self.engine);
            self.issues.extend(interface::check(
                select,
                order_by.as_deref(),
                &relations,
                &outputs,
                &merged,
                self.engine,
            ));
        }
        if self.lineage {
            self.uses.extend(lineage::uses(
                select,
                order_by.as_deref(),
                (&relations, &merged),
                self.engine,
            ));
        }
        let not_null = typing::not_null_filters(select.selection.as_ref(), self.engine);
        let grouping = grouping::of(select);
        let rolled = match &grouping {
            grouping::Grouping::Rolled(rolled) => rolled.as_slice(),
            _ => &[],
        };
        let scope = typing::Scope {
            rels: &relations,
            merged: &merged,
            engine: self.engine,
            not_null: &not_null,
            rolled,
        };
        let mut columns = Vec::with_capacity(select.projection.len());
        for item in &select.projection {
            let pos = position(item.span());
            match item {
                SelectItem::ExprWithAlias { alias, expr } => {
                    let facts = scope.expr(expr);
                    columns.push(OutColumn {
                        name: stored_name(alias, self.engine),
                        position: pos,
                        ty: facts.ty,
                        nullable: facts.nullable,
                        lineage: self.refs(expr, &relations, &merged),
                    });
                }
                SelectItem::UnnamedExpr(expr) => {
                    let name = crate::engine_rules::of(self.engine).implicit_name(expr)?;
                    let facts = scope.expr(expr);
                    columns.push(OutColumn {
                        name,
                        position: pos,
                        ty: facts.ty,
                        nullable: facts.nullable,
                        lineage: self.refs(expr, &relations, &merged),
                    });
                }
                SelectItem::Wildcard(options) => {
                    if !star_ok {
                        return None;
                    }
                    let mut all = Vec::new();
                    for rel in &relations {
                        all.extend(outer(self.traced(rel, rel.shape.clone()?), rel.outer));
                    }
                    let start = columns.len();
                    columns.extend(self.modify(all, options, pos)?);
                    self.replaced(
                        &mut columns[start..],
                        options,
                        &scope,
                        (&relations, &merged),
                    );
                }
                SelectItem::QualifiedWildcard(
                    SelectItemQualifiedWildcardKind::ObjectName(name),
                    options,
                ) => {
                    let key = name
                        .0
                        .last()
                        .and_then(|p| p.as_ident())
                        .map(|i| i.value.to_lowercase())?;
                    let rel = relations.iter().find(|r| r.key == key)?;
                    let start = columns.len();
                    columns.extend(self.modify(
                        outer(self.traced(rel, rel.shape.clone()?), rel.outer),
                        options,
                        pos,
                    )?);
                    self.replaced(
                        &mut columns[start..],
                        options,
                        &scope,
                        (&relations, &merged),
                    );
                }
                _ => return None,
            }
        }
        // A star under grouping sets expands to grouping columns that may be rolled up.
        let starred = select.projection.iter().any(|item| {
            matches!(
                item,
                SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..)
            )
        });
        match grouping {
            grouping::Grouping::Unknown => columns.iter_mut().for_each(|c| c.nullable = None),
            grouping::Grouping::Rolled(_) if starred => columns
                .iter_mut()
                .filter(|c| c.nullable == Some(false))
                .for_each(|c| c.nullable = None),
            _ => {}
        }
        if star_ok && passes_through(select, &relations) {
            for bound in relations.iter().flat_map(|r| &r.interface) {
                if !self.interface.contains(bound) {
                    self.interface.push(bound.clone());
                }
            }
        }
        Some(columns)
    }

    /// The columns an expression reads, when lineage is wanted.
    fn refs(&self, expr: &Expr, rels: &[Rel], merged: &Merged) -> Lineage {
        if self.lineage {
            lineage::refs(expr, rels, merged, self.engine)
        } else {
            Lineage::default()
        }
    }

    /// Star-expanded columns of a model, source or external relation come from that
    /// relation's columns of the same name; those of a CTE or subquery keep their own lineage.
    fn traced(&self, rel: &Rel, columns: Vec<OutColumn>) -> Vec<OutColumn> {
        let Some((kind, resource)) = rel.origin.as_ref().filter(|_| self.lineage) else {
            return columns;
        };
        columns
            .into_iter()
            .map(|c| OutColumn {
                lineage: Lineage::of(ColumnRef {
                    resource_type: kind,
                    resource: resource.clone(),
                    column: c.name.clone(),
                }),
                ..c
            })
            .collect()
    }

    /// What `REPLACE (expr AS col)` proves of each replaced column.
    fn replaced(
        &self,
        columns: &mut [OutColumn],
        options: &WildcardAdditionalOptions,
        scope: &typing::Scope<'_>,
        (rels, merged): (&[Rel], &Merged),
    ) {
        for item in options.opt_replace.iter().flat_map(|r| r.items.iter()) {
            let name = stored_name(&item.column_name, self.engine);
            if let Some(column) = columns
                .iter_mut()
                .find(|c| same_column(&c.name, &name, self.engine))
            {
                let facts = scope.expr(&item.expr);
                column.ty = facts.ty;
                column.nullable = facts.nullable;
                column.lineage = self.refs(&item.expr, rels, merged);
            }
        }
    }

    /// Applies `EXCLUDE` and `REPLACE` to an expanded star; other modifiers are not modelled.
    fn modify(
        &self,
        columns: Vec<OutColumn>,
        options: &WildcardAdditionalOptions,
        pos: Option<(usize, usize)>,
    ) -> Option<Vec<OutColumn>> {
        if options.opt_ilike.is_some()
            || options.opt_except.is_some()
            || options.opt_rename.is_some()
            || options.opt_alias.is_some()
        {
            return None;
        }
        let last = |n: &sqlparser::ast::ObjectName| {
            n.0.last()
                .and_then(|p| p.as_ident())
                .map(|i| stored_name(i, self.engine))
        };
        let excluded: Vec<String> = match &options.opt_exclude {
            None => Vec::new(),
            Some(ExcludeSelectItem::Single(name)) => vec![last(name)?],
            Some(ExcludeSelectItem::Multiple(names)) => {
                names.iter().map(last).collect::<Option<_>>()?
            }
        };
        let replaced: Vec<String> = options
            .opt_replace
            .iter()
            .flat_map(|r| {
                r.items
                    .iter()
                    .map(|i| stored_name(&i.column_name, self.engine))
            })
            .collect();
        // REPLACE keeps each column's name and place; what was proven of it no longer holds.
        Some(
            columns
                .into_iter()
                .filter(|c| {
                    !excluded
                        .iter()
                        .any(|e| same_column(e, &c.name, self.engine))
                })
                .map(|c| {
                    match replaced
                        .iter()
                        .any(|r| same_column(r, &c.name, self.engine))
                    {
                        true => OutColumn {
                            position: pos,
                            ty: None,
                            nullable: None,
                            ..c
                        },
                        false => OutColumn { position: pos, ..c },
                    }
                })
                .collect(),
        )
    }
}

/// What a join does to the relations on each side of it.
struct JoinKind {
    /// `*` over the join is the columns of both sides (not so with USING, NATURAL, semi joins).
    star: bool,
    left_outer: bool,
    right_outer: bool,
    /// Not modelled (ASOF and others): nothing is proven of either side.
    unmodelled: bool,
}

impl JoinKind {
    fn of(operator: &JoinOperator) -> Self {
        let plain = |c: &JoinConstraint| matches!(c, JoinConstraint::On(_) | JoinConstraint::None);
        let kind = |star, left_outer, right_outer| JoinKind {
            star,
            left_outer,
            right_outer,
            unmodelled: false,
        };
        match operator {
            JoinOperator::Join(c) | JoinOperator::Inner(c) | JoinOperator::CrossJoin(c) => {
                kind(plain(c), false, false)
            }
            JoinOperator::Left(c) | JoinOperator::LeftOuter(c) => kind(plain(c), false, true),
            JoinOperator::Right(c) | JoinOperator::RightOuter(c) => kind(plain(c), true, false),
            JoinOperator::FullOuter(c) => kind(plain(c), true, true),
            // A semi or anti join only filters the left side; the right side is not output.
            JoinOperator::Semi(_)
            | JoinOperator::LeftSemi(_)
            | JoinOperator::Anti(_)
            | JoinOperator::LeftAnti(_) => kind(false, false, false),
            JoinOperator::CrossApply => kind(false, false, false),
            JoinOperator::OuterApply => kind(false, false, true),
            _ => JoinKind {
                unmodelled: true,
                ..kind(false, false, false)
            },
        }
    }
}

/// A column of a set operation, from its column in the first branch and in the second.
///
/// `A UNION B` has the rows of both: non-null only where both are, nullable where either is.
/// `A EXCEPT B` has only rows of A: A's nullability. `A INTERSECT B` has only rows found in both:
/// non-null where either side is, nullable only where both are. Lineage is both branches' for
/// UNION and INTERSECT (the values come from either); EXCEPT's values come from A alone.
fn combine(op: SetOperator, first: OutColumn, other: Option<&OutColumn>) -> OutColumn {
    let theirs = other.and_then(|o| o.nullable);
    let nullable = match op {
        SetOperator::Except | SetOperator::Minus => first.nullable,
        SetOperator::Intersect => match (first.nullable, theirs) {
            (Some(false), _) | (_, Some(false)) => Some(false),
            (Some(true), Some(true)) => Some(true),
            _ => None,
        },
        SetOperator::Union => match (first.nullable, theirs) {
            (Some(false), Some(false)) => Some(false),
            (Some(true), _) | (_, Some(true)) => Some(true),
            _ => None,
        },
    };
    let ty = first
        .ty
        .clone()
        .filter(|t| other.is_some_and(|o| o.ty.as_ref() == Some(t)));
    let mut lineage = first.lineage;
    if let Some(other) = other.filter(|_| !matches!(op, SetOperator::Except | SetOperator::Minus)) {
        lineage.merge(&other.lineage);
    }
    OutColumn {
        ty,
        nullable,
        lineage,
        ..first
    }
}

/// DuckDB's `UNION [ALL] BY NAME`: columns meet by name, the first branch's in its order, then
/// the second's new ones; a column one branch lacks is NULL in that branch's rows.
fn by_name(op: SetOperator, left: Vec<OutColumn>, right: Vec<OutColumn>, engine: Engine) -> Shape {
    if op != SetOperator::Union {
        return None;
    }
    let find = |columns: &[OutColumn], name: &str| {
        columns
            .iter()
            .position(|c| same_column(&c.name, name, engine))
    };
    let filled = |c: OutColumn| OutColumn {
        nullable: Some(true),
        ..c
    };
    let mut out: Vec<OutColumn> = Vec::with_capacity(left.len());
    for column in &left {
        out.push(match find(&right, &column.name) {
            Some(i) => combine(op, column.clone(), Some(&right[i])),
            None => filled(column.clone()),
        });
    }
    for column in right {
        if find(&left, &column.name).is_none() {
            out.push(filled(column));
        }
    }
    Some(out)
}

/// A relation under its alias; `AS t (a, b)` renames columns, and then only the shape is kept.
fn aliased(
    key: String,
    shape: Shape,
    facts: Vec<OutColumn>,
    alias: Option<&TableAlias>,
    engine: Engine,
) -> Rel {
    let (shape, facts) = match alias {
        Some(alias) if !alias.columns.is_empty() => {
            let shape = rename(shape, alias, engine);
            let facts = shape.clone().unwrap_or_default();
            (shape, facts)
        }
        _ => (shape, facts),
    };
    Rel {
        key,
        shape,
        facts,
        outer: false,
        interface: Vec::new(),
        origin: None,
    }
}

/// Columns of an outer-joined side may be null.
fn outer(columns: Vec<OutColumn>, outer: bool) -> Vec<OutColumn> {
    if !outer {
        return columns;
    }
    columns
        .into_iter()
        .map(|c| OutColumn {
            nullable: Some(true),
            ..c
        })
        .collect()
}

/// `AS t (a, b)` renames the first columns of a relation.
fn rename(shape: Shape, alias: &TableAlias, engine: Engine) -> Shape {
    if alias.columns.is_empty() {
        return shape;
    }
    let mut columns = shape?;
    if alias.columns.len() > columns.len() {
        return None;
    }
    for (column, new) in columns.iter_mut().zip(&alias.columns) {
        column.name = stored_name(&new.name, engine);
    }
    Some(columns)
}

/// The aliases a SELECT gives its outputs (ORDER BY and GROUP BY may name them).
fn output_names(select: &Select, engine: Engine) -> Vec<String> {
    select
        .projection
        .iter()
        .filter_map(|item| match item {
            SelectItem::ExprWithAlias { alias, .. } => Some(stored_name(alias, engine)),
            _ => None,
        })
        .collect()
}
