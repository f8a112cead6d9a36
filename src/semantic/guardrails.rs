//! The checks on guardrails and finality rules: what a guardrail governs exists, its filter
//! parses over the governed relation, its dimension is reachable, its context is declared, a
//! `restrict_source` has realizations to restrict; a finality rule names an active metric with
//! exactly one final realization, each declaring the metric's measure with equivalent types,
//! in a real time zone, with a watermark that parses.

use std::collections::HashMap;

use super::metrics::relation;
use super::predicate::{self, Snippet};
use super::relation::{is_temporal, Relation, Relations};
use super::resolve::{self, Metrics};
use crate::diagnostics::{did_you_mean, Code, Diagnostic};
use crate::project::contracts::{AppliesTo, Finality, Guardrail};
use crate::project::metrics::MetricBinding;
use crate::project::semantic::Measure;
use crate::project::Project;
use crate::source::{Loc, Spanned};
use crate::types;

pub(super) fn check(
    project: &Project,
    relations: &Relations<'_>,
    metrics: &Metrics<'_>,
    diags: &mut Vec<Diagnostic>,
) {
    let guardrails = &project.contracts.guardrails;
    unique_ids(
        guardrails.iter().filter_map(|g| g.id.as_ref()),
        "guardrail",
        diags,
    );
    for guardrail in guardrails {
        guardrail_checks(project, relations, metrics, guardrail, diags);
    }
    let rules = &project.contracts.finality;
    let named = rules.iter().filter_map(|r| r.metric.as_ref());
    for (first, again) in repeats(named, |m| m.to_lowercase()) {
        diags.push(
            Diagnostic::error(
                Code::FinalityRealizations,
                format!("metric `{}` has two finality rules", again.value),
            )
            .at(again.loc.clone(), "a second rule")
            .related(first.loc.clone(), "the first")
            .hint("one finality rule per metric lists all of its realizations"),
        );
    }
    for rule in rules {
        finality_checks(project, relations, metrics, rule, diags);
    }
}

/// Each name whose key an earlier name has, with that earlier one.
fn repeats<'a>(
    names: impl Iterator<Item = &'a Spanned<String>>,
    key: impl Fn(&str) -> String,
) -> Vec<(&'a Spanned<String>, &'a Spanned<String>)> {
    let mut seen: HashMap<String, &Spanned<String>> = HashMap::new();
    let mut out = Vec::new();
    for name in names {
        match seen.get(&key(&name.value)) {
            Some(first) => out.push((*first, name)),
            None => {
                seen.insert(key(&name.value), name);
            }
        }
    }
    out
}

/// Ids unique among one kind of contract.
pub(super) fn unique_ids<'a>(
    ids: impl Iterator<Item = &'a Spanned<String>>,
    kind: &str,
    diags: &mut Vec<Diagnostic>,
) {
    let kinds = match kind.strip_suffix('y') {
        Some(stem) => format!("{stem}ies"),
        None => format!("{kind}s"),
    };
    for (first, id) in repeats(ids, str::to_string) {
        diags.push(
            Diagnostic::error(
                Code::DuplicateContractId,
                format!("two {kinds} have the id `{}`", id.value),
            )
            .at(id.loc.clone(), "used again here")
            .related(first.loc.clone(), "first used here")
            .hint(format!("{kind} ids are unique: rename one")),
        );
    }
}

/// A named context is declared in `sqb.toml` (`[semantic] contexts`).
pub(super) fn context(
    project: &Project,
    context: &Spanned<String>,
    what: &str,
    diags: &mut Vec<Diagnostic>,
) {
    let declared = &project.config.contexts;
    if declared.iter().any(|c| c.value == context.value) {
        return;
    }
    let mut diag = Diagnostic::error(
        Code::UnknownContext,
        format!(
            "{what} names context `{}`, which sqb.toml does not declare",
            context.value
        ),
    )
    .at(context.loc.clone(), "no such context");
    diag = match did_you_mean(&context.value, declared.iter().map(|c| c.value.as_str())) {
        Some(close) => diag.hint(format!("did you mean `{close}`?")),
        None => diag.hint(format!(
            "declare it in sqb.toml: `[semantic] contexts = [\"{}\"]`",
            context.value
        )),
    };
    diags.push(diag);
}

/// The metric a contract names, or an error at the name.
pub(super) fn known_metric<'p>(
    metrics: &Metrics<'p>,
    name: &Spanned<String>,
    what: &str,
    diags: &mut Vec<Diagnostic>,
) -> Option<&'p MetricBinding> {
    match resolve::metric(metrics, name) {
        Ok(binding) => Some(binding),
        Err(diag) if diag.code == Code::QueryUnresolved => {
            let mut d = Diagnostic::error(
                Code::SemanticUnknownMetric,
                format!("{what} names `{}`, which is no metric", name.value),
            )
            .at(name.loc.clone(), "no such metric");
            if let Some(hint) = diag.hint {
                d = d.hint(hint);
            }
            diags.push(d);
            None
        }
        Err(diag) => {
            diags.push(*diag);
            None
        }
    }
}

fn guardrail_checks(
    project: &Project,
    relations: &Relations<'_>,
    metrics: &Metrics<'_>,
    g: &Guardrail,
    diags: &mut Vec<Diagnostic>,
) {
    let what = match &g.id {
        Some(id) => format!("guardrail `{}`", id.value),
        None => "a guardrail".to_string(),
    };
    if let Some(ctx) = &g.context {
        context(project, ctx, &what, diags);
    }
    // The relations the guardrail's filter and dimension are over.
    let mut governed: Vec<&Relation<'_>> = Vec::new();
    let mut metric: Option<&MetricBinding> = None;
    match &g.applies_to {
        Some(AppliesTo::Metric(name)) => {
            metric = known_metric(metrics, name, &what, diags);
            if let Some(binding) = metric {
                for source in resolve::leaf_sources(metrics, binding) {
                    governed.extend(relations.get(&source.value));
                }
            }
        }
        Some(AppliesTo::Measure { source, measure }) => {
            if let Some(r) = relation(relations, source, &format!("{what} names"), diags) {
                super::metrics::measure_on(r, measure, &what, diags);
                governed.push(r);
            }
        }
        None => {}
    }
    if let Some(filter) = &g.filter {
        let what = format!("the filter of {what}");
        for r in &governed {
            let snippet = Snippet { text: filter, what: &what, example: "write one boolean SQL expression over the governed relation's columns, such as \"is_test = false\"", filter: true };
            predicate::check(
                project,
                &snippet,
                &mut predicate::on_relation(r, &what),
                diags,
            );
        }
    }
    if let Some(dimension) = &g.dimension {
        for r in &governed {
            if let Err(diag) = resolve::dimension(relations, r, dimension) {
                diags.push(*diag);
            }
        }
    }
    if g.kind
        .as_ref()
        .is_some_and(|k| k.value == "restrict_source")
    {
        restricts(project, g, metric, &what, diags);
    }
}

/// A `restrict_source` guardrail restricts a metric's realizations: a finality rule for the
/// metric (or one with a realization on the governed source) must exist.
fn restricts(
    project: &Project,
    g: &Guardrail,
    metric: Option<&MetricBinding>,
    what: &str,
    diags: &mut Vec<Diagnostic>,
) {
    let rules = &project.contracts.finality;
    let (has, at) = match &g.applies_to {
        Some(AppliesTo::Metric(name)) => {
            let Some(binding) = metric.and_then(|m| m.name()) else {
                return;
            };
            (
                rules.iter().any(|f| {
                    f.metric
                        .as_ref()
                        .is_some_and(|m| m.value.eq_ignore_ascii_case(&binding.value))
                }),
                name,
            )
        }
        Some(AppliesTo::Measure { source, .. }) => (
            rules.iter().any(|f| {
                f.realizations
                    .iter()
                    .any(|r| r.source.as_ref().is_some_and(|s| s.value == source.value))
            }),
            source,
        ),
        None => return,
    };
    if !has {
        diags.push(
            Diagnostic::error(Code::RestrictSourceFinality, format!("{what} restricts `{}` to a realization, but no finality rule declares its realizations", at.value))
                .at(at.loc.clone(), "no finality rule for this")
                .hint("declare the realizations in contracts/guardrails/finality-<metric>.toml"),
        );
    }
}

fn finality_checks(
    project: &Project,
    relations: &Relations<'_>,
    metrics: &Metrics<'_>,
    rule: &Finality,
    diags: &mut Vec<Diagnostic>,
) {
    let Some(name) = &rule.metric else { return };
    let what = format!("the finality rule of metric `{}`", name.value);
    let binding = known_metric(metrics, name, &what, diags);
    if let Some(status) = binding
        .and_then(|b| b.status.as_ref())
        .filter(|_| binding.is_some_and(|b| !b.is_active()))
    {
        diags.push(
            Diagnostic::error(
                Code::MetricComponentInactive,
                format!("{what} governs a deprecated metric"),
            )
            .at(name.loc.clone(), "a deprecated metric")
            .related(status.loc.clone(), "deprecated here")
            .hint("finality governs active metrics: move the rule to its replacement"),
        );
    }
    one_final(rule, &what, diags);
    let measure = binding.and_then(|b| {
        let c = b.canonical.as_ref()?;
        if c.measure.is_none() {
            diags.push(
                Diagnostic::error(
                    Code::FinalityRealizations,
                    format!("{what} governs a metric computed from other metrics"),
                )
                .at(name.loc.clone(), "no measure of its own")
                .related(
                    c.kind.as_ref().map_or(c.loc.clone(), |k| k.loc.clone()),
                    "its kind",
                )
                .hint(
                    "realizations serve one measure: govern a metric with a `source` and `measure`",
                ),
            );
        }
        c.measure.as_ref()
    });
    let mut first: Option<(&Measure, &Relation<'_>)> = None;
    for realization in &rule.realizations {
        if let Some(tz) = &realization.tz {
            timezone(tz, diags);
        }
        let Some(source) = realization
            .source
            .as_ref()
            .and_then(|s| relation(relations, s, &format!("{what} names"), diags))
        else {
            continue;
        };
        if let Some(watermark) = &realization.watermark {
            let what = format!("the watermark of {}", source.describe());
            let snippet = Snippet { text: watermark, what: &what, example: "write the SQL expression of the time up to which it is complete, such as \"settled_at\"", filter: false };
            let expr = predicate::check(
                project,
                &snippet,
                &mut predicate::on_relation(source, &what),
                diags,
            );
            if let Some(sqlparser::ast::Expr::Identifier(id)) = &expr {
                if let Some(column) = source.column(&id.value) {
                    let need = super::relation::Need {
                        what,
                        expected: "a DATE or TIMESTAMP type",
                        fits: is_temporal,
                        hint: "a watermark is a point in time: use a date or timestamp column",
                    };
                    super::relation::needs(column, watermark, &need, diags);
                }
            }
        }
        let Some(measure) = measure else { continue };
        let Some(declared) = super::metrics::measure_on(source, measure, &what, diags) else {
            continue;
        };
        match first {
            None => first = Some((declared, source)),
            Some((model, model_source)) => same_measure(
                project,
                (model, model_source),
                (declared, source),
                &what,
                diags,
            ),
        }
    }
}

/// Exactly one realization is final.
fn one_final(rule: &Finality, what: &str, diags: &mut Vec<Diagnostic>) {
    let finals: Vec<&Spanned<String>> = rule
        .realizations
        .iter()
        .filter_map(|r| r.role.as_ref())
        .filter(|r| r.value == "final")
        .collect();
    match finals.as_slice() {
        [_] => {}
        [] if rule.realizations.iter().all(|r| r.role.is_some()) => diags.push(
            Diagnostic::error(
                Code::FinalityRealizations,
                format!("{what} has no final realization"),
            )
            .at(
                rule.metric
                    .as_ref()
                    .map_or(Loc::file_start(rule.file), |m| m.loc.clone()),
                "no `role = \"final\"`",
            )
            .hint("exactly one realization is final: the one board reporting may rely on"),
        ),
        [] => {}
        [first, second, ..] => diags.push(
            Diagnostic::error(
                Code::FinalityRealizations,
                format!("{what} has {} final realizations", finals.len()),
            )
            .at(second.loc.clone(), "a second final realization")
            .related(first.loc.clone(), "the first")
            .hint("exactly one realization is final; mark the others `role = \"provisional\"`"),
        ),
    }
}

/// Realizations of one metric aggregate the same way over columns of equivalent types.
fn same_measure(
    project: &Project,
    first: (&Measure, &Relation<'_>),
    other: (&Measure, &Relation<'_>),
    what: &str,
    diags: &mut Vec<Diagnostic>,
) {
    let (a, ra) = first;
    let (b, rb) = other;
    let agg = |m: &Measure| m.agg.as_ref().map(|a| a.value.clone());
    if agg(a) != agg(b) {
        diags.push(
            Diagnostic::error(Code::FinalityRealizations, format!("{what}: measure `{}` aggregates differently on {} and {}", a.name.value, ra.describe(), rb.describe()))
                .at(b.agg.as_ref().map_or(b.name.loc.clone(), |x| x.loc.clone()), format!("{} here", agg(b).unwrap_or_default()))
                .related(a.agg.as_ref().map_or(a.name.loc.clone(), |x| x.loc.clone()), format!("{} there", agg(a).unwrap_or_default()))
                .hint("every realization computes the same measure: the same aggregation over the same kind of column"),
        );
        return;
    }
    let (Some(ca), Some(cb)) = (measure_column(a, ra), measure_column(b, rb)) else {
        return;
    };
    let (Some(ta), Some(tb)) = (&ca.ty, &cb.ty) else {
        return;
    };
    let engine = project.engine();
    if types::equivalent(ta, tb, engine) && types::equivalent(tb, ta, engine) {
        return;
    }
    let spelled = |c: &crate::project::Column| {
        c.type_text
            .as_ref()
            .map_or(String::new(), |t| t.value.to_string())
    };
    let mut diag = Diagnostic::error(
        Code::FinalityRealizations,
        format!(
            "{what}: measure `{}` is over {} on {} but {} on {}",
            a.name.value,
            spelled(ca),
            ra.describe(),
            spelled(cb),
            rb.describe()
        ),
    )
    .at(
        cb.type_text
            .as_ref()
            .map_or(b.name.loc.clone(), |t| t.loc.clone()),
        format!("{} here", spelled(cb)),
    );
    if let Some(t) = &ca.type_text {
        diag = diag.related(t.loc.clone(), format!("{} there", t.value));
    }
    diags.push(
        diag.hint("realizations of one metric declare its measure's column with equivalent types"),
    );
}

fn measure_column<'p>(m: &Measure, r: &Relation<'p>) -> Option<&'p crate::project::Column> {
    r.column(&m.column.as_ref()?.value)
}

/// `tz` is an IANA time zone name.
fn timezone(tz: &Spanned<String>, diags: &mut Vec<Diagnostic>) {
    if tz.value.parse::<chrono_tz::Tz>().is_ok() {
        return;
    }
    let names = chrono_tz::TZ_VARIANTS.iter().map(|t| t.name());
    let diag = Diagnostic::error(
        Code::InvalidTimezone,
        format!("`{}` is no IANA time zone", tz.value),
    )
    .at(tz.loc.clone(), "unknown time zone");
    diags.push(match did_you_mean(&tz.value, names) {
        Some(close) => diag.hint(format!("did you mean `{close}`?")),
        None => diag.hint("name a zone of the IANA database, such as \"Europe/Berlin\" or \"UTC\""),
    });
}
