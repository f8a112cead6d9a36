//! Finds, in the header of the mimalloc that `libmimalloc-sys` builds, the number of the
//! `mi_option_purge_delay` option, so that `sqb::memory` sets that option and no other whatever
//! mimalloc version the lock file holds. A header without it fails the build.

use std::path::PathBuf;

fn main() {
    let dir = std::env::var_os("DEP_MIMALLOC_INCLUDE_DIR")
        .expect("libmimalloc-sys names its include directory (DEP_MIMALLOC_INCLUDE_DIR)");
    let header = PathBuf::from(dir).join("mimalloc.h");
    println!("cargo:rerun-if-changed={}", header.display());
    let text = std::fs::read_to_string(&header)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", header.display()));
    let index = option_index(&text, "mi_option_purge_delay")
        .unwrap_or_else(|| panic!("{} has no mi_option_purge_delay", header.display()));
    println!("cargo:rustc-env=SQB_MI_OPTION_PURGE_DELAY={index}");
}

/// The position of `name` in `typedef enum mi_option_e { ... }`, whose members take no
/// explicit values.
fn option_index(header: &str, name: &str) -> Option<usize> {
    let body = header.split("typedef enum mi_option_e {").nth(1)?;
    let body = &body[..body.find('}')?];
    let members = body.lines().filter_map(|line| {
        let code = line.split("//").next()?.trim();
        let member = code.trim_end_matches(',').trim();
        (!member.is_empty()).then_some(member)
    });
    for (index, member) in members.enumerate() {
        // An explicit value or an alias would make positions wrong: refuse rather than guess.
        if member.contains('=') {
            return None;
        }
        if member == name {
            return Some(index);
        }
    }
    None
}
