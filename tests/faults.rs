//! Warehouse faults on real servers: a connection dropped, stalled or terminated in the middle
//! of the catalog query, a role without privileges, and DuckDB files that are corrupt or from a
//! newer storage version. Each failure is exit 2 with a clear message and no report written.
//!
//! The network faults go through a small TCP proxy in front of the test PostgreSQL, which
//! forwards everything until it sees sqb's catalog query, then does what the test asks.

mod common;

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use common::*;

#[derive(Clone)]
enum Fault {
    /// Close both sides as soon as the query is sent.
    Drop,
    /// Forward nothing more from the server.
    Stall,
    /// Hold the server's answer until released.
    Pause(Arc<(Mutex<bool>, Condvar)>),
}

const MARK: &[u8] = b"pg_catalog.pg_class";

/// Starts the proxy for one client connection; returns its port.
fn proxy(upstream: &str, fault: Fault) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let upstream = upstream.to_string();
    std::thread::spawn(move || {
        let Ok((client, _)) = listener.accept() else {
            return;
        };
        let server = TcpStream::connect(&upstream).unwrap();
        let seen = Arc::new(AtomicBool::new(false));
        let (c2, s2, seen2, fault2) = (
            client.try_clone().unwrap(),
            server.try_clone().unwrap(),
            Arc::clone(&seen),
            fault.clone(),
        );
        // Client to server: watch for the catalog query.
        std::thread::spawn(move || {
            pump(c2, s2, |chunk, from, to| {
                if chunk.windows(MARK.len()).any(|w| w == MARK) {
                    seen2.store(true, Ordering::SeqCst);
                    if matches!(fault2, Fault::Drop) {
                        let _ = from.shutdown(Shutdown::Both);
                        let _ = to.shutdown(Shutdown::Both);
                        return false;
                    }
                }
                true
            })
        });
        // Server to client: act once the query has gone out.
        pump(server, client, |_, _, _| {
            if !seen.load(Ordering::SeqCst) {
                return true;
            }
            match &fault {
                Fault::Drop => false,
                Fault::Stall => {
                    std::thread::sleep(Duration::from_secs(60));
                    false
                }
                Fault::Pause(gate) => {
                    let (lock, cv) = &**gate;
                    let mut open = lock.lock().unwrap();
                    while !*open {
                        open = cv.wait(open).unwrap();
                    }
                    true
                }
            }
        });
    });
    port
}

/// Copies `from` to `to` while `go(chunk)` says so (it runs before each chunk is forwarded).
fn pump(
    mut from: TcpStream,
    mut to: TcpStream,
    mut go: impl FnMut(&[u8], &TcpStream, &TcpStream) -> bool,
) {
    let mut buf = [0u8; 16 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if !go(&buf[..n], &from, &to) || to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}

/// The test server's host:port, and the URL through the proxy (no TLS, so that the proxy can
/// see the query).
fn through_proxy(db_url: &str, fault: Fault) -> String {
    let rest = db_url.split_once('@').unwrap().1;
    let host_port = rest.split_once('/').unwrap().0;
    let port = proxy(host_port, fault);
    format!(
        "{}@127.0.0.1:{port}/{}?sslmode=disable",
        db_url.split_once('@').unwrap().0,
        rest.split_once('/').unwrap().1
    )
}

const PG_HEADER: &str = "name = \"faults\"\ndefault_target = \"prod\"\n\n[connection]\nengine = \"postgres\"\n\n[targets.prod]\nschema = \"analytics\"\n";

fn pg_project(root: &Path) {
    write_files(
        root,
        &[
            ("sqb.toml", PG_HEADER),
            ("models/orders.sql", "SELECT 1 AS id\n"),
            ("models/orders.toml", "[columns.id]\ntype = \"INTEGER\"\n"),
        ],
    );
}

fn diff_to_file(root: &Path, url: &str, extra: &[&str]) -> (std::process::Output, String) {
    let report = root.join("report.json");
    let out = run(sqb()
        .arg("--project-dir")
        .arg(root)
        .args(["contract", "diff", "--from", "prod", "--json", "--output"])
        .arg(&report)
        .args(extra)
        .env("SQB_DATABASE_URL", url));
    let text = transcript(&out, root);
    assert!(!report.exists(), "a failed run wrote a report: {text}");
    assert!(!text.contains("panicked"), "{text}");
    (out, text)
}

fn warehouse(name: &str) -> Option<TestDb> {
    let db = TestDb::create(name)?;
    pg_exec(
        &db.url,
        "CREATE SCHEMA analytics; CREATE TABLE analytics.orders (id integer);",
    );
    Some(db)
}

#[test]
fn a_connection_dropped_mid_query_is_a_clear_error() {
    let Some(db) = warehouse("dropped") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    pg_project(tmp.path());
    let url = through_proxy(&db.url, Fault::Drop);
    let (out, text) = diff_to_file(tmp.path(), &url, &[]);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("error:"), "{text}");
}

#[test]
fn a_stalled_server_hits_the_statement_timeout() {
    let Some(db) = warehouse("stalled") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    pg_project(tmp.path());
    let url = through_proxy(&db.url, Fault::Stall);
    let start = Instant::now();
    let (out, text) = diff_to_file(tmp.path(), &url, &["--statement-timeout", "1"]);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(
        text.contains("the catalog query timed out after 1s"),
        "{text}"
    );
    assert!(text.contains("hint: raise --statement-timeout"), "{text}");
    assert!(start.elapsed() < Duration::from_secs(30));
}

#[test]
fn a_backend_terminated_mid_introspection_is_a_clear_error() {
    let Some(db) = warehouse("terminated") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    pg_project(tmp.path());
    let gate = Arc::new((Mutex::new(false), Condvar::new()));
    let url = through_proxy(&db.url, Fault::Pause(Arc::clone(&gate)));
    let admin = db.url.clone();
    let killer = std::thread::spawn(move || {
        // Wait for sqb's session to be in its transaction, then terminate it server-side. The
        // proxy holds the session's reply until then: a busy machine only makes this wait
        // longer (up to 30 s), never lets the query through unkilled.
        for _ in 0..600 {
            let killed = pg_strings(
                &admin,
                "SELECT pg_terminate_backend(pid)::text FROM pg_stat_activity
                  WHERE application_name = 'sqb' AND state <> 'idle' AND pid <> pg_backend_pid()",
            );
            if killed.iter().any(|k| k == "true") {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let (lock, cv) = &*gate;
        *lock.lock().unwrap() = true;
        cv.notify_all();
    });
    let (out, text) = diff_to_file(tmp.path(), &url, &[]);
    killer.join().unwrap();
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("error:"), "{text}");
}

#[test]
fn a_role_without_any_privilege_still_reads_the_catalog() {
    let Some(db) = warehouse("noprivs") else {
        return;
    };
    let role = format!("sqb_noprivs_{}", std::process::id());
    pg_exec(
        &db.url,
        &format!(
            "DROP ROLE IF EXISTS {role}; CREATE ROLE {role} LOGIN PASSWORD 'pw';
             REVOKE ALL ON SCHEMA analytics FROM PUBLIC; REVOKE ALL ON analytics.orders FROM PUBLIC;"
        ),
    );
    let tmp = tempfile::tempdir().unwrap();
    pg_project(tmp.path());
    let url = db.url.replace("sqb_test:sqb_test@", &format!("{role}:pw@"));
    let out = run(sqb()
        .arg("--project-dir")
        .arg(tmp.path())
        .args(["contract", "diff", "--from", "prod"])
        .env("SQB_DATABASE_URL", &url));
    let text = transcript(&out, tmp.path());
    pg_exec(&db.url, &format!("DROP OWNED BY {role}"));
    drop(db);
    pg_exec(
        &postgres_url().unwrap(),
        &format!("DROP ROLE IF EXISTS {role}"),
    );
    // sqb reads only pg_catalog: no USAGE on the schema nor SELECT on the table is needed.
    assert_eq!(out.status.code(), Some(0), "{text}");
}

const DUCK_HEADER: &str = "name = \"faults\"\ndefault_target = \"prod\"\n\n[connection]\nengine = \"duckdb\"\npath = \"w.duckdb\"\n\n[targets.prod]\nschema = \"analytics\"\n";

fn duck_project(root: &Path) {
    write_files(
        root,
        &[
            ("sqb.toml", DUCK_HEADER),
            ("models/orders.sql", "SELECT 1 AS id\n"),
            ("models/orders.toml", "[columns.id]\ntype = \"INTEGER\"\n"),
        ],
    );
}

#[test]
fn a_corrupt_duckdb_file_is_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    duck_project(tmp.path());
    let path = tmp.path().join("w.duckdb");
    // Not a database at all, and a real one with its blocks overwritten.
    std::fs::write(&path, b"this is not a DuckDB file\n".repeat(1000)).unwrap();
    let (out, text) = diff_to_file(tmp.path(), "", &[]);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("could not open DuckDB database"), "{text}");
    std::fs::remove_file(&path).unwrap();
    duckdb_file(
        &path,
        "CREATE SCHEMA analytics; CREATE TABLE analytics.orders (id INTEGER);",
    );
    let mut bytes = std::fs::read(&path).unwrap();
    for b in bytes.iter_mut().skip(4096 * 2) {
        *b = 0xA5;
    }
    std::fs::write(&path, &bytes).unwrap();
    let (out, text) = diff_to_file(tmp.path(), "", &[]);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("error:"), "{text}");
}

#[test]
fn a_duckdb_file_from_a_newer_storage_version_is_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    duck_project(tmp.path());
    let path = tmp.path().join("w.duckdb");
    duckdb_file(
        &path,
        "CREATE SCHEMA analytics; CREATE TABLE analytics.orders (id INTEGER);",
    );
    // The main header: 8 bytes of checksum, "DUCK", then the storage version (u64).
    let mut bytes = std::fs::read(&path).unwrap();
    assert_eq!(&bytes[8..12], b"DUCK");
    bytes[12..20].copy_from_slice(&9_999u64.to_le_bytes());
    // The header block's checksum (DuckDB's: 5381 xor-folded with each little-endian u64 of
    // the block after the checksum, times a constant), so that only the version is wrong.
    let checksum = bytes[8..4096]
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()).wrapping_mul(0xbf58476d1ce4e5b9))
        .fold(5381u64, |acc, x| acc ^ x);
    bytes[0..8].copy_from_slice(&checksum.to_le_bytes());
    std::fs::write(&path, &bytes).unwrap();
    let (out, text) = diff_to_file(tmp.path(), "", &[]);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("could not open DuckDB database"), "{text}");
    assert!(text.contains("version"), "{text}");
}
