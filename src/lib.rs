//! sqb keeps a SQL project's column contracts honest against the real warehouse.
//!
//! The library holds everything; the `sqb` binary only parses arguments and dispatches to
//! [`commands`]. Data flows one way: files are loaded into a [`project::Project`], validated by
//! [`compile`], and rendered as [`diagnostics`].

pub mod cli;
pub mod commands;
pub mod compile;
pub mod diagnostics;
pub mod engine;
pub mod error;
pub mod exit;
pub mod project;
pub mod source;
pub mod types;
