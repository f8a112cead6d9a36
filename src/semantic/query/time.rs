//! Time in a leaf: the time spine's points (`join_to_timespine`, and the query's filters on a
//! leaf's own time read on them), cumulative windows and offsets over the spine, each at a
//! standard grain or a custom one (the spine's column for each point's period).

#[allow(clippy::wildcard_imports)]
use super::*;

impl<'a, 'p> Compiler<'a, 'p> {
    /// The query's filters on the leaf's own time, read on the time spine's points too, as
    /// MetricFlow filters them (a filtered-out point is no row); a filter on its time and on
    /// something else as well is refused, as is one on another time dimension.
    pub(super) fn spine_filters(
        &self,
        leaf: &Leaf<'a, 'p>,
        filters: &[Spanned<String>],
    ) -> Result<Vec<String>, Refusal> {
        let mut out = Vec::new();
        for filter in filters {
            match self.on_own_time(leaf, filter)? {
                OnTime::No => {
                    self.spine_refuses_time_filters(leaf, std::slice::from_ref(filter))?;
                }
                OnTime::Only(on_points) => out.push(on_points),
                OnTime::Mixed => return Err(mixed(leaf, "joins to the time spine", filter)),
            }
        }
        Ok(out)
    }

    /// An offset leaf's filters, as MetricFlow reads them: those on its own time alone filter
    /// the time spine's points (the offset points, not the rows they read), the others its
    /// rows; one on its time and on something else is refused.
    pub(super) fn offset_filters(
        &self,
        leaf: &Leaf<'a, 'p>,
        filters: &[Spanned<String>],
    ) -> Result<(Vec<String>, Vec<Spanned<String>>), Refusal> {
        let mut on_points = Vec::new();
        let mut on_rows = Vec::new();
        for filter in filters {
            match self.on_own_time(leaf, filter)? {
                OnTime::No => on_rows.push(filter.clone()),
                OnTime::Only(points) => on_points.push(points),
                OnTime::Mixed => return Err(mixed(leaf, "is offset in time", filter)),
            }
        }
        Ok((on_points, on_rows))
    }

    /// How a query filter reads the leaf's own time: not at all, only (then the filter over
    /// the time spine's rows, `"ts"`, each reference its point at the grain named), or with
    /// something else.
    fn on_own_time(
        &self,
        leaf: &Leaf<'a, 'p>,
        filter: &Spanned<String>,
    ) -> Result<OnTime, Refusal> {
        let measure = leaf.measure.map(|m| m.value.as_str());
        let own = resolve::agg_time(leaf.relation, measure);
        let column = super::super::relation::time_spine(self.relations)
            .and_then(|(_, t)| t.column.as_ref())
            .map_or("", |c| c.value.as_str());
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
        Ok(match (times, others) {
            (0, _) => OnTime::No,
            (_, 0) => OnTime::Only(expr.to_string()),
            _ => OnTime::Mixed,
        })
    }

    /// The query's filters not on the leaf's time whose every reference is a dimension the
    /// query groups by, over the spined rows (`"m"."d{j}"`): MetricFlow applies them again
    /// after the spine join, so a spine point's row without data (its groups NULL) is gone
    /// where the query filters what it groups by. A metric's own filter it does not apply
    /// again.
    pub(super) fn after_the_spine(
        &self,
        leaf: &Leaf<'a, 'p>,
        filters: &[Spanned<String>],
        dimensions: &[Spanned<String>],
    ) -> Result<Vec<String>, Refusal> {
        let mut grouped = Vec::new();
        for d in dimensions {
            grouped.push(self.leaf_dimension(leaf, d).ok());
        }
        let same = |a: &Reached<'_, '_>, b: &Reached<'_, '_>| {
            a.path == b.path
                && a.dimension.name.value == b.dimension.name.value
                && a.granularity == b.granularity
        };
        let mut out = Vec::new();
        for filter in filters {
            if !matches!(self.on_own_time(leaf, filter)?, OnTime::No) {
                continue;
            }
            let mut expr = self.in_query_filter_language(filter)?;
            let mut all = true;
            let mut any = false;
            let _ = sqlparser::ast::visit_expressions_mut(&mut expr, |e| {
                let parts: Vec<String> = match e {
                    Expr::Identifier(id) => vec![id.value.clone()],
                    Expr::CompoundIdentifier(p) => p.iter().map(|i| i.value.clone()).collect(),
                    Expr::Function(f) if crate::semantic::filter::metric_call(f).is_some() => {
                        all = false;
                        return std::ops::ControlFlow::<()>::Break(());
                    }
                    _ => return std::ops::ControlFlow::Continue(()),
                };
                let reached = self.leaf_dimension(leaf, &self.spanned(&parts.join(".")));
                let j = reached.ok().and_then(|r| {
                    grouped
                        .iter()
                        .position(|g| g.as_ref().is_some_and(|g| same(g, &r)))
                });
                match j {
                    Some(j) => {
                        *e = Expr::CompoundIdentifier(vec![
                            sqlparser::ast::Ident::with_quote('"', "m"),
                            sqlparser::ast::Ident::with_quote('"', format!("d{j}")),
                        ]);
                        any = true;
                        std::ops::ControlFlow::Continue(())
                    }
                    None => {
                        all = false;
                        std::ops::ControlFlow::Break(())
                    }
                }
            });
            if all && any {
                out.push(expr.to_string());
            }
        }
        Ok(out)
    }

    /// The requested dimension that is the leaf's own time (its measure's agg time dimension,
    /// asked by name or as `metric_time`): its index, the grain asked (its declared one when
    /// none is), and the dimension reached. The first, when asked twice.
    pub(super) fn asked_time(
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
    pub(super) fn spined(
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

    /// The time spine's distinct points at `grain` as `"ts"."p"` (with `period`, the custom
    /// granularity's column as `"ts"."pc"`, when one is asked).
    fn spine_points(
        &self,
        spine: &Relation,
        grain: &str,
        column: &str,
        period: &str,
        on_points: &[String],
    ) -> Result<String, Refusal> {
        let filtered = match on_points {
            [] => String::new(),
            some => {
                let each: Vec<String> = some.iter().map(|p| format!("({p})")).collect();
                format!(" WHERE {}", each.join(" AND "))
            }
        };
        Ok(format!(
            "(SELECT DISTINCT date_trunc('{grain}', {}) AS \"p\"{period} FROM {} AS \"ts\"{filtered}) AS \"ts\"",
            column_ref("ts", column),
            self.source_sql(spine)?,
        ))
    }

    /// A row of the time spine (`"ts"`) at a grain: its time truncated, or its period's column
    /// for a custom granularity.
    pub(super) fn spine_point(&self, grain: &str, column: &str) -> String {
        match resolve::custom_grain(self.relations, grain) {
            Some((_, period)) => column_ref("ts", period),
            None => format!("date_trunc('{grain}', {})", column_ref("ts", column)),
        }
    }

    /// A query filter on the time of a leaf joined to the spine would have to filter the
    /// spine's points too, which sqb does not yet: refused, never answered with the points
    /// the filter excludes.
    pub(super) fn spine_refuses_time_filters(
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

    /// How a leaf offset in time is read: the time spine's points at the grain asked (those
    /// `on_points` keeps), each joined to the leaf's rows of the point the offset names
    /// (`point - window`, or the start of the point's period), as MetricFlow joins them; a
    /// point whose offset has no rows is no row. Asked at a grain coarser than the offset's
    /// (or by week, offset to the start of a period), or at a custom one, the offset is taken
    /// at the spine's own grain and each point's rows added up in its period, as MetricFlow
    /// joins before it aggregates then (offset to the start of a period, at a standard grain,
    /// only the first point of each period is read, as MetricFlow reads it). Without its time in the query it is refused, as
    /// MetricFlow refuses it.
    pub(super) fn offset_plan(
        &self,
        leaf: &Leaf<'a, 'p>,
        offset: Offset<'p>,
        dimensions: &[Spanned<String>],
        on_points: &[String],
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
        let Some((spine, table)) = super::super::relation::time_spine(self.relations) else {
            return Err(Refusal::new(
                "unsupported_measure",
                format!("metric `{name}` is offset in time, and the project has no time spine"),
            ));
        };
        let column = table.column.as_ref().map_or("", |c| c.value.as_str());
        let custom = resolve::custom_grain(self.relations, grain);
        let mut on_points = on_points.to_vec();
        let (grain, period) = match custom {
            Some((_, c)) => (
                table.granularity(),
                Some(format!(", {} AS \"pc\"", column_ref("ts", c))),
            ),
            None if before_aggregation(grain, offset) => {
                let spine_grain = table.granularity();
                let point = format!("date_trunc('{spine_grain}', {})", column_ref("ts", column));
                // Offset to the start of a period, MetricFlow reads each period's first point
                // alone.
                if let Offset::ToGrain(_) = offset {
                    on_points.push(format!("date_trunc('{grain}', {point}) = {point}"));
                }
                (
                    spine_grain,
                    Some(format!(", date_trunc('{grain}', {point}) AS \"pc\"")),
                )
            }
            None => (grain, None),
        };
        let mut at_point = reached;
        at_point.granularity = Some(grain);
        let point_of_row = self.dimension_sql(leaf.relation, &at_point, joins)?;
        // A point less the window, not truncated to the grain: by week, a month before a
        // Monday is rarely one, and MetricFlow then finds no rows.
        let target = match offset {
            Offset::Window(n, unit) => format!("{POINT} - INTERVAL '{n} {unit}'"),
            Offset::ToGrain(g) => format!("date_trunc('{g}', {POINT})"),
        };
        let points = self.spine_points(
            spine,
            grain,
            column,
            period.as_deref().unwrap_or_default(),
            &on_points,
        )?;
        let from = format!(
            "{points}\n  INNER JOIN {} AS \"s\" ON {point_of_row} = {target}",
            self.source_sql(leaf.relation)?,
        );
        Ok(CumulativePlan {
            time: i,
            grain: rank_of(grain),
            custom: period.is_some(),
            // The points are at the grain asked, or added up in their periods: nothing to
            // collapse.
            collapses: false,
            period_agg: "first",
            points,
            from,
        })
    }

    /// How a cumulative leaf is read: grouped by its time, from the time spine's points, each
    /// joined to the leaf's rows in its window (`None` for a metric that adds up over all
    /// time, asked without its time: a plain aggregate). A window or a grain to date without
    /// its time in the query is refused, as MetricFlow refuses it.
    pub(super) fn cumulative_plan(
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
        let points = self.spine_points(spine, base, column, &period, &[])?;
        let from = format!(
            "{points}\n  INNER JOIN {} AS \"s\" ON {}",
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
            points,
            from,
        }))
    }
}

/// A point of the time spine, in a cumulative leaf.
pub(super) const POINT: &str = "\"ts\".\"p\"";
/// How a query filter reads a leaf's own time ([`Compiler::on_own_time`]).
enum OnTime {
    No,
    Only(String),
    Mixed,
}

/// The refusal of a filter on a leaf's time and on something else.
fn mixed(leaf: &Leaf<'_, '_>, does: &str, filter: &Spanned<String>) -> Refusal {
    let name = leaf.binding.name().map_or("?", |n| n.value.as_str());
    Refusal {
        code: "unsupported_measure",
        message: format!(
            "metric `{name}` {does}, and the filter `{}` is on its time and on something else",
            filter.value
        ),
        hint: Some("filter its time in a filter of its own".into()),
    }
}

/// Whether MetricFlow joins an offset leaf asked at `grain` to the spine before it aggregates:
/// asked coarser than the offset's grain (a month's rows offset by 7 days are each day's), or
/// by week and offset to the start of a period, which weeks do not roll up into.
fn before_aggregation(grain: &str, offset: Offset<'_>) -> bool {
    let rank = |g: &str| GRAIN_RANK.iter().position(|r| *r == g);
    let (of_offset, to_grain) = match offset {
        Offset::Window(_, unit) => (unit, false),
        Offset::ToGrain(g) => (g, true),
    };
    match (rank(grain), rank(of_offset)) {
        (Some(asked), Some(offset)) => asked > offset || (grain == "week" && to_grain),
        _ => false,
    }
}

/// A standard grain's name with the lifetime of the rank's.
fn rank_of(grain: &str) -> &'static str {
    GRAIN_RANK
        .iter()
        .copied()
        .find(|g| *g == grain)
        .unwrap_or("day")
}

/// A point's period at a custom granularity: the spine's column for it.
pub(super) const PERIOD: &str = "\"ts\".\"pc\"";
pub(super) const GRAIN_RANK: &[&str] = &["hour", "day", "week", "month", "quarter", "year"];

/// A cumulative or offset leaf's reading: the spine's points joined to the rows each one
/// reads.
pub(super) struct CumulativePlan<'p> {
    /// The requested dimension that is its time, and the grain asked.
    pub(super) time: usize,
    pub(super) grain: &'static str,
    /// Asked at a custom granularity: each point's period is the spine's column (`"ts"."pc"`).
    pub(super) custom: bool,
    /// Each period is its points' first, last or average value: asked at a coarser grain than
    /// the points', or at a custom one, a cumulative leaf's periods collapse its points.
    pub(super) collapses: bool,
    pub(super) period_agg: &'p str,
    /// The spine's points (`"ts"."p"`, and `"ts"."pc"` at a custom granularity).
    pub(super) points: String,
    /// The FROM clause: the spine's points, and the source (`"s"`) joined in each window.
    pub(super) from: String,
}

impl CumulativePlan<'_> {
    pub(super) fn coarser(&self) -> bool {
        self.collapses
    }

    /// A cumulative leaf joined to the time spine, at a coarser grain: its point rows (`sql`,
    /// with each point as `"t"`) on every point of the spine, a point without a row having a
    /// NULL value (or `fill`), before each period collapses to its first, last or average
    /// point. So a period whose first point has no data is that point's NULL (its fill), not
    /// its first point with data, and an average is over every point of the period with a
    /// fill, over those with data without one: MetricFlow's answers.
    pub(super) fn on_every_point(&self, sql: &str, dims: usize, fill: Option<i64>) -> String {
        let value = match fill {
            Some(fill) => format!("COALESCE(\"m\".\"v\", {fill}) AS \"v\""),
            None => "\"m\".\"v\" AS \"v\"".into(),
        };
        let select: Vec<String> = (0..dims)
            .map(|j| match j == self.time {
                true => format!("{} AS \"d{j}\"", self.point_at_grain()),
                false => format!("\"m\".\"d{j}\" AS \"d{j}\""),
            })
            .chain([format!("{POINT} AS \"t\""), value])
            .collect();
        let indented = sql.replace('\n', "\n  ");
        format!(
            "  SELECT {}\n  FROM {}\n  LEFT JOIN (\n  {indented}\n  ) AS \"m\" ON \"m\".\"t\" = {POINT}",
            select.join(", "),
            self.points
        )
    }

    pub(super) fn point_at_grain(&self) -> String {
        match (self.custom, self.collapses) {
            (true, _) => PERIOD.to_string(),
            (false, true) => format!("date_trunc('{}', {POINT})", self.grain),
            (false, false) => POINT.to_string(),
        }
    }

    /// The collapse of a period's points, as `collapsed` takes it.
    pub(super) fn period_agg(&self) -> &'static str {
        match self.period_agg {
            "last" => "last",
            "average" => "avg",
            _ => "first",
        }
    }
}
