//! Adopted schemas (`[settings] adopted_schemas`): every relation of such a schema is declared,
//! as a source or as a model of the target; one the project does not know is a finding of its
//! own. Pure: it reads the project and the warehouse's survey.

use crate::catalog::SchemaListing;
use crate::project::{Project, Target};
use crate::source::Loc;

/// A relation of an adopted schema that nothing declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Undeclared {
    pub schema: String,
    pub relation: String,
    /// The source file that would declare it: the one holding the schema's first source, else
    /// `sources/<schema>.toml`.
    pub file: String,
    /// The `adopted_schemas` entry that adopts the schema.
    pub loc: Loc,
}

/// An adopted schema the warehouse does not have: the check cannot run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("adopted schema `{schema}` does not exist in database `{database}`")]
pub struct NoSuchSchema {
    pub schema: String,
    pub database: String,
}

/// The relations of the adopted schemas that no source (and, in the target's schema, no model)
/// declares, by schema and name. Sources of another database are not the connection's: they
/// never declare a relation of it.
pub fn undeclared(
    project: &Project,
    target: &Target,
    schemas: &[SchemaListing],
    database: &str,
) -> Result<Vec<Undeclared>, NoSuchSchema> {
    let engine = project.engine();
    let target_schema = target.schema.as_ref().map(|s| s.value.as_str());
    let target_here = target.database.as_ref().is_none_or(|d| d.value == database);
    let mut out = Vec::new();
    for adopted in &project.config.settings.adopted_schemas {
        let schema = adopted.value.as_str();
        let Some(listing) = schemas.iter().find(|l| l.schema == schema) else {
            return Err(NoSuchSchema {
                schema: schema.to_string(),
                database: database.to_string(),
            });
        };
        let sources: Vec<_> = project
            .source_tables
            .iter()
            .filter(|s| s.schema.as_ref().is_some_and(|x| x.value == schema))
            .filter(|s| s.database.as_ref().is_none_or(|d| d.value == database))
            .collect();
        let models_here = target_here && target_schema == Some(schema);
        let declared = |relation: &str| {
            sources
                .iter()
                .any(|s| engine.same_name(s.relation_name(), relation))
                || (models_here
                    && project
                        .models
                        .iter()
                        .any(|m| engine.same_name(m.relation_name(), relation)))
        };
        let file = sources.first().map_or_else(
            || format!("sources/{}.toml", file_stem(schema)),
            |s| project.sources.get(s.file).rel_path.clone(),
        );
        out.extend(
            listing
                .relations
                .iter()
                .filter(|r| !declared(r))
                .map(|relation| Undeclared {
                    schema: schema.to_string(),
                    relation: relation.clone(),
                    file: file.clone(),
                    loc: adopted.loc.clone(),
                }),
        );
    }
    Ok(out)
}

/// A file name made from a schema name: lowercase letters, digits and `_`.
pub fn file_stem(schema: &str) -> String {
    let stem: String = schema
        .chars()
        .map(|c| match c.is_ascii_alphanumeric() {
            true => c.to_ascii_lowercase(),
            false => '_',
        })
        .collect();
    match stem.is_empty() {
        true => "_".to_string(),
        false => stem,
    }
}

/// Source names for relations: a relation's own name when it is a plain lowercase identifier
/// and free, else a plain name made from it (and its schema, on a clash), never one taken.
#[derive(Debug, Default)]
pub struct SourceNames {
    taken: std::collections::HashSet<String>,
}

impl SourceNames {
    /// Names, none of which is given out.
    pub fn new(taken: impl IntoIterator<Item = String>) -> Self {
        Self {
            taken: taken.into_iter().collect(),
        }
    }

    /// A free name for `relation` of `schema`, taken from now on.
    pub fn name(&mut self, schema: &str, relation: &str) -> String {
        let plain = match file_stem(relation) {
            s if s.starts_with(|c: char| c.is_ascii_digit()) => format!("_{s}"),
            s => s,
        };
        let mut name = plain.clone();
        if self.taken.contains(&name) {
            name = format!("{}_{plain}", file_stem(schema));
        }
        let base = name.clone();
        let mut n = 2;
        while self.taken.contains(&name) {
            name = format!("{base}_{n}");
            n += 1;
        }
        self.taken.insert(name.clone());
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_names_are_plain_and_unique() {
        let mut names = SourceNames::new(["taken".to_string()]);
        assert_eq!(names.name("public", "orders"), "orders");
        assert_eq!(names.name("public", "Order Items"), "order_items");
        assert_eq!(names.name("sales", "orders"), "sales_orders");
        assert_eq!(names.name("sales", "Orders"), "sales_orders_2");
        assert_eq!(names.name("x", "1st"), "_1st");
        assert_eq!(names.name("s", "taken"), "s_taken");
    }
}
