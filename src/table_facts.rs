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

/// A foreign key of the destination into `to` (another table, or itself).
#[derive(Debug, Clone)]
pub struct Parent {
    pub constraint: String,
    pub to: Name,
    /// The destination's columns, in key order.
    pub columns: Vec<String>,
    /// The columns of `to` they reference, in the same order.
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
    /// What this session may do to it: refreshing it takes its owner's rights.
    pub rights: Rights,
}

/// What this session may do to a relation, as the catalog says: Postgres's table privileges,
/// and whether it holds the rights of the relation's owner (a member of the owning role that
/// inherits them). DuckDB has neither: everything is allowed ([`Rights::all`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rights {
    pub owner: String,
    pub owns: bool,
    pub select: bool,
    pub insert: bool,
    pub update: bool,
    pub delete: bool,
    pub truncate: bool,
}

impl Rights {
    /// Every right: an engine without privileges, or a relation that does not exist yet.
    pub fn all() -> Rights {
        Rights {
            owner: String::new(),
            owns: true,
            select: true,
            insert: true,
            update: true,
            delete: true,
            truncate: true,
        }
    }
}

impl Default for Rights {
    fn default() -> Self {
        Rights::all()
    }
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
    /// Foreign keys of the destination into other tables (or itself).
    pub parents: Vec<Parent>,
    /// Each column a sequence feeds, with the sequence.
    pub sequences: Vec<(String, Name)>,
    pub dependents: Vec<Dependent>,
    /// For a destination that does not exist yet: the columns its contract declares
    /// `nullable = false`, made NOT NULL when it is created.
    pub not_null: Vec<String>,
    /// Whether it can be swapped, and what a swap carries.
    pub swap: Swap,
    /// What this session may do to the destination, and to the staged copy.
    pub rights: Rights,
    pub staged_rights: Rights,
    /// Whether this session may create a relation in the destination's schema (a destination
    /// that does not exist yet is created).
    pub may_create: bool,
}

/// A statement of the plan, about one relation, its parameters bound as text.
#[derive(Debug, Clone)]
pub struct Step {
    pub sql: String,
    pub params: Vec<String>,
    pub relation: Name,
}

/// Whether a destination can be published by a swap (its staged copy renamed into its place),
/// and what the swap must then carry over; or why only a copy in place keeps what is bound to
/// it. Read on Postgres only; DuckDB always copies.
#[derive(Debug, Clone)]
pub enum Swap {
    /// Why not: `a foreign key of public.payment references it`.
    No(String),
    Yes(Box<Carried>),
}

impl Default for Swap {
    fn default() -> Self {
        Swap::No("only Postgres swaps".to_string())
    }
}

/// Everything of a destination table that belongs to its identity and not to its rows, as the
/// catalog deparses it (every name schema-qualified): the swap makes it again on the staged
/// copy once that is renamed into place.
#[derive(Debug, Clone, Default)]
pub struct Carried {
    /// A free name in the destination's schema for the old table, until it is dropped.
    pub old_name: String,
    pub owner: String,
    pub staged_owner: String,
    /// Columns NOT NULL in the destination, and those NOT NULL only in the staged copy.
    pub not_null: Vec<String>,
    pub staged_not_null: Vec<String>,
    /// Column defaults: the column and the expression.
    pub defaults: Vec<(String, String)>,
    /// Constraints, name and definition (`PRIMARY KEY (id)`), keys before checks and foreign
    /// keys.
    pub constraints: Vec<(String, String)>,
    /// `CREATE INDEX` statements of the indexes no constraint makes.
    pub indexes: Vec<String>,
    /// The index the table is clustered on.
    pub clustered: Option<String>,
    /// `CREATE TRIGGER` statements, with each trigger's name and `tgenabled`.
    pub triggers: Vec<(String, String, char)>,
    /// The table's privileges and each column's, as `aclexplode` lists them.
    pub grants: Vec<Grant>,
    /// Roles holding a privilege on the staged copy (or a column of it), `PUBLIC` included:
    /// revoked before the destination's are granted.
    pub staged_grantees: Vec<String>,
    pub comments: Vec<Comment>,
    /// Comments of the staged copy the destination does not have: removed.
    pub staged_comments: Vec<Commented>,
    /// Views that read the table directly: made again from their own definition, which binds
    /// them to the new table and keeps their identity (grants, owner, comments, the views
    /// over them).
    pub views: Vec<View>,
}

/// A privilege of a role on the table, or on one column of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub privilege: String,
    pub column: Option<String>,
    /// A role name, or `PUBLIC`.
    pub grantee: String,
    pub grantable: bool,
}

/// What a comment is on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Commented {
    Table,
    Column(String),
    Constraint(String),
    Index(Name),
    Trigger(String),
}

#[derive(Debug, Clone)]
pub struct Comment {
    pub on: Commented,
    pub text: String,
}

/// A view over the destination, as `pg_get_viewdef` deparses it, with its options
/// (`check_option=local`, `security_barrier=true`).
#[derive(Debug, Clone)]
pub struct View {
    pub name: Name,
    pub definition: String,
    pub options: Vec<String>,
}
