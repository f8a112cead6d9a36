//! `sqb.toml` and its optional local override `sqb.local.toml`.
//!
//! Both files are read with the same rules; the local file then overrides the project file
//! field by field (a target's `schema` can change without restating its `database`).

use std::collections::BTreeMap;

use toml_edit::TableLike;

use super::columns::read_model_props;
use super::reader::Reader;
use super::ModelProps;
use crate::diagnostics::{Code, Diagnostic};
use crate::engine::Engine;
use crate::source::{FileId, Loc, Spanned};

/// How models without a `contract` key are validated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ContractMode {
    #[default]
    Implicit,
    Explicit,
}

/// The project's one active connection.
#[derive(Debug, Clone)]
pub struct Connection {
    pub engine: Engine,
    /// DuckDB: the database file, relative to the project root.
    pub path: Option<Spanned<String>>,
    /// Postgres: the connection URL (`SQB_DATABASE_URL` overrides it).
    pub url: Option<Spanned<String>>,
}

/// A named target: only a namespace, never credentials.
#[derive(Debug, Clone)]
pub struct Target {
    pub name: String,
    pub loc: Loc,
    pub database: Option<Spanned<String>>,
    pub schema: Option<Spanned<String>>,
    /// `writable = true`: `sqb promote` may publish into it. Every other command only reads.
    pub writable: Option<Spanned<bool>>,
}

impl Target {
    /// Whether `sqb promote` may write into this target's namespace.
    pub fn is_writable(&self) -> bool {
        self.writable.as_ref().is_some_and(|w| w.value)
    }
}

/// `[serve]`: how `sqb serve` listens and whom it believes (docs/serve.md).
#[derive(Debug, Clone)]
pub struct Serve {
    pub loc: Loc,
    /// `host:port`; default `127.0.0.1:8080`.
    pub listen: Option<Spanned<String>>,
    /// The target it answers from; default `default_target`.
    pub target: Option<Spanned<String>>,
    /// The `iss` every token must carry.
    pub issuer: Option<Spanned<String>>,
    /// The `aud` every token must carry.
    pub audience: Option<Spanned<String>>,
    /// HS256: the environment variable holding the shared secret (never the secret itself).
    pub secret_env: Option<Spanned<String>>,
    /// RS256 / ES256: a JWKS file, relative to the project root.
    pub jwks: Option<Spanned<String>>,
    /// The most rows one answer may hold; a larger answer is refused, never cut.
    pub max_rows: Option<Spanned<i64>>,
    /// The largest request body accepted.
    pub max_request_bytes: Option<Spanned<i64>>,
    /// How long a client may take to send its request body, in milliseconds.
    pub body_timeout_ms: Option<Spanned<i64>>,
    /// How many queries of one tenant may run at once; more are refused with 429.
    pub max_concurrent_per_tenant: Option<Spanned<i64>>,
    /// How many read-only warehouse sessions the server keeps open at most.
    pub connections: Option<Spanned<i64>>,
}

/// `[imports.NAME]`: another project's published snapshot, vendored under `path`.
#[derive(Debug, Clone)]
pub struct ImportDecl {
    pub name: String,
    pub loc: Loc,
    /// The directory holding the vendored files, relative to the project root.
    pub path: Spanned<String>,
    /// The producer's current snapshot (default `current.json`).
    pub snapshot: Spanned<String>,
    /// The reviewed and accepted before-image (default `baseline.json`).
    pub baseline: Spanned<String>,
    /// `*`, or the content hash the snapshot must have.
    pub pin: Option<Spanned<String>>,
    /// `[[imports.NAME.waive]]`: findings accepted for a time.
    pub waivers: Vec<Waiver>,
}

/// One accepted finding about an import: `code` on `column` (`model.column`; for E036, the
/// model) is a note, not an error, until `expires`.
#[derive(Debug, Clone)]
pub struct Waiver {
    pub loc: Loc,
    pub code: Spanned<String>,
    pub column: Spanned<String>,
    pub reason: Spanned<String>,
    /// `YYYY-MM-DD`: the last day it holds.
    pub expires: Spanned<String>,
}

/// The codes a waiver can name: the findings about one read column (or model).
pub const WAIVABLE: &[&str] = &[
    "E030", "E031", "E032", "E036", "E037", "E038", "W030", "W031", "W032",
];

#[derive(Debug, Clone, Default)]
pub struct Settings {
    pub column_contract_mode: ContractMode,
    pub sql_analysis: Option<Spanned<bool>>,
    /// `compare_type_size = false`: `contract diff` compares types without their lengths,
    /// precisions and scales, as dbt's contracts do.
    pub compare_type_size: Option<Spanned<bool>>,
    /// `adopted_schemas`: schemas of the connection's database whose every relation is declared
    /// (as a source or a model); `contract diff` reports any other relation found there.
    pub adopted_schemas: Vec<Spanned<String>>,
}

impl Settings {
    /// Whether `contract diff` compares lengths, precisions and scales (the default).
    pub fn compares_type_size(&self) -> bool {
        self.compare_type_size.as_ref().is_none_or(|c| c.value)
    }
}

/// The merged configuration of `sqb.toml` and `sqb.local.toml`.
#[derive(Debug, Clone)]
pub struct Config {
    pub file: FileId,
    pub name: Option<Spanned<String>>,
    pub default_target: Option<Spanned<String>>,
    pub connection: Connection,
    pub targets: BTreeMap<String, Target>,
    pub settings: Settings,
    pub path_defaults: Vec<(Spanned<String>, ModelProps)>,
    pub imports: Vec<ImportDecl>,
    /// `[semantic] contexts`: the named contexts guardrails and queries may name.
    pub contexts: Vec<Spanned<String>>,
    /// `[serve]`, when the project is served.
    pub serve: Option<Serve>,
    /// `sqb.toml` or `sqb.local.toml` is not valid TOML (reported): nothing else is read.
    pub unparsed: bool,
}

/// One file's configuration, every field optional, before merging.
#[derive(Debug, Default)]
pub(super) struct RawConfig {
    name: Option<Spanned<String>>,
    default_target: Option<Spanned<String>>,
    connection_loc: Option<Loc>,
    /// Required keys already reported where they are written (an invalid value, or a
    /// misspelled key whose did-you-mean names them): `connection.engine`,
    /// `targets.NAME.schema`. Their absence is not reported again.
    reported: std::collections::BTreeSet<String>,
    engine: Option<Spanned<String>>,
    path: Option<Spanned<String>>,
    url: Option<Spanned<String>>,
    targets: BTreeMap<String, Target>,
    mode: Option<Spanned<String>>,
    sql_analysis: Option<Spanned<bool>>,
    compare_type_size: Option<Spanned<bool>>,
    adopted_schemas: Option<Vec<Spanned<String>>>,
    path_defaults: Vec<(Spanned<String>, ModelProps)>,
    imports: Vec<ImportDecl>,
    contexts: Option<Vec<Spanned<String>>>,
    serve: Option<Serve>,
    /// The file (or `sqb.local.toml`) is not valid TOML: no rule reads its content.
    unparsed: bool,
}

impl RawConfig {
    pub(super) fn unparsed() -> Self {
        RawConfig {
            unparsed: true,
            ..RawConfig::default()
        }
    }
}

const TOP_KEYS: &[&str] = &[
    "name",
    "default_target",
    "connection",
    "targets",
    "settings",
    "path_defaults",
    "imports",
    "semantic",
    "serve",
];
const SERVE_KEYS: &[&str] = &[
    "listen",
    "target",
    "issuer",
    "audience",
    "secret_env",
    "jwks",
    "max_rows",
    "max_request_bytes",
    "body_timeout_ms",
    "max_concurrent_per_tenant",
    "connections",
];
const SEMANTIC_KEYS: &[&str] = &["contexts"];
const IMPORT_KEYS: &[&str] = &["path", "snapshot", "baseline", "pin", "waive"];
const WAIVER_KEYS: &[&str] = &["code", "column", "reason", "expires"];
const CONNECTION_KEYS: &[&str] = &["engine", "path", "url"];
const TARGET_KEYS: &[&str] = &["database", "schema", "writable"];
const SETTINGS_KEYS: &[&str] = &[
    "column_contract_mode",
    "sql_analysis",
    "compare_type_size",
    "adopted_schemas",
];
pub(super) const PATH_DEFAULT_KEYS: &[&str] = &[
    "materialized",
    "contract",
    "tags",
    "promotion",
    "snapshot_schema_change",
    "on_schema_change",
    "sql_analysis",
    "access",
];

pub(super) fn read_raw(r: &mut Reader<'_>, root: &dyn TableLike) -> RawConfig {
    r.check_keys(root, TOP_KEYS, "the project file");
    let mut raw = RawConfig {
        name: r.string(root, "name"),
        default_target: r.string(root, "default_target"),
        ..RawConfig::default()
    };
    if let Some(conn) = r.table(root, "connection") {
        r.check_keys(conn, CONNECTION_KEYS, "[connection]");
        raw.connection_loc = Some(r.key_loc(root, "connection"));
        for key in ["engine", "path"] {
            if written(conn, key, CONNECTION_KEYS) {
                raw.reported.insert(format!("connection.{key}"));
            }
        }
        raw.engine = r.choice(conn, "engine", &["duckdb", "postgres"]);
        raw.path = r.string(conn, "path");
        raw.url = r.string(conn, "url");
    }
    if let Some(targets) = r.table(root, "targets") {
        for (name, _) in targets.iter() {
            let Some(t) = r.table(targets, name) else {
                continue;
            };
            r.check_keys(t, TARGET_KEYS, &format!("target `{name}`"));
            if written(t, "schema", TARGET_KEYS) {
                raw.reported.insert(format!("targets.{name}.schema"));
            }
            let target = Target {
                name: name.to_string(),
                loc: r.key_loc(targets, name),
                database: r.string(t, "database"),
                schema: r.string(t, "schema"),
                writable: r.boolean(t, "writable"),
            };
            raw.targets.insert(name.to_string(), target);
        }
    }
    if let Some(settings) = r.table(root, "settings") {
        r.check_keys(settings, SETTINGS_KEYS, "[settings]");
        raw.mode = r.choice(settings, "column_contract_mode", &["implicit", "explicit"]);
        raw.sql_analysis = r.boolean(settings, "sql_analysis");
        raw.compare_type_size = r.boolean(settings, "compare_type_size");
        raw.adopted_schemas = r
            .strings(settings, "adopted_schemas", false)
            .map(|s| s.value);
    }
    if let Some(serve) = r.table(root, "serve") {
        r.check_keys(serve, SERVE_KEYS, "[serve]");
        raw.serve = Some(Serve {
            loc: r.key_loc(root, "serve"),
            listen: r.string(serve, "listen"),
            target: r.string(serve, "target"),
            issuer: r.string(serve, "issuer"),
            audience: r.string(serve, "audience"),
            secret_env: r.string(serve, "secret_env"),
            jwks: r.string(serve, "jwks"),
            max_rows: r.integer(serve, "max_rows"),
            max_request_bytes: r.integer(serve, "max_request_bytes"),
            body_timeout_ms: r.integer(serve, "body_timeout_ms"),
            max_concurrent_per_tenant: r.integer(serve, "max_concurrent_per_tenant"),
            connections: r.integer(serve, "connections"),
        });
    }
    if let Some(semantic) = r.table(root, "semantic") {
        r.check_keys(semantic, SEMANTIC_KEYS, "[semantic]");
        raw.contexts = r.strings(semantic, "contexts", false).map(|c| c.value);
    }
    if let Some(defaults) = r.table(root, "path_defaults") {
        for (path, _) in defaults.iter() {
            let Some(t) = r.table(defaults, path) else {
                continue;
            };
            r.check_keys(t, PATH_DEFAULT_KEYS, &format!("path defaults for `{path}`"));
            let props = read_model_props(r, t);
            let key = Spanned::new(path.to_string(), r.key_loc(defaults, path));
            raw.path_defaults.push((key, props));
        }
    }
    if let Some(imports) = r.table(root, "imports") {
        for (name, _) in imports.iter() {
            if let Some(decl) = read_import(r, imports, name) {
                raw.imports.push(decl);
            }
        }
    }
    raw
}

fn read_import(r: &mut Reader<'_>, imports: &dyn TableLike, name: &str) -> Option<ImportDecl> {
    let t = r.table(imports, name)?;
    let context = format!("import `{name}`");
    r.check_keys(t, IMPORT_KEYS, &context);
    let loc = r.key_loc(imports, name);
    let file = |r: &mut Reader<'_>, key: &str, default: &str| {
        r.string(t, key)
            .unwrap_or_else(|| Spanned::new(default.to_string(), loc.clone()))
    };
    let Some(path) = r.string(t, "path") else {
        if !t.contains_key("path") {
            r.missing(
                loc.clone(),
                "path",
                &context,
                "name the directory holding the vendored snapshot: `path = \"vendor/orders\"`",
            );
        }
        return None;
    };
    Some(ImportDecl {
        name: name.to_string(),
        snapshot: file(r, "snapshot", "current.json"),
        baseline: file(r, "baseline", "baseline.json"),
        pin: r.string(t, "pin"),
        waivers: read_waivers(r, t, &context),
        path,
        loc,
    })
}

/// `waive`: an array of tables (`[[imports.NAME.waive]]`) or of inline tables.
fn read_waivers(r: &mut Reader<'_>, import: &dyn TableLike, context: &str) -> Vec<Waiver> {
    let tables: Vec<(&dyn TableLike, Loc)> = match import.get("waive") {
        None => return Vec::new(),
        Some(toml_edit::Item::ArrayOfTables(array)) => array
            .iter()
            .map(|t| (t as &dyn TableLike, r.loc(t.span())))
            .collect(),
        Some(item) => match item.as_array() {
            Some(array) if array.iter().all(|v| v.as_inline_table().is_some()) => array
                .iter()
                .filter_map(|v| Some((v.as_inline_table()? as &dyn TableLike, r.loc(v.span()))))
                .collect(),
            _ => {
                r.wrong_type(
                    import,
                    "waive",
                    "an array of tables",
                    Some("write each waiver as a `[[imports.NAME.waive]]` table".into()),
                );
                return Vec::new();
            }
        },
    };
    let context = format!("a waiver of {context}");
    tables
        .into_iter()
        .filter_map(|(t, loc)| read_waiver(r, t, loc, &context))
        .collect()
}

fn read_waiver(r: &mut Reader<'_>, t: &dyn TableLike, loc: Loc, context: &str) -> Option<Waiver> {
    r.check_keys(t, WAIVER_KEYS, context);
    let hints = [
        ("code", "name the finding it accepts: `code = \"E031\"`"),
        (
            "column",
            "name the imported column: `column = \"fct_orders.amount\"`",
        ),
        ("reason", "say why it is accepted: `reason = \"...\"`"),
        ("expires", "say until when: `expires = 2027-01-31`"),
    ];
    let mut missing = false;
    for (key, hint) in hints {
        if !t.contains_key(key) {
            r.missing(loc.clone(), key, context, hint);
            missing = true;
        }
    }
    let code = r.choice(t, "code", WAIVABLE);
    let column = r.string(t, "column");
    let reason = r.string(t, "reason");
    let expires = r.date(t, "expires");
    if let Some(reason) = reason.as_ref().filter(|s| s.value.trim().is_empty()) {
        r.push(
            crate::diagnostics::Diagnostic::error(
                crate::diagnostics::Code::InvalidValue,
                "a waiver's `reason` is empty",
            )
            .at(reason.loc.clone(), "say why the finding is accepted"),
        );
        return None;
    }
    if missing {
        return None;
    }
    Some(Waiver {
        loc,
        code: code?,
        column: column?,
        reason: reason?,
        expires: expires?,
    })
}

/// Whether `key` is written in `table`, or misspelled there as a key whose did-you-mean (among
/// `allowed`) is `key`: either way a diagnostic already points at it, if one is due.
fn written(table: &dyn TableLike, key: &str, allowed: &[&str]) -> bool {
    table.contains_key(key)
        || table.iter().any(|(k, _)| {
            !allowed.contains(&k)
                && crate::diagnostics::did_you_mean(k, allowed.iter().copied()) == Some(key)
        })
}

/// Overrides `base` with what `local` sets, field by field.
pub(super) fn merge(base: RawConfig, local: RawConfig) -> RawConfig {
    let mut targets = base.targets;
    for (name, t) in local.targets {
        match targets.get_mut(&name) {
            Some(existing) => {
                existing.database = t.database.or(existing.database.take());
                existing.schema = t.schema.or(existing.schema.take());
                existing.writable = t.writable.or(existing.writable.take());
            }
            None => {
                targets.insert(name, t);
            }
        }
    }
    let mut reported = base.reported;
    reported.extend(local.reported);
    let mut path_defaults = base.path_defaults;
    for (path, props) in local.path_defaults {
        match path_defaults
            .iter_mut()
            .find(|(p, _)| p.value == path.value)
        {
            Some(existing) => existing.1 = props.over(&existing.1),
            None => path_defaults.push((path, props)),
        }
    }
    let mut imports = base.imports;
    for decl in local.imports {
        imports.retain(|d| d.name != decl.name);
        imports.push(decl);
    }
    RawConfig {
        imports,
        contexts: local.contexts.or(base.contexts),
        serve: local.serve.or(base.serve),
        name: local.name.or(base.name),
        default_target: local.default_target.or(base.default_target),
        connection_loc: base.connection_loc.or(local.connection_loc),
        reported,
        engine: local.engine.or(base.engine),
        path: local.path.or(base.path),
        url: local.url.or(base.url),
        targets,
        mode: local.mode.or(base.mode),
        sql_analysis: local.sql_analysis.or(base.sql_analysis),
        compare_type_size: local.compare_type_size.or(base.compare_type_size),
        adopted_schemas: local.adopted_schemas.or(base.adopted_schemas),
        path_defaults,
        unparsed: base.unparsed || local.unparsed,
    }
}

/// Checks required keys and cross-references, and builds the final [`Config`].
pub(super) fn finish(r: &mut Reader<'_>, raw: RawConfig) -> Config {
    if raw.unparsed {
        return config(r.file, raw, Engine::DuckDb);
    }
    let file_start = Loc::file_start(r.file);
    let engine = match raw.engine.as_ref() {
        Some(e) => Engine::parse(&e.value).unwrap_or(Engine::DuckDb),
        None if raw.reported.contains("connection.engine") => Engine::DuckDb,
        None => {
            let (loc, context) = match raw.connection_loc.clone() {
                Some(loc) => (loc, "[connection]"),
                None => (file_start.clone(), "the project file"),
            };
            r.missing(
                loc,
                "engine",
                context,
                "add `[connection]` with `engine = \"duckdb\"` or `engine = \"postgres\"`",
            );
            Engine::DuckDb
        }
    };
    if engine.in_process()
        && raw.engine.is_some()
        && raw.path.is_none()
        && !raw.reported.contains("connection.path")
    {
        let loc = raw.connection_loc.clone().unwrap_or(file_start);
        r.missing(
            loc,
            "path",
            "[connection]",
            "a DuckDB connection names its database file: `path = \"warehouse.duckdb\"`",
        );
    }
    if let Some(url) = raw.url.as_ref().filter(|_| !engine.in_process()) {
        if !engine.takes_url(&url.value) {
            r.push(
                Diagnostic::error(
                    Code::InvalidValue,
                    format!("`url` is not a {} URL", engine.title()),
                )
                .at(url.loc.clone(), format!("expected a URL starting with {}", engine.url_forms()))
                .hint("write postgres://USER@HOST:5432/DATABASE; the password belongs in PGPASSWORD, ~/.pgpass or SQB_DATABASE_URL"),
            );
        }
    }
    for target in raw.targets.values() {
        let reported = raw
            .reported
            .contains(&format!("targets.{}.schema", target.name));
        if target.schema.is_none() && !reported {
            r.missing(
                target.loc.clone(),
                "schema",
                &format!("target `{}`", target.name),
                "a target names the schema it reads: `schema = \"analytics\"`",
            );
        }
    }
    if let Some(default) = &raw.default_target {
        if !raw.targets.contains_key(&default.value) {
            r.diags
                .push(unknown_target(default, &raw.targets, "default target"));
        }
    }
    if let Some(serve) = &raw.serve {
        check_serve(r, serve, &raw.targets);
    }
    config(r.file, raw, engine)
}

fn config(file: FileId, raw: RawConfig, engine: Engine) -> Config {
    let column_contract_mode = match raw.mode.as_ref().map(|m| m.value.as_str()) {
        Some("explicit") => ContractMode::Explicit,
        _ => ContractMode::Implicit,
    };
    Config {
        unparsed: raw.unparsed,
        file,
        name: raw.name,
        default_target: raw.default_target,
        connection: Connection {
            engine,
            path: raw.path,
            url: raw.url,
        },
        targets: raw.targets,
        settings: Settings {
            column_contract_mode,
            sql_analysis: raw.sql_analysis,
            compare_type_size: raw.compare_type_size,
            adopted_schemas: raw.adopted_schemas.unwrap_or_default(),
        },
        path_defaults: raw.path_defaults,
        imports: raw.imports,
        contexts: raw.contexts.unwrap_or_default(),
        serve: raw.serve,
    }
}

/// `[serve]` names whom it believes, by one kind of key, and listens on an address.
fn check_serve(r: &mut Reader<'_>, serve: &Serve, targets: &BTreeMap<String, Target>) {
    use crate::diagnostics::Diagnostic;
    for (value, key) in [(&serve.issuer, "issuer"), (&serve.audience, "audience")] {
        if value.is_none() {
            r.missing(
                serve.loc.clone(),
                key,
                "[serve]",
                format!("every token must name its `{key}`: `{key} = \"...\"`"),
            );
        }
    }
    match (&serve.secret_env, &serve.jwks) {
        (None, None) => r.missing(
            serve.loc.clone(),
            "secret_env",
            "[serve]",
            "name the environment variable holding the HS256 secret (`secret_env = \"SQB_JWT_SECRET\"`), or a JWKS file (`jwks = \"keys.json\"`)",
        ),
        (Some(_), Some(jwks)) => r.push(
            Diagnostic::error(Code::InvalidValue, "[serve] names both `secret_env` and `jwks`")
                .at(jwks.loc.clone(), "one kind of key only")
                .hint("HS256 tokens need `secret_env`; RS256 and ES256 tokens need `jwks`"),
        ),
        _ => {}
    }
    if let Some(listen) = &serve.listen {
        if listen.value.parse::<std::net::SocketAddr>().is_err() {
            r.push(
                Diagnostic::error(
                    Code::InvalidValue,
                    format!("`{}` is not an address to listen on", listen.value),
                )
                .at(listen.loc.clone(), "expected host:port")
                .hint("write an IP address and a port, such as `127.0.0.1:8080`"),
            );
        }
    }
    let limits = [
        &serve.max_rows,
        &serve.max_request_bytes,
        &serve.body_timeout_ms,
        &serve.max_concurrent_per_tenant,
        &serve.connections,
    ];
    for n in limits.into_iter().flatten() {
        if n.value < 1 {
            r.push(
                Diagnostic::error(Code::InvalidValue, format!("`{}` is not a limit", n.value))
                    .at(n.loc.clone(), "expected a positive number"),
            );
        }
    }
    if let Some(target) = &serve.target {
        if !targets.contains_key(&target.value) {
            r.push(unknown_target(target, targets, "[serve] target"));
        }
    }
}

fn unknown_target(
    name: &Spanned<String>,
    targets: &BTreeMap<String, Target>,
    what: &str,
) -> crate::diagnostics::Diagnostic {
    use crate::diagnostics::{did_you_mean, Code, Diagnostic};
    let diag = Diagnostic::error(
        Code::UnknownTarget,
        format!("{what} `{}` is not defined", name.value),
    )
    .at(name.loc.clone(), "no such target");
    match did_you_mean(&name.value, targets.keys().map(String::as_str)) {
        Some(close) => diag.hint(format!("did you mean `{close}`?")),
        None if targets.is_empty() => diag.hint("define it as `[targets.NAME]` with a `schema`"),
        None => diag.hint(format!(
            "defined targets: {}",
            targets.keys().cloned().collect::<Vec<_>>().join(", ")
        )),
    }
}
