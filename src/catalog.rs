//! The plain data a warehouse's catalog answers with: namespaces, relations and their columns.
//!
//! A leaf module: the warehouse room produces these, the contract room compares them with the
//! declarations; neither needs the other to read them.

use serde::Serialize;

/// A database and schema whose relations are read together.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Namespace {
    /// DuckDB catalog or Postgres database; `None` means the connection's own.
    pub database: Option<String>,
    pub schema: String,
}

/// What kind of relation the catalog holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RelationKind {
    Table,
    PartitionedTable,
    View,
    MaterializedView,
    ForeignTable,
    /// A model's SQL as the engine describes it without running it (`contract check`).
    Query,
}

impl RelationKind {
    /// Whether the catalog knows column nullability (tables do, views do not).
    pub fn knows_nullability(self) -> bool {
        matches!(
            self,
            RelationKind::Table | RelationKind::PartitionedTable | RelationKind::ForeignTable
        )
    }

    pub fn as_str(self) -> &'static str {
        match self {
            RelationKind::Table => "table",
            RelationKind::PartitionedTable => "partitioned table",
            RelationKind::View => "view",
            RelationKind::MaterializedView => "materialized view",
            RelationKind::ForeignTable => "foreign table",
            RelationKind::Query => "query",
        }
    }
}

/// A column's type as the engine spells it, kept once for the whole process: a catalog of
/// hundreds of thousands of columns spells their types a few dozen ways, and a copy of a
/// `TypeText` is a pointer copy, where a shared string's reference count cost two atomic
/// operations a column (most of placing 250,000 columns after the read). The distinct spellings
/// a process ever reads are few (a long-lived `sqb serve` reads the same ones again), so they
/// are never freed.
#[derive(Clone, Copy)]
pub struct TypeText(&'static str);

impl TypeText {
    /// No type: what a column holds until its type is known.
    pub const EMPTY: TypeText = TypeText("");

    /// `text`'s one copy for the process.
    pub fn new(text: &str) -> Self {
        type Spellings = std::sync::Mutex<foldhash::HashSet<&'static str>>;
        static SPELLINGS: std::sync::OnceLock<Spellings> = std::sync::OnceLock::new();
        let spellings = SPELLINGS.get_or_init(Default::default);
        // A poisoned lock only means another thread panicked while inserting: the set is whole.
        let mut spellings = spellings.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(&kept) = spellings.get(text) {
            return Self(kept);
        }
        let kept: &'static str = Box::leak(text.into());
        spellings.insert(kept);
        Self(kept)
    }

    pub fn as_str(&self) -> &'static str {
        self.0
    }
}

impl std::ops::Deref for TypeText {
    type Target = str;

    fn deref(&self) -> &str {
        self.0
    }
}

impl AsRef<str> for TypeText {
    fn as_ref(&self) -> &str {
        self.0
    }
}

impl PartialEq for TypeText {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl Eq for TypeText {}

impl std::fmt::Debug for TypeText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.0, f)
    }
}

impl std::fmt::Display for TypeText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl From<&str> for TypeText {
    fn from(text: &str) -> Self {
        Self::new(text)
    }
}

impl From<String> for TypeText {
    fn from(text: String) -> Self {
        Self::new(&text)
    }
}

/// A column as the catalog reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct PhysicalColumn {
    /// Exactly as stored: case, spaces, quotes and unicode kept.
    pub name: String,
    /// The full type text as the engine formats it (`character varying(255)`, `INTEGER[]`).
    pub type_text: TypeText,
    /// `Some(false)` for NOT NULL; `None` where the catalog does not know (views).
    pub nullable: Option<bool>,
    /// What the catalog says of a user-defined type; boxed, as most columns have none and a
    /// large diff holds hundreds of thousands of columns.
    pub user_type: Option<Box<UserType>>,
    /// The engine gave the type without its length, precision or scale, which it did not know
    /// (Postgres describing a computed column): sizes are not compared.
    pub size_unknown: bool,
}

/// The catalog's facts about a column's user-defined type (Postgres).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UserType {
    /// Members of a Postgres enum type (or of an array's enum element type).
    pub enum_members: Option<Vec<String>>,
    /// The base type of a Postgres domain.
    pub domain_base: Option<String>,
    /// The schema of a user-defined type (or of an array's element type), where the engine
    /// prints the type unqualified because it is on the search path.
    pub schema: Option<String>,
}

impl PhysicalColumn {
    /// A column of a built-in type.
    pub fn new(name: String, type_text: impl AsRef<str>, nullable: Option<bool>) -> Self {
        Self {
            name,
            type_text: TypeText::new(type_text.as_ref()),
            nullable,
            user_type: None,
            size_unknown: false,
        }
    }

    pub fn enum_members(&self) -> Option<&[String]> {
        self.user_type.as_ref()?.enum_members.as_deref()
    }

    pub fn domain_base(&self) -> Option<&str> {
        self.user_type.as_ref()?.domain_base.as_deref()
    }

    pub fn type_schema(&self) -> Option<&str> {
        self.user_type.as_ref()?.schema.as_deref()
    }
}

/// Why the engine would not describe a query: its message, and where in the query it points
/// (a byte offset), when it says.
#[derive(Debug, Clone, PartialEq)]
pub struct Rejected {
    pub message: String,
    pub offset: Option<usize>,
}

/// A query's result columns as the engine describes them, or why it would not.
pub type Described = Result<Vec<PhysicalColumn>, Rejected>;

/// A relation as the catalog reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct PhysicalRelation {
    pub name: String,
    pub kind: RelationKind,
    pub columns: Vec<PhysicalColumn>,
    /// Set when the relation exists but its columns could not be read.
    pub unavailable: Option<String>,
}

/// One schema of a warehouse's survey: its name and its relations' names, sorted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaListing {
    pub schema: String,
    pub relations: Vec<String>,
}

/// Groups `(schema, relation)` rows, a `None` relation marking an empty schema, into listings
/// sorted by schema and relation.
pub fn listings(rows: impl IntoIterator<Item = (String, Option<String>)>) -> Vec<SchemaListing> {
    let mut grouped: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for (schema, relation) in rows {
        let names = grouped.entry(schema).or_default();
        names.extend(relation);
    }
    grouped
        .into_iter()
        .map(|(schema, mut relations)| {
            relations.sort();
            relations.dedup();
            SchemaListing { schema, relations }
        })
        .collect()
}

/// Relation names to read, per namespace.
pub type Request = Vec<(Namespace, Vec<String>)>;

/// What the warehouse answered to a [`Request`].
pub struct Answer {
    pub relations: Vec<(Namespace, Vec<PhysicalRelation>)>,
    /// When the session was asked to survey: every user schema of the connection's database
    /// with its relations' names.
    pub schemas: Vec<SchemaListing>,
    /// With the survey: the relations of the adopted schemas the request did not name, by
    /// schema.
    pub unrequested: Vec<(String, Vec<PhysicalRelation>)>,
    pub default_database: String,
}

/// Gives back the spare capacity of the last relation's columns, once they are all read: a large
/// namespace would otherwise keep about a fifth of its columns' memory unused.
pub fn shrink_last(relations: &mut [PhysicalRelation]) {
    if let Some(last) = relations.last_mut() {
        last.columns.shrink_to_fit();
    }
}

/// Catalog rows held compactly while they are read: every relation name, column name and type
/// text in one buffer, about 30 bytes a column where the relations take about 90. A reader fills
/// it while the engine still holds the query's working memory and its result, and makes the
/// relations only once those are freed, so that both are never held at once.
#[derive(Debug, Default)]
pub struct RowBuffer {
    text: String,
    relations: Vec<BufferedRelation>,
    columns: Vec<BufferedColumn>,
}

#[derive(Debug)]
struct BufferedRelation {
    name: (u32, u32),
    kind: RelationKind,
    /// The index of its first column in `columns`.
    first: u32,
}

/// A column's name is `text[start..middle]`, its type `text[middle..end]`.
#[derive(Debug)]
struct BufferedColumn {
    start: u32,
    middle: u32,
    end: u32,
    nullable: Option<bool>,
}

/// The rows do not fit the buffer's 32-bit offsets (4 GiB of names and types).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooManyRows;

impl RowBuffer {
    /// Starts a relation: the columns pushed after it are its own.
    pub fn start_relation(&mut self, name: &str, kind: RelationKind) -> Result<(), TooManyRows> {
        let first = offset(self.columns.len())?;
        let name = self.append(name)?;
        self.relations.push(BufferedRelation { name, kind, first });
        Ok(())
    }

    /// Adds a column to the relation started last (a column before any relation is dropped).
    pub fn push_column(
        &mut self,
        name: &str,
        type_text: &str,
        nullable: Option<bool>,
    ) -> Result<(), TooManyRows> {
        let (start, middle) = self.append(name)?;
        let (_, end) = self.append(type_text)?;
        offset(self.columns.len() + 1)?;
        self.columns.push(BufferedColumn {
            start,
            middle,
            end,
            nullable,
        });
        Ok(())
    }

    fn append(&mut self, text: &str) -> Result<(u32, u32), TooManyRows> {
        let start = offset(self.text.len())?;
        let end = offset(self.text.len() + text.len())?;
        self.text.push_str(text);
        Ok((start, end))
    }

    /// The relations, in the order they were started, each column's strings sized exactly.
    pub fn into_relations(self) -> Vec<PhysicalRelation> {
        let text = |from: u32, to: u32| self.text[from as usize..to as usize].to_string();
        // A few distinct type texts spell hundreds of thousands of columns: each is looked up
        // in the process's spellings once.
        let mut types: foldhash::HashMap<&str, TypeText> = Default::default();
        let mut type_text = |from: u32, to: u32| {
            let text = &self.text[from as usize..to as usize];
            *types.entry(text).or_insert_with(|| TypeText::new(text))
        };
        let ends = self
            .relations
            .iter()
            .skip(1)
            .map(|r| r.first as usize)
            .chain([self.columns.len()]);
        self.relations
            .iter()
            .zip(ends)
            .map(|(relation, end)| PhysicalRelation {
                name: text(relation.name.0, relation.name.1),
                kind: relation.kind,
                columns: self.columns[relation.first as usize..end]
                    .iter()
                    .map(|c| {
                        PhysicalColumn::new(
                            text(c.start, c.middle),
                            type_text(c.middle, c.end),
                            c.nullable,
                        )
                    })
                    .collect(),
                unavailable: None,
            })
            .collect()
    }
}

fn offset(n: usize) -> Result<u32, TooManyRows> {
    u32::try_from(n).map_err(|_| TooManyRows)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One copy of each spelling for the process, from any thread: equal texts are one
    /// pointer (what the type comparison's memo keys on), different texts never.
    #[test]
    fn a_type_text_is_one_copy_of_its_spelling() {
        let a = TypeText::new("numeric(12,2)");
        let b = std::thread::spawn(|| TypeText::from(String::from("numeric(12,2)")))
            .join()
            .unwrap();
        assert!(std::ptr::eq(a.as_str(), b.as_str()));
        assert_eq!(a, b);
        let c = TypeText::new("numeric(12,3)");
        assert_ne!(a, c);
        assert!(!std::ptr::eq(a.as_str(), c.as_str()));
        assert_eq!(format!("{a} {a:?}"), "numeric(12,2) \"numeric(12,2)\"");
        assert_eq!(&*TypeText::EMPTY, "");
    }

    /// Relations come back in order with their own columns, names and types split exactly,
    /// including empty strings, a relation without columns and unicode.
    #[test]
    fn a_row_buffer_gives_back_what_was_pushed() {
        let mut buffer = RowBuffer::default();
        buffer.push_column("orphan", "INTEGER", None).unwrap();
        buffer.start_relation("t", RelationKind::Table).unwrap();
        buffer.push_column("id", "BIGINT", Some(false)).unwrap();
        buffer.push_column("", "VARCHAR", Some(true)).unwrap();
        buffer.start_relation("empty", RelationKind::View).unwrap();
        buffer.start_relation("vü", RelationKind::View).unwrap();
        buffer.push_column("ä \"q\"", "", None).unwrap();

        let relations = buffer.into_relations();

        type Shown = (String, String, Option<bool>);
        let shown: Vec<(String, RelationKind, Vec<Shown>)> = relations
            .into_iter()
            .map(|r| {
                let columns = r
                    .columns
                    .into_iter()
                    .map(|c| (c.name, c.type_text.to_string(), c.nullable));
                (r.name, r.kind, columns.collect())
            })
            .collect();
        let column = |n: &str, t: &str, null| (n.to_string(), t.to_string(), null);
        assert_eq!(
            shown,
            vec![
                (
                    "t".to_string(),
                    RelationKind::Table,
                    vec![
                        column("id", "BIGINT", Some(false)),
                        column("", "VARCHAR", Some(true))
                    ]
                ),
                ("empty".to_string(), RelationKind::View, vec![]),
                (
                    "vü".to_string(),
                    RelationKind::View,
                    vec![column("ä \"q\"", "", None)]
                ),
            ]
        );
    }
}
