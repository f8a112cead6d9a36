//! Where the semantic contracts use a column: the measures, dimensions, joins, grain, metric
//! bindings, guardrail filters, finality watermarks, tenant columns and masks that name it,
//! each at its declaration. `contract diff` lists them for a dropped or retyped column, and
//! `contract generate --overwrite` will not remove a column that has any.

use crate::project::contracts::AppliesTo;
use crate::project::metrics::MetricBinding;
use crate::project::semantic::Semantic;
use crate::project::Project;
use crate::source::{Loc, Spanned};

/// One use of a column by a semantic contract.
#[derive(Debug, Clone, PartialEq)]
pub struct Use {
    /// What uses it: "measure `revenue` of model `fct_orders`", "metric `revenue`".
    pub what: String,
    /// The declaration that names the column (or the measure that does).
    pub loc: Loc,
}

/// Every use of `column` of the model or source `relation`.
pub fn uses(project: &Project, relation: &str, column: &str) -> Vec<Use> {
    let same = |s: &Spanned<String>| s.value.eq_ignore_ascii_case(column);
    let mut out = Vec::new();
    let own = semantic_of(project, relation);
    if let Some((kind, semantic)) = own {
        let owner = format!("{kind} `{relation}`");
        for m in &semantic.measures {
            if let Some(c) = m.column.as_ref().filter(|c| same(c)) {
                out.push(at(format!("measure `{}` of {owner}", m.name.value), c));
            }
            if let Some(e) = m
                .expr
                .as_ref()
                .filter(|e| mentions(project, &e.value, column))
            {
                out.push(at(
                    format!("measure `{}` of {owner} (its expression)", m.name.value),
                    e,
                ));
            }
        }
        for d in semantic.dimensions.iter().filter(|d| same(d.column())) {
            out.push(at(
                format!("dimension `{}` of {owner}", d.name.value),
                d.column(),
            ));
        }
        for j in &semantic.joins {
            for (local, _) in j.on.iter().filter(|(l, _)| same(l)) {
                out.push(at(format!("join `{}` of {owner}", j.alias.value), local));
            }
        }
        for g in semantic
            .grain
            .iter()
            .flat_map(|g| g.value.iter())
            .filter(|g| same(g))
        {
            out.push(at(format!("the grain of {owner}"), g));
        }
    }
    joins_into(project, relation, column, &mut out);
    for binding in &project.metrics {
        metric_uses(
            project,
            binding,
            relation,
            column,
            own.map(|(_, s)| s),
            &mut out,
        );
    }
    contract_uses(project, relation, column, &mut out);
    out
}

/// Guardrail filters, finality watermarks, tenant columns and masks that name the column.
fn contract_uses(project: &Project, relation: &str, column: &str, out: &mut Vec<Use>) {
    let contracts = &project.contracts;
    let metrics = super::resolve::Metrics::new(project);
    for g in &contracts.guardrails {
        let governs = match &g.applies_to {
            Some(AppliesTo::Measure { source, .. }) => source.value == relation,
            Some(AppliesTo::Metric(name)) => {
                super::resolve::metric(&metrics, name).is_ok_and(|b| {
                    super::resolve::leaf_sources(&metrics, b)
                        .iter()
                        .any(|s| s.value == relation)
                })
            }
            None => false,
        };
        let Some(filter) = g
            .filter
            .as_ref()
            .filter(|f| governs && mentions(project, &f.value, column))
        else {
            continue;
        };
        let id = g.id.as_ref().map_or("?", |i| i.value.as_str());
        out.push(at(format!("guardrail `{id}` (its filter)"), filter));
    }
    for rule in &contracts.finality {
        for r in &rule.realizations {
            if r.source.as_ref().is_none_or(|s| s.value != relation) {
                continue;
            }
            if let Some(w) = r
                .watermark
                .as_ref()
                .filter(|w| mentions(project, &w.value, column))
            {
                let metric = rule.metric.as_ref().map_or("?", |m| m.value.as_str());
                out.push(at(
                    format!("the finality rule of metric `{metric}` (its watermark)"),
                    w,
                ));
            }
        }
    }
    for scoped in contracts.tenancy.iter().flat_map(|t| t.scoped.iter()) {
        let here = scoped.source.as_ref().is_some_and(|s| s.value == relation);
        if let Some(c) = scoped
            .column
            .as_ref()
            .filter(|c| here && c.value.eq_ignore_ascii_case(column))
        {
            out.push(at("the tenancy policy (the tenant column)".into(), c));
        }
    }
    for role in contracts.roles.iter().flat_map(|r| r.roles.iter()) {
        for mask in role.masking.iter().flatten() {
            let Some(target) = &mask.column else { continue };
            let masked = target
                .value
                .split_once('.')
                .is_some_and(|(r, c)| r == relation && c.eq_ignore_ascii_case(column));
            if masked {
                out.push(at(
                    format!("the mask of role `{}`", role.name.value),
                    target,
                ));
            }
        }
    }
}

fn at(what: String, named: &Spanned<String>) -> Use {
    Use {
        what,
        loc: named.loc.clone(),
    }
}

fn semantic_of<'p>(project: &'p Project, relation: &str) -> Option<(&'static str, &'p Semantic)> {
    if let Some(m) = project.models.iter().find(|m| m.name == relation) {
        return m.semantic.as_deref().map(|s| ("model", s));
    }
    project
        .source_tables
        .iter()
        .find(|s| s.name.value == relation)
        .and_then(|s| s.semantic.as_deref().map(|x| ("source", x)))
}

/// Joins of other relations whose joined-side key is `column` of `relation`.
fn joins_into(project: &Project, relation: &str, column: &str, out: &mut Vec<Use>) {
    let models = project
        .models
        .iter()
        .map(|m| ("model", m.name.as_str(), m.semantic.as_deref()));
    let sources = project
        .source_tables
        .iter()
        .map(|s| ("source", s.name.value.as_str(), s.semantic.as_deref()));
    for (kind, name, semantic) in models.chain(sources) {
        for j in semantic.iter().flat_map(|s| s.joins.iter()) {
            if j.to.as_ref().is_none_or(|t| t.value != relation) {
                continue;
            }
            for (_, remote) in
                j.on.iter()
                    .filter(|(_, r)| r.value.eq_ignore_ascii_case(column))
            {
                out.push(at(
                    format!("join `{}` of {kind} `{name}`", j.alias.value),
                    remote,
                ));
            }
        }
    }
}

fn metric_uses(
    project: &Project,
    binding: &MetricBinding,
    relation: &str,
    column: &str,
    semantic: Option<&Semantic>,
    out: &mut Vec<Use>,
) {
    let (Some(name), Some(c)) = (binding.name(), &binding.canonical) else {
        return;
    };
    if c.source.as_ref().is_none_or(|s| s.value != relation) {
        return;
    }
    let what = format!("metric `{}`", name.value);
    let same = |s: &&Spanned<String>| s.value.eq_ignore_ascii_case(column);
    let named = [&c.distinct_on, &c.column].into_iter().flatten();
    let grain = c.native_grain.iter().flat_map(|g| g.value.iter());
    if let Some(s) = named.chain(grain).find(same) {
        out.push(at(what.clone(), s));
    }
    let measure = c
        .measure
        .as_ref()
        .and_then(|m| semantic?.measures.iter().find(|x| x.name.value == m.value));
    let through = measure.is_some_and(|m| m.column.as_ref().is_some_and(|col| same(&col)));
    if let Some(m) = c.measure.as_ref().filter(|_| through) {
        out.push(at(format!("{what} (through its measure)"), m));
    }
    let collapse = c.collapse_dimension.as_ref().filter(|d| {
        let dim = semantic.and_then(|s| s.dimensions.iter().find(|x| x.name.value == d.value));
        dim.map_or(d.value.as_str(), |x| x.column().value.as_str())
            .eq_ignore_ascii_case(column)
    });
    if let Some(d) = collapse {
        out.push(at(format!("{what} (its collapse dimension)"), d));
    }
    if let Some(filter) = c
        .population_filter
        .as_ref()
        .filter(|f| mentions(project, &f.value, column))
    {
        out.push(at(format!("{what} (its population filter)"), filter));
    }
}

/// Whether the SQL snippet names the column.
fn mentions(project: &Project, snippet: &str, column: &str) -> bool {
    let Ok(expr) = super::predicate::parse(project, snippet) else {
        return false;
    };
    super::predicate::column_refs(&expr)
        .iter()
        .any(|parts| parts.last().is_some_and(|p| p.eq_ignore_ascii_case(column)))
}
