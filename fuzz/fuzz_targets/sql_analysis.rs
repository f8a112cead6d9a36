//! Fuzz target `sql_analysis`: see fuzz/checks.rs for what it checks.
#![no_main]

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::sql_analysis(data));
