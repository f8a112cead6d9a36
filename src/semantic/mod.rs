//! Semantic contracts, checked offline: the measures, dimensions and joins that models and
//! sources declare, and the metric bindings of `contracts/metrics/`, must name columns,
//! measures, relations and metrics that exist, with types that fit (docs/semantic-contracts.md).
//!
//! Pure: a function of the loaded [`Project`]; the columns and types are those of each
//! relation's effective declaration.

mod metrics;
mod uses;
mod validate;

pub use uses::{uses, Use};

use crate::diagnostics::Diagnostic;
use crate::project::Project;

/// Every diagnostic about the project's semantic contracts.
pub fn validate(project: &Project) -> Vec<Diagnostic> {
    let relations = validate::relations(project);
    let mut diags = Vec::new();
    validate::check(project, &relations, &mut diags);
    metrics::check(project, &relations, &mut diags);
    diags
}
