//! The seams of docs/architecture.md, checked in the code: which rooms may import which. Reads
//! every file under `src/` and the `crate::` and `super::` paths in it.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Module path (`compile::sql::shape`) → the modules it names.
type Imports = BTreeMap<String, BTreeSet<String>>;

/// The module of a file under `src/`: `compile/sql/mod.rs` is `compile::sql`, `lib.rs` and
/// `main.rs` are `crate` and `main`.
fn module_of(rel: &Path) -> String {
    let mut parts: Vec<String> = rel
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    match parts.as_slice() {
        [only] if only == "lib" => "crate".to_string(),
        _ => parts.join("::"),
    }
}

/// The text without comments (doc links and prose are not imports) and without the unit tests
/// at the end of a file (their `super::` is the file's own module).
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]\nmod tests").next().unwrap_or(text);
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) if !l[..i].contains('"') => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every path that follows `prefix` in `code`, with `{a, b::c}` groups expanded one level.
fn paths_after(code: &str, prefix: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find(prefix) {
        let before = rest[..i].chars().last();
        rest = &rest[i + prefix.len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let (head, tail) = segments(rest);
        if let Some(group) = tail.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let (more, _) = segments(item.trim());
                out.push(head.iter().chain(&more).cloned().collect());
            }
        } else {
            out.push(head);
        }
    }
    out
}

/// `a::b::c` at the start of `text` (lowercase segments: modules), and what follows it.
fn segments(text: &str) -> (Vec<String>, &str) {
    let mut parts = Vec::new();
    let mut rest = text;
    loop {
        let len = rest
            .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'))
            .unwrap_or(rest.len());
        if len == 0 {
            break;
        }
        parts.push(rest[..len].to_string());
        match rest[len..].strip_prefix("::") {
            Some(next) => rest = next,
            None => {
                rest = &rest[len..];
                break;
            }
        }
    }
    (parts, rest)
}

/// The longest prefix of `path` that is a module, if any.
fn resolve(path: &[String], modules: &BTreeSet<String>) -> Option<String> {
    (1..=path.len())
        .rev()
        .map(|n| path[..n].join("::"))
        .find(|m| modules.contains(m))
}

fn imports() -> (Imports, BTreeMap<String, String>) {
    let src = common::repo().join("src");
    let mut texts = BTreeMap::new();
    for entry in walkdir::WalkDir::new(&src) {
        let entry = entry.unwrap();
        if entry.path().extension().is_some_and(|e| e == "rs") {
            let rel = entry.path().strip_prefix(&src).unwrap();
            let text = std::fs::read_to_string(entry.path()).unwrap();
            texts.insert(module_of(rel), code(&text));
        }
    }
    let modules: BTreeSet<String> = texts.keys().cloned().collect();
    let mut imports = Imports::new();
    for (module, text) in &texts {
        let parent: Vec<String> = match module.rsplit_once("::") {
            Some((parent, _)) => parent.split("::").map(String::from).collect(),
            None => Vec::new(),
        };
        let mut named = BTreeSet::new();
        for path in paths_after(text, "crate::") {
            named.extend(resolve(&path, &modules));
        }
        for path in paths_after(text, "super::") {
            let full: Vec<String> = parent.iter().chain(&path).cloned().collect();
            named.insert(
                resolve(&full, &modules).unwrap_or_else(|| match parent.is_empty() {
                    true => "crate".to_string(),
                    false => parent.join("::"),
                }),
            );
        }
        named.remove(module);
        imports.insert(module.clone(), named);
    }
    (imports, texts)
}

/// Every module `module` reaches through its imports.
fn reach(imports: &Imports, module: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![module.to_string()];
    while let Some(m) = todo.pop() {
        for next in imports.get(&m).into_iter().flatten() {
            if seen.insert(next.clone()) {
                todo.push(next.clone());
            }
        }
    }
    seen
}

fn in_room(module: &str, room: &str) -> bool {
    module == room || module.starts_with(&format!("{room}::"))
}

#[test]
fn the_pure_rooms_never_reach_the_warehouse() {
    let (imports, _) = imports();
    let mut offenders = Vec::new();
    for module in imports.keys() {
        let pure = [
            "contract",
            "compile",
            "project",
            "edit",
            "types",
            "report",
            "catalog",
            "importers",
        ]
        .iter()
        .any(|room| in_room(module, room));
        if !pure {
            continue;
        }
        let reached = reach(&imports, module);
        if let Some(w) = reached.iter().find(|m| in_room(m, "warehouse")) {
            offenders.push(format!("{module} reaches {w}"));
        }
    }
    assert!(offenders.is_empty(), "{offenders:#?}");
}

#[test]
fn only_the_commands_know_clap() {
    let (imports, texts) = imports();
    let allowed = |m: &str| in_room(m, "commands") || m == "cli" || m == "main" || m == "crate";
    let mut offenders: Vec<String> = texts
        .iter()
        .filter(|(m, text)| !allowed(m) && text.contains("clap::"))
        .map(|(m, _)| format!("{m} uses clap"))
        .collect();
    offenders.extend(
        imports
            .iter()
            .filter(|(m, named)| !allowed(m) && named.contains("cli"))
            .map(|(m, _)| format!("{m} imports cli")),
    );
    assert!(offenders.is_empty(), "{offenders:#?}");
}

#[test]
fn no_two_modules_import_each_other() {
    let (imports, _) = imports();
    let mut pairs = Vec::new();
    for (a, named) in &imports {
        for b in named {
            if a < b && imports.get(b).is_some_and(|n| n.contains(a)) {
                pairs.push(format!("{a} <-> {b}"));
            }
        }
    }
    assert!(pairs.is_empty(), "{pairs:#?}");
}

#[test]
fn base_modules_import_no_room() {
    let (imports, _) = imports();
    let base = [
        "atomic",
        "catalog",
        "diagnostics",
        "engine",
        "error",
        "exit",
        "ident",
        "interrupt",
        "logging",
        "memory",
        "parallel",
        "redact",
        "source",
    ];
    let mut offenders = Vec::new();
    for module in base {
        for named in &imports[module] {
            let root = named.split("::").next().unwrap();
            if !base.contains(&root) {
                offenders.push(format!("{module} imports {named}"));
            }
        }
    }
    assert!(offenders.is_empty(), "{offenders:#?}");
}
