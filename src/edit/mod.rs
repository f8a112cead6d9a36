//! Changing project files safely: format-preserving TOML edits, and the write transaction that
//! puts them on disk (lock, journal, atomic writes, recompile or restore, crash recovery).
//!
//! Editing never decides *what* to change (the plan does); the transaction never knows TOML.

pub mod toml;
pub mod transaction;
