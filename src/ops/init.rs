//! `sqb init`: a new project from a warehouse that already exists. It connects read-only, lists
//! the user schemas, reads every relation of the chosen ones, and writes `sqb.toml` (the
//! connection without its password, one target per schema), `sources/<schema>.toml` (every
//! relation with its exact types and nullability) and a `.gitignore`, in one transaction that
//! compiles the new project and removes every file again if it does not compile.

use std::path::{Path, PathBuf};

use crate::catalog::{PhysicalRelation, RelationKind};
use crate::contract::adoption::{file_stem, SourceNames};
use crate::contract::plan::portable_type;
use crate::diagnostics::did_you_mean;
use crate::edit::transaction::{self, FileChange, STATE_DIR};
use crate::engine::Engine;
use crate::error::UserError;
pub use crate::report::init::{Adopted, Initialized, Left};
use crate::warehouse::session::{self, Connect, Survey};
use crate::warehouse::{SchemaListing, Timeouts};

/// What `sqb init` is asked to do.
#[derive(Debug, Clone)]
pub struct InitOptions {
    /// The project directory (created when missing).
    pub dir: PathBuf,
    pub engine: Engine,
    /// Postgres: the connection URL. Default: `SQB_DATABASE_URL`, else libpq's environment.
    pub url: Option<String>,
    /// DuckDB: the database file.
    pub path: Option<PathBuf>,
    /// The schemas to adopt. Default: every user schema that holds a relation.
    pub schemas: Vec<String>,
    /// The name of the default target. Default: the default schema's own name.
    pub target: Option<String>,
    /// Replace an existing `sqb.toml` and the source files init writes.
    pub force: bool,
    pub timeouts: Timeouts,
}

/// How the project will connect: what goes under `[connection]`, and how init connects now.
struct Connection {
    engine: Engine,
    connect: Connect,
    /// `url = …` (Postgres, without a password) or `path = …` (DuckDB, relative to the root).
    written: (&'static str, String),
    password_dropped: bool,
}

/// Runs `sqb init`.
pub fn init(options: &InitOptions) -> anyhow::Result<Initialized> {
    let root = options.dir.clone();
    refuse_existing(&root, options.force)?;
    let connection = connection(options)?;
    let wanted = (!options.schemas.is_empty()).then(|| options.schemas.clone());
    let survey = session::survey(connection.connect.clone(), wanted)?;
    check_wanted(&survey.schemas, &options.schemas, connection.engine)?;
    let chosen = chosen_schemas(&survey, &options.schemas)?;
    let default_schema = default_schema(&chosen, &options.schemas, connection.engine);
    let targets = target_names(&chosen, &default_schema, options.target.as_deref())?;
    let plan = render(
        &root,
        &connection,
        &survey,
        &chosen,
        &targets,
        &default_schema,
    );
    if !options.force {
        refuse_overwrite(&root, &plan.changes)?;
    }
    let warnings = write(&root, &plan.changes)?;
    Ok(Initialized {
        files: plan.changes.iter().map(|c| c.rel_path.clone()).collect(),
        root,
        schemas: plan.adopted,
        other_schemas: survey
            .schemas
            .iter()
            .map(|s| s.schema.clone())
            .filter(|s| !chosen.contains(s))
            .collect(),
        left_out: plan.left_out,
        default_target: targets[&default_schema].clone(),
        password_dropped: connection.password_dropped,
        warnings,
    })
}

fn refuse_existing(root: &Path, force: bool) -> anyhow::Result<()> {
    let config = root.join(crate::project::PROJECT_FILE);
    if config.exists() && !force {
        return Err(UserError::new(format!(
            "{} already exists: this directory is a project",
            config.display()
        ))
        .with_hint("pass --force to replace sqb.toml and the source files init writes")
        .into());
    }
    if root.exists() && !root.is_dir() {
        return Err(UserError::new(format!("{} is not a directory", root.display())).into());
    }
    Ok(())
}

/// Without --force, no file of someone else's is replaced.
fn refuse_overwrite(root: &Path, changes: &[FileChange]) -> Result<(), UserError> {
    match changes.iter().find(|c| c.expected_prior.is_some()) {
        Some(taken) => Err(UserError::new(format!(
            "{} already exists",
            root.join(&taken.rel_path).display()
        ))
        .with_hint("pass --force to replace it, or init into another directory")),
        None => Ok(()),
    }
}

/// The engine, how to connect now, and what to write under `[connection]`.
fn connection(options: &InitOptions) -> anyhow::Result<Connection> {
    match options.engine.in_process() {
        true => duckdb_connection(options, options.engine),
        false => postgres_connection(options, options.engine),
    }
}

fn postgres_connection(options: &InitOptions, engine: Engine) -> anyhow::Result<Connection> {
    if options.path.is_some() {
        return Err(UserError::new("--path names a DuckDB file; Postgres takes --url").into());
    }
    let given = options.url.clone().or_else(|| {
        std::env::var(super::DATABASE_URL_ENV)
            .ok()
            .filter(|u| !u.is_empty())
    });
    let url = given.unwrap_or_else(crate::warehouse::postgres::environment_url);
    if !engine.takes_url(&url) {
        return Err(UserError::new(format!(
            "`{}` is not a Postgres URL",
            crate::redact::redact(&url)
        ))
        .with_hint(format!("it starts with {}", engine.url_forms()))
        .into());
    }
    crate::redact::register_url(&url);
    let (written, password_dropped) = without_password(&url)?;
    let connect = Connect::new(engine, Some(url), PathBuf::new(), options.timeouts)?;
    Ok(Connection {
        engine,
        connect,
        written: ("url", written),
        password_dropped,
    })
}

fn duckdb_connection(options: &InitOptions, engine: Engine) -> anyhow::Result<Connection> {
    if options.url.is_some() {
        return Err(UserError::new("--url names a Postgres server; DuckDB takes --path").into());
    }
    let Some(path) = &options.path else {
        return Err(UserError::new("a DuckDB warehouse needs --path FILE")
            .with_hint("sqb reads an existing DuckDB file, opened read-only")
            .into());
    };
    let absolute = std::path::absolute(path)
        .map_err(|e| anyhow::anyhow!("could not resolve {}: {e}", path.display()))?;
    if !absolute.is_file() {
        let what = match absolute.exists() {
            true => "is not a file",
            false => "does not exist",
        };
        return Err(UserError::new(format!(
            "DuckDB database {} {what}",
            absolute.display()
        ))
        .with_hint(
            "--path names an existing DuckDB file: sqb opens it read-only and never creates one",
        )
        .into());
    }
    let root = std::path::absolute(&options.dir)
        .map_err(|e| anyhow::anyhow!("could not resolve {}: {e}", options.dir.display()))?;
    let written = relative_to(&absolute, &root);
    let connect = Connect::new(engine, None, absolute, options.timeouts)?;
    Ok(Connection {
        engine,
        connect,
        written: ("path", written),
        password_dropped: false,
    })
}

/// `url` without its password (in the user info, or a `password=` parameter), and whether it
/// had one.
fn without_password(url: &str) -> anyhow::Result<(String, bool)> {
    let mut parsed = url::Url::parse(url).map_err(|e| {
        UserError::new(format!("invalid Postgres connection URL: {e}"))
            .with_hint("the URL looks like postgres://user@host:5432/database")
    })?;
    let mut dropped = parsed.password().is_some();
    if dropped {
        let _ = parsed.set_password(None);
    }
    let pairs: Vec<(String, String)> = parsed
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    if pairs.iter().any(|(k, _)| k == "password") {
        dropped = true;
        let kept: Vec<&(String, String)> = pairs.iter().filter(|(k, _)| k != "password").collect();
        match kept.is_empty() {
            true => parsed.set_query(None),
            false => {
                parsed.query_pairs_mut().clear().extend_pairs(kept);
            }
        }
    }
    Ok((parsed.to_string(), dropped))
}

/// `path` relative to `base` where they share more than the root (with `..` steps), else as
/// it is.
fn relative_to(path: &Path, base: &Path) -> String {
    let path_parts: Vec<_> = path.components().collect();
    let base_parts: Vec<_> = base.components().collect();
    let common = path_parts
        .iter()
        .zip(&base_parts)
        .take_while(|(a, b)| a == b)
        .count();
    let only_root = path_parts.get(..common).is_none_or(|shared| {
        shared
            .iter()
            .all(|c| !matches!(c, std::path::Component::Normal(_)))
    });
    if only_root {
        return path.display().to_string();
    }
    let mut relative = PathBuf::new();
    for _ in common..base_parts.len() {
        relative.push("..");
    }
    for part in &path_parts[common..] {
        relative.push(part);
    }
    relative.display().to_string().replace('\\', "/")
}

/// Every schema `--schema` names must exist.
fn check_wanted(listed: &[SchemaListing], wanted: &[String], engine: Engine) -> anyhow::Result<()> {
    for name in wanted {
        if listed.iter().any(|l| &l.schema == name) {
            continue;
        }
        let names = listed.iter().map(|l| l.schema.as_str());
        let mut error = UserError::new(format!("schema `{name}` does not exist"));
        error = match did_you_mean(name, names.clone()) {
            Some(close) => error.with_hint(format!("did you mean `{close}`?")),
            None => error.with_hint(format!(
                "the {} schemas are: {}",
                engine.title(),
                names
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        };
        return Err(error.into());
    }
    Ok(())
}

/// The schemas to adopt: the ones named, else every one that holds a relation.
fn chosen_schemas(survey: &Survey, wanted: &[String]) -> anyhow::Result<Vec<String>> {
    if !wanted.is_empty() {
        let mut chosen: Vec<String> = Vec::new();
        for name in wanted {
            if !chosen.contains(name) {
                chosen.push(name.clone());
            }
        }
        return Ok(chosen);
    }
    let chosen: Vec<String> = survey
        .schemas
        .iter()
        .filter(|s| !s.relations.is_empty())
        .map(|s| s.schema.clone())
        .collect();
    if chosen.is_empty() {
        let listed = survey
            .schemas
            .iter()
            .map(|s| format!("`{}`", s.schema))
            .collect::<Vec<_>>()
            .join(", ");
        return Err(
            UserError::new("no schema of the warehouse holds a table or view")
                .with_hint(format!(
                "the schemas are: {listed}; name one with --schema to start from an empty schema"
            ))
                .into(),
        );
    }
    Ok(chosen)
}

/// The schema of the default target: the first named, else the engine's usual one (`public`,
/// `main`) when adopted, else the first.
fn default_schema(chosen: &[String], wanted: &[String], engine: Engine) -> String {
    if let Some(first) = wanted.first() {
        return first.clone();
    }
    match chosen.iter().find(|s| *s == engine.default_schema()) {
        Some(s) => s.clone(),
        None => chosen[0].clone(),
    }
}

/// One target per schema, named after it; `--target` names the default schema's.
fn target_names(
    chosen: &[String],
    default_schema: &str,
    target: Option<&str>,
) -> anyhow::Result<std::collections::BTreeMap<String, String>> {
    let mut names = std::collections::BTreeMap::new();
    for schema in chosen {
        let name = match (schema == default_schema, target) {
            (true, Some(t)) => t.to_string(),
            _ => schema.clone(),
        };
        if let Some(clash) = names.values().find(|n| **n == name) {
            return Err(UserError::new(format!(
                "--target `{name}` is already the target of schema `{clash}`"
            ))
            .with_hint("choose another target name")
            .into());
        }
        names.insert(schema.clone(), name);
    }
    Ok(names)
}

/// The files to write, and what they hold.
struct Plan {
    changes: Vec<FileChange>,
    adopted: Vec<Adopted>,
    left_out: Vec<Left>,
}

fn render(
    root: &Path,
    connection: &Connection,
    survey: &Survey,
    chosen: &[String],
    targets: &std::collections::BTreeMap<String, String>,
    default_schema: &str,
) -> Plan {
    let mut names = SourceNames::default();
    let mut files = FileNames::default();
    let mut changes = Vec::new();
    let mut adopted = Vec::new();
    let mut left_out = Vec::new();
    for schema in chosen {
        let relations = survey
            .read
            .iter()
            .find(|(s, _)| s == schema)
            .map_or(&[][..], |(_, r)| r.as_slice());
        let (mut readable, unreadable): (Vec<_>, Vec<_>) =
            relations.iter().partition(|r| r.unavailable.is_none());
        readable.sort_by_key(|r| (r.name.to_lowercase(), r.name.clone()));
        left_out.extend(unreadable.iter().map(|r| Left {
            schema: schema.clone(),
            relation: r.name.clone(),
            reason: r.unavailable.clone().unwrap_or_default(),
        }));
        let file = (!readable.is_empty()).then(|| files.name(schema));
        if let Some(file) = &file {
            let text = source_file(connection.engine, schema, &readable, &mut names);
            changes.push(new_file(root, file, text));
        }
        adopted.push(Adopted {
            schema: schema.clone(),
            target: targets[schema].clone(),
            file,
            relations: readable.len(),
            columns: readable.iter().map(|r| r.columns.len()).sum(),
        });
    }
    let config = config_file(root, connection, chosen, targets, default_schema);
    changes.insert(0, new_file(root, crate::project::PROJECT_FILE, config));
    if !root.join(".gitignore").exists() {
        changes.push(new_file(root, ".gitignore", GITIGNORE.to_string()));
    }
    Plan {
        changes,
        adopted,
        left_out,
    }
}

const GITIGNORE: &str = "# sqb's cache, lock and write journal: safe to delete, never to commit.\n.sqb/\n# Each developer's own overrides of sqb.toml.\nsqb.local.toml\n";

/// A file to create, or (with --force) to replace whatever it holds now.
fn new_file(root: &Path, rel_path: &str, content: String) -> FileChange {
    FileChange {
        rel_path: rel_path.to_string(),
        expected_prior: std::fs::read_to_string(root.join(rel_path)).ok(),
        content,
    }
}

fn config_file(
    root: &Path,
    connection: &Connection,
    chosen: &[String],
    targets: &std::collections::BTreeMap<String, String>,
    default_schema: &str,
) -> String {
    let name = std::path::absolute(root)
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "warehouse".to_string());
    let mut out = String::new();
    out.push_str("# Written by `sqb init` from the warehouse's catalog.\n\n");
    out.push_str("# The project's name, shown in reports.\n");
    out.push_str(&format!("name = {}\n", toml_string(&name)));
    out.push_str("# The target commands read when --from is not given.\n");
    out.push_str(&format!(
        "default_target = {}\n\n",
        toml_string(&targets[default_schema])
    ));
    out.push_str("[connection]\n");
    out.push_str(&format!(
        "engine = {}\n",
        toml_string(connection.engine.as_str())
    ));
    let (key, value) = &connection.written;
    match *key {
        "url" => out.push_str(
            "# No password here: sqb takes it from PGPASSWORD or ~/.pgpass, or the whole URL from\n# SQB_DATABASE_URL, which overrides this one.\n",
        ),
        _ => out.push_str("# The DuckDB file, relative to this directory; opened read-only.\n"),
    }
    out.push_str(&format!("{key} = {}\n", toml_string(value)));
    for schema in chosen {
        out.push_str(&format!(
            "\n# Schema `{}`: `--from {}` reads it.\n[targets.{}]\nschema = {}\n",
            schema.replace('\n', " "),
            targets[schema].replace('\n', " "),
            toml_key(&targets[schema]),
            toml_string(schema)
        ));
    }
    out.push_str(
        "\n[settings]\n# Models are checked against their columns only once they say `contract = \"enforced\"`.\ncolumn_contract_mode = \"explicit\"\n",
    );
    out.push_str("# Every relation of these schemas is declared: `sqb contract diff` reports a new one, and\n# `sqb contract generate --write` declares it.\n");
    let adopted: Vec<String> = chosen.iter().map(|s| toml_string(s)).collect();
    out.push_str(&format!("adopted_schemas = [{}]\n", adopted.join(", ")));
    out
}

/// `sources/<schema>.toml`: every readable relation, its columns in catalog order.
fn source_file(
    engine: Engine,
    schema: &str,
    relations: &[&PhysicalRelation],
    names: &mut SourceNames,
) -> String {
    let mut out = format!(
        "# The relations of schema `{}`, as `sqb init` read them. `complete = true`: a column\n# added to one is reported by `sqb contract diff`.\n",
        schema.replace('\n', " ")
    );
    for relation in relations {
        let name = names.name(schema, &relation.name);
        out.push_str(&format!("\n[{}]\n", toml_key(&name)));
        if relation.kind != RelationKind::Table {
            out.push_str(&format!("# A {}.\n", relation.kind.as_str()));
        }
        out.push_str(&format!("schema = {}\n", toml_string(schema)));
        if name != relation.name {
            out.push_str(&format!("table = {}\n", toml_string(&relation.name)));
        }
        out.push_str("complete = true\n");
        for column in &relation.columns {
            out.push_str(&format!(
                "\n[{}.columns.{}]\ntype = {}\n",
                toml_key(&name),
                toml_key(&column.name),
                toml_string(&portable_type(engine, column))
            ));
            if column.nullable == Some(false) {
                out.push_str("nullable = false\n");
            }
        }
    }
    out
}

fn toml_string(text: &str) -> String {
    toml_edit::Value::from(text).to_string()
}

fn toml_key(text: &str) -> String {
    toml_edit::Key::new(text).to_string()
}

/// Source file names, one per schema, safe on every filesystem and distinct up to case.
#[derive(Default)]
struct FileNames {
    taken: std::collections::HashSet<String>,
}

impl FileNames {
    fn name(&mut self, schema: &str) -> String {
        let base = file_stem(schema);
        let mut stem = base.clone();
        let mut n = 2;
        while self.taken.contains(&stem) {
            stem = format!("{base}_{n}");
            n += 1;
        }
        self.taken.insert(stem.clone());
        format!("sources/{stem}.toml")
    }
}

/// Writes the files in one transaction that compiles the new project; on any failure every file
/// is removed again, and so are the directories init created. Returns the warnings count.
fn write(root: &Path, changes: &[FileChange]) -> anyhow::Result<usize> {
    let created: Vec<PathBuf> = [
        root.to_path_buf(),
        root.join("sources"),
        root.join(STATE_DIR),
    ]
    .into_iter()
    .filter(|d| !d.exists())
    .collect();
    let result = std::fs::create_dir_all(root)
        .map_err(|e| anyhow::anyhow!("could not create {}: {e}", root.display()))
        .and_then(|()| apply(root, changes));
    if result.is_err() {
        for dir in created.iter().rev() {
            let _ = match dir.ends_with(STATE_DIR) {
                true => std::fs::remove_dir_all(dir),
                false => std::fs::remove_dir(dir),
            };
        }
    }
    result
}

fn apply(root: &Path, changes: &[FileChange]) -> anyhow::Result<usize> {
    let mut warnings = 0;
    let check = || -> Result<(), String> {
        let project = crate::project::Project::load(root).map_err(|e| format!("error: {e}"))?;
        let (diags, _) = crate::compile::compile_cached(&project, Default::default(), false);
        let errors = crate::diagnostics::render_errors(&diags, &project.sources);
        warnings = diags.iter().filter(|d| !d.is_error()).count();
        match errors.is_empty() {
            true => Ok(()),
            false => Err(errors.join("\n\n")),
        }
    };
    match transaction::apply(root, changes, check) {
        Ok(Ok(())) => Ok(warnings),
        Ok(Err(rendered)) => Err(UserError::new(
            "the project init wrote does not compile; nothing was kept",
        )
        .with_hint("this is a bug in sqb init: please report it with the errors above")
        .with_diagnostics(rendered)
        .into()),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_is_never_kept() {
        let (url, dropped) = without_password("postgres://ann:s3cr%40t@db:5432/shop").unwrap();
        assert_eq!(
            (url.as_str(), dropped),
            ("postgres://ann@db:5432/shop", true)
        );
        let (url, dropped) =
            without_password("postgres://ann@db/shop?sslmode=require&password=x").unwrap();
        assert_eq!(
            (url.as_str(), dropped),
            ("postgres://ann@db/shop?sslmode=require", true)
        );
        let (url, dropped) = without_password("postgres://db/shop").unwrap();
        assert_eq!((url.as_str(), dropped), ("postgres://db/shop", false));
    }

    #[test]
    fn paths_are_written_relative_to_the_project() {
        let root = Path::new("/w/project");
        assert_eq!(
            relative_to(Path::new("/w/project/wh.duckdb"), root),
            "wh.duckdb"
        );
        assert_eq!(
            relative_to(Path::new("/w/data/wh.duckdb"), root),
            "../data/wh.duckdb"
        );
    }
}
