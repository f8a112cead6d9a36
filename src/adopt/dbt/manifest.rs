//! The parts of dbt's `manifest.json` the importer reads, for schema versions v9 to v12
//! (dbt-core 1.5 and later). Everything else in the file is ignored; fields dbt added after 1.5
//! default when absent.

use std::collections::{BTreeMap, HashMap};

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

use super::DbtError;

/// The manifest schema versions this importer reads, and the dbt-core release that wrote each.
pub const SUPPORTED: &[(u32, &str)] = &[(9, "1.5"), (10, "1.6"), (11, "1.7"), (12, "1.8")];

#[derive(Debug)]
pub struct Manifest {
    pub version: u32,
    pub dbt_version: Option<String>,
    pub adapter_type: Option<String>,
    pub project_name: Option<String>,
    pub nodes: Vec<Node>,
    pub sources: Vec<SourceNode>,
    /// Disabled nodes by unique id.
    pub disabled: BTreeMap<String, Vec<Value>>,
    /// Where each node and source is, by unique id.
    by_id: HashMap<String, usize>,
    source_by_id: HashMap<String, usize>,
    /// Other resources by section (`unit_tests`, `exposures`): unique id →
    /// entry.
    pub others: Vec<(&'static str, String, OtherNode)>,
    /// MetricFlow's semantic models and metrics (schema v10 and later).
    pub semantic_models: Vec<(String, SemanticModel)>,
    pub metrics: Vec<(String, Metric)>,
    pub saved_queries: Vec<(String, SavedQueryNode)>,
}

#[derive(Debug, Deserialize)]
struct Metadata {
    dbt_schema_version: String,
    #[serde(default)]
    dbt_version: Option<String>,
    #[serde(default)]
    adapter_type: Option<String>,
    #[serde(default)]
    project_name: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Node {
    pub unique_id: String,
    pub resource_type: String,
    pub name: String,
    #[serde(default)]
    pub package_name: String,
    #[serde(default)]
    pub original_file_path: String,
    #[serde(default)]
    pub patch_path: Option<String>,
    #[serde(default)]
    pub database: Option<String>,
    #[serde(default)]
    pub schema: Option<String>,
    #[serde(default)]
    pub alias: Option<String>,
    #[serde(default)]
    pub relation_name: Option<String>,
    #[serde(default)]
    pub compiled_code: Option<String>,
    #[serde(default)]
    pub language: Option<String>,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default)]
    pub config: NodeConfig,
    #[serde(default, deserialize_with = "entries")]
    pub columns: Vec<(String, ColumnInfo)>,
    #[serde(default)]
    pub constraints: Vec<Constraint>,
    #[serde(default)]
    pub depends_on: DependsOn,
    #[serde(default)]
    pub version: Option<Value>,
    #[serde(default)]
    pub test_metadata: Option<TestMetadata>,
    #[serde(default)]
    pub column_name: Option<String>,
    #[serde(default)]
    pub attached_node: Option<String>,
    /// dbt 1.9+'s `time_spine:` model property (`standard_granularity_column`).
    #[serde(default)]
    pub time_spine: Option<Value>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct NodeConfig {
    #[serde(default)]
    pub materialized: Option<String>,
    #[serde(default)]
    pub unique_key: Option<Value>,
    #[serde(default)]
    pub on_schema_change: Option<String>,
    #[serde(default)]
    pub contract: Option<ContractConfig>,
    #[serde(default)]
    pub tags: Option<Vec<String>>,
    #[serde(default)]
    pub meta: BTreeMap<String, Value>,
    #[serde(default)]
    pub access: Option<String>,
    #[serde(default)]
    pub severity: Option<String>,
    #[serde(default, rename = "where")]
    pub where_: Option<String>,
    #[serde(default, rename = "pre-hook")]
    pub pre_hook: Vec<Value>,
    #[serde(default, rename = "post-hook")]
    pub post_hook: Vec<Value>,
    #[serde(default)]
    pub column_types: BTreeMap<String, Value>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct ContractConfig {
    #[serde(default)]
    pub enforced: bool,
    #[serde(default)]
    pub alias_types: Option<bool>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct ColumnInfo {
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub meta: BTreeMap<String, Value>,
    #[serde(default)]
    pub data_type: Option<String>,
    #[serde(default)]
    pub constraints: Vec<Constraint>,
    #[serde(default)]
    pub tags: Vec<String>,
    /// A time spine column's grain (dbt 1.9+).
    #[serde(default)]
    pub granularity: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Constraint {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub expression: Option<String>,
    #[serde(default)]
    pub columns: Vec<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct DependsOn {
    #[serde(default)]
    pub nodes: Vec<String>,
    #[serde(default)]
    pub macros: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct TestMetadata {
    pub name: String,
    #[serde(default)]
    pub kwargs: BTreeMap<String, Value>,
    #[serde(default)]
    pub namespace: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct SourceNode {
    pub unique_id: String,
    pub name: String,
    pub source_name: String,
    #[serde(default)]
    pub package_name: String,
    #[serde(default)]
    pub original_file_path: String,
    #[serde(default)]
    pub database: Option<String>,
    #[serde(default)]
    pub schema: Option<String>,
    #[serde(default)]
    pub identifier: Option<String>,
    #[serde(default)]
    pub relation_name: Option<String>,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub source_description: String,
    #[serde(default)]
    pub loader: String,
    #[serde(default)]
    pub loaded_at_field: Option<String>,
    #[serde(default)]
    pub freshness: Option<Value>,
    #[serde(default)]
    pub meta: BTreeMap<String, Value>,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default, deserialize_with = "entries")]
    pub columns: Vec<(String, ColumnInfo)>,
}

/// A MetricFlow semantic model: measures, dimensions and entities over one dbt model.
#[derive(Debug, Clone, Deserialize)]
pub struct SemanticModel {
    pub name: String,
    #[serde(default)]
    pub original_file_path: String,
    #[serde(default)]
    pub depends_on: DependsOn,
    #[serde(default)]
    pub entities: Vec<Entity>,
    #[serde(default)]
    pub dimensions: Vec<SemanticDimension>,
    #[serde(default)]
    pub measures: Vec<SemanticMeasure>,
    /// `defaults.agg_time_dimension` and the like.
    #[serde(default)]
    pub defaults: Option<Value>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Entity {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub expr: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct SemanticDimension {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub expr: Option<String>,
    #[serde(default)]
    pub type_params: Option<Value>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct SemanticMeasure {
    pub name: String,
    pub agg: String,
    #[serde(default)]
    pub expr: Option<Value>,
    #[serde(default)]
    pub non_additive_dimension: Option<Value>,
    /// `percentile`, `use_discrete_percentile`, `use_approximate_percentile`.
    #[serde(default)]
    pub agg_params: Option<Value>,
    #[serde(default)]
    pub agg_time_dimension: Option<String>,
}

/// A MetricFlow metric.
#[derive(Debug, Clone, Deserialize)]
pub struct Metric {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub label: Option<String>,
    #[serde(default)]
    pub original_file_path: String,
    #[serde(default)]
    pub type_params: Value,
    #[serde(default)]
    pub filter: Option<Value>,
    /// The grain `metric_time` is by when asked without one (dbt 1.9+).
    #[serde(default)]
    pub time_granularity: Option<String>,
}

/// A MetricFlow saved query.
#[derive(Debug, Clone, Deserialize)]
pub struct SavedQueryNode {
    pub name: String,
    #[serde(default)]
    pub original_file_path: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub query_params: Value,
    #[serde(default)]
    pub exports: Vec<Value>,
}

/// A resource the importer only lists: its name and the file that declares it.
#[derive(Debug, Clone, Deserialize)]
pub struct OtherNode {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub original_file_path: String,
}

/// The sections read in full, parsed straight from the text so that entries keep their order.
#[derive(Deserialize)]
struct Sections {
    #[serde(deserialize_with = "entries")]
    nodes: Vec<(String, Node)>,
    #[serde(deserialize_with = "entries")]
    sources: Vec<(String, SourceNode)>,
    #[serde(default)]
    disabled: Option<BTreeMap<String, Vec<Value>>>,
    #[serde(default, deserialize_with = "entries")]
    unit_tests: Vec<(String, OtherNode)>,
    #[serde(default, deserialize_with = "entries")]
    semantic_models: Vec<(String, SemanticModel)>,
    #[serde(default, deserialize_with = "entries")]
    metrics: Vec<(String, Metric)>,
    #[serde(default, deserialize_with = "entries")]
    saved_queries: Vec<(String, SavedQueryNode)>,
    #[serde(default, deserialize_with = "entries")]
    exposures: Vec<(String, OtherNode)>,
}

impl Manifest {
    /// Parses `text`, the contents of a manifest: first its metadata (is it a manifest, of a
    /// version this reads?), then the sections.
    pub fn parse(text: &str) -> Result<Manifest, DbtError> {
        #[derive(Deserialize)]
        struct Head {
            metadata: Option<Value>,
        }
        let head: Value =
            serde_json::from_str(text).map_err(|e| DbtError::NotJson(e.to_string()))?;
        if !head.is_object() {
            return Err(DbtError::NotManifest("it is not a JSON object".into()));
        }
        let head: Head =
            serde_json::from_value(head).map_err(|e| DbtError::NotManifest(e.to_string()))?;
        let metadata = head
            .metadata
            .filter(|m| m.get("dbt_schema_version").is_some())
            .ok_or_else(|| {
                DbtError::NotManifest("it has no `metadata.dbt_schema_version`".into())
            })?;
        let metadata: Metadata = serde_json::from_value(metadata)
            .map_err(|e| DbtError::NotManifest(format!("its `metadata`: {e}")))?;
        let version = schema_version(&metadata.dbt_schema_version)?;
        check_version(version, &metadata)?;
        let sections: Sections =
            serde_json::from_str(text).map_err(|e| DbtError::BadEntry(e.to_string()))?;
        let others = [
            ("unit_tests", sections.unit_tests),
            ("exposures", sections.exposures),
        ]
        .into_iter()
        .flat_map(|(section, list)| list.into_iter().map(move |(id, n)| (section, id, n)))
        .collect();
        let nodes: Vec<Node> = sections.nodes.into_iter().map(|(_, n)| n).collect();
        let sources: Vec<SourceNode> = sections.sources.into_iter().map(|(_, n)| n).collect();
        Ok(Manifest {
            by_id: nodes
                .iter()
                .enumerate()
                .map(|(i, n)| (n.unique_id.clone(), i))
                .collect(),
            source_by_id: sources
                .iter()
                .enumerate()
                .map(|(i, n)| (n.unique_id.clone(), i))
                .collect(),
            version,
            dbt_version: metadata.dbt_version,
            adapter_type: metadata.adapter_type,
            project_name: metadata.project_name,
            nodes,
            sources,
            disabled: sections.disabled.unwrap_or_default(),
            others,
            semantic_models: sections.semantic_models,
            metrics: sections.metrics,
            saved_queries: sections.saved_queries,
        })
    }

    pub fn node(&self, id: &str) -> Option<&Node> {
        self.by_id.get(id).map(|&i| &self.nodes[i])
    }

    /// The relation dbt renders for a node or a source.
    pub fn relation_of(&self, id: &str) -> Option<&str> {
        match self.node(id) {
            Some(node) => node.relation_name.as_deref(),
            None => self
                .source_by_id
                .get(id)
                .and_then(|&i| self.sources[i].relation_name.as_deref()),
        }
    }
}

/// `https://schemas.getdbt.com/dbt/manifest/v12.json` → 12.
fn schema_version(url: &str) -> Result<u32, DbtError> {
    url.rsplit('/')
        .next()
        .filter(|_| url.contains("/manifest/"))
        .and_then(|file| file.strip_prefix('v'))
        .and_then(|rest| rest.strip_suffix(".json"))
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| {
            DbtError::NotManifest(format!(
                "`metadata.dbt_schema_version` is `{url}`, not a manifest schema"
            ))
        })
}

fn check_version(version: u32, metadata: &Metadata) -> Result<(), DbtError> {
    let lowest = SUPPORTED[0].0;
    let highest = SUPPORTED[SUPPORTED.len() - 1].0;
    if (lowest..=highest).contains(&version) {
        return Ok(());
    }
    Err(DbtError::UnsupportedVersion {
        version,
        dbt_version: metadata.dbt_version.clone(),
        newer: version > highest,
    })
}

/// A JSON object as its entries in file order (dbt writes columns in their YAML order).
fn entries<'de, D, T>(deserializer: D) -> Result<Vec<(String, T)>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct Ordered<T>(std::marker::PhantomData<T>);

    impl<'de, T: Deserialize<'de>> Visitor<'de> for Ordered<T> {
        type Value = Vec<(String, T)>;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an object")
        }

        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(Vec::new())
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut entries = Vec::new();
            while let Some(key) = map.next_key::<String>()? {
                let value = map
                    .next_value()
                    .map_err(|e| serde::de::Error::custom(format_args!("entry `{key}`: {e}")))?;
                entries.push((key, value));
            }
            Ok(entries)
        }
    }

    deserializer.deserialize_any(Ordered(std::marker::PhantomData))
}
