//! Changing project files safely: format-preserving TOML edits, applying a plan's proposals to
//! file contents in memory, and the write transaction that puts them on disk (lock, journal,
//! atomic writes, recompile or restore, crash recovery).
//!
//! Editing never decides *what* to change (the plan does); the transaction never knows TOML.

pub mod apply;
pub mod toml;
pub mod transaction;
