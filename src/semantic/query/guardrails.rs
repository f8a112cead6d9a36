//! The guardrails of a query: which govern each leaf (by metric, measure or relation), the
//! dimensions they require, the warnings of `severity = "warn"` ones, the restrictions they AND
//! into a leaf, and finality's watermark.

#[allow(clippy::wildcard_imports)]
use super::*;

impl<'a, 'p> Compiler<'a, 'p> {
    /// The guardrails that govern a leaf (its metric, or its relation's measure) of a kind, in
    /// the query's context (a guardrail without one applies in every context).
    pub(super) fn governing(
        &self,
        leaf: &Leaf<'a, 'p>,
        kind: &str,
        context: Option<&str>,
    ) -> Vec<&'p Guardrail> {
        self.governing_of(
            leaf.binding,
            leaf.relation.name,
            leaf.measure.map(|m| m.value.as_str()),
            kind,
            context,
        )
    }

    /// The guardrails of a kind governing a metric, or a measure of a relation, in a context.
    pub(super) fn governing_of(
        &self,
        binding: &'p MetricBinding,
        relation: &str,
        measure: Option<&str>,
        kind: &str,
        context: Option<&str>,
    ) -> Vec<&'p Guardrail> {
        let project: &'p Project = self.project;
        project
            .contracts
            .guardrails
            .iter()
            .filter(|g| g.kind.as_ref().is_some_and(|k| k.value == kind))
            .filter(|g| {
                g.context
                    .as_ref()
                    .is_none_or(|c| Some(c.value.as_str()) == context)
            })
            .filter(|g| match &g.applies_to {
                Some(AppliesTo::Metric(m)) => {
                    resolve::metric(self.metrics, m).is_ok_and(|b| std::ptr::eq(b, binding))
                }
                Some(AppliesTo::Measure {
                    source,
                    measure: governed,
                }) => source.value == relation && measure == Some(governed.value.as_str()),
                None => false,
            })
            .collect()
    }

    /// `required_dimension`: the query groups by the dimension or filters on it, else it is
    /// refused (or, under `severity = "warn"`, served with a warning).
    pub(super) fn required_dimensions(
        &self,
        leaf: &Leaf<'a, 'p>,
        request: &QueryRequest,
        dimensions: &[Spanned<String>],
        filters: &[Spanned<String>],
        warnings: &mut Vec<String>,
    ) -> Result<(), Refusal> {
        for g in self.governing(leaf, "required_dimension", request.context.as_deref()) {
            let Some(required) = &g.dimension else {
                continue;
            };
            let Ok(wanted) = resolve::dimension(self.relations, leaf.relation, required) else {
                continue;
            };
            let same = |r: &Spanned<String>| {
                self.metric_time(leaf, r)
                    .ok()
                    .and_then(|r| resolve::dimension(self.relations, leaf.relation, &r).ok())
                    .is_some_and(|d| std::ptr::eq(d.dimension, wanted.dimension))
            };
            let grouped = dimensions.iter().any(same);
            let filtered = filters.iter().any(|f| {
                predicate::parse(self.project, &f.value).is_ok_and(|e| {
                    predicate::column_refs(&e)
                        .iter()
                        .any(|parts| same(&self.spanned(&parts.join("."))))
                })
            });
            if grouped || filtered {
                continue;
            }
            let id = g.id.as_ref().map_or("?", |i| i.value.as_str());
            let message = format!(
                "guardrail `{id}` requires grouping by or filtering on `{}`",
                required.value
            );
            if g.warns() {
                warnings.push(message);
                continue;
            }
            return Err(Refusal {
                code: "guardrail",
                message,
                hint: g.rationale.as_ref().map(|r| r.value.clone()),
            });
        }
        Ok(())
    }

    /// What the `severity = "warn"` mandatory filters of a leaf say: applied, and said.
    pub(super) fn mandatory_warnings(&self, leaf: &Leaf<'a, 'p>) -> Vec<String> {
        self.governing(leaf, "mandatory_filter", None)
            .into_iter()
            .filter(|g| g.warns())
            .filter_map(|g| {
                let id = g.id.as_ref()?;
                let filter = g.filter.as_ref()?;
                Some(format!(
                    "guardrail `{}` applied `{}`",
                    id.value, filter.value
                ))
            })
            .collect()
    }

    /// The `restrict_source` guardrail governing a metric with a finality rule in the query's
    /// context: over the metric, or over its measure on any of its realizations.
    pub(super) fn restriction(
        &self,
        binding: &'p MetricBinding,
        rule: &'p crate::project::contracts::Finality,
        canonical: &str,
    ) -> Option<&'p Guardrail> {
        let measure = binding
            .canonical
            .as_ref()
            .and_then(|c| c.measure.as_ref())
            .map(|m| m.value.as_str());
        let context = self.context.as_deref()?;
        std::iter::once(canonical)
            .chain(
                rule.realizations
                    .iter()
                    .filter_map(|r| r.source.as_ref().map(|s| s.value.as_str())),
            )
            .find_map(|relation| {
                self.governing_of(binding, relation, measure, "restrict_source", Some(context))
                    .into_iter()
                    .find(|g| g.context.is_some())
            })
    }

    /// The provisional realization's rows after the final one's watermark (all of them when
    /// the final one has no rows yet), over the scoped final relation.
    pub(super) fn after_watermark(
        &self,
        settled: &'p crate::project::contracts::Realization,
        settled_rel: &Relation<'p>,
        live: &'p crate::project::contracts::Realization,
        live_rel: &Relation<'p>,
        metric: &str,
    ) -> Result<String, Refusal> {
        let (Some(settled_wm), Some(live_wm)) = (&settled.watermark, &live.watermark) else {
            return Err(Refusal {
                code: "unsupported_measure",
                message: format!("metric `{metric}` is coalesced by watermark, and a realization of it declares none"),
                hint: Some("give every realization a `watermark`, or serve the final one alone (`coalescing = \"final_only\"`)".into()),
            });
        };
        let zone = |r: &crate::project::contracts::Realization| {
            r.tz.as_ref()
                .map_or("UTC", |t| t.value.as_str())
                .to_string()
        };
        let instant = |rel: &Relation<'p>, wm: &Spanned<String>| {
            rel.column(&wm.value)
                .and_then(|c| c.ty.as_deref())
                .is_some_and(|t| matches!(t, DataType::Timestamp { tz: true, .. }))
        };
        let comparable = zone(settled) == zone(live)
            || (instant(settled_rel, settled_wm) && instant(live_rel, live_wm));
        if !comparable {
            return Err(Refusal {
                code: "unsupported_measure",
                message: format!("the watermarks of metric `{metric}`'s realizations are in different time zones ({} and {}) and are not both instants", zone(settled), zone(live)),
                hint: Some("make both watermarks TIMESTAMPTZ columns, or declare them in one zone".into()),
            });
        }
        let latest = format!(
            "(SELECT max({}) FROM {} AS \"s\")",
            self.qualified(settled_wm, settled_rel)?,
            self.source_sql(settled_rel)?
        );
        Ok(format!(
            "{} > {latest} OR {latest} IS NULL",
            self.qualified(live_wm, live_rel)?
        ))
    }
}
