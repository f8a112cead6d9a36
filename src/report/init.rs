//! `sqb init`'s report: the schemas adopted, each with its target and source file, what was
//! left out, and the files written. Text or JSON.

use std::io::{self, Write};

use crate::ops::init::Initialized;
use crate::report::count;

pub fn emit_text(done: &Initialized, w: &mut dyn Write) -> io::Result<()> {
    writeln!(
        w,
        "adopted {} into {}:",
        count(done.schemas.len(), "schema", "schemas"),
        done.root.display()
    )?;
    let width = done
        .schemas
        .iter()
        .map(|s| s.schema.len())
        .max()
        .unwrap_or(0);
    for schema in &done.schemas {
        let default = match schema.target == done.default_target {
            true => " (default)",
            false => "",
        };
        let holds = match &schema.file {
            Some(file) => format!(
                "{}, {} in {file}",
                count(schema.relations, "relation", "relations"),
                count(schema.columns, "column", "columns"),
            ),
            None => "no relations yet".to_string(),
        };
        writeln!(
            w,
            "  {:width$}  target `{}`{default}: {holds}",
            schema.schema, schema.target
        )?;
    }
    if !done.other_schemas.is_empty() {
        let others: Vec<String> = done
            .other_schemas
            .iter()
            .map(|s| format!("`{s}`"))
            .collect();
        writeln!(
            w,
            "not adopted: {} (add one with --schema)",
            others.join(", ")
        )?;
    }
    for left in &done.left_out {
        writeln!(
            w,
            "left out: `{}.{}`, whose columns could not be read: {}",
            left.schema, left.relation, left.reason
        )?;
    }
    writeln!(w, "wrote {}", done.files.join(", "))
}

pub fn emit_json(done: &Initialized, w: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *w, done).map_err(io::Error::other)?;
    writeln!(w)
}
