//! The statement's text: each leaf aggregated on its own relation at the requested grain, the
//! collapse of a leaf to fewer dimensions, the relations as they are read (masks, scoping), and
//! the outer query that combines the leaves. Identifiers are always quoted; values are bound.

#[allow(clippy::wildcard_imports)]
use super::*;

impl<'a, 'p> Compiler<'a, 'p> {
    /// A leaf's query: its dimensions, its aggregate, its filters and the query's; joined to
    /// the time spine when it says so and is grouped by its time.
    pub(super) fn leaf_sql(
        &self,
        leaf: &Leaf<'a, 'p>,
        dimensions: &[Spanned<String>],
        filters: &[Spanned<String>],
    ) -> Result<String, Refusal> {
        // The metric's own filter over dimensions is applied as a query's filter is.
        let mut all = filters.to_vec();
        all.extend(leaf.binding_filter().cloned());
        let filters = &all[..];
        let sql = self.leaf_rows(leaf, dimensions, filters)?;
        if !leaf.spine {
            return Ok(sql);
        }
        let Some((i, grain, _)) = self.asked_time(leaf, dimensions)? else {
            return Ok(sql);
        };
        let on_points = self.spine_filters(leaf, filters)?;
        self.spined(leaf, &sql, dimensions.len(), i, grain, &on_points)
    }

    /// The query's filters on the leaf's own time, read on the time spine's points too, as
    /// MetricFlow filters them (a filtered-out point is no row); a filter on its time and on
    /// something else as well is refused, as is one on another time dimension.
    fn spine_filters(
        &self,
        leaf: &Leaf<'a, 'p>,
        filters: &[Spanned<String>],
    ) -> Result<Vec<String>, Refusal> {
        let measure = leaf.measure.map(|m| m.value.as_str());
        let own = resolve::agg_time(leaf.relation, measure);
        let column = super::super::relation::time_spine(self.relations)
            .and_then(|(_, t)| t.column.as_ref())
            .map_or("", |c| c.value.as_str());
        let mut out = Vec::new();
        for filter in filters {
            let mut expr = self.in_query_filter_language(filter)?;
            let mut times = 0;
            let mut others = 0;
            let _ = sqlparser::ast::visit_expressions_mut(&mut expr, |e| {
                let parts: Vec<String> = match e {
                    Expr::Identifier(id) => vec![id.value.clone()],
                    Expr::CompoundIdentifier(p) => p.iter().map(|i| i.value.clone()).collect(),
                    _ => return std::ops::ControlFlow::<()>::Continue(()),
                };
                let reached = self.leaf_dimension(leaf, &self.spanned(&parts.join(".")));
                match reached {
                    Ok(r)
                        if r.path.is_empty()
                            && own.is_some_and(|t| t.value == r.dimension.name.value) =>
                    {
                        let declared = r.dimension.granularity.as_ref().map(|g| g.value.as_str());
                        let grain = r.granularity.or(declared).unwrap_or("day");
                        let point = self.spine_point(grain, column);
                        if let Ok(parsed) = predicate::parse(self.project, &point) {
                            *e = Expr::Nested(Box::new(parsed));
                        }
                        times += 1;
                    }
                    _ => others += 1,
                }
                std::ops::ControlFlow::Continue(())
            });
            match (times, others) {
                (0, _) => self.spine_refuses_time_filters(leaf, std::slice::from_ref(filter))?,
                (_, 0) => out.push(expr.to_string()),
                _ => {
                    let name = leaf.binding.name().map_or("?", |n| n.value.as_str());
                    return Err(Refusal {
                        code: "unsupported_measure",
                        message: format!("metric `{name}` joins to the time spine, and the filter `{}` is on its time and on something else", filter.value),
                        hint: Some("filter its time in a filter of its own".into()),
                    });
                }
            }
        }
        Ok(out)
    }

    /// The requested dimension that is the leaf's own time (its measure's agg time dimension,
    /// asked by name or as `metric_time`): its index, the grain asked (its declared one when
    /// none is), and the dimension reached. The first, when asked twice.
    fn asked_time(
        &self,
        leaf: &Leaf<'a, 'p>,
        dimensions: &[Spanned<String>],
    ) -> Result<Option<(usize, &'p str, Reached<'a, 'p>)>, Refusal> {
        let measure = leaf.measure.map(|m| m.value.as_str());
        let Some(time) = resolve::agg_time(leaf.relation, measure) else {
            return Ok(None);
        };
        for (i, d) in dimensions.iter().enumerate() {
            let reached = self.leaf_dimension(leaf, d)?;
            if reached.path.is_empty() && reached.dimension.name.value == time.value {
                let declared = reached
                    .dimension
                    .granularity
                    .as_ref()
                    .map(|g| g.value.as_str());
                let grain = reached.granularity.or(declared).unwrap_or("day");
                return Ok(Some((i, grain, reached)));
            }
        }
        Ok(None)
    }

    /// A leaf joined to the time spine: every point of the spine (at the grain asked) is a
    /// row, the leaf's other dimensions and value NULL where it has no data there.
    fn spined(
        &self,
        leaf: &Leaf<'a, 'p>,
        sql: &str,
        dims: usize,
        time: usize,
        grain: &str,
        on_points: &[String],
    ) -> Result<String, Refusal> {
        let name = leaf.binding.name().map_or("?", |n| n.value.as_str());
        let Some((spine, table)) = super::super::relation::time_spine(self.relations) else {
            return Err(Refusal::new(
                "unsupported_measure",
                format!("metric `{name}` joins to the time spine, and the project has none"),
            ));
        };
        let column = table.column.as_ref().map_or("", |c| c.value.as_str());
        let point = self.spine_point(grain, column);
        let mut select: Vec<String> = (0..dims)
            .map(|j| match j == time {
                true => format!("\"t\".\"d{j}\" AS \"d{j}\""),
                false => format!("\"m\".\"d{j}\" AS \"d{j}\""),
            })
            .collect();
        select.push("\"m\".\"v\" AS \"v\"".into());
        let filtered = match on_points.is_empty() {
            true => String::new(),
            false => {
                let each: Vec<String> = on_points.iter().map(|p| format!("({p})")).collect();
                format!(" WHERE {}", each.join(" AND "))
            }
        };
        Ok(format!(
            "  SELECT {}\n  FROM (SELECT DISTINCT {point} AS \"d{time}\" FROM {} AS \"ts\"{filtered}) AS \"t\"\n  LEFT JOIN (\n{sql}\n  ) AS \"m\" ON \"m\".\"d{time}\" = \"t\".\"d{time}\"",
            select.join(", "),
            self.source_sql(spine)?
        ))
    }

    /// A row of the time spine (`"ts"`) at a grain: its time truncated, or its period's column
    /// for a custom granularity.
    fn spine_point(&self, grain: &str, column: &str) -> String {
        match resolve::custom_grain(self.relations, grain) {
            Some((_, period)) => column_ref("ts", period),
            None => format!("date_trunc('{grain}', {})", column_ref("ts", column)),
        }
    }

    /// A query filter on the time of a leaf joined to the spine would have to filter the
    /// spine's points too, which sqb does not yet: refused, never answered with the points
    /// the filter excludes.
    fn spine_refuses_time_filters(
        &self,
        leaf: &Leaf<'a, 'p>,
        filters: &[Spanned<String>],
    ) -> Result<(), Refusal> {
        for filter in filters {
            let Ok(expr) = predicate::parse(self.project, &filter.value) else {
                continue;
            };
            for parts in predicate::column_refs(&expr) {
                let reference = self.spanned(&parts.join("."));
                let Ok(reached) = self.leaf_dimension(leaf, &reference) else {
                    continue;
                };
                if reached.path.is_empty() && reached.dimension.granularity.is_some() {
                    let name = leaf.binding.name().map_or("?", |n| n.value.as_str());
                    return Err(Refusal {
                        code: "unsupported_measure",
                        message: format!("metric `{name}` joins to the time spine, and the filter `{}` is on its time", filter.value),
                        hint: Some("group by its time without filtering on it, or ask for a metric without `join_to_timespine`".into()),
                    });
                }
            }
        }
        Ok(())
    }

    /// A leaf's rows: its dimensions, its aggregate, its filters and the query's.
    fn leaf_rows(
        &self,
        leaf: &Leaf<'a, 'p>,
        dimensions: &[Spanned<String>],
        filters: &[Spanned<String>],
    ) -> Result<String, Refusal> {
        if let Some(conversion) = leaf.conversion {
            return self.conversion_rows(leaf, conversion, dimensions, filters);
        }
        let mut joins: Vec<(Vec<&'p str>, String)> = Vec::new();
        let plan = match (leaf.cumulative, leaf.offset) {
            (Some(c), _) => self.cumulative_plan(leaf, c, dimensions, filters, &mut joins)?,
            (None, Some(o)) => Some(self.offset_plan(leaf, o, dimensions, filters, &mut joins)?),
            (None, None) => None,
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
            return self.windowed_leaf_sql(leaf, &window, &joins, &predicates);
        }
        let collapse = match &plan {
            Some(p) if p.coarser() => Some(POINT.to_string()),
            _ => collapse,
        };
        if let Some(t) = &collapse {
            select.push(format!("{t} AS \"t\""));
        }
        select.push(format!("{} AS \"v\"", leaf.aggregate));
        if leaf.after.is_some() {
            select.push("count(*) AS \"n\"".to_string());
        }
        let from = match &plan {
            Some(p) => p.from.clone(),
            None => format!("{} AS \"s\"", self.source_sql(leaf.relation)?),
        };
        let mut sql = format!("  SELECT {}\n  FROM {from}", select.join(", "));
        for (_, join) in &joins {
            let _ = write!(sql, "\n  {join}");
        }
        if !predicates.is_empty() {
            let _ = write!(
                sql,
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
            let _ = write!(sql, "\n  GROUP BY {}", groups.join(", "));
        }
        Ok(match (&plan, leaf.collapse) {
            (Some(p), _) if p.coarser() => collapsed(&sql, p.period_agg(), dimensions.len()),
            (_, Some((_, agg))) => collapsed(&sql, agg, dimensions.len()),
            _ => sql,
        })
    }

    /// What a leaf's rows must pass: the provisional rows after the final watermark, its
    /// population filter and mandatory guardrails, and the query's filters (adding the joins
    /// they need).
    fn predicates(
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

    /// How a leaf offset in time is read: the time spine's points at the grain asked, each
    /// joined to the leaf's rows of the point the offset names (`point - window`, or the start
    /// of the point's period), as MetricFlow joins them; a point whose offset has no rows is
    /// no row. Without its time in the query it is refused, as MetricFlow refuses it.
    fn offset_plan(
        &self,
        leaf: &Leaf<'a, 'p>,
        offset: Offset<'p>,
        dimensions: &[Spanned<String>],
        filters: &[Spanned<String>],
        joins: &mut Vec<(Vec<&'p str>, String)>,
    ) -> Result<CumulativePlan<'p>, Refusal> {
        let name = leaf.binding.name().map_or("?", |n| n.value.as_str());
        let Some((i, grain, reached)) = self.asked_time(leaf, dimensions)? else {
            return Err(Refusal {
                code: "unsupported_measure",
                message: format!(
                    "metric `{name}` is offset in time, and the query does not group by its time"
                ),
                hint: Some("group by `metric_time` at some grain".into()),
            });
        };
        self.spine_refuses_time_filters(leaf, filters)?;
        let Some((spine, table)) = super::super::relation::time_spine(self.relations) else {
            return Err(Refusal::new(
                "unsupported_measure",
                format!("metric `{name}` is offset in time, and the project has no time spine"),
            ));
        };
        // At a custom granularity the offset is taken at the spine's own grain, each point's
        // rows then added up in its period, as MetricFlow does.
        let custom = resolve::custom_grain(self.relations, grain);
        let (grain, period) = match custom {
            Some((_, c)) => (
                table.granularity(),
                format!(", {} AS \"pc\"", column_ref("ts", c)),
            ),
            None => (grain, String::new()),
        };
        let mut at_point = reached;
        at_point.granularity = Some(grain);
        let point_of_row = self.dimension_sql(leaf.relation, &at_point, joins)?;
        let column = table.column.as_ref().map_or("", |c| c.value.as_str());
        let target = match offset {
            Offset::Window(n, unit) => {
                format!("date_trunc('{grain}', {POINT} - INTERVAL '{n} {unit}')")
            }
            Offset::ToGrain(g) => format!("date_trunc('{g}', {POINT})"),
        };
        let from = format!(
            "(SELECT DISTINCT date_trunc('{grain}', {}) AS \"p\"{period} FROM {} AS \"ts\") AS \"ts\"\n  INNER JOIN {} AS \"s\" ON {point_of_row} = {target}",
            column_ref("ts", column),
            self.source_sql(spine)?,
            self.source_sql(leaf.relation)?,
        );
        let grain = GRAIN_RANK
            .iter()
            .copied()
            .find(|g| *g == grain)
            .unwrap_or("day");
        Ok(CumulativePlan {
            time: i,
            grain,
            custom: custom.is_some(),
            // The points are at the grain asked, or added up in their custom periods: nothing
            // to collapse.
            collapses: false,
            period_agg: "first",
            from,
        })
    }

    /// How a cumulative leaf is read: grouped by its time, from the time spine's points, each
    /// joined to the leaf's rows in its window (`None` for a metric that adds up over all
    /// time, asked without its time: a plain aggregate). A window or a grain to date without
    /// its time in the query is refused, as MetricFlow refuses it.
    fn cumulative_plan(
        &self,
        leaf: &Leaf<'a, 'p>,
        c: Cumulative<'p>,
        dimensions: &[Spanned<String>],
        filters: &[Spanned<String>],
        joins: &mut Vec<(Vec<&'p str>, String)>,
    ) -> Result<Option<CumulativePlan<'p>>, Refusal> {
        let name = leaf.binding.name().map_or("?", |n| n.value.as_str());
        let unsupported =
            |why: String| Refusal::new("unsupported_measure", format!("metric `{name}` {why}"));
        let measure = leaf.measure.map(|m| m.value.as_str());
        let Some(time) = resolve::agg_time(leaf.relation, measure) else {
            return Err(unsupported(
                "is cumulative, and its measure has no time".into(),
            ));
        };
        let Some((i, grain, _)) = self.asked_time(leaf, dimensions)? else {
            if c.window.is_some() || c.grain_to_date.is_some() {
                return Err(Refusal {
                    code: "unsupported_measure",
                    message: format!("metric `{name}` adds up over a window of time, and the query does not group by its time"),
                    hint: Some(format!("group by `metric_time` (or `{}`) at some grain", time.value)),
                });
            }
            return Ok(None);
        };
        self.spine_refuses_time_filters(leaf, filters)?;
        let Some((spine, table)) = super::super::relation::time_spine(self.relations) else {
            return Err(unsupported(
                "is cumulative, and the project has no time spine".into(),
            ));
        };
        let reached = self.dimension(leaf.relation, time)?;
        let point_of_row = self.dimension_sql(leaf.relation, &reached, joins)?;
        let base = table.granularity();
        let column = table.column.as_ref().map_or("", |c| c.value.as_str());
        let custom = resolve::custom_grain(self.relations, grain);
        let period = custom.map_or(String::new(), |(_, c)| {
            format!(", {} AS \"pc\"", column_ref("ts", c))
        });
        let mut on = vec![format!("{point_of_row} <= {POINT}")];
        match (c.window, c.grain_to_date) {
            (Some((n, unit)), _) => {
                on.push(format!("{point_of_row} > {POINT} - INTERVAL '{n} {unit}'"))
            }
            (None, Some(g)) => on.push(format!("{point_of_row} >= date_trunc('{g}', {POINT})")),
            (None, None) => {}
        }
        let from = format!(
            "(SELECT DISTINCT date_trunc('{base}', {}) AS \"p\"{period} FROM {} AS \"ts\") AS \"ts\"\n  INNER JOIN {} AS \"s\" ON {}",
            column_ref("ts", column),
            self.source_sql(spine)?,
            self.source_sql(leaf.relation)?,
            on.join(" AND ")
        );
        let rank = |g: &str| GRAIN_RANK.iter().position(|x| *x == g);
        Ok(Some(CumulativePlan {
            time: i,
            grain: GRAIN_RANK
                .iter()
                .copied()
                .find(|g| *g == grain)
                .unwrap_or("day"),
            custom: custom.is_some(),
            collapses: custom.is_some() || rank(grain) > rank(base),
            period_agg: c.period_agg,
            from,
        }))
    }

    /// A conversion metric's conversions, as MetricFlow counts them: each conversion event is
    /// joined to the base events (the leaf's relation's rows that pass the filters) with the
    /// same `on` values at or before its time (within the `window`), both times at the coarser
    /// of the two measures' grains; it is counted once, for the latest of them, and the
    /// conversion measure is aggregated in that base event's groups.
    fn conversion_rows(
        &self,
        leaf: &Leaf<'a, 'p>,
        conversion: Conversion<'a, 'p>,
        dimensions: &[Spanned<String>],
        filters: &[Spanned<String>],
    ) -> Result<String, Refusal> {
        let name = leaf.binding.name().map_or("?", |n| n.value.as_str());
        let mut joins: Vec<(Vec<&'p str>, String)> = Vec::new();
        let mut inner = Vec::new();
        for (i, reference) in dimensions.iter().enumerate() {
            let reached = self.leaf_dimension(leaf, reference)?;
            let expr = self.dimension_sql(leaf.relation, &reached, &mut joins)?;
            inner.push(format!("{expr} AS \"__sqb_d{i}\""));
        }
        let times = [
            (leaf.relation, leaf.measure),
            (conversion.relation, Some(conversion.measure)),
        ];
        let mut reached = Vec::new();
        for (relation, measure) in times {
            let time = resolve::agg_time(relation, measure.map(|m| m.value.as_str())).ok_or_else(
                || {
                    Refusal::new(
                        "unsupported_measure",
                        format!(
                            "metric `{name}` converts over measure `{}`, which has no time in {}",
                            measure.map_or("", |m| m.value.as_str()),
                            relation.describe()
                        ),
                    )
                },
            )?;
            reached.push(self.dimension(relation, time)?);
        }
        let rank = |r: &Reached<'_, '_>| {
            let grain = r
                .dimension
                .granularity
                .as_ref()
                .map_or("day", |g| g.value.as_str());
            GRAIN_RANK.iter().position(|g| *g == grain).unwrap_or(1)
        };
        let grain = GRAIN_RANK[reached.iter().map(rank).max().unwrap_or(1)];
        for r in &mut reached {
            r.granularity = Some(grain);
        }
        let base_time = self.dimension_sql(leaf.relation, &reached[0], &mut joins)?;
        let event_time = self.dimension_sql(conversion.relation, &reached[1], &mut Vec::new())?;
        let (agg, operand) =
            self.measure_operand(conversion.relation, Some(conversion.measure), name)?;
        let operand = match (agg, operand.as_str()) {
            (_, "*") => "1".to_string(),
            ("count", _) => format!("CASE WHEN {operand} IS NOT NULL THEN 1 ELSE 0 END"),
            _ => operand,
        };
        let mut events = vec![
            format!("{operand} AS \"__sqb_cv\""),
            format!("{event_time} AS \"__sqb_ct\""),
            "row_number() OVER () AS \"__sqb_row\"".to_string(),
        ];
        let mut on = Vec::new();
        for (j, (local, remote)) in conversion.on.iter().enumerate() {
            events.push(format!(
                "{} AS \"__sqb_k{j}\"",
                column_ref("s", &remote.value)
            ));
            on.push(format!(
                "{} = \"c\".\"__sqb_k{j}\"",
                column_ref("s", &local.value)
            ));
        }
        on.push(format!("{base_time} <= \"c\".\"__sqb_ct\""));
        if let Some((n, unit)) = conversion.window {
            on.push(format!(
                "{base_time} > \"c\".\"__sqb_ct\" - INTERVAL '{n} {unit}'"
            ));
        }
        let predicates = self.predicates(leaf, filters, &mut joins)?;
        inner.push("\"c\".\"__sqb_cv\"".into());
        inner.push(format!(
            "row_number() OVER (PARTITION BY \"c\".\"__sqb_row\" ORDER BY {base_time} DESC) AS \"__sqb_r\""
        ));
        let mut sql = format!(
            "  SELECT {}\n  FROM {} AS \"s\"\n  INNER JOIN (SELECT {} FROM {} AS \"s\") AS \"c\" ON {}",
            inner.join(", "),
            self.source_sql(leaf.relation)?,
            events.join(", "),
            self.source_sql(conversion.relation)?,
            on.join(" AND ")
        );
        for (_, join) in &joins {
            let _ = write!(sql, "\n  {join}");
        }
        if !predicates.is_empty() {
            let conjunction: Vec<String> = predicates.iter().map(|p| format!("({p})")).collect();
            let _ = write!(sql, "\n  WHERE {}", conjunction.join(" AND "));
        }
        let mut outer: Vec<String> = (0..dimensions.len())
            .map(|i| format!("\"s\".\"__sqb_d{i}\" AS \"d{i}\""))
            .collect();
        outer.push(format!("{} AS \"v\"", leaf.aggregate));
        let mut out = format!(
            "  SELECT {}\n  FROM (\n{sql}\n  ) AS \"s\"\n  WHERE \"s\".\"__sqb_r\" = 1",
            outer.join(", ")
        );
        if !dimensions.is_empty() {
            let groups: Vec<String> = (1..=dimensions.len()).map(|i| i.to_string()).collect();
            let _ = write!(out, "\n  GROUP BY {}", groups.join(", "));
        }
        Ok(out)
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
        ctes: &[String],
        formulas: &[Formula],
        columns: &[String],
        masks: &[Option<String>],
        all: &[Leaf<'a, 'p>],
        served: &[ServedMetric],
    ) -> String {
        let leaves = all.len();
        let dims = masks.len();
        let mut sql = format!("WITH {}", ctes.join(",\n"));
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
            select.push(format!("{} AS {}", self.formula_sql(f, all), quote(name)));
        }
        for (f, m) in formulas.iter().zip(served) {
            if let Some(flag) = &m.final_flag {
                select.push(format!("{} AS {}", final_sql(f, all), quote(flag)));
            }
        }
        if dims == 0 {
            let from: Vec<String> = (0..leaves).map(leaf_name).collect();
            let _ = write!(
                sql,
                "\nSELECT {}\nFROM {}",
                select.join(", "),
                from.join(" CROSS JOIN ")
            );
            return sql;
        }
        let keys: Vec<String> = (0..dims).map(|i| format!("\"d{i}\"")).collect();
        let unions: Vec<String> = (0..leaves)
            .map(|i| format!("SELECT {} FROM {}", keys.join(", "), leaf_name(i)))
            .collect();
        let _ = write!(
            sql,
            ",\n\"k\" AS (\n  {}\n)\nSELECT {}\nFROM \"k\"",
            unions.join("\n  UNION\n  "),
            select.join(", ")
        );
        for i in 0..leaves {
            let on: Vec<String> = keys
                .iter()
                .map(|k| format!("\"k\".{k} IS NOT DISTINCT FROM {}.{k}", leaf_name(i)))
                .collect();
            let _ = write!(sql, "\nLEFT JOIN {} ON {}", leaf_name(i), on.join(" AND "));
        }
        let order: Vec<String> = (1..=dims).map(|i| i.to_string()).collect();
        let _ = write!(sql, "\nORDER BY {}", order.join(", "));
        sql
    }
}

impl Compiler<'_, '_> {
    /// A metric's value in a group, from its leaves' values.
    fn formula_sql(&self, f: &Formula, leaves: &[Leaf<'_, '_>]) -> String {
        match f {
            Formula::Value(part) => part_sql(*part, leaves),
            Formula::Divide {
                numerator,
                denominator,
                on_zero,
                metric,
            } => {
                let (n, d) = (part_sql(*numerator, leaves), part_sql(*denominator, leaves));
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
                    let value = format!("({})", self.formula_sql(input, leaves));
                    sql = sql.replace(&format!("__sqb_input_{i}__"), &value);
                }
                sql
            }
        }
    }
}

/// A point of the time spine, in a cumulative leaf.
const POINT: &str = "\"ts\".\"p\"";
/// A point's period at a custom granularity: the spine's column for it.
const PERIOD: &str = "\"ts\".\"pc\"";
pub(super) const GRAIN_RANK: &[&str] = &["hour", "day", "week", "month", "quarter", "year"];

/// A cumulative or offset leaf's reading: the spine's points joined to the rows each one
/// reads.
pub(super) struct CumulativePlan<'p> {
    /// The requested dimension that is its time, and the grain asked.
    time: usize,
    grain: &'static str,
    /// Asked at a custom granularity: each point's period is the spine's column (`"ts"."pc"`).
    custom: bool,
    /// Each period is its points' first, last or average value: asked at a coarser grain than
    /// the points', or at a custom one, a cumulative leaf's periods collapse its points.
    collapses: bool,
    period_agg: &'p str,
    /// The FROM clause: the spine's points, and the source (`"s"`) joined in each window.
    from: String,
}

impl CumulativePlan<'_> {
    fn coarser(&self) -> bool {
        self.collapses
    }

    fn point_at_grain(&self) -> String {
        match (self.custom, self.collapses) {
            (true, _) => PERIOD.to_string(),
            (false, true) => format!("date_trunc('{}', {POINT})", self.grain),
            (false, false) => POINT.to_string(),
        }
    }

    /// The collapse of a period's points, as `collapsed` takes it.
    fn period_agg(&self) -> &'static str {
        match self.period_agg {
            "last" => "last",
            "average" => "avg",
            _ => "first",
        }
    }
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
fn part_sql(part: Part, leaves: &[Leaf<'_, '_>]) -> String {
    match part {
        // `fill_nulls_with`: the value of a group where the metric has none.
        Part::Leaf(i) => match leaves[i].fill {
            Some(fill) => format!("COALESCE({}.\"v\", {fill})", leaf_name(i)),
            None => format!("{}.\"v\"", leaf_name(i)),
        },
        Part::Coalesced { settled, live, how } => finality::combined(
            how,
            &format!("{}.\"v\"", leaf_name(settled)),
            &format!("{}.\"v\"", leaf_name(live)),
        ),
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
pub(super) fn final_sql(formula: &Formula, leaves: &[Leaf<'_, '_>]) -> String {
    let parts = formula.parts();
    let mut checks = Vec::new();
    for part in parts {
        let used = match part {
            Part::Leaf(i) => vec![i],
            Part::Coalesced { settled, live, .. } => vec![settled, live],
        };
        for i in used {
            match (&leaves[i].after, leaves[i].provisional) {
                (Some(_), _) => checks.push(format!("COALESCE({}.\"n\", 0) = 0", leaf_name(i))),
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
