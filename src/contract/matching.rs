//! Matching the selected resources to what the warehouse read: which namespace each resource
//! lives in, the catalog request for a selection, and each resource's relation in the answer
//! (exactly, or up to case where the engine folds names). Pure: no I/O.

use std::collections::BTreeMap;

use foldhash::HashMap;

use crate::catalog::{Answer, Namespace, PhysicalRelation, Request, SchemaListing};
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
    /// The survey of the connection's database, when the session was asked for one.
    pub schemas: Vec<SchemaListing>,
    /// With the survey: the adopted schemas' relations that no resource asked for.
    pub unrequested: Vec<(String, Vec<PhysicalRelation>)>,
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

pub fn namespace_of(resource: &Resource<'_>, target: &Target) -> Namespace {
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

/// Matches the answer to the selected resources.
pub fn assemble<'p>(
    engine: Engine,
    target: &Target,
    resources: Vec<Resource<'p>>,
    answer: Answer,
) -> Inspection<'p> {
    let namespaces: Vec<Namespace> = resources.iter().map(|r| namespace_of(r, target)).collect();
    let mut found: Vec<(Option<PhysicalRelation>, Option<String>)> =
        vec![(None, None); resources.len()];
    let mut indexes_of: BTreeMap<&Namespace, Vec<usize>> = BTreeMap::new();
    for (i, namespace) in namespaces.iter().enumerate() {
        indexes_of.entry(namespace).or_default().push(i);
    }
    for (namespace, relations) in answer.relations {
        if let Some(indexes) = indexes_of.get(&namespace) {
            match_namespace(engine, &resources, indexes, relations, &mut found);
        }
    }
    let default_db = answer.default_database;
    let database = target
        .database
        .as_ref()
        .map_or_else(|| default_db.clone(), |d| d.value.clone());
    // `database.schema.`, quoted, once for each namespace.
    let mut prefixes: HashMap<&Namespace, String> = HashMap::default();
    for ns in &namespaces {
        prefixes.entry(ns).or_insert_with(|| {
            let db = ns.database.as_deref().unwrap_or(&default_db);
            format!("{}.{}.", quote_ident(db), quote_ident(&ns.schema))
        });
    }
    let items = resources
        .into_iter()
        .zip(&namespaces)
        .zip(found)
        .map(|((resource, ns), (physical, case_only))| {
            let relation = prefixes[ns].clone() + &quote_ident(resource.relation_name());
            Inspected {
                resource,
                relation,
                physical,
                case_only,
            }
        })
        .collect();
    Inspection {
        database,
        items,
        schemas: answer.schemas,
        unrequested: answer.unrequested,
    }
}

/// Gives each of `indexes` (resources of one namespace) its relation among `relations`: the one
/// of its name, else, where the engine folds names (DuckDB), the first of its name up to case;
/// elsewhere such a relation is only named, as differing by case. Each relation is moved to the
/// last resource that wants it and cloned for the others (relations are most of a large diff's
/// memory).
fn match_namespace(
    engine: Engine,
    resources: &[Resource<'_>],
    indexes: &[usize],
    relations: Vec<PhysicalRelation>,
    found: &mut [(Option<PhysicalRelation>, Option<String>)],
) {
    let picks: Vec<(usize, Option<usize>, Option<String>)> = {
        let exact: HashMap<&str, usize> = relations
            .iter()
            .enumerate()
            .map(|(j, r)| (r.name.as_str(), j))
            .collect();
        // Names up to case, needed only when a resource's relation has no exact match.
        let folded = std::cell::OnceCell::new();
        let folded = || {
            folded.get_or_init(|| {
                let mut folded: HashMap<String, usize> = HashMap::default();
                for (j, r) in relations.iter().enumerate() {
                    folded.entry(r.name.to_lowercase()).or_insert(j);
                }
                folded
            })
        };
        indexes
            .iter()
            .map(|&i| {
                let name = resources[i].relation_name();
                if let Some(&j) = exact.get(name) {
                    return (i, Some(j), None);
                }
                match folded().get(&name.to_lowercase()) {
                    Some(&j) if engine.names_ignore_case() => (i, Some(j), None),
                    Some(&j) => (i, None, Some(relations[j].name.clone())),
                    None => (i, None, None),
                }
            })
            .collect()
    };
    let mut wanted = vec![0usize; relations.len()];
    for &j in picks.iter().filter_map(|(_, j, _)| j.as_ref()) {
        wanted[j] += 1;
    }
    let mut slots: Vec<Option<PhysicalRelation>> = relations.into_iter().map(Some).collect();
    for (i, j, case_only) in picks {
        let physical = j.and_then(|j| {
            wanted[j] -= 1;
            match wanted[j] {
                0 => slots[j].take(),
                _ => slots[j].clone(),
            }
        });
        found[i] = (physical, case_only);
    }
}
