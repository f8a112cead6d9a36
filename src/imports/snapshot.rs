//! The published snapshot: what `sqb publish` writes and a consumer's `[imports]` read.
//!
//! Canonical JSON (docs/imports.md): a header and the public models, sorted by name, each with
//! its relation, contract policy, a shape hash and its columns in declared order. The same
//! project gives the same bytes on every run and OS. `content_hash` is the SHA-256 of the
//! models part (its compact JSON), checked again on every load, so a hand-edited or truncated
//! file is refused rather than half-read.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The `format` every snapshot names.
pub const FORMAT: &str = "sqb.snapshot";
/// The format this sqb writes.
pub const FORMAT_VERSION: u32 = 1;
/// The newest `min_reader_version` this sqb can read.
pub const READER_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Snapshot {
    pub format: String,
    pub format_version: u32,
    pub min_reader_version: u32,
    /// The producer project's name.
    pub project: String,
    pub content_hash: String,
    pub models: Vec<PublishedModel>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublishedModel {
    pub name: String,
    pub relation: Relation,
    /// The contract policy in force: `enforced`, `implicit`, `explicit` or `none`.
    pub contract: String,
    /// The SHA-256 of the model's columns (their compact JSON).
    pub shape_hash: String,
    pub columns: Vec<PublishedColumn>,
}

/// Where the model lives under the published target, identifiers exactly as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Relation {
    pub engine: String,
    /// The target's database (catalog), when it names one; else the connection's own.
    pub database: Option<String>,
    pub schema: String,
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublishedColumn {
    pub name: String,
    /// The type as declared (or as proven or read, when undeclared).
    #[serde(rename = "type")]
    pub ty: String,
    /// The same type in sqb's canonical spelling.
    pub canonical_type: String,
    pub nullable: bool,
    /// The enum's member values, for a column typed with an enum.
    pub enum_members: Option<Vec<String>>,
    /// Why the column is deprecated, if it is.
    pub deprecated: Option<String>,
    /// The date (YYYY-MM-DD) after which readers must not rely on it.
    pub deprecation_date: Option<String>,
}

/// The SHA-256 of some bytes, in hex.
pub fn digest(bytes: &[u8]) -> String {
    sha256_hex(bytes)
}

fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// The hash of a model's columns.
pub fn shape_hash(columns: &[PublishedColumn]) -> String {
    sha256_hex(&serde_json::to_vec(columns).expect("columns serialize"))
}

fn content_hash(models: &[PublishedModel]) -> String {
    sha256_hex(&serde_json::to_vec(models).expect("models serialize"))
}

impl Snapshot {
    /// A snapshot of `models`, sorted by name, with its hashes.
    pub fn new(project: String, mut models: Vec<PublishedModel>) -> Self {
        models.sort_by(|a, b| a.name.cmp(&b.name));
        for m in &mut models {
            m.shape_hash = shape_hash(&m.columns);
        }
        Snapshot {
            format: FORMAT.to_string(),
            format_version: FORMAT_VERSION,
            min_reader_version: READER_VERSION,
            project,
            content_hash: content_hash(&models),
            models,
        }
    }

    /// The canonical bytes: pretty JSON, two-space indents, a final newline.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = serde_json::to_vec_pretty(self).expect("a snapshot serializes");
        out.push(b'\n');
        out
    }

    /// The model named `name` (models are sorted by name: `new` and `parse` see to it).
    pub fn model(&self, name: &str) -> Option<&PublishedModel> {
        self.models
            .binary_search_by(|m| m.name.as_str().cmp(name))
            .ok()
            .map(|i| &self.models[i])
    }
}

/// Why a file is not a snapshot this sqb can read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SnapshotError {
    #[error("not a snapshot: {0}")]
    NotASnapshot(String),
    #[error("needs sqb snapshot reader version {needed}; this sqb reads up to {READER_VERSION}")]
    TooNew { needed: u32 },
    #[error("its content_hash does not match its content (edited or truncated)")]
    HashMismatch,
}

/// A snapshot's header fields; every other field is skipped unparsed.
#[derive(Deserialize)]
struct HeaderFields {
    format: Option<String>,
    min_reader_version: Option<u64>,
}

/// Reads and verifies a snapshot: its format, its reader version, then its content hash.
pub fn parse(bytes: &[u8]) -> Result<Snapshot, SnapshotError> {
    // The header is read before the rest: a newer format may have other fields.
    let head: HeaderFields = serde_json::from_slice(bytes)
        .map_err(|e| SnapshotError::NotASnapshot(format!("invalid JSON: {e}")))?;
    if head.format.as_deref() != Some(FORMAT) {
        return Err(SnapshotError::NotASnapshot(format!(
            "it has no `format = \"{FORMAT}\"`"
        )));
    }
    let needed = head
        .min_reader_version
        .ok_or_else(|| SnapshotError::NotASnapshot("no `min_reader_version`".into()))?;
    if needed > u64::from(READER_VERSION) {
        return Err(SnapshotError::TooNew {
            needed: u32::try_from(needed).unwrap_or(u32::MAX),
        });
    }
    let mut snapshot: Snapshot =
        serde_json::from_slice(bytes).map_err(|e| SnapshotError::NotASnapshot(e.to_string()))?;
    if snapshot.content_hash != content_hash(&snapshot.models) {
        return Err(SnapshotError::HashMismatch);
    }
    // `publish` writes them sorted; a file written otherwise is looked up the same way.
    snapshot.models.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(snapshot)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column(name: &str) -> PublishedColumn {
        PublishedColumn {
            name: name.into(),
            ty: "INTEGER".into(),
            canonical_type: "INTEGER".into(),
            nullable: false,
            enum_members: None,
            deprecated: None,
            deprecation_date: None,
        }
    }

    fn model(name: &str) -> PublishedModel {
        PublishedModel {
            name: name.into(),
            relation: Relation {
                engine: "duckdb".into(),
                database: None,
                schema: "analytics".into(),
                name: name.into(),
            },
            contract: "enforced".into(),
            shape_hash: String::new(),
            columns: vec![column("id")],
        }
    }

    #[test]
    fn round_trips_and_is_order_independent() {
        let a = Snapshot::new("p".into(), vec![model("b"), model("a")]);
        let b = Snapshot::new("p".into(), vec![model("a"), model("b")]);
        assert_eq!(a.to_bytes(), b.to_bytes());
        assert_eq!(parse(&a.to_bytes()).unwrap(), a);
    }

    #[test]
    fn refuses_what_it_cannot_trust() {
        let snapshot = Snapshot::new("p".into(), vec![model("a")]);
        let text = String::from_utf8(snapshot.to_bytes()).unwrap();
        let edited = text.replace("\"INTEGER\"", "\"BIGINT\"");
        assert_eq!(parse(edited.as_bytes()), Err(SnapshotError::HashMismatch));
        let newer = text.replace("\"min_reader_version\": 1", "\"min_reader_version\": 9");
        assert_eq!(
            parse(newer.as_bytes()),
            Err(SnapshotError::TooNew { needed: 9 })
        );
        assert!(matches!(
            parse(b"{\"a\": 1}"),
            Err(SnapshotError::NotASnapshot(_))
        ));
        assert!(matches!(
            parse(&text.as_bytes()[..text.len() / 2]),
            Err(SnapshotError::NotASnapshot(_))
        ));
    }
}
