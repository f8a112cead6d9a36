//! `sources/`: the raw tables models read, with their columns.

#[allow(clippy::wildcard_imports)]
use super::*;

pub(super) const SOURCE_KEYS: &[&str] = &[
    "schema",
    "database",
    "table",
    "tags",
    "description",
    "loader",
    "freshness",
    "meta",
    "complete",
    "audits",
    "columns",
    "measures",
    "dimensions",
    "joins",
    "grain",
    "agg_time_dimension",
    "time_spine",
];

pub(super) fn load_sources(loader: &mut Loader) -> Vec<SourceTable> {
    let mut out: Vec<SourceTable> = Vec::new();
    let mut first_loc: HashMap<String, Loc> = HashMap::new();
    for found in list(&loader.root, "sources", &["toml"]) {
        let Some((id, doc)) = loader.read_toml(&found) else {
            continue;
        };
        let mut r = loader.reader(id);
        let root = doc.as_table();
        for (name, _) in root.iter() {
            let name_loc = r.key_loc(root, name);
            let Some(t) = r.table(root, name) else {
                continue;
            };
            r.check_keys(t, SOURCE_KEYS, &format!("source `{name}`"));
            for key in ["loader", "freshness", "meta"] {
                if t.contains_key(key) {
                    r.table(t, key);
                }
            }
            let schema = r.string(t, "schema");
            if schema.is_none() && !t.contains_key("schema") {
                r.missing(
                    name_loc.clone(),
                    "schema",
                    &format!("source `{name}`"),
                    "name the schema that holds the raw table: `schema = \"raw\"`",
                );
            }
            if let Some(first) = first_loc.get(name) {
                r.diags.push(
                    Diagnostic::error(
                        Code::DuplicateSource,
                        format!("two sources are named `{name}`"),
                    )
                    .at(name_loc.clone(), "declared again here")
                    .related(first.clone(), "first declared here")
                    .hint("source names must be unique across sources/; rename one"),
                );
            }
            first_loc
                .entry(name.to_string())
                .or_insert_with(|| name_loc.clone());
            out.push(SourceTable {
                file: id,
                database: r.string(t, "database"),
                table: r.string(t, "table"),
                tags: r
                    .strings(t, "tags", false)
                    .map(|s| s.value)
                    .unwrap_or_default(),
                description: r.string(t, "description"),
                columns: read_columns(&mut r, t, &format!("source `{name}`")),
                semantic: read_semantic(&mut r, t, &format!("source `{name}`")),
                complete: r.boolean(t, "complete").is_some_and(|b| b.value),
                audits: super::super::columns::read_audits(&mut r, t),
                schema,
                name: Spanned::new(name.to_string(), name_loc),
            });
        }
    }
    out
}
