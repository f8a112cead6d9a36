//! Output-shape inference: the columns a model's SQL produces, where that can be proven.
//!
//! Names only, and only from evidence: aliases, plain column references, `*` and `t.*` expanded
//! from an upstream shape that is complete (an enforced upstream declaration, or an upstream
//! whose own output was fully inferred), CTEs, subqueries, joins, set operations (the first
//! branch names the columns) and DuckDB's `* EXCLUDE (..)` / `* REPLACE (..)`. Anything else
//! leaves the shape unknown: missing metadata never becomes an error.

use sqlparser::ast::{
    ExcludeSelectItem, Expr, Ident, JoinConstraint, JoinOperator, Query, Select, SelectItem,
    SelectItemQualifiedWildcardKind, SetExpr, Spanned as _, Statement, TableAlias, TableFactor,
    TableWithJoins, WildcardAdditionalOptions,
};

use crate::engine::Engine;

/// One output column: its name as the engine stores it, and whether it was quoted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutColumn {
    pub name: String,
    /// 1-based line and column of the projection item, where known.
    pub position: Option<(usize, usize)>,
}

/// A complete output shape; `None` wherever a shape is not proven.
pub type Shape = Option<Vec<OutColumn>>;

/// What a table reference's upstream provides: the shape of a model or CTE, by name.
pub trait Upstream {
    fn shape(&self, parts: &[Ident]) -> Shape;
}

/// Infers the output of a model's statement.
pub fn infer(statement: &Statement, engine: Engine, upstream: &dyn Upstream) -> Shape {
    let Statement::Query(query) = statement else {
        return None;
    };
    let mut env = Env {
        engine,
        upstream,
        ctes: Vec::new(),
    };
    env.query(query)
}

struct Env<'a> {
    engine: Engine,
    upstream: &'a dyn Upstream,
    ctes: Vec<(String, Shape)>,
}

/// The name an unquoted or quoted identifier gets in the catalog: Postgres folds unquoted names
/// to lower case; DuckDB keeps them as written.
pub fn stored_name(ident: &Ident, engine: Engine) -> String {
    match (ident.quote_style, engine) {
        (None, Engine::Postgres) => ident.value.to_lowercase(),
        _ => ident.value.clone(),
    }
}

/// Whether two stored names are the same column on this engine (DuckDB compares case-insensitively).
pub fn same_column(a: &str, b: &str, engine: Engine) -> bool {
    match engine {
        Engine::Postgres => a == b,
        Engine::DuckDb => a.eq_ignore_ascii_case(b),
    }
}

fn position(span: sqlparser::tokenizer::Span) -> Option<(usize, usize)> {
    (span.start.line > 0).then_some((span.start.line as usize, span.start.column as usize))
}

impl Env<'_> {
    fn query(&mut self, query: &Query) -> Shape {
        let depth = self.ctes.len();
        if let Some(with) = &query.with {
            for cte in &with.cte_tables {
                let shape = self.query(&cte.query);
                let shape = rename(shape, &cte.alias, self.engine);
                self.ctes.push((cte.alias.name.value.to_lowercase(), shape));
            }
        }
        let shape = self.set_expr(&query.body);
        self.ctes.truncate(depth);
        shape
    }

    fn set_expr(&mut self, body: &SetExpr) -> Shape {
        match body {
            SetExpr::Select(select) => self.select(select),
            SetExpr::Query(query) => self.query(query),
            // The first branch names the columns of a UNION/INTERSECT/EXCEPT.
            SetExpr::SetOperation { left, .. } => self.set_expr(left),
            _ => None,
        }
    }

    fn relation(&mut self, factor: &TableFactor, out: &mut Vec<(String, Shape)>) -> Option<()> {
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
                let cte = match parts.as_slice() {
                    [single] if single.quote_style.is_none() => self
                        .ctes
                        .iter()
                        .rev()
                        .find(|(n, _)| *n == single.value.to_lowercase())
                        .map(|(_, s)| s.clone()),
                    _ => None,
                };
                let shape = cte.unwrap_or_else(|| self.upstream.shape(&parts));
                let key = alias.as_ref().map_or_else(
                    || {
                        parts
                            .last()
                            .map_or(String::new(), |p| p.value.to_lowercase())
                    },
                    |a| a.name.value.to_lowercase(),
                );
                let shape = match alias {
                    Some(alias) => rename(shape, alias, self.engine),
                    None => shape,
                };
                out.push((key, shape));
            }
            TableFactor::Derived {
                subquery, alias, ..
            } => {
                let shape = self.query(subquery);
                let key = alias
                    .as_ref()
                    .map_or(String::new(), |a| a.name.value.to_lowercase());
                let shape = match alias {
                    Some(alias) => rename(shape, alias, self.engine),
                    None => shape,
                };
                out.push((key, shape));
            }
            TableFactor::NestedJoin {
                table_with_joins,
                alias: None,
            } => self.from(table_with_joins, out)?,
            _ => out.push((String::new(), None)),
        }
        Some(())
    }

    /// The relations of one FROM item; `None` when a join changes which columns `*` yields.
    fn from(&mut self, item: &TableWithJoins, out: &mut Vec<(String, Shape)>) -> Option<()> {
        self.relation(&item.relation, out)?;
        for join in &item.joins {
            let constraint = match &join.join_operator {
                JoinOperator::Join(c)
                | JoinOperator::Inner(c)
                | JoinOperator::Left(c)
                | JoinOperator::LeftOuter(c)
                | JoinOperator::Right(c)
                | JoinOperator::RightOuter(c)
                | JoinOperator::FullOuter(c)
                | JoinOperator::CrossJoin(c) => c,
                _ => return None,
            };
            if !matches!(constraint, JoinConstraint::On(_) | JoinConstraint::None) {
                return None;
            }
            self.relation(&join.relation, out)?;
        }
        Some(())
    }

    fn select(&mut self, select: &Select) -> Shape {
        let mut relations = Vec::new();
        let mut star_ok = true;
        for item in &select.from {
            if self.from(item, &mut relations).is_none() {
                star_ok = false;
            }
        }
        let mut columns = Vec::new();
        for item in &select.projection {
            let pos = position(item.span());
            match item {
                SelectItem::ExprWithAlias { alias, .. } => columns.push(OutColumn {
                    name: stored_name(alias, self.engine),
                    position: pos,
                }),
                SelectItem::UnnamedExpr(expr) => columns.push(OutColumn {
                    name: implicit_name(expr, self.engine)?,
                    position: pos,
                }),
                SelectItem::Wildcard(options) => {
                    if !star_ok {
                        return None;
                    }
                    let mut all = Vec::new();
                    for (_, shape) in &relations {
                        all.extend(shape.clone()?);
                    }
                    columns.extend(self.modify(all, options, pos)?);
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
                    let (_, shape) = relations.iter().find(|(k, _)| *k == key)?;
                    columns.extend(self.modify(shape.clone()?, options, pos)?);
                }
                _ => return None,
            }
        }
        Some(columns)
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
        let excluded: Vec<String> = match &options.opt_exclude {
            None => Vec::new(),
            Some(ExcludeSelectItem::Single(name)) => vec![name
                .0
                .last()
                .and_then(|p| p.as_ident())
                .map(|i| stored_name(i, self.engine))?],
            Some(ExcludeSelectItem::Multiple(names)) => names
                .iter()
                .map(|n| {
                    n.0.last()
                        .and_then(|p| p.as_ident())
                        .map(|i| stored_name(i, self.engine))
                })
                .collect::<Option<_>>()?,
        };
        // REPLACE keeps each column's name and place.
        Some(
            columns
                .into_iter()
                .filter(|c| {
                    !excluded
                        .iter()
                        .any(|e| same_column(e, &c.name, self.engine))
                })
                .map(|c| OutColumn { position: pos, ..c })
                .collect(),
        )
    }
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

/// The name an unaliased expression gets: only plain column references are certain on both
/// engines (Postgres and DuckDB name other expressions differently).
fn implicit_name(expr: &Expr, engine: Engine) -> Option<String> {
    match expr {
        Expr::Identifier(ident) => Some(stored_name(ident, engine)),
        Expr::CompoundIdentifier(parts) => parts.last().map(|i| stored_name(i, engine)),
        // Postgres names `(a)` after `a`; DuckDB's naming of other expressions is its own.
        Expr::Nested(inner) if engine == Engine::Postgres => implicit_name(inner, engine),
        _ => None,
    }
}
