//! Builds a DuckDB database file from SQL files, in the order given.
//!
//! `cargo run --example demo_warehouse -- OUT.duckdb migrations/*.sql` builds the shop demo
//! warehouse; an existing OUT is replaced, so the result depends only on the SQL.

use std::path::PathBuf;

use anyhow::{bail, Context};

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args_os().skip(1).map(PathBuf::from);
    let Some(out) = args.next() else {
        bail!("usage: demo_warehouse OUT.duckdb FILE.sql...");
    };
    let scripts: Vec<PathBuf> = args.collect();
    if scripts.is_empty() {
        bail!("usage: demo_warehouse OUT.duckdb FILE.sql...");
    }
    for stale in [out.clone(), out.with_extension("duckdb.wal")] {
        if stale.exists() {
            std::fs::remove_file(&stale)
                .with_context(|| format!("could not remove {}", stale.display()))?;
        }
    }
    let conn = duckdb::Connection::open(&out)
        .with_context(|| format!("could not create {}", out.display()))?;
    for script in &scripts {
        let sql = std::fs::read_to_string(script)
            .with_context(|| format!("could not read {}", script.display()))?;
        conn.execute_batch(&sql)
            .with_context(|| format!("{} failed", script.display()))?;
    }
    conn.execute_batch("CHECKPOINT")
        .context("could not checkpoint the database")?;
    eprintln!("built {} from {} SQL file(s)", out.display(), scripts.len());
    Ok(())
}
