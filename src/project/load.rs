//! Reading a project from disk into the [`Project`] model.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use toml_edit::{Document, Item, TableLike};

use super::columns::{read_columns, read_model_props};
use super::config::{finish, merge, read_raw, RawConfig};
use super::contracts::{read_assertion, read_finality, read_guardrail};
use super::discover::{list, Found, LOCAL_FILE, PROJECT_FILE};
use super::metrics::{read_binding, MetricBinding};
use super::policies::{read_roles, read_tenancy};
use super::reader::Reader;
use super::semantic::{read_semantic, Semantic};
use super::stamps::{self, Content, Stamps};
use super::Contracts;
use super::{Column, ColumnSet, EnumBase, EnumDef, Model, ModelProps, Project, SourceTable};
use crate::diagnostics::{did_you_mean, Code, Diagnostic};
use crate::engine::Engine;
use crate::source::{FileId, Loc, SourceMap, Spanned};
use crate::types::{self, DataType};

/// A project that cannot be loaded at all (as opposed to one with diagnostics).
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("could not read {}", path.display())]
    ReadProjectFile {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

const SIDECAR_KEYS: &[&str] = &[
    "materialized",
    "contract",
    "tags",
    "description",
    "model_schema",
    "alias",
    "unique_key",
    "cursor",
    "updated_at",
    "check_columns",
    "snapshot_schema_change",
    "on_schema_change",
    "promotion",
    "sql_analysis",
    "access",
    "meta",
    "columns",
    "measures",
    "dimensions",
    "joins",
    "grain",
];
const SCHEMA_KEYS: &[&str] = &["description", "columns"];
const ENUM_KEYS: &[&str] = &["description", "members"];
const SOURCE_KEYS: &[&str] = &[
    "schema",
    "database",
    "table",
    "tags",
    "description",
    "loader",
    "freshness",
    "meta",
    "complete",
    "columns",
    "measures",
    "dimensions",
    "joins",
    "grain",
];

struct Loader {
    root: PathBuf,
    sources: SourceMap,
    diags: Vec<Diagnostic>,
    /// Read and write the declarations cache (see [`super::cache`]).
    use_cache: bool,
    /// The files unchanged since the last load (see [`super::stamps`]).
    stamps: Stamps,
    /// The files read through `stamps`, with their stamps, to store for the next load.
    stamped: Vec<(FileId, stamps::Stamp)>,
}

/// A parsed TOML file; `None` when it could not be read or parsed (already reported).
type Parsed = Option<(FileId, Document<String>)>;

impl Loader {
    fn read(&mut self, rel: &str, abs: &Path) -> Option<FileId> {
        let text = std::fs::read_to_string(abs);
        self.add(rel, abs, text)
    }

    /// Adds a file read (or vouched for) earlier by [`read_all`], remembering its stamp.
    fn add_found(&mut self, found: &Found, (content, stamp): stamps::Read) -> Option<FileId> {
        let id = match content {
            Ok(Content::Unchanged(digest)) => Some(self.sources.add_unread(
                found.rel.clone(),
                &found.abs,
                digest,
            )),
            Ok(Content::Text(text)) => self.add(&found.rel, &found.abs, Ok(text)),
            Err(err) => self.add(&found.rel, &found.abs, Err(err)),
        };
        if let Some((id, stamp)) = id.zip(stamp) {
            self.stamped.push((id, stamp));
        }
        id
    }

    /// Adds a file read earlier; an unreadable one is reported.
    fn add(&mut self, rel: &str, abs: &Path, text: std::io::Result<String>) -> Option<FileId> {
        match text {
            Ok(text) => Some(self.sources.add(rel.to_string(), abs, text)),
            Err(err) => {
                let id = self.sources.add(rel.to_string(), abs, String::new());
                self.diags.push(
                    Diagnostic::error(Code::UnreadableFile, format!("could not read {rel}: {err}"))
                        .at(Loc::file_start(id), "unreadable")
                        .hint("check the file's permissions and that it is UTF-8 text"),
                );
                None
            }
        }
    }

    fn parse(&mut self, id: FileId) -> Option<Document<String>> {
        let text = self.sources.get(id).text().to_string();
        match Document::parse(text) {
            Ok(doc) => Some(doc),
            Err(err) => {
                self.diags.push(toml_syntax(id, &err));
                None
            }
        }
    }

    fn read_toml(&mut self, found: &Found) -> Parsed {
        let id = self.read(&found.rel, &found.abs)?;
        let doc = self.parse(id)?;
        Some((id, doc))
    }

    fn reader(&mut self, file: FileId) -> Reader<'_> {
        Reader::new(file, &mut self.diags)
    }
}

impl Project {
    /// Loads the project rooted at `root` (the directory holding `sqb.toml`), parsing every file.
    pub fn load(root: &Path) -> Result<Project, LoadError> {
        Self::load_cached(root, false)
    }

    /// Loads the project rooted at `root`; with `use_cache`, sidecars whose bytes are unchanged
    /// since the last load are read from the declarations cache instead of parsed.
    pub fn load_cached(root: &Path, use_cache: bool) -> Result<Project, LoadError> {
        let mut loader = Loader {
            root: root.to_path_buf(),
            sources: SourceMap::default(),
            diags: Vec::new(),
            use_cache,
            stamps: Stamps::open(root, use_cache),
            stamped: Vec::new(),
        };
        let config = load_config(&mut loader)?;
        if config.unparsed {
            // Everything else is read in the project's engine, which the project file names:
            // its syntax error is the one diagnostic.
            return Ok(Project {
                root: loader.root,
                sources: loader.sources,
                config,
                models: Vec::new(),
                schemas: Default::default(),
                enums: Default::default(),
                source_tables: Default::default(),
                imports: Vec::new(),
                metrics: Vec::new(),
                contracts: Default::default(),
                diagnostics: loader.diags,
            });
        }
        let engine = config.connection.engine;
        let enums = load_enums(&mut loader);
        let schemas = load_schemas(&mut loader);
        let source_tables = load_sources(&mut loader);
        check_path_defaults(&mut loader, &config.path_defaults);
        let models = load_models(&mut loader, &config.path_defaults);
        let imports = load_imports(&mut loader, &config.imports);
        let (metrics, contracts) = load_contracts(&mut loader);
        tracing::debug_span!("file stamps written").in_scope(|| {
            let stamps = &loader.stamps;
            stamps.store(&loader.root, &loader.sources, &loader.stamped)
        });
        tracing::debug!(
            models = models.len(),
            files = loader.sources.len(),
            "project files read and parsed"
        );
        // Held to the end of the command, beside the warehouse's catalog.
        loader.sources.shrink_to_fit();
        let mut project = Project {
            root: loader.root,
            sources: loader.sources,
            config,
            models,
            schemas,
            enums,
            source_tables,
            imports,
            metrics,
            contracts,
            diagnostics: loader.diags,
        };
        tracing::debug_span!("declared types resolved")
            .in_scope(|| resolve_types(&mut project, engine));
        Ok(project)
    }
}

impl super::Config {
    /// Reads only `sqb.toml` (and `sqb.local.toml`): `None` when they cannot be read or have
    /// errors, which loading the whole project then reports.
    pub fn load_alone(root: &Path) -> Option<super::Config> {
        let mut loader = Loader {
            root: root.to_path_buf(),
            sources: SourceMap::default(),
            diags: Vec::new(),
            use_cache: false,
            stamps: Stamps::open(root, false),
            stamped: Vec::new(),
        };
        let config = load_config(&mut loader).ok()?;
        (!loader.diags.iter().any(Diagnostic::is_error)).then_some(config)
    }
}

fn load_config(loader: &mut Loader) -> Result<super::Config, LoadError> {
    let path = loader.root.join(PROJECT_FILE);
    let text = std::fs::read_to_string(&path).map_err(|source| LoadError::ReadProjectFile {
        path: path.clone(),
        source,
    })?;
    let id = loader.sources.add(PROJECT_FILE.to_string(), &path, text);
    let base = read_config_file(loader, id);
    let local_path = loader.root.join(LOCAL_FILE);
    let raw = if local_path.exists() {
        match loader.read(LOCAL_FILE, &local_path) {
            Some(local_id) => merge(base, read_config_file(loader, local_id)),
            None => base,
        }
    } else {
        base
    };
    Ok(finish(&mut loader.reader(id), raw))
}

fn read_config_file(loader: &mut Loader, id: FileId) -> RawConfig {
    match loader.parse(id) {
        Some(doc) => read_raw(&mut loader.reader(id), doc.as_table()),
        None => RawConfig::unparsed(),
    }
}

/// Every `path_defaults` key must name an existing folder of the project.
fn check_path_defaults(loader: &mut Loader, defaults: &[(Spanned<String>, ModelProps)]) {
    for (path, _) in defaults {
        let clean = path.value.trim_end_matches('/');
        if clean.is_empty()
            || clean.starts_with('/')
            || clean.split('/').any(|p| p == "..")
            || !loader.root.join(clean).is_dir()
        {
            loader.diags.push(
                Diagnostic::error(
                    Code::PathDefaultsNoFolder,
                    format!("path defaults for `{}` match no folder", path.value),
                )
                .at(path.loc.clone(), "no such folder in the project")
                .hint("use a folder path relative to the project root, such as \"models/marts\""),
            );
        }
    }
}

/// The `path_defaults` of the deepest folder containing `rel`.
fn defaults_for<'a>(
    rel: &str,
    defaults: &'a [(Spanned<String>, ModelProps)],
) -> Option<&'a ModelProps> {
    defaults
        .iter()
        .filter(|(path, _)| {
            let folder = path.value.trim_end_matches('/');
            !folder.is_empty() && rel.starts_with(folder) && rel[folder.len()..].starts_with('/')
        })
        .max_by_key(|(path, _)| path.value.trim_end_matches('/').len())
        .map(|(_, props)| props)
}

fn load_models(loader: &mut Loader, defaults: &[(Spanned<String>, ModelProps)]) -> Vec<Model> {
    let files = tracing::debug_span!("model files listed")
        .in_scope(|| list(&loader.root, "models", &["sql", "toml"]));
    let mut sql_by_dir_stem: HashMap<(String, String), &Found> = HashMap::new();
    for f in files.iter().filter(|f| f.ext == "sql") {
        sql_by_dir_stem.insert((parent(&f.rel), f.stem.clone()), f);
    }
    let mut sidecars: HashMap<(String, String), &Found> = HashMap::new();
    for f in files.iter().filter(|f| f.ext == "toml") {
        let key = (parent(&f.rel), f.stem.clone());
        if sql_by_dir_stem.contains_key(&key) {
            sidecars.insert(key, f);
        } else if let Some(id) = loader.read(&f.rel, &f.abs) {
            let sql_name = format!("{}.sql", f.stem);
            loader.diags.push(
                Diagnostic::error(
                    Code::SidecarWithoutSql,
                    format!("{} declares a model with no SQL file", f.rel),
                )
                .at(
                    Loc::file_start(id),
                    format!("no {sql_name} beside this file"),
                )
                .hint(format!(
                    "add {sql_name} next to it, or move the declarations into schemas/"
                )),
            );
        }
    }
    let mut models: Vec<Model> = Vec::with_capacity(sql_by_dir_stem.len());
    let mut pending: Vec<(usize, FileId)> = Vec::new();
    let mut first_file: HashMap<String, FileId> = HashMap::new();
    let pairs: Vec<(&Found, Option<&Found>)> = files
        .iter()
        .filter(|f| f.ext == "sql")
        .map(|f| (f, sidecars.get(&(parent(&f.rel), f.stem.clone())).copied()))
        .collect();
    // Reading thousands of small files is mostly waiting on the kernel: do it on every core.
    let texts = tracing::debug_span!("model files read")
        .in_scope(|| read_all(&loader.stamps, &pairs, |(sql, side)| [Some(*sql), *side]));
    for ((f, side), [sql_text, side_text]) in pairs.iter().zip(texts) {
        let Some(sql_file) = loader.add_found(f, sql_text.expect("always read")) else {
            continue;
        };
        if let Some(&other) = first_file.get(&f.stem) {
            loader.diags.push(
                Diagnostic::error(
                    Code::DuplicateModel,
                    format!("two models are named `{}`", f.stem),
                )
                .at(Loc::file_start(sql_file), "this model")
                .related(Loc::file_start(other), "has the same name as this one")
                .hint(
                    "model names are file stems and must be unique in the project; rename one file",
                ),
            );
            continue;
        }
        first_file.insert(f.stem.clone(), sql_file);
        // Sidecars are parsed below, on every core.
        let sidecar = side
            .zip(side_text)
            .and_then(|(side, text)| loader.add_found(side, text));
        if let Some(id) = sidecar {
            pending.push((models.len(), id));
        }
        models.push(Model {
            name: f.stem.clone(),
            sql_file,
            sidecar,
            props: ModelProps::default(),
            columns: Vec::new(),
            semantic: None,
            unreadable: false,
        });
    }
    let sources = &loader.sources;
    let sidecars: Vec<_> = pending
        .iter()
        .map(|&(i, file)| super::cache::Sidecar {
            file,
            model: &models[i].name,
        })
        .collect();
    let parsed = tracing::debug_span!("sidecars parsed").in_scope(|| {
        let cache = super::cache::DECLARATIONS;
        super::cache::parse_all(
            cache,
            &loader.root,
            loader.use_cache,
            sources,
            &sidecars,
            |s| parse_sidecar(sources, s.file, s.model),
        )
    });
    drop(sidecars);
    for ((i, _), (sidecar, diags)) in pending.into_iter().zip(parsed) {
        loader.diags.extend(diags);
        match sidecar {
            Some((props, columns, semantic)) => {
                models[i].props = props;
                models[i].columns = columns;
                models[i].semantic = semantic;
            }
            None => {
                models[i].sidecar = None;
                models[i].unreadable = true;
            }
        }
    }
    for model in &mut models {
        let rel = &loader.sources.get(model.sql_file).rel_path;
        if let Some(d) = defaults_for(rel, defaults) {
            model.props = std::mem::take(&mut model.props).over(d);
        }
    }
    models
}

/// Reads the files `which` names for each item, on every core, keeping the order; those that
/// `stamps` vouch for are not read.
fn read_all<T: Sync, const N: usize>(
    stamps: &Stamps,
    items: &[T],
    which: impl Fn(&T) -> [Option<&Found>; N] + Sync,
) -> Vec<[Option<stamps::Read>; N]> {
    crate::parallel::map(items, |item| which(item).map(|f| f.map(|f| stamps.read(f))))
}

type Sidecar = Option<(ModelProps, Vec<Column>, Option<Box<Semantic>>)>;

/// Parses one sidecar; `None` when it is not valid TOML (reported).
fn parse_sidecar(sources: &SourceMap, id: FileId, name: &str) -> (Sidecar, Vec<Diagnostic>) {
    let text = sources.get(id).text();
    match super::plain::read(text, id) {
        Some((props, columns)) => (Some((props, columns, None)), Vec::new()),
        None => parse_sidecar_toml(text, id, name),
    }
}

/// Parses one sidecar with the TOML parser and reads it with the general readers.
pub(super) fn parse_sidecar_toml(text: &str, id: FileId, name: &str) -> (Sidecar, Vec<Diagnostic>) {
    parse_toml(text, id, |r, root| {
        let owner = format!("model `{name}`");
        r.check_keys(root, SIDECAR_KEYS, &owner);
        let props = read_model_props(r, root);
        let columns = read_columns(r, root, &owner);
        let semantic = read_semantic(r, root, &owner);
        (props, columns, semantic)
    })
}

/// Parses one TOML file of the source map and reads its root table with `read`, on any
/// thread; `None` when it is not valid TOML (reported).
fn parse_file<T>(
    sources: &SourceMap,
    id: FileId,
    read: impl FnOnce(&mut Reader<'_>, &toml_edit::Table) -> T,
) -> (Option<T>, Vec<Diagnostic>) {
    parse_toml(sources.get(id).text(), id, read)
}

/// [`parse_file`] of a text.
fn parse_toml<T>(
    text: &str,
    id: FileId,
    read: impl FnOnce(&mut Reader<'_>, &toml_edit::Table) -> T,
) -> (Option<T>, Vec<Diagnostic>) {
    let mut diags = Vec::new();
    let doc = match Document::parse(text) {
        Ok(doc) => doc,
        Err(err) => {
            diags.push(toml_syntax(id, &err));
            return (None, diags);
        }
    };
    let mut r = Reader::new(id, &mut diags);
    let value = read(&mut r, doc.as_table());
    (Some(value), diags)
}

fn toml_syntax(id: FileId, err: &toml_edit::TomlError) -> Diagnostic {
    let span = err.span().unwrap_or(0..0);
    let message = err.message().trim_end().to_string();
    Diagnostic::error(Code::TomlSyntax, format!("invalid TOML: {message}"))
        .at(Loc::new(id, span), message)
        .hint("fix the TOML syntax at this position")
}

fn parent(rel: &str) -> String {
    rel.rsplit_once('/').map_or("", |(dir, _)| dir).to_string()
}

/// Reads each TOML file of `folder` (one named thing per file, named by its stem) with `read`,
/// after checking its top-level keys against `keys`. Files that do not parse are reported once
/// and skipped.
fn load_named<T>(
    loader: &mut Loader,
    folder: &str,
    keys: &[&str],
    kind: &str,
    mut read: impl FnMut(&mut Reader<'_>, &dyn TableLike, &Found, FileId) -> T,
) -> BTreeMap<String, T> {
    let mut out = BTreeMap::new();
    for found in list(&loader.root, folder, &["toml"]) {
        let Some((id, doc)) = loader.read_toml(&found) else {
            continue;
        };
        let mut r = loader.reader(id);
        let root = doc.as_table();
        r.check_keys(root, keys, &format!("{kind} `{}`", found.stem));
        let value = read(&mut r, root, &found, id);
        out.insert(found.stem.clone(), value);
    }
    out
}

fn load_schemas(loader: &mut Loader) -> BTreeMap<String, ColumnSet> {
    load_named(
        loader,
        "schemas",
        SCHEMA_KEYS,
        "schema",
        |r, root, found, id| ColumnSet {
            name: found.stem.clone(),
            file: id,
            description: r.string(root, "description"),
            columns: read_columns(r, root, &format!("schema `{}`", found.stem)),
        },
    )
}

fn load_enums(loader: &mut Loader) -> BTreeMap<String, EnumDef> {
    load_named(loader, "enums", ENUM_KEYS, "enum", |r, root, found, id| {
        let description = r.string(root, "description");
        let (members, base) = read_members(r, root, &found.stem);
        EnumDef {
            name: found.stem.clone(),
            file: id,
            description,
            members,
            base,
        }
    })
}

type Members = Vec<(Spanned<String>, Spanned<String>)>;

fn read_members(
    r: &mut Reader<'_>,
    root: &dyn TableLike,
    name: &str,
) -> (Members, Option<EnumBase>) {
    let mut members = Vec::new();
    let mut strings: Option<Loc> = None;
    let mut integers: Option<Loc> = None;
    let Some(table) = r.table(root, "members") else {
        if !root.contains_key("members") {
            r.missing(
                Loc::file_start(r.file),
                "members",
                &format!("enum `{name}`"),
                "list the members: `[members]` then `DELIVERY = \"delivery\"`",
            );
        }
        return (members, None);
    };
    for (key, item) in table.iter() {
        let loc = r.value_loc(table, key);
        let value = match item {
            Item::Value(v) if v.as_str().is_some() => {
                strings.get_or_insert(loc.clone());
                v.as_str().unwrap_or_default().to_string()
            }
            Item::Value(v) if v.as_integer().is_some() => {
                integers.get_or_insert(loc.clone());
                v.as_integer().unwrap_or_default().to_string()
            }
            _ => {
                r.diags.push(
                    Diagnostic::error(
                        Code::WrongValueType,
                        format!("member `{key}` of enum `{name}` must be a string or an integer"),
                    )
                    .at(loc, "expected a string or an integer"),
                );
                continue;
            }
        };
        if let Some((first, _)) = members
            .iter()
            .find(|(_, v): &&(Spanned<String>, Spanned<String>)| v.value == value)
        {
            r.diags.push(
                Diagnostic::error(
                    Code::DuplicateEnumValue,
                    format!("enum `{name}` has the value `{value}` twice"),
                )
                .at(loc.clone(), "repeated value")
                .related(
                    first.loc.clone(),
                    format!("first used by `{}`", first.value),
                ),
            );
        }
        members.push((
            Spanned::new(key.to_string(), r.key_loc(table, key)),
            Spanned::new(value, loc),
        ));
    }
    let base = match (strings, integers) {
        (Some(s), Some(i)) => {
            r.diags.push(
                Diagnostic::error(Code::MixedEnumMembers, format!("enum `{name}` mixes string and integer members"))
                    .at(i, "an integer member")
                    .related(s, "a string member")
                    .hint("an enum resolves to VARCHAR or INTEGER: make every member a string, or every member an integer"),
            );
            None
        }
        (Some(_), None) => Some(EnumBase::Varchar),
        (None, Some(_)) => Some(EnumBase::Integer),
        (None, None) => {
            r.diags.push(
                Diagnostic::error(Code::EmptyEnum, format!("enum `{name}` has no members"))
                    .at(r.key_loc(root, "members"), "empty")
                    .hint("add members such as `DELIVERY = \"delivery\"`"),
            );
            None
        }
    };
    (members, base)
}

/// What `contracts/` holds: metric bindings, guardrails, finality rules, assertions and the
/// tenancy and roles policies, each kind by where it is. A file anywhere else under
/// `contracts/` is no contract sqb knows: said, never silently passed.
fn load_contracts(loader: &mut Loader) -> (Vec<MetricBinding>, Contracts) {
    let found = list(&loader.root, "contracts", &["toml"]);
    let texts = read_all(&loader.stamps, &found, |f| [Some(f)]);
    let mut files: Vec<(FileId, ContractKind, &str)> = Vec::new();
    for (found, [text]) in found.iter().zip(texts) {
        let Some(id) = text.and_then(|t| loader.add_found(found, t)) else {
            continue;
        };
        match contract_kind(&found.rel) {
            Some(kind) => files.push((id, kind, &found.rel)),
            None => loader.diags.push(
                Diagnostic::warning(
                    Code::ContractNotChecked,
                    format!("{} is no kind of contract sqb knows", found.rel),
                )
                .at(Loc::file_start(id), "not read")
                .hint("contracts/ holds metrics/*.toml, guardrails/*.toml (finality rules as guardrails/finality-*.toml), assertions/*.toml, policies/tenancy.toml and policies/roles.toml; nothing enforces this file"),
            ),
        }
    }
    // Parsed on every core (a large project has thousands of contract files), except those
    // the contracts cache holds unchanged.
    let sources = &loader.sources;
    let pending: Vec<super::cache::Sidecar<'_>> = files
        .iter()
        .map(|&(file, kind, _)| super::cache::Sidecar {
            file,
            model: kind.label(),
        })
        .collect();
    let parsed = tracing::debug_span!("contract files parsed").in_scope(|| {
        let cache = super::cache::CONTRACTS;
        let by_file: HashMap<FileId, (ContractKind, &str)> = files
            .iter()
            .map(|&(id, kind, rel)| (id, (kind, rel)))
            .collect();
        super::cache::parse_all(
            cache,
            &loader.root,
            loader.use_cache,
            sources,
            &pending,
            |s| {
                let (kind, rel) = by_file[&s.file];
                parse_contract(sources, s.file, kind, rel)
            },
        )
    });
    let mut metrics = Vec::new();
    let mut contracts = Contracts::default();
    for (contract, diags) in parsed {
        loader.diags.extend(diags);
        match contract {
            Some(Contract::Metric(m)) => metrics.push(*m),
            Some(Contract::Guardrail(g)) => contracts.guardrails.push(*g),
            Some(Contract::Finality(f)) => contracts.finality.push(*f),
            Some(Contract::Assertion(a)) => contracts.assertions.push(*a),
            Some(Contract::Tenancy(t)) => contracts.tenancy = Some(*t),
            Some(Contract::Roles(r)) => contracts.roles = Some(*r),
            None => {}
        }
    }
    (metrics, contracts)
}

#[derive(serde::Serialize, serde::Deserialize)]
enum Contract {
    Metric(Box<MetricBinding>),
    Guardrail(Box<super::contracts::Guardrail>),
    Finality(Box<super::contracts::Finality>),
    Assertion(Box<super::contracts::Assertion>),
    Tenancy(Box<super::policies::Tenancy>),
    Roles(Box<super::policies::Roles>),
}

/// Parses one contract file; `None` when it is not valid TOML (reported).
fn parse_contract(
    sources: &SourceMap,
    id: FileId,
    kind: ContractKind,
    rel: &str,
) -> (Option<Contract>, Vec<Diagnostic>) {
    parse_file(sources, id, |r, root| match kind {
        ContractKind::Metric => Contract::Metric(Box::new(read_binding(r, root, id, rel))),
        ContractKind::Guardrail => Contract::Guardrail(Box::new(read_guardrail(r, root, id))),
        ContractKind::Finality => Contract::Finality(Box::new(read_finality(r, root, id))),
        ContractKind::Assertion => Contract::Assertion(Box::new(read_assertion(r, root, id))),
        ContractKind::Tenancy => Contract::Tenancy(Box::new(read_tenancy(r, root, id))),
        ContractKind::Roles => Contract::Roles(Box::new(read_roles(r, root, id))),
    })
}

#[derive(Clone, Copy)]
enum ContractKind {
    Metric,
    Guardrail,
    Finality,
    Assertion,
    Tenancy,
    Roles,
}

impl ContractKind {
    /// Its name, which the contracts cache keys an entry by beside the path.
    fn label(self) -> &'static str {
        match self {
            ContractKind::Metric => "metric",
            ContractKind::Guardrail => "guardrail",
            ContractKind::Finality => "finality",
            ContractKind::Assertion => "assertion",
            ContractKind::Tenancy => "tenancy",
            ContractKind::Roles => "roles",
        }
    }
}

/// What kind of contract a file under `contracts/` is, by its path.
fn contract_kind(rel: &str) -> Option<ContractKind> {
    let rest = rel.strip_prefix("contracts/")?;
    let (dir, file) = rest.split_once('/')?;
    let nested = file.contains('/');
    Some(match (dir, file) {
        ("metrics", _) => ContractKind::Metric,
        ("guardrails", f) if !nested && f.starts_with("finality-") => ContractKind::Finality,
        ("guardrails", _) => ContractKind::Guardrail,
        ("assertions", _) => ContractKind::Assertion,
        ("policies", "tenancy.toml") => ContractKind::Tenancy,
        ("policies", "roles.toml") => ContractKind::Roles,
        _ => return None,
    })
}

fn load_sources(loader: &mut Loader) -> Vec<SourceTable> {
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
                schema,
                name: Spanned::new(name.to_string(), name_loc),
            });
        }
    }
    out
}

/// Parses every declared column type, reporting malformed and unknown types.
fn resolve_types(project: &mut Project, engine: Engine) {
    let enum_names: Vec<String> = project.enums.keys().cloned().collect();
    let mut diags = Vec::new();
    // A large project spells a few dozen types hundreds of thousands of times: each spelling that
    // resolves cleanly is resolved once. One that does not is resolved at each use, to locate it.
    let mut resolved: foldhash::HashMap<Arc<str>, Arc<DataType>> = Default::default();
    let mut resolve = |col: &mut Column, sources: &SourceMap| {
        let Some(text) = &col.type_text else { return };
        if let Some(ty) = resolved.get(&*text.value) {
            col.ty = Some(ty.clone());
            return;
        }
        let before = diags.len();
        col.ty = resolve_one(text, engine, &enum_names, sources, &mut diags).map(Arc::new);
        if let (Some(ty), true) = (&col.ty, diags.len() == before) {
            resolved.insert(text.value.clone(), ty.clone());
        }
    };
    for model in &mut project.models {
        model
            .columns
            .iter_mut()
            .for_each(|c| resolve(c, &project.sources));
    }
    for set in project.schemas.values_mut() {
        set.columns
            .iter_mut()
            .for_each(|c| resolve(c, &project.sources));
    }
    for source in &mut project.source_tables {
        source
            .columns
            .iter_mut()
            .for_each(|c| resolve(c, &project.sources));
    }
    project.diagnostics.extend(diags);
}

fn resolve_one(
    text: &Spanned<Arc<str>>,
    engine: Engine,
    enums: &[String],
    sources: &SourceMap,
    diags: &mut Vec<Diagnostic>,
) -> Option<DataType> {
    let ty = match types::parse(&text.value, engine) {
        Ok(ty) => ty,
        Err(err) => {
            let loc = offset_in_string(text, err.offset, sources);
            diags.push(
                Diagnostic::error(
                    Code::UnknownType,
                    format!("invalid type `{}`: {err}", text.value),
                )
                .at(loc, err.message.clone())
                .hint(
                    "write a type such as \"VARCHAR(255)\", \"NUMERIC(18,2)\" or \"TIMESTAMPTZ\"",
                ),
            );
            return None;
        }
    };
    for name in ty.named_types() {
        if types::is_recognized_named(name, engine)
            || enums.iter().any(|e| e.eq_ignore_ascii_case(name))
        {
            continue;
        }
        // A name that is a built-in but for case was quoted (Postgres's one-byte `"char"` is
        // not CHAR): offering the built-in would suggest another type.
        let candidates = BUILTIN_NAMES
            .iter()
            .copied()
            .chain(enums.iter().map(String::as_str))
            .filter(|c| !c.eq_ignore_ascii_case(name));
        let quoted = format!("\"{name}\"");
        let hint = match did_you_mean(name, candidates) {
            Some(close) => format!("did you mean `{close}`?"),
            None if text.value.contains(&quoted) => format!(
                "a quoted name is a type of its own, not the built-in of that name: qualify it with its schema, such as \"pg_catalog.{quoted}\""
            ),
            None => "declare the enum under enums/, or qualify a user-defined type with its schema, such as \"public.my_domain\"".to_string(),
        };
        let shown = if text.value.eq_ignore_ascii_case(name) || *text.value == *quoted {
            &*text.value
        } else {
            name
        };
        diags.push(
            Diagnostic::error(Code::UnknownType, format!("unknown type or enum `{shown}`"))
                .at(text.loc.clone(), "not a known type or enum")
                .hint(hint),
        );
        return None;
    }
    Some(ty)
}

/// The location of byte `offset` inside a TOML string value, skipping its opening quote.
fn offset_in_string<T>(text: &Spanned<T>, offset: usize, sources: &SourceMap) -> Loc {
    let raw = sources.get(text.loc.file).text();
    let span = text.loc.span();
    let quote = raw.get(span.start..span.start + 3).map_or(1, |s| {
        if s == "\"\"\"" || s == "'''" {
            3
        } else {
            1
        }
    });
    let start = (span.start + quote + offset).min(span.end.saturating_sub(quote).max(span.start));
    Loc::new(text.loc.file, start..(start + 1).min(span.end))
}

/// Type names offered in did-you-mean hints.
const BUILTIN_NAMES: &[&str] = &[
    "INTEGER",
    "BIGINT",
    "SMALLINT",
    "TINYINT",
    "HUGEINT",
    "NUMERIC",
    "DECIMAL",
    "REAL",
    "DOUBLE",
    "FLOAT",
    "VARCHAR",
    "CHAR",
    "TEXT",
    "STRING",
    "BOOLEAN",
    "DATE",
    "TIME",
    "TIMESTAMP",
    "TIMESTAMPTZ",
    "INTERVAL",
    "UUID",
    "JSON",
    "JSONB",
    "BYTEA",
    "BLOB",
    "STRUCT",
    "MAP",
    "LIST",
    "UNION",
    "ENUM",
];

/// Reads each import's snapshot and baseline. A file that is missing, unreadable, not a
/// snapshot, edited, or too new is an error at the import's key (never a silent skip), as is a
/// snapshot that does not match a concrete `pin`.
fn load_imports(loader: &mut Loader, decls: &[super::ImportDecl]) -> Vec<super::Import> {
    decls
        .iter()
        .map(|decl| {
            let dir = loader.root.join(&decl.path.value);
            let mut fingerprint = String::new();
            // The baseline is most often the snapshot itself: the same bytes are parsed once.
            let mut last: Option<(String, crate::team_contracts::snapshot::Snapshot)> = None;
            let mut read = |file: &Spanned<String>, role: &str| {
                let path = dir.join(&file.value);
                let shown = super::rel_path(&loader.root, &path);
                let failed = |code, message: String, hint: &str| {
                    Diagnostic::error(code, message)
                        .at(file.loc.clone(), format!("the {role} of import `{}`", decl.name))
                        .hint(hint.to_string())
                };
                let bytes = match std::fs::read(&path) {
                    Ok(bytes) => bytes,
                    Err(e) => {
                        fingerprint.push_str(&format!("{e};"));
                        loader.diags.push(failed(
                            Code::ImportUnreadable,
                            format!("cannot read {shown}, the {role} of import `{}`: {e}", decl.name),
                            "vendor the producer's `sqb publish` output there",
                        ));
                        return None;
                    }
                };
                let digest = crate::team_contracts::snapshot::digest(&bytes);
                fingerprint.push_str(&format!("{}:{digest};", bytes.len()));
                if let Some((_, parsed)) = last.as_ref().filter(|(d, _)| *d == digest) {
                    return Some(parsed.clone());
                }
                match crate::team_contracts::snapshot::parse(&bytes) {
                    Ok(snapshot) => {
                        last = Some((digest, snapshot.clone()));
                        Some(snapshot)
                    }
                    Err(crate::team_contracts::snapshot::SnapshotError::TooNew { needed }) => {
                        loader.diags.push(failed(
                            Code::ImportTooNew,
                            format!("{shown}, the {role} of import `{}`, needs snapshot reader version {needed}", decl.name),
                            "upgrade sqb to read it",
                        ));
                        None
                    }
                    Err(e) => {
                        loader.diags.push(failed(
                            Code::ImportUnreadable,
                            format!("{shown}, the {role} of import `{}`, is unusable: {e}", decl.name),
                            "vendor the producer's `sqb publish` output again, unedited",
                        ));
                        None
                    }
                }
            };
            let snapshot = read(&decl.snapshot, "snapshot");
            let baseline = read(&decl.baseline, "baseline");
            if let (Some(pin), Some(snapshot)) = (&decl.pin, &snapshot) {
                if pin.value != "*" && pin.value != snapshot.content_hash {
                    loader.diags.push(
                        Diagnostic::error(
                            Code::ImportPinMismatch,
                            format!(
                                "the snapshot of import `{}` is {}, not the pinned {}",
                                decl.name, snapshot.content_hash, pin.value
                            ),
                        )
                        .at(pin.loc.clone(), "pinned here")
                        .hint("review the change (`sqb compile` lists what it breaks), then update the pin"),
                    );
                }
            }
            super::Import {
                decl: decl.clone(),
                snapshot,
                baseline,
                fingerprint,
            }
        })
        .collect()
}
