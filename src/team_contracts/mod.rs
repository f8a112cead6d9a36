//! Cross-team contracts: the snapshot a producer publishes (`snapshot`), and what a consumer's
//! `[imports]` make of it (docs/imports.md). Pure: reading files is the caller's.

pub mod changes;
pub mod impact;
pub mod reads;
pub mod snapshot;
