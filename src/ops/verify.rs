//! `sqb imports verify --from TARGET`: the vendored snapshots against the live warehouse,
//! read-only: each imported model's relation exists, and its columns, types and nullability
//! are what the snapshot publishes. The findings and report are `contract diff`'s.

use std::path::Path;

use crate::catalog::{Namespace, PhysicalRelation, Request};
use crate::contract::diff::{diff as diff_resource, Coverage, Declared};
use crate::engine::Engine;
use crate::ident::quote_ident;
use crate::project::{Column, Import, Project};
use crate::report::diff::{DiffReport, FindingReport, NamespaceInfo, ResourceReport};
use crate::source::{Loc, Spanned};
use crate::team_contracts::snapshot::{PublishedModel, Snapshot};
use crate::warehouse::session::Session;
use crate::warehouse::Timeouts;

pub struct VerifyOptions {
    /// The imports to verify; empty: every one.
    pub names: Vec<String>,
    /// The target named by --from (it must exist; the snapshot names each relation's
    /// namespace).
    pub from: String,
    pub timeouts: Timeouts,
    /// Read and write the declarations cache (.sqb/cache/).
    pub use_cache: bool,
}

pub fn verify(root: &Path, options: &VerifyOptions) -> anyhow::Result<DiffReport> {
    let project = Project::load_cached(root, options.use_cache)?;
    let imports = super::team_contracts::select(&project, &options.names)?;
    super::team_contracts::refuse_unusable(&project, false)?;
    let target = super::inspect::target(&project, &options.from)?;
    let models: Vec<(&Import, &Snapshot, &PublishedModel)> = imports
        .iter()
        .filter_map(|i| Some((*i, i.snapshot.as_ref()?)))
        .flat_map(|(i, s)| s.models.iter().map(move |m| (i, s, m)))
        .collect();
    let request = request(&models);
    let connect = super::connection(&project.config, &project.root, options.timeouts)?;
    let answer = Session::start(connect, None).read(request)?;
    let engine = project.engine();
    let resources = models
        .iter()
        .map(|(import, _, model)| {
            let physical = find(&answer.relations, model, engine);
            resource_report(&project, import, model, physical)
        })
        .collect();
    // The namespaces are the snapshots', not the target's.
    let mut schemas: Vec<&str> = models
        .iter()
        .map(|(_, _, m)| m.relation.schema.as_str())
        .collect();
    schemas.sort_unstable();
    schemas.dedup();
    let database = models
        .iter()
        .find_map(|(_, _, m)| m.relation.database.clone())
        .or_else(|| target.database.as_ref().map(|d| d.value.clone()))
        .unwrap_or_else(|| answer.default_database.clone());
    let namespace = NamespaceInfo {
        engine,
        database,
        schema: schemas.join(", "),
    };
    Ok(DiffReport::new(options.from.clone(), namespace, resources))
}

/// The relations to read, grouped by the namespace each snapshot names.
fn request(models: &[(&Import, &Snapshot, &PublishedModel)]) -> Request {
    let mut out: Request = Vec::new();
    for (_, _, m) in models {
        let namespace = namespace(m);
        match out.iter_mut().find(|(n, _)| *n == namespace) {
            Some((_, names)) => names.push(m.relation.name.clone()),
            None => out.push((namespace, vec![m.relation.name.clone()])),
        }
    }
    out
}

fn namespace(model: &PublishedModel) -> Namespace {
    Namespace {
        database: model.relation.database.clone(),
        schema: model.relation.schema.clone(),
    }
}

/// The relation the snapshot names: exactly, or on DuckDB up to case.
fn find<'a>(
    relations: &'a [(Namespace, Vec<PhysicalRelation>)],
    model: &PublishedModel,
    engine: Engine,
) -> Option<&'a PhysicalRelation> {
    let wanted = namespace(model);
    let list = &relations.iter().find(|(n, _)| *n == wanted)?.1;
    let name = &model.relation.name;
    list.iter().find(|r| &r.name == name).or_else(|| {
        engine
            .names_ignore_case()
            .then(|| list.iter().find(|r| r.name.eq_ignore_ascii_case(name)))
            .flatten()
    })
}

/// One imported model's findings, located at its import in `sqb.toml`.
fn resource_report(
    project: &Project,
    import: &Import,
    model: &PublishedModel,
    physical: Option<&PhysicalRelation>,
) -> ResourceReport {
    let loc = import.decl.loc.clone();
    let columns = declared_columns(project, model, &loc);
    let declared = Declared {
        engine: project.engine(),
        // A published type is exact: the consumer relies on its size too.
        compare_sizes: true,
        // The snapshot is what the consumer may rely on, not the whole relation.
        coverage: Coverage::Open,
        columns: columns.iter().collect(),
        enums: Box::new(|_| None),
        resource_loc: loc.clone(),
    };
    let relation = relation_name(model);
    let findings = diff_resource(&declared, physical, &relation, None)
        .into_iter()
        .map(|f| FindingReport::from_finding(f, &project.sources))
        .collect();
    ResourceReport::new(
        "import",
        format!("{}.{}", import.decl.name, model.name),
        relation,
        project.sources.get(loc.file).rel_path.clone(),
        "import",
        findings,
    )
}

/// The snapshot's columns as declarations, each located at the import.
fn declared_columns(project: &Project, model: &PublishedModel, loc: &Loc) -> Vec<Column> {
    model
        .columns
        .iter()
        .map(|c| Column {
            name: Spanned::new(c.name.clone(), loc.clone()),
            file: loc.file,
            type_text: Some(Spanned::new(c.canonical_type.as_str().into(), loc.clone())),
            ty: crate::types::parse(&c.canonical_type, project.engine())
                .ok()
                .map(std::sync::Arc::new),
            nullable: Some(Spanned::new(c.nullable, loc.clone())),
            docs: None,
        })
        .collect()
}

fn relation_name(model: &PublishedModel) -> String {
    let r = &model.relation;
    let mut parts: Vec<String> = r.database.iter().map(|d| quote_ident(d)).collect();
    parts.push(quote_ident(&r.schema));
    parts.push(quote_ident(&r.name));
    parts.join(".")
}
