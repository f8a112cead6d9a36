//! sqb keeps a SQL project's column contracts honest against the real warehouse.
//!
//! The library holds everything; the `sqb` binary only parses arguments and dispatches to
//! [`commands`], which map them to plain options for [`ops`], whose results [`report`] prints.
//! Data flows one way: files are loaded into a [`project::Project`], validated by [`compile`]
//! (rendered as [`diagnostics`]); for the contract commands, [`select`]ed resources are read
//! from the warehouse by a [`warehouse::session::Session`] as [`catalog`] data, matched and
//! compared by [`contract`], and edited by [`edit`] (docs/architecture.md).

pub mod adopt;
pub mod atomic;
pub mod audit;
pub mod cache_dir;
pub mod catalog;
pub mod cli;
pub mod clock;
pub mod commands;
pub mod compile;
pub mod contract;
pub mod diagnostics;
pub mod drift;
pub mod edit;
pub mod engine;
pub mod engine_rules;
pub mod error;
pub mod exit;
pub mod ident;
pub mod identity;
pub mod interrupt;
pub mod logging;
pub mod memory;
pub mod message;
pub mod ops;
pub mod parallel;
pub mod project;
pub mod promote;
pub mod redact;
pub mod report;
#[cfg(test)]
mod repository_files;
pub mod rows;
pub mod select;
pub mod semantic;
pub mod source;
pub mod table_facts;
pub mod team_contracts;
pub mod types;
pub mod warehouse;
