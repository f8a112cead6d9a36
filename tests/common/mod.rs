//! Helpers shared by the integration tests: running the real `sqb` binary.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root: where `cargo test` says it is at run time, because a test binary from a
/// target directory shared with another checkout (CI's cache) was compiled with that checkout's
/// path.
pub fn repo() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from)
}

/// A `sqb` command with colours off and a clean environment for the variables sqb reads.
pub fn sqb() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sqb"));
    // Tests run against the repository's testdata folders: no compile cache is written there
    // (tests/cache.rs covers the cache, in temp dirs).
    cmd.env_remove("SQB_DATABASE_URL")
        .env_remove("PGPASSWORD")
        .env_remove("RUST_LOG")
        .env("SQB_NO_CACHE", "1")
        .env("NO_COLOR", "1");
    cmd
}

/// Exit code, stdout and stderr in one text for snapshots, with `root` replaced by `[ROOT]`.
pub fn transcript(output: &Output, root: &Path) -> String {
    let clean = |bytes: &[u8]| {
        String::from_utf8_lossy(bytes)
            .replace(&root.display().to_string(), "[ROOT]")
            .trim_end()
            .to_string()
    };
    format!(
        "exit: {}\n--- stdout\n{}\n--- stderr\n{}\n",
        output
            .status
            .code()
            .map_or("signal".to_string(), |c| c.to_string()),
        clean(&output.stdout),
        clean(&output.stderr)
    )
}

pub fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("sqb runs")
}

/// The URL of the test server's maintenance database (scripts/postgres prints it), or `None`
/// when there is none. Under CI=true a missing server fails the test instead of skipping it.
pub fn postgres_url() -> Option<String> {
    match std::env::var("SQB_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("SQB_TEST_POSTGRES_URL is not set and CI=true: PostgreSQL tests must run")
        }
        _ => {
            eprintln!("skipped: SQB_TEST_POSTGRES_URL is not set (run scripts/test)");
            None
        }
    }
}

/// Runs `f` with a connection to `url` on a runtime of its own.
fn with_pg<T>(url: &str, f: impl AsyncFnOnce(&mut sqlx::PgConnection) -> T) -> T {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        use sqlx::Connection;
        let mut conn = sqlx::PgConnection::connect(url)
            .await
            .expect("connect to the test server");
        f(&mut conn).await
    })
}

/// Runs SQL (several statements allowed) on a Postgres database.
pub fn pg_exec(url: &str, sql: &str) {
    with_pg(url, async |conn| {
        sqlx::raw_sql(sql)
            .execute(conn)
            .await
            .unwrap_or_else(|e| panic!("{e}\n{sql}"));
    });
}

/// Runs SQL (several statements, in one implicit transaction) on a Postgres database, and says
/// why it failed.
pub fn pg_try_exec(url: &str, sql: &str) -> Result<(), String> {
    with_pg(url, async |conn| {
        sqlx::raw_sql(sql)
            .execute(conn)
            .await
            .map(|_| ())
            .map_err(|e| e.to_string())
    })
}

/// Runs a query returning one text column per row.
pub fn pg_strings(url: &str, sql: &str) -> Vec<String> {
    with_pg(url, async |conn| {
        sqlx::query_scalar::<_, String>(sql)
            .fetch_all(conn)
            .await
            .unwrap_or_else(|e| panic!("{e}\n{sql}"))
    })
}

/// Runs a query and says, per row, whether each column is NULL.
pub fn pg_nulls(url: &str, sql: &str) -> Vec<Vec<bool>> {
    use sqlx::{Row as _, ValueRef as _};
    with_pg(url, async |conn| {
        let rows = sqlx::raw_sql(sql)
            .fetch_all(conn)
            .await
            .unwrap_or_else(|e| panic!("{e}\n{sql}"));
        rows.iter()
            .map(|row| {
                (0..row.len())
                    .map(|i| row.try_get_raw(i).unwrap().is_null())
                    .collect()
            })
            .collect()
    })
}

/// A database of its own for one test, dropped at the end.
pub struct TestDb {
    admin_url: String,
    pub name: String,
    pub url: String,
}

impl TestDb {
    pub fn create(test: &str) -> Option<TestDb> {
        let admin_url = postgres_url()?;
        let name = format!("sqb_{}_{}", test, std::process::id());
        pg_exec(
            &admin_url,
            &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
        );
        pg_exec(&admin_url, &format!("CREATE DATABASE {name}"));
        let url = with_database(&admin_url, &name);
        Some(TestDb {
            admin_url,
            name,
            url,
        })
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        pg_exec(
            &self.admin_url,
            &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name),
        );
    }
}

/// `url` with its database replaced.
pub fn with_database(url: &str, database: &str) -> String {
    let (base, _) = url.rsplit_once('/').expect("a URL with a database");
    format!("{base}/{database}")
}

/// Builds a DuckDB file from SQL; the connection is closed on return, releasing its lock.
#[cfg(feature = "duckdb")]
pub fn duckdb_file(path: &Path, sql: &str) {
    let conn = duckdb::Connection::open(path).unwrap();
    conn.execute_batch(sql)
        .unwrap_or_else(|e| panic!("{e}\n{sql}"));
    conn.execute_batch("CHECKPOINT").unwrap();
}

/// Writes `files` (relative path, content) under `root`.
pub fn write_files(root: &Path, files: &[(&str, &str)]) {
    for (rel, content) in files {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
}

/// Every file under `root` but sqb's own state (`.sqb/`), each under a `=== path` line, in
/// path order: a written project as one snapshot.
pub fn tree(root: &Path) -> String {
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(root)
        .into_iter()
        .filter_entry(|e| e.file_name() != ".sqb")
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| e.path().strip_prefix(root).unwrap().to_path_buf())
        .collect();
    files.sort();
    files
        .iter()
        .map(|rel| {
            let text = std::fs::read_to_string(root.join(rel)).unwrap();
            format!("=== {}\n{text}", rel.display())
        })
        .collect()
}

/// Copies a directory tree.
pub fn copy_tree(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.unwrap();
        let rel = entry.path().strip_prefix(from).unwrap();
        let dest = to.join(rel);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
        } else {
            std::fs::copy(entry.path(), &dest).unwrap();
        }
    }
}

/// The migrations that build the shop demo warehouse, concatenated.
pub fn shop_migrations() -> String {
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo().join("migrations"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sql"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The runs of a fixture case (`runs.toml`): each command line and the exit status it must end
/// with.
#[derive(serde::Deserialize)]
pub struct CaseRuns {
    pub run: Vec<CaseRun>,
}

#[derive(serde::Deserialize)]
pub struct CaseRun {
    pub args: Vec<String>,
    pub exit: i32,
}

pub fn case_runs(case: &Path) -> Vec<CaseRun> {
    let path = case.join("runs.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let runs: CaseRuns =
        toml_edit::de::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    runs.run
}

/// The project of a fixture case copied to `root`, its connection switched to `engine`. A
/// case's `sqb.toml` is written for DuckDB (`path = "w.duckdb"`); on Postgres the URL comes from
/// the test.
pub fn case_project(case: &Path, engine: &str, root: &Path) {
    copy_tree(case, root);
    for file in [
        "runs.toml",
        "warehouse.duckdb.sql",
        "warehouse.postgres.sql",
    ] {
        let _ = std::fs::remove_file(root.join(file));
    }
    if engine == "postgres" {
        let path = root.join("sqb.toml");
        let toml = std::fs::read_to_string(&path).unwrap();
        let switched = toml.replace(
            "engine = \"duckdb\"\npath = \"w.duckdb\"\n",
            "engine = \"postgres\"\n",
        );
        assert_ne!(
            toml,
            switched,
            "{}: not a DuckDB connection",
            path.display()
        );
        std::fs::write(path, switched).unwrap();
    }
}

/// The warehouse SQL of a fixture case for `engine`; `None` when the case does not run there.
pub fn case_warehouse(case: &Path, engine: &str) -> Option<String> {
    std::fs::read_to_string(case.join(format!("warehouse.{engine}.sql"))).ok()
}

/// Asserts that `out` ended with exit status `exit`, and returns its transcript under a
/// `$ sqb COMMAND` line.
pub fn expect_exit(out: &Output, exit: i32, command: &str, root: &Path) -> String {
    let text = transcript(out, root);
    assert_eq!(out.status.code(), Some(exit), "sqb {command}\n{text}");
    format!("$ sqb {command}\n{text}")
}

/// A Postgres URL with the password `secret-pw` on a port of 127.0.0.1 that nothing listens
/// on (the listener that found it is gone), and the port: what an output must never leak.
pub fn unreachable_postgres_url() -> (String, u16) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    (
        format!("postgres://sqb:secret-pw@127.0.0.1:{port}/nowhere"),
        port,
    )
}
