//! The floors that `scripts/bench` compares sqb with.
//!
//! `duckdb_query FILE.duckdb CATALOG SCHEMA` runs sqb's own DuckDB catalog query against a file
//! opened read-only, reading every value, and prints the row count: "DuckDB itself".
//! `duckdb_query --open-only FILE.duckdb` only opens the file read-only and asks for its catalog
//! name, as sqb does before any query: the memory DuckDB needs to hold the file's catalog.
//! `duckdb_query --print-postgres-queries` prints sqb's three Postgres catalog queries (the
//! relations, their columns, the columns' types), each followed by a `-- sqb: end` line, for psql
//! to run.
//! `duckdb_query --prepare FILE.duckdb DIR THREADS` prepares (parses, binds and plans) the query
//! of every `.sql` file in DIR on THREADS connections to the file opened read-only, and prints
//! how many: what DuckDB itself needs to describe a project's models (`contract check`).

use anyhow::{bail, Context};

// The same allocator as sqb's, which the embedded DuckDB allocates from too (libmimalloc-sys's
// `override`, linked with it): the floor is DuckDB as sqb runs it, not slower for its
// allocator. DuckDB's own release builds allocate from jemalloc on Linux.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> anyhow::Result<()> {
    // With the allocator's memory policy as sqb sets it too: with transparent huge pages on, the
    // floor spent up to a second more in the kernel on some runs (compacting memory for them),
    // and its runs were 1.0-2.2 s apart (docs/performance.md).
    sqb::memory::no_huge_pages();
    sqb::memory::return_freed_memory();
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [flag] if flag == "--print-postgres-queries" => {
            use sqb::warehouse::postgres::{COLUMNS_QUERY, RELATIONS_QUERY, TYPES_QUERY};
            for query in [RELATIONS_QUERY, COLUMNS_QUERY, TYPES_QUERY] {
                println!("{query}-- sqb: end");
            }
            Ok(())
        }
        [flag, path] if flag == "--open-only" => {
            let name: String =
                open(path)?.query_row("SELECT current_database()", [], |row| row.get(0))?;
            println!("{name}");
            Ok(())
        }
        [flag, path, dir, threads] if flag == "--prepare" => prepare_floor(path, dir, threads),
        [path, catalog, schema] => duckdb_floor(path, catalog, schema),
        _ => bail!(
            "usage: duckdb_query FILE.duckdb CATALOG SCHEMA | --open-only FILE.duckdb | --prepare FILE.duckdb DIR THREADS | --print-postgres-queries"
        ),
    }
}

fn open(path: &str) -> anyhow::Result<duckdb::Connection> {
    let config = duckdb::Config::default().access_mode(duckdb::AccessMode::ReadOnly)?;
    duckdb::Connection::open_with_flags(path, config)
        .with_context(|| format!("could not open {path}"))
}

fn duckdb_floor(path: &str, catalog: &str, schema: &str) -> anyhow::Result<()> {
    let conn = open(path)?;
    let mut stmt = conn.prepare(sqb::warehouse::duckdb::CATALOG_QUERY)?;
    let mut rows = stmt.query([catalog, schema])?;
    let mut count = 0u64;
    while let Some(row) = rows.next()? {
        let _: String = row.get(0)?;
        let _: String = row.get(1)?;
        let _: String = row.get(2)?;
        let _: bool = row.get(3)?;
        count += 1;
    }
    println!("{count}");
    Ok(())
}

fn prepare_floor(path: &str, dir: &str, threads: &str) -> anyhow::Result<()> {
    let threads: usize = threads.parse().context("THREADS is a number")?;
    let mut queries = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("could not list {dir}"))? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "sql") {
            queries.push(std::fs::read_to_string(&path)?);
        }
    }
    let conn = open(path)?;
    let size = queries.len().div_ceil(threads.max(1)).max(1);
    let connections = queries
        .chunks(size)
        .map(|_| conn.try_clone())
        .collect::<duckdb::Result<Vec<_>>>()?;
    let prepared = std::thread::scope(|scope| {
        let parts: Vec<_> = queries
            .chunks(size)
            .zip(connections)
            .map(|(part, conn)| {
                scope.spawn(move || -> duckdb::Result<usize> {
                    for query in part {
                        conn.prepare(query)?;
                    }
                    Ok(part.len())
                })
            })
            .collect();
        parts
            .into_iter()
            .map(|p| p.join().expect("a preparing thread panicked"))
            .sum::<duckdb::Result<usize>>()
    })?;
    println!("{prepared}");
    Ok(())
}
