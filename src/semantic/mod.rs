//! Semantic contracts, checked offline: the measures, dimensions and joins that models and
//! sources declare, and what `contracts/` holds — metric bindings, guardrails, finality rules,
//! assertions, the tenancy and roles policies — must name columns, measures, relations,
//! metrics, dimensions, contexts and roles that exist, with types that fit
//! (docs/semantic-contracts.md).
//!
//! Pure: a function of the loaded [`Project`]; the columns and types are those of each
//! relation's effective declaration.

mod assertions;
mod guardrails;
mod metrics;
mod policies;
mod predicate;
mod resolve;
mod uses;
mod validate;

pub use policies::effective_role;
pub use uses::{uses, Use};

use crate::diagnostics::Diagnostic;
use crate::project::Project;

/// Every diagnostic about the project's semantic contracts.
pub fn validate(project: &Project) -> Vec<Diagnostic> {
    let relations = validate::relations(project);
    let mut diags = Vec::new();
    validate::check(project, &relations, &mut diags);
    metrics::check(project, &relations, &mut diags);
    guardrails::check(project, &relations, &mut diags);
    assertions::check(project, &relations, &mut diags);
    policies::check(project, &relations, &mut diags);
    diags
}
