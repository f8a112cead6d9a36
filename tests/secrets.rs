//! No password reaches any output (docs/security.md, "Credentials"), looked for as an attacker
//! would: one unique password planted in every place one can arrive (each `sqb.toml` of
//! testdata/secrets/sqb_toml, broken or not, `SQB_DATABASE_URL`, `PGPASSWORD`), every command
//! run in every format, with and without `-v`, and every byte it writes searched: stdout,
//! stderr, and every file it leaves in the project.

mod common;

use std::path::{Path, PathBuf};

use common::*;

/// Unique to this run, and nothing sqb could print by chance.
fn planted() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!("Zq7-planted-{}-{nanos}", std::process::id())
}

/// Every `sqb.toml` variant, with its name.
fn variants() -> Vec<(String, String)> {
    let dir = repo().join("testdata/secrets/sqb_toml");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let name = p.file_stem().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect()
}

/// Every command and format that reads `sqb.toml`, as arguments.
fn commands() -> Vec<Vec<&'static str>> {
    let mut commands = Vec::new();
    for format in ["text", "json", "sarif"] {
        commands.push(vec!["compile", "--format", format]);
    }
    for format in ["text", "json", "markdown", "junit", "github", "sarif"] {
        commands.push(vec![
            "contract", "diff", "--from", "dev", "--format", format,
        ]);
    }
    commands.push(vec![
        "contract",
        "diff",
        "--from",
        "dev",
        "--json",
        "--output",
        "report.json",
    ]);
    for format in ["text", "json"] {
        commands.push(vec![
            "contract", "generate", "--from", "dev", "--format", format,
        ]);
    }
    commands.push(vec!["lineage", "orders", "--format", "json"]);
    commands.push(vec!["publish", "--from", "dev"]);
    commands
}

/// Every file under `root` but the project's own, with its bytes.
fn written_files(root: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path != root.join("sqb.toml") && !path.starts_with(root.join("models")) {
                files.push((path.clone(), std::fs::read(&path).unwrap()));
            }
        }
    }
    files
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

#[test]
fn a_planted_password_reaches_no_output_of_any_command() {
    let password = planted();
    let environments: [&[(&str, String)]; 3] = [
        &[],
        &[(
            "SQB_DATABASE_URL",
            format!("postgres://ana:{password}@127.0.0.1:9/shop?connect_timeout=1"),
        )],
        &[("PGPASSWORD", password.clone())],
    ];
    let mut leaks = Vec::new();
    let mut runs = 0;
    for (variant, toml) in variants() {
        let tmp = tempfile::tempdir().unwrap();
        copy_tree(&repo().join("testdata/secrets/project"), tmp.path());
        std::fs::write(
            tmp.path().join("sqb.toml"),
            toml.replace("PLANTED", &password),
        )
        .unwrap();
        for env in environments {
            for args in commands() {
                for verbose in [false, true] {
                    let mut cmd = sqb();
                    cmd.current_dir(tmp.path())
                        .args(verbose.then_some("-v"))
                        .args(&args);
                    for (key, value) in env {
                        cmd.env(key, value);
                    }
                    let out = run(&mut cmd);
                    runs += 1;
                    let what = format!(
                        "{variant}, env {:?}, sqb {}{}",
                        env.iter().map(|(k, _)| *k).collect::<Vec<_>>(),
                        if verbose { "-v " } else { "" },
                        args.join(" ")
                    );
                    if contains(&out.stdout, &password) {
                        leaks.push(format!("{what}: stdout"));
                    }
                    if contains(&out.stderr, &password) {
                        leaks.push(format!(
                            "{what}: stderr\n{}",
                            String::from_utf8_lossy(&out.stderr)
                        ));
                    }
                    for (path, bytes) in written_files(tmp.path()) {
                        if contains(&bytes, &password) {
                            leaks.push(format!("{what}: {}", path.display()));
                        }
                    }
                }
            }
        }
    }
    assert!(runs > 500, "only {runs} runs");
    assert!(
        leaks.is_empty(),
        "the password reached:\n{}",
        leaks.join("\n")
    );
}
