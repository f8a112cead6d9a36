//! `sqb compile`'s validation: the contract rules over a loaded project, then each model's SQL.
//!
//! Everything here is offline and pure: it reads the [`Project`] and returns diagnostics.

mod audits;
pub mod cache;
pub mod contract_shape;
pub mod deps;
pub mod memo;
mod team_changes;
mod team_models;

pub use team_changes::today;
pub use team_models::import_nodes;
pub mod sql;
pub mod target_sql;

use crate::diagnostics::{self, did_you_mean, Code, Diagnostic};
use crate::project::{Column, Contract, Model, NameList, Policy, Project};
use crate::source::{Loc, Spanned};

/// What to run besides the file and contract rules.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Infer each model's output and check it against its declaration (`--no-sql-analysis`
    /// turns it off; so do `settings.sql_analysis = false` and a model's `sql_analysis = false`).
    pub sql_analysis: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self { sql_analysis: true }
    }
}

/// Every diagnostic of a project: the loader's, the contract rules', and the SQL checks'.
pub fn compile(project: &Project) -> Vec<Diagnostic> {
    compile_with_graph(project, Options::default()).0
}

/// [`compile`], and the project's dependency graph.
pub fn compile_with_graph(project: &Project, options: Options) -> (Vec<Diagnostic>, deps::Graph) {
    let compiled = analyze_with(project, options, Keep::Shapes);
    (compiled.diagnostics, compiled.graph)
}

/// What the compile writes in the background (the compile cache and the analyses), by the name
/// [`crate::cache_dir::wait_for_writes_of`] waits for.
const CACHES: &str = "compile caches";

/// [`compile_with_graph`] through the compile cache ([`cache`]) when `use_cache` is set: an
/// unchanged project's verdict is read back instead of recomputed, and a new verdict without
/// errors is stored.
pub fn compile_cached(
    project: &Project,
    options: Options,
    use_cache: bool,
) -> (Vec<Diagnostic>, deps::Graph) {
    if !use_cache {
        return compile_with_graph(project, options);
    }
    // An earlier compile of this process may still be writing the caches read below.
    crate::cache_dir::wait_for_writes_of(CACHES);
    let key = tracing::debug_span!("compile cache key").in_scope(|| cache::key(project, options));
    let resources =
        project.models.len() + project.source_tables.len() + import_nodes(project).len();
    if let Some(hit) = cache::load(&project.root, &key, resources) {
        return hit;
    }
    // A miss compiles the project; the models whose analyses the cache holds are not
    // analysed again (see [`memo`]).
    memo::activate();
    tracing::debug_span!("analyses cache read").in_scope(|| memo::load(&project.root));
    let (diags, graph) = compile_with_graph(project, options);
    // Written while the command goes on (the report, the warehouse), before the process ends.
    let root = project.root.clone();
    let (stored, parents) = (diags.clone(), graph.parents.clone());
    let names: Vec<String> = project.models.iter().map(|m| m.name.clone()).collect();
    crate::cache_dir::write_in_background(CACHES, move || {
        cache::store(&root, key, stored, parents);
        tracing::debug_span!("analyses cache written")
            .in_scope(|| memo::save(&root, names.iter().map(String::as_str)));
    });
    (diags, graph)
}

/// Everything compiling a project finds.
pub struct Analysis {
    pub diagnostics: Vec<Diagnostic>,
    pub graph: deps::Graph,
    /// Each analysed model's inferred output and column uses, by model name.
    pub models: std::collections::HashMap<String, contract_shape::ModelAnalysis>,
    /// What the analysed models read of the project's imports.
    pub import_reads: crate::team_contracts::reads::ReadSet,
}

/// What one model's first pass produced: its diagnostics, its parents, and either its analysis
/// (models that read no other model are analysed at once) or what the dependency-ordered
/// second pass needs to analyse it.
struct FirstPass {
    diags: Vec<Diagnostic>,
    parents: Option<Vec<(usize, crate::source::Loc)>>,
    deferred: Option<contract_shape::Deferred>,
    analysis: Option<contract_shape::ModelAnalysis>,
}

fn first_pass(
    project: &Project,
    resolver: &deps::Resolver<'_>,
    known: &contract_shape::Known<'_>,
    (index, model): (usize, &Model),
    options: Options,
    keep: Keep,
    mentions: &Mentions,
) -> FirstPass {
    let mut diags = Vec::new();
    check_model_schema(project, model, &mut diags);
    check_contract(project, model, &mut diags);
    let lineage = keep == Keep::Everything;
    let keep_shape = keep != Keep::Shapes || mentions.elsewhere(index, model);
    let key = memo_key(project, model, options, lineage);
    if let Some(entry) = key.as_ref().and_then(|k| memo::lookup(&model.name, k)) {
        let pass = remembered(project, resolver, known, model, entry, key, lineage, diags);
        return without_shape(pass, keep_shape);
    }
    let statement = sql::parse::check_model(project, model, &mut diags);
    let references = statement
        .as_ref()
        .map(|s| deps::references(model, project, s));
    let parents = references
        .as_ref()
        .map(|r| resolver.resolve(project, r, known.imports));
    let reads_models = parents
        .as_ref()
        .is_some_and(|p| p.iter().any(|(i, _)| *i < project.models.len()));
    // A statement is kept only for the second pass; without SQL analysis there is none.
    let kept = statement.filter(|_| options.sql_analysis);
    let slot = key.zip(references);
    let mut pass = FirstPass {
        diags,
        parents,
        deferred: None,
        analysis: None,
    };
    match (kept, reads_models) {
        (Some(statement), true) => {
            pass.deferred = Some(contract_shape::Deferred::Statement(statement, slot));
        }
        (Some(statement), false) => {
            let memo = slot.as_ref().map(|(k, r)| (k.clone(), r.as_slice()));
            pass.analysis = contract_shape::analyze_one(
                project,
                known,
                model,
                &statement,
                &mut pass.diags,
                lineage,
                memo,
            );
        }
        (None, _) => {}
    }
    without_shape(pass, keep_shape)
}

/// The pass, its analysis without the inferred shape unless `keep` (no other model reads it).
fn without_shape(mut pass: FirstPass, keep: bool) -> FirstPass {
    if let Some(a) = pass.analysis.as_mut().filter(|_| !keep) {
        a.shape = None;
    }
    pass
}

/// The memo key of a model's analysis, where the memo is on and can serve it: with SQL
/// analysis, without lineage (only `sqb lineage` computes it), and without imports (their
/// checks read the statement itself).
fn memo_key(
    project: &Project,
    model: &Model,
    options: Options,
    lineage: bool,
) -> Option<memo::Key> {
    let usable = memo::enabled()
        && options.sql_analysis
        && !lineage
        && project.imports.is_empty()
        && contract_shape::analysis_enabled(project, model);
    usable.then(|| {
        let sql = project.sources.get(model.sql_file).digest();
        memo::Key::new(sql, project.engine(), lineage)
    })
}

/// The first pass of a model whose SQL is remembered: its parents from the remembered
/// references; its analysis reused when every answer it was made from holds (a model reading
/// models is left to the second pass, where their shapes are known), else made again.
#[allow(clippy::too_many_arguments)]
fn remembered(
    project: &Project,
    resolver: &deps::Resolver<'_>,
    known: &contract_shape::Known<'_>,
    model: &Model,
    entry: std::sync::Arc<memo::MemoEntry>,
    key: Option<memo::Key>,
    lineage: bool,
    mut diags: Vec<Diagnostic>,
) -> FirstPass {
    let references = entry.references(model);
    let parents = resolver.resolve(project, &references, known.imports);
    let reads_models = parents.iter().any(|(i, _)| *i < project.models.len());
    let mut pass = FirstPass {
        diags: Vec::new(),
        parents: Some(parents),
        deferred: None,
        analysis: None,
    };
    let Some(key) = key else {
        pass.diags = diags;
        return pass;
    };
    if reads_models {
        pass.deferred = Some(contract_shape::Deferred::Remembered(entry, key, references));
    } else if entry.holds(known) {
        pass.analysis = Some(contract_shape::reuse(project, model, entry, &mut diags));
    } else if let Some(statement) = sql::parse::check_model(project, model, &mut Vec::new()) {
        // The same text parsed before, so it parses again without a diagnostic.
        let memo = Some((key, references.as_slice()));
        pass.analysis = contract_shape::analyze_one(
            project, known, model, &statement, &mut diags, lineage, memo,
        );
    }
    pass.diags = diags;
    pass
}

/// How much of each model's analysis [`analyze_with`] keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// What the checks need: the output shapes of the models another model may read, without
    /// lineage (shapes, column uses and each output column's sources of every model take tens
    /// of megabytes on a large project).
    Shapes,
    /// Every model's output shape, without lineage (`contract check` compares each with the
    /// warehouse's description).
    AllShapes,
    /// Shapes and column uses, for lineage.
    Everything,
}

/// Compiles a project: diagnostics, the DAG, and what SQL analysis found per model.
pub fn analyze(project: &Project, options: Options) -> Analysis {
    analyze_with(project, options, Keep::Everything)
}

/// Reads the analyses the project's cache holds ([`memo`]) for [`model_references`] and
/// [`analyze_remembered`] to reuse.
pub fn remember_analyses(project: &Project) {
    // A compile of this process may still be writing them.
    crate::cache_dir::wait_for_writes_of(CACHES);
    memo::activate();
    tracing::debug_span!("analyses cache read").in_scope(|| memo::load(&project.root));
}

/// Every model's output shape ([`Keep::AllShapes`]), reusing the analyses
/// [`remember_analyses`] read, and writing the new ones to the cache while the command goes on.
pub fn analyze_remembered(project: &Project) -> Analysis {
    let analysis = analyze_with(project, Options::default(), Keep::AllShapes);
    let root = project.root.clone();
    let names: Vec<String> = project.models.iter().map(|m| m.name.clone()).collect();
    crate::cache_dir::write_in_background(CACHES, move || {
        tracing::debug_span!("analyses cache written")
            .in_scope(|| memo::save(&root, names.iter().map(String::as_str)));
    });
    analysis
}

/// The relations `model`'s SQL reads, located: remembered when its SQL is the text an analysis
/// was made of (no parse), else parsed; `None` when it does not parse.
pub fn model_references(project: &Project, model: &Model) -> Option<Vec<deps::Reference>> {
    let key = memo_key(project, model, Options::default(), false);
    if let Some(entry) = key.and_then(|k| memo::lookup(&model.name, &k)) {
        return Some(entry.references(model));
    }
    let statement = sql::parse::check_model(project, model, &mut Vec::new())?;
    Some(deps::references(model, project, &statement))
}

/// [`analyze`], keeping as much of each model's analysis as `keep` says.
pub fn analyze_with(project: &Project, options: Options, keep: Keep) -> Analysis {
    let mut diags = project.diagnostics.clone();
    let (resolver, imports) = tracing::debug_span!("relations indexed").in_scope(|| {
        let resolver = deps::Resolver::new(project);
        (
            resolver,
            team_models::Imports::new(project, keep == Keep::Everything),
        )
    });
    let known = contract_shape::Known::new(project, &imports);
    let mentions =
        tracing::debug_span!("names the models mention indexed").in_scope(|| match keep {
            Keep::Shapes => Mentions::of(project, options),
            Keep::AllShapes | Keep::Everything => Mentions::default(),
        });
    let passes =
        tracing::debug_span!("first pass: each model's SQL parsed and checked").in_scope(|| {
            let indexes: Vec<usize> = (0..project.models.len()).collect();
            crate::parallel::map(&indexes, |&i| {
                let model = (i, &project.models[i]);
                first_pass(project, &resolver, &known, model, options, keep, &mentions)
            })
        });
    let mut parents = Vec::with_capacity(passes.len());
    let mut deferred = Vec::with_capacity(passes.len());
    let mut models = std::collections::HashMap::new();
    for (model, pass) in project.models.iter().zip(passes) {
        diags.extend(pass.diags);
        parents.push(pass.parents);
        deferred.push(pass.deferred);
        if let Some(analysis) = pass.analysis {
            models.insert(model.name.clone(), analysis);
        }
    }
    check_columns(project, &mut diags);
    audits::check(project, &mut diags);
    diags.extend(crate::semantic::validate(project));
    let graph = deps::build(project, parents, imports.len(), &mut diags);
    if options.sql_analysis {
        tracing::debug_span!("second pass: models reading models analysed").in_scope(|| {
            contract_shape::check_dependents(
                project,
                &imports,
                deferred,
                &graph,
                &mut models,
                &mut diags,
                keep == Keep::Everything,
            )
        });
        check_unused_imports(project, &imports, &mut diags);
        team_changes::check_waivers(project, &imports, &mut diags);
    }
    if imports.collect_reads && !project.imports.is_empty() {
        imports.add_unanalysed(project, &|name| models.contains_key(name));
    }
    diagnostics::sort(&mut diags, &project.sources);
    let reused = memo::take_reused();
    tracing::debug!(diagnostics = diags.len(), reused, "compiled");
    Analysis {
        diagnostics: diags,
        graph,
        models,
        import_reads: imports.reads.into_inner().unwrap_or_default(),
    }
}

/// An import that no model reads is a warning: it checks nothing. (A model without SQL
/// analysis counts as reading it when its SQL names one of its relations.)
fn check_unused_imports(
    project: &Project,
    imports: &team_models::Imports,
    diags: &mut Vec<Diagnostic>,
) {
    let used = imports.used.lock().map(|u| u.clone()).unwrap_or_default();
    for import in &project.imports {
        let Some(snapshot) = import.snapshot.as_ref().or(import.baseline.as_ref()) else {
            continue;
        };
        let named_unanalysed = project.models.iter().any(|m| {
            let text = project.sources.get(m.sql_file).text().to_lowercase();
            !contract_shape::analysis_enabled(project, m)
                && snapshot
                    .models
                    .iter()
                    .any(|p| text.contains(&p.relation.name.to_lowercase()))
        });
        if !used.contains(&import.decl.name) && !named_unanalysed {
            diags.push(
                Diagnostic::warning(
                    Code::ImportUnused,
                    format!("no model reads import `{}`", import.decl.name),
                )
                .at(import.decl.loc.clone(), "imported here")
                .hint("read its models by their published relations (`schema.name`), or remove the import"),
            );
        }
    }
}

/// Which models' SQL mentions each model's name: a model whose name no other model's SQL
/// mentions is read by none, so its inferred shape need not be kept for the second pass.
#[derive(Default)]
struct Mentions {
    /// Lower-cased model or relation name -> its index in `seen`.
    names: foldhash::HashMap<String, usize>,
    /// For each name: the first model whose SQL has it, and whether another one has too.
    seen: Vec<Option<(usize, bool)>>,
}

impl Mentions {
    /// The model names each model's SQL mentions: the parts of its references where the memo
    /// remembers them (its file is then not read: a project the file stamps vouch for reads
    /// none), else every word of its SQL.
    fn of(project: &Project, options: Options) -> Self {
        let mut names = foldhash::HashMap::default();
        for model in &project.models {
            for name in [model.name.as_str(), model.relation_name()] {
                if name.chars().all(is_word_char) {
                    let next = names.len();
                    names.entry(name.to_lowercase()).or_insert(next);
                }
            }
        }
        // The lengths of the lower-cased names: an ASCII word of another length is none of them.
        // Indexed by length, not hashed: the test runs on every word of every model's SQL.
        let mut lengths = vec![false; names.keys().map(String::len).max().map_or(0, |n| n + 1)];
        for name in names.keys() {
            lengths[name.len()] = true;
        }
        // Each model's SQL is split into words on every core; only the words that are names
        // are kept.
        let found = crate::parallel::map(&project.models, |model| {
            let remembered = memo_key(project, model, options, false)
                .and_then(|key| memo::reference_parts(&model.name, &key));
            let text;
            let words: Box<dyn Iterator<Item = &str>> = match &remembered {
                Some(parts) => Box::new(parts.iter().map(String::as_str)),
                None => {
                    text = project.sources.get(model.sql_file).text();
                    Box::new(words(text))
                }
            };
            let mut word_lower = String::new();
            let mut found: Vec<usize> = Vec::new();
            for word in words.filter(|w| !w.is_empty()) {
                // Exact for an ASCII word: its length is that of its lower case, which a name
                // it matches has.
                if word.is_ascii() && !lengths.get(word.len()).is_some_and(|&is| is) {
                    continue;
                }
                word_lower.clear();
                match word.is_ascii() {
                    true => {
                        word_lower.push_str(word);
                        word_lower.make_ascii_lowercase();
                    }
                    false => word_lower.push_str(&word.to_lowercase()),
                }
                if let Some(&id) = names.get(word_lower.as_str()) {
                    if !found.contains(&id) {
                        found.push(id);
                    }
                }
            }
            found
        });
        let mut seen = vec![None; names.len()];
        for (i, ids) in found.into_iter().enumerate() {
            for id in ids {
                match &mut seen[id] {
                    None => seen[id] = Some((i, false)),
                    Some((first, several)) => *several |= *first != i,
                }
            }
        }
        Self { names, seen }
    }

    /// Whether the SQL of a model other than `model` may read it. Names that are not plain words
    /// (spaces, dots, quotes) are always assumed read.
    fn elsewhere(&self, own: usize, model: &Model) -> bool {
        [model.name.as_str(), model.relation_name()]
            .iter()
            .any(|name| {
                !name.chars().all(is_word_char)
                    || self
                        .names
                        .get(&name.to_lowercase())
                        .and_then(|&id| self.seen[id])
                        .is_some_and(|(first, several)| several || first != own)
            })
    }
}

/// The words of `text`, split as [`is_word_char`] splits them, a byte at a time: every byte of
/// a non-ASCII character is part of a word, so a word never splits one.
fn words(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let word = |b: &u8| b.is_ascii_alphanumeric() || matches!(*b, b'_' | b'$') || !b.is_ascii();
    let mut at = 0;
    std::iter::from_fn(move || {
        let start = at + bytes[at..].iter().position(word)?;
        let len = bytes[start..].iter().position(|b| !word(b));
        let end = len.map_or(bytes.len(), |len| start + len);
        at = end;
        Some(&text[start..end])
    })
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$' || !c.is_ascii()
}

fn check_model_schema(project: &Project, model: &Model, diags: &mut Vec<Diagnostic>) {
    let Some(name) = &model.props.model_schema else {
        return;
    };
    let Some(schema) = project.schemas.get(&name.value) else {
        let mut diag = Diagnostic::error(
            Code::UnknownModelSchema,
            format!(
                "model `{}` uses unknown schema `{}`",
                model.name, name.value
            ),
        )
        .at(name.loc.clone(), format!("no schemas/{}.toml", name.value));
        diag = match did_you_mean(&name.value, project.schemas.keys().map(String::as_str)) {
            Some(close) => diag.hint(format!("did you mean `{close}`?")),
            None => diag.hint(format!(
                "create schemas/{}.toml with the shared columns",
                name.value
            )),
        };
        diags.push(diag);
        return;
    };
    for column in &model.columns {
        let Some(shared) = schema
            .columns
            .iter()
            .find(|c| c.name.value.eq_ignore_ascii_case(&column.name.value))
        else {
            continue;
        };
        diags.push(
            Diagnostic::error(
                Code::ColumnInSchemaAndModel,
                format!(
                    "column `{}` of model `{}` is also declared by schema `{}`",
                    column.name.value, model.name, schema.name
                ),
            )
            .at(column.name.loc.clone(), "declared in the model")
            .related(shared.name.loc.clone(), "and in the shared schema")
            .hint("declare the column in one place: remove it from the model, or from the schema"),
        );
    }
}

fn check_contract(project: &Project, model: &Model, diags: &mut Vec<Diagnostic>) {
    if project.policy(model) != Policy::Enforced {
        return;
    }
    let Some(contract) = &model.props.contract else {
        return;
    };
    let columns = project.effective_columns(model);
    if columns.is_empty() {
        diags.push(
            Diagnostic::error(
                Code::EnforcedWithoutColumns,
                format!(
                    "model `{}` enforces a contract but declares no columns",
                    model.name
                ),
            )
            .at(contract.loc.clone(), "enforced here")
            .related(
                Loc::file_start(model.sidecar.unwrap_or(model.sql_file)),
                "this model",
            )
            .hint("declare the output columns under [columns.NAME], or set a model_schema"),
        );
        return;
    }
    check_key_columns(model, &columns, diags);
    let props = &model.props;
    if let Some(change) = props
        .snapshot_schema_change
        .as_ref()
        .filter(|c| c.value == "append_new_columns")
    {
        diags.push(
            Diagnostic::error(Code::AppendNewColumnsEnforced, format!("model `{}` appends new columns under an enforced contract", model.name))
                .at(change.loc.clone(), "appends undeclared columns")
                .related(contract.loc.clone(), "the contract is enforced here")
                .hint("an enforced contract fixes the output shape: use snapshot_schema_change = \"fail\", or drop the contract"),
        );
    }
    check_incremental(model, contract, diags);
    if let Some(promotion) = props.promotion.as_ref().filter(|p| p.value == "immediate") {
        diags.push(
            Diagnostic::error(Code::ImmediatePromotionEnforced, format!("model `{}` promotes immediately under an enforced contract", model.name))
                .at(promotion.loc.clone(), "replaces the destination before validation")
                .related(contract.loc.clone(), "the contract is enforced here")
                .hint("use promotion = \"staged\" so the output is validated before it replaces the destination"),
        );
    }
}

/// An incremental run under an enforced contract must either add the new columns or fail
/// (dbt's rule): `ignore` leaves the table behind the contract, and `sync_all_columns` drops
/// columns.
fn check_incremental(model: &Model, contract: &Spanned<Contract>, diags: &mut Vec<Diagnostic>) {
    if model.props.materialized.as_ref().map(|m| m.value.as_str()) != Some("incremental") {
        return;
    }
    let change = model.props.on_schema_change.as_ref();
    let value = change.map_or("ignore", |c| c.value.as_str());
    if value == "append_new_columns" || value == "fail" {
        return;
    }
    let message = match change {
        Some(_) => format!(
            "incremental model `{}` has an enforced contract but on_schema_change = \"{value}\"",
            model.name
        ),
        None => format!(
            "incremental model `{}` has an enforced contract but no on_schema_change",
            model.name
        ),
    };
    let diag = Diagnostic::error(Code::IncrementalSchemaChange, message);
    let diag = match change {
        Some(c) if value == "sync_all_columns" => diag
            .at(c.loc.clone(), "drops the columns the new output lacks")
            .related(contract.loc.clone(), "the contract is enforced here")
            .hint("sync_all_columns drops columns, which breaks the contract: use on_schema_change = \"append_new_columns\" or \"fail\""),
        Some(c) => diag
            .at(c.loc.clone(), "leaves the table's columns behind the model's")
            .related(contract.loc.clone(), "the contract is enforced here")
            .hint("use on_schema_change = \"append_new_columns\" or \"fail\""),
        None => diag
            .at(contract.loc.clone(), "the contract is enforced here")
            .hint("on_schema_change defaults to \"ignore\", which leaves the table's columns behind the model's: set on_schema_change = \"append_new_columns\" or \"fail\""),
    };
    diags.push(diag);
}

fn check_key_columns(model: &Model, columns: &[&Column], diags: &mut Vec<Diagnostic>) {
    let props = &model.props;
    let fields: [(&str, &Option<NameList>); 4] = [
        ("unique_key", &props.unique_key),
        ("cursor", &props.cursor),
        ("updated_at", &props.updated_at),
        ("check_columns", &props.check_columns),
    ];
    for (field, list) in fields {
        for name in list.iter().flat_map(|l| l.value.iter()) {
            if columns.iter().any(|c| c.name.value == name.value) {
                continue;
            }
            let mut diag = Diagnostic::error(
                Code::KeyColumnNotDeclared,
                format!("`{field}` of model `{}` names column `{}`, which its enforced contract does not declare", model.name, name.value),
            )
            .at(name.loc.clone(), "not a declared column");
            diag = match did_you_mean(&name.value, columns.iter().map(|c| c.name.value.as_str())) {
                Some(close) => diag.hint(format!("did you mean `{close}`?")),
                None => diag.hint(format!("declare [columns.{}] or fix `{field}`", name.value)),
            };
            diags.push(diag);
        }
    }
}

/// Each declared column's own checks, in one pass over the models' columns on every core (a
/// large project declares hundreds of thousands; two passes on one core were 14 ms of a first
/// compile): W001 on the columns a project designs (models, shared schemas), and every
/// column's audits.
fn check_columns(project: &Project, diags: &mut Vec<Diagnostic>) {
    let check = |column: &Column, found: &mut Vec<Diagnostic>| {
        check_numeric_precision(column, found);
        audits::check_column(project, column, found);
    };
    let of_models = crate::parallel::map(&project.models, |model| {
        let mut found = Vec::new();
        model.columns.iter().for_each(|c| check(c, &mut found));
        found
    });
    diags.extend(of_models.into_iter().flatten());
    for column in project.schemas.values().flat_map(|s| s.columns.iter()) {
        check(column, diags);
    }
    for column in project.source_tables.iter().flat_map(|s| s.columns.iter()) {
        audits::check_column(project, column, diags);
    }
}

/// W001: a designed column declared NUMERIC without a precision. A source describes a table
/// that exists: a bare `numeric` there is the truth about the table, not a choice to revisit.
fn check_numeric_precision(column: &Column, diags: &mut Vec<Diagnostic>) {
    let (Some(ty), Some(text)) = (&column.ty, &column.type_text) else {
        return;
    };
    if ty.has_unbounded_numeric() {
        diags.push(
            Diagnostic::warning(Code::NumericWithoutPrecision, format!("column `{}` is NUMERIC without a precision", column.name.value))
                .at(text.loc.clone(), "precision and scale not stated")
                .hint("state the precision the column is built with, such as \"NUMERIC(18,2)\" (the defaults differ: scale 0 in the SQL standard and many warehouses, DECIMAL(18,3) on DuckDB, unbounded on Postgres); where the warehouse column has none (a bare Postgres `numeric`), a declared precision is a `type_mismatch`: first give the column one with a cast in the model's SQL, `CAST(x AS NUMERIC(18,2))`"),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn by_chars(text: &str) -> Vec<&str> {
        text.split(|c: char| !is_word_char(c))
            .filter(|w| !w.is_empty())
            .collect()
    }

    #[test]
    fn the_words_split_by_bytes_are_those_split_by_characters() {
        for text in [
            "",
            "select a.b, \"Quoted Name\" from raw_data.rel_04055 -- x$1",
            "SELECT größe, naïve_col FROM tabelle_ä WHERE x = 'é'",
            "名前 AS 列, emoji🙂tail,, ;;  _a$ 9z",
            "trailing_word",
            "((()))",
        ] {
            assert_eq!(words(text).collect::<Vec<_>>(), by_chars(text), "{text:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn any_text_splits_into_the_same_words(text in "[a-zA-Z0-9_$ .,;\"'()éß名🙂\\-\n]{0,60}") {
            proptest::prop_assert_eq!(words(&text).collect::<Vec<_>>(), by_chars(&text));
        }
    }
}
