//! Command-line definitions. The doc comments here are the `--help` text users read.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Keep a SQL project's column contracts honest against the real warehouse.
///
/// sqb reads a project of SQL models with TOML column declarations (sqb.toml at its root),
/// validates it offline, and compares the declarations with the relations in Postgres or DuckDB.
#[derive(Debug, Parser)]
#[command(
    name = "sqb",
    version,
    propagate_version = true,
    max_term_width = 100,
    after_help = ENVIRONMENT
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,

    #[command(subcommand)]
    pub command: Command,
}

/// The lines of the environment variables that the commands connecting to a warehouse read.
macro_rules! warehouse_environment {
    () => {
        "Environment:
  SQB_DATABASE_URL  the Postgres connection URL; overrides `url` under [connection]
  PGPASSWORD        the Postgres password (also ~/.pgpass); PGHOST, PGPORT, PGUSER and
                    PGDATABASE fill what a URL leaves out"
    };
}

/// The environment variables of the commands that connect, shown under their `--help`.
const WAREHOUSE_ENVIRONMENT: &str = warehouse_environment!();

/// The environment variables sqb reads, shown under `sqb --help`.
const ENVIRONMENT: &str = concat!(
    warehouse_environment!(),
    "
  SQB_NO_CACHE      any value but 0 or false: the same as --no-cache
  NO_COLOR          no colours with --color auto
  RUST_LOG          log filter for -v (e.g. sqb=trace)
  SQB_NOW           stands in for the clock (tests and reproducible reports)"
);

/// A timeout: whole seconds (`30`), or a humane duration (`90s`, `2m`, `1h30m`).
fn seconds(text: &str) -> Result<u64, String> {
    let parsed = match text.trim().parse::<u64>() {
        Ok(secs) => Some(secs),
        Err(_) => crate::clock::duration_secs(text).and_then(|s| u64::try_from(s).ok()),
    };
    parsed.ok_or_else(|| {
        format!("`{text}` is not a duration: write seconds (`30`) or `90s`, `2m`, `1h`")
    })
}

#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// The project root (the directory holding sqb.toml). Default: the nearest sqb.toml found
    /// walking up from the current directory.
    #[arg(long, global = true, value_name = "DIR")]
    pub project_dir: Option<PathBuf>,

    /// When to use colours. `auto` uses them on a terminal unless NO_COLOR is set.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,

    /// Print only errors: no warnings, notes or summary lines.
    #[arg(short, long, global = true)]
    pub quiet: bool,

    /// Log what sqb does, with timings, to stderr: `-v` for debug, `-vv` for trace (including
    /// the database driver). `RUST_LOG` (e.g. `RUST_LOG=sqb=trace`) takes precedence. Logs are
    /// redacted like every other output.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,

    /// Neither read nor write the caches (.sqb/cache/): parse every sidecar and compile every
    /// model's SQL even when no file has changed since the last run.
    #[arg(long, global = true, env = "SQB_NO_CACHE", value_parser = clap::builder::FalseyValueParser::new())]
    pub no_cache: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Start a project from a warehouse that already exists: connect read-only, list the
    /// relations of its schemas, and write sqb.toml (the connection, one target per schema),
    /// sources/<schema>.toml (every relation's exact column types and nullability) and a
    /// .gitignore.
    ///
    /// A password in the URL is never written: pass it with PGPASSWORD, ~/.pgpass or
    /// SQB_DATABASE_URL. The new project compiles as written, or nothing is kept. Exit status:
    /// 0 when written, 2 when nothing was written (an existing sqb.toml without --force, an
    /// unreachable warehouse, an unknown schema).
    #[command(after_help = WAREHOUSE_ENVIRONMENT)]
    Init(InitArgs),

    /// Validate the whole project offline: every file, every contract rule, and each model's SQL.
    ///
    /// Never connects to a warehouse. Exit status: 0 when the project is valid (warnings
    /// allowed), 1 when it has errors, 2 when the command itself failed (no project found,
    /// usage error).
    Compile(CompileArgs),

    /// List what a selection picks (every model and source without one), offline, as `dbt ls`
    /// does: each resource's type, name, relation and declaring file.
    ///
    /// Exit status: 0 when listed, 2 when a selector matches nothing or the project cannot be
    /// read.
    Ls(LsArgs),

    /// Compare column declarations with the warehouse.
    #[command(subcommand)]
    Contract(ContractCommand),

    /// Show column-level lineage of a model: each output column and the upstream columns
    /// (of models, sources or external relations) it is computed from, through CTEs and
    /// subqueries. With `source:NAME`, a source's columns and the model columns computed from
    /// each. Offline, like compile.
    ///
    /// Exit status: 0 when the lineage is shown, 2 when the project does not compile, the model
    /// or source does not exist, or the model's output cannot be inferred.
    Lineage(LineageArgs),

    /// Write the snapshot of the project's public models that other projects import.
    ///
    /// A model is published when its sidecar (or a `path_defaults` entry) says
    /// `access = "public"`, or with --all. Each column's type comes from its declaration, else
    /// from what the model's SQL proves. Offline. Exit status: 0 when written (or, with
    /// --check, up to date), 1 when --check finds the file out of date, 2 when nothing can be
    /// published (no public model, a column without a type, a project that does not compile).
    Publish(PublishArgs),

    /// Work with the project's imports (`[imports.NAME]` in sqb.toml).
    #[command(subcommand)]
    Imports(ImportsCommand),

    /// Read the drift history that `sqb contract diff --history FILE` and `sqb audit --history
    /// FILE` append to.
    #[command(subcommand)]
    Drift(DriftCommand),

    /// Bring another tool's project to sqb.
    #[command(subcommand)]
    Import(ImportCommand),

    /// Ask for metrics by name, grouped by dimensions, filtered, as a principal: compiled to one
    /// read-only SQL statement under the project's guardrails, finality rules and policies, or
    /// refused with a typed code. It never guesses.
    ///
    /// Runs the statement on the target in a read-only transaction with a statement timeout,
    /// or with --sql only prints it (offline). Every result says, per metric, its trust tier
    /// and whether its rows are final. Exit status: 0 served, 2 failed (project, connection,
    /// usage), and one status per refusal code (docs/semantic-contracts.md): 10 unresolved, 11
    /// ambiguous, 12 ambiguous_join_path, 13 unreachable, 14 fanout_unsafe, 15
    /// unsupported_measure, 16 guardrail, 17 undeclared_source, 18 no_principal, 19 forbidden,
    /// 20 invalid_filter, 21 zero_denominator, 22 invalid_claims.
    #[command(after_help = WAREHOUSE_ENVIRONMENT)]
    Query(QueryArgs),

    /// Run the assertions (known-good queries with expected answers) through the query
    /// compiler on a target and compare each answer, in exact decimals.
    ///
    /// Exit status: 0 when all pass (or at least --min-accuracy of them), 1 when some fail, 2
    /// when an assertion could not run or the command failed. The verdicts are recorded (in
    /// .sqb/cache/) for `sqb query`'s trust tiers.
    #[command(after_help = WAREHOUSE_ENVIRONMENT)]
    Assert(AssertArgs),

    /// Run the audits the selected models and sources declare (`audits = [..]` on their
    /// columns) against a target's relations, read-only: one scan per relation counts every
    /// audit's failing rows at once, and each failed audit shows a sample of them (values of
    /// `pii` columns redacted).
    ///
    /// Exit status: 0 when every error-severity audit passes (warn-severity failures allowed),
    /// 1 when one fails, 2 when an audit could not run (a relation missing, the warehouse
    /// unreachable, a project that does not compile): a check that cannot run never passes.
    #[command(after_help = WAREHOUSE_ENVIRONMENT)]
    Audit(AuditArgs),

    /// Publish the selected models' staged relations into a writable target: only when each
    /// passes its contract and its error-severity audits in the staging target, all in one
    /// transaction, copied in place so that everything bound to the destination (views,
    /// foreign keys, triggers, grants, ...) stays bound to it (docs/promote.md).
    ///
    /// Exit status: 0 when published (or, with --dry-run, when it would be), 1 when a check
    /// fails or a relation cannot be published (nothing written), 2 when the publish could not
    /// run or failed and was rolled back (a lock not granted in time, a lost connection).
    #[command(after_help = WAREHOUSE_ENVIRONMENT)]
    Promote(PromoteArgs),

    /// Serve the semantic layer over HTTP: every request's claims come from a verified JSON Web
    /// Token (HS256, or RS256/ES256 from a JWKS file, as [serve] in sqb.toml says), and its
    /// query goes through the same compiler, guardrails, tenancy and roles as `sqb query`, on
    /// the server's own read-only connection (docs/serve.md).
    ///
    /// Runs until SIGINT or SIGTERM, then drains in-flight requests and exits 0. Exit status
    /// 2 when it cannot start (no [serve], no secret, an address in use).
    #[command(after_help = WAREHOUSE_ENVIRONMENT)]
    Serve(ServeArgs),

    /// Print the shell completion script for bash, zsh, fish, PowerShell or elvish, built from
    /// the same definitions as `--help`.
    ///
    /// Load it for the session (`source <(sqb completions bash)`) or save it where the shell
    /// reads completions (docs/install.md). Exit status: 0.
    Completions(CompletionsArgs),

    /// Print sqb's man page (roff), or with --dir write one page per command (sqb.1,
    /// sqb-contract-diff.1, ...) into a directory, built from the same definitions as `--help`.
    ///
    /// Read it with `sqb man | man -l -`. Exit status: 0 when written, 2 when a page could not
    /// be written.
    Man(ManArgs),
}

#[derive(Debug, Args)]
pub struct AuditArgs {
    /// The target whose relations are audited. Default: `default_target`.
    #[arg(long, value_name = "TARGET")]
    pub from: Option<String>,

    #[command(flatten)]
    pub selection: SelectArgs,

    /// Output format: a listing by relation, JSON (docs/audits.md), JUnit XML, GitHub
    /// annotations, SARIF 2.1.0 for code scanning, or a Markdown table.
    #[arg(long, value_enum, default_value_t = AuditFormat::Text)]
    pub format: AuditFormat,

    /// Write the report to FILE (atomically) instead of stdout.
    #[arg(short, long, alias = "out", value_name = "FILE")]
    pub output: Option<PathBuf>,

    #[command(flatten)]
    pub history: HistoryArgs,

    #[command(flatten)]
    pub parallel: ParallelArgs,

    #[command(flatten)]
    pub connect: ConnectArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AuditFormat {
    Text,
    Json,
    Junit,
    Github,
    Sarif,
    Markdown,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write a page per command into this directory (created when missing), replacing pages
    /// already there, instead of printing sqb.1.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct LsArgs {
    #[command(flatten)]
    pub selection: SelectArgs,

    /// Output format: aligned lines, or a JSON list.
    #[arg(long, value_enum, default_value_t = TextOrJson::Text)]
    pub format: TextOrJson,
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// The project directory, created when missing. Default: the current directory.
    #[arg(value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,

    /// The warehouse's engine. Default: postgres with --url (or neither), duckdb with --path.
    #[arg(long, value_enum, value_name = "ENGINE")]
    pub engine: Option<EngineArg>,

    /// The Postgres connection URL; its password is used, never written. Default:
    /// SQB_DATABASE_URL, else libpq's PGHOST, PGPORT, PGUSER and PGDATABASE.
    #[arg(long, value_name = "URL", conflicts_with = "path")]
    pub url: Option<String>,

    /// The DuckDB database file (opened read-only).
    #[arg(long, value_name = "FILE")]
    pub path: Option<PathBuf>,

    /// A schema to adopt (repeat for more). Default: every schema that holds a table or view.
    #[arg(long = "schema", value_name = "NAME")]
    pub schemas: Vec<String>,

    /// The name of the default target. Default: its schema's name.
    #[arg(long, value_name = "NAME")]
    pub target: Option<String>,

    /// Replace an existing sqb.toml and the source files init writes.
    #[arg(long)]
    pub force: bool,

    /// Report format.
    #[arg(long, value_enum, default_value_t = TextOrJson::Text)]
    pub format: TextOrJson,

    #[command(flatten)]
    pub connect: ConnectArgs,
}

#[derive(Debug, Args)]
pub struct PrincipalArgs {
    /// The principal's claims as a JSON file: `{"customer_id": "2", "roles": ["customer"]}`.
    #[arg(long, value_name = "FILE", conflicts_with = "claims")]
    pub principal: Option<PathBuf>,

    /// The principal's claims as a JSON object.
    #[arg(long, value_name = "JSON")]
    pub claims: Option<String>,
}

#[derive(Debug, Args)]
pub struct QueryArgs {
    /// A metric, by name or alias (repeatable; output in this order).
    #[arg(
        short,
        long = "metric",
        value_name = "METRIC",
        required_unless_present = "saved"
    )]
    pub metrics: Vec<String>,

    /// A dimension to group by: `dim`, `join_alias.dim`, `dim.month` (repeatable).
    #[arg(short, long = "dimension", value_name = "DIMENSION")]
    pub dimensions: Vec<String>,

    /// A SQL predicate over the query's dimensions (repeatable; AND-ed, with a saved
    /// query's own filters too).
    #[arg(long = "filter", value_name = "PREDICATE")]
    pub filters: Vec<String>,

    /// The context the query is asked from (`[semantic] contexts` in sqb.toml).
    #[arg(long, value_name = "CONTEXT")]
    pub context: Option<String>,

    /// Order the rows by a metric or dimension asked, before the dimensions; `-` first for
    /// descending (`--order-by -revenue`; repeatable; replaces a saved query's order).
    #[arg(
        long = "order-by",
        visible_alias = "order",
        value_name = "COLUMN",
        allow_hyphen_values = true
    )]
    pub order_by: Vec<String>,

    /// At most this many rows, after ordering (replaces a saved query's limit).
    #[arg(long, value_name = "N")]
    pub limit: Option<u64>,

    /// Ask the saved query of this name (`contracts/queries/*.toml`): its metrics, dimensions,
    /// filters, context, order and limit.
    #[arg(
        long,
        value_name = "NAME",
        conflicts_with_all = ["metrics", "dimensions", "context"]
    )]
    pub saved: Option<String>,

    #[command(flatten)]
    pub principal: PrincipalArgs,

    /// The target whose namespace is read. Default: `default_target`.
    #[arg(long, value_name = "TARGET")]
    pub from: Option<String>,

    /// Print the compiled SQL (and its parameters) and run nothing.
    #[arg(long)]
    pub sql: bool,

    /// Also run the assertions that ask for the query's metrics, and report them.
    #[arg(long, conflicts_with = "sql")]
    pub harness: bool,

    /// Output format: a table, JSON (typed values, exact decimals as strings), or CSV.
    #[arg(long, value_enum, default_value_t = QueryFormat::Text)]
    pub format: QueryFormat,

    #[command(flatten)]
    pub connect: ConnectArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum QueryFormat {
    Text,
    Json,
    Csv,
}

#[derive(Debug, Args)]
pub struct AssertArgs {
    /// Assertion ids or globs (`revenue_*`). Default: every assertion.
    #[arg(short, long, num_args = 1.., value_name = "ID")]
    pub select: Vec<String>,

    /// The target whose namespace is read. Default: `default_target`.
    #[arg(long, value_name = "TARGET")]
    pub from: Option<String>,

    #[command(flatten)]
    pub principal: PrincipalArgs,

    /// Also run each assertion as each of these tenants (the tenancy policy's claim values,
    /// comma-separated): no row of another tenant may get through the scoping of any relation,
    /// and an additive metric's total must be the sum over the tenants, group by group.
    #[arg(long, value_delimiter = ',', value_name = "TENANT,...")]
    pub tenants: Vec<String>,

    /// Pass when at least this share of the assertions pass (0 to 1). Default: all must.
    #[arg(long, value_name = "SHARE")]
    pub min_accuracy: Option<f64>,

    /// Report format: a listing, JSON, JUnit XML, or GitHub Actions annotations.
    #[arg(long, value_enum, default_value_t = AssertFormat::Text)]
    pub format: AssertFormat,

    #[command(flatten)]
    pub connect: ConnectArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AssertFormat {
    Text,
    Json,
    Junit,
    Github,
}

#[derive(Debug, Subcommand)]
pub enum ImportCommand {
    /// Write a new sqb project from a dbt project: models from the compiled SQL of
    /// target/manifest.json (each ref() and source() renamed to the sqb model or source), sidecars
    /// from the YAML (types, not_null constraints, tests as audits, enforced contracts), sources,
    /// and dbt_project.yml's folder configs as path_defaults.
    ///
    /// Everything that cannot be carried over is listed, by file. The new project is written all
    /// at once, then compiled. Exit status: 0 when written and it compiles, 1 when written but
    /// `sqb compile` reports errors on it, 2 when nothing was written.
    Dbt(ImportDbtArgs),
}

#[derive(Debug, Args)]
pub struct ImportDbtArgs {
    /// The dbt project: the directory holding dbt_project.yml.
    #[arg(value_name = "DBT_PROJECT_DIR")]
    pub dbt_project_dir: PathBuf,

    /// The directory to write the sqb project into: absent or empty, unless --force.
    #[arg(short = 'o', long = "output", alias = "out", value_name = "DIR")]
    pub out: PathBuf,

    /// The manifest `dbt compile` wrote. Default: DBT_PROJECT_DIR/target/manifest.json.
    #[arg(long, value_name = "FILE")]
    pub manifest: Option<PathBuf>,

    /// The engine of the sqb project. Default: the manifest's adapter (postgres or duckdb).
    #[arg(long, value_enum, value_name = "ENGINE")]
    pub engine: Option<EngineArg>,

    /// Replace a non-empty --out directory (moved aside, removed once the new one is in place).
    #[arg(long)]
    pub force: bool,

    /// Report format: a listing by file, or JSON.
    #[arg(long, value_enum, default_value_t = TextOrJson::Text)]
    pub format: TextOrJson,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EngineArg {
    Postgres,
    Duckdb,
}

#[derive(Debug, Subcommand)]
pub enum DriftCommand {
    /// Report a drift history: each open finding with when it was first and last seen and in
    /// how many runs, the findings resolved in the period and when, counts per day, and the
    /// resources with the most open drift.
    ///
    /// Reads the history file only (no project, no warehouse). Exit status: 0 when reported,
    /// 2 when the history cannot be read.
    Report(DriftReportArgs),
}

#[derive(Debug, Args)]
pub struct DriftReportArgs {
    /// The history file (an embedded DuckDB database written by `contract diff --history` and
    /// `audit --history`).
    #[arg(long, value_name = "FILE")]
    pub history: PathBuf,

    /// The target whose runs are reported; needed when the history holds several.
    #[arg(long, value_name = "NAME")]
    pub target: Option<String>,

    /// The period: a duration before now (`30d`, `1w`, `12h`, `1w2d`, `90 minutes`), or since
    /// a UTC date or time (`2026-11-01`, `2026-11-01 02:00:00`). Default: every run.
    #[arg(long, value_name = "PERIOD")]
    pub since: Option<String>,

    /// Report format: text, JSON, Markdown for a pull-request comment or a chat message, or
    /// one self-contained HTML page with a trend chart (loads nothing; works offline).
    #[arg(long, value_enum, default_value_t = DriftFormat::Text)]
    pub format: DriftFormat,

    /// Write the report to FILE (atomically) instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// How long to wait for a history another process is writing.
    #[arg(long, value_name = "DURATION", default_value_t = 30, value_parser = seconds)]
    pub history_timeout: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DriftFormat {
    Text,
    Json,
    Markdown,
    Html,
}

#[derive(Debug, Subcommand)]
pub enum ImportsCommand {
    /// Accept each import's current snapshot as its baseline, listing every change accepted.
    ///
    /// Refuses while `sqb compile` reports errors about the import's changes (a model reads a
    /// dropped or narrowed column…), unless --force. Exit status: 0 when updated (or, with
    /// --check, every baseline current), 1 when --check finds a baseline behind or a concrete
    /// pin stale, 2 when it refused or failed.
    Update(ImportsUpdateArgs),

    /// The whole changelog from each import's baseline to its snapshot, each change marked with
    /// the models (and their columns) it breaks, or "no reader".
    ///
    /// Offline. Exit status: 0 when no change breaks a model (a waived one does not), 1 when
    /// one does, 2 when it could not check (an unreadable import, no such import).
    Diff(ImportsDiffArgs),

    /// What the project's models read of each import: per imported model and column, which
    /// models read it and how.
    ///
    /// The JSON is a file for the producer to vendor: `sqb publish --consumers DIR` reads it.
    /// A model whose SQL is not analysed counts as reading every column of what it names.
    Reads(ImportsReadsArgs),

    /// Check the vendored snapshots against the live warehouse, read-only: each imported
    /// model's relation exists, with the columns, types and nullability the snapshot publishes.
    ///
    /// The findings and report formats are `contract diff`'s. Exit status: 0 when every
    /// imported relation agrees, 1 when one differs, 2 when the check could not run.
    #[command(after_help = WAREHOUSE_ENVIRONMENT)]
    Verify(ImportsVerifyArgs),
}

#[derive(Debug, Args)]
pub struct ImportsVerifyArgs {
    /// The imports to verify. Default: every one.
    pub names: Vec<String>,

    /// The target to check from (its connection is the project's one connection; each
    /// relation's namespace is the one its snapshot names). Default: `default_target`.
    #[arg(long, value_name = "TARGET")]
    pub from: Option<String>,

    /// Report format, as for `contract diff`.
    #[arg(long, value_enum, default_value_t = DiffFormat::Text)]
    pub format: DiffFormat,

    /// Write the report to FILE (atomically) instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    #[command(flatten)]
    pub connect: ConnectArgs,
}

#[derive(Debug, Args)]
pub struct ImportsDiffArgs {
    /// The imports to compare. Default: every one.
    pub names: Vec<String>,

    /// Report format: text, JSON, Markdown for pull requests, JUnit XML for CI dashboards, or
    /// GitHub Actions annotations.
    #[arg(long, value_enum, default_value_t = ChangesFormat::Text)]
    pub format: ChangesFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ChangesFormat {
    Text,
    Json,
    Markdown,
    Junit,
    Github,
}

#[derive(Debug, Args)]
pub struct ImportsReadsArgs {
    /// Output format: a listing, or the reads file (JSON) a producer vendors.
    #[arg(long, value_enum, default_value_t = TextOrJson::Text)]
    pub format: TextOrJson,

    /// Write to FILE (atomically) instead of stdout.
    #[arg(short = 'o', long = "output", alias = "out", value_name = "FILE")]
    pub out: Option<std::path::PathBuf>,
}

#[derive(Debug, Args)]
pub struct ImportsUpdateArgs {
    /// The imports to update. Default: every one.
    pub names: Vec<String>,

    /// Write nothing: exit 1 when a baseline is behind its snapshot or a concrete pin is stale.
    #[arg(long, conflicts_with_all = ["dry_run", "force"])]
    pub check: bool,

    /// Write nothing: print what would be accepted.
    #[arg(long)]
    pub dry_run: bool,

    /// Accept the changes even while models break on them.
    #[arg(long)]
    pub force: bool,

    /// Output format: a listing, or JSON (each import's state and changes).
    #[arg(long, value_enum, default_value_t = TextOrJson::Text)]
    pub format: TextOrJson,
}

#[derive(Debug, Args)]
pub struct PublishArgs {
    /// Write the snapshot to FILE (atomically) instead of stdout.
    #[arg(
        short = 'o',
        long = "output",
        alias = "out",
        value_name = "FILE",
        conflicts_with = "check"
    )]
    pub out: Option<PathBuf>,

    /// The target whose namespace names the published relations. Default: `default_target`.
    #[arg(long, value_name = "NAME")]
    pub target: Option<String>,

    /// Publish every model, whatever its `access`.
    #[arg(long)]
    pub all: bool,

    /// Write nothing: exit 1 when FILE differs from what publish would write.
    #[arg(long, value_name = "FILE")]
    pub check: Option<PathBuf>,

    /// Read the consumers' reads files (`sqb imports reads --format json`, `*.json` in DIR) and
    /// report which of their models the change from the previous snapshot (the FILE of --out or
    /// --check) breaks; exit 1 when one does.
    #[arg(long, value_name = "DIR")]
    pub consumers: Option<PathBuf>,

    /// Format of the --consumers report (the snapshot itself is always JSON): text, JSON,
    /// Markdown, JUnit XML, or GitHub Actions annotations at the changed declarations.
    #[arg(long, value_enum, default_value_t = ChangesFormat::Text, requires = "consumers")]
    pub format: ChangesFormat,

    /// Read the types of undeclared columns (and the columns of a model that declares none)
    /// from this target's relations, read-only, as `contract diff` reads them.
    #[arg(long, value_name = "TARGET")]
    pub from: Option<String>,

    #[command(flatten)]
    pub connect: ConnectArgs,
}

#[derive(Debug, Args)]
pub struct LineageArgs {
    /// The model (`NAME` or `model:NAME`), or `source:NAME` for a source: the model columns
    /// computed from each of its columns.
    #[arg(value_name = "NODE")]
    pub node: String,

    /// Also list the columns used directly in joins, filters, grouping, windows and ordering
    /// (not propagated to upstream models, and not lineage edges).
    #[arg(long)]
    pub include_uses: bool,

    /// Output format: aligned text, or JSON (docs/lineage.md).
    #[arg(long, value_enum, default_value_t = TextOrJson::Text)]
    pub format: TextOrJson,
}

#[derive(Debug, Subcommand)]
pub enum ContractCommand {
    /// Report where declarations and the physical relations of a target disagree.
    ///
    /// Connects read-only with the project's one connection, reads the catalog of the target's
    /// namespace (one query per schema), and compares every selected model and source. Nothing
    /// is ever written to the warehouse.
    ///
    /// Exit status: 0 when declarations and relations agree, 1 when they differ, 2 when the
    /// command failed (invalid project, configuration, connection, authentication, timeout,
    /// usage).
    #[command(after_help = WAREHOUSE_ENVIRONMENT)]
    Diff(DiffArgs),

    /// Check each model's SQL against its contract, as the target's engine describes it,
    /// without running or building anything.
    ///
    /// Every reference to a model or source is resolved as `compile` resolves it, to the
    /// target's relations; Postgres prepares the statement and DuckDB binds it, read-only. The
    /// columns' names and exact types are compared with the declarations through `contract
    /// diff`'s core and report formats. Each model's JSON says which columns sqb's
    /// offline analysis proved and which only the warehouse did. A model whose SQL the engine
    /// rejects (a relation missing from the target, a syntax it does not take) is an error at
    /// its file and line, never a pass.
    ///
    /// Exit status: 0 when every model agrees with its declarations, 1 when one differs or its
    /// SQL is rejected, 2 when the check could not run.
    #[command(after_help = WAREHOUSE_ENVIRONMENT)]
    Check(CheckArgs),

    /// Propose declaration changes from the warehouse, and with --write make them.
    ///
    /// Without --write, prints the proposed changes as unified diffs of each file and changes
    /// nothing. With --write, edits the TOML files in place (comments, key order and formatting
    /// kept), atomically, then recompiles the project and restores every file's exact prior
    /// bytes if it does not compile. The warehouse is only read.
    ///
    /// Additive by default: fills missing types, appends undeclared physical columns, creates
    /// missing sidecars. --overwrite also replaces conflicting types, renames declarations to the
    /// physical spelling and removes declarations absent physically. `contract` is never changed,
    /// shared schemas are never changed from one model's evidence, and files whose first line is
    /// `# @generated` are never edited.
    ///
    /// Exit status: 0 after a preview or a successful write, 2 on any failure (a recompile
    /// failure included: the files are restored).
    #[command(after_help = WAREHOUSE_ENVIRONMENT)]
    Generate(GenerateArgs),

    /// Write the SQL migration that makes the target's tables match their declarations.
    ///
    /// The other direction of `generate`: every finding a DDL statement resolves becomes one,
    /// in one transaction, identifiers quoted, each with a comment naming its declaration: a
    /// missing column is added, a type widened, NOT NULL set, and with --allow-drop an
    /// undeclared column dropped. A statement whose safety depends on the data (SET NOT NULL, a
    /// narrower type) is first checked read-only against it, and refused with the count of rows
    /// it would fail on. Views are never altered: their SQL is the model's. sqb never runs the
    /// migration: review it, then run it yourself.
    ///
    /// Exit status: 0 when every finding has its statement (or there is none), 1 when some
    /// finding has none (each named, at the end of the SQL and on stderr), 2 when the command
    /// failed.
    #[command(after_help = WAREHOUSE_ENVIRONMENT)]
    Migrate(MigrateArgs),
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The address to listen on (`host:port`; port 0 picks a free one). Default: [serve]
    /// `listen`, else 127.0.0.1:8080.
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<String>,

    /// The target answered from. Default: [serve] `target`, else `default_target`.
    #[arg(long, value_name = "TARGET")]
    pub from: Option<String>,

    /// Reload when a project file changes (as SIGHUP does): the new project is swapped in only
    /// if it compiles.
    #[arg(long)]
    pub watch: bool,

    #[command(flatten)]
    pub connect: ConnectArgs,
}

#[derive(Debug, Args)]
pub struct PromoteArgs {
    /// The staging target the models were built into.
    #[arg(long, value_name = "STAGING")]
    pub from: String,

    /// The target to publish into: its sqb.toml entry must say `writable = true`.
    #[arg(long, value_name = "TARGET")]
    pub to: String,

    #[command(flatten)]
    pub selection: SelectArgs,

    /// Check and plan, print the exact statements, and change nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// How long to wait for each lock the publish needs before giving up (and naming who
    /// holds it): seconds, or a duration such as `30s` or `2m`.
    #[arg(long, default_value_t = 10, value_name = "DURATION", value_parser = seconds)]
    pub lock_timeout: u64,

    /// How each table is published: `auto` swaps the staged copy into place where only views
    /// read the destination (Postgres) and copies the rows in place elsewhere; `copy` always
    /// copies; `swap` refuses a table that cannot be swapped (docs/promote.md).
    #[arg(long, value_enum, default_value_t = PromoteStrategy::Auto)]
    pub strategy: PromoteStrategy,

    #[command(flatten)]
    pub parallel: ParallelArgs,

    #[command(flatten)]
    pub connect: ConnectArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PromoteStrategy {
    Auto,
    Copy,
    Swap,
}

#[derive(Debug, Args)]
pub struct MigrateArgs {
    /// The target whose tables the migration alters. Default: `default_target` in sqb.toml.
    #[arg(long, value_name = "TARGET")]
    pub from: Option<String>,

    #[command(flatten)]
    pub selection: SelectArgs,

    /// Also drop the columns a table has and no declaration names.
    #[arg(long)]
    pub allow_drop: bool,

    /// Write the migration to FILE (atomically) instead of stdout, for instance
    /// migrations/0004_prod.sql.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    #[command(flatten)]
    pub parallel: ParallelArgs,

    #[command(flatten)]
    pub connect: ConnectArgs,
}

#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// The target whose namespace (database and schema) is read. It supplies no credentials.
    /// Default: `default_target` in sqb.toml.
    #[arg(long, value_name = "TARGET")]
    pub from: Option<String>,

    #[command(flatten)]
    pub selection: SelectArgs,

    /// Edit the files. Without it, only print what would change.
    #[arg(long)]
    pub write: bool,

    /// Also replace conflicting types, rename to the physical spelling and remove declarations
    /// absent physically. Requires --write.
    #[arg(long, requires = "write")]
    pub overwrite: bool,

    /// When the write makes a downstream model's declared column disagree with what its SQL
    /// now produces (E052), retype that declaration too, in the same write, level after level;
    /// without it such a write is refused with the columns named.
    #[arg(long, requires = "write")]
    pub cascade: bool,

    /// Output format: unified diffs and a summary, or a JSON list of proposals.
    #[arg(long, value_enum, default_value_t = GenerateFormat::Text)]
    pub format: GenerateFormat,

    #[command(flatten)]
    pub connect: ConnectArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GenerateFormat {
    Text,
    Json,
}

#[derive(Debug, Args)]
pub struct SelectArgs {
    /// Resources to include: NAME or glob (stg_*), model:NAME, tag:TAG, path:DIR (any selector
    /// with a `/` is a path), source:NAME. Space-separated selectors union; a comma inside one
    /// intersects (tag:commerce,source:*). Graph operators add ancestors (+x, 2+x) or
    /// descendants (x+, x+1) in the model DAG. Default: every model and source.
    #[arg(short = 's', long, num_args = 1.., value_name = "SELECTOR")]
    pub select: Vec<String>,

    /// Resources to leave out, with the same grammar as --select.
    #[arg(long, num_args = 1.., value_name = "SELECTOR")]
    pub exclude: Vec<String>,

    /// Read selectors from a file, one per line (blank lines and # comments are skipped).
    #[arg(long, value_name = "FILE")]
    pub select_file: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ConnectArgs {
    /// How long to wait for a Postgres connection (transient refusals retried within it) or
    /// a DuckDB file another process holds: seconds, or a duration such as `90s` or `2m`.
    #[arg(long, default_value_t = 10, value_name = "DURATION", value_parser = seconds)]
    pub connect_timeout: u64,

    /// How long a query (the catalog's, or a semantic query) may run before it is cancelled:
    /// seconds, or a duration such as `90s` or `5m`.
    #[arg(long, default_value_t = 60, value_name = "DURATION", value_parser = seconds)]
    pub statement_timeout: u64,
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The target whose namespace (database and schema) is read. It supplies no credentials.
    /// Default: `default_target` in sqb.toml.
    #[arg(long, value_name = "TARGET")]
    pub from: Option<String>,

    #[command(flatten)]
    pub selection: SelectArgs,

    /// Report format: a table per differing resource, JSON (docs/contract-diff.md), Markdown
    /// for pull requests, JUnit XML for CI dashboards, GitHub Actions annotations, or SARIF
    /// 2.1.0 for GitHub code scanning.
    #[arg(long, value_enum, default_value_t = DiffFormat::Text)]
    pub format: DiffFormat,

    /// Shorthand for --format json.
    #[arg(long, conflicts_with = "format")]
    pub json: bool,

    /// Write the report to FILE (atomically) instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Compare with a previous JSON report of the same target: each finding is marked new or
    /// known, and the baseline's findings that are gone are listed as resolved.
    #[arg(long, value_name = "PREVIOUS.json")]
    pub baseline: Option<PathBuf>,

    /// Which findings fail the run (exit 1): any difference, or only new ones (with --baseline).
    #[arg(long, value_enum, default_value_t = FailOn::Any, requires = "baseline")]
    pub fail_on: FailOn,

    #[command(flatten)]
    pub history: HistoryArgs,

    #[command(flatten)]
    pub connect: ConnectArgs,
}

/// `--history FILE` of the commands whose runs a drift history keeps.
#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// Append the run to a drift history, an embedded DuckDB file (created on first use; never
    /// the warehouse), after the report is written. `sqb drift report` reads it.
    #[arg(long, value_name = "FILE")]
    pub history: Option<PathBuf>,

    /// How long to wait for a history another run is writing.
    #[arg(
        long,
        value_name = "DURATION",
        default_value_t = 30,
        requires = "history",
        value_parser = seconds
    )]
    pub history_timeout: u64,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The target whose relations the models' references name. Default: `default_target`.
    #[arg(long, value_name = "TARGET")]
    pub from: Option<String>,

    #[command(flatten)]
    pub selection: SelectArgs,

    /// Report format, as for `contract diff`.
    #[arg(long, value_enum, default_value_t = DiffFormat::Text)]
    pub format: DiffFormat,

    /// Shorthand for --format json.
    #[arg(long, conflicts_with = "format")]
    pub json: bool,

    /// Write the report to FILE (atomically) instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    #[command(flatten)]
    pub parallel: ParallelArgs,

    #[command(flatten)]
    pub connect: ConnectArgs,
}

/// How many connections a command's queries are spread over.
#[derive(Debug, Clone, Args)]
pub struct ParallelArgs {
    /// How many read-only connections run the queries at once (Postgres: sessions; DuckDB:
    /// connections to the one open file, each on a thread of its own).
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=32))]
    pub connections: u16,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    Any,
    New,
}

#[derive(Debug, Args)]
pub struct CompileArgs {
    /// Skip inferring each model's output from its SQL and checking it against the declaration.
    #[arg(long)]
    pub no_sql_analysis: bool,

    /// Output format: annotated diagnostics, a JSON document (see docs/diagnostics.md), or
    /// SARIF 2.1.0 for GitHub code scanning.
    #[arg(long, value_enum, default_value_t = CompileFormat::Text)]
    pub format: CompileFormat,
}

/// The output formats of `contract diff`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DiffFormat {
    Text,
    Json,
    Markdown,
    Junit,
    Github,
    Sarif,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompileFormat {
    Text,
    Json,
    Sarif,
}

/// A listing, or JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TextOrJson {
    Text,
    Json,
}
