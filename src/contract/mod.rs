//! Contracts against the warehouse: comparing declarations with physical relations.

pub mod adoption;
pub mod cascade;
pub mod cause;
pub mod diff;
pub mod matching;
pub mod migrate;
pub mod plan;
pub mod renames;
