//! Ctrl-C and SIGTERM during `contract diff`: exit 130 or 143, no partial report, no temp
//! files. (Ctrl-C during `generate --write` is in tests/generate.rs.)

mod common;

use std::io::Read;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{copy_tree, duckdb_file, repo, run, shop_migrations, sqb, transcript};

fn shop(root: &Path) {
    copy_tree(&repo().join("examples/shop"), root);
    let _ = std::fs::remove_file(root.join("warehouse.duckdb"));
    duckdb_file(&root.join("warehouse.duckdb"), &shop_migrations());
}

/// Files in `dir` whose names start with `.sqb-tmp-` (an atomic write's temp file).
fn temp_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".sqb-tmp-"))
        .collect()
}

#[test]
fn a_signal_while_the_report_is_written_leaves_the_old_report_or_none() {
    let tmp = tempfile::tempdir().unwrap();
    shop(tmp.path());
    let reports = tempfile::tempdir().unwrap();
    let report = reports.path().join("drift.json");
    for (signal, code) in [("sigterm", 143), ("sigint", 130)] {
        let _ = std::fs::remove_file(&report);
        for previous in [None, Some("{\"an\": \"earlier report\"}\n")] {
            if let Some(text) = previous {
                std::fs::write(&report, text).unwrap();
            }
            let out = run(sqb()
                .arg("--project-dir")
                .arg(tmp.path())
                .args(["contract", "diff", "--from", "dev", "--json", "--output"])
                .arg(&report)
                .env("SQB_FAULT_AFTER", format!("{signal}:temp-written")));
            let text = transcript(&out, tmp.path());
            assert_eq!(out.status.code(), Some(code), "{signal}: {text}");
            assert!(
                text.contains(&format!("interrupted by {}", signal.to_uppercase())),
                "{text}"
            );
            match previous {
                None => assert!(!report.exists(), "{signal}: a partial report was left"),
                Some(old) => assert_eq!(std::fs::read_to_string(&report).unwrap(), old),
            }
            assert!(
                temp_files(reports.path()).is_empty(),
                "{signal}: temp file left"
            );
            assert!(out.stdout.is_empty());
        }
    }
}

/// A server that accepts connections and never answers: sqb waits in the Postgres handshake
/// until its connect timeout, unless it is stopped first.
fn silent_server() -> (TcpListener, u16) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    (listener, port)
}

fn postgres_project(root: &Path) {
    common::write_files(
        root,
        &[
            (
                "sqb.toml",
                "name = \"s\"\n\n[connection]\nengine = \"postgres\"\n\n[targets.prod]\nschema = \"public\"\n",
            ),
            ("models/orders.sql", "SELECT 1 AS id\n"),
            ("models/orders.toml", "[columns.id]\ntype = \"INTEGER\"\n"),
        ],
    );
}

#[test]
fn a_signal_while_waiting_on_the_server_stops_at_once() {
    for (signal, code) in [("INT", 130), ("TERM", 143)] {
        let tmp = tempfile::tempdir().unwrap();
        postgres_project(tmp.path());
        let (listener, port) = silent_server();
        let report = tmp.path().join("report.json");
        let mut child = Command::new(env!("CARGO_BIN_EXE_sqb"))
            .arg("--project-dir")
            .arg(tmp.path())
            .args([
                "contract",
                "diff",
                "--from",
                "prod",
                "--connect-timeout",
                "60",
            ])
            .arg("--output")
            .arg(&report)
            .env(
                "SQB_DATABASE_URL",
                format!("postgres://ana:pw@127.0.0.1:{port}/shop"),
            )
            .env("SQB_NO_CACHE", "1")
            .env("NO_COLOR", "1")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Once sqb has connected, it is waiting for the server's answer.
        let (_conn, _) = listener.accept().unwrap();
        std::thread::sleep(Duration::from_millis(200));
        let start = Instant::now();
        let status = Command::new("kill")
            .args([format!("-{signal}"), child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let exit = child.wait().unwrap();
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        assert_eq!(exit.code(), Some(code), "SIG{signal}: {stderr}");
        assert!(start.elapsed() < Duration::from_secs(10));
        assert!(
            stderr.contains(&format!("interrupted by SIG{signal}")),
            "{stderr}"
        );
        assert!(!report.exists());
        assert!(temp_files(tmp.path()).is_empty());
    }
}
