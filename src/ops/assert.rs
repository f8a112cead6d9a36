//! `sqb assert`: every (selected) assertion's query compiled exactly as `sqb query` compiles
//! it, all run on one read-only connection, and each answer compared with the expectation
//! ([`crate::semantic::expect`]). The verdicts are recorded per target (`.sqb/cache/`), so
//! that `sqb query` knows which metrics have a passing assertion, and for which definition.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::Digest as _;

use super::semantic::{assertion_request, execute_all, namespace, open_early, target};
use crate::catalog::Namespace;
use crate::project::contracts::Assertion;
use crate::project::{Project, Target};
pub use crate::report::assert::{AssertReport, AssertionOutcome, Failure, Verdict};
use crate::rows::{Rows, Statement};
use crate::semantic::expect::{self, Mismatch};
use crate::semantic::query::{self, CompiledQuery};
use crate::warehouse::pool::Pool;
use crate::warehouse::session::Opening;
use crate::warehouse::Timeouts;

type Claims = serde_json::Map<String, serde_json::Value>;

#[derive(Debug, Clone)]
pub struct AssertOptions {
    pub from: Option<String>,
    /// Assertion ids or globs (`revenue_*`); empty: every assertion.
    pub select: Vec<String>,
    /// Who runs them: the claims each query is compiled for.
    pub principal: Option<Claims>,
    pub timeouts: Timeouts,
    pub use_cache: bool,
    /// Fixture tenants: each assertion is also run as each of them, proving that no row of
    /// another tenant gets through and that additive totals are the sums over the tenants.
    pub tenants: Vec<String>,
}

/// Runs the selected assertions on the target and records their verdicts.
pub fn assert(root: &Path, options: &AssertOptions) -> anyhow::Result<AssertReport> {
    let file = Project::begin(root, options.use_cache);
    // As `sqb query`: an embedded database opens while the project loads and compiles.
    let opening = open_early(root, file.config(), options.timeouts);
    let compiled = super::compile::compile_begun(
        file,
        &super::compile::CompileOptions {
            sql_analysis: true,
            use_cache: options.use_cache,
        },
    )?;
    super::ensure_compiles(&compiled.project, &compiled.diagnostics)?;
    assert_opened(&compiled.project, options, None, opening)
}

/// Runs the selected assertions of an already compiled project (on the server's `pool` when
/// there is one) and records their verdicts: what `sqb serve`'s `POST /v1/assert` runs.
pub fn assert_on(
    project: &Project,
    options: &AssertOptions,
    pool: Option<&Pool>,
) -> anyhow::Result<AssertReport> {
    assert_opened(project, options, pool, None)
}

/// [`assert_on`], the first statements run on `opening`'s database when there is one.
fn assert_opened(
    project: &Project,
    options: &AssertOptions,
    pool: Option<&Pool>,
    opening: Option<Opening>,
) -> anyhow::Result<AssertReport> {
    let (name, target) = target(project, options.from.as_deref())?;
    let selected = select(project, &options.select)?;
    let mut outcomes = run_all(
        project,
        target,
        &selected,
        options.principal.as_ref(),
        options.timeouts,
        pool,
        opening,
    )?;
    if !options.tenants.is_empty() {
        tenant_checks(project, target, &selected, &mut outcomes, options, pool)?;
    }
    if options.use_cache {
        let mut records = Records::load(&project.root, &name, true);
        records.update(
            project,
            target,
            &selected,
            &outcomes,
            options.principal.as_ref(),
        );
        records.save(&project.root, &name);
    }
    Ok(AssertReport {
        target: name,
        outcomes,
    })
}

fn select<'p>(project: &'p Project, patterns: &[String]) -> anyhow::Result<Vec<&'p Assertion>> {
    let all = &project.contracts.assertions;
    if patterns.is_empty() {
        return Ok(all.iter().collect());
    }
    let mut globs = globset::GlobSetBuilder::new();
    for p in patterns {
        globs.add(globset::Glob::new(p).map_err(|e| {
            crate::error::UserError::new(format!("invalid --select pattern `{p}`: {e}"))
        })?);
    }
    let set = globs.build()?;
    let chosen: Vec<&Assertion> = all
        .iter()
        .filter(|a| a.id.as_ref().is_some_and(|i| set.is_match(&i.value)))
        .collect();
    if chosen.is_empty() {
        let ids: Vec<&str> = all
            .iter()
            .filter_map(|a| a.id.as_ref().map(|i| i.value.as_str()))
            .collect();
        return Err(crate::error::UserError::new(format!(
            "no assertion matches {}",
            patterns.join(", ")
        ))
        .with_hint(match ids.is_empty() {
            true => "the project has no assertions (contracts/assertions/*.toml)".to_string(),
            false => format!("assertions: {}", ids.join(", ")),
        })
        .into());
    }
    Ok(chosen)
}

/// Compiles each assertion, runs all that compile on one connection, and compares.
pub(super) fn run_all(
    project: &Project,
    target: &Target,
    assertions: &[&Assertion],
    principal: Option<&Claims>,
    timeouts: Timeouts,
    pool: Option<&Pool>,
    opening: Option<Opening>,
) -> anyhow::Result<Vec<AssertionOutcome>> {
    let namespace = namespace(project, target);
    let compiled: Vec<Result<CompiledQuery, query::Refusal>> = assertions
        .iter()
        .map(|a| compile_one(project, &namespace, a, principal))
        .collect();
    let statements: Vec<Statement> = compiled
        .iter()
        .filter_map(|c| c.as_ref().ok())
        .map(|c| Statement {
            sql: c.sql.clone(),
            params: c.params.clone(),
        })
        .collect();
    let mut results = match statements.is_empty() {
        true => Vec::new(),
        false => execute_all(project, target, statements, timeouts, pool, opening)?,
    }
    .into_iter();
    let mut outcomes = Vec::new();
    for (a, c) in assertions.iter().zip(compiled) {
        let (file, line) = location(project, a);
        let id = a.id.as_ref().map_or(String::new(), |i| i.value.clone());
        let (sql, verdict) = match c {
            Err(r) => (
                None,
                Verdict::Error {
                    code: r.code.to_string(),
                    message: r.message,
                },
            ),
            Ok(c) => {
                let verdict = match results.next() {
                    Some(Ok(rows)) => compare(project, a, &rows),
                    Some(Err(err)) => Verdict::Error {
                        code: "warehouse".into(),
                        message: crate::redact::redact(&err.to_string()),
                    },
                    None => Verdict::Error {
                        code: "warehouse".into(),
                        message: "the warehouse answered no statement".into(),
                    },
                };
                (Some(c.sql), verdict)
            }
        };
        outcomes.push(AssertionOutcome {
            id,
            file,
            line,
            sql,
            verdict,
        });
    }
    Ok(outcomes)
}

/// `--tenants`: each assertion compiled as the principal seeing one tenant; every scoped
/// relation it reads probed for rows of another tenant (there must be none), and each additive
/// metric's unscoped total compared with the sum over the tenants, group by group. A
/// difference fails the assertion.
fn tenant_checks(
    project: &Project,
    target: &Target,
    assertions: &[&Assertion],
    outcomes: &mut [AssertionOutcome],
    options: &AssertOptions,
    pool: Option<&Pool>,
) -> anyhow::Result<()> {
    if project.contracts.tenancy.is_none() {
        return Err(
            crate::error::UserError::new("--tenants needs a tenancy policy")
                .with_hint("declare one in contracts/policies/tenancy.toml")
                .into(),
        );
    }
    let namespace = namespace(project, target);
    let principal = options.principal.as_ref();
    // Per assertion: the unscoped statement, then per tenant its statement and its probes.
    let mut statements = Vec::new();
    let mut plans = Vec::new();
    for (a, o) in assertions.iter().zip(outcomes.iter()) {
        if matches!(o.verdict, Verdict::Error { .. }) {
            plans.push(None);
            continue;
        }
        let Some(q) = &a.query else {
            plans.push(None);
            continue;
        };
        let Ok(total) = compile_one(project, &namespace, a, principal) else {
            plans.push(None);
            continue;
        };
        statements.push(statement(&total));
        let mut tenants = Vec::new();
        for tenant in &options.tenants {
            let mut request = assertion_request(q, principal);
            request.tenant = Some(tenant.clone());
            match query::compile(project, &namespace, &request) {
                Ok(c) => {
                    statements.push(statement(&c));
                    for read in &c.scoped_reads {
                        statements.push(Statement {
                            sql: format!(
                                "SELECT count(*) FROM {} AS \"s\" WHERE CAST(\"s\".{} AS VARCHAR) IS DISTINCT FROM $1",
                                read.from,
                                crate::ident::quoted(&read.column)
                            ),
                            params: vec![tenant.clone()],
                        });
                    }
                    tenants.push((tenant.clone(), Ok(c)));
                }
                Err(r) => tenants.push((tenant.clone(), Err(r))),
            }
        }
        plans.push(Some((total, tenants)));
    }
    let mut results =
        execute_all(project, target, statements, options.timeouts, pool, None)?.into_iter();
    for ((a, o), plan) in assertions.iter().zip(outcomes.iter_mut()).zip(plans) {
        let Some((total, tenants)) = plan else {
            continue;
        };
        let line = o.line;
        let mut failures = Vec::new();
        let mut differ = |message: String, expected: String, actual: String| {
            failures.push(Failure {
                line,
                message,
                expected,
                actual,
            })
        };
        let total_rows = results.next();
        let mut per_tenant = Vec::new();
        for (tenant, compiled) in tenants {
            let c = match compiled {
                Ok(c) => c,
                Err(r) => {
                    differ(
                        format!("as tenant `{tenant}`: refused [{}] {}", r.code, r.message),
                        "served".into(),
                        "refused".into(),
                    );
                    continue;
                }
            };
            match results.next() {
                Some(Ok(rows)) => per_tenant.push((tenant.clone(), rows)),
                Some(Err(e)) => differ(
                    format!("as tenant `{tenant}`: {e}"),
                    String::new(),
                    String::new(),
                ),
                None => differ(
                    format!("as tenant `{tenant}`: no answer"),
                    String::new(),
                    String::new(),
                ),
            }
            for read in &c.scoped_reads {
                match results.next() {
                    Some(Ok(rows)) if leaked(&rows) == Some(0) => {}
                    Some(Ok(rows)) => differ(format!(
                        "as tenant `{tenant}`: {} of another tenant get through the scoping of `{}`",
                        leaked(&rows).map_or("rows".to_string(), |n| format!("{n} rows")),
                        read.relation
                    ), String::new(), String::new()),
                    Some(Err(e)) => differ(format!("as tenant `{tenant}`: probing `{}`: {e}", read.relation), String::new(), String::new()),
                    None => differ(format!("as tenant `{tenant}`: no answer"), String::new(), String::new()),
                }
            }
        }
        let additive: Vec<String> = total
            .metrics
            .iter()
            .filter(|m| m.additive)
            .map(|m| m.column.clone())
            .collect();
        let dimensions: Vec<String> = a
            .query
            .as_ref()
            .map(|q| q.dimensions.iter().map(|d| d.value.clone()).collect())
            .unwrap_or_default();
        match total_rows {
            Some(Ok(rows)) if per_tenant.len() == options.tenants.len() => {
                for (m, expected, actual) in
                    expect::sums_over_tenants(&rows, &per_tenant, &dimensions, &additive)
                {
                    differ(m, expected, actual);
                }
            }
            Some(Err(e)) => differ(
                format!("the unscoped statement: {e}"),
                String::new(),
                String::new(),
            ),
            _ => {}
        }
        if failures.is_empty() {
            continue;
        }
        o.verdict = match std::mem::replace(&mut o.verdict, Verdict::Passed) {
            Verdict::Failed(mut before) => {
                before.extend(failures);
                Verdict::Failed(before)
            }
            _ => Verdict::Failed(failures),
        };
    }
    Ok(())
}

fn statement(c: &CompiledQuery) -> Statement {
    Statement {
        sql: c.sql.clone(),
        params: c.params.clone(),
    }
}

/// The count a probe returned.
fn leaked(rows: &Rows) -> Option<i128> {
    match rows.rows.first().and_then(|r| r.first()) {
        Some(crate::rows::Cell::Int(n)) => Some(*n),
        _ => None,
    }
}

fn compile_one(
    project: &Project,
    namespace: &Namespace,
    a: &Assertion,
    principal: Option<&Claims>,
) -> Result<CompiledQuery, query::Refusal> {
    let q = a.query.as_ref().ok_or_else(|| query::Refusal {
        code: "unresolved",
        message: "the assertion has no [query]".into(),
        hint: None,
    })?;
    query::compile(project, namespace, &assertion_request(q, principal))
}

fn compare(project: &Project, a: &Assertion, rows: &Rows) -> Verdict {
    let Some(expect) = &a.expect else {
        return Verdict::Passed;
    };
    let dimensions: Vec<String> = a
        .query
        .as_ref()
        .map(|q| q.dimensions.iter().map(|d| d.value.clone()).collect())
        .unwrap_or_default();
    let mismatches = expect::compare(expect, &dimensions, rows);
    if mismatches.is_empty() {
        return Verdict::Passed;
    }
    let file = project.sources.get(a.file);
    Verdict::Failed(
        mismatches
            .into_iter()
            .map(|m: Mismatch| Failure {
                line: file.line_col(m.loc.span().start).0,
                message: m.message,
                expected: m.expected,
                actual: m.actual,
            })
            .collect(),
    )
}

fn location(project: &Project, a: &Assertion) -> (String, usize) {
    let file = project.sources.get(a.file);
    let line =
        a.id.as_ref()
            .map_or(1, |i| file.line_col(i.loc.span().start).0);
    (file.rel_path.clone(), line)
}

/// The verdicts `sqb assert` last recorded on a target, each with the fingerprint of what it
/// ran (the statement, its parameters and the assertion's file), and the claims it ran with.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Records {
    version: u32,
    assertions: BTreeMap<String, Record>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Record {
    fingerprint: String,
    passed: bool,
    claims: Option<Claims>,
    at: String,
}

const RECORDS_VERSION: u32 = 1;

fn records_file(target: &str) -> String {
    let safe: String = target
        .chars()
        .map(
            |c| match c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                true => c,
                false => '_',
            },
        )
        .collect();
    format!("assertions-{safe}.json")
}

impl Records {
    /// The records of `target`; none when there are none, they are unreadable or foreign, or
    /// caches are off — every metric then lacks a passing assertion.
    pub fn load(root: &Path, target: &str, use_cache: bool) -> Records {
        let read = use_cache
            .then(|| crate::cache_dir::read(root, &records_file(target)))
            .flatten()
            .and_then(|bytes| serde_json::from_slice::<Records>(&bytes).ok())
            .filter(|r| r.version == RECORDS_VERSION);
        read.unwrap_or(Records {
            version: RECORDS_VERSION,
            ..Records::default()
        })
    }

    fn save(&self, root: &Path, target: &str) {
        if let Ok(bytes) = serde_json::to_vec_pretty(self) {
            crate::cache_dir::write(root, &records_file(target), &bytes);
        }
    }

    fn update(
        &mut self,
        project: &Project,
        target: &Target,
        assertions: &[&Assertion],
        outcomes: &[AssertionOutcome],
        principal: Option<&Claims>,
    ) {
        let namespace = namespace(project, target);
        for (a, o) in assertions.iter().zip(outcomes) {
            let Ok(compiled) = compile_one(project, &namespace, a, principal) else {
                self.assertions.remove(&o.id);
                continue;
            };
            self.assertions.insert(
                o.id.clone(),
                Record {
                    fingerprint: fingerprint(project, a, &compiled),
                    passed: o.passed(),
                    claims: principal.cloned(),
                    at: crate::clock::now(),
                },
            );
        }
    }

    /// Whether the assertion passed when last run, on what it would run now.
    pub fn passed(&self, project: &Project, target: &Target, a: &Assertion) -> bool {
        let Some(id) = &a.id else { return false };
        let Some(record) = self.assertions.get(&id.value).filter(|r| r.passed) else {
            return false;
        };
        let namespace = namespace(project, target);
        compile_one(project, &namespace, a, record.claims.as_ref())
            .is_ok_and(|c| fingerprint(project, a, &c) == record.fingerprint)
    }
}

fn fingerprint(project: &Project, a: &Assertion, compiled: &CompiledQuery) -> String {
    let mut hash = sha2::Sha256::new();
    hash.update(compiled.sql.as_bytes());
    for p in &compiled.params {
        hash.update([0]);
        hash.update(p.as_bytes());
    }
    hash.update([1]);
    hash.update(project.sources.get(a.file).text().as_bytes());
    hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
}
