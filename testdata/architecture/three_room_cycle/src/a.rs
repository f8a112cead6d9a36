//! Room `a`: a `use` item names `b`. This comment's crate::c::helper is prose, not an import.

use crate::b::Thing;

pub mod inner {
    pub fn value() -> u32 {
        1
    }
}

pub fn make() -> Thing {
    Thing
}
