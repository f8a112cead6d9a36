//! What a consumer reads of its imports: per imported model and column, which of its models
//! read it and how. `sqb imports reads` writes it as a file (`format = "sqb.reads"`) the producer
//! vendors; `sqb imports diff` and `sqb publish --consumers` mark each change with its readers.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

pub const FORMAT: &str = "sqb.reads";
pub const FORMAT_VERSION: u32 = 1;

/// How one consumer model reads one imported column.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reading {
    /// The consumer model.
    pub model: String,
    /// Its output columns computed from the imported column.
    pub outputs: BTreeSet<String>,
    /// Where else it reads the column (`join_on`, `where`, `group_by`, ...).
    pub uses: BTreeSet<String>,
    /// It relies on the column being NOT NULL (a NOT NULL column of its own derives from it,
    /// or it joins on it).
    pub relies_not_null: bool,
}

/// One imported column and its readers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ColumnReads {
    pub column: String,
    pub readers: Vec<Reading>,
}

/// One imported model: the consumer models naming it, and what they read of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelReads {
    pub model: String,
    pub readers: BTreeSet<String>,
    pub columns: Vec<ColumnReads>,
}

/// One import.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImportReads {
    pub import: String,
    /// The producer project's name, as its snapshot says.
    pub producer: String,
    /// The content hash of the snapshot the reads were computed against.
    pub snapshot: String,
    pub models: Vec<ModelReads>,
}

/// The file `sqb imports reads --format json` writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadsFile {
    pub format: String,
    pub format_version: u32,
    /// The consumer project's name.
    pub consumer: String,
    pub imports: Vec<ImportReads>,
}

/// Why a reads file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ReadsError {
    #[error("not JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("not a reads file (its `format` is \"{0}\", expected \"{FORMAT}\")")]
    Foreign(String),
    #[error("reads format version {0} is newer than this sqb reads ({FORMAT_VERSION})")]
    TooNew(u32),
}

impl ReadsFile {
    pub fn parse(text: &str) -> Result<Self, ReadsError> {
        let head: serde_json::Value = serde_json::from_str(text)?;
        let format = head.get("format").and_then(|f| f.as_str()).unwrap_or("");
        if format != FORMAT {
            return Err(ReadsError::Foreign(format.to_string()));
        }
        let version = head.get("format_version").and_then(|v| v.as_u64());
        if let Some(v) = version.filter(|v| *v > u64::from(FORMAT_VERSION)) {
            return Err(ReadsError::TooNew(u32::try_from(v).unwrap_or(u32::MAX)));
        }
        Ok(serde_json::from_value(head)?)
    }

    /// Canonical JSON: sorted, two-space indented, with a final newline.
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }
}

/// What the compile collects while it analyses the models: `(import, model)` → readers, and
/// `(import, model, column)` → consumer model → reading.
#[derive(Debug, Default)]
pub struct ReadSet {
    pub models: BTreeMap<(String, String), BTreeSet<String>>,
    pub columns: BTreeMap<(String, String, String), BTreeMap<String, Reading>>,
}

impl ReadSet {
    pub fn merge(&mut self, other: ReadSet) {
        for (k, v) in other.models {
            self.models.entry(k).or_default().extend(v);
        }
        for (k, v) in other.columns {
            self.columns.entry(k).or_default().extend(v);
        }
    }

    /// The readers of one column.
    pub fn readers(&self, import: &str, model: &str, column: &str) -> Vec<&Reading> {
        let key = (import.to_string(), model.to_string(), column.to_string());
        self.columns
            .get(&key)
            .map(|r| r.values().collect())
            .unwrap_or_default()
    }

    /// The consumer models naming one imported model.
    pub fn model_readers(&self, import: &str, model: &str) -> Vec<&str> {
        self.models
            .get(&(import.to_string(), model.to_string()))
            .map(|r| r.iter().map(String::as_str).collect())
            .unwrap_or_default()
    }

    /// One import's reads, as the file holds them.
    pub fn of_import(&self, import: &str, producer: &str, snapshot: &str) -> ImportReads {
        let models = self
            .models
            .iter()
            .filter(|((i, _), _)| i == import)
            .map(|((_, model), readers)| ModelReads {
                model: model.clone(),
                readers: readers.clone(),
                columns: self
                    .columns
                    .iter()
                    .filter(|((i, m, _), _)| i == import && m == model)
                    .map(|((_, _, column), readers)| ColumnReads {
                        column: column.clone(),
                        readers: readers.values().cloned().collect(),
                    })
                    .collect(),
            })
            .collect();
        ImportReads {
            import: import.to_string(),
            producer: producer.to_string(),
            snapshot: snapshot.to_string(),
            models,
        }
    }
}

impl ImportReads {
    /// The readers of one column of one model.
    pub fn readers(&self, model: &str, column: &str) -> &[Reading] {
        self.models
            .iter()
            .find(|m| m.model == model)
            .and_then(|m| m.columns.iter().find(|c| c.column == column))
            .map_or(&[], |c| c.readers.as_slice())
    }

    pub fn model_readers(&self, model: &str) -> Vec<&str> {
        self.models
            .iter()
            .find(|m| m.model == model)
            .map(|m| m.readers.iter().map(String::as_str).collect())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reads_file_round_trips_and_foreign_files_are_refused() {
        let mut set = ReadSet::default();
        set.models
            .entry(("shop".into(), "fct_orders".into()))
            .or_default()
            .insert("report".into());
        set.columns
            .entry(("shop".into(), "fct_orders".into(), "amount".into()))
            .or_default()
            .insert(
                "report".into(),
                Reading {
                    model: "report".into(),
                    outputs: ["total".to_string()].into(),
                    uses: ["where".to_string()].into(),
                    relies_not_null: true,
                },
            );
        let file = ReadsFile {
            format: FORMAT.into(),
            format_version: FORMAT_VERSION,
            consumer: "reports".into(),
            imports: vec![set.of_import("shop", "shop", "abc")],
        };
        let back = ReadsFile::parse(&file.to_json()).unwrap();
        assert_eq!(back, file);
        assert_eq!(back.imports[0].readers("fct_orders", "amount").len(), 1);
        assert!(matches!(
            ReadsFile::parse("{\"format\": \"sqb.snapshot\"}"),
            Err(ReadsError::Foreign(_))
        ));
        assert!(matches!(
            ReadsFile::parse("{\"format\": \"sqb.reads\", \"format_version\": 9}"),
            Err(ReadsError::TooNew(9))
        ));
        assert!(ReadsFile::parse("[").is_err());
    }
}
