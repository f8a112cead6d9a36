//! Where the semantic contracts use a column: the measures, dimensions, joins, grain, metric
//! bindings, guardrail filters, finality watermarks, tenant columns and masks that name it,
//! each at its declaration. `contract diff` lists them for a dropped or retyped column, and
//! `contract generate --overwrite` will not remove a column that has any.

use std::collections::HashMap;

use crate::project::contracts::AppliesTo;
use crate::project::metrics::MetricBinding;
use crate::project::semantic::{Join, Semantic};
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

/// Every use of `column` of the model or source `relation`. For more than one column, index
/// the project once with [`Uses`].
pub fn uses(project: &Project, relation: &str, column: &str) -> Vec<Use> {
    Uses::new(project).of(relation, column)
}

/// The project's semantic contracts indexed by the relation they name, so that asking about
/// each column of a large diff does not scan every model each time.
pub struct Uses<'p> {
    project: &'p Project,
    /// Each model's semantic keys (models first: a source of a model's name is not its own),
    /// then each source's.
    own: HashMap<&'p str, (&'static str, Option<&'p Semantic>)>,
    /// The joins of every model and source, by the relation they join to, in project order.
    joins_to: HashMap<&'p str, Vec<(&'static str, &'p str, &'p Join)>>,
    metrics: super::resolve::Metrics<'p>,
}

impl<'p> Uses<'p> {
    pub fn new(project: &'p Project) -> Self {
        let models = project
            .models
            .iter()
            .map(|m| ("model", m.name.as_str(), m.semantic.as_deref()));
        let sources = project
            .source_tables
            .iter()
            .map(|s| ("source", s.name.value.as_str(), s.semantic.as_deref()));
        let mut own = HashMap::new();
        let mut joins_to: HashMap<&str, Vec<_>> = HashMap::new();
        for (kind, name, semantic) in models.chain(sources) {
            own.entry(name).or_insert((kind, semantic));
            for j in semantic.iter().flat_map(|s| s.joins.iter()) {
                if let Some(to) = &j.to {
                    joins_to
                        .entry(to.value.as_str())
                        .or_default()
                        .push((kind, name, j));
                }
            }
        }
        Self {
            project,
            own,
            joins_to,
            metrics: super::resolve::Metrics::new(project),
        }
    }

    /// Every use of `column` of the model or source `relation`.
    pub fn of(&self, relation: &str, column: &str) -> Vec<Use> {
        let project = self.project;
        let mut out = Vec::new();
        let own = self
            .own
            .get(relation)
            .and_then(|&(kind, s)| s.map(|s| (kind, s)));
        if let Some((kind, semantic)) = own {
            own_uses(project, kind, relation, semantic, column, &mut out);
        }
        self.joins_into(relation, column, &mut out);
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
        contract_uses(project, &self.metrics, relation, column, &mut out);
        out
    }

    /// Joins of other relations whose joined-side key is `column` of `relation`.
    fn joins_into(&self, relation: &str, column: &str, out: &mut Vec<Use>) {
        for (kind, name, j) in self.joins_to.get(relation).into_iter().flatten() {
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

/// The measures, dimensions, joins and grain of `relation`'s own semantic keys that name
/// `column`.
fn own_uses(
    project: &Project,
    kind: &str,
    relation: &str,
    semantic: &Semantic,
    column: &str,
    out: &mut Vec<Use>,
) {
    let same = |s: &Spanned<String>| s.value.eq_ignore_ascii_case(column);
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
    for d in &semantic.dimensions {
        match &d.expr {
            Some(e) if mentions(project, &e.value, column) => out.push(at(
                format!("dimension `{}` of {owner} (its expression)", d.name.value),
                e,
            )),
            Some(_) => {}
            None if same(d.column()) => out.push(at(
                format!("dimension `{}` of {owner}", d.name.value),
                d.column(),
            )),
            None => {}
        }
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

/// Guardrail filters, finality watermarks, tenant columns and masks that name the column.
fn contract_uses(
    project: &Project,
    metrics: &super::resolve::Metrics<'_>,
    relation: &str,
    column: &str,
    out: &mut Vec<Use>,
) {
    let contracts = &project.contracts;
    for g in &contracts.guardrails {
        let governs = match &g.applies_to {
            Some(AppliesTo::Measure { source, .. }) => source.value == relation,
            Some(AppliesTo::Metric(name)) => super::resolve::metric(metrics, name).is_ok_and(|b| {
                super::resolve::leaf_sources(metrics, b)
                    .iter()
                    .any(|s| s.value == relation)
            }),
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
    let grain = c
        .native_grain
        .iter()
        .chain(&c.collapse_groupings)
        .flat_map(|g| g.value.iter());
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
