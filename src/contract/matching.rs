//! Matching the selected resources to what the warehouse read: which namespace each resource
//! lives in, the catalog request for a selection, and each resource's relation in the answer
//! (exactly, or up to case where the engine folds names). Pure: no I/O.

use std::collections::{BTreeMap, HashMap};

use crate::catalog::{Answer, Namespace, PhysicalRelation, Request};
use crate::engine::Engine;
use crate::ident::quote_ident;
use crate::project::{Resource, Target};

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

/// The request for `resources`: their relation names, grouped by namespace.
pub fn request(resources: &[Resource<'_>], target: &Target) -> Request {
    let mut by_namespace: BTreeMap<Namespace, Vec<String>> = BTreeMap::new();
    for r in resources {
        by_namespace
            .entry(namespace_of(r, target))
            .or_default()
            .push(r.relation_name().to_string());
    }
    by_namespace.into_iter().collect()
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

/// The relation named `key`: moved out for the last resource that wants it, cloned before.
fn take(
    relations: &mut HashMap<String, PhysicalRelation>,
    wanted: &mut HashMap<&str, usize>,
    key: &str,
) -> Option<PhysicalRelation> {
    let left = wanted.get_mut(key)?;
    *left -= 1;
    match *left {
        0 => relations.remove(key),
        _ => relations.get(key).cloned(),
    }
}

/// Matches the answer to the selected resources.
pub fn assemble<'p>(
    engine: Engine,
    target: &Target,
    resources: Vec<Resource<'p>>,
    answer: Answer,
) -> Inspection<'p> {
    let mut found: Vec<(Option<PhysicalRelation>, Option<String>)> =
        vec![(None, None); resources.len()];
    let mut indexes_of: BTreeMap<Namespace, Vec<usize>> = BTreeMap::new();
    for (i, r) in resources.iter().enumerate() {
        indexes_of
            .entry(namespace_of(r, target))
            .or_default()
            .push(i);
    }
    for (namespace, relations) in answer.relations {
        let Some(indexes) = indexes_of.get(&namespace) else {
            continue;
        };
        let mut folded: HashMap<String, String> = HashMap::new();
        for r in &relations {
            folded
                .entry(r.name.to_lowercase())
                .or_insert_with(|| r.name.clone());
        }
        // Relations are moved to the resource that wants them, not copied (they are most of a
        // large diff's memory); only a relation wanted twice is cloned.
        let mut exact: HashMap<String, PhysicalRelation> =
            relations.into_iter().map(|r| (r.name.clone(), r)).collect();
        let mut wanted: HashMap<&str, usize> = HashMap::new();
        for &i in indexes {
            let name = resources[i].relation_name();
            let key = match exact.contains_key(name) {
                true => name,
                false => folded
                    .get(&name.to_lowercase())
                    .map_or(name, String::as_str),
            };
            *wanted.entry(key).or_default() += 1;
        }
        for &i in indexes {
            let name = resources[i].relation_name();
            found[i] = if exact.contains_key(name) {
                (take(&mut exact, &mut wanted, name), None)
            } else {
                match folded.get(&name.to_lowercase()) {
                    // DuckDB resolves identifiers case-insensitively: it is the same relation.
                    Some(actual) if engine == Engine::DuckDb => {
                        (take(&mut exact, &mut wanted, actual), None)
                    }
                    Some(actual) => (None, Some(actual.clone())),
                    None => (None, None),
                }
            };
        }
    }
    let default_db = answer.default_database;
    let database = target
        .database
        .as_ref()
        .map_or_else(|| default_db.clone(), |d| d.value.clone());
    let items = resources
        .into_iter()
        .zip(found)
        .map(|(resource, (physical, case_only))| {
            let ns = namespace_of(&resource, target);
            let db = ns.database.unwrap_or_else(|| default_db.clone());
            let relation = [db.as_str(), ns.schema.as_str(), resource.relation_name()]
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
    Inspection { database, items }
}
