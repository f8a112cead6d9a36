//! `sqb audit`: run the declared audits of the selected models and sources against a target's
//! relations, read-only. One scan per relation counts every check's failures; each check that
//! failed gets one more query for a sample of its failing rows (values of `pii` and role-masked
//! columns redacted). A relation that cannot be read fails its audits closed: never a pass.

use std::path::Path;

use super::inspect::SelectOptions;
use crate::audit::scan::{sample, scan, ColumnCheck};
use crate::audit::spec::{parse, AuditSeverity, Check, Spec};
use crate::compile::compile_cached;
use crate::ident::quoted;
use crate::project::{Column, Project, Resource};
use crate::report::audit::{AuditReport, AuditResult, Status};
use crate::report::diff::NamespaceInfo;
use crate::rows::{Cell, Rows, Statement};
use crate::warehouse::{session, Timeouts, WarehouseError};

pub struct AuditOptions {
    pub from: String,
    pub selection: SelectOptions,
    pub timeouts: Timeouts,
    pub use_cache: bool,
    /// How many connections run the scans and samples at once.
    pub workers: usize,
}

/// One relation's audits, ready to run.
struct Planned<'p> {
    resource: Resource<'p>,
    /// As SQL names it, quoted.
    relation: String,
    /// As reports show it: `schema.name`.
    shown: String,
    /// The column each spec checks; `None` for an audit of the whole relation.
    columns: Vec<Option<&'p Column>>,
    specs: Vec<Spec>,
    /// Where each spec is declared: its audit, or what implies it.
    locs: Vec<crate::source::Loc>,
    /// For an audit a declaration implies: what implies it.
    implied: Vec<Option<&'static str>>,
}

pub fn audit(root: &Path, options: &AuditOptions) -> anyhow::Result<AuditReport> {
    let project = Project::load_cached(root, options.use_cache)?;
    let selection = options.selection.load()?;
    let (diags, graph) = compile_cached(&project, Default::default(), options.use_cache);
    super::ensure_compiles(&project, &diags)?;
    let target = super::inspect::target(&project, &options.from)?;
    let schema = target.schema.as_ref().map_or("", |s| s.value.as_str());
    let resources = selection.resolve(&project, &graph)?;
    let planned: Vec<Planned<'_>> = resources
        .into_iter()
        .filter_map(|r| plan(&project, r, schema))
        .collect();
    let namespace = NamespaceInfo {
        engine: project.engine(),
        database: target
            .database
            .as_ref()
            .map(|d| d.value.clone())
            .unwrap_or_default(),
        schema: schema.to_string(),
    };
    let mut report = AuditReport::new(options.from.clone(), namespace);
    if planned.is_empty() {
        return Ok(report);
    }
    let connect = super::connection(&project.config, &project.root, options.timeouts)?;
    let engine = project.engine();
    let scans: Vec<Statement> = planned
        .iter()
        .map(|p| scan(engine, &p.relation, &checks(&project, p, schema)))
        .collect();
    report.queries = scans.len();
    let ran = session::run(connect.clone(), None, scans, options.workers)?;
    if report.namespace.database.is_empty() {
        report.namespace.database = ran.default_database;
    }
    let mut singles = split(
        &project,
        schema,
        &planned,
        &ran.answers,
        &connect,
        options.workers,
    )?;
    report.queries += singles.queries;
    let mut samples = Vec::new();
    for (at, (p, answer)) in planned.iter().zip(ran.answers).enumerate() {
        let start = report.results.len();
        match (answer, singles.answers.remove(&at)) {
            (Ok(rows), _) => results(&project, &options.from, p, &rows, &mut report.results),
            (Err(_), Some(each)) => {
                for (i, answer) in each.into_iter().enumerate() {
                    let result = match answer {
                        Ok(rows) => verdict(
                            &project,
                            &options.from,
                            p,
                            i,
                            count(&rows, 0),
                            count(&rows, 1),
                        ),
                        Err(e) => not_run(&project, &options.from, p, i, &e.to_string()),
                    };
                    report.results.push(result);
                }
            }
            (Err(e), None) => {
                for i in 0..p.specs.len() {
                    let result = not_run(&project, &options.from, p, i, &e.to_string());
                    report.results.push(result);
                }
            }
        }
        let checks = checks(&project, p, schema);
        for (i, result) in report.results[start..].iter().enumerate() {
            if result.status.failed() {
                if let Some(s) = sample(engine, &p.relation, &checks[i]) {
                    samples.push((start + i, s));
                }
            }
        }
    }
    if !samples.is_empty() {
        report.queries += samples.len();
        let (at, statements): (Vec<usize>, Vec<Statement>) = samples.into_iter().unzip();
        for (i, answer) in at
            .into_iter()
            .zip(session::run(connect, None, statements, options.workers)?.answers)
        {
            let redacted = redacted_columns(&project, &report.results[i]);
            report.results[i].sample = match answer {
                Ok(rows) => shown(&rows, &redacted),
                Err(_) => Vec::new(),
            };
        }
    }
    Ok(report)
}

/// A resource's audits, or `None` when it declares none: those its columns declare, then
/// those their declarations imply.
fn plan<'p>(project: &'p Project, resource: Resource<'p>, schema: &str) -> Option<Planned<'p>> {
    let declared: Vec<&Column> = match resource {
        Resource::Model(m) => project.effective_columns(m),
        Resource::Source(s) => s.columns.iter().collect(),
    };
    let mut planned = Planned {
        resource,
        relation: relation_sql(resource, schema),
        shown: relation_parts(resource, schema).join("."),
        columns: Vec::new(),
        specs: Vec::new(),
        locs: Vec::new(),
        implied: Vec::new(),
    };
    for column in declared {
        let audits: Vec<&crate::project::Audit> =
            column.docs.iter().flat_map(|d| d.audits.iter()).collect();
        for audit in &audits {
            // Compile refused what does not parse: only runnable audits are left.
            if let Some(spec) = runnable(project, audit, parse(audit, &column.name.value)) {
                planned.push(column, spec, audit.loc.clone(), None);
            }
        }
        for (spec, loc, by) in implied(project, resource, column, &planned) {
            planned.push(column, spec, loc, Some(by));
        }
    }
    let own: &[crate::project::Audit] = match resource {
        Resource::Model(m) => m.props.audits.as_deref().unwrap_or_default(),
        Resource::Source(s) => &s.audits,
    };
    for audit in own {
        if let Some(spec) = runnable(project, audit, crate::audit::spec::parse_relation(audit)) {
            planned.columns.push(None);
            planned.specs.push(spec);
            planned.locs.push(audit.loc.clone());
            planned.implied.push(None);
        }
    }
    (!planned.specs.is_empty()).then_some(planned)
}

/// A built-in audit as read, else the user-defined audit of that name (`audits/<name>.sql`).
fn runnable(
    project: &Project,
    audit: &crate::project::Audit,
    builtin: Result<Spec, crate::audit::spec::SpecError>,
) -> Option<Spec> {
    match builtin {
        Ok(spec) => Some(spec),
        Err(_) if crate::audit::spec::custom(project, &audit.name).is_some() => {
            crate::audit::spec::parse_custom(audit).ok()
        }
        Err(_) => None,
    }
}

/// A user-defined audit's SQL, read from its file.
fn template(project: &Project, check: &Check) -> Option<crate::audit::template::Template> {
    let Check::Custom { name, .. } = check else {
        return None;
    };
    let def = crate::audit::spec::custom(project, name)?;
    crate::audit::template::Template::parse(project.sources.get(def.file).text()).ok()
}

impl<'p> Planned<'p> {
    fn push(
        &mut self,
        column: &'p Column,
        spec: Spec,
        loc: crate::source::Loc,
        by: Option<&'static str>,
    ) {
        self.columns.push(Some(column));
        self.specs.push(spec);
        self.locs.push(loc);
        self.implied.push(by);
    }

    fn has(&self, column: &Column, check: &Check) -> bool {
        self.columns.iter().zip(&self.specs).any(|(c, s)| {
            c.is_some_and(|c| std::ptr::eq(c, column)) && &s.check == check && s.filter.is_none()
        })
    }
}

/// The audits a column's declaration implies, unless it declares them itself: `not_null` for
/// `nullable = false` (a view or a `CREATE TABLE AS` table does not enforce it; where the
/// warehouse does, the count is zero at the price of one aggregate), and `accepted_values` for
/// an enum type, on a source or a model under an enforced contract.
fn implied(
    project: &Project,
    resource: Resource<'_>,
    column: &Column,
    planned: &Planned<'_>,
) -> Vec<(Spec, crate::source::Loc, &'static str)> {
    let mut out = Vec::new();
    let spec = |check| Spec {
        check,
        filter: None,
        severity: AuditSeverity::Error,
    };
    if let Some(n) = column.nullable.as_ref().filter(|n| !n.value) {
        if !planned.has(column, &Check::NotNull) {
            out.push((spec(Check::NotNull), n.loc.clone(), "nullable = false"));
        }
    }
    let enforced = match resource {
        Resource::Model(m) => project.policy(m) == crate::project::Policy::Enforced,
        Resource::Source(_) => true,
    };
    let domain = column
        .type_text
        .as_ref()
        .and_then(|t| project.enum_named(&t.value).map(|e| (t, e)));
    if let (true, Some((text, domain))) = (enforced, domain) {
        let check = Check::AcceptedValues(domain.values());
        if !planned.has(column, &check) {
            out.push((spec(check), text.loc.clone(), "its enum type"));
        }
    }
    out
}

fn checks<'a>(project: &Project, p: &'a Planned<'_>, schema: &str) -> Vec<ColumnCheck<'a>> {
    p.columns
        .iter()
        .zip(&p.specs)
        .map(|(column, spec)| ColumnCheck {
            column: column.map_or("", |c| c.name.value.as_str()),
            spec,
            parent: match &spec.check {
                Check::Relationships { to, .. } => match named(project, to) {
                    Some(r) => Some(relation_sql(r, schema)),
                    None => project.imported_relation(to).map(|r| {
                        [r.schema.as_str(), r.name.as_str()]
                            .into_iter()
                            .map(quoted)
                            .collect::<Vec<_>>()
                            .join(".")
                    }),
                },
                _ => None,
            },
            template: template(project, &spec.check),
        })
        .collect()
}

fn named<'p>(project: &'p Project, name: &str) -> Option<Resource<'p>> {
    project.model(name).map(Resource::Model).or_else(|| {
        project
            .source_tables
            .iter()
            .find(|s| s.name.value == name)
            .map(Resource::Source)
    })
}

/// The relation as SQL names it: a source's `schema.table` (and database, where it names
/// one), a model's relation in the target's schema.
fn relation_sql(resource: Resource<'_>, schema: &str) -> String {
    relation_parts(resource, schema)
        .into_iter()
        .map(quoted)
        .collect::<Vec<_>>()
        .join(".")
}

fn relation_parts<'p>(resource: Resource<'p>, schema: &'p str) -> Vec<&'p str> {
    let parts: Vec<&str> = match resource {
        Resource::Source(s) => s
            .database
            .iter()
            .map(|d| d.value.as_str())
            .chain(s.schema.iter().map(|x| x.value.as_str()))
            .chain([s.relation_name()])
            .collect(),
        Resource::Model(m) => vec![schema, m.relation_name()],
    };
    parts.into_iter().filter(|p| !p.is_empty()).collect()
}

fn base_result(project: &Project, target: &str, p: &Planned<'_>, i: usize) -> AuditResult {
    let loc = &p.locs[i];
    let file = project.sources.get(loc.file);
    let (line, col) = file.line_col(loc.span().start);
    AuditResult {
        resource_type: p.resource.resource_type(),
        resource: p.resource.name().to_string(),
        relation: p.shown.clone(),
        column: p.columns[i].map(|c| c.name.value.clone()),
        audit: p.specs[i].check.name().to_string(),
        implied_by: p.implied[i],
        severity: p.specs[i].severity,
        status: Status::Pass,
        failing: None,
        rows: None,
        sample: Vec::new(),
        error: None,
        file: file.rel_path.clone(),
        line,
        column_number: col,
        fingerprint: crate::report::sarif::digest(&[
            target,
            &p.shown,
            p.columns[i].map_or("", |c| c.name.value.as_str()),
            &format!("{:?}", p.specs[i].check),
            p.specs[i].filter.as_deref().unwrap_or_default(),
        ]),
    }
}

/// Each check's verdict from the scan's one row: its failures counted, against its severity.
fn results(
    project: &Project,
    target: &str,
    p: &Planned<'_>,
    rows: &Rows,
    out: &mut Vec<AuditResult>,
) {
    for i in 0..p.specs.len() {
        out.push(verdict(
            project,
            target,
            p,
            i,
            count(rows, 0),
            count(rows, i + 1),
        ));
    }
}

/// The count in column `i` of a scan's one row.
fn count(rows: &Rows, i: usize) -> Option<u64> {
    match rows.rows.first().and_then(|r| r.get(i)) {
        Some(Cell::Int(n)) => u64::try_from(*n).ok(),
        Some(Cell::Decimal(d)) => d.parse().ok(),
        _ => None,
    }
}

/// Check `i` of `p` judged on its failures among the relation's rows, against its severity.
fn verdict(
    project: &Project,
    target: &str,
    p: &Planned<'_>,
    i: usize,
    rows: Option<u64>,
    failing: Option<u64>,
) -> AuditResult {
    let mut result = base_result(project, target, p, i);
    result.rows = rows;
    result.failing = failing;
    result.status = match (failing, p.specs[i].severity) {
        (Some(0), _) => Status::Pass,
        (Some(_), AuditSeverity::Error) => Status::Fail,
        (Some(_), AuditSeverity::Warn) => Status::Warn,
        (None, _) => Status::Error,
    };
    if result.status == Status::Error {
        result.error = Some("the scan returned no count".into());
    }
    result
}

/// Check `i` of `p`, which could not run: never a pass.
fn not_run(project: &Project, target: &str, p: &Planned<'_>, i: usize, why: &str) -> AuditResult {
    let mut result = base_result(project, target, p, i);
    result.status = Status::Error;
    result.error = Some(crate::redact::redact(why));
    result
}

/// The answers of the relations scanned check by check, by their index in the plan.
struct Singles {
    answers: std::collections::HashMap<usize, Vec<Result<Rows, WarehouseError>>>,
    queries: usize,
}

/// When a relation's one scan fails but the relation can be read (a column it lacks, a
/// `where` or an expression the engine rejects), each of its checks is scanned alone, so the
/// one that cannot run fails closed and the others still answer. A relation that cannot be
/// read at all costs one probe, not a query per check.
fn split(
    project: &Project,
    schema: &str,
    planned: &[Planned<'_>],
    answers: &[Result<Rows, WarehouseError>],
    connect: &session::Connect,
    workers: usize,
) -> anyhow::Result<Singles> {
    let engine = project.engine();
    let failed: Vec<usize> = (0..planned.len())
        .filter(|&i| answers[i].is_err() && planned[i].specs.len() > 1)
        .collect();
    let mut singles = Singles {
        answers: Default::default(),
        queries: 0,
    };
    if failed.is_empty() {
        return Ok(singles);
    }
    let probes = failed
        .iter()
        .map(|&i| Statement {
            sql: format!("SELECT * FROM {} WHERE 1 = 0", planned[i].relation),
            params: Vec::new(),
        })
        .collect::<Vec<_>>();
    singles.queries += probes.len();
    let readable: Vec<usize> = failed
        .into_iter()
        .zip(session::run(connect.clone(), None, probes, workers)?.answers)
        .filter_map(|(i, probe)| probe.is_ok().then_some(i))
        .collect();
    let mut statements = Vec::new();
    for &i in &readable {
        let checks = checks(project, &planned[i], schema);
        statements
            .extend((0..checks.len()).map(|c| scan(engine, &planned[i].relation, &checks[c..=c])));
    }
    if statements.is_empty() {
        return Ok(singles);
    }
    singles.queries += statements.len();
    let mut answers = session::run(connect.clone(), None, statements, workers)?
        .answers
        .into_iter();
    for i in readable {
        let each = answers.by_ref().take(planned[i].specs.len()).collect();
        singles.answers.insert(i, each);
    }
    Ok(singles)
}

/// The columns whose values a sample of `result` must not show: those tagged `pii`, and those
/// any role of the roles policy masks (an audit runs for no principal, so a column masked for
/// anyone is hidden from everyone who reads the report).
fn redacted_columns(project: &Project, result: &AuditResult) -> Vec<String> {
    let columns: Vec<&Column> = match named(project, &result.resource) {
        Some(Resource::Model(m)) => project.effective_columns(m),
        Some(Resource::Source(s)) => s.columns.iter().collect(),
        None => Vec::new(),
    };
    let mut redacted: Vec<String> = columns
        .into_iter()
        .filter(|c| {
            c.docs
                .iter()
                .any(|d| d.tags.iter().any(|t| t.value == "pii"))
        })
        .map(|c| c.name.value.clone())
        .collect();
    redacted.extend(role_masked(project, &result.resource));
    // A unique or accepted_values sample shows the audited column's values as `value`.
    if redacted.iter().any(|c| Some(c) == result.column.as_ref()) {
        redacted.push("value".into());
    }
    redacted
}

/// The columns of `resource` that a role masks (`column = "resource.column"`).
fn role_masked(project: &Project, resource: &str) -> Vec<String> {
    let Some(roles) = &project.contracts.roles else {
        return Vec::new();
    };
    roles
        .roles
        .iter()
        .flat_map(|role| role.masking.iter().flatten())
        .filter_map(|mask| mask.column.as_ref()?.value.split_once('.'))
        .filter(|(relation, _)| *relation == resource)
        .map(|(_, column)| column.to_string())
        .collect()
}

fn shown(rows: &Rows, redacted: &[String]) -> Vec<Vec<(String, String)>> {
    rows.rows
        .iter()
        .map(|row| {
            rows.columns
                .iter()
                .zip(row)
                .map(|(c, cell)| {
                    let value = match redacted.iter().any(|r| r.eq_ignore_ascii_case(&c.name)) {
                        true => "<redacted>".to_string(),
                        false if *cell == Cell::Null => "NULL".to_string(),
                        false => cell.display(),
                    };
                    (c.name.clone(), value)
                })
                .collect()
        })
        .collect()
}
