//! `sqb serve --watch`: the project's files polled twice a second, and a reload asked for
//! (as SIGHUP asks, through the same counter) once a change has settled: a file added, removed,
//! or with another size or modification time, then nothing more for one poll, so that an
//! editor's or a checkout's several writes make one reload. sqb's own state (`.sqb/`), hidden
//! directories (`.git/`) and the warehouse's files (`*.duckdb`, `*.wal`) are not the project.

use std::hash::{Hash as _, Hasher as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

const POLL: Duration = Duration::from_millis(500);

/// Polls `root` until the server stops, adding one to `reloads` for each settled change.
pub(super) async fn changes(root: PathBuf, reloads: Arc<AtomicUsize>) {
    let mut loaded = fingerprint_of(&root).await;
    let mut last = loaded;
    loop {
        tokio::time::sleep(POLL).await;
        let now = fingerprint_of(&root).await;
        if now != loaded && now == last {
            tracing::info!("a project file changed: reloading");
            reloads.fetch_add(1, Ordering::SeqCst);
            loaded = now;
        }
        last = now;
    }
}

async fn fingerprint_of(root: &Path) -> u64 {
    let root = root.to_path_buf();
    tokio::task::spawn_blocking(move || fingerprint(&root))
        .await
        .unwrap_or(0)
}

/// One number for every project file's path, size and modification time.
fn fingerprint(root: &Path) -> u64 {
    let mut files: Vec<(PathBuf, u64, Option<std::time::SystemTime>)> = walkdir::WalkDir::new(root)
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !skipped(e))
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .filter_map(|e| {
            let meta = e.metadata().ok()?;
            Some((e.into_path(), meta.len(), meta.modified().ok()))
        })
        .collect();
    files.sort();
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    files.hash(&mut hasher);
    hasher.finish()
}

fn skipped(entry: &walkdir::DirEntry) -> bool {
    let name = entry.file_name().to_string_lossy();
    if entry.file_type().is_dir() {
        return name.starts_with('.') || name == "target";
    }
    name.ends_with(".duckdb") || name.ends_with(".wal") || name.ends_with(".tmp")
}

#[cfg(test)]
mod tests {
    use super::fingerprint;

    #[test]
    fn a_project_file_changes_the_fingerprint_and_sqb_state_or_the_warehouse_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("models")).unwrap();
        std::fs::write(root.join("sqb.toml"), "name = \"x\"\n").unwrap();
        let before = fingerprint(root);
        std::fs::create_dir_all(root.join(".sqb/cache")).unwrap();
        std::fs::write(root.join(".sqb/cache/x.bin"), "cache").unwrap();
        std::fs::write(root.join("warehouse.duckdb"), "db").unwrap();
        std::fs::write(root.join("warehouse.duckdb.wal"), "wal").unwrap();
        assert_eq!(fingerprint(root), before);
        std::fs::write(root.join("models/a.sql"), "select 1 as x\n").unwrap();
        let added = fingerprint(root);
        assert_ne!(added, before);
        std::fs::write(root.join("models/a.sql"), "select 2 as x, 3 as y\n").unwrap();
        assert_ne!(fingerprint(root), added);
        std::fs::remove_file(root.join("models/a.sql")).unwrap();
        assert_eq!(fingerprint(root), before);
    }
}
