//! Importers: another tool's project turned into a new sqb project tree, in memory.
//!
//! Pure: an importer takes the other tool's files as text and returns the files to write and a
//! report of what could not be carried over. [`crate::ops::adopt`] reads and writes the disk.

pub mod dbt;
