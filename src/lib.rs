//! sqb keeps a SQL project's column contracts honest against the real warehouse.
//!
//! The library holds everything; the `sqb` binary only parses arguments and dispatches to
//! [`commands`]. Data flows one way: files are loaded into a [`project::Project`], validated by
//! [`compile`] (rendered as [`diagnostics`]); for the contract commands, [`select`]ed resources
//! are read from the warehouse by a [`warehouse::Introspector`], compared by
//! [`contract::diff`], and rendered by [`report`].

pub mod atomic;
pub mod cli;
pub mod commands;
pub mod compile;
pub mod contract;
pub mod diagnostics;
pub mod edit;
pub mod engine;
pub mod error;
pub mod exit;
pub mod ident;
pub mod interrupt;
pub mod logging;
pub mod memory;
pub mod parallel;
pub mod project;
pub mod report;
pub mod select;
pub mod source;
pub mod types;
pub mod warehouse;
