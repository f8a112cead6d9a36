//! Fuzz target `project_load`: see fuzz/checks.rs for what it checks.
#![no_main]

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::project_load(data));
