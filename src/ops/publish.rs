//! `sqb publish`: the snapshot of a project's public models, from their declarations (or, for
//! an undeclared type, the SQL analysis' proof). It refuses to publish what checks nothing.
//! With consumers' reads files (`sqb imports reads`), it says which of their models the change
//! from the previous snapshot would break.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::Context as _;

use crate::compile::sql::OutColumn;
use crate::compile::{analyze, compile_cached, Options};
use crate::contract::matching::Inspection;
use crate::contract::plan::canonical_type;
use crate::engine::Engine;
use crate::error::UserError;
use crate::ops::inspect::{inspect, InspectOptions, Texts};
use crate::project::{Access, Column, Model, Project, Resource, Target};
use crate::team_contracts::impact::{self, ConsumerImpact, ConsumersReport};
use crate::team_contracts::reads::ReadsFile;
use crate::team_contracts::snapshot::{
    self, At, Published, PublishedColumn, PublishedModel, Relation, Snapshot,
};

pub struct PublishOptions {
    /// The target whose namespace the relations are named in; default: the default target.
    pub target: Option<String>,
    /// Publish every model, whatever its `access`.
    pub all: bool,
    /// Read the types of undeclared columns from this target's relations (read-only, as
    /// `contract diff` reads them), and the timeouts of that read.
    pub from: Option<InspectOptions>,
    /// Read and write the compile cache.
    pub use_cache: bool,
    /// Record where each published model and column is declared (for reports that point at
    /// them, such as GitHub annotations).
    pub locate: bool,
}

/// Where the snapshot goes, and the consumers to report on.
pub struct DeliverOptions {
    /// Compare with this file instead of writing (`--check`): up to date or not.
    pub check: Option<PathBuf>,
    /// Write the snapshot here, atomically (`--out`); else it goes to stdout.
    pub out: Option<PathBuf>,
    /// A folder of consumers' reads files: what the change from the previous snapshot (the
    /// `--check` or `--out` file) does to each.
    pub consumers: Option<PathBuf>,
}

/// What `sqb publish` did with the snapshot.
pub enum Delivery {
    /// `--check`: the file holds these bytes.
    UpToDate(PathBuf),
    /// `--check`: the file differs.
    OutOfDate(PathBuf),
    /// `--out`: written.
    Written(PathBuf),
    /// Neither: the command prints the bytes.
    Stdout,
}

/// What the change does to the consumers, when they were asked about.
pub enum Consumers {
    NotAsked,
    /// `--out` names a file that does not exist yet: no previous snapshot, no change.
    NoPrevious(PathBuf),
    Report(ConsumersReport),
}

pub struct PublishOutcome {
    pub published: Published,
    pub consumers: Consumers,
    pub delivery: Delivery,
}

/// Publishes the snapshot, reports on the consumers against the previous one, then checks or
/// writes it (the consumers are read before `--out` replaces the previous snapshot).
pub fn run(
    root: &Path,
    options: &PublishOptions,
    deliver: &DeliverOptions,
) -> anyhow::Result<PublishOutcome> {
    let previous = deliver.check.as_ref().or(deliver.out.as_ref());
    if deliver.consumers.is_some() && previous.is_none() {
        return Err(UserError::new(
            "--consumers compares with the previous snapshot, and none is named",
        )
        .with_hint("pass it as --check FILE (or --output FILE, which it then replaces)")
        .into());
    }
    let published = publish(root, options)?;
    let consumers = match (&deliver.consumers, previous) {
        (Some(_), Some(before)) if deliver.check.is_none() && !before.exists() => {
            Consumers::NoPrevious(before.clone())
        }
        (Some(dir), Some(before)) => {
            Consumers::Report(self::consumers(before, &published.snapshot, dir)?)
        }
        _ => Consumers::NotAsked,
    };
    let delivery = deliver_bytes(&published.bytes, deliver)?;
    Ok(PublishOutcome {
        published,
        consumers,
        delivery,
    })
}

fn deliver_bytes(bytes: &[u8], deliver: &DeliverOptions) -> anyhow::Result<Delivery> {
    if let Some(path) = &deliver.check {
        let current =
            std::fs::read(path).with_context(|| format!("could not read {}", path.display()))?;
        let same = current == bytes;
        crate::memory::leave_to_exit(current);
        return Ok(match same {
            true => Delivery::UpToDate(path.clone()),
            false => Delivery::OutOfDate(path.clone()),
        });
    }
    match &deliver.out {
        Some(path) => {
            crate::report::write_file(path, bytes)?;
            Ok(Delivery::Written(path.clone()))
        }
        None => Ok(Delivery::Stdout),
    }
}

/// Each model's relation under the `--from` target, as columns with the catalog's types and
/// nullability; `None` for a model the target does not hold.
type Physical = HashMap<String, Option<Vec<OutColumn>>>;

/// For each reads file in `dir` (`*.json`, in name order) that reads `after`'s project, the
/// changes from `before` (the previous snapshot, a file) to `after` and whom they reach. A
/// file that is not a reads file is an error: a consumer silently left out is a check that
/// did not run.
fn consumers(before: &Path, after: &Snapshot, dir: &Path) -> anyhow::Result<ConsumersReport> {
    let bytes = std::fs::read(before).with_context(|| {
        format!(
            "could not read {}, the snapshot to compare with",
            before.display()
        )
    })?;
    let before_snapshot = snapshot::parse(&bytes).map_err(|e| {
        UserError::new(format!("{} is unusable: {e}", before.display()))
            .with_hint("compare with a snapshot `sqb publish` wrote")
    })?;
    let engine = engine_of(after);
    let entries = impact::changelog(&before_snapshot, after, engine);
    let today = crate::compile::today();
    let mut out = Vec::new();
    for path in reads_files(dir)? {
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("could not read {}", path.display()))?;
        let file = ReadsFile::parse(&text).map_err(|e| {
            UserError::new(format!(
                "{} is not a usable reads file: {e}",
                path.display()
            ))
            .with_hint("have the consumer write it with `sqb imports reads --format json`")
        })?;
        for import in file.imports.iter().filter(|i| i.producer == after.project) {
            out.push(ConsumerImpact {
                file: path.clone(),
                consumer: file.consumer.clone(),
                read_against: import.snapshot.clone(),
                stale: import.snapshot != before_snapshot.content_hash,
                changes: impact::assess(entries.clone(), import, &today, &|_, _| false),
            });
        }
    }
    Ok(ConsumersReport {
        producer: after.project.clone(),
        before: before_snapshot.content_hash,
        after: after.content_hash.clone(),
        consumers: out,
    })
}

fn reads_files(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let entries = std::fs::read_dir(dir)
        .with_context(|| format!("could not read the consumers' directory {}", dir.display()))?;
    let mut files = Vec::new();
    for entry in entries {
        let path = entry
            .with_context(|| format!("could not read the consumers' directory {}", dir.display()))?
            .path();
        if path.extension().is_some_and(|e| e == "json") {
            files.push(path);
        }
    }
    files.sort();
    if files.is_empty() {
        return Err(
            UserError::new(format!("{} holds no reads file (*.json)", dir.display()))
                .with_hint("vendor each consumer's `sqb imports reads --format json` there")
                .into(),
        );
    }
    Ok(files)
}

/// The engine the snapshot's relations live on.
fn engine_of(snapshot: &Snapshot) -> Engine {
    snapshot
        .models
        .first()
        .and_then(|m| Engine::parse(&m.relation.engine))
        .unwrap_or(Engine::DuckDb)
}

fn publish(root: &Path, options: &PublishOptions) -> anyhow::Result<Published> {
    let Some(from) = &options.from else {
        let project = Project::load_cached(root, options.use_cache)?;
        let published = build(root, &project, options, None);
        crate::memory::leave_to_exit(project);
        return published;
    };
    let (_, snapshot) = inspect(root, from, Texts::Keep, |read| {
        let physical = physical(read.project, &read.inspection);
        build(root, read.project, options, Some(&physical))
    })?;
    Ok(snapshot)
}

fn physical(project: &Project, inspection: &Inspection<'_>) -> Physical {
    let engine = project.engine();
    inspection
        .items
        .iter()
        .filter_map(|item| match item.resource {
            Resource::Model(m) => Some((m.name.clone(), item.physical.as_ref())),
            Resource::Source(_) => None,
        })
        .map(|(name, relation)| {
            let columns = relation.filter(|r| r.unavailable.is_none()).map(|r| {
                r.columns
                    .iter()
                    .map(|c| OutColumn {
                        ty: crate::types::parse(&canonical_type(project, c), engine).ok(),
                        nullable: (c.nullable == Some(false)).then_some(false),
                        ..OutColumn::named(c.name.clone())
                    })
                    .collect()
            });
            (name, columns)
        })
        .collect()
}

/// The snapshot of `project`; undeclared types come from `physical` when given, else from
/// what the SQL proves.
fn build(
    root: &Path,
    project: &Project,
    options: &PublishOptions,
    physical: Option<&Physical>,
) -> anyhow::Result<Published> {
    let published = |m: &&Model| {
        options.all || m.props.access.as_ref().map(|a| a.value) == Some(Access::Public)
    };
    // The SQL's proofs are needed only where a published type is not declared (and not read
    // from the warehouse); otherwise the compile's verdict is enough, and the cache has it.
    let needs_proofs = physical.is_none()
        && project.models.iter().filter(published).any(|m| {
            let declared = project.effective_columns(m);
            declared.is_empty() || declared.iter().any(|c| c.type_text.is_none())
        });
    let proofs = match needs_proofs {
        true => {
            let compiled = analyze(project, Options::default());
            super::ensure_compiles(project, &compiled.diagnostics)?;
            compiled.models
        }
        false => {
            let (diags, _) = compile_cached(project, Options::default(), options.use_cache);
            super::ensure_compiles(project, &diags)?;
            HashMap::new()
        }
    };
    let target = target(project, options.target.as_deref())?;
    let _models = tracing::debug_span!("published models built").entered();
    let built = crate::parallel::map(&project.models, |model| {
        let access = model.props.access.as_ref().map(|a| a.value);
        if !options.all && access != Some(Access::Public) {
            return Built::Private;
        }
        let shape = match physical {
            Some(physical) => match physical.get(&model.name).and_then(Option::as_deref) {
                Some(columns) => Some(columns),
                None => return Built::Absent(model.name.clone()),
            },
            None => proofs.get(&model.name).and_then(|a| a.shape.as_deref()),
        };
        let mut unresolved = Vec::new();
        let columns = columns(project, model, shape, &mut unresolved);
        let published = PublishedModel {
            name: model.name.clone(),
            relation: relation(project, model, target),
            contract: project.policy(model).as_str().to_string(),
            shape_hash: String::new(),
            columns,
        };
        Built::Model(published, unresolved)
    });
    let mut models = Vec::new();
    let mut unresolved = Vec::new();
    let mut absent = Vec::new();
    for built in built {
        match built {
            Built::Private => {}
            Built::Absent(name) => absent.push(name),
            Built::Model(model, missing) => {
                models.push(model);
                unresolved.extend(missing);
            }
        }
    }
    if let Some(from) = options.from.as_ref().filter(|_| !absent.is_empty()) {
        return Err(UserError::new(format!(
            "cannot publish from `{}`: it holds no relation for {}: {}",
            from.from,
            crate::report::count(absent.len(), "model", "models"),
            absent.join(", ")
        ))
        .with_hint("build them there first, or publish without --from")
        .into());
    }
    if !unresolved.is_empty() {
        let (whence, hint) = match &options.from {
            Some(from) => (
                format!("declared nor in the relation under `{}`", from.from),
                "declare a `type` for each, or build the column in the target first",
            ),
            None => (
                "declared nor proven by its SQL".to_string(),
                "declare a `type` for each, cast the expression in the model's SQL, or read the types from a warehouse with --from TARGET",
            ),
        };
        return Err(UserError::new(format!(
            "cannot publish: the type of {} is neither {whence}: {}",
            crate::report::count(unresolved.len(), "column", "columns"),
            unresolved.join(", ")
        ))
        .with_hint(hint)
        .into());
    }
    if !models.iter().any(|m| !m.columns.is_empty()) {
        let why = match models.is_empty() {
            true => "no model is public",
            false => "no published model has a typed column",
        };
        return Err(UserError::new(format!("cannot publish: {why}; a snapshot that checks nothing is worse than none"))
            .with_hint("mark the models other projects read with `access = \"public\"` and declare their columns, or pass --all")
            .into());
    }
    let name = project
        .config
        .name
        .as_ref()
        .map_or_else(|| dir_name(root), |n| n.value.clone());
    let locations = match options.locate {
        true => locations(project, &models),
        false => HashMap::new(),
    };
    let (snapshot, bytes) = tracing::debug_span!("snapshot rendered and hashed")
        .in_scope(|| Snapshot::with_bytes(name, models));
    Ok(Published {
        snapshot,
        bytes,
        locations,
    })
}

/// Where each published model is declared (its `access` key, else its sidecar, else its SQL)
/// and each of its declared columns.
fn locations(
    project: &Project,
    published: &[PublishedModel],
) -> HashMap<(String, Option<String>), At> {
    let at = |loc: &crate::source::Loc| {
        let file = project.sources.get(loc.file);
        let (line, col) = file.line_col(loc.span().start);
        (file.rel_path.clone(), line, col)
    };
    let mut out = HashMap::new();
    for model in published.iter().filter_map(|p| project.model(&p.name)) {
        let whole = match (&model.props.access, model.sidecar) {
            (Some(access), _) => at(&access.loc),
            (None, Some(file)) => (project.sources.get(file).rel_path.clone(), 1, 1),
            (None, None) => (project.sources.get(model.sql_file).rel_path.clone(), 1, 1),
        };
        out.insert((model.name.clone(), None), whole);
        for column in project.effective_columns(model) {
            let key = (model.name.clone(), Some(column.name.value.clone()));
            out.insert(key, at(&column.name.loc));
        }
    }
    out
}

/// What one model of the project gives the snapshot.
enum Built {
    /// Not published.
    Private,
    /// Published, but the `--from` target holds no relation for it.
    Absent(String),
    /// Published, with the columns whose type nothing resolves.
    Model(PublishedModel, Vec<String>),
}

fn dir_name(root: &Path) -> String {
    root.file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
}

fn target<'p>(project: &'p Project, name: Option<&str>) -> Result<&'p Target, UserError> {
    let name = match name.or(project
        .config
        .default_target
        .as_ref()
        .map(|t| t.value.as_str()))
    {
        Some(name) => name,
        None => {
            return Err(UserError::new("no target to publish: pass --target NAME")
                .with_hint("or set `default_target` in sqb.toml"))
        }
    };
    project.config.targets.get(name).ok_or_else(|| {
        let names: Vec<&str> = project.config.targets.keys().map(String::as_str).collect();
        UserError::new(format!("unknown target `{name}`"))
            .with_hint(format!("targets: {}", names.join(", ")))
    })
}

fn relation(project: &Project, model: &Model, target: &Target) -> Relation {
    Relation {
        engine: project.engine().to_string(),
        database: target.database.as_ref().map(|d| d.value.clone()),
        schema: target
            .schema
            .as_ref()
            .map_or_else(String::new, |s| s.value.clone()),
        name: model.relation_name().to_string(),
    }
}

/// A model's published columns: its declaration in order, typed from the declaration or the
/// SQL's proof; a model that declares none publishes its inferred output, where known.
fn columns(
    project: &Project,
    model: &Model,
    shape: Option<&[OutColumn]>,
    unresolved: &mut Vec<String>,
) -> Vec<PublishedColumn> {
    let declared = project.effective_columns(model);
    let engine = project.engine();
    let proven = |name: &str| {
        shape.and_then(|s| {
            s.iter()
                .find(|c| crate::compile::sql::same_column(&c.name, name, engine))
        })
    };
    if declared.is_empty() {
        let Some(shape) = shape else {
            return Vec::new();
        };
        return shape
            .iter()
            .filter_map(|c| match &c.ty {
                Some(ty) => Some(inferred(c, ty)),
                None => {
                    unresolved.push(format!("{}.{}", model.name, c.name));
                    None
                }
            })
            .collect();
    }
    declared
        .iter()
        .filter_map(|column| {
            let out = declared_column(project, column, proven(&column.name.value));
            if out.is_none() {
                unresolved.push(format!("{}.{}", model.name, column.name.value));
            }
            out
        })
        .collect()
}

fn inferred(c: &OutColumn, ty: &crate::types::DataType) -> PublishedColumn {
    PublishedColumn {
        name: c.name.clone(),
        ty: ty.to_string(),
        canonical_type: ty.to_string(),
        nullable: c.nullable != Some(false),
        enum_members: None,
        deprecated: None,
        deprecation_date: None,
    }
}

fn declared_column(
    project: &Project,
    column: &Column,
    proven: Option<&OutColumn>,
) -> Option<PublishedColumn> {
    let (ty, canonical, members) = match (&column.type_text, &column.ty) {
        (Some(text), Some(ty)) => {
            let members = ty
                .named_types()
                .first()
                .and_then(|n| project.enum_named(n))
                .map(|e| e.values());
            let canonical = match (&members, ty.named_types().first()) {
                (Some(_), Some(name)) => project
                    .enum_named(name)
                    .map_or_else(|| ty.to_string(), |e| e.base_type().to_string()),
                _ => ty.to_string(),
            };
            (text.value.to_string(), canonical, members)
        }
        _ => {
            let ty = proven?.ty.as_ref()?;
            (ty.to_string(), ty.to_string(), None)
        }
    };
    let docs = column.docs.as_deref();
    Some(PublishedColumn {
        name: column.name.value.clone(),
        ty,
        canonical_type: canonical,
        // What the declaration promises: a proof is not a promise the producer keeps.
        nullable: column.is_nullable(),
        enum_members: members,
        deprecated: docs
            .and_then(|d| d.deprecated.as_ref())
            .map(|d| d.value.clone()),
        deprecation_date: docs
            .and_then(|d| d.deprecation_date.as_ref())
            .map(|d| d.value.clone()),
    })
}
