//! Audits: the checks of a relation's data that its column declarations carry (`audits = [..]`
//! in a sidecar or a source), run by `sqb audit`. [`spec`] reads what an audit says and refuses
//! what sqb cannot run (at compile time, located); [`scan`] turns a relation's audits into one
//! read-only statement that counts every check's failing rows at once, and the sample query of
//! each check that failed. Pure: the warehouse runs what this writes.

pub mod scan;
pub mod spec;
pub mod template;
