//! The floors that `scripts/bench` compares sqb with.
//!
//! `duckdb_query FILE.duckdb CATALOG SCHEMA` runs sqb's own DuckDB catalog query against a file
//! opened read-only, reading every value, and prints the row count: "DuckDB itself".
//! `duckdb_query --print-postgres-query` prints sqb's Postgres catalog query, for psql to run.

use anyhow::{bail, Context};

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [flag] if flag == "--print-postgres-query" => {
            print!("{}", sqb::warehouse::postgres::CATALOG_QUERY);
            Ok(())
        }
        [path, catalog, schema] => duckdb_floor(path, catalog, schema),
        _ => bail!("usage: duckdb_query FILE.duckdb CATALOG SCHEMA | --print-postgres-query"),
    }
}

fn duckdb_floor(path: &str, catalog: &str, schema: &str) -> anyhow::Result<()> {
    let config = duckdb::Config::default().access_mode(duckdb::AccessMode::ReadOnly)?;
    let conn = duckdb::Connection::open_with_flags(path, config)
        .with_context(|| format!("could not open {path}"))?;
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
