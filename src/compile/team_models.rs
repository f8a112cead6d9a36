//! Imported models as a consumer's SQL sees them: each published model of each `[imports]`
//! entry, found by its published relation, with its columns as facts.

use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;

use sqlparser::ast::Ident;

use super::sql::OutColumn;
use crate::engine::Engine;
use crate::project::Project;
use crate::team_contracts::reads::{ReadSet, Reading};
use crate::team_contracts::snapshot::PublishedColumn;

/// A model another project publishes, as the consumer reads it: the accepted baseline's columns
/// in order, then those the current snapshot adds, each with what the snapshot says of it
/// (what the baseline said, for a column the snapshot dropped).
pub struct Imported {
    /// `import.model`.
    pub label: String,
    pub import: String,
    pub model: String,
    pub database: Option<String>,
    pub schema: String,
    pub name: String,
    pub columns: Vec<OutColumn>,
}

/// Every imported model, and what the analysed models read of them (models are analysed in
/// parallel, both passes sharing one `Imports`).
pub struct Imports {
    list: Vec<Imported>,
    /// Indexes into `list` by lower-cased relation name.
    by_name: HashMap<String, Vec<usize>>,
    /// The imports some analysed model names.
    pub used: Mutex<BTreeSet<String>>,
    /// What each analysed model reads of them, when `collect_reads` (the compile itself does
    /// not need it; `imports diff` and `imports reads` do).
    pub reads: Mutex<ReadSet>,
    pub collect_reads: bool,
    /// The waivers that turned a finding into a note: `(import, index)`.
    pub waived: Mutex<BTreeSet<(String, usize)>>,
}

impl Imports {
    pub fn new(project: &Project, collect_reads: bool) -> Self {
        let list = imported(project);
        let mut by_name: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, imported) in list.iter().enumerate() {
            by_name
                .entry(imported.name.to_lowercase())
                .or_default()
                .push(i);
        }
        Imports {
            list,
            by_name,
            used: Mutex::default(),
            reads: Mutex::default(),
            collect_reads,
            waived: Mutex::default(),
        }
    }

    /// Records, for each model the analysis did not reach (analysis off, or SQL that does not
    /// parse) whose SQL names an imported relation, a read of every column of it: what such a
    /// model reads is unknown, so the read set fails closed.
    pub fn add_unanalysed(&self, project: &Project, analysed: &dyn Fn(&str) -> bool) {
        let mut set = ReadSet::default();
        for model in project.models.iter().filter(|m| !analysed(&m.name)) {
            let text = project.sources.get(model.sql_file).text().to_lowercase();
            for i in self
                .list
                .iter()
                .filter(|i| names_word(&text, &i.name.to_lowercase()))
            {
                set.models
                    .entry((i.import.clone(), i.model.clone()))
                    .or_default()
                    .insert(model.name.clone());
                for c in &i.columns {
                    let reading = Reading {
                        model: model.name.clone(),
                        uses: ["unanalysed".to_string()].into(),
                        relies_not_null: true,
                        ..Reading::default()
                    };
                    set.columns
                        .entry((i.import.clone(), i.model.clone(), c.name.clone()))
                        .or_default()
                        .insert(model.name.clone(), reading);
                }
            }
        }
        if let Ok(mut reads) = self.reads.lock() {
            reads.merge(set);
        }
    }

    /// The imported model a reference names by its published relation (`schema.name` or
    /// `database.schema.name`), compared as the engine compares identifiers.
    pub fn find(&self, parts: &[Ident], engine: Engine) -> Option<&Imported> {
        self.position(parts, engine).map(|i| &self.list[i])
    }

    /// [`Imports::find`], as the position in [`import_nodes`] order.
    pub fn position(&self, parts: &[Ident], engine: Engine) -> Option<usize> {
        let same = |ident: &Ident, stored: &str| {
            engine.names_match(&ident.value, ident.quote_style.is_some(), stored)
        };
        let (database, schema, name) = match parts {
            [schema, name] => (None, schema, name),
            [database, schema, name] => (Some(database), schema, name),
            _ => return None,
        };
        let candidates = self.by_name.get(&name.value.to_lowercase())?;
        candidates.iter().copied().find(|&k| {
            let i = &self.list[k];
            same(name, &i.name)
                && same(schema, &i.schema)
                && database.is_none_or(|d| i.database.as_deref().is_some_and(|db| same(d, db)))
        })
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }
}

/// The imported models as nodes of the DAG, after the models and sources: `(import, model)`.
pub fn import_nodes(project: &Project) -> Vec<(String, String)> {
    imported(project)
        .into_iter()
        .map(|i| (i.import, i.model))
        .collect()
}

/// Whether `word` occurs in `text` between non-identifier characters.
fn names_word(text: &str, word: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word).any(|(at, _)| {
        !text[..at].chars().next_back().is_some_and(ident)
            && !text[at + word.len()..].chars().next().is_some_and(ident)
    })
}

/// Every model of every import that could be read, as the consumer sees it.
fn imported(project: &Project) -> Vec<Imported> {
    let engine = project.engine();
    let mut out = Vec::new();
    for import in &project.imports {
        // With one of the two files unusable (reported), the other stands for both: the reads
        // still resolve, and no change is reported from half the picture.
        let (snapshot, baseline) = match (&import.snapshot, &import.baseline) {
            (Some(s), Some(b)) => (s, b),
            (Some(one), None) | (None, Some(one)) => (one, one),
            (None, None) => continue,
        };
        let mut names: Vec<&str> = baseline.models.iter().map(|m| m.name.as_str()).collect();
        names.extend(
            snapshot
                .models
                .iter()
                .map(|m| m.name.as_str())
                .filter(|n| baseline.model(n).is_none()),
        );
        for name in names {
            let (before, now) = (baseline.model(name), snapshot.model(name));
            let Some(model) = now.or(before) else {
                continue;
            };
            let mut columns: Vec<&PublishedColumn> = before.map_or_else(Vec::new, |b| {
                b.columns
                    .iter()
                    .map(|c| {
                        now.and_then(|n| n.columns.iter().find(|x| x.name == c.name))
                            .unwrap_or(c)
                    })
                    .collect()
            });
            for c in now.map_or(&[][..], |n| n.columns.as_slice()) {
                if !columns.iter().any(|x| x.name == c.name) {
                    columns.push(c);
                }
            }
            out.push(Imported {
                label: format!("{}.{name}", import.decl.name),
                import: import.decl.name.clone(),
                model: name.to_string(),
                database: model.relation.database.clone(),
                schema: model.relation.schema.clone(),
                name: model.relation.name.clone(),
                columns: columns
                    .iter()
                    .map(|c| OutColumn {
                        ty: crate::types::parse(&c.canonical_type, engine)
                            .ok()
                            .filter(|t| t.named_types().is_empty()),
                        nullable: (!c.nullable).then_some(false),
                        ..OutColumn::named(c.name.clone())
                    })
                    .collect(),
            });
        }
    }
    out
}
