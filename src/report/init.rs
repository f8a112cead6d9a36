//! `sqb init`'s report: the schemas adopted, each with its target and source file, what was
//! left out, and the files written. Text or JSON.

use std::io::{self, Write};

use std::path::PathBuf;

use crate::report::count;

/// One adopted schema.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Adopted {
    pub schema: String,
    /// The target that names it.
    pub target: String,
    /// The source file holding its relations (none for a schema without relations).
    pub file: Option<String>,
    pub relations: usize,
    pub columns: usize,
}

/// A relation init did not declare, and why.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Left {
    pub schema: String,
    pub relation: String,
    pub reason: String,
}

/// What init wrote.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Initialized {
    pub root: PathBuf,
    /// Every file written, relative to the root, in order.
    pub files: Vec<String>,
    pub schemas: Vec<Adopted>,
    /// User schemas that exist and were not chosen.
    pub other_schemas: Vec<String>,
    pub left_out: Vec<Left>,
    pub default_target: String,
    /// The URL held a password, which was not written.
    pub password_dropped: bool,
    /// Warnings `sqb compile` reports on the new project.
    pub warnings: usize,
}

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
