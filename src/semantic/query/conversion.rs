//! A conversion metric's conversion events joined to the base events they follow, as
//! MetricFlow counts them.

#[allow(clippy::wildcard_imports)]
use super::*;

impl<'a, 'p> Compiler<'a, 'p> {
    /// A conversion metric's conversions, as MetricFlow counts them: each conversion event is
    /// joined to the base events (the leaf's relation's rows that pass the filters) with the
    /// same `on` values at or before its time (within the `window`), both times at the coarser
    /// of the two measures' grains; it is counted once, for the latest of them, and the
    /// conversion measure is aggregated in that base event's groups.
    pub(super) fn conversion_rows(
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
}
