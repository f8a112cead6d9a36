//! `sqb ls`'s output: one line per selected resource, or a JSON list.

use std::io::{self, Write};

use serde::Serialize;

/// One selected resource.
#[derive(Debug, Clone, Serialize)]
pub struct Listed {
    pub resource_type: &'static str,
    pub name: String,
    /// `schema.relation` for a source, the relation's name for a model (in the target's
    /// schema).
    pub relation: String,
    /// The file that declares it.
    pub file: String,
}

pub fn emit_text(listed: &[Listed], w: &mut dyn Write) -> io::Result<()> {
    let name_width = listed.iter().map(|l| l.name.len()).max().unwrap_or(0);
    let relation_width = listed.iter().map(|l| l.relation.len()).max().unwrap_or(0);
    for l in listed {
        writeln!(
            w,
            "{:6}  {:name_width$}  {:relation_width$}  {}",
            l.resource_type, l.name, l.relation, l.file
        )?;
    }
    Ok(())
}

pub fn emit_json(listed: &[Listed], w: &mut dyn Write) -> io::Result<()> {
    #[derive(Serialize)]
    struct Json<'a> {
        schema_version: u32,
        resources: &'a [Listed],
    }
    let json = Json {
        schema_version: 1,
        resources: listed,
    };
    serde_json::to_writer_pretty(&mut *w, &json).map_err(io::Error::other)?;
    writeln!(w)
}
