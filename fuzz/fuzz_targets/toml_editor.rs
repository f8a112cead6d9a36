//! Fuzz target `toml_editor`: see fuzz/checks.rs for what it checks.
#![no_main]

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::toml_editor(data));
