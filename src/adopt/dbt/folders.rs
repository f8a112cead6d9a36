//! `dbt_project.yml`: the model paths, and the folder-level configs (`+materialized`,
//! `+contract`, `+tags`, `+access`) that become sqb `path_defaults`.
//!
//! dbt configs cascade: a folder inherits its parent's, and `tags` accumulate. sqb's
//! `path_defaults` do not cascade (the deepest folder applies), so each configured folder gets
//! its effective values, inherited ones included.

use serde_yaml_ng::{Mapping, Value};

use super::DbtError;

/// What `dbt_project.yml` says that the import uses.
#[derive(Debug, Default)]
pub struct DbtProject {
    pub name: Option<String>,
    /// `model-paths` (default `models`), without trailing slashes.
    pub model_paths: Vec<String>,
    /// Each folder where one of the carried configs is set, with its effective values.
    pub folders: Vec<FolderDefaults>,
}

/// The effective defaults of a folder, relative to its model path (`""` for all models).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FolderDefaults {
    pub folder: String,
    pub materialized: Option<String>,
    /// `Some(true)` enforced; `Some(false)` turned off below an enforcing folder.
    pub contract: Option<bool>,
    pub tags: Vec<String>,
    pub access: Option<String>,
}

/// Config names dbt accepts without a `+` in `dbt_project.yml`; any other key is a folder.
const CONFIG_NAMES: &[&str] = &[
    "materialized",
    "contract",
    "tags",
    "access",
    "enabled",
    "schema",
    "database",
    "alias",
    "docs",
    "persist_docs",
    "full_refresh",
    "meta",
    "grants",
    "pre-hook",
    "post-hook",
    "on_schema_change",
    "unique_key",
    "incremental_strategy",
    "group",
    "quoting",
    "column_types",
    "sql_header",
    "on_configuration_change",
];

impl DbtProject {
    pub fn parse(text: &str) -> Result<DbtProject, DbtError> {
        let value: Value = serde_yaml_ng::from_str(text).map_err(|e| DbtError::ProjectYml {
            message: e.to_string(),
        })?;
        let bad = |message: &str| DbtError::ProjectYml {
            message: message.to_string(),
        };
        let root = value
            .as_mapping()
            .ok_or_else(|| bad("the file is not a mapping of keys"))?;
        let name = root.get("name").and_then(Value::as_str).map(str::to_string);
        let paths = root.get("model-paths").or_else(|| root.get("source-paths"));
        let model_paths = match paths {
            None => vec!["models".to_string()],
            Some(Value::Sequence(list)) => list
                .iter()
                .map(|p| {
                    p.as_str()
                        .map(|s| s.trim_end_matches('/').to_string())
                        .ok_or_else(|| bad("`model-paths` must be a list of strings"))
                })
                .collect::<Result<_, _>>()?,
            Some(_) => return Err(bad("`model-paths` must be a list of strings")),
        };
        let mut folders = Vec::new();
        let own = name
            .as_deref()
            .and_then(|n| root.get("models")?.as_mapping()?.get(n)?.as_mapping());
        if let Some(own) = own {
            walk(own, "", &FolderDefaults::default(), false, &mut folders)?;
        }
        Ok(DbtProject {
            name,
            model_paths,
            folders,
        })
    }

    /// The defaults that apply to a model at `rel` (its path relative to its model path): the
    /// deepest configured folder containing it.
    pub fn defaults_for(&self, rel: &str) -> Option<&FolderDefaults> {
        self.folders
            .iter()
            .filter(|f| f.folder.is_empty() || rel.starts_with(&format!("{}/", f.folder)))
            .max_by_key(|f| f.folder.len())
    }
}

fn walk(
    map: &Mapping,
    folder: &str,
    inherited: &FolderDefaults,
    enforced_above: bool,
    out: &mut Vec<FolderDefaults>,
) -> Result<(), DbtError> {
    let mut here = FolderDefaults {
        folder: folder.to_string(),
        ..inherited.clone()
    };
    let mut configured = false;
    let mut subfolders = Vec::new();
    for (key, value) in map {
        let Some(key) = key.as_str() else { continue };
        let (name, is_config) = match key.strip_prefix('+') {
            Some(name) => (name, true),
            None => (key, CONFIG_NAMES.contains(&key)),
        };
        if !is_config {
            if let Some(sub) = value.as_mapping() {
                subfolders.push((key, sub));
            }
            continue;
        }
        configured |= apply(&mut here, name, value, folder)?;
    }
    let enforced_here = enforced_above || here.contract == Some(true);
    if configured {
        let mut emitted = here.clone();
        if emitted.contract == Some(false) && !enforced_above {
            emitted.contract = None;
        }
        out.push(emitted);
    }
    for (key, sub) in subfolders {
        let path = match folder {
            "" => key.to_string(),
            _ => format!("{folder}/{key}"),
        };
        walk(sub, &path, &here, enforced_here, out)?;
    }
    Ok(())
}

/// Applies one config; whether it is one the import carries.
fn apply(
    here: &mut FolderDefaults,
    name: &str,
    value: &Value,
    folder: &str,
) -> Result<bool, DbtError> {
    let wrong = |what: &str| DbtError::ProjectYml {
        message: format!(
            "`+{name}` of `models{}{folder}` must be {what}",
            if folder.is_empty() { "" } else { "/" }
        ),
    };
    match name {
        "materialized" => {
            here.materialized = Some(value.as_str().ok_or_else(|| wrong("a string"))?.to_string());
        }
        "access" => {
            here.access = Some(value.as_str().ok_or_else(|| wrong("a string"))?.to_string());
        }
        "contract" => {
            let enforced = value
                .as_mapping()
                .and_then(|m| m.get("enforced"))
                .map(|e| {
                    e.as_bool()
                        .ok_or_else(|| wrong("`{ enforced: true|false }`"))
                })
                .transpose()?;
            here.contract = enforced.or(here.contract);
        }
        "tags" => {
            let tags = match value {
                Value::String(tag) => vec![tag.clone()],
                Value::Sequence(list) => list
                    .iter()
                    .map(|t| {
                        t.as_str()
                            .map(str::to_string)
                            .ok_or_else(|| wrong("a list of strings"))
                    })
                    .collect::<Result<_, _>>()?,
                _ => return Err(wrong("a string or a list of strings")),
            };
            for tag in tags {
                if !here.tags.contains(&tag) {
                    here.tags.push(tag);
                }
            }
        }
        _ => return Ok(false),
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configs_cascade_and_tags_accumulate() {
        let project = DbtProject::parse(
            "name: shop\nmodels:\n  shop:\n    +materialized: view\n    marts:\n      +materialized: table\n      +contract: {enforced: true}\n      +tags: [marts]\n      finance:\n        tags: finance\n      legacy:\n        +contract: {enforced: false}\n    staging:\n      schema: stg\n",
        )
        .unwrap();
        assert_eq!(project.model_paths, ["models"]);
        let folders: Vec<_> = project
            .folders
            .iter()
            .map(|f| {
                (
                    f.folder.as_str(),
                    f.materialized.as_deref(),
                    f.contract,
                    f.tags.join(","),
                )
            })
            .collect();
        assert_eq!(
            folders,
            [
                ("", Some("view"), None, String::new()),
                ("marts", Some("table"), Some(true), "marts".into()),
                (
                    "marts/finance",
                    Some("table"),
                    Some(true),
                    "marts,finance".into()
                ),
                ("marts/legacy", Some("table"), Some(false), "marts".into()),
            ]
        );
        assert_eq!(
            project.defaults_for("marts/finance/x.sql").unwrap().folder,
            "marts/finance"
        );
        assert_eq!(
            project.defaults_for("marts/other/x.sql").unwrap().folder,
            "marts"
        );
        assert_eq!(project.defaults_for("staging/x.sql").unwrap().folder, "");
    }

    #[test]
    fn bad_yaml_is_an_error_with_its_location() {
        let err = DbtProject::parse("name: [unclosed\n").unwrap_err();
        assert!(err.to_string().contains("line"), "{err}");
    }
}
