//! The statement's text: each leaf aggregated on its own relation at the requested grain, the
//! collapse of a leaf to fewer dimensions, the relations as they are read (masks, scoping), and
//! the outer query that combines the leaves. Identifiers are always quoted; values are bound.

#[allow(clippy::wildcard_imports)]
use super::*;

/// A leaf's query, and when it is a plain aggregate over its rows, its parts: leaves whose
/// rows, joins, filters and grouping are the same text share one query, each aggregate a
/// column of it, so that the engine reads those rows once.
pub(super) struct LeafSql {
    pub sql: String,
    pub shared: Option<Shared>,
}

pub(super) struct Shared {
    /// The select list before the value: the dimensions (`… AS "d0"`), maybe empty.
    grouped_by: String,
    /// The aggregate.
    value: String,
    /// `FROM` to the end.
    rest: String,
}

impl LeafSql {
    fn alone(sql: String) -> Self {
        Self { sql, shared: None }
    }
}

/// Where each leaf's value is read: the CTE that computes it and its column there.
#[derive(Default)]
pub(super) struct Slots {
    /// Per leaf: the CTE's number (that of the first leaf it computes) and the value column's.
    at: Vec<(usize, usize)>,
}

impl Slots {
    fn table(&self, leaf: usize) -> String {
        leaf_name(self.at[leaf].0)
    }

    fn value(&self, leaf: usize) -> String {
        match self.at[leaf].1 {
            0 => format!("{}.\"v\"", self.table(leaf)),
            j => format!("{}.\"v{j}\"", self.table(leaf)),
        }
    }

    /// The CTEs, each once, in order.
    fn tables(&self) -> Vec<usize> {
        let mut out: Vec<usize> = self.at.iter().map(|(t, _)| *t).collect();
        out.dedup();
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// The leaves' CTEs, and where each leaf's value is in them.
pub(super) struct Ctes {
    list: Vec<String>,
    slots: Slots,
}

/// The CTEs of `bodies` (one per leaf; `alone`: leaves that must keep a query of their own),
/// leaves sharing a query where they can.
pub(super) fn ctes(bodies: Vec<LeafSql>, alone: &[usize]) -> Ctes {
    // Per CTE: its number, the shared parts' key, and its values.
    let mut groups: Vec<(usize, Option<Shared>, Vec<String>)> = Vec::new();
    let mut slots = Slots::default();
    let mut texts: Vec<Option<String>> = Vec::new();
    for (i, body) in bodies.into_iter().enumerate() {
        let shared = body.shared.filter(|_| !alone.contains(&i));
        let Some(shared) = shared else {
            slots.at.push((i, 0));
            groups.push((i, None, Vec::new()));
            texts.push(Some(body.sql));
            continue;
        };
        let same = groups.iter_mut().find(|(_, g, _)| {
            g.as_ref()
                .is_some_and(|g| g.grouped_by == shared.grouped_by && g.rest == shared.rest)
        });
        match same {
            Some((n, _, values)) => {
                let j = match values.iter().position(|v| *v == shared.value) {
                    Some(j) => j,
                    None => {
                        values.push(shared.value.clone());
                        values.len() - 1
                    }
                };
                slots.at.push((*n, j));
            }
            None => {
                slots.at.push((i, 0));
                let value = shared.value.clone();
                groups.push((i, Some(shared), vec![value]));
                texts.push(None);
            }
        }
    }
    let mut out = Vec::new();
    for ((n, shared, values), text) in groups.into_iter().zip(texts) {
        let body = match (shared, text) {
            (_, Some(text)) => text,
            (Some(shared), None) => shared.sql(&values),
            (None, None) => continue,
        };
        out.push(format!("{} AS (\n{body}\n)", leaf_name(n)));
    }
    Ctes { list: out, slots }
}

impl Shared {
    /// The query with every value of the leaves that share it: `"v"`, `"v1"`, ….
    fn sql(&self, values: &[String]) -> String {
        let mut select: Vec<String> = Vec::new();
        if !self.grouped_by.is_empty() {
            select.push(self.grouped_by.clone());
        }
        for (j, v) in values.iter().enumerate() {
            select.push(match j {
                0 => format!("{v} AS \"v\""),
                j => format!("{v} AS \"v{j}\""),
            });
        }
        format!("  SELECT {}{}", select.join(", "), self.rest)
    }
}

impl<'a, 'p> Compiler<'a, 'p> {
    /// A leaf's query: its dimensions, its aggregate, its filters and the query's; joined to
    /// the time spine when it says so and is grouped by its time.
    pub(super) fn leaf_sql(
        &self,
        leaf: &Leaf<'a, 'p>,
        dimensions: &[Spanned<String>],
        filters: &[Spanned<String>],
    ) -> Result<LeafSql, Refusal> {
        // The metric's own filter over dimensions is applied as a query's filter is.
        let mut all = filters.to_vec();
        all.extend(leaf.binding_filter().cloned());
        let query_filters = filters;
        let filters = &all[..];
        let rows = self.leaf_rows(leaf, dimensions, filters)?;
        if !leaf.spine {
            return Ok(rows);
        }
        let sql = rows.sql;
        let Some((i, grain, _)) = self.asked_time(leaf, dimensions)? else {
            return Ok(LeafSql::alone(sql));
        };
        let on_points = self.spine_filters(leaf, filters)?;
        // The query's filters, and a filter a ratio or derived metric gives the metric, are
        // applied again after the spine join; the metric's own are not.
        let mut given = query_filters.to_vec();
        given.extend(leaf.given_filter().cloned());
        let again = self.after_the_spine(leaf, &given, dimensions)?;
        let spined = self.spined(leaf, &sql, dimensions.len(), i, grain, &on_points)?;
        Ok(LeafSql::alone(match again.is_empty() {
            true => spined,
            false => {
                let each: Vec<String> = again.iter().map(|p| format!("({p})")).collect();
                format!("{spined}\n  WHERE {}", each.join(" AND "))
            }
        }))
    }

    /// A leaf's rows: its dimensions, its aggregate, its filters and the query's.
    fn leaf_rows(
        &self,
        leaf: &Leaf<'a, 'p>,
        dimensions: &[Spanned<String>],
        filters: &[Spanned<String>],
    ) -> Result<LeafSql, Refusal> {
        if let Some(conversion) = leaf.conversion {
            return self
                .conversion_rows(leaf, conversion, dimensions, filters)
                .map(LeafSql::alone);
        }
        let mut joins: Vec<(Vec<&'p str>, String)> = Vec::new();
        let mut on_rows = Vec::new();
        let plan = match (leaf.cumulative, leaf.offset) {
            (Some(c), _) => self.cumulative_plan(leaf, c, dimensions, filters, &mut joins)?,
            (None, Some(o)) => {
                let (on_points, rest) = self.offset_filters(leaf, filters)?;
                on_rows = rest;
                Some(self.offset_plan(leaf, o, dimensions, &on_points, &mut joins)?)
            }
            (None, None) => None,
        };
        let filters = match leaf.offset.filter(|_| leaf.cumulative.is_none()) {
            Some(_) => &on_rows[..],
            None => filters,
        };
        let mut exprs = Vec::new();
        let mut queried_time = None;
        for (i, reference) in dimensions.iter().enumerate() {
            let reached = self.leaf_dimension(leaf, reference)?;
            let expr = match &plan {
                Some(p) if p.time == i => p.point_at_grain(),
                _ => self.dimension_sql(leaf.relation, &reached, &mut joins)?,
            };
            let collapses = leaf.collapse.is_some_and(|(d, _)| {
                reached.path.is_empty()
                    && (reached.dimension.name.value == d.value
                        || reached.dimension.column().value == d.value)
            });
            if collapses && queried_time.is_none() {
                queried_time = Some(expr.clone());
            }
            exprs.push(expr);
        }
        let mut select: Vec<String> = exprs
            .iter()
            .enumerate()
            .map(|(i, e)| format!("{e} AS \"d{i}\""))
            .collect();
        let collapse = match leaf.collapse {
            Some((dimension, _)) => {
                Some(self.collapse_sql(leaf.relation, dimension, &mut joins)?)
            }
            None => None,
        };
        let predicates = self.predicates(leaf, filters, &mut joins)?;
        if let (Some(groupings), Some((_, agg)), Some(t)) =
            (leaf.groupings, leaf.collapse, &collapse)
        {
            let window = Window {
                exprs: &exprs,
                time: t,
                queried_time: queried_time.as_deref(),
                groupings,
                agg,
            };
            return self
                .windowed_leaf_sql(leaf, &window, &joins, &predicates)
                .map(LeafSql::alone);
        }
        let collapse = match &plan {
            Some(p) if p.coarser() => Some(POINT.to_string()),
            _ => collapse,
        };
        if let Some(t) = &collapse {
            select.push(format!("{t} AS \"t\""));
        }
        let grouped_by = select.join(", ");
        select.push(format!("{} AS \"v\"", leaf.aggregate));
        if leaf.after.is_some() {
            select.push("count(*) AS \"n\"".to_string());
        }
        let from = match &plan {
            Some(p) => p.from.clone(),
            None => format!("{} AS \"s\"", self.source_sql(leaf.relation)?),
        };
        let mut rest = format!("\n  FROM {from}");
        for (_, join) in &joins {
            let _ = write!(rest, "\n  {join}");
        }
        if !predicates.is_empty() {
            let _ = write!(
                rest,
                "\n  WHERE {}",
                predicates
                    .iter()
                    .map(|p| format!("({p})"))
                    .collect::<Vec<_>>()
                    .join(" AND ")
            );
        }
        let grouped = dimensions.len() + usize::from(collapse.is_some());
        if grouped > 0 {
            let groups: Vec<String> = (1..=grouped).map(|i| i.to_string()).collect();
            let _ = write!(rest, "\n  GROUP BY {}", groups.join(", "));
        }
        let sql = format!("  SELECT {}{rest}", select.join(", "));
        Ok(match (&plan, leaf.collapse) {
            (Some(p), _) if p.coarser() && leaf.spine && leaf.cumulative.is_some() => {
                LeafSql::alone(collapsed(
                    &p.on_every_point(&sql, dimensions.len(), leaf.fill),
                    p.period_agg(),
                    dimensions.len(),
                ))
            }
            (Some(p), _) if p.coarser() => {
                LeafSql::alone(collapsed(&sql, p.period_agg(), dimensions.len()))
            }
            (_, Some((_, agg))) => LeafSql::alone(collapsed(&sql, agg, dimensions.len())),
            (None, None) if leaf.after.is_none() => LeafSql {
                sql,
                shared: Some(Shared {
                    grouped_by,
                    value: leaf.aggregate.clone(),
                    rest,
                }),
            },
            _ => LeafSql::alone(sql),
        })
    }

    /// What a leaf's rows must pass: the provisional rows after the final watermark, its
    /// population filter and mandatory guardrails, and the query's filters (adding the joins
    /// they need).
    pub(super) fn predicates(
        &self,
        leaf: &Leaf<'a, 'p>,
        filters: &[Spanned<String>],
        joins: &mut Vec<(Vec<&'p str>, String)>,
    ) -> Result<Vec<String>, Refusal> {
        let mut predicates: Vec<String> = leaf.after.iter().cloned().collect();
        for filter in &leaf.filters {
            self.in_filter_language(filter)?;
            predicates.push(self.qualified(filter, leaf.relation)?);
        }
        for filter in filters {
            predicates.push(self.query_filter(leaf, filter, joins)?);
        }
        Ok(predicates)
    }

    /// A semi-additive leaf under MetricFlow's rule: the rows of the last (first) point of the
    /// collapse dimension among all the rows that pass the filters, within each value of the
    /// `collapse_groupings` and of the collapse dimension at the grain asked, if it is asked
    /// for; then the measure aggregated over them in each requested group. A row whose
    /// grouping or point is NULL matches no point, as in MetricFlow's inner join.
    fn windowed_leaf_sql(
        &self,
        leaf: &Leaf<'a, 'p>,
        window: &Window<'_>,
        joins: &[(Vec<&'p str>, String)],
        predicates: &[String],
    ) -> Result<String, Refusal> {
        let mut inner: Vec<String> = vec!["\"s\".*".into()];
        for (i, e) in window.exprs.iter().enumerate() {
            inner.push(format!("{e} AS \"__sqb_d{i}\""));
        }
        let mut partition: Vec<String> = window
            .groupings
            .value
            .iter()
            .map(|g| column_ref("s", &g.value))
            .collect();
        partition.extend(window.queried_time.map(str::to_string));
        let over = match partition.is_empty() {
            true => String::new(),
            false => format!("PARTITION BY {}", partition.join(", ")),
        };
        let pick = if window.agg == "first" { "min" } else { "max" };
        inner.push(format!("{} AS \"__sqb_t\"", window.time));
        inner.push(format!(
            "{pick}({}) OVER ({over}) AS \"__sqb_w\"",
            window.time
        ));
        let mut sql = format!(
            "  SELECT {}\n  FROM {} AS \"s\"",
            inner.join(", "),
            self.source_sql(leaf.relation)?
        );
        for (_, join) in joins {
            let _ = write!(sql, "\n  {join}");
        }
        if !predicates.is_empty() {
            let conjunction: Vec<String> = predicates.iter().map(|p| format!("({p})")).collect();
            let _ = write!(sql, "\n  WHERE {}", conjunction.join(" AND "));
        }
        let mut outer: Vec<String> = (0..window.exprs.len())
            .map(|i| format!("\"s\".\"__sqb_d{i}\" AS \"d{i}\""))
            .collect();
        outer.push(format!("{} AS \"v\"", leaf.aggregate));
        let mut kept = vec!["\"s\".\"__sqb_t\" = \"s\".\"__sqb_w\"".to_string()];
        kept.extend(
            window
                .groupings
                .value
                .iter()
                .map(|g| format!("{} IS NOT NULL", column_ref("s", &g.value))),
        );
        let mut out = format!(
            "  SELECT {}\n  FROM (\n{sql}\n  ) AS \"s\"\n  WHERE {}",
            outer.join(", "),
            kept.join(" AND ")
        );
        if !window.exprs.is_empty() {
            let groups: Vec<String> = (1..=window.exprs.len()).map(|i| i.to_string()).collect();
            let _ = write!(out, "\n  GROUP BY {}", groups.join(", "));
        }
        Ok(out)
    }

    /// The collapse dimension's SQL: a dimension of the relation (at its granularity), or a
    /// column of it.
    pub(super) fn collapse_sql(
        &self,
        relation: &'a Relation<'p>,
        name: &Spanned<String>,
        joins: &mut Vec<(Vec<&'p str>, String)>,
    ) -> Result<String, Refusal> {
        let own = relation
            .semantic
            .is_some_and(|s| s.dimensions.iter().any(|d| d.name.value == name.value));
        if own {
            let reached = self.dimension(relation, name)?;
            return self.dimension_sql(relation, &reached, joins);
        }
        Ok(column_ref("s", &name.value))
    }

    /// The SQL of a reached dimension, adding the joins its path needs.
    pub(super) fn dimension_sql(
        &self,
        from: &Relation<'p>,
        reached: &Reached<'_, 'p>,
        joins: &mut Vec<(Vec<&'p str>, String)>,
    ) -> Result<String, Refusal> {
        let alias = self.join_path(from, &reached.path, joins)?;
        let name = &reached.dimension.column().value;
        let column = match &reached.dimension.expr {
            Some(expr) => format!("({})", self.qualified_as(expr, reached.relation, &alias)?),
            None => column_ref(&alias, name),
        };
        let zoned = reached.dimension.expr.is_none()
            && reached
                .relation
                .column(name)
                .and_then(|c| c.ty.as_deref())
                .is_some_and(|t| matches!(t, DataType::Timestamp { tz: true, .. }));
        let column = engine_rules::of(self.engine).truncatable(column, zoned);
        // A time dimension is served at its declared granularity unless asked for a coarser one.
        let declared = reached
            .dimension
            .granularity
            .as_ref()
            .map(|g| g.value.as_str());
        let Some(grain) = reached.granularity.or(declared) else {
            return Ok(column);
        };
        let Some((name, period)) = resolve::custom_grain(self.relations, grain) else {
            return Ok(format!("date_trunc('{grain}', {column})"));
        };
        // A custom granularity: the period the time spine gives the point, as MetricFlow
        // joins it (a point the spine lacks is in no period).
        let (spine, table) = super::super::relation::time_spine(self.relations)
            .ok_or_else(|| Refusal::new("unresolved", format!("`{grain}` is no grain")))?;
        let spine_column = table.column.as_ref().map_or("", |c| c.value.as_str());
        let mut key: Vec<&'p str> = vec!["", name];
        key.extend(reached.path.iter().copied());
        key.push(reached.dimension.column().value.as_str());
        let alias = match joins.iter().position(|(k, _)| *k == key) {
            Some(i) => format!("g{i}"),
            None => {
                let alias = format!("g{}", joins.len());
                let join = format!(
                    "LEFT JOIN {} AS {} ON {} = date_trunc('{}', {column})",
                    self.source_sql(spine)?,
                    quote(&alias),
                    column_ref(&alias, spine_column),
                    table.granularity()
                );
                joins.push((key, join));
                alias
            }
        };
        Ok(column_ref(&alias, period))
    }

    /// A relation as a FROM item: scoped to the principal's tenant before it is joined (so an
    /// outer join keeps its unmatched rows), shared, or refused as undeclared.
    pub(super) fn source_sql(&self, relation: &Relation<'p>) -> Result<String, Refusal> {
        let table = self.relation_sql(relation);
        let access::Scoping::Scoped { policy, tenant } = &self.scoping else {
            return Ok(table);
        };
        let scoped = policy
            .scoped
            .iter()
            .find(|s| s.source.as_ref().is_some_and(|x| x.value == relation.name));
        if let Some(column) = scoped.and_then(|s| s.column.as_ref()) {
            let ty = relation.column(&column.value).and_then(|c| c.ty.as_deref());
            let predicate =
                access::tenant_predicate(&quote(&column.value), ty, tenant, self.engine)
                    .ok_or_else(|| {
                        Refusal::new(
                            "invalid_claims",
                            format!(
                                "the tenant claim does not convert to the type of {}.{} ({})",
                                relation.name,
                                column.value,
                                ty.map_or(String::new(), ToString::to_string)
                            ),
                        )
                    })?;
            let from = format!("(SELECT * FROM {table} WHERE {predicate})");
            let mut reads = self.scoped_reads.borrow_mut();
            if !reads.iter().any(|r| r.from == from) {
                reads.push(ScopedRead {
                    relation: relation.name.to_string(),
                    from: from.clone(),
                    column: column.value.clone(),
                });
            }
            return Ok(from);
        }
        if policy.shared.iter().any(|s| s.value == relation.name) {
            return Ok(table);
        }
        let message = format!(
            "{} is neither scoped nor shared by the tenancy policy",
            relation.describe()
        );
        if policy.warns_undeclared() {
            self.warnings
                .borrow_mut()
                .push(format!("{message}: read unscoped"));
            return Ok(table);
        }
        Err(Refusal {
            code: "undeclared_source",
            message,
            hint: Some("classify it in contracts/policies/tenancy.toml (`scoped_sources` or `shared_sources`)".into()),
        })
    }

    /// The mask each dimension output gets from the principal's roles, if any.
    pub(super) fn masks(
        &self,
        leaf: &Leaf<'a, 'p>,
        dimensions: &[Spanned<String>],
    ) -> Result<Vec<Option<String>>, Refusal> {
        dimensions
            .iter()
            .map(|d| {
                let reached = self.leaf_dimension(leaf, d)?;
                Ok(access::mask_of(
                    self.roles.as_deref(),
                    reached.relation.name,
                    &reached.dimension.column().value,
                ))
            })
            .collect()
    }

    pub(super) fn relation_sql(&self, relation: &Relation<'p>) -> String {
        let (database, schema, table) = match self
            .project
            .source_tables
            .iter()
            .find(|s| s.name.value == relation.name && relation.kind == "source")
        {
            Some(s) => (
                s.database.as_ref().map(|d| d.value.clone()),
                s.schema.as_ref().map_or(String::new(), |x| x.value.clone()),
                s.relation_name().to_string(),
            ),
            None => {
                let model = self.project.model(relation.name);
                let table = model
                    .map_or(relation.name, |m| m.relation_name())
                    .to_string();
                (
                    self.namespace.database.clone(),
                    self.namespace.schema.clone(),
                    table,
                )
            }
        };
        let mut parts: Vec<String> = database.iter().map(|d| quote(d)).collect();
        parts.push(quote(&schema));
        parts.push(quote(&table));
        parts.join(".")
    }

    /// The statement: the leaves as CTEs, their dimension rows joined, each metric's formula.
    pub(super) fn outer_sql(
        &self,
        ctes: &Ctes,
        formulas: &[Formula],
        columns: &[String],
        masks: &[Option<String>],
        all: &[Leaf<'a, 'p>],
        served: &[ServedMetric],
    ) -> String {
        let slots = &ctes.slots;
        let tables = slots.tables();
        let dims = masks.len();
        let mut sql = format!("WITH {}", ctes.list.join(",\n"));
        let mut select: Vec<String> = (0..dims)
            .map(|i| {
                let value = format!("\"k\".\"d{i}\"");
                let shown = match masks[i].as_deref() {
                    Some(strategy) => access::masked(self.engine, strategy, &value),
                    None => value,
                };
                format!("{shown} AS {}", quote(&columns[i]))
            })
            .collect();
        for (f, name) in formulas.iter().zip(&columns[dims..]) {
            select.push(format!(
                "{} AS {}",
                self.formula_sql(f, all, slots),
                quote(name)
            ));
        }
        for (f, m) in formulas.iter().zip(served) {
            if let Some(flag) = &m.final_flag {
                select.push(format!("{} AS {}", final_sql(f, all, slots), quote(flag)));
            }
        }
        if dims == 0 {
            let from: Vec<String> = tables.iter().map(|&t| leaf_name(t)).collect();
            let _ = write!(
                sql,
                "\nSELECT {}\nFROM {}",
                select.join(", "),
                from.join(" CROSS JOIN ")
            );
            return sql;
        }
        let keys: Vec<String> = (0..dims).map(|i| format!("\"d{i}\"")).collect();
        let unions: Vec<String> = tables
            .iter()
            .map(|&t| format!("SELECT {} FROM {}", keys.join(", "), leaf_name(t)))
            .collect();
        let _ = write!(
            sql,
            ",\n\"k\" AS (\n  {}\n)\nSELECT {}\nFROM \"k\"",
            unions.join("\n  UNION\n  "),
            select.join(", ")
        );
        for &t in &tables {
            let on: Vec<String> = keys
                .iter()
                .map(|k| format!("\"k\".{k} IS NOT DISTINCT FROM {}.{k}", leaf_name(t)))
                .collect();
            let _ = write!(sql, "\nLEFT JOIN {} ON {}", leaf_name(t), on.join(" AND "));
        }
        sql
    }
}

impl Compiler<'_, '_> {
    /// A metric's value in a group, from its leaves' values.
    fn formula_sql(&self, f: &Formula, leaves: &[Leaf<'_, '_>], slots: &Slots) -> String {
        match f {
            Formula::Value(part) => part_sql(*part, leaves, slots),
            Formula::Divide {
                numerator,
                denominator,
                on_zero,
                metric,
            } => {
                let (n, d) = (
                    part_sql(*numerator, leaves, slots),
                    part_sql(*denominator, leaves, slots),
                );
                let rules = engine_rules::of(self.engine);
                let cast = rules.quotient_type();
                match on_zero.as_str() {
                    "zero" => {
                        format!("CASE WHEN {d} = 0 THEN 0 ELSE CAST({n} AS {cast}) / {d} END")
                    }
                    "error" => rules.raise_on_zero(
                        format!("CAST({n} AS {cast}) / {d}"),
                        &d,
                        &literal(&format!(
                            "division by zero: metric `{metric}` has a zero denominator"
                        )),
                    ),
                    _ => format!("CAST({n} AS {cast}) / NULLIF({d}, 0)"),
                }
            }
            Formula::Derived { expr, inputs } => {
                // Each name becomes a placeholder identifier, then its value's SQL.
                let mut expr = (**expr).clone();
                let _ = sqlparser::ast::visit_expressions_mut(&mut expr, |e| {
                    if let sqlparser::ast::Expr::Identifier(ident) = e {
                        let lower = ident.value.to_lowercase();
                        if let Some(i) = inputs.iter().position(|(n, _)| *n == lower) {
                            *ident = sqlparser::ast::Ident::new(format!("__sqb_input_{i}__"));
                        }
                    }
                    std::ops::ControlFlow::<()>::Continue(())
                });
                let mut sql = expr.to_string();
                for (i, (_, input)) in inputs.iter().enumerate() {
                    let value = format!("({})", self.formula_sql(input, leaves, slots));
                    sql = sql.replace(&format!("__sqb_input_{i}__"), &value);
                }
                match present(f, leaves, slots) {
                    Some(present) => format!("CASE WHEN {present} THEN {sql} END"),
                    None => sql,
                }
            }
        }
    }
}

/// The leaves of a derived metric with a `fill_nulls_with` leaf: where none of them has a row,
/// the metric has no value, as MetricFlow fills an input only in the groups its derived
/// metric's inputs have (not in another metric's of the query). Each such leaf's CTE carries
/// a presence column, `"e"`.
pub(super) fn presence_leaves(f: &Formula, leaves: &[Leaf<'_, '_>], out: &mut Vec<usize>) {
    if let Formula::Derived { inputs, .. } = f {
        let mine: Vec<usize> = f
            .parts()
            .iter()
            .flat_map(|p| match *p {
                Part::Leaf(i) => vec![i],
                Part::Coalesced { settled, live, .. } => vec![settled, live],
            })
            .collect();
        if mine.iter().any(|&i| leaves[i].fill.is_some()) {
            out.extend(mine.iter().filter(|i| !out.contains(i)).collect::<Vec<_>>());
        }
        for (_, input) in inputs {
            presence_leaves(input, leaves, out);
        }
    }
}

/// Whether any leaf of a derived metric with a filled leaf has a row in the group.
fn present(f: &Formula, leaves: &[Leaf<'_, '_>], slots: &Slots) -> Option<String> {
    let mut mine = Vec::new();
    if let Formula::Derived { .. } = f {
        for p in f.parts() {
            match p {
                Part::Leaf(i) => mine.push(i),
                Part::Coalesced { settled, live, .. } => mine.extend([settled, live]),
            }
        }
    }
    if !mine.iter().any(|&i| leaves[i].fill.is_some()) {
        return None;
    }
    mine.dedup();
    let each: Vec<String> = mine
        .iter()
        .map(|&i| format!("{}.\"e\" IS NOT NULL", slots.table(i)))
        .collect();
    Some(format!("({})", each.join(" OR ")))
}

/// How a semi-additive leaf under MetricFlow's rule picks its rows.
pub(super) struct Window<'w> {
    /// The requested dimensions' SQL, in order.
    exprs: &'w [String],
    /// The collapse dimension's SQL (at its granularity).
    time: &'w str,
    /// The requested dimension that is the collapse dimension (at the grain asked), if any.
    queried_time: Option<&'w str>,
    groupings: &'w crate::project::NameList,
    agg: &'w str,
}

/// A part's value in a group.
fn part_sql(part: Part, leaves: &[Leaf<'_, '_>], slots: &Slots) -> String {
    match part {
        // `fill_nulls_with`: the value of a group where the metric has none.
        Part::Leaf(i) => match leaves[i].fill {
            Some(fill) => format!("COALESCE({}, {fill})", slots.value(i)),
            None => slots.value(i),
        },
        Part::Coalesced { settled, live, how } => {
            finality::combined(how, &slots.value(settled), &slots.value(live))
        }
    }
}

/// A metric's name, canonical definition and kind; a binding without one is not served.
pub(super) fn canonical(
    binding: &MetricBinding,
) -> Result<(&str, &crate::project::metrics::Canonical, &str), Refusal> {
    let name = binding.name().map_or("?", |n| n.value.as_str());
    let c = binding.canonical.as_ref().ok_or_else(|| {
        Refusal::new(
            "unsupported_measure",
            format!("metric `{name}` has no canonical definition"),
        )
    })?;
    Ok((name, c, c.kind.as_ref().map_or("", |k| k.value.as_str())))
}

/// A semi-additive leaf: its per-time sums (`sql`, grouped by the dimensions and `t`)
/// collapsed over time — the last or first point of each group, or the average, least or
/// greatest of its points.
pub(super) fn collapsed(sql: &str, agg: &str, dims: usize) -> String {
    let keys: Vec<String> = (0..dims).map(|i| format!("\"d{i}\"")).collect();
    let partition = match keys.is_empty() {
        true => String::new(),
        false => format!("PARTITION BY {} ", keys.join(", ")),
    };
    let mut out_keys = keys.clone();
    out_keys.push("\"v\"".into());
    match agg {
        "last" | "first" => {
            let order = if agg == "last" { "DESC" } else { "ASC" };
            format!(
                "  SELECT {} FROM (\n  SELECT *, row_number() OVER ({partition}ORDER BY \"t\" {order}) AS \"r\" FROM (\n{sql}\n  ) AS \"p\"\n  ) AS \"q\" WHERE \"r\" = 1",
                out_keys.join(", ")
            )
        }
        other => {
            let group = match keys.is_empty() {
                true => String::new(),
                false => format!(" GROUP BY {}", keys.join(", ")),
            };
            let mut select = keys.clone();
            select.push(format!("{other}(\"v\") AS \"v\""));
            format!(
                "  SELECT {} FROM (\n{sql}\n  ) AS \"p\"{group}",
                select.join(", ")
            )
        }
    }
}

/// Whether a group's value of a metric holds only final rows: no provisional leaf of it read
/// a row there (a leaf reading only a provisional realization never is).
pub(super) fn final_sql(formula: &Formula, leaves: &[Leaf<'_, '_>], slots: &Slots) -> String {
    let parts = formula.parts();
    let mut checks = Vec::new();
    for part in parts {
        let used = match part {
            Part::Leaf(i) => vec![i],
            Part::Coalesced { settled, live, .. } => vec![settled, live],
        };
        for i in used {
            match (&leaves[i].after, leaves[i].provisional) {
                (Some(_), _) => checks.push(format!("COALESCE({}.\"n\", 0) = 0", slots.table(i))),
                (None, true) => checks.push("false".to_string()),
                (None, false) => {}
            }
        }
    }
    match checks.is_empty() {
        true => "true".to_string(),
        false => format!("({})", checks.join(" AND ")),
    }
}

/// A SQL string literal.
pub(super) fn literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

pub(super) fn leaf_name(i: usize) -> String {
    format!("\"m{i}\"")
}

// An identifier, always double-quoted (a column may be named like a keyword).
pub(super) use crate::ident::quoted as quote;

pub(super) fn column_ref(alias: &str, column: &str) -> String {
    format!("{}.{}", quote(alias), quote(column))
}
