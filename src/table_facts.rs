//! The plain data `sqb promote` reads of a destination table and its staged copy, and the
//! statements it runs: what the warehouse room's writer answers with and the `promote` room
//! plans from.

use crate::ident::quoted;

/// A relation's schema and name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Name {
    pub schema: String,
    pub name: String,
}

impl Name {
    pub fn new(schema: &str, name: &str) -> Self {
        Self {
            schema: schema.to_string(),
            name: name.to_string(),
        }
    }

    /// As SQL names it: both parts quoted.
    pub fn sql(&self) -> String {
        format!("{}.{}", quoted(&self.schema), quoted(&self.name))
    }

    /// As reports show it: `schema.name`.
    pub fn shown(&self) -> String {
        format!("{}.{}", self.schema, self.name)
    }
}

/// A column as the catalog has it.
#[derive(Debug, Clone, Default)]
pub struct Column {
    pub name: String,
    /// A stored generated column: computed by the engine, never copied.
    pub generated: bool,
    /// `GENERATED ALWAYS AS IDENTITY`: written only with `OVERRIDING SYSTEM VALUE`.
    pub identity_always: bool,
    pub not_null: bool,
}

/// A foreign key into the destination, from `from` (a plain or partitioned table).
#[derive(Debug, Clone)]
pub struct Reference {
    pub constraint: String,
    pub from: Name,
    pub columns: Vec<String>,
    /// The destination's columns it references, in the same order.
    pub to_columns: Vec<String>,
}

/// A trigger of the destination that fires on the copy unless disabled for it.
#[derive(Debug, Clone)]
pub struct Trigger {
    pub name: String,
    /// Postgres's `tgenabled`: `O` (origin), `A` (always) or `R` (replica).
    pub enabled: char,
}

/// A materialized view that reads the destination, directly or through views.
#[derive(Debug, Clone)]
pub struct Dependent {
    pub name: Name,
    /// Created `WITH NO DATA` and never refreshed: left so, and reported.
    pub populated: bool,
    /// How many views lie between it and the destination: refreshed in this order.
    pub depth: i32,
}

/// What the catalog says about one destination and its staged copy.
#[derive(Debug, Clone)]
pub struct Facts {
    pub dest: Name,
    pub staged: Name,
    /// The destination's kind as the catalog spells it (`table`, `view`, …); `None`: missing.
    pub kind: Option<String>,
    pub staged_kind: Option<String>,
    pub columns: Vec<Column>,
    pub staged_columns: Vec<Column>,
    /// The primary key's columns; empty without one.
    pub key: Vec<String>,
    pub triggers: Vec<Trigger>,
    pub references: Vec<Reference>,
    /// Each column a sequence feeds, with the sequence.
    pub sequences: Vec<(String, Name)>,
    pub dependents: Vec<Dependent>,
    /// For a destination that does not exist yet: the columns its contract declares
    /// `nullable = false`, made NOT NULL when it is created.
    pub not_null: Vec<String>,
}

/// A statement of the plan, about one relation, its parameters bound as text.
#[derive(Debug, Clone)]
pub struct Step {
    pub sql: String,
    pub params: Vec<String>,
    pub relation: Name,
}
