//! A planted tree for tests/architecture.rs: rooms `a`, `b` and `c` import each other in a
//! circle, each through a different kind of path. It is parsed, never compiled.
pub mod a;
pub mod b;
pub mod c;
