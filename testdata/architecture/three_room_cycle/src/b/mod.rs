//! Room `b`: a path in code names `c`.
pub struct Thing;

pub fn run() -> u32 {
    crate::c::helper() + 1
}

#[cfg(test)]
mod tests {
    // A unit test's `super::` is its own file's module, and `crate::a` here is a test's only.
    use super::run;
    use crate::a::make;
}
