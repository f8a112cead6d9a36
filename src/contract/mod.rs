//! Contracts against the warehouse: comparing declarations with physical relations.

pub mod diff;
pub mod inspect;
pub mod plan;
