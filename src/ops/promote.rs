//! `sqb promote`: publish the selected models' staged relations into a writable target, only
//! when each passes its contract (as `contract diff` checks it) and its error-severity audits
//! (as `sqb audit` runs them) in the staging namespace, in one transaction.
//!
//! On Postgres the writer's transaction begins first and holds the staged relations in SHARE
//! mode, so that what was checked is what is published; DuckDB's writer holds the whole file,
//! so it opens once the read-only checks are done. Then: the catalog facts, the plan
//! (`crate::promote`), its locks under the lock timeout, the facts again under the locks, the
//! counts that must be 0, the writes, and COMMIT on its own.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use super::audit::{audit, AuditOptions};
use super::diff::{run as diff, DiffOptions};
use super::inspect::{target, InspectOptions, SelectOptions};
use crate::compile::compile_cached;
use crate::contract::diff::FindingKind;
use crate::contract::matching::namespace_of;
use crate::diagnostics::Severity;
use crate::engine::Engine;
use crate::error::UserError;
use crate::project::{Project, Resource};
use crate::promote::{self, Name, Plan, Refusal, Strategy};
use crate::report::audit::Status as AuditStatus;
use crate::report::diff::Status as DiffStatus;
use crate::warehouse::publish::{PublishError, Wanted, Writer};
use crate::warehouse::{session, Timeouts};

pub struct PromoteOptions {
    /// The staging target the relations were built into.
    pub from: String,
    /// The writable target they are published into.
    pub to: String,
    pub selection: SelectOptions,
    pub timeouts: Timeouts,
    pub use_cache: bool,
    /// Connections the audits run on.
    pub workers: usize,
    pub dry_run: bool,
    pub lock_timeout: Duration,
    /// How the destinations are published: a swap where the catalog allows it, or a copy.
    pub strategy: Strategy,
}

/// How the promote ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every relation published, committed.
    Published,
    /// `--dry-run`: the checks passed and the statements are planned; nothing was written.
    Planned,
    /// A check failed or a relation cannot be published: nothing was written.
    Refused,
}

pub struct PromoteReport {
    pub from: String,
    pub to: String,
    pub engine: Engine,
    /// The destinations, as `schema.name`.
    pub relations: Vec<String>,
    /// How many audits ran on the staged relations.
    pub audits: usize,
    pub refusals: Vec<Refusal>,
    /// The publish's statements in order (run, or for `--dry-run` to run).
    pub statements: Vec<String>,
    /// How each destination is published, and why: `prod.film: swap (only views read it)`.
    pub strategies: Vec<String>,
    pub notes: Vec<String>,
    pub verdict: Verdict,
}

pub fn promote(root: &Path, options: &PromoteOptions) -> anyhow::Result<PromoteReport> {
    let project = Project::load_cached(root, options.use_cache)?;
    let selection = options.selection.load()?;
    let (diags, graph) = compile_cached(&project, Default::default(), options.use_cache);
    super::ensure_compiles(&project, &diags)?;
    let staging = target(&project, &options.from)?;
    let to = target(&project, &options.to)?;
    if !to.is_writable() {
        return Err(UserError::new(format!(
            "target `{}` is not writable: `sqb promote` writes only into a target that says so",
            options.to
        ))
        .with_hint(format!(
            "add `writable = true` under [targets.{}] in sqb.toml (docs/promote.md)",
            options.to
        ))
        .into());
    }
    let resources = selection.resolve(&project, &graph)?;
    let wanted = wanted(&resources, staging, to, options)?;
    let engine = project.engine();
    let mut report = PromoteReport {
        from: options.from.clone(),
        to: options.to.clone(),
        engine,
        relations: wanted.iter().map(|w| w.dest.shown()).collect(),
        audits: 0,
        refusals: Vec::new(),
        statements: Vec::new(),
        strategies: Vec::new(),
        notes: Vec::new(),
        verdict: Verdict::Refused,
    };
    let connect = super::connection(&project.config, &project.root, options.timeouts)?;
    let open = || session::writer(&connect, options.lock_timeout, options.dry_run).map_err(publish);
    // Postgres: hold the staged relations as checked. DuckDB: the writer holds the whole file,
    // which the read-only checks must open first.
    let mut writer = match engine.in_process() {
        true => None,
        false => {
            let mut writer = open()?;
            if !options.dry_run {
                let staged: Vec<Name> = wanted.iter().map(|w| w.staged.clone()).collect();
                lock_staged(&mut writer, engine, &staged)?;
            }
            Some(writer)
        }
    };
    let staged_names: HashMap<String, String> = resources
        .iter()
        .filter_map(|r| match r {
            Resource::Model(m) => Some((m.name.clone(), m.relation_name().to_string())),
            Resource::Source(_) => None,
        })
        .filter_map(|(model, relation)| {
            let w = wanted.iter().find(|w| w.staged.name == relation)?;
            Some((model, w.staged.shown()))
        })
        .collect();
    report.refusals = checks(root, options, &staged_names, &mut report.audits)?;
    if !report.refusals.is_empty() {
        return Ok(report);
    }
    let mut writer = match writer.take() {
        Some(w) => w,
        None => open()?,
    };
    let plan = match planned(&mut writer, engine, &wanted, options)? {
        Ok(plan) => plan,
        Err(refusals) => {
            report.refusals = refusals;
            return Ok(report);
        }
    };
    let mut plan = plan;
    for r in &plan.restarts {
        if let Some(value) = writer.value(&r.probe).map_err(publish)? {
            match r.refusal() {
                Some(refusal) => report.refusals.push(refusal),
                None => plan.writes.push(promote::restart(r, value)),
            }
        }
    }
    report.notes = plan.notes.clone();
    report.strategies = plan
        .strategies
        .iter()
        .map(|(name, how)| format!("{}: {how}", name.shown()))
        .collect();
    report.statements = plan
        .locks
        .iter()
        .chain(&plan.writes)
        .map(|s| shown(&s.sql, &s.params))
        .collect();
    for check in &plan.checks {
        let n = writer.count(&check.step).map_err(publish)?;
        if n > 0 {
            report.refusals.push(Refusal {
                relation: check.step.relation.shown(),
                why: format!("{}: {n}", check.what),
            });
        }
    }
    if !report.refusals.is_empty() {
        return Ok(report);
    }
    if options.dry_run {
        report.verdict = Verdict::Planned;
        return Ok(report);
    }
    for step in &plan.writes {
        writer.run(step).map_err(publish)?;
    }
    writer.commit().map_err(publish)?;
    report.verdict = Verdict::Published;
    Ok(report)
}

/// Each selected model's destination in `to` and staged copy in `staging`.
fn wanted(
    resources: &[Resource<'_>],
    staging: &crate::project::Target,
    to: &crate::project::Target,
    options: &PromoteOptions,
) -> anyhow::Result<Vec<Wanted>> {
    let mut out = Vec::new();
    for resource in resources {
        let Resource::Model(model) = resource else {
            continue;
        };
        let dest = namespace_of(resource, to);
        let staged = namespace_of(resource, staging);
        if dest == staged {
            return Err(UserError::new(format!(
                "targets `{}` and `{}` name the same namespace: there is nothing to promote",
                options.from, options.to
            ))
            .with_hint("--from names the staging target the models were built into")
            .into());
        }
        if dest.database != staged.database {
            return Err(UserError::new(format!(
                "targets `{}` and `{}` are in different databases: a publish copies within one",
                options.from, options.to
            ))
            .with_hint("both targets must name the connection's database, or leave `database` out")
            .into());
        }
        let name = model.relation_name();
        out.push(Wanted {
            dest: Name::new(&dest.schema, name),
            staged: Name::new(&staged.schema, name),
            not_null: model
                .columns
                .iter()
                .filter(|c| !c.is_nullable())
                .map(|c| c.name.value.clone())
                .collect(),
        });
    }
    if out.is_empty() {
        return Err(
            UserError::new("nothing to promote: the selection holds no model")
                .with_hint("`sqb ls -s SELECTOR` shows what a selection picks")
                .into(),
        );
    }
    Ok(out)
}

fn lock_staged(writer: &mut Writer, engine: Engine, staged: &[Name]) -> anyhow::Result<()> {
    for step in promote::staged_locks(engine, staged) {
        match writer.run(&step) {
            // A staged relation that does not exist is the checks' to report.
            Err(PublishError::Statement { message, .. }) if message.contains("does not exist") => {
                return Ok(())
            }
            other => other.map_err(publish)?,
        }
    }
    Ok(())
}

/// The plan from the catalog; with the destinations locked (not for `--dry-run`), the plan
/// again from what the catalog says under the locks. A lock the new plan needs that was not
/// taken (a view created over a destination meanwhile) is taken, and the catalog read again.
fn planned(
    writer: &mut Writer,
    engine: Engine,
    wanted: &[Wanted],
    options: &PromoteOptions,
) -> anyhow::Result<Result<Plan, Vec<Refusal>>> {
    let facts = writer.facts(wanted).map_err(publish)?;
    let mut plan = match promote::plan(engine, &facts, options.strategy) {
        Ok(plan) => plan,
        Err(refusals) => return Ok(Err(refusals)),
    };
    if options.dry_run {
        return Ok(Ok(plan));
    }
    let mut taken: Vec<String> = Vec::new();
    for _ in 0..3 {
        let missing: Vec<_> = plan
            .locks
            .iter()
            .filter(|l| !taken.contains(&l.sql))
            .cloned()
            .collect();
        if missing.is_empty() {
            return Ok(Ok(plan));
        }
        for lock in &missing {
            writer.run(lock).map_err(publish)?;
            taken.push(lock.sql.clone());
        }
        let facts = writer.facts(wanted).map_err(publish)?;
        plan = match promote::plan(engine, &facts, options.strategy) {
            Ok(again) => again,
            Err(refusals) => return Ok(Err(refusals)),
        };
    }
    Err(
        UserError::new("the relations to publish kept changing while their locks were taken")
            .with_hint("nothing was published; retry once the schema stops changing")
            .into(),
    )
}

/// The staged relations checked against their contracts and audits, as `contract diff` and
/// `sqb audit` check them in the staging target: what fails, each a refusal. An audit that
/// cannot run fails the promote (exit 2), never passes it.
fn checks(
    root: &Path,
    options: &PromoteOptions,
    staged: &HashMap<String, String>,
    audits: &mut usize,
) -> anyhow::Result<Vec<Refusal>> {
    let shown = |model: &str, relation: &str| {
        staged
            .get(model)
            .cloned()
            .unwrap_or_else(|| relation.to_string())
    };
    let mut refusals = Vec::new();
    let inspect = InspectOptions {
        from: options.from.clone(),
        selection: options.selection.clone(),
        timeouts: options.timeouts,
        use_cache: options.use_cache,
        partial: false,
    };
    let diffed = diff(
        root,
        &DiffOptions {
            inspect,
            baseline: None,
            history: None,
        },
        |_| Ok(()),
    )?;
    for r in diffed
        .report
        .resources
        .iter()
        .filter(|r| r.resource_type == "model")
    {
        if r.status != DiffStatus::Differs {
            continue;
        }
        // A staged table built by `CREATE TABLE AS` has no NOT NULL: the implied `not_null`
        // audit checks its rows instead, and the destination keeps its own constraint.
        let unenforced = |f: &&crate::report::diff::FindingReport| {
            f.kind == FindingKind::NullabilityMismatch && f.nullable == Some((false, true))
        };
        for f in r
            .findings
            .iter()
            .filter(|f| f.severity != Severity::Info && !unenforced(f))
        {
            refusals.push(Refusal {
                relation: shown(&r.resource_name, &r.relation),
                why: format!("contract: {}", f.message),
            });
        }
    }
    let audited = audit(
        root,
        &AuditOptions {
            from: options.from.clone(),
            selection: options.selection.clone(),
            timeouts: options.timeouts,
            use_cache: options.use_cache,
            workers: options.workers,
        },
    )?;
    // An audit of a relation whose contract already failed may not run (its column is gone):
    // that relation is refused already, and the promote with it.
    let broken: Vec<String> = refusals.iter().map(|r| r.relation.clone()).collect();
    for r in audited
        .results
        .iter()
        .filter(|r| r.resource_type == "model")
    {
        *audits += 1;
        if r.status == AuditStatus::Error && broken.contains(&shown(&r.resource, &r.relation)) {
            continue;
        }
        let on = r
            .column
            .as_deref()
            .map(|c| format!(" on `{c}`"))
            .unwrap_or_default();
        match r.status {
            AuditStatus::Pass | AuditStatus::Warn => {}
            AuditStatus::Fail => refusals.push(Refusal {
                relation: shown(&r.resource, &r.relation),
                why: format!(
                    "audit `{}`{on}: {} failing {}",
                    r.audit,
                    r.failing.unwrap_or(0),
                    match r.failing {
                        Some(1) => "row",
                        _ => "rows",
                    }
                ),
            }),
            AuditStatus::Error => {
                return Err(UserError::new(format!(
                    "audit `{}`{on} of `{}` could not run: {}",
                    r.audit,
                    r.relation,
                    r.error.as_deref().unwrap_or("unknown error")
                ))
                .with_hint("nothing was published: an audit that cannot run never passes")
                .into())
            }
        }
    }
    Ok(refusals)
}

/// A statement as the report shows it: its parameters written in as literals.
fn shown(sql: &str, params: &[String]) -> String {
    let mut text = sql.to_string();
    for (i, p) in params.iter().enumerate().rev() {
        text = text.replace(
            &format!("${}", i + 1),
            &format!("'{}'", p.replace('\'', "''")),
        );
    }
    text
}

fn publish(e: PublishError) -> anyhow::Error {
    let hint = e.hint();
    let error = UserError::new(e.to_string());
    match hint {
        Some(h) => error.with_hint(h).into(),
        None => error.into(),
    }
}
