//! The floors that `scripts/bench` compares sqb with.
//!
//! `duckdb_query FILE.duckdb CATALOG SCHEMA` runs sqb's own DuckDB catalog query against a file
//! opened read-only, reading every value, and prints the row count: "DuckDB itself".
//! `duckdb_query --open-only FILE.duckdb` only opens the file read-only and asks for its catalog
//! name, as sqb does before any query: the memory DuckDB needs to hold the file's catalog.
//! `duckdb_query --print-postgres-query` prints sqb's Postgres catalog query, for psql to run.

use anyhow::{bail, Context};

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [flag] if flag == "--print-postgres-query" => {
            print!("{}", sqb::warehouse::postgres::CATALOG_QUERY);
            Ok(())
        }
        [flag, path] if flag == "--open-only" => {
            let name: String =
                open(path)?.query_row("SELECT current_database()", [], |row| row.get(0))?;
            println!("{name}");
            Ok(())
        }
        [path, catalog, schema] => duckdb_floor(path, catalog, schema),
        _ => bail!(
            "usage: duckdb_query FILE.duckdb CATALOG SCHEMA | --open-only FILE.duckdb | --print-postgres-query"
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
        let _: bool = row.get(4)?;
        count += 1;
    }
    println!("{count}");
    Ok(())
}
