//! Every `nullable: false` that SQL analysis proves is checked against the engine.
//!
//! Queries are generated over three tables whose declarations hold (a column declared NOT NULL
//! never is): joins of every kind with ON, USING and NATURAL, nested and lateral joins, derived
//! tables, GROUP BY with ROLLUP, CUBE and GROUPING SETS, set operations (DuckDB's BY NAME too),
//! DISTINCT ON, windows, casts, CASE, NULLIF, COALESCE. Each query runs on generated rows; a NULL
//! in a column the analysis proved non-null, or a proven shape of another width than the
//! engine's, fails the test with the seed, the rows and the query. Queries the engine or the
//! parser rejects are counted and skipped; the test fails if too few are left to mean anything.
//!
//! `SQB_PROOF_CASES=N` runs N cases per engine (default 400 on DuckDB, 1500 on Postgres);
//! `SQB_PROOF_SEED=S` runs one.

mod common;

use proptest::prelude::Rng as _;
use proptest::test_runner::{RngAlgorithm, TestRng};
use sqlparser::ast::Ident;
use sqlparser::parser::Parser;

use sqb::compile::sql::{self, Interface, OutColumn, Shape, Upstream};
use sqb::engine::Engine;

#[derive(Clone, Copy, PartialEq, Debug)]
enum Ty {
    Int,
    Text,
    Bool,
}

/// A table's columns: (name, type, nullable).
type Columns = &'static [(&'static str, Ty, bool)];

/// The tables. Only `id` is shared, so NATURAL is USING (id).
const TABLES: [(&str, Columns); 3] = [
    (
        "t1",
        &[
            ("id", Ty::Int, false),
            ("a", Ty::Int, false),
            ("b", Ty::Int, true),
            ("c", Ty::Text, false),
            ("d", Ty::Text, true),
        ],
    ),
    (
        "t2",
        &[
            ("id", Ty::Int, false),
            ("x", Ty::Int, false),
            ("y", Ty::Int, true),
            ("s", Ty::Text, false),
        ],
    ),
    (
        "t3",
        &[
            ("id", Ty::Int, false),
            ("k", Ty::Text, false),
            ("m", Ty::Int, true),
        ],
    ),
];

fn sql_type(ty: Ty, engine: Engine) -> &'static str {
    match (ty, engine) {
        (Ty::Int, _) => "INTEGER",
        (Ty::Text, Engine::Postgres) => "TEXT",
        (Ty::Text, Engine::DuckDb) => "VARCHAR",
        (Ty::Bool, _) => "BOOLEAN",
    }
}

/// The tables as the analysis sees them: declared sources with true declarations, marked
/// complete or not (then only what each declares is known, never that it lacks a column).
struct Declared {
    engine: Engine,
    complete: bool,
}

impl Declared {
    fn declared(&self, parts: &[Ident]) -> Shape {
        let name = parts.last()?.value.to_lowercase();
        let (_, columns) = TABLES.iter().find(|(t, _)| *t == name)?;
        Some(
            columns
                .iter()
                .map(|(column, ty, nullable)| OutColumn {
                    ty: sqb::types::parse(sql_type(*ty, self.engine), self.engine).ok(),
                    nullable: Some(*nullable),
                    ..OutColumn::named(column.to_string())
                })
                .collect(),
        )
    }
}

impl Upstream for Declared {
    fn shape(&self, parts: &[Ident]) -> Shape {
        self.declared(parts).filter(|_| self.complete)
    }
    fn facts(&self, parts: &[Ident]) -> Vec<OutColumn> {
        self.declared(parts).unwrap_or_default()
    }
    fn interface(&self, parts: &[Ident]) -> Option<Interface> {
        let name = parts.last()?.value.to_lowercase();
        self.complete.then_some(Interface::Source(name))
    }
    fn origin(&self, parts: &[Ident]) -> (&'static str, String) {
        let name = parts.last().map_or(String::new(), |p| p.value.clone());
        ("source", name)
    }
}

/// A column in scope: its qualifier (a table alias), name and type.
#[derive(Clone)]
struct Col {
    qual: String,
    name: String,
    ty: Ty,
}

/// A query generator over one seed.
struct Gen {
    rng: TestRng,
    engine: Engine,
    aliases: usize,
    /// Common table expressions the query reads, in the order they are defined.
    ctes: Vec<String>,
}

impl Gen {
    fn new(seed: u64, engine: Engine) -> Self {
        let mut bytes = [0u8; 32];
        bytes[..8].copy_from_slice(&seed.to_le_bytes());
        Gen {
            rng: TestRng::from_seed(RngAlgorithm::ChaCha, &bytes),
            engine,
            aliases: 0,
            ctes: Vec::new(),
        }
    }

    fn pick(&mut self, n: usize) -> usize {
        (self.rng.next_u64() % n as u64) as usize
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.rng.next_u64() % 100 < percent
    }

    fn one<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.pick(items.len())]
    }

    fn alias(&mut self, prefix: &str) -> String {
        self.aliases += 1;
        format!("{prefix}{}", self.aliases)
    }

    fn duckdb(&self) -> bool {
        self.engine == Engine::DuckDb
    }

    // -- rows --------------------------------------------------------------------------------

    /// Statements that fill every table with 0–4 rows that keep its declarations.
    fn rows(&mut self) -> String {
        let mut sql = String::new();
        for (table, columns) in TABLES {
            sql.push_str(&format!("DELETE FROM {table};\n"));
            let rows: Vec<String> = (0..self.pick(5))
                .map(|_| {
                    let values: Vec<String> =
                        columns.iter().map(|c| self.value(c.0, c.1, c.2)).collect();
                    format!("({})", values.join(", "))
                })
                .collect();
            if !rows.is_empty() {
                sql.push_str(&format!(
                    "INSERT INTO {table} VALUES {};\n",
                    rows.join(", ")
                ));
            }
        }
        sql
    }

    fn value(&mut self, column: &str, ty: Ty, nullable: bool) -> String {
        if nullable && self.chance(40) {
            return "NULL".into();
        }
        match ty {
            Ty::Int if column == "id" => (1 + self.pick(3)).to_string(),
            Ty::Int => (self.pick(4) as i64 - 1).to_string(),
            Ty::Text => self.one(&["'a'", "'b'", "''"]).to_string(),
            Ty::Bool => self.one(&["TRUE", "FALSE"]).to_string(),
        }
    }

    // -- queries -----------------------------------------------------------------------------

    /// A whole statement: a query, or `*` over a FROM clause, with the CTEs they read.
    fn statement(&mut self) -> String {
        let body = match self.chance(15) {
            true => {
                let (from, env) = self.from(1);
                let filter = self.filter(&env);
                let star = match self.chance(50) {
                    true => "*".to_string(),
                    false => format!("{}.*", env[self.pick(env.len())].qual),
                };
                format!("SELECT {star} FROM {from}{filter}")
            }
            false => self.query(2, None).0,
        };
        match self.ctes.is_empty() {
            true => body,
            false => format!("WITH {} {body}", self.ctes.join(", ")),
        }
    }

    /// A query and its columns (name, type). `want` fixes the names and types of its outputs.
    fn query(&mut self, depth: u32, want: Option<&[(String, Ty)]>) -> (String, Vec<(String, Ty)>) {
        if depth == 0 || !self.chance(25) {
            return self.select(depth, want);
        }
        let (left, columns) = self.select(depth - 1, want);
        let mut ops = vec![
            "UNION",
            "UNION ALL",
            "EXCEPT",
            "EXCEPT ALL",
            "INTERSECT",
            "INTERSECT ALL",
        ];
        if self.duckdb() {
            ops.extend(["UNION BY NAME", "UNION ALL BY NAME"]);
        }
        let op = *self.one(&ops);
        let mut theirs = columns.clone();
        if op.ends_with("BY NAME") {
            // BY NAME matches columns by name: the other branch names them in another order,
            // and may leave one out (the engine fills it with NULL).
            theirs.reverse();
            if theirs.len() > 1 && self.chance(40) {
                theirs.remove(self.pick(theirs.len()));
            }
        }
        let (right, _) = self.select(depth - 1, Some(&theirs));
        (format!("{left} {op} {right}"), columns)
    }

    fn select(&mut self, depth: u32, want: Option<&[(String, Ty)]>) -> (String, Vec<(String, Ty)>) {
        let (from, env) = self.from(depth);
        let want: Vec<(String, Ty)> = match want {
            Some(w) => w.to_vec(),
            None => (0..1 + self.pick(4))
                .map(|i| {
                    let ty = *self.one(&[Ty::Int, Ty::Int, Ty::Text, Ty::Bool]);
                    (format!("c{i}"), ty)
                })
                .collect(),
        };
        let filter = self.filter(&env);
        let mode = self.pick(10);
        let (items, group, distinct) = if mode < 5 {
            let items: Vec<String> = want
                .iter()
                .map(|(name, ty)| format!("{} AS {name}", self.scalar(*ty, &env, 2, true)))
                .collect();
            let distinct = match self.pick(10) {
                0 => {
                    let on = self.column_ref(&env, None).unwrap_or_else(|| "1".into());
                    format!("DISTINCT ON ({on}) ")
                }
                1 => "DISTINCT ".into(),
                _ => String::new(),
            };
            (items, String::new(), distinct)
        } else {
            let keys = self.keys(&env);
            let group = self.group_by(&keys, mode < 7);
            let items: Vec<String> = want
                .iter()
                .map(|(name, ty)| format!("{} AS {name}", self.grouped(*ty, &keys, &env, 2)))
                .collect();
            (items, group, String::new())
        };
        let sql = format!(
            "SELECT {distinct}{} FROM {from}{filter}{group}",
            items.join(", ")
        );
        (sql, want)
    }

    /// A FROM clause and the columns it puts in scope.
    fn from(&mut self, depth: u32) -> (String, Vec<Col>) {
        let choice = self.pick(if depth > 0 { 6 } else { 4 });
        match choice {
            0 => self.table(),
            1 | 2 => {
                let (left, mut env) = self.table();
                let (right, more) = self.table();
                let join = self.join(&left, &right, &env, &more);
                env.extend(more);
                (join, env)
            }
            3 => {
                // a nested join on the right: `a LEFT JOIN (b JOIN c ON ..) ON ..`
                let (a, mut env) = self.table();
                let (b, bs) = self.table();
                let (c, cs) = self.table();
                let inner = self.join(&b, &c, &bs, &cs);
                let mut inner_env = bs.clone();
                inner_env.extend(cs);
                let kind = *self.one(&["JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN"]);
                let on = format!("{}.id = {}.id", env[0].qual, inner_env[0].qual);
                env.extend(inner_env);
                (format!("{a} {kind} ({inner}) ON {on}"), env)
            }
            4 => {
                let (sub, columns) = self.query(depth - 1, None);
                let q = self.alias("q");
                let from = match self.chance(50) {
                    true => format!("({sub}) AS {q}"),
                    false => {
                        let name = self.alias("w");
                        self.ctes.push(format!("{name} AS ({sub})"));
                        format!("{name} AS {q}")
                    }
                };
                let env = columns
                    .into_iter()
                    .map(|(name, ty)| Col {
                        qual: q.clone(),
                        name,
                        ty,
                    })
                    .collect();
                (from, env)
            }
            _ => self.lateral(),
        }
    }

    fn table(&mut self) -> (String, Vec<Col>) {
        let (name, columns) = TABLES[self.pick(TABLES.len())];
        let alias = self.alias("r");
        let env = columns
            .iter()
            .map(|(column, ty, _)| Col {
                qual: alias.clone(),
                name: column.to_string(),
                ty: *ty,
            })
            .collect();
        (format!("{name} AS {alias}"), env)
    }

    /// `left <kind> right` with ON, USING (id) or NATURAL.
    fn join(&mut self, left: &str, right: &str, l: &[Col], r: &[Col]) -> String {
        let kind = *self.one(&["JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN", "CROSS JOIN"]);
        if kind == "CROSS JOIN" {
            return format!("{left} CROSS JOIN {right}");
        }
        match self.pick(4) {
            0 => format!("{left} {kind} {right} USING (id)"),
            1 => format!("{left} NATURAL {kind} {right}"),
            _ => {
                let extra = match self.pick(3) {
                    0 => format!(" AND {}.id > 1", r[0].qual),
                    _ => String::new(),
                };
                format!(
                    "{left} {kind} {right} ON {}.id = {}.id{extra}",
                    l[0].qual, r[0].qual
                )
            }
        }
    }

    /// A lateral subquery correlated with the table before it.
    fn lateral(&mut self) -> (String, Vec<Col>) {
        let (outer, mut env) = self.table();
        let (inner, inner_env) = self.table();
        let ty = *self.one(&[Ty::Int, Ty::Text]);
        let expr = match self.pick(3) {
            0 => "count(*)".to_string(),
            _ => self.scalar(ty, &inner_env, 1, false),
        };
        let ty = if expr == "count(*)" { Ty::Int } else { ty };
        let l = self.alias("l");
        let sub = format!(
            "(SELECT {expr} AS lx FROM {inner} WHERE {}.id = {}.id)",
            inner_env[0].qual, env[0].qual
        );
        let sql = match self.pick(2) {
            0 => format!("{outer} CROSS JOIN LATERAL {sub} AS {l}"),
            _ => format!("{outer} LEFT JOIN LATERAL {sub} AS {l} ON TRUE"),
        };
        env.push(Col {
            qual: l,
            name: "lx".into(),
            ty,
        });
        (sql, env)
    }

    fn filter(&mut self, env: &[Col]) -> String {
        if !self.chance(40) {
            return String::new();
        }
        let mut terms = Vec::new();
        for _ in 0..1 + self.pick(2) {
            let Some(column) = self.column_ref(env, None) else {
                break;
            };
            terms.push(match self.pick(3) {
                0 => format!("{column} IS NULL"),
                _ => format!("{column} IS NOT NULL"),
            });
        }
        match terms.is_empty() {
            true => String::new(),
            false => format!(" WHERE {}", terms.join(" AND ")),
        }
    }

    /// 1–3 grouping keys.
    fn keys(&mut self, env: &[Col]) -> Vec<Col> {
        let mut keys: Vec<Col> = Vec::new();
        for _ in 0..1 + self.pick(3) {
            let column = env[self.pick(env.len())].clone();
            if !keys
                .iter()
                .any(|k| k.qual == column.qual && k.name == column.name)
            {
                keys.push(column);
            }
        }
        keys
    }

    fn group_by(&mut self, keys: &[Col], plain: bool) -> String {
        let refs: Vec<String> = keys.iter().map(|k| self.spelled(k, keys)).collect();
        let list = refs.join(", ");
        if plain {
            return format!(" GROUP BY {list}");
        }
        let first = &refs[0];
        let rest = refs[1..].join(", ");
        let sets = match self.pick(6) {
            0 => format!("ROLLUP ({list})"),
            1 => format!("CUBE ({list})"),
            2 => format!("GROUPING SETS (({list}), ())"),
            3 if !rest.is_empty() => format!("GROUPING SETS (({list}), ({first}))"),
            4 if !rest.is_empty() => format!("{first}, ROLLUP ({rest})"),
            _ => format!("GROUPING SETS (({list}))"),
        };
        format!(" GROUP BY {sets}")
    }

    /// A column spelled qualified, or bare where no other column in scope has its name.
    fn spelled(&mut self, column: &Col, env: &[Col]) -> String {
        let unique = env.iter().filter(|c| c.name == column.name).count() == 1;
        match unique && self.chance(30) {
            true => column.name.clone(),
            false => format!("{}.{}", column.qual, column.name),
        }
    }

    fn column_ref(&mut self, env: &[Col], ty: Option<Ty>) -> Option<String> {
        let matching: Vec<Col> = env
            .iter()
            .filter(|c| ty.is_none_or(|t| c.ty == t))
            .cloned()
            .collect();
        if matching.is_empty() {
            return None;
        }
        let column = matching[self.pick(matching.len())].clone();
        Some(self.spelled(&column, env))
    }

    fn literal(&mut self, ty: Ty) -> String {
        let engine = self.engine;
        match (ty, self.pick(4)) {
            (_, 0) => format!("CAST(NULL AS {})", sql_type(ty, engine)),
            (Ty::Int, _) => self.one(&["1", "2", "0"]).to_string(),
            (Ty::Text, _) => self.one(&["'a'", "'x'"]).to_string(),
            (Ty::Bool, _) => self.one(&["TRUE", "FALSE"]).to_string(),
        }
    }

    /// A row-level expression of type `ty` over `env`.
    fn scalar(&mut self, ty: Ty, env: &[Col], depth: u32, windows: bool) -> String {
        if depth == 0 || self.chance(35) {
            return match self.chance(75) {
                true => self
                    .column_ref(env, Some(ty))
                    .unwrap_or_else(|| self.literal(ty)),
                false => self.literal(ty),
            };
        }
        let d = depth - 1;
        match (ty, self.pick(8)) {
            (_, 0) => format!(
                "coalesce({}, {})",
                self.scalar(ty, env, d, windows),
                self.scalar(ty, env, d, windows)
            ),
            (_, 1) => {
                let when = self.scalar(Ty::Bool, env, d, windows);
                let then = self.scalar(ty, env, d, windows);
                match self.chance(50) {
                    true => format!(
                        "CASE WHEN {when} THEN {then} ELSE {} END",
                        self.scalar(ty, env, d, windows)
                    ),
                    false => format!("CASE WHEN {when} THEN {then} END"),
                }
            }
            (Ty::Int | Ty::Text, 2) => format!(
                "NULLIF({}, {})",
                self.scalar(ty, env, d, windows),
                self.scalar(ty, env, d, windows)
            ),
            (Ty::Int, 3) if windows => {
                let order = self.column_ref(env, None).unwrap_or_else(|| "1".into());
                match self.pick(4) {
                    0 => format!("row_number() OVER (ORDER BY {order})"),
                    1 => "count(*) OVER ()".into(),
                    2 => format!(
                        "lag({}) OVER (ORDER BY {order})",
                        self.scalar(Ty::Int, env, d, false)
                    ),
                    _ => format!(
                        "max({}) OVER (ORDER BY {order} ROWS BETWEEN 1 FOLLOWING AND 2 FOLLOWING)",
                        self.scalar(Ty::Int, env, d, false)
                    ),
                }
            }
            (Ty::Int, 4) => format!("length({})", self.scalar(Ty::Text, env, d, windows)),
            (Ty::Int, 6) => {
                // A scalar subquery, correlated where an integer is in scope.
                let (table, inner) = self.table();
                let agg = match self.chance(50) {
                    true => "count(*)".to_string(),
                    false => format!("max({}.id)", inner[0].qual),
                };
                let filter = match self.column_ref(env, Some(Ty::Int)) {
                    Some(outer) => format!(" WHERE {}.id = {outer}", inner[0].qual),
                    None => String::new(),
                };
                format!("(SELECT {agg} FROM {table}{filter})")
            }
            (Ty::Int, 5) if self.duckdb() => format!(
                "TRY_CAST({} AS INTEGER)",
                self.scalar(Ty::Text, env, d, windows)
            ),
            (Ty::Int, _) => format!(
                "({} + {})",
                self.scalar(ty, env, d, windows),
                self.scalar(ty, env, d, windows)
            ),
            (Ty::Text, 3) => format!("CAST({} AS TEXT)", self.scalar(Ty::Int, env, d, windows)),
            (Ty::Text, 4) => format!(
                "({} || {})",
                self.scalar(ty, env, d, windows),
                self.scalar(ty, env, d, windows)
            ),
            (Ty::Text, _) => format!(
                "{}({})",
                self.one(&["upper", "lower", "trim"]),
                self.scalar(ty, env, d, windows)
            ),
            (Ty::Bool, 2 | 3) => {
                let t = *self.one(&[Ty::Int, Ty::Text]);
                let e = self.scalar(t, env, d, windows);
                format!("({e} {})", self.one(&["IS NULL", "IS NOT NULL"]))
            }
            (Ty::Bool, 4) => format!("NOT ({})", self.scalar(ty, env, d, windows)),
            (Ty::Bool, 5) => format!(
                "({} {} {})",
                self.scalar(ty, env, d, windows),
                self.one(&["AND", "OR"]),
                self.scalar(ty, env, d, windows)
            ),
            (Ty::Bool, _) => {
                let t = *self.one(&[Ty::Int, Ty::Text]);
                format!(
                    "({} = {})",
                    self.scalar(t, env, d, windows),
                    self.scalar(t, env, d, windows)
                )
            }
        }
    }

    /// An expression of a grouped query: over the grouping keys, and aggregates over `env`.
    fn grouped(&mut self, ty: Ty, keys: &[Col], env: &[Col], depth: u32) -> String {
        if depth == 0 || self.chance(40) {
            return match (ty, self.pick(3)) {
                (_, 0) => self
                    .column_ref(keys, Some(ty))
                    .unwrap_or_else(|| self.literal(ty)),
                (Ty::Int, 1) => match self.pick(5) {
                    0 => "count(*)".into(),
                    1 => format!(
                        "count(*) FILTER (WHERE {})",
                        self.scalar(Ty::Bool, env, 1, false)
                    ),
                    2 => format!("sum({})", self.scalar(Ty::Int, env, 1, false)),
                    _ => format!(
                        "count({})",
                        self.column_ref(env, None).unwrap_or_else(|| "*".into())
                    ),
                },
                (Ty::Int | Ty::Text, _) => {
                    let arg = self.scalar(ty, env, 1, false);
                    format!("{}({arg})", self.one(&["min", "max"]))
                }
                (Ty::Bool, _) => format!("(count(*) > {})", self.pick(2)),
            };
        }
        let d = depth - 1;
        match (ty, self.pick(4)) {
            (_, 0) => format!(
                "coalesce({}, {})",
                self.grouped(ty, keys, env, d),
                self.grouped(ty, keys, env, d)
            ),
            (Ty::Int, 1) => format!(
                "({} + {})",
                self.grouped(ty, keys, env, d),
                self.grouped(ty, keys, env, d)
            ),
            (Ty::Text, 1) => format!("upper({})", self.grouped(ty, keys, env, d)),
            (Ty::Bool, 1) => {
                let t = *self.one(&[Ty::Int, Ty::Text]);
                format!("({} IS NULL)", self.grouped(t, keys, env, d))
            }
            _ => self.grouped(ty, keys, env, d),
        }
    }
}

/// Runs a query and says, per output column, whether any row has NULL there.
trait Warehouse {
    fn load(&mut self, sql: &str);
    fn nulls(&mut self, sql: &str) -> Result<Vec<bool>, String>;
}

struct DuckDb(duckdb::Connection);

impl Warehouse for DuckDb {
    fn load(&mut self, sql: &str) {
        self.0.execute_batch(sql).unwrap();
    }
    fn nulls(&mut self, sql: &str) -> Result<Vec<bool>, String> {
        let mut stmt = self.0.prepare(sql).map_err(|e| e.to_string())?;
        let mut rows = stmt.query([]).map_err(|e| e.to_string())?;
        let width = rows.as_ref().map_or(0, |s| s.column_count());
        let mut nulls = vec![false; width];
        while let Some(row) = rows.next().map_err(|e| e.to_string())? {
            for (i, null) in nulls.iter_mut().enumerate() {
                let value = row.get_ref(i).map_err(|e| e.to_string())?;
                *null |= matches!(value, duckdb::types::ValueRef::Null);
            }
        }
        Ok(nulls)
    }
}

struct Postgres {
    rt: tokio::runtime::Runtime,
    conn: sqlx::PgConnection,
}

impl Warehouse for Postgres {
    fn load(&mut self, sql: &str) {
        self.rt
            .block_on(sqlx::raw_sql(sql).execute(&mut self.conn))
            .unwrap();
    }
    fn nulls(&mut self, sql: &str) -> Result<Vec<bool>, String> {
        use sqlx::{Executor as _, Row as _, Statement as _, ValueRef as _};
        let width = self
            .rt
            .block_on((&mut self.conn).prepare(sql))
            .map_err(|e| e.to_string())?
            .columns()
            .len();
        let rows = self
            .rt
            .block_on(sqlx::raw_sql(sql).fetch_all(&mut self.conn))
            .map_err(|e| e.to_string())?;
        let mut nulls = vec![false; width];
        for row in &rows {
            for (i, null) in nulls.iter_mut().enumerate() {
                *null |= row.try_get_raw(i).map_err(|e| e.to_string())?.is_null();
            }
        }
        Ok(nulls)
    }
}

fn create_tables(engine: Engine) -> String {
    TABLES
        .iter()
        .map(|(table, columns)| {
            let columns: Vec<String> = columns
                .iter()
                .map(|(c, ty, nullable)| {
                    let not_null = if *nullable { "" } else { " NOT NULL" };
                    format!("{c} {}{not_null}", sql_type(*ty, engine))
                })
                .collect();
            format!("CREATE TABLE {table} ({});\n", columns.join(", "))
        })
        .collect()
}

#[derive(Default, Debug)]
struct Tally {
    cases: usize,
    unparsed: usize,
    rejected: usize,
    unknown_shape: usize,
    proofs_checked: usize,
    nulls_seen_elsewhere: usize,
}

fn check(engine: Engine, warehouse: &mut dyn Warehouse) {
    warehouse.load(&create_tables(engine));
    let cases: u64 = std::env::var("SQB_PROOF_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(match engine {
            // DuckDB's own build is unoptimized in the test profile: fewer, slower cases.
            Engine::DuckDb => 400,
            Engine::Postgres => 1500,
        });
    let seeds: Vec<u64> = match std::env::var("SQB_PROOF_SEED") {
        Ok(seed) => vec![seed.parse().expect("SQB_PROOF_SEED is a number")],
        Err(_) => (0..cases).collect(),
    };
    let dialect = sql::parse::dialect(engine);
    let mut tally = Tally::default();
    for seed in seeds {
        tally.cases += 1;
        let mut generator = Gen::new(seed, engine);
        let rows = generator.rows();
        let query = generator.statement();
        let Ok(statements) = Parser::parse_sql(dialect.as_ref(), &query) else {
            tally.unparsed += 1;
            continue;
        };
        warehouse.load(&rows);
        let nulls = match warehouse.nulls(&query) {
            Ok(nulls) => nulls,
            Err(_) => {
                tally.rejected += 1;
                continue;
            }
        };
        // Once with complete declarations, once with what each source declares only.
        for complete in [true, false] {
            let upstream = Declared { engine, complete };
            let (shape, _, _) = sql::shape::infer(&statements[0], engine, &upstream, false);
            let Some(columns) = shape else {
                tally.unknown_shape += 1;
                continue;
            };
            let context = || {
                format!(
                    "{engine:?} seed {seed} (complete: {complete})\nrows:\n{rows}query:\n{query}\n"
                )
            };
            assert_eq!(
                columns.len(),
                nulls.len(),
                "the proven shape has {} columns, the engine's {}\n{}",
                columns.len(),
                nulls.len(),
                context()
            );
            for (column, null) in columns.iter().zip(&nulls) {
                if column.nullable == Some(false) {
                    tally.proofs_checked += 1;
                    assert!(
                        !null,
                        "`{}` is proven non-null, the engine returned NULL\n{}",
                        column.name,
                        context()
                    );
                } else if *null {
                    tally.nulls_seen_elsewhere += 1;
                }
            }
        }
    }
    eprintln!("{engine:?}: {tally:?}");
    // The generator must keep producing queries both sides accept and proofs to check.
    if tally.cases >= 100 {
        let run = tally.cases - tally.unparsed - tally.rejected;
        assert!(
            run * 10 >= tally.cases * 7,
            "too few queries ran: {tally:?}"
        );
        assert!(
            tally.proofs_checked * 2 >= run,
            "too few proofs checked: {tally:?}"
        );
    }
}

#[test]
fn every_non_null_proof_holds_on_duckdb() {
    let conn = duckdb::Connection::open_in_memory().unwrap();
    check(Engine::DuckDb, &mut DuckDb(conn));
}

#[test]
fn every_non_null_proof_holds_on_postgres() {
    let Some(db) = common::TestDb::create("proofs") else {
        return;
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let conn = rt.block_on(async {
        use sqlx::Connection as _;
        let mut conn = sqlx::PgConnection::connect(&db.url).await.unwrap();
        // Thousands of small loads: none of them needs to wait for the disk.
        sqlx::raw_sql("SET synchronous_commit TO off")
            .execute(&mut conn)
            .await
            .unwrap();
        conn
    });
    check(Engine::Postgres, &mut Postgres { rt, conn });
}
