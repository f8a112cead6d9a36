//! `sqb query`: a semantic query compiled to one read-only statement, run on a target (or,
//! with `--sql`, only compiled), its metrics' finality flags read, their trust tiers set and
//! the `min_trust` guardrails enforced — before running on what is known offline, after it on
//! the rows (a refused result is never shown).

use std::path::Path;

use super::assert::{self as assertions, AssertionOutcome, Records};
use super::semantic::{execute_all, namespace, open_early, target};
use crate::project::{Project, Target};
pub use crate::report::query::{MetricOutcome, QueryOutcome};
use crate::rows::{Cell, Rows, Statement};
use crate::semantic::query::{self, QueryRequest, Refusal, ServedMetric};
use crate::semantic::trust::{self, Tier, Trust};
use crate::warehouse::pool::Pool;
use crate::warehouse::session::Opening;
use crate::warehouse::Timeouts;

#[derive(Debug, Clone)]
pub struct QueryOptions {
    /// The target whose namespace is read; default: `default_target`.
    pub from: Option<String>,
    pub request: QueryRequest,
    /// A saved query's name: its metrics, dimensions, filters and context make the request
    /// (the request's own filters are AND-ed to its).
    pub saved: Option<String>,
    /// Print the statement; run nothing.
    pub sql_only: bool,
    /// Also run the assertions that ask for the query's metrics.
    pub harness: bool,
    pub timeouts: Timeouts,
    pub use_cache: bool,
}

/// The request a saved query makes, with `extra`'s filters and principal.
fn saved_request(
    project: &Project,
    name: &str,
    extra: &QueryRequest,
) -> Result<QueryRequest, query::Refusal> {
    let saved = &project.contracts.saved_queries;
    let named = |q: &&crate::project::contracts::SavedQuery| {
        q.name.as_ref().is_some_and(|n| n.value == name)
    };
    let folded = |q: &&crate::project::contracts::SavedQuery| {
        q.name
            .as_ref()
            .is_some_and(|n| n.value.eq_ignore_ascii_case(name))
    };
    let found = saved.iter().find(named).or_else(|| {
        let mut matches = saved.iter().filter(folded);
        match (matches.next(), matches.next()) {
            (Some(one), None) => Some(one),
            _ => None,
        }
    });
    let Some(found) = found else {
        let names = saved
            .iter()
            .filter_map(|q| q.name.as_ref())
            .map(|n| n.value.as_str());
        let hint = match crate::diagnostics::did_you_mean(name, names) {
            Some(close) => format!("did you mean `{close}`?"),
            None => "saved queries are contracts/queries/*.toml".to_string(),
        };
        return Err(query::Refusal {
            code: "unresolved",
            message: format!("no saved query is named `{name}`"),
            hint: Some(hint),
        });
    };
    let values = |list: &[crate::source::Spanned<String>]| -> Vec<String> {
        list.iter().map(|s| s.value.clone()).collect()
    };
    let q = &found.query;
    let mut filters = values(&q.filters);
    filters.extend(extra.filters.iter().cloned());
    Ok(QueryRequest {
        metrics: values(&q.metrics),
        dimensions: values(&q.dimensions),
        filters,
        context: q.context.as_ref().map(|c| c.value.clone()),
        principal: extra.principal.clone(),
        tenant: extra.tenant.clone(),
        order_by: match extra.order_by.is_empty() {
            true => values(&found.order_by),
            false => extra.order_by.clone(),
        },
        limit: extra.limit.or(found.limit.as_ref().map(|l| l.value)),
    })
}

/// Compiles the query, and unless `sql_only`, runs it.
pub fn query(root: &Path, options: &QueryOptions) -> anyhow::Result<QueryOutcome> {
    let file = Project::begin(root, options.use_cache);
    // An embedded database takes as long to open as the rest of a question: it opens while
    // the project loads and the query compiles.
    let opening = match options.sql_only {
        true => None,
        false => open_early(root, file.config(), options.timeouts),
    };
    let project = super::compile::compile_begun(
        file,
        &super::compile::CompileOptions {
            sql_analysis: true,
            use_cache: options.use_cache,
        },
    )?;
    super::ensure_compiles(&project.project, &project.diagnostics)?;
    let project = project.project;
    let outcome = run(&project, options, None, opening);
    crate::memory::leave_to_exit(project);
    outcome
}

/// Answers one request on an already compiled project, on the server's pool: what `sqb serve`
/// runs per request.
pub fn answer(
    project: &Project,
    options: &QueryOptions,
    pool: &Pool,
) -> anyhow::Result<QueryOutcome> {
    run(project, options, Some(pool), None)
}

/// The namespace a target's queries read: for `sqb serve`'s catalog, compiled offline.
pub fn namespace_of(project: &Project, target: &str) -> anyhow::Result<crate::catalog::Namespace> {
    let (_, target) = super::semantic::target(project, Some(target))?;
    Ok(super::semantic::namespace(project, target))
}

fn run(
    project: &Project,
    options: &QueryOptions,
    pool: Option<&Pool>,
    opening: Option<Opening>,
) -> anyhow::Result<QueryOutcome> {
    let saved;
    let options = match &options.saved {
        Some(name) => {
            saved = QueryOptions {
                request: saved_request(project, name, &options.request)?,
                saved: None,
                ..options.clone()
            };
            &saved
        }
        None => options,
    };
    let (name, target) = target(project, options.from.as_deref())?;
    let namespace = namespace(project, target);
    let compiled = tracing::debug_span!("query compiled")
        .in_scope(|| query::compile(project, &namespace, &options.request))
        .map_err(|r| not_carried(project, &options.request, r))?;
    let records = Records::load(&project.root, &name, options.use_cache);
    let index = trust::Index::new(project);
    let covering = index.assertions_of(&options.request.metrics);
    let harness = match (options.harness, options.sql_only) {
        (true, false) => {
            let mut ids: Vec<&crate::project::contracts::Assertion> = Vec::new();
            for a in covering.iter().flatten() {
                if !ids.iter().any(|b| std::ptr::eq(*b, *a)) {
                    ids.push(a);
                }
            }
            assertions::run_all(
                project,
                target,
                &ids,
                options.request.principal.as_ref(),
                options.timeouts,
                pool,
                None,
            )?
        }
        _ => Vec::new(),
    };
    let mut metrics: Vec<MetricOutcome> = compiled
        .metrics
        .iter()
        .zip(&covering)
        .map(|(served, covering)| MetricOutcome {
            served: served.clone(),
            is_final: None,
            final_rows: None,
            trust: metric_trust(
                project, &index, target, served, covering, &records, &harness,
            ),
        })
        .collect();
    let mut warnings = compiled.warnings.clone();
    enforce_trust(&metrics, &mut warnings)?;
    if options.sql_only {
        return Ok(QueryOutcome {
            target: name,
            compiled,
            rows: None,
            metrics,
            warnings,
            harness,
        });
    }
    let statement = Statement {
        sql: compiled.sql.clone(),
        params: compiled.params.clone(),
    };
    let mut rows = execute(project, target, statement, options.timeouts, pool, opening)?;
    read_flags(&mut rows, &mut metrics);
    let mut late = Vec::new();
    enforce_trust(&metrics, &mut late)?;
    warnings.extend(late);
    warnings.dedup();
    Ok(QueryOutcome {
        target: name,
        compiled,
        rows: Some(rows),
        metrics,
        warnings,
        harness,
    })
}

fn execute(
    project: &Project,
    target: &Target,
    statement: Statement,
    timeouts: Timeouts,
    pool: Option<&Pool>,
    opening: Option<Opening>,
) -> anyhow::Result<Rows> {
    let mut results = execute_all(project, target, vec![statement], timeouts, pool, opening)?;
    match results.pop() {
        Some(Ok(rows)) => Ok(rows),
        Some(Err(err)) => Err(zero_denominator(err)),
        None => anyhow::bail!("the warehouse answered no statement"),
    }
}

/// A zero denominator under `on_zero_denominator = "error"` is a refusal of its own.
fn zero_denominator(err: crate::warehouse::WarehouseError) -> anyhow::Error {
    match &err {
        crate::warehouse::WarehouseError::Failed(m) if m.contains("division by zero") => {
            Refusal {
                code: "zero_denominator",
                message: format!("a metric's denominator is zero ({m})"),
                hint: Some(
                    "its `on_zero_denominator = \"error\"` refuses the result; filter the zero groups out, or choose `null` or `zero`"
                        .into(),
                ),
            }
            .into()
        }
        _ => err.into(),
    }
}

/// The metric's trust: its binding's signals, and whether an assertion asking for it passed
/// (run by `--harness`, else as last recorded by `sqb assert` on this target).
fn metric_trust(
    project: &Project,
    index: &trust::Index<'_>,
    target: &Target,
    served: &ServedMetric,
    covering: &[&crate::project::contracts::Assertion],
    records: &Records,
    harness: &[AssertionOutcome],
) -> Trust {
    let mut trust = match index.binding(&served.column) {
        Some(b) => Trust::of_binding(b),
        None => Trust {
            tier: Tier::Caution,
            reasons: vec!["its binding is not found".into()],
        },
    };
    let passing = covering.iter().any(|a| {
        let id = a.id.as_ref().map_or("", |i| i.value.as_str());
        match harness.iter().find(|h| h.id == id) {
            Some(h) => h.passed(),
            None => records.passed(project, target, a),
        }
    });
    if !passing {
        let why = match covering.is_empty() {
            true => "no assertion asks for it".to_string(),
            false => "no assertion of it has passed on this target (`sqb assert`)".to_string(),
        };
        trust.lower(Tier::Provisional, &why);
    }
    if served.sources.is_empty() {
        trust.lower(Tier::Caution, "it reads no relation");
    }
    trust
}

/// Each metric's final flag read off the rows (a row is final when its flag is true), said as
/// the rule's `result_flag` asks: `column` keeps the flag column, `metadata` drops it and keeps
/// a flag per row beside the result, `none` drops it and says nothing of finality (the trust
/// tier still falls when a row is provisional).
fn read_flags(rows: &mut Rows, metrics: &mut [MetricOutcome]) {
    for m in metrics.iter_mut() {
        let Some(flag) = &m.served.final_flag else {
            continue;
        };
        let Some(i) = rows.columns.iter().position(|c| &c.name == flag) else {
            continue;
        };
        let flags: Vec<bool> = rows
            .rows
            .iter()
            .map(|r| matches!(r[i], Cell::Bool(true)))
            .collect();
        let all_final = flags.iter().all(|f| *f);
        if !all_final {
            m.trust
                .lower(Tier::Provisional, "the result holds provisional rows");
        }
        match m.served.result_flag.as_str() {
            "column" => m.is_final = Some(all_final),
            "none" => {}
            _ => {
                m.is_final = Some(all_final);
                m.final_rows = Some(flags);
            }
        }
        if m.served.result_flag != "column" {
            rows.columns.remove(i);
            for r in &mut rows.rows {
                r.remove(i);
            }
        }
    }
}

/// The `min_trust` guardrails: a metric below the level is refused, or warned of.
fn enforce_trust(metrics: &[MetricOutcome], warnings: &mut Vec<String>) -> Result<(), Refusal> {
    for m in metrics {
        for g in &m.served.min_trust {
            let Some(level) = Tier::parse(&g.level) else {
                continue;
            };
            if m.trust.tier >= level {
                continue;
            }
            let message = format!(
                "guardrail `{}` serves metric `{}` only at trust `{}` or above, and it is `{}`: {}",
                g.id,
                m.served.column,
                g.level,
                m.trust.tier.as_str(),
                m.trust.reasons.join("; ")
            );
            if g.warns {
                warnings.push(message);
                continue;
            }
            return Err(Refusal {
                code: "guardrail",
                message,
                hint: g.rationale.clone(),
            });
        }
    }
    Ok(())
}

/// An unresolved metric that `sqb import dbt` left out says why, from the import's record.
fn not_carried(project: &Project, request: &QueryRequest, mut refusal: Refusal) -> Refusal {
    if refusal.code != "unresolved" {
        return refusal;
    }
    let missing = request.metrics.iter().find_map(|m| {
        refusal
            .message
            .contains(&format!("`{m}`"))
            .then(|| super::adopt::not_carried_metric(&project.root, m))
            .flatten()
            .map(|why| (m, why))
    });
    if let Some((metric, why)) = missing {
        refusal.hint = Some(format!(
            "`sqb import dbt` did not carry the dbt metric `{metric}` over: {why} (its record: {})",
            super::adopt::RECORD
        ));
    }
    refusal
}
