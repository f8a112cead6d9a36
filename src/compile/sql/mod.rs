//! SQL analysis of one model's statement: parsing it (`parse`), the columns it outputs with
//! proven types and nullability (`shape`, `typing`), the enforced upstream interfaces it reads
//! (`interface`), and lineage (`lineage`).
//!
//! This module holds the vocabulary they share: relations in scope, output columns and shapes,
//! interface issues, column references, and how names compare on each engine.

mod grouping;
mod interface;
mod lex;
pub mod lineage;
pub mod parse;
pub mod shape;
mod typing;

use serde::Serialize;
use sqlparser::ast::{Ident, JoinConstraint, JoinOperator};

use crate::engine::Engine;
use crate::types::DataType;

/// One output column: its name as the engine stores it, and what is proven about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutColumn {
    pub name: String,
    /// 1-based line and column of the projection item, where known.
    pub position: Option<(usize, usize)>,
    /// The type, where proven.
    pub ty: Option<DataType>,
    /// `Some(false)`: proven non-null; `Some(true)`: proven nullable; `None`: unknown.
    pub nullable: Option<bool>,
    /// The upstream columns it is computed from.
    pub lineage: Lineage,
}

impl OutColumn {
    pub fn named(name: String) -> Self {
        Self {
            name,
            position: None,
            ty: None,
            nullable: None,
            lineage: Lineage::default(),
        }
    }
}

/// A complete output shape; `None` wherever a shape is not proven.
pub type Shape = Option<Vec<OutColumn>>;

/// What a table reference's upstream provides.
pub trait Upstream {
    /// The complete shape of a model, by name.
    fn shape(&self, parts: &[Ident]) -> Shape;
    /// What is known of some columns of a model or source (declared types and nullability),
    /// even when its shape is not complete.
    fn facts(&self, parts: &[Ident]) -> Vec<OutColumn>;
    /// The authoritative interface the reference is bound by, if any (a model's enforced
    /// contract, a source declared complete): its undeclared columns cannot be referenced.
    fn interface(&self, parts: &[Ident]) -> Option<Interface>;
    /// What a reference is: ("model" | "source" | "import" | "external", its name).
    fn origin(&self, parts: &[Ident]) -> (&'static str, String);
}

/// A reference that breaks an enforced upstream interface.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub enum Issue {
    /// `column` is declared by none of the `interfaces` in scope.
    Undeclared {
        interfaces: Vec<Interface>,
        column: String,
        position: Option<(usize, usize)>,
    },
    /// An unqualified `column` that more than one relation has.
    Ambiguous {
        column: String,
        relations: Vec<String>,
        position: Option<(usize, usize)>,
    },
}

/// A relation of a FROM clause.
pub struct Rel {
    pub key: String,
    pub shape: Shape,
    pub facts: Vec<OutColumn>,
    /// On the nullable side of an outer join.
    pub outer: bool,
    /// The authoritative interfaces its shape is (one for an enforced model or a complete
    /// source; those it passes through whole for a CTE or subquery); empty for none.
    pub interface: Vec<Interface>,
    /// A model, source or external relation (as opposed to a CTE or subquery).
    pub origin: Option<(&'static str, String)>,
}

/// A column list that is authoritative: a column it does not declare cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub enum Interface {
    /// A model with an enforced contract.
    Model(String),
    /// A source whose declaration is marked `complete = true`.
    Source(String),
    /// A model another project publishes, `import.model`: its current snapshot's columns.
    Import(String),
}

/// The columns that `USING (..)` and `NATURAL` joins merge into one: an unqualified reference
/// to one of them is not ambiguous.
#[derive(Default)]
pub struct Merged {
    names: Vec<String>,
    /// A NATURAL join merges every column its sides share.
    natural: bool,
}

impl Merged {
    pub fn add(&mut self, operator: &JoinOperator, engine: Engine) {
        let constraint = match operator {
            JoinOperator::Join(c)
            | JoinOperator::Inner(c)
            | JoinOperator::Left(c)
            | JoinOperator::LeftOuter(c)
            | JoinOperator::Right(c)
            | JoinOperator::RightOuter(c)
            | JoinOperator::FullOuter(c) => c,
            _ => return,
        };
        match constraint {
            JoinConstraint::Using(names) | JoinConstraint::UsingAlias(names, _) => {
                self.names.extend(names.iter().filter_map(|n| {
                    n.0.last()
                        .and_then(|p| p.as_ident())
                        .map(|i| stored_name(i, engine))
                }))
            }
            JoinConstraint::Natural => self.natural = true,
            _ => {}
        }
    }

    pub fn has(&self, name: &str, engine: Engine) -> bool {
        self.natural || self.names.iter().any(|n| same_column(n, name, engine))
    }
}

/// The name an unquoted or quoted identifier gets in the catalog: Postgres folds unquoted names
/// to lower case; DuckDB keeps them as written.
pub fn stored_name(ident: &Ident, engine: Engine) -> String {
    engine.stored_name(&ident.value, ident.quote_style.is_some())
}

/// Whether two stored names are the same column on this engine (DuckDB compares case-insensitively).
pub fn same_column(a: &str, b: &str, engine: Engine) -> bool {
    engine.same_name(a, b)
}

/// An upstream column: of a model, a source, or an external relation.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct ColumnRef {
    pub resource_type: &'static str,
    pub resource: String,
    pub column: String,
}

/// What a column is computed from: the upstream columns it reads, and the columns it reads
/// that could not be attributed to one relation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lineage {
    pub columns: Vec<ColumnRef>,
    pub unattributed: Vec<Unattributed>,
}

impl Lineage {
    pub fn of(column: ColumnRef) -> Self {
        Self {
            columns: vec![column],
            unattributed: Vec::new(),
        }
    }

    /// Adds what `other` reads that this does not yet hold, keeping the order.
    pub fn merge(&mut self, other: &Lineage) {
        for c in &other.columns {
            if !self.columns.contains(c) {
                self.columns.push(c.clone());
            }
        }
        for u in &other.unattributed {
            if !self.unattributed.contains(u) {
                self.unattributed.push(u.clone());
            }
        }
    }
}

/// An unqualified column that more than one relation in scope may hold: `candidates` names
/// them (a model, source or external relation by its name; a CTE or subquery by its alias).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Unattributed {
    pub column: String,
    pub candidates: Vec<String>,
}

/// A column used directly in a non-projection context.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Use {
    pub context: &'static str,
    #[serde(flatten)]
    pub column: ColumnRef,
}
