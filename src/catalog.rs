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
        }
    }
}

/// A column as the catalog reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct PhysicalColumn {
    /// Exactly as stored: case, spaces, quotes and unicode kept.
    pub name: String,
    /// The full type text as the engine formats it (`character varying(255)`, `INTEGER[]`).
    pub type_text: String,
    /// `Some(false)` for NOT NULL; `None` where the catalog does not know (views).
    pub nullable: Option<bool>,
    /// What the catalog says of a user-defined type; boxed, as most columns have none and a
    /// large diff holds hundreds of thousands of columns.
    pub user_type: Option<Box<UserType>>,
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
    pub fn new(name: String, type_text: String, nullable: Option<bool>) -> Self {
        Self {
            name,
            type_text,
            nullable,
            user_type: None,
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

/// A relation as the catalog reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct PhysicalRelation {
    pub name: String,
    pub kind: RelationKind,
    pub columns: Vec<PhysicalColumn>,
    /// Set when the relation exists but its columns could not be read.
    pub unavailable: Option<String>,
}

/// Relation names to read, per namespace.
pub type Request = Vec<(Namespace, Vec<String>)>;

/// What the warehouse answered to a [`Request`].
pub struct Answer {
    pub relations: Vec<(Namespace, Vec<PhysicalRelation>)>,
    pub default_database: String,
}

/// Gives back the spare capacity of the last relation's columns, once they are all read: a large
/// namespace would otherwise keep about a fifth of its columns' memory unused.
pub fn shrink_last(relations: &mut [PhysicalRelation]) {
    if let Some(last) = relations.last_mut() {
        last.columns.shrink_to_fit();
    }
}
