//! Where `--output` writes (docs/security.md, "Output files"): `-` is stdout, a FIFO or a
//! character device is written in place and never renamed over, a full device is exit 2 naming
//! the path and the cause, and a symbolic link or a directory is refused with nothing written.
//! The nodes are the test's own (`mkfifo`, and `mknod` where it runs as root), never `/dev`'s.

mod common;

use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use common::*;

/// The shop example on its DuckDB warehouse, whose dev target differs in two relations.
fn shop() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    copy_tree(&repo().join("examples/shop"), tmp.path());
    let _ = std::fs::remove_file(tmp.path().join("warehouse.duckdb"));
    duckdb_file(&tmp.path().join("warehouse.duckdb"), &shop_migrations());
    tmp
}

/// `contract diff --from dev --json --output OUTPUT`, run in `root`.
fn diff_to(root: &Path, output: &str) -> std::process::Output {
    run(sqb().current_dir(root).args([
        "contract", "diff", "--from", "dev", "--json", "--output", output,
    ]))
}

fn differing(json: &[u8]) -> serde_json::Value {
    let report: serde_json::Value = serde_json::from_slice(json)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(json)));
    report["summary"]["differing"].clone()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

fn mknod(path: &Path, major: u32, minor: u32) {
    let status = std::process::Command::new("mknod")
        .arg(path)
        .args(["c", &major.to_string(), &minor.to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "mknod {}", path.display());
}

#[test]
fn a_dash_is_standard_output_and_no_file_named_dash_is_made() {
    let tmp = shop();
    let out = diff_to(tmp.path(), "-");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(differing(&out.stdout), 2);
    assert!(!tmp.path().join("-").exists());
}

#[test]
fn a_fifo_is_written_in_place_for_its_reader() {
    let tmp = shop();
    let fifo = tmp.path().join("report.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    let out = diff_to(tmp.path(), fifo.to_str().unwrap());
    // Had sqb not opened the FIFO, the reader would wait for ever: a writer of our own that
    // does not block (and fails when no reader waits) lets it finish.
    let _ = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(differing(&reader.join().unwrap()), 2);
    let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
    assert!(kind.is_fifo(), "the FIFO was replaced: {kind:?}");
}

#[test]
fn a_character_device_is_written_in_place_and_a_full_one_fails_naming_it() {
    if !is_root() {
        eprintln!("skipped: mknod needs root; the FIFO test covers writing in place");
        return;
    }
    let tmp = shop();
    let null = tmp.path().join("null");
    mknod(&null, 1, 3);
    let out = diff_to(tmp.path(), null.to_str().unwrap());
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    let kind = std::fs::symlink_metadata(&null).unwrap().file_type();
    assert!(kind.is_char_device(), "the device was replaced: {kind:?}");

    let full = tmp.path().join("full");
    mknod(&full, 1, 7);
    let out = diff_to(tmp.path(), full.to_str().unwrap());
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let message = stderr(&out);
    assert!(message.contains(full.to_str().unwrap()), "{message}");
    assert!(message.contains("No space left on device"), "{message}");
    assert!(std::fs::symlink_metadata(&full)
        .unwrap()
        .file_type()
        .is_char_device());
}

#[test]
fn a_symbolic_link_is_refused_and_its_target_is_untouched() {
    let tmp = shop();
    let elsewhere = tempfile::tempdir().unwrap();
    let target = elsewhere.path().join("kept.json");
    std::fs::write(&target, "before").unwrap();
    let link = tmp.path().join("report.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let out = diff_to(tmp.path(), link.to_str().unwrap());
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let message = stderr(&out);
    assert!(message.contains("symbolic link"), "{message}");
    assert!(message.contains(target.to_str().unwrap()), "{message}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "before");
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
}

#[test]
fn a_directory_is_refused() {
    let tmp = shop();
    let dir = tmp.path().join("reports");
    std::fs::create_dir(&dir).unwrap();
    let out = diff_to(tmp.path(), dir.to_str().unwrap());
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("is a directory"), "{}", stderr(&out));
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
}

#[test]
fn a_regular_file_is_still_replaced_whole() {
    let tmp = shop();
    let report = tmp.path().join("report.json");
    std::fs::write(&report, "an older report").unwrap();
    let out = diff_to(tmp.path(), report.to_str().unwrap());
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(differing(&std::fs::read(&report).unwrap()), 2);
}
