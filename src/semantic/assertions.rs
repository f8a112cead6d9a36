//! The checks on assertions: each query resolves offline (metrics by name or alias, dimensions
//! reachable from every source the metrics are computed from, filters over those dimensions,
//! a declared context), and every expected value is under an output column of the query with
//! a value its type can hold.

use super::guardrails::{context, unique_ids};
use super::predicate::{self, is_date, is_timestamp, Snippet};
use super::relation::{is_numeric, is_temporal, Relation, Relations};
use super::resolve::{self, Metrics, Reached};
use crate::diagnostics::{did_you_mean, Code, Diagnostic};
use crate::project::contracts::{Assertion, ExpectRow, Expected, SemanticQuery};
use crate::project::{Column, Project};
use crate::source::Spanned;
use crate::types::DataType;

/// What an output column of a query holds.
#[derive(Clone, Copy)]
enum Output<'p> {
    /// A metric's value: a number.
    Metric,
    /// A dimension's value: its column's type (unknown when undeclared), or a truncated time
    /// with a granularity.
    Dimension(Option<&'p Column>, bool),
}

pub(super) fn check(
    project: &Project,
    relations: &Relations<'_>,
    metrics: &Metrics<'_>,
    diags: &mut Vec<Diagnostic>,
) {
    let assertions = &project.contracts.assertions;
    unique_ids(
        assertions.iter().filter_map(|a| a.id.as_ref()),
        "assertion",
        diags,
    );
    for assertion in assertions {
        let what = match &assertion.id {
            Some(id) => format!("assertion `{}`", id.value),
            None => "an assertion".to_string(),
        };
        match &assertion.source_of_truth {
            Some(s) if !s.value.trim().is_empty() => {}
            Some(s) => diags.push(no_truth(&what, s.loc.clone(), "empty")),
            None => diags.push(no_truth(
                &what,
                crate::source::Loc::file_start(assertion.file),
                "no `source_of_truth`",
            )),
        }
        let Some(query) = &assertion.query else {
            continue;
        };
        let outputs = resolve_query(project, relations, metrics, query, &what, diags);
        if let Some(outputs) = outputs {
            expectations(project, assertion, &outputs, diags);
        }
    }
}

/// Saved queries: names unique (case-insensitively), and each query resolves offline as an
/// assertion's does.
pub(super) fn check_saved(
    project: &Project,
    relations: &Relations<'_>,
    metrics: &Metrics<'_>,
    diags: &mut Vec<Diagnostic>,
) {
    let saved = &project.contracts.saved_queries;
    unique_ids(
        saved.iter().filter_map(|q| q.name.as_ref()),
        "saved query",
        diags,
    );
    for q in saved {
        let what = match &q.name {
            Some(name) => format!("saved query `{}`", name.value),
            None => "a saved query".to_string(),
        };
        let outputs = resolve_query(project, relations, metrics, &q.query, &what, diags);
        if let Some(outputs) = outputs {
            order(q, &outputs, &what, diags);
        }
    }
}

/// A saved query's `order_by` names its output columns (E094).
fn order(
    q: &crate::project::contracts::SavedQuery,
    outputs: &[(String, Output<'_>)],
    what: &str,
    diags: &mut Vec<Diagnostic>,
) {
    let names: Vec<String> = outputs.iter().map(|(n, _)| n.clone()).collect();
    for asked in &q.order_by {
        let name = asked.value.trim();
        let name = name.strip_prefix('-').unwrap_or(name).trim();
        if crate::semantic::query::output_column(&names, name).is_some() {
            continue;
        }
        let diag = Diagnostic::error(
            Code::SavedQueryOrder,
            format!("{what} is ordered by `{name}`, which is no column of it"),
        )
        .at(asked.loc.clone(), "not a metric or dimension it asks for");
        diags.push(match did_you_mean(name, names.iter().map(String::as_str)) {
            Some(close) => diag.hint(format!("did you mean `{close}`?")),
            None => diag.hint(format!("order by one of: {}", names.join(", "))),
        });
    }
}

fn no_truth(what: &str, loc: crate::source::Loc, label: &str) -> Diagnostic {
    Diagnostic::warning(Code::AssertionWithoutTruth, format!("{what} names no source of truth"))
        .at(loc, label)
        .hint("say where the expected values come from (a ledger export, a signed-off report), so that a failure can be judged")
}

/// Resolves the query; its output columns when every metric and dimension resolved.
fn resolve_query<'p>(
    project: &'p Project,
    relations: &Relations<'p>,
    metrics: &Metrics<'p>,
    query: &SemanticQuery,
    what: &str,
    diags: &mut Vec<Diagnostic>,
) -> Option<Vec<(String, Output<'p>)>> {
    let before = diags.len();
    if let Some(ctx) = &query.context {
        context(project, ctx, what, diags);
    }
    // Each relation a metric reads, with the measure it aggregates there (whose time
    // `metric_time` is).
    let mut sources: Vec<(&Relation<'p>, Option<&str>)> = Vec::new();
    let mut outputs = Vec::new();
    for name in &query.metrics {
        match resolve::metric(metrics, name) {
            Ok(binding) => {
                for (source, measure) in resolve::leaves(metrics, binding) {
                    let measure = measure.map(|m| m.value.as_str());
                    if let Some(r) = relations.get(&source.value) {
                        if !sources
                            .iter()
                            .any(|(s, m)| s.name == r.name && *m == measure)
                        {
                            sources.push((r, measure));
                        }
                    }
                }
            }
            Err(diag) => diags.push(*diag),
        }
        outputs.push((name.value.clone(), Output::Metric));
    }
    for reference in &query.dimensions {
        let mut column = None;
        let mut truncated = false;
        for (source, measure) in &sources {
            let found = resolve::metric_time(relations, source, *measure, reference)
                .and_then(|r| resolve::dimension(relations, source, &r));
            match found {
                Ok(found) => {
                    truncated = found.granularity.is_some();
                    column = column.or(reached_column(&found));
                }
                Err(diag) => {
                    diags.push(*diag);
                    break;
                }
            }
        }
        outputs.push((
            reference.value.clone(),
            Output::Dimension(column, truncated),
        ));
    }
    let resolved = diags[before..]
        .iter()
        .all(|d| d.severity != crate::diagnostics::Severity::Error);
    for filter in &query.filters {
        let what = format!("a filter of {what}");
        // A metric's value for an entity (`metric(order_count, customer)`): the metric exists,
        // the entity is checked as a dimension, and the rest of the filter as any filter is.
        let (filter, calls) = match super::filter::parse_query(&filter.value, project.engine()) {
            Ok(expr) if !super::filter::metric_calls(&expr).is_empty() => (
                Spanned::new(
                    super::filter::without_metric_calls(&expr).to_string(),
                    filter.loc.clone(),
                ),
                super::filter::metric_calls(&expr),
            ),
            _ => (filter.clone(), Vec::new()),
        };
        let filter = &filter;
        for (metric, _) in &calls {
            if resolve::metric(metrics, &Spanned::new(metric.clone(), filter.loc.clone())).is_err()
            {
                diags.push(
                    Diagnostic::error(
                        Code::SemanticUnknownMetric,
                        format!("{what} reads metric `{metric}`, which is no metric"),
                    )
                    .at(filter.loc.clone(), "no such metric")
                    .hint("name a metric bound in contracts/metrics/"),
                );
            }
        }
        let snippet = Snippet { text: filter, what: &what, example: "write one boolean SQL expression over the query's dimensions, such as \"status = 'completed'\"", filter: true };
        let mut lookup = |parts: &[String], text: &Spanned<String>, diags: &mut Vec<Diagnostic>| {
            let reference = Spanned::new(parts.join("."), text.loc.clone());
            let mut column = None;
            for (source, measure) in &sources {
                let found = resolve::metric_time(relations, source, *measure, &reference)
                    .and_then(|r| resolve::dimension(relations, source, &r));
                match found {
                    Ok(found) => column = column.or(reached_column(&found)),
                    Err(diag) => {
                        diags.push(*diag);
                        return None;
                    }
                }
            }
            column
        };
        for (_, entity) in &calls {
            lookup(std::slice::from_ref(entity), filter, diags);
        }
        predicate::check(project, &snippet, &mut lookup, diags);
    }
    resolved.then_some(outputs)
}

fn reached_column<'p>(found: &Reached<'_, 'p>) -> Option<&'p Column> {
    found.relation.column(&found.dimension.column().value)
}

/// Every expected value is under an output column and fits it; keyed rows give every
/// dimension.
fn expectations(
    project: &Project,
    assertion: &Assertion,
    outputs: &[(String, Output<'_>)],
    diags: &mut Vec<Diagnostic>,
) {
    let Some(expect) = &assertion.expect else {
        return;
    };
    for row in expect.rows.iter().chain(expect.values.iter()) {
        cells(project, row, outputs, diags);
    }
    for row in &expect.rows {
        for (name, output) in outputs {
            if matches!(output, Output::Dimension(..))
                && !row.cells.iter().any(|(k, _)| k.value == *name)
            {
                diags.push(
                    Diagnostic::error(Code::ExpectMismatch, format!("an expected row gives no value for dimension `{name}`"))
                        .at(row.loc.clone(), format!("no `{name}`"))
                        .hint("rows are matched by their dimension values: give every dimension of the query"),
                );
            }
        }
    }
}

fn cells(
    project: &Project,
    row: &ExpectRow,
    outputs: &[(String, Output<'_>)],
    diags: &mut Vec<Diagnostic>,
) {
    for (key, value) in &row.cells {
        let Some((_, output)) = outputs.iter().find(|(n, _)| *n == key.value) else {
            let mut diag = Diagnostic::error(
                Code::ExpectMismatch,
                format!("`{}` is no output column of the query", key.value),
            )
            .at(key.loc.clone(), "not in the query");
            diag = match did_you_mean(&key.value, outputs.iter().map(|(n, _)| n.as_str())) {
                Some(close) => diag.hint(format!("did you mean `{close}`?")),
                None => {
                    let names: Vec<&str> = outputs.iter().map(|(n, _)| n.as_str()).collect();
                    diag.hint(format!(
                        "the query's output columns are {}",
                        names.join(", ")
                    ))
                }
            };
            diags.push(diag);
            continue;
        };
        if let Some(problem) = misfit(project, output, &value.value) {
            diags.push(
                Diagnostic::error(Code::ExpectMismatch, format!("the expected `{}` {problem}", key.value))
                    .at(value.loc.clone(), "does not fit the output column")
                    .hint("write exact decimals as strings (\"1234.50\"), dates as dates (2024-01-31), NULL as `{ null = true }`"),
            );
        }
    }
}

/// Why an expected value cannot be a value of the output column, if it cannot.
fn misfit(project: &Project, output: &Output<'_>, value: &Expected) -> Option<String> {
    let decimal = |s: &str| s.trim().parse::<f64>().is_ok();
    let number = match value {
        Expected::Null => return None,
        Expected::Integer(_) | Expected::Float(_) => true,
        Expected::Text(s) => decimal(s),
        Expected::Bool(_) | Expected::Temporal(_) => false,
    };
    let (column, truncated) = match output {
        Output::Metric => {
            return (!number).then(|| "is no number, and a metric's value is one".to_string())
        }
        Output::Dimension(column, truncated) => (column, *truncated),
    };
    let ty = column.and_then(|c| c.ty.as_deref())?;
    let spelled = column
        .and_then(|c| c.type_text.as_ref())
        .map_or(ty.to_string(), |t| t.value.to_string());
    let fits = match (ty, value) {
        (t, Expected::Temporal(_)) => is_temporal(t) || truncated,
        (t, Expected::Text(s)) if is_temporal(t) || truncated => is_date(s) || is_timestamp(s),
        (t, _) if is_temporal(t) => false,
        (t, _) if is_numeric(t) => number,
        (DataType::Boolean, v) => matches!(v, Expected::Bool(_)),
        (DataType::Named(name), Expected::Text(s)) => project
            .enum_named(name)
            .is_none_or(|e| e.values().contains(s)),
        (DataType::Varchar(_) | DataType::Char(_) | DataType::Text, v) => {
            matches!(v, Expected::Text(_))
        }
        _ => true,
    };
    (!fits).then(|| format!("does not fit the dimension's type {spelled}"))
}
