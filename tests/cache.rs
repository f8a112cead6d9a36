//! The caches (.sqb/cache/): an unchanged project's verdict is reused, any change is a miss,
//! errors are never cached, unchanged sidecars are not parsed again, only the models whose SQL
//! or upstream answers changed are analysed again (with the verdict of a compile without any
//! cache), a broken cache file is ignored, and `--no-cache` leaves no trace.

mod common;

use std::path::Path;
use std::process::Output;

use common::{copy_tree, duckdb_file, repo, run, shop_migrations, sqb, transcript};

/// sqb with the cache on (the other suites turn it off) and debug logging, which says whether
/// the cache was hit.
fn cached(root: &Path, args: &[&str]) -> Output {
    let mut cmd = sqb();
    cmd.env_remove("SQB_NO_CACHE")
        .arg("-v")
        .arg("--project-dir")
        .arg(root)
        .args(args);
    run(&mut cmd)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn hit(out: &Output) -> bool {
    stderr(out).contains("compile cache hit")
}

/// How many sidecars the run parsed (the others came from the declarations cache).
fn parsed(out: &Output) -> usize {
    parsed_beside(out, "declarations cache read")
}

/// The `parsed=` count of the `-v` line that contains `line`.
fn parsed_beside(out: &Output, line: &str) -> usize {
    let log = stderr(out);
    let found = log
        .lines()
        .find(|l| l.contains(line))
        .unwrap_or_else(|| panic!("no `{line}` line in:\n{log}"));
    found
        .rsplit("parsed=")
        .next()
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// `generate --write --overwrite` from dev, which contradicts the SQL of an enforced model of the
/// shop: its recompile fails and every file is restored.
const OVERWRITE_FROM_DEV: &[&str] = &[
    "contract",
    "generate",
    "--from",
    "dev",
    "--write",
    "--overwrite",
];

fn uncached(root: &Path, args: &[&str]) -> Output {
    let mut cmd = sqb();
    cmd.arg("--project-dir").arg(root).args(args);
    run(&mut cmd)
}

/// The lines a user sees, without the debug log.
fn visible(out: &Output, root: &Path) -> String {
    transcript(out, root)
        .lines()
        .filter(|l| !l.contains(" DEBUG "))
        .collect::<Vec<_>>()
        .join("\n")
}

fn project_with_a_warning(root: &Path) {
    copy_tree(
        &repo().join("testdata/compile/numeric_without_precision"),
        root,
    );
}

#[test]
fn an_unchanged_project_is_not_compiled_twice_and_says_the_same() {
    let tmp = tempfile::tempdir().unwrap();
    project_with_a_warning(tmp.path());
    let first = cached(tmp.path(), &["compile"]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    assert!(!hit(&first));
    let cache = tmp.path().join(".sqb/cache");
    assert!(cache.join("compile-v1.json").is_file());
    assert_eq!(
        std::fs::read_to_string(cache.join(".gitignore"))
            .unwrap()
            .lines()
            .last(),
        Some("*")
    );
    assert!(std::fs::read_to_string(cache.join("CACHEDIR.TAG"))
        .unwrap()
        .starts_with("Signature: 8a477f597d28d172789f06886806bc55"));

    let second = cached(tmp.path(), &["compile"]);
    assert!(hit(&second), "{}", stderr(&second));
    assert_eq!(second.status.code(), Some(0));
    // The warning is replayed with its snippet; JSON output too.
    assert_eq!(visible(&first, tmp.path()), visible(&second, tmp.path()));
    assert!(visible(&second, tmp.path()).contains("W001"));
    let json_cold = {
        let mut cmd = sqb();
        cmd.arg("--project-dir")
            .arg(tmp.path())
            .args(["compile", "--format", "json"]);
        run(&mut cmd)
    };
    let json_warm = cached(tmp.path(), &["compile", "--format", "json"]);
    assert!(hit(&json_warm));
    assert_eq!(json_cold.stdout, json_warm.stdout);
}

#[test]
fn any_change_is_a_miss_and_errors_are_reported_fresh() {
    let tmp = tempfile::tempdir().unwrap();
    project_with_a_warning(tmp.path());
    assert_eq!(cached(tmp.path(), &["compile"]).status.code(), Some(0));
    // An error introduced after a cached valid compile is found.
    let sidecar = tmp.path().join("models/orders.toml");
    let original = std::fs::read_to_string(&sidecar).unwrap();
    std::fs::write(&sidecar, format!("colour = \"red\"\n{original}")).unwrap();
    let broken = cached(tmp.path(), &["compile"]);
    assert!(!hit(&broken));
    assert_eq!(broken.status.code(), Some(1), "{}", stderr(&broken));
    assert!(visible(&broken, tmp.path()).contains("unknown key `colour`"));
    // Errors are not cached: the same broken project is compiled again, not replayed.
    let again = cached(tmp.path(), &["compile"]);
    assert!(!hit(&again) && again.status.code() == Some(1));
    // A new file is a change too.
    std::fs::write(&sidecar, &original).unwrap();
    assert_eq!(cached(tmp.path(), &["compile"]).status.code(), Some(0));
    std::fs::write(tmp.path().join("models/extra.sql"), "SELECT 1 AS x\n").unwrap();
    let added = cached(tmp.path(), &["compile"]);
    assert!(!hit(&added));
    assert!(visible(&added, tmp.path()).contains("compiled 2 models"));
    // So is an option that changes what compile checks.
    let no_sql = cached(tmp.path(), &["compile", "--no-sql-analysis"]);
    assert!(!hit(&no_sql));
}

#[test]
fn a_damaged_cache_file_is_ignored_and_replaced() {
    let tmp = tempfile::tempdir().unwrap();
    project_with_a_warning(tmp.path());
    assert_eq!(cached(tmp.path(), &["compile"]).status.code(), Some(0));
    let file = tmp.path().join(".sqb/cache/compile-v1.json");
    for damage in ["{ not json", "", "{\"key\": 3}"] {
        std::fs::write(&file, damage).unwrap();
        let out = cached(tmp.path(), &["compile"]);
        assert_eq!(out.status.code(), Some(0), "{damage:?}: {}", stderr(&out));
        assert!(!hit(&out));
        assert!(visible(&out, tmp.path()).contains("W001"));
        let stored: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        assert!(stored["key"].is_string());
    }
}

#[test]
fn an_unwritable_cache_does_not_fail_the_command() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    project_with_a_warning(tmp.path());
    // A file where the .sqb directory would be: the cache cannot be written.
    std::fs::write(tmp.path().join(".sqb"), "").unwrap();
    let out = cached(tmp.path(), &["compile"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    std::fs::remove_file(tmp.path().join(".sqb")).unwrap();
    // A read-only project directory (root ignores permissions, so only check what it can).
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o555)).unwrap();
    let out = cached(tmp.path(), &["compile"]);
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn no_cache_neither_reads_nor_writes() {
    let tmp = tempfile::tempdir().unwrap();
    project_with_a_warning(tmp.path());
    let out = cached(tmp.path(), &["--no-cache", "compile"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(!tmp.path().join(".sqb").exists());
    let mut cmd = sqb();
    cmd.arg("--project-dir").arg(tmp.path()).arg("compile");
    run(&mut cmd); // SQB_NO_CACHE=1, as every other suite runs
    assert!(!tmp.path().join(".sqb").exists());
    // A cache written earlier is not read either.
    assert_eq!(cached(tmp.path(), &["compile"]).status.code(), Some(0));
    assert!(!hit(&cached(tmp.path(), &["--no-cache", "compile"])));
}

#[test]
fn diff_reuses_the_verdict_and_a_restored_project_is_a_hit() {
    let tmp = tempfile::tempdir().unwrap();
    copy_tree(&repo().join("examples/shop"), tmp.path());
    let _ = std::fs::remove_file(tmp.path().join("warehouse.duckdb"));
    let _ = std::fs::remove_dir_all(tmp.path().join(".sqb"));
    duckdb_file(&tmp.path().join("warehouse.duckdb"), &shop_migrations());
    let first = cached(tmp.path(), &["contract", "diff", "--from", "prod"]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let second = cached(tmp.path(), &["contract", "diff", "--from", "dev"]);
    assert!(hit(&second), "{}", stderr(&second));
    assert_eq!(second.status.code(), Some(1), "{}", stderr(&second));
    // generate --write --overwrite from dev contradicts the SQL of an enforced model: the
    // recompile fails, the files are restored, and the restored project is a hit again.
    let write = cached(tmp.path(), OVERWRITE_FROM_DEV);
    assert_eq!(write.status.code(), Some(2), "{}", stderr(&write));
    assert!(stderr(&write).contains("compile cache miss"));
    let after = cached(tmp.path(), &["contract", "diff", "--from", "dev"]);
    assert!(hit(&after), "{}", stderr(&after));
    assert_eq!(after.status.code(), Some(1));
    assert_eq!(visible(&second, tmp.path()), visible(&after, tmp.path()));
}

#[test]
fn unchanged_sidecars_are_not_parsed_again_and_are_located_as_they_are_now() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    copy_tree(&repo().join("testdata/declarations_cache"), root);
    // A sidecar with errors is cached too: what it says depends only on its bytes.
    let cold = cached(root, &["compile"]);
    assert_eq!(cold.status.code(), Some(1), "{}", stderr(&cold));
    assert_eq!(parsed(&cold), 2);
    assert!(root.join(".sqb/cache/declarations-v1.bin").is_file());
    let warm = cached(root, &["compile"]);
    assert_eq!(parsed(&warm), 0, "{}", stderr(&warm));
    assert_eq!(visible(&warm, root), visible(&cold, root));
    assert!(visible(&warm, root).contains("models/marts/revenue.toml:2:1"));

    // A new model read before the others renumbers every file: what the cache holds is
    // located in the files of now, as an uncached run locates it.
    std::fs::write(root.join("models/marts/a_first.sql"), "SELECT 1 AS id\n").unwrap();
    std::fs::write(root.join("models/marts/a_first.toml"), "colour = 1\n").unwrap();
    let moved = cached(root, &["compile"]);
    assert_eq!(parsed(&moved), 1, "{}", stderr(&moved));
    assert_eq!(
        visible(&moved, root),
        visible(&uncached(root, &["compile"]), root)
    );
    assert!(visible(&moved, root).contains("models/marts/a_first.toml:1:1"));

    // An edit is parsed again, whatever the file's timestamps say; a removed sidecar's entry
    // goes, and the edit's errors are reported.
    let sidecar = root.join("models/marts/revenue.toml");
    let modified = std::fs::metadata(&sidecar).unwrap().modified().unwrap();
    std::fs::write(
        &sidecar,
        "contract = \"enforced\"\n\n[columns.order_id]\ntype = \"INTEGER\"\n",
    )
    .unwrap();
    std::fs::File::options()
        .write(true)
        .open(&sidecar)
        .unwrap()
        .set_modified(modified)
        .unwrap();
    std::fs::remove_file(root.join("models/marts/a_first.toml")).unwrap();
    let edited = cached(root, &["compile"]);
    assert_eq!(parsed(&edited), 1, "{}", stderr(&edited));
    assert_eq!(edited.status.code(), Some(0), "{}", stderr(&edited));
    assert_eq!(
        visible(&edited, root),
        visible(&uncached(root, &["compile"]), root)
    );
    assert_eq!(parsed(&cached(root, &["compile"])), 0);

    // A model renamed with its sidecar unchanged is parsed under its new name.
    for ext in ["sql", "toml"] {
        std::fs::rename(
            root.join(format!("models/orders.{ext}")),
            root.join(format!("models/sales.{ext}")),
        )
        .unwrap();
    }
    let renamed = cached(root, &["compile", "--format", "json"]);
    assert_eq!(parsed(&renamed), 1);
    assert_eq!(
        renamed.stdout,
        uncached(root, &["compile", "--format", "json"]).stdout
    );
}

#[test]
fn a_damaged_declarations_cache_is_ignored_and_replaced() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    copy_tree(&repo().join("testdata/declarations_cache"), root);
    let first = cached(root, &["compile"]);
    let file = root.join(".sqb/cache/declarations-v1.bin");
    let good = std::fs::read(&file).unwrap();
    let mut flipped = good.clone();
    // A flipped byte inside an entry is caught by the file's checksum, not read as a declaration.
    let last = flipped.len() - 3;
    flipped[last] ^= 0xff;
    let truncated = good[..good.len() / 2].to_vec();
    for damage in [
        b"".to_vec(),
        b"{ not postcard".to_vec(),
        truncated,
        flipped,
        vec![0xff; 64],
    ] {
        std::fs::write(&file, &damage).unwrap();
        let out = cached(root, &["compile"]);
        assert_eq!(
            visible(&out, root),
            visible(&first, root),
            "{}",
            stderr(&out)
        );
        assert!(parsed(&out) > 0, "{damage:?}");
        assert_eq!(
            parsed(&cached(root, &["compile"])),
            0,
            "{damage:?}: not replaced"
        );
    }
}

/// How many models' analyses the run reused from the analyses cache.
fn reused(out: &Output) -> usize {
    let log = stderr(out);
    let line = log
        .lines()
        .find(|l| l.contains("sqb::compile: compiled"))
        .unwrap_or_else(|| panic!("no compile line in:\n{log}"));
    let count = line.rsplit("reused=").next().unwrap();
    count.split_whitespace().next().unwrap().parse().unwrap()
}

/// Replaces `from` by `to` in the project file `rel`.
fn edit(root: &Path, rel: &str, from: &str, to: &str) {
    let path = root.join(rel);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{rel} has no {from:?}");
    std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
}

#[test]
fn only_changed_models_and_the_models_whose_answers_changed_are_analysed_again() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    copy_tree(&repo().join("examples/shop"), root);
    let _ = std::fs::remove_dir_all(root.join(".sqb"));
    let compile = |expected_reuse: usize, what: &str| {
        let out = cached(root, &["compile"]);
        let fresh = uncached(root, &["compile", "--no-cache"]);
        // Whatever was reused, the verdict is the one a compile without any cache gives.
        assert_eq!(visible(&out, root), visible(&fresh, root), "{what}");
        assert_eq!(out.status.code(), fresh.status.code(), "{what}");
        assert_eq!(reused(&out), expected_reuse, "{what}: {}", stderr(&out));
        out
    };
    assert_eq!(compile(0, "first").status.code(), Some(0));
    // A comment in one model's SQL: that model alone is analysed again; the models reading
    // it get the same answers from it.
    edit(
        root,
        "models/staging/stg_orders.sql",
        "FROM raw.orders",
        "FROM raw.orders -- edited",
    );
    compile(3, "comment");
    // The raw amount's declared precision: the staging model reads it, the orders mart reads
    // the staging model and the customers mart the orders mart; all three are analysed again
    // (the staging customers alone are reused) and the orders mart's declaration fails.
    let source = "sources/raw.toml";
    edit(
        root,
        source,
        "type = \"NUMERIC(12,2)\"",
        "type = \"NUMERIC(10,2)\"",
    );
    let out = compile(1, "upstream declaration");
    assert_eq!(out.status.code(), Some(1));
    assert!(visible(&out, root).contains("error[E052]"));
    edit(
        root,
        source,
        "type = \"NUMERIC(10,2)\"",
        "type = \"NUMERIC(12,2)\"",
    );
    // Restored, the project is the one compiled before: its verdict is read back whole.
    let out = cached(root, &["compile"]);
    assert!(hit(&out), "{}", stderr(&out));
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn a_damaged_analyses_cache_is_ignored_and_replaced() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    copy_tree(&repo().join("examples/shop"), root);
    let _ = std::fs::remove_dir_all(root.join(".sqb"));
    let first = cached(root, &["compile"]);
    let file = root.join(".sqb/cache/analyses-v1.bin");
    let verdict = root.join(".sqb/cache/compile-v1.json");
    let good = std::fs::read(&file).unwrap();
    let mut flipped = good.clone();
    let last = flipped.len() - 3;
    flipped[last] ^= 0xff;
    for damage in [
        b"".to_vec(),
        b"not postcard".to_vec(),
        good[..good.len() / 2].to_vec(),
        flipped,
        vec![0xff; 64],
    ] {
        std::fs::write(&file, &damage).unwrap();
        std::fs::remove_file(&verdict).unwrap();
        let out = cached(root, &["compile"]);
        assert_eq!(visible(&out, root), visible(&first, root), "{damage:?}");
        assert_eq!(reused(&out), 0, "{damage:?}");
        std::fs::remove_file(&verdict).unwrap();
        assert_eq!(
            reused(&cached(root, &["compile"])),
            4,
            "{damage:?}: not replaced"
        );
    }
}

/// How many contract files the run parsed (the others came from the contracts cache).
fn contracts_parsed(out: &Output) -> usize {
    parsed_beside(out, "contracts cache read")
}

#[test]
fn unchanged_contract_files_are_not_parsed_again_and_a_damaged_cache_is_ignored() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    copy_tree(&repo().join("examples/shop"), root);
    let _ = std::fs::remove_dir_all(root.join(".sqb"));
    let verdict = root.join(".sqb/cache/compile-v1.json");
    let first = cached(root, &["compile"]);
    assert!(contracts_parsed(&first) > 10, "{}", stderr(&first));
    std::fs::remove_file(&verdict).unwrap();
    assert_eq!(contracts_parsed(&cached(root, &["compile"])), 0);
    // An edited rule is parsed again, and what it now says is reported where it now is.
    edit(
        root,
        "contracts/guardrails/finality-revenue.toml",
        "metric = \"revenue\"",
        "\nmetric = \"revenu\"",
    );
    let out = cached(root, &["compile"]);
    assert_eq!(contracts_parsed(&out), 1);
    let fresh = uncached(root, &["compile", "--no-cache"]);
    assert_eq!(visible(&out, root), visible(&fresh, root));
    assert!(
        visible(&out, root).contains("finality-revenue.toml:4:"),
        "{}",
        visible(&out, root)
    );
    let file = root.join(".sqb/cache/contracts-v1.bin");
    for damage in [b"".to_vec(), b"not postcard".to_vec(), vec![0xff; 64]] {
        std::fs::write(&file, &damage).unwrap();
        let out = cached(root, &["compile"]);
        assert_eq!(visible(&out, root), visible(&fresh, root), "{damage:?}");
        assert!(contracts_parsed(&out) > 10, "{damage:?}");
    }
}

/// The `-v` line of the file stamps: how many files were stamped, and how many of them read.
fn files_read(out: &Output) -> (usize, usize) {
    let log = stderr(out);
    let line = log
        .lines()
        .find(|l| l.contains("project files stamped"))
        .unwrap_or_else(|| panic!("no file stamps line in:\n{log}"));
    let field = |name: &str| -> usize {
        let rest = line.rsplit(&format!("{name}=")).next().unwrap();
        rest.split_whitespace().next().unwrap().parse().unwrap()
    };
    (field("files"), field("read"))
}

/// Writes every project file again with its own bytes (its time becomes now); the cache and
/// the warehouse are left alone.
fn rewrite_project_files(root: &Path) {
    for entry in walkdir::WalkDir::new(root)
        .into_iter()
        .filter_entry(|e| e.file_name() != ".sqb")
    {
        let entry = entry.unwrap();
        let path = entry.path();
        if entry.file_type().is_file()
            && path.extension().is_some_and(|e| e == "sql" || e == "toml")
        {
            let bytes = std::fs::read(path).unwrap();
            std::fs::write(path, bytes).unwrap();
        }
    }
}

/// Waits until every file written so far is old enough for a stamp to vouch for it (2 s): a
/// file changed within a timestamp tick of being stamped could keep its stamp, so younger files
/// are always read.
fn age_the_files() {
    std::thread::sleep(std::time::Duration::from_millis(2100));
}

#[test]
fn files_unchanged_since_they_were_stamped_are_not_read_and_say_the_same() {
    let tmp = tempfile::tempdir().unwrap();
    let root = &tmp.path().join("shop");
    // The warehouse first: the project's files are copied just before the first runs.
    let warehouse = tmp.path().join("warehouse.duckdb");
    duckdb_file(&warehouse, &shop_migrations());
    copy_tree(&repo().join("examples/shop"), root);
    let _ = std::fs::remove_dir_all(root.join(".sqb"));
    std::fs::rename(&warehouse, root.join("warehouse.duckdb")).unwrap();
    let diff = ["contract", "diff", "--from", "dev"];
    // Files as young as these are read, however often: their stamps cannot vouch for them yet.
    let young = cached(root, &diff);
    let (files, read) = files_read(&young);
    assert!(files > 20, "{}", stderr(&young));
    assert_eq!(read, files);
    // Written again just before the next run, so that they are young for it however long the
    // first run took (a run that starts 2 s after a file's time vouches for it next time).
    rewrite_project_files(root);
    assert_eq!(files_read(&cached(root, &diff)).1, files);
    age_the_files();
    let stamped = cached(root, &diff);
    assert_eq!(files_read(&stamped), (files, files));

    // Nothing is read now, and the findings, located in the files, are the same.
    let warm = cached(root, &diff);
    assert_eq!(files_read(&warm), (files, 0), "{}", stderr(&warm));
    assert!(hit(&warm));
    assert_eq!(warm.status.code(), Some(1));
    assert_eq!(visible(&warm, root), visible(&young, root));
    // A compile that misses its verdict reads the SQL it analyses when it needs it, and says
    // what a compile without any cache says.
    std::fs::remove_file(root.join(".sqb/cache/compile-v1.json")).unwrap();
    let out = cached(root, &["compile", "--format", "json"]);
    assert_eq!(files_read(&out).1, 0);
    let fresh = uncached(root, &["compile", "--no-cache", "--format", "json"]);
    assert_eq!(out.stdout, fresh.stdout);

    // An edit of the same size with its modification time put back is read, and what the
    // model now says is reported.
    let sql = root.join("models/marts/fct_orders.sql");
    let modified = std::fs::metadata(&sql).unwrap().modified().unwrap();
    edit(
        root,
        "models/marts/fct_orders.sql",
        "AS is_large",
        "AS is_lorge",
    );
    std::fs::File::options()
        .write(true)
        .open(&sql)
        .unwrap()
        .set_modified(modified)
        .unwrap();
    let edited = cached(root, &["compile"]);
    assert_eq!(files_read(&edited), (files, 1), "{}", stderr(&edited));
    assert_eq!(edited.status.code(), Some(1));
    let fresh = uncached(root, &["compile", "--no-cache"]);
    assert_eq!(visible(&edited, root), visible(&fresh, root));
    assert!(visible(&edited, root).contains("is_lorge"));
    edit(
        root,
        "models/marts/fct_orders.sql",
        "AS is_lorge",
        "AS is_large",
    );

    // A generate --write that fails its recompile restores every file it edited, unread or
    // not; the diff after it is the diff before it.
    age_the_files();
    assert_eq!(files_read(&cached(root, &diff)).1, 1);
    let sidecar = root.join("models/marts/fct_orders.toml");
    let before = std::fs::read(&sidecar).unwrap();
    let write = cached(root, OVERWRITE_FROM_DEV);
    assert_eq!(files_read(&write).1, 0, "{}", stderr(&write));
    assert_eq!(write.status.code(), Some(2), "{}", stderr(&write));
    assert_eq!(std::fs::read(&sidecar).unwrap(), before);
    assert_eq!(visible(&cached(root, &diff), root), visible(&young, root));

    // A removed model is gone, and its stamps with it.
    for ext in ["sql", "toml"] {
        std::fs::remove_file(root.join(format!("models/marts/dim_customers.{ext}"))).unwrap();
    }
    let removed = cached(root, &["compile"]);
    assert_eq!(files_read(&removed).0, files - 2);
    let fresh = uncached(root, &["compile", "--no-cache"]);
    assert_eq!(visible(&removed, root), visible(&fresh, root));

    // A damaged stamps file vouches for nothing: every file is read, and it is replaced.
    let stamps = root.join(".sqb/cache/files-v1.bin");
    let good = std::fs::read(&stamps).unwrap();
    for damage in [
        b"".to_vec(),
        b"not postcard".to_vec(),
        good[..good.len() / 2].to_vec(),
    ] {
        std::fs::write(&stamps, &damage).unwrap();
        let out = cached(root, &["compile"]);
        assert_eq!(files_read(&out), (files - 2, files - 2), "{damage:?}");
        assert_eq!(visible(&out, root), visible(&fresh, root), "{damage:?}");
    }
}

/// `generate --write` recompiles what it wrote: each model's analysis from its first compile
/// is reused, read back from the analyses cache (or, under `--no-cache`, kept in memory
/// meanwhile), and the two ways reuse as many.
#[test]
fn generate_write_reuses_the_analyses_of_its_first_compile() {
    let recompiled = |no_cache: bool| {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        copy_tree(&repo().join("examples/shop"), root);
        let _ = std::fs::remove_file(root.join("warehouse.duckdb"));
        let _ = std::fs::remove_dir_all(root.join(".sqb"));
        duckdb_file(&root.join("warehouse.duckdb"), &shop_migrations());
        let mut args = vec!["contract", "generate", "--from", "prod", "--write"];
        if no_cache {
            args.insert(0, "--no-cache");
        }
        let out = cached(root, &args);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(root.join("models/staging/stg_customers.toml").is_file());
        let log = stderr(&out);
        let compiles: Vec<&str> = log
            .lines()
            .filter(|l| l.contains("sqb::compile: compiled"))
            .collect();
        assert_eq!(compiles.len(), 2, "{log}");
        let count = |line: &str| -> usize {
            let after = line.rsplit("reused=").next().unwrap();
            after.split_whitespace().next().unwrap().parse().unwrap()
        };
        (count(compiles[0]), count(compiles[1]))
    };
    let (first, again) = recompiled(false);
    assert_eq!(first, 0);
    assert!(again > 0);
    assert_eq!(recompiled(true), (first, again));
}
