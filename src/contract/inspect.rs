//! Reading the selected resources' relations from the warehouse: the I/O half of the contract
//! commands, kept apart from the pure diff.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use crate::engine::Engine;
use crate::project::{Project, Target};
use crate::select::Resource;
use crate::warehouse::duckdb::DuckDbIntrospector;
use crate::warehouse::postgres::PgIntrospector;
use crate::warehouse::{
    quote_ident, Introspector, Namespace, PhysicalRelation, Timeouts, WarehouseError,
};

/// A selected resource with what the warehouse holds for it.
pub struct Inspected<'p> {
    pub resource: Resource<'p>,
    /// `database.schema.name`, quoted where needed.
    pub relation: String,
    pub physical: Option<PhysicalRelation>,
    /// A relation whose name differs only by case, where that is not the same relation.
    pub case_only: Option<String>,
}

/// The result of reading a target: its resolved database and the inspected resources.
pub struct Inspection<'p> {
    pub database: String,
    pub items: Vec<Inspected<'p>>,
}

/// The environment variable that overrides `connection.url`.
pub const DATABASE_URL_ENV: &str = "SQB_DATABASE_URL";

/// Opens the project's connection and reads every selected resource's relation, one catalog
/// query per namespace.
pub async fn inspect<'p>(
    project: &'p Project,
    target: &Target,
    resources: Vec<Resource<'p>>,
    timeouts: Timeouts,
) -> Result<Inspection<'p>, WarehouseError> {
    match project.engine() {
        Engine::Postgres => {
            let url = std::env::var(DATABASE_URL_ENV)
                .ok()
                .filter(|u| !u.is_empty())
                .or_else(|| {
                    project
                        .config
                        .connection
                        .url
                        .as_ref()
                        .map(|u| u.value.clone())
                })
                .ok_or(WarehouseError::NoUrl)?;
            let mut warehouse = PgIntrospector::configure(&url, timeouts)?;
            read_all(&mut warehouse, project, target, resources, Engine::Postgres).await
        }
        Engine::DuckDb => {
            let path = project
                .config
                .connection
                .path
                .as_ref()
                .map_or("", |p| p.value.as_str());
            let mut warehouse =
                DuckDbIntrospector::open(&project.root.join(Path::new(path))).await?;
            read_all(&mut warehouse, project, target, resources, Engine::DuckDb).await
        }
    }
}

fn namespace_of(resource: &Resource<'_>, target: &Target) -> Namespace {
    let target_db = target.database.as_ref().map(|d| d.value.clone());
    match resource {
        Resource::Model(_) => Namespace {
            database: target_db,
            schema: target
                .schema
                .as_ref()
                .map_or(String::new(), |s| s.value.clone()),
        },
        Resource::Source(s) => Namespace {
            database: s.database.as_ref().map(|d| d.value.clone()).or(target_db),
            schema: s.schema.as_ref().map_or(String::new(), |s| s.value.clone()),
        },
    }
}

fn relation_name<'p>(resource: &Resource<'p>) -> &'p str {
    match resource {
        Resource::Model(m) => m.relation_name(),
        Resource::Source(s) => s.relation_name(),
    }
}

async fn read_all<'p, I: Introspector>(
    warehouse: &mut I,
    _project: &'p Project,
    target: &Target,
    resources: Vec<Resource<'p>>,
    engine: Engine,
) -> Result<Inspection<'p>, WarehouseError> {
    let mut by_namespace: BTreeMap<Namespace, Vec<usize>> = BTreeMap::new();
    for (i, r) in resources.iter().enumerate() {
        by_namespace
            .entry(namespace_of(r, target))
            .or_default()
            .push(i);
    }
    let mut found: Vec<(Option<PhysicalRelation>, Option<String>)> =
        vec![(None, None); resources.len()];
    for (namespace, indexes) in &by_namespace {
        let names: Vec<String> = indexes
            .iter()
            .map(|&i| relation_name(&resources[i]).to_string())
            .collect();
        let relations = warehouse.relations(namespace, &names).await?;
        let exact: HashMap<&str, &PhysicalRelation> =
            relations.iter().map(|r| (r.name.as_str(), r)).collect();
        let mut folded: HashMap<String, &PhysicalRelation> = HashMap::new();
        for r in &relations {
            folded.entry(r.name.to_lowercase()).or_insert(r);
        }
        for &i in indexes {
            let name = relation_name(&resources[i]);
            found[i] = match (exact.get(name), folded.get(&name.to_lowercase())) {
                (Some(r), _) => (Some((*r).clone()), None),
                // DuckDB resolves identifiers case-insensitively: it is the same relation.
                (None, Some(r)) if engine == Engine::DuckDb => (Some((*r).clone()), None),
                (None, Some(r)) => (None, Some(r.name.clone())),
                (None, None) => (None, None),
            };
        }
    }
    let database = target.database.as_ref().map_or_else(
        || warehouse.default_database().to_string(),
        |d| d.value.clone(),
    );
    let default_db = warehouse.default_database().to_string();
    let items = resources
        .into_iter()
        .zip(found)
        .map(|(resource, (physical, case_only))| {
            let ns = namespace_of(&resource, target);
            let db = ns.database.unwrap_or_else(|| default_db.clone());
            let relation = [db.as_str(), ns.schema.as_str(), relation_name(&resource)]
                .map(quote_ident)
                .join(".");
            Inspected {
                resource,
                relation,
                physical,
                case_only,
            }
        })
        .collect();
    Ok(Inspection { database, items })
}
