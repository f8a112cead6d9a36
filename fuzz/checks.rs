//! What each fuzz target checks, shared by the fuzz targets (fuzz/fuzz_targets/) and by the
//! regression suite (tests/fuzz_regressions.rs), which replays every input kept under
//! fuzz/regressions/<target>/.
//!
//! Each check takes the raw input and panics on a violated property; any input that is not
//! meaningful is simply accepted (the loader and parsers must return errors, not panic).

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use sqb::edit::toml::{Editor, Home};
use sqb::engine::Engine;

/// A directory of this process's, reused across inputs.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sqb-fuzz-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(root: &Path, rel: &str, bytes: &[u8]) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

const HEADER: &str = "name = \"fuzz\"\ndefault_target = \"prod\"\n\n[connection]\nengine = \"ENGINE\"\npath = \"w.duckdb\"\nurl = \"postgres://fuzz@127.0.0.1:1/fuzz\"\n\n[targets.prod]\nschema = \"main\"\n";

fn header(engine: Engine) -> String {
    HEADER.replace("ENGINE", engine.as_str())
}

/// The project loader and compile: the input's parts (split at 0xFF bytes) become sqb.toml
/// (unless the first byte is even: then a valid one), a sidecar, a model's SQL, a source file,
/// an enum and a schema. Loading and compiling must return diagnostics, never panic, and every
/// diagnostic must point inside its file.
pub fn project_load(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let root = scratch("project");
    let _ = std::fs::remove_dir_all(&root);
    let mut parts = rest.split(|&b| b == 0xFF);
    let engine = if mode & 2 == 0 {
        Engine::DuckDb
    } else {
        Engine::Postgres
    };
    if mode & 1 == 0 {
        write(&root, "sqb.toml", header(engine).as_bytes());
    } else {
        write(&root, "sqb.toml", parts.next().unwrap_or_default());
    }
    for rel in [
        "models/m.toml",
        "models/m.sql",
        "sources/raw.toml",
        "enums/status.toml",
        "schemas/shared.toml",
    ] {
        if let Some(part) = parts.next() {
            write(&root, rel, part);
        }
    }
    write(&root, "models/n.sql", b"SELECT * FROM m\n");
    let Ok(project) = sqb::project::Project::load(&root) else {
        return;
    };
    let diagnostics = sqb::compile::compile(&project);
    for d in &diagnostics {
        let labels = d.primary.iter().chain(&d.related);
        for label in labels {
            let file = project.sources.get(label.loc.file);
            assert!(
                label.loc.span().start <= label.loc.span().end
                    && label.loc.span().end <= file.text().len(),
                "{} points outside {}: {:?}",
                d.code.as_str(),
                file.rel_path,
                label.loc.span()
            );
        }
        let _ = sqb::diagnostics::render_text(d, &project.sources);
    }
}

/// The type parser: any text is a type or an error; a type's canonical spelling parses back to
/// the same type, and normalizing is idempotent.
pub fn type_parse(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for engine in [Engine::Postgres, Engine::DuckDb] {
        let Ok(ty) = sqb::types::parse(text, engine) else {
            continue;
        };
        let canonical = ty.to_string();
        let again = sqb::types::parse(&canonical, engine)
            .unwrap_or_else(|e| panic!("{text:?} -> {canonical:?} does not parse: {e}"));
        assert_eq!(again, ty, "{text:?} -> {canonical:?}");
        let once = sqb::types::normalize(&ty, engine);
        assert_eq!(sqb::types::normalize(&once, engine), once);
        assert!(sqb::types::equivalent(&ty, &ty, engine));
    }
}

/// SQL analysis: the input (after a first byte choosing the engine) is a model's SQL, in a
/// project where it reads a declared source and another model. Compiling must not panic, and
/// lineage of the model must not panic either.
pub fn sql_analysis(data: &[u8]) {
    let Some((&mode, sql)) = data.split_first() else {
        return;
    };
    let engine = if mode & 1 == 0 {
        Engine::DuckDb
    } else {
        Engine::Postgres
    };
    let root = scratch("sql");
    let _ = std::fs::remove_dir_all(&root);
    write(&root, "sqb.toml", header(engine).as_bytes());
    write(
        &root,
        "sources/raw.toml",
        b"[orders]\nschema = \"raw\"\n\n[orders.columns.id]\ntype = \"INTEGER\"\nnullable = false\n\n[orders.columns.amount]\ntype = \"NUMERIC(12,2)\"\n",
    );
    write(&root, "models/base.sql", b"SELECT id, amount FROM orders\n");
    write(
        &root,
        "models/base.toml",
        b"contract = \"enforced\"\n\n[columns.id]\ntype = \"INTEGER\"\nnullable = false\n\n[columns.amount]\ntype = \"NUMERIC(12,2)\"\n",
    );
    write(&root, "models/m.sql", sql);
    write(
        &root,
        "models/m.toml",
        b"[columns.id]\ntype = \"INTEGER\"\n",
    );
    let Ok(project) = sqb::project::Project::load(&root) else {
        return;
    };
    let compiled = sqb::compile::analyze(&project, Default::default());
    for d in &compiled.diagnostics {
        let _ = sqb::diagnostics::render_text(d, &project.sources);
    }
}

/// The TOML editor: the input is a sidecar, then (after a 0xFF byte) edit operations, one per
/// line: `+name`, `=name`, `>from>to`, `-name`. Applied edits must render a document that
/// parses, holds the intended column set, and keeps every line an add or a type change did
/// not touch.
pub fn toml_editor(data: &[u8]) {
    let mut parts = data.splitn(2, |&b| b == 0xFF);
    let (Some(doc), Some(ops)) = (parts.next(), parts.next()) else {
        return;
    };
    let (Ok(text), Ok(ops)) = (std::str::from_utf8(doc), std::str::from_utf8(ops)) else {
        return;
    };
    let Ok(mut editor) = Editor::parse(text) else {
        return;
    };
    let mut only_additive = true;
    let mut retyped = false;
    let mut expected: Vec<(String, Option<&str>)> = Vec::new();
    for op in ops.lines().take(16) {
        let Some(kind) = op.chars().next() else {
            continue;
        };
        let arg = &op[kind.len_utf8()..];
        match kind {
            '+' if editor
                .add_column(&Home::Root, arg, "VARCHAR(20)", true)
                .is_ok() =>
            {
                expected.retain(|(n, _)| n != arg);
                expected.push((arg.to_string(), Some("VARCHAR(20)")));
            }
            '=' if editor.set_type(&Home::Root, arg, "BIGINT").is_ok() => {
                retyped = true;
                expected.retain(|(n, _)| n != arg);
                expected.push((arg.to_string(), Some("BIGINT")));
            }
            '>' => {
                if let Some((from, to)) = arg.split_once('>') {
                    only_additive = false;
                    if from != to && editor.rename_column(&Home::Root, from, to).is_ok() {
                        expected.retain(|(n, _)| n != from && n != to);
                        expected.push((to.to_string(), None));
                    }
                }
            }
            '-' => {
                only_additive = false;
                if editor.remove_column(&Home::Root, arg).is_ok() {
                    expected.retain(|(n, _)| n != arg);
                }
            }
            _ => {}
        }
    }
    let out = editor.render();
    let doc: toml_edit::DocumentMut = out
        .parse()
        .unwrap_or_else(|e| panic!("edited document does not parse: {e}\n{out}"));
    let columns = doc.get("columns").and_then(|c| c.as_table_like());
    for (name, ty) in &expected {
        let column = columns
            .and_then(|c| c.get(name))
            .unwrap_or_else(|| panic!("column {name:?} missing after edits:\n{out}"));
        if let Some(ty) = ty {
            let got = column
                .as_table_like()
                .and_then(|t| t.get("type"))
                .and_then(|t| t.as_str());
            assert_eq!(got, Some(*ty), "column {name:?}:\n{out}");
        }
    }
    if only_additive {
        let mut after = out.lines();
        for line in text.lines() {
            // The line holding a changed column's `type` (in table form its `type = ..` line,
            // in inline form the column's line, or under TOML 1.1 the line that closes an
            // inline table spread over several) is the one allowed to change.
            if retyped && (line.contains("type") || line.contains('{') || line.contains('}')) {
                continue;
            }
            assert!(
                after.any(|l| l == line),
                "line {line:?} lost:\n{text}\n---\n{out}"
            );
        }
    }
}
