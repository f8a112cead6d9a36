//! Semantic contracts, checked offline: the measures, dimensions and joins that models and
//! sources declare, and what `contracts/` holds — metric bindings, guardrails, finality rules,
//! assertions, the tenancy and roles policies — must name columns, measures, relations,
//! metrics, dimensions, contexts and roles that exist, with types that fit
//! (docs/semantic-contracts.md).
//!
//! Pure: a function of the loaded [`Project`]; the columns and types are those of each
//! relation's effective declaration.

mod assertions;
pub mod expect;
pub mod filter;
mod guardrails;
mod metrics;
mod policies;
pub(crate) mod predicate;
pub mod query;
mod relation;
mod resolve;
pub mod trust;
mod uses;
mod validate;

pub use policies::effective_role;
pub use uses::{uses, Use, Uses};

use crate::diagnostics::{Code, Diagnostic};
use crate::project::Project;

/// Every diagnostic about the project's semantic contracts.
///
/// None while a file of the project could not be read or parsed: what it declares is missing
/// from everything the checks resolve against, so they would report each of its names as
/// unknown. Its one diagnostic stands alone (and fails the compile) until it is fixed.
pub fn validate(project: &Project) -> Vec<Diagnostic> {
    let unread = |d: &Diagnostic| matches!(d.code, Code::TomlSyntax | Code::UnreadableFile);
    if project.diagnostics.iter().any(unread) {
        return Vec::new();
    }
    let relations = relation::relations(project);
    let metrics = resolve::Metrics::new(project);
    let mut diags = Vec::new();
    let span = |name: &'static str| tracing::debug_span!("semantic", check = name).entered();
    {
        let _s = span("declarations");
        validate::check(project, &relations, &mut diags);
    }
    {
        let _s = span("metrics");
        metrics::check(project, &relations, &mut diags);
    }
    {
        let _s = span("guardrails");
        guardrails::check(project, &relations, &metrics, &mut diags);
    }
    {
        let _s = span("assertions");
        assertions::check(project, &relations, &metrics, &mut diags);
        assertions::check_saved(project, &relations, &metrics, &mut diags);
    }
    {
        let _s = span("policies");
        policies::check(project, &relations, &metrics, &mut diags);
    }
    diags
}
