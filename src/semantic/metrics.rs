//! The checks on metric bindings: what each canonical definition names exists on its source
//! (measures, columns, dimensions) or among the active metrics (a ratio's components), with the
//! types its kind needs; composites are acyclic; active names and aliases are unique; each
//! population filter parses and names the source's columns, and compares an enum column only
//! with its members.

use std::collections::HashMap;

use super::predicate;
use super::relation::{is_numeric, is_temporal, needs, resolve_on, Need, Relation, Relations};
use crate::diagnostics::{did_you_mean, Code, Diagnostic};
use crate::project::metrics::{Canonical, MetricBinding};
use crate::project::semantic::Measure;
use crate::project::Project;
use crate::source::Spanned;

pub(super) fn check(project: &Project, relations: &Relations<'_>, diags: &mut Vec<Diagnostic>) {
    let active = active_names(project, diags);
    for binding in &project.metrics {
        let (Some(name), Some(canonical)) = (binding.name(), &binding.canonical) else {
            continue;
        };
        let what = format!("metric `{}`", name.value);
        let source = canonical
            .source
            .as_ref()
            .and_then(|s| relation(relations, s, &format!("{what} is computed from"), diags));
        if let Some(source) = source {
            on_source(project, canonical, source, &what, diags);
            conversion(relations, canonical, source, &what, diags);
            dimension_filter(project, relations, canonical, source, &what, diags);
        }
        spine_needed(relations, canonical, &what, diags);
        for component in canonical.components() {
            component_of(project, component, &what, &active, diags);
        }
        derived(project, canonical, &what, diags);
    }
    cycles(project, diags);
}

/// A cumulative metric adds up its measure in time: the measure has an agg time dimension, and
/// the metric a `window` or a `grain_to_date`, not both.
fn cumulative(c: &Canonical, source: &Relation<'_>, what: &str, diags: &mut Vec<Diagnostic>) {
    let Some(kind) = c.kind.as_ref().filter(|k| k.value == "cumulative") else {
        return;
    };
    if let (Some(window), Some(to_date)) = (&c.window, &c.grain_to_date) {
        diags.push(
            Diagnostic::error(
                Code::InvalidValue,
                format!("{what} has both a `window` and a `grain_to_date`"),
            )
            .at(to_date.loc.clone(), "a grain to date")
            .related(window.loc.clone(), "and a window")
            .hint("a cumulative metric adds up over a window, or from the start of each period: keep one"),
        );
    }
    let measure = c.measure.as_ref().map(|m| m.value.as_str());
    let has_measure = source.semantic.is_some_and(|s| {
        s.measures
            .iter()
            .any(|m| Some(m.name.value.as_str()) == measure)
    });
    if has_measure && super::resolve::agg_time(source, measure).is_none() {
        diags.push(
            Diagnostic::error(
                Code::AggTimeDimension,
                format!(
                    "{what} is cumulative over measure `{}`, which has no time in {}",
                    measure.unwrap_or_default(),
                    source.describe()
                ),
            )
            .at(kind.loc.clone(), "adds up in time")
            .hint("declare the time of its measures: `agg_time_dimension = \"ordered_at\"` in the sidecar"),
        );
    }
}

/// A conversion metric: its conversion events' relation and measure exist, each `on` pair
/// names a column of both relations, and both measures have a time (the window is measured
/// between them).
fn conversion(
    relations: &Relations<'_>,
    c: &Canonical,
    source: &Relation<'_>,
    what: &str,
    diags: &mut Vec<Diagnostic>,
) {
    let Some(kind) = c.kind.as_ref().filter(|k| k.value == "conversion") else {
        return;
    };
    let events = c.conversion_source.as_ref().and_then(|s| {
        relation(
            relations,
            s,
            &format!("{what} reads conversion events from"),
            diags,
        )
    });
    for (local, remote) in c.on.iter().flat_map(|o| o.value.iter()) {
        resolve_on(source, local, what, diags);
        if let Some(events) = events {
            resolve_on(events, remote, what, diags);
        }
    }
    let sides = [
        (Some(source), c.measure.as_ref()),
        (events, c.conversion_measure.as_ref()),
    ];
    for (relation, measure) in sides {
        let (Some(relation), Some(measure)) = (relation, measure) else {
            continue;
        };
        let declared = match std::ptr::eq(relation, source) {
            // The base measure is checked with the source's other names.
            true => relation
                .semantic
                .is_some_and(|s| s.measures.iter().any(|m| m.name.value == measure.value)),
            false => measure_on(relation, measure, what, diags).is_some(),
        };
        if declared && super::resolve::agg_time(relation, Some(&measure.value)).is_none() {
            diags.push(
                Diagnostic::error(
                    Code::AggTimeDimension,
                    format!(
                        "{what} converts over measure `{}`, which has no time in {}",
                        measure.value,
                        relation.describe()
                    ),
                )
                .at(measure.loc.clone(), "a measure without a time")
                .related(kind.loc.clone(), "a conversion metric")
                .hint("declare the time of its measures: `agg_time_dimension = \"ordered_at\"` in the sidecar"),
            );
        }
    }
}

/// A metric's `filter` is in the filter language, and each name in it is a dimension the
/// metric's rows reach (its own, over joins, or `metric_time`); a `metric(name, entity)` in it
/// names a metric, and an entity's dimension the rows reach.
fn dimension_filter(
    project: &Project,
    relations: &Relations<'_>,
    c: &Canonical,
    source: &Relation<'_>,
    what: &str,
    diags: &mut Vec<Diagnostic>,
) {
    let Some(filter) = &c.filter else { return };
    let parsed = match super::filter::parse_query(&filter.value, project.engine()) {
        Ok(parsed) => parsed,
        Err(refused) => {
            diags.push(
                Diagnostic::error(
                    Code::PredicateInvalid,
                    format!("the filter of {what} is refused: {}", refused.why),
                )
                .at(filter.loc.clone(), "not a filter sqb applies")
                .hint("write a predicate over dimensions, as `--filter` takes it: `customer.segment = 'enterprise'`"),
            );
            return;
        }
    };
    let measure = c.measure.as_ref().map(|m| m.value.as_str());
    let mut references = predicate::column_refs(&super::filter::without_metric_calls(&parsed));
    for (metric, entity) in super::filter::metric_calls(&parsed) {
        let known = project.metrics.iter().any(|b| {
            b.name()
                .is_some_and(|n| n.value.eq_ignore_ascii_case(&metric))
        });
        if !known {
            let names = project
                .metrics
                .iter()
                .filter_map(|b| b.name().map(|n| n.value.as_str()));
            let hint = match did_you_mean(&metric, names) {
                Some(close) => format!("did you mean `{close}`?"),
                None => "name a metric bound in contracts/metrics/".to_string(),
            };
            diags.push(
                Diagnostic::error(
                    Code::SemanticUnknownMetric,
                    format!("the filter of {what} reads metric `{metric}`, which is no metric"),
                )
                .at(filter.loc.clone(), "no such metric")
                .hint(hint),
            );
        }
        references.push(vec![entity]);
    }
    for parts in references {
        let reference = Spanned::new(parts.join("."), filter.loc.clone());
        let found = super::resolve::metric_time(relations, source, measure, &reference)
            .and_then(|r| super::resolve::dimension(relations, source, &r));
        if let Err(diag) = found {
            diags.push(*diag);
        }
    }
}

/// `join_to_timespine` and cumulative metrics need the project's time spine.
fn spine_needed(relations: &Relations<'_>, c: &Canonical, what: &str, diags: &mut Vec<Diagnostic>) {
    let cumulative = c.kind.as_ref().filter(|k| k.value == "cumulative");
    let joined = c
        .join_to_timespine
        .as_ref()
        .filter(|j| j.value)
        .map(|j| j.loc.clone());
    let offset = c.offset_window.as_ref().or(c.offset_to_grain.as_ref());
    let Some(at) = joined
        .or_else(|| cumulative.map(|k| k.loc.clone()))
        .or_else(|| offset.map(|o| o.loc.clone()))
    else {
        return;
    };
    if let (Some(window), Some(to_grain)) = (&c.offset_window, &c.offset_to_grain) {
        diags.push(
            Diagnostic::error(
                Code::InvalidValue,
                format!("{what} has both an `offset_window` and an `offset_to_grain`"),
            )
            .at(to_grain.loc.clone(), "an offset to a grain")
            .related(window.loc.clone(), "and a window")
            .hint("a metric is offset by a window, or to the start of its period: keep one"),
        );
    }
    if super::relation::time_spine(relations).is_none() {
        let does = match (cumulative, offset) {
            (Some(_), _) => "is cumulative over the time spine's points",
            (None, Some(_)) => "is offset in time over the time spine's points",
            (None, None) => "joins to the time spine",
        };
        diags.push(
            Diagnostic::error(
                Code::TimeSpine,
                format!("{what} {does}, and no model or source is one"),
            )
            .at(at, "no time spine to join")
            .hint("declare one: `[time_spine] column = \"date_day\"` in the sidecar of a model with one row per day"),
        );
    }
}

/// A derived metric's `expr` is one expression of the filter language naming only the
/// metrics it lists; it reads no relation, so it has no population
/// filter of its own (its metrics have theirs).
fn derived(project: &Project, c: &Canonical, what: &str, diags: &mut Vec<Diagnostic>) {
    if c.kind.as_ref().is_none_or(|k| k.value != "derived") {
        return;
    }
    if let Some(filter) = &c.population_filter {
        diags.push(
            Diagnostic::error(
                Code::MetricKindField,
                format!("{what} is derived: it reads no relation to filter"),
            )
            .at(filter.loc.clone(), "not a field of `derived`")
            .hint("put the filter on the metrics it is derived from"),
        );
    }
    let (Some(expr), Some(listed)) = (&c.expr, &c.metrics) else {
        return;
    };
    let parsed = match super::filter::parse(&expr.value, project.engine()) {
        Ok(parsed) => parsed,
        Err(refused) => {
            diags.push(
                Diagnostic::error(
                    Code::PredicateInvalid,
                    format!("{what}'s `expr` is refused: {}", refused.why),
                )
                .at(expr.loc.clone(), "not an expression sqb computes")
                .hint("write arithmetic over the metrics it lists: `revenue - refunds`"),
            );
            return;
        }
    };
    let names = derived_names(&parsed);
    for name in &names {
        if !listed
            .value
            .iter()
            .any(|m| m.value.eq_ignore_ascii_case(name))
        {
            let listed_names = listed.value.iter().map(|m| m.value.as_str());
            let mut d = Diagnostic::error(
                Code::SemanticUnknownMetric,
                format!("{what}'s `expr` names `{name}`, which `metrics` does not list"),
            )
            .at(expr.loc.clone(), "an unlisted name");
            d = match did_you_mean(name, listed_names) {
                Some(close) => d.hint(format!("did you mean `{close}`?")),
                None => d.hint("list every metric the expression reads in `metrics`"),
            };
            diags.push(d);
        }
    }
}

/// The bare names a derived expression reads (each a metric).
pub(super) fn derived_names(expr: &sqlparser::ast::Expr) -> Vec<String> {
    use sqlparser::ast::Expr;
    let mut names: Vec<String> = Vec::new();
    let _ = sqlparser::ast::visit_expressions(expr, |e: &Expr| {
        let name = match e {
            Expr::Identifier(i) => Some(i.value.clone()),
            Expr::CompoundIdentifier(parts) => Some(
                parts
                    .iter()
                    .map(|p| p.value.as_str())
                    .collect::<Vec<_>>()
                    .join("."),
            ),
            _ => None,
        };
        if let Some(n) = name.filter(|n| !names.iter().any(|x| x.eq_ignore_ascii_case(n))) {
            names.push(n);
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    names
}

/// The active bindings by lower-cased name and alias; clashes reported.
fn active_names<'p>(
    project: &'p Project,
    diags: &mut Vec<Diagnostic>,
) -> HashMap<String, &'p MetricBinding> {
    let mut seen: HashMap<String, (&Spanned<String>, &MetricBinding)> = HashMap::new();
    for binding in project.metrics.iter().filter(|b| b.is_active()) {
        let Some(name) = binding.name() else { continue };
        for alias in &binding.aliases {
            if alias.value.eq_ignore_ascii_case(&name.value) {
                diags.push(
                    Diagnostic::error(
                        Code::MetricNameClash,
                        format!("metric `{}` has itself as an alias", name.value),
                    )
                    .at(alias.loc.clone(), "the metric's own name")
                    .related(name.loc.clone(), "the metric")
                    .hint("an alias is another name for the metric: remove this one"),
                );
            }
        }
        let names = std::iter::once(name).chain(
            binding
                .aliases
                .iter()
                .filter(|a| !a.value.eq_ignore_ascii_case(&name.value)),
        );
        for spelled in names {
            let key = spelled.value.to_lowercase();
            match seen.get(&key) {
                Some((first, other)) if !std::ptr::eq(*other, binding) => diags.push(
                    Diagnostic::error(Code::MetricNameClash, format!("`{}` names two active metrics", spelled.value))
                        .at(spelled.loc.clone(), "named here")
                        .related(first.loc.clone(), "and here")
                        .hint("metric names and aliases are unique among active bindings (case-insensitively); rename one, or set `status = \"deprecated\"` on the old one"),
                ),
                Some(_) => {}
                None => {
                    seen.insert(key, (spelled, binding));
                }
            }
        }
    }
    seen.into_iter().map(|(k, (_, b))| (k, b)).collect()
}

pub(super) fn relation<'a, 'p>(
    relations: &'a Relations<'p>,
    name: &Spanned<String>,
    what: &str,
    diags: &mut Vec<Diagnostic>,
) -> Option<&'a Relation<'p>> {
    if let Some(r) = relations.get(&name.value) {
        return Some(r);
    }
    let mut diag = Diagnostic::error(
        Code::SemanticUnknownRelation,
        format!("{what} `{}`, which is no model or source", name.value),
    )
    .at(name.loc.clone(), "no such model or source");
    diag = match did_you_mean(&name.value, relations.iter().map(|r| r.name)) {
        Some(close) => diag.hint(format!("did you mean `{close}`?")),
        None => diag.hint("name a model (its file stem) or a source of the project"),
    };
    diags.push(diag);
    None
}

/// What the definition names on its source: the measure, columns and collapse dimension.
fn on_source(
    project: &Project,
    c: &Canonical,
    source: &Relation<'_>,
    what: &str,
    diags: &mut Vec<Diagnostic>,
) {
    if let Some(measure) = &c.measure {
        measure_on(source, measure, what, diags);
    }
    for column in [&c.distinct_on].into_iter().flatten() {
        resolve_on(source, column, what, diags);
    }
    if let Some(column) = &c.column {
        if let Some(declared) = resolve_on(source, column, what, diags) {
            let need = Need {
                what: format!("{what} (percentile)"),
                expected: "a numeric or temporal type",
                fits: |t| is_numeric(t) || is_temporal(t),
                hint: "use a column of that type",
            };
            needs(declared, column, &need, diags);
        }
    }
    if let (Some(approximate), Some(discrete)) = (
        c.approximate.as_ref().filter(|a| a.value),
        c.discrete.as_ref().filter(|d| d.value),
    ) {
        diags.push(
            Diagnostic::error(
                Code::InvalidValue,
                format!("{what} is an approximate discrete percentile"),
            )
            .at(approximate.loc.clone(), "approximate")
            .related(discrete.loc.clone(), "and discrete")
            .hint("an approximate percentile is continuous: drop one"),
        );
    }
    if let Some(approximate) = c.approximate.as_ref().filter(|a| a.value) {
        let engine = project.engine();
        if crate::engine_rules::of(engine)
            .approximate_percentile("x", "0.5")
            .is_none()
        {
            diags.push(
                Diagnostic::error(
                    Code::InvalidValue,
                    format!("{what} is an approximate percentile, which {engine} does not compute"),
                )
                .at(approximate.loc.clone(), "approximate")
                .hint("drop `approximate`: the exact percentile"),
            );
        }
    }
    for column in c.native_grain.iter().flat_map(|g| g.value.iter()) {
        resolve_on(source, column, what, diags);
    }
    if let Some(grain) = c.native_grain.as_ref().filter(|g| g.value.is_empty()) {
        diags.push(
            Diagnostic::error(
                Code::InvalidValue,
                format!("{what} has an empty `native_grain`"),
            )
            .at(grain.loc.clone(), "no column")
            .hint("an opaque metric is served only at its native grain: name its columns"),
        );
    }
    if let Some(dimension) = &c.collapse_dimension {
        collapse_dimension(source, dimension, what, diags);
    }
    cumulative(c, source, what, diags);
    if let Some(groupings) = &c.collapse_groupings {
        for column in &groupings.value {
            resolve_on(source, column, what, diags);
        }
        let agg = c
            .collapse_agg
            .as_ref()
            .filter(|a| !matches!(a.value.as_str(), "last" | "first"));
        if let Some(agg) = agg {
            diags.push(
                Diagnostic::error(
                    Code::InvalidValue,
                    format!("{what} collapses by `{}` within `collapse_groupings`", agg.value),
                )
                .at(agg.loc.clone(), "not `last` or `first`")
                .related(groupings.loc.clone(), "collapse groupings")
                .hint("with `collapse_groupings` a metric keeps the rows of the last or first point: `collapse_agg = \"last\"` or `\"first\"`"),
            );
        }
    }
    if let Some(filter) = &c.population_filter {
        predicate(
            project,
            source,
            filter,
            &format!("the population filter of {what}"),
            diags,
        );
    }
}

/// The measure `name` of `source`, or an error at the name.
pub(super) fn measure_on<'p>(
    source: &Relation<'p>,
    measure: &Spanned<String>,
    what: &str,
    diags: &mut Vec<Diagnostic>,
) -> Option<&'p Measure> {
    let measures = source
        .semantic
        .map(|s| s.measures.as_slice())
        .unwrap_or_default();
    if let Some(found) = measures.iter().find(|m| m.name.value == measure.value) {
        return Some(found);
    }
    let mut diag = Diagnostic::error(
        Code::SemanticUnknownMeasure,
        format!(
            "{what} reads measure `{}`, which {} does not declare",
            measure.value,
            source.describe()
        ),
    )
    .at(measure.loc.clone(), "no such measure")
    .related(
        source.loc.clone(),
        format!("the measures of {}", source.describe()),
    );
    diag = match did_you_mean(
        &measure.value,
        measures.iter().map(|m| m.name.value.as_str()),
    ) {
        Some(close) => diag.hint(format!("did you mean `{close}`?")),
        None => diag.hint(format!(
            "declare it under [measures.{}] of {}",
            measure.value,
            source.describe()
        )),
    };
    diags.push(diag);
    None
}

/// A semi-additive metric collapses a dimension of its source (or a column) that is temporal.
fn collapse_dimension(
    source: &Relation<'_>,
    name: &Spanned<String>,
    what: &str,
    diags: &mut Vec<Diagnostic>,
) {
    let dimension = source
        .semantic
        .and_then(|s| s.dimensions.iter().find(|d| d.name.value == name.value));
    if dimension.is_some_and(|d| d.expr.is_some()) {
        // An expression's type is the warehouse's to say.
        return;
    }
    let column_name = dimension.map_or(name.clone(), |d| {
        Spanned::new(d.column().value.clone(), name.loc.clone())
    });
    if let Some(declared) = resolve_on(source, &column_name, what, diags) {
        let need = Need {
            what: format!("{what} (collapse_dimension)"),
            expected: "a DATE or TIMESTAMP type",
            fits: is_temporal,
            hint: "use a column of that type",
        };
        needs(declared, name, &need, diags);
    }
}

/// A component of a ratio or weighted average is an active metric.
fn component_of(
    project: &Project,
    component: &Spanned<String>,
    what: &str,
    active: &HashMap<String, &MetricBinding>,
    diags: &mut Vec<Diagnostic>,
) {
    if active.contains_key(&component.value.to_lowercase()) {
        return;
    }
    let inactive = project.metrics.iter().find(|b| {
        b.name()
            .is_some_and(|n| n.value.eq_ignore_ascii_case(&component.value))
    });
    let diag = match inactive.and_then(|b| b.status.as_ref()) {
        Some(status) => Diagnostic::error(
            Code::MetricComponentInactive,
            format!(
                "{what} is computed from `{}`, which is deprecated",
                component.value
            ),
        )
        .at(component.loc.clone(), "a deprecated metric")
        .related(status.loc.clone(), "deprecated here")
        .hint("compose active metrics only: use its replacement"),
        None => {
            let names = active.keys().map(String::as_str);
            let mut d = Diagnostic::error(
                Code::SemanticUnknownMetric,
                format!(
                    "{what} is computed from `{}`, which is no metric",
                    component.value
                ),
            )
            .at(component.loc.clone(), "no such metric");
            d = match did_you_mean(&component.value, names) {
                Some(close) => d.hint(format!("did you mean `{close}`?")),
                None => d.hint("name a metric bound in contracts/metrics/"),
            };
            d
        }
    };
    diags.push(diag);
}

/// Composite metrics must not be computed from themselves: each cycle, in full, once.
fn cycles(project: &Project, diags: &mut Vec<Diagnostic>) {
    let index: HashMap<String, usize> = project
        .metrics
        .iter()
        .enumerate()
        .filter_map(|(i, b)| Some((b.name()?.value.to_lowercase(), i)))
        .collect();
    let edges: Vec<Vec<(usize, &Spanned<String>)>> = project
        .metrics
        .iter()
        .map(|b| {
            b.canonical
                .iter()
                .flat_map(|c| c.components())
                .filter_map(|c| Some((*index.get(&c.value.to_lowercase())?, c)))
                .collect()
        })
        .collect();
    let mut state = vec![0u8; edges.len()];
    let mut stack = Vec::new();
    let mut reported = std::collections::HashSet::new();
    for start in 0..edges.len() {
        visit(
            project,
            &edges,
            start,
            &mut state,
            &mut stack,
            &mut reported,
            diags,
        );
    }
}

fn visit<'a>(
    project: &Project,
    edges: &'a [Vec<(usize, &'a Spanned<String>)>],
    at: usize,
    state: &mut [u8],
    stack: &mut Vec<usize>,
    reported: &mut std::collections::HashSet<Vec<usize>>,
    diags: &mut Vec<Diagnostic>,
) {
    if state[at] != 0 {
        return;
    }
    state[at] = 1;
    stack.push(at);
    for &(next, reference) in &edges[at] {
        if state[next] == 1 {
            let from = stack.iter().position(|&s| s == next).unwrap_or(0);
            let mut cycle: Vec<usize> = stack[from..].to_vec();
            let mut key = cycle.clone();
            key.sort_unstable();
            if reported.insert(key) {
                cycle.push(next);
                let names: Vec<&str> = cycle
                    .iter()
                    .filter_map(|&i| project.metrics[i].name().map(|n| n.value.as_str()))
                    .collect();
                diags.push(
                    Diagnostic::error(Code::MetricCycle, format!("metrics are computed from each other: {}", names.join(" → ")))
                        .at(reference.loc.clone(), "closes the cycle")
                        .hint("a composite metric is computed from other metrics; one of these must be computed from a source"),
                );
            }
        } else {
            visit(project, edges, next, state, stack, reported, diags);
        }
    }
    stack.pop();
    state[at] = 2;
}

/// A SQL predicate over `source`'s columns: it parses in the engine's dialect, every column it
/// names is declared, and every literal fits the column it is compared with.
pub(super) fn predicate(
    project: &Project,
    source: &Relation<'_>,
    text: &Spanned<String>,
    what: &str,
    diags: &mut Vec<Diagnostic>,
) {
    let snippet = predicate::Snippet {
        text,
        what,
        example: "write one boolean SQL expression over the source's columns, such as \"status <> 'cancelled'\"",
        filter: true,
    };
    predicate::check(
        project,
        &snippet,
        &mut predicate::on_relation(source, what),
        diags,
    );
}
