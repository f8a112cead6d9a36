//! Reading a project from disk into the [`Project`] model, one phase a file: the project file
//! here, then `named` (schemas and enums), `sources`, `models`, `team_imports`, `contract_files`, and
//! last `declared_types`, which resolves the declared types once everything is read.

mod contract_files;
mod declared_types;
mod models;
mod named;
mod sources;
mod team_imports;

use contract_files::*;
use declared_types::*;
use models::*;
use named::*;
use sources::*;
use team_imports::*;

#[cfg(test)]
pub(in crate::project) use models::parse_sidecar_toml;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use toml_edit::{Document, Item, TableLike};

use super::columns::{read_columns, read_model_props};
use super::config::{finish, merge, read_raw, RawConfig};
use super::contracts::{read_assertion, read_finality, read_guardrail, read_saved_query};
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
    /// `models/`, listed once (see [`ProjectFile::model_files`]).
    model_files: std::sync::Arc<super::ModelFiles>,
}

/// A parsed TOML file; `None` when it could not be read or parsed (already reported).
type Parsed = Option<(FileId, Document<String>)>;

impl Loader {
    fn new(root: &Path, use_cache: bool) -> Loader {
        Loader {
            root: root.to_path_buf(),
            sources: SourceMap::default(),
            diags: Vec::new(),
            use_cache,
            stamps: Stamps::open(root, false),
            stamped: Vec::new(),
            model_files: super::ModelFiles::new(root),
        }
    }

    /// The project: what was loaded, with the files read and every diagnostic found.
    fn into_project(self, config: super::Config, parts: Parts) -> Project {
        Project {
            root: self.root,
            sources: self.sources,
            config,
            models: parts.models,
            schemas: parts.schemas,
            enums: parts.enums,
            source_tables: parts.source_tables,
            imports: parts.imports,
            metrics: parts.metrics,
            contracts: parts.contracts,
            audit_defs: parts.audit_defs,
            diagnostics: self.diags,
        }
    }

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
        Project::begin(root, use_cache).finish()
    }

    /// Reads the project file alone (`sqb.toml` and `sqb.local.toml`), for a caller that
    /// starts work on it (connecting to the warehouse) before the rest is loaded by
    /// [`ProjectFile::finish`]: each file is read once.
    pub fn begin(root: &Path, use_cache: bool) -> ProjectFile {
        let mut loader = Loader::new(root, use_cache);
        let config = load_config(&mut loader);
        // The file stamps are read once the caller has started what it starts.
        ProjectFile { loader, config }
    }
}

/// The project file read, the rest of the project not yet: see [`Project::begin`].
pub struct ProjectFile {
    loader: Loader,
    config: Result<super::Config, LoadError>,
}

impl ProjectFile {
    /// The configuration, unless the project file could not be read or has errors (which
    /// loading the whole project then reports).
    pub fn config(&self) -> Option<&super::Config> {
        let errors = self.loader.diags.iter().any(Diagnostic::is_error);
        self.config.as_ref().ok().filter(|_| !errors)
    }

    /// The files of `models/`, for a caller that wants the model names before the project is
    /// loaded: listed once, by whichever of it and [`ProjectFile::finish`] asks first.
    pub fn model_files(&self) -> std::sync::Arc<super::ModelFiles> {
        std::sync::Arc::clone(&self.loader.model_files)
    }

    /// Loads the rest of the project.
    pub fn finish(self) -> Result<Project, LoadError> {
        let ProjectFile { mut loader, config } = self;
        let config = config?;
        if config.unparsed {
            // Everything else is read in the project's engine, which the project file names:
            // its syntax error is the one diagnostic.
            return Ok(loader.into_project(config, Parts::default()));
        }
        loader.stamps = Stamps::open(&loader.root, loader.use_cache);
        let engine = config.connection.engine;
        let enums = load_enums(&mut loader);
        let schemas = load_schemas(&mut loader);
        let source_tables = load_sources(&mut loader);
        check_path_defaults(&mut loader, &config.path_defaults);
        let models = load_models(&mut loader, &config.path_defaults);
        let imports = load_imports(&mut loader, &config.imports);
        let (metrics, contracts) = load_contracts(&mut loader);
        let audit_defs = load_audit_defs(&mut loader);
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
        let parts = Parts {
            models,
            schemas,
            enums,
            source_tables,
            imports,
            metrics,
            contracts,
            audit_defs,
        };
        let mut project = loader.into_project(config, parts);
        tracing::debug_span!("declared types resolved")
            .in_scope(|| resolve_types(&mut project, engine));
        Ok(project)
    }
}

/// What a project holds besides its files, configuration and diagnostics: empty when the
/// project file does not parse.
#[derive(Default)]
struct Parts {
    models: Vec<Model>,
    schemas: BTreeMap<String, ColumnSet>,
    enums: BTreeMap<String, EnumDef>,
    source_tables: Vec<SourceTable>,
    imports: Vec<super::Import>,
    metrics: Vec<MetricBinding>,
    contracts: Contracts,
    audit_defs: Vec<super::AuditDef>,
}

/// `audits/**/<name>.sql`: the user-defined audits, by file name; their SQL is checked by
/// `compile` (E091).
fn load_audit_defs(loader: &mut Loader) -> Vec<super::AuditDef> {
    list(&loader.root, "audits", &["sql"])
        .iter()
        .filter_map(|f| {
            let file = loader.read(&f.rel, &f.abs)?;
            Some(super::AuditDef {
                name: f.stem.clone(),
                file,
            })
        })
        .collect()
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

/// Reads the files `which` names for each item, on every core, keeping the order; those that
/// `stamps` vouch for are not read.
fn read_all<T: Sync, const N: usize>(
    stamps: &Stamps,
    items: &[T],
    which: impl Fn(&T) -> [Option<&Found>; N] + Sync,
) -> Vec<[Option<stamps::Read>; N]> {
    crate::parallel::map(items, |item| which(item).map(|f| f.map(|f| stamps.read(f))))
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
