//! The published snapshot: what `sqb publish` writes and a consumer's `[imports]` read.
//!
//! Canonical JSON (docs/imports.md): a header and the public models, sorted by name, each with
//! its relation, contract policy, a shape hash and its columns in declared order. The same
//! project gives the same bytes on every run and OS. `content_hash` is the SHA-256 of the
//! models part (its compact JSON), checked again on every load, so a hand-edited or truncated
//! file is refused rather than half-read.

use serde::{Deserialize, Serialize};
use serde_json::ser::{CharEscape, CompactFormatter, Formatter};
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
    hex(&Sha256::digest(bytes))
}

fn hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// The hash of a model's columns.
pub fn shape_hash(columns: &[PublishedColumn]) -> String {
    sha256_hex(&serde_json::to_vec(columns).expect("columns serialize"))
}

/// The SHA-256 of the models array's compact JSON, its elements serialized on every core.
fn content_hash(models: &[PublishedModel]) -> String {
    let compact = crate::parallel::map(models, |m| {
        serde_json::to_vec(m).expect("a model serializes")
    });
    let mut content = Sha256::new();
    content.update(b"[");
    for (i, bytes) in compact.iter().enumerate() {
        if i > 0 {
            content.update(b",");
        }
        content.update(bytes);
    }
    content.update(b"]");
    hex(&content.finalize())
}

impl Snapshot {
    /// A snapshot of `models`, sorted by name, with its hashes.
    pub fn new(project: String, models: Vec<PublishedModel>) -> Self {
        Self::with_bytes(project, models).0
    }

    /// The snapshot and its canonical bytes (`to_bytes`), made together: each model is
    /// rendered once, on every core, and both its hashes come from that rendering.
    pub fn with_bytes(project: String, mut models: Vec<PublishedModel>) -> (Self, Vec<u8>) {
        models.sort_by(|a, b| a.name.cmp(&b.name));
        let rendered = crate::parallel::map(&models, render);
        let mut content = Sha256::new();
        content.update(b"[");
        let mut elements = Vec::with_capacity(rendered.len());
        for (i, (m, r)) in models.iter_mut().zip(rendered).enumerate() {
            if i > 0 {
                content.update(b",");
            }
            content.update(&r.compact);
            m.shape_hash = r.shape;
            elements.push(r.element);
        }
        content.update(b"]");
        let snapshot = Snapshot {
            format: FORMAT.to_string(),
            format_version: FORMAT_VERSION,
            min_reader_version: READER_VERSION,
            project,
            content_hash: hex(&content.finalize()),
            models,
        };
        let bytes = snapshot.assemble(&elements);
        (snapshot, bytes)
    }

    /// The canonical bytes: pretty JSON, two-space indents, a final newline, exactly as
    /// `serde_json::to_vec_pretty` writes it (the models rendered on every core).
    pub fn to_bytes(&self) -> Vec<u8> {
        let elements = crate::parallel::map(&self.models, |m| {
            let mut out = Vec::with_capacity(256 + 256 * m.columns.len());
            out.extend_from_slice(ELEMENT_INDENT);
            pretty(&mut out, 2, m);
            out
        });
        self.assemble(&elements)
    }

    /// The whole file around its models' rendered elements.
    fn assemble(&self, elements: &[Vec<u8>]) -> Vec<u8> {
        if elements.is_empty() {
            let mut out = serde_json::to_vec_pretty(self).expect("a snapshot serializes");
            out.push(b'\n');
            return out;
        }
        let text = |s: &str| serde_json::to_string(s).expect("a string serializes");
        let mut out = Vec::with_capacity(elements.iter().map(|r| r.len() + 2).sum::<usize>() + 512);
        out.extend_from_slice(
            format!(
                "{{\n  \"format\": {},\n  \"format_version\": {},\n  \"min_reader_version\": {},\n  \"project\": {},\n  \"content_hash\": {},\n  \"models\": [\n",
                text(&self.format),
                self.format_version,
                self.min_reader_version,
                text(&self.project),
                text(&self.content_hash)
            )
            .as_bytes(),
        );
        for (i, element) in elements.iter().enumerate() {
            if i > 0 {
                out.extend_from_slice(b",\n");
            }
            out.extend_from_slice(element);
        }
        out.extend_from_slice(b"\n  ]\n}\n");
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

/// A published model's fields before its columns, in their order.
#[derive(Serialize)]
struct Head<'a> {
    name: &'a str,
    relation: &'a Relation,
    contract: &'a str,
    shape_hash: &'a str,
}

/// Appends `value` as pretty JSON, `depth` levels deep, to `out`; returns its compact JSON.
fn pretty(out: &mut Vec<u8>, depth: usize, value: &impl Serialize) -> Vec<u8> {
    let mut compact = Vec::with_capacity(out.capacity() / 2);
    let nested = Nested {
        depth,
        has_value: false,
        compact: &mut compact,
    };
    let mut serializer = serde_json::Serializer::with_formatter(out, nested);
    value
        .serialize(&mut serializer)
        .expect("a snapshot serializes");
    compact
}

/// One model rendered once: its shape hash (over its columns' compact JSON), its pretty JSON as
/// an element of the `models` array, and its compact JSON (for the content hash).
struct Rendered {
    shape: String,
    element: Vec<u8>,
    compact: Vec<u8>,
}

fn render(m: &PublishedModel) -> Rendered {
    let mut columns = Vec::with_capacity(64 + 256 * m.columns.len());
    let columns_compact = pretty(&mut columns, 3, &m.columns);
    let shape = sha256_hex(&columns_compact);
    let head = Head {
        name: &m.name,
        relation: &m.relation,
        contract: &m.contract,
        shape_hash: &shape,
    };
    let mut element = Vec::with_capacity(columns.len() + 512);
    element.extend_from_slice(ELEMENT_INDENT);
    let mut compact = pretty(&mut element, 2, &head);
    // Both end with the head's closing brace; the columns go before it.
    let close = b"\n    }";
    element.truncate(element.len() - close.len());
    element.extend_from_slice(b",\n      \"columns\": ");
    element.extend_from_slice(&columns);
    element.extend_from_slice(close);
    compact.pop();
    compact.extend_from_slice(b",\"columns\":");
    compact.extend_from_slice(&columns_compact);
    compact.push(b'}');
    Rendered {
        shape,
        element,
        compact,
    }
}

/// A model's indent as an element of the snapshot's `models` array.
const ELEMENT_INDENT: &[u8] = b"    ";

/// serde_json's pretty formatting (two-space indents), started `depth` levels deep: a model
/// renders alone exactly as it does inside the snapshot. It writes the same value's compact
/// JSON (as `serde_json::to_vec`) to `compact` at the same time, for the hashes.
struct Nested<'a> {
    depth: usize,
    has_value: bool,
    compact: &'a mut Vec<u8>,
}

type Io = std::io::Result<()>;

impl Nested<'_> {
    fn open<W: ?Sized + std::io::Write>(&mut self, w: &mut W, bracket: &[u8]) -> Io {
        self.depth += 1;
        self.has_value = false;
        self.compact.extend_from_slice(bracket);
        w.write_all(bracket)
    }

    fn item<W: ?Sized + std::io::Write>(&mut self, w: &mut W, first: bool) -> Io {
        if !first {
            self.compact.push(b',');
        }
        w.write_all(if first { b"\n" } else { b",\n" })?;
        self.indent(w)
    }

    fn indent<W: ?Sized + std::io::Write>(&self, w: &mut W) -> Io {
        for _ in 0..self.depth {
            w.write_all(b"  ")?;
        }
        Ok(())
    }

    fn close<W: ?Sized + std::io::Write>(&mut self, w: &mut W, bracket: &[u8]) -> Io {
        self.depth -= 1;
        if self.has_value {
            w.write_all(b"\n")?;
            self.indent(w)?;
        }
        self.compact.extend_from_slice(bracket);
        w.write_all(bracket)
    }
}

/// A scalar's bytes are the same in both forms: written as serde_json's compact formatter
/// writes them, then copied.
macro_rules! both {
    ($($name:ident($ty:ty)),* $(,)?) => {
        $(fn $name<W: ?Sized + std::io::Write>(&mut self, w: &mut W, value: $ty) -> Io {
            let start = self.compact.len();
            CompactFormatter.$name(self.compact, value)?;
            w.write_all(&self.compact[start..])
        })*
    };
}

impl Formatter for Nested<'_> {
    both!(
        write_bool(bool),
        write_i8(i8),
        write_i16(i16),
        write_i32(i32),
        write_i64(i64),
        write_i128(i128),
        write_u8(u8),
        write_u16(u16),
        write_u32(u32),
        write_u64(u64),
        write_u128(u128),
        write_f32(f32),
        write_f64(f64),
        write_number_str(&str),
        write_string_fragment(&str),
        write_raw_fragment(&str),
        write_char_escape(CharEscape),
    );

    fn write_null<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> Io {
        self.compact.extend_from_slice(b"null");
        w.write_all(b"null")
    }

    fn begin_string<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> Io {
        self.compact.push(b'"');
        w.write_all(b"\"")
    }

    fn end_string<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> Io {
        self.compact.push(b'"');
        w.write_all(b"\"")
    }

    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> Io {
        self.open(w, b"[")
    }

    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> Io {
        self.close(w, b"]")
    }

    fn begin_array_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W, first: bool) -> Io {
        self.item(w, first)
    }

    fn end_array_value<W: ?Sized + std::io::Write>(&mut self, _: &mut W) -> Io {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> Io {
        self.open(w, b"{")
    }

    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> Io {
        self.close(w, b"}")
    }

    fn begin_object_key<W: ?Sized + std::io::Write>(&mut self, w: &mut W, first: bool) -> Io {
        self.item(w, first)
    }

    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> Io {
        self.compact.push(b':');
        w.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + std::io::Write>(&mut self, _: &mut W) -> Io {
        self.has_value = true;
        Ok(())
    }
}

/// A file, line and column, the file relative to the project root.
pub type At = (String, usize, usize);

/// A snapshot, and where its models and columns are declared in the producer's project.
pub struct Published {
    pub snapshot: Snapshot,
    /// Its canonical bytes (`Snapshot::to_bytes`).
    pub bytes: Vec<u8>,
    /// By model, then column (`None`: the model itself); empty unless asked for.
    pub locations: std::collections::HashMap<(String, Option<String>), At>,
}

impl Published {
    /// Where the column (else its model) is declared; `None` for what the project no longer
    /// has (a removed model) or when locations were not asked for.
    pub fn at(&self, model: &str, column: Option<&str>) -> Option<&At> {
        let key = |c: Option<&str>| (model.to_string(), c.map(str::to_string));
        column
            .and_then(|c| self.locations.get(&key(Some(c))))
            .or_else(|| self.locations.get(&key(None)))
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
    fn renders_as_serde_json_does() {
        let mut odd = model("b\"\n\u{e9}");
        odd.columns[0].enum_members = Some(vec!["x".into(), "y\ny".into()]);
        odd.columns.push(column("two words \\\" \\ end"));
        let mut empty = model("c");
        empty.columns.clear();
        for models in [vec![], vec![model("a")], vec![model("a"), odd, empty]] {
            let (snapshot, bytes) = Snapshot::with_bytes("p \"q\"".into(), models);
            let mut expected = serde_json::to_vec_pretty(&snapshot).unwrap();
            expected.push(b'\n');
            let expected = String::from_utf8(expected).unwrap();
            assert_eq!(String::from_utf8(bytes).unwrap(), expected);
            assert_eq!(String::from_utf8(snapshot.to_bytes()).unwrap(), expected);
            let compact = serde_json::to_vec(&snapshot.models).unwrap();
            assert_eq!(snapshot.content_hash, sha256_hex(&compact));
            for m in &snapshot.models {
                assert_eq!(m.shape_hash, shape_hash(&m.columns));
            }
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
