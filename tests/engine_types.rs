//! The types and names SQL analysis proves for expressions, checked against both engines.
//!
//! Each case of `testdata/engine_types/cases.toml` is an expression over one table, selected
//! unaliased. The bundled DuckDB (`DESCRIBE`) and the test Postgres (a temporary view's
//! `pg_attribute`) say what type and name the engine gives it. A type sqb proves must be the
//! engine's exactly (equivalent both ways: a missing precision is a different type), and a name
//! it infers for an unaliased expression the engine's own. A case's `proves` lists the engines
//! where sqb must prove the type and the name at all, so that a rule cannot silently vanish.
//! `SQB_ENGINE_TYPES_PRINT=1` prints every case's engine type, name and proof.

mod common;

use sqlparser::ast::Ident;
use sqlparser::parser::Parser;

use sqb::compile::sql::{self, Interface, OutColumn, Shape, Upstream};
use sqb::engine::Engine;

#[derive(serde::Deserialize)]
struct Cases {
    /// Each column of `t`: its name, Postgres type and DuckDB type.
    columns: Vec<[String; 3]>,
    case: Vec<Case>,
}

#[derive(serde::Deserialize)]
struct Case {
    expr: String,
    proves: Vec<String>,
}

fn cases() -> Cases {
    let path = common::repo().join("testdata/engine_types/cases.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    toml_edit::de::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn engine_type(column: &[String; 3], engine: Engine) -> &str {
    match engine {
        Engine::Postgres => &column[1],
        Engine::DuckDb => &column[2],
    }
}

/// `t` as the analysis sees it: a complete source whose columns are never NULL.
struct Table<'a> {
    columns: &'a [[String; 3]],
    engine: Engine,
}

impl Upstream for Table<'_> {
    fn shape(&self, parts: &[Ident]) -> Shape {
        (parts.last()?.value == "t").then(|| {
            self.columns
                .iter()
                .map(|c| OutColumn {
                    ty: Some(sqb::types::parse(engine_type(c, self.engine), self.engine).unwrap()),
                    nullable: Some(false),
                    ..OutColumn::named(c[0].clone())
                })
                .collect()
        })
    }
    fn facts(&self, parts: &[Ident]) -> Vec<OutColumn> {
        self.shape(parts).unwrap_or_default()
    }
    fn interface(&self, _: &[Ident]) -> Option<Interface> {
        Some(Interface::Source("t".into()))
    }
    fn origin(&self, _: &[Ident]) -> (&'static str, String) {
        ("source", "t".into())
    }
}

/// What the engine says of a query's only column: its name and type.
trait Warehouse {
    fn describe(&mut self, sql: &str) -> (String, String);
}

struct DuckDb(duckdb::Connection);

impl Warehouse for DuckDb {
    fn describe(&mut self, sql: &str) -> (String, String) {
        self.0
            .query_row(&format!("DESCRIBE {sql}"), [], |row| {
                Ok((row.get(0)?, row.get(1)?))
            })
            .unwrap_or_else(|e| panic!("DuckDB: {sql}: {e}"))
    }
}

struct Postgres {
    url: String,
}

impl Warehouse for Postgres {
    fn describe(&mut self, sql: &str) -> (String, String) {
        common::pg_exec(
            &self.url,
            &format!("DROP VIEW IF EXISTS v; CREATE VIEW v AS {sql}"),
        );
        let rows = common::pg_strings(
            &self.url,
            "SELECT attname || '|' || format_type(atttypid, atttypmod) FROM pg_attribute
             WHERE attrelid = 'v'::regclass AND attnum > 0",
        );
        let (name, ty) = rows[0].split_once('|').unwrap();
        (name.to_string(), ty.to_string())
    }
}

fn check(engine: Engine, warehouse: &mut dyn Warehouse) {
    let cases = cases();
    let table = Table {
        columns: &cases.columns,
        engine,
    };
    let dialect = sql::parse::dialect(engine);
    let engine_name = match engine {
        Engine::Postgres => "postgres",
        Engine::DuckDb => "duckdb",
    };
    let print = std::env::var_os("SQB_ENGINE_TYPES_PRINT").is_some();
    let mut failures = Vec::new();
    for case in &cases.case {
        let query = format!("SELECT {} FROM t", case.expr);
        let (name, physical) = warehouse.describe(&query);
        let physical_ty = sqb::types::parse(&physical, engine)
            .unwrap_or_else(|e| panic!("{engine_name}: `{physical}` does not parse: {e}"));
        let statements = Parser::parse_sql(dialect.as_ref(), &query).unwrap();
        let (shape, _, _) = sql::shape::infer(&statements[0], engine, &table, false);
        let proven = shape.as_ref().and_then(|s| s.first());
        if print {
            eprintln!(
                "{engine_name}: {:40} engine {name:24} {physical:24} sqb {:?} {:?}",
                case.expr,
                proven.map(|c| &c.name),
                proven.and_then(|c| c.ty.as_ref()).map(|t| t.to_string())
            );
        }
        let must = case.proves.iter().any(|e| e == engine_name);
        match proven {
            Some(column) if column.name != name => failures.push(format!(
                "{}: sqb names it `{}`, the engine `{name}`",
                case.expr, column.name
            )),
            None if must => failures.push(format!(
                "{}: sqb infers no column (the engine: `{name}` {physical})",
                case.expr
            )),
            _ => {}
        }
        match proven.and_then(|c| c.ty.as_ref()) {
            Some(ty)
                if !(sqb::types::equivalent(ty, &physical_ty, engine)
                    && sqb::types::equivalent(&physical_ty, ty, engine)) =>
            {
                failures.push(format!(
                    "{}: sqb proves {ty}, the engine gives {physical}",
                    case.expr
                ))
            }
            None if must => failures.push(format!(
                "{}: sqb proves no type (the engine gives {physical})",
                case.expr
            )),
            _ => {}
        }
    }
    assert!(
        failures.is_empty(),
        "{engine_name}:\n{}",
        failures.join("\n")
    );
}

fn create_table(engine: Engine) -> String {
    let columns: Vec<String> = cases()
        .columns
        .iter()
        .map(|c| format!("{} {} NOT NULL", c[0], engine_type(c, engine)))
        .collect();
    format!("CREATE TABLE t ({})", columns.join(", "))
}

#[test]
fn proven_types_and_names_are_duckdbs() {
    let conn = duckdb::Connection::open_in_memory().unwrap();
    conn.execute_batch(&create_table(Engine::DuckDb)).unwrap();
    check(Engine::DuckDb, &mut DuckDb(conn));
}

#[test]
fn proven_types_and_names_are_postgres() {
    let Some(db) = common::TestDb::create("engine_types") else {
        return;
    };
    common::pg_exec(&db.url, &create_table(Engine::Postgres));
    check(
        Engine::Postgres,
        &mut Postgres {
            url: db.url.clone(),
        },
    );
}

/// The keywords DuckDB quotes when it prints a name (and so names an expression by): sqb's list
/// is the bundled engine's.
#[test]
fn duckdb_quoted_keywords_are_the_bundled_ones() {
    let conn = duckdb::Connection::open_in_memory().unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT DISTINCT keyword_name FROM duckdb_keywords()
             WHERE keyword_category <> 'unreserved' ORDER BY keyword_name",
        )
        .unwrap();
    let engine: Vec<String> = stmt
        .query_map([], |row| row.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        sqb::engine_rules::DUCKDB_QUOTED_KEYWORDS,
        engine.as_slice(),
        "update DUCKDB_QUOTED_KEYWORDS in src/engine_rules/duckdb/names.rs"
    );
}
