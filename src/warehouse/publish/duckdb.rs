//! The DuckDB write transaction: the database file opened read-write (which holds it against
//! every other process until the writer ends), one transaction, the catalog read from DuckDB's
//! own functions with bind parameters. DuckDB has no triggers, materialized views or grants to
//! carry; its foreign keys and sequences are read as Postgres's are.

use std::path::Path;

use duckdb::{params_from_iter, AccessMode, Connection};

use super::{PublishError, Transaction, Wanted};
use crate::table_facts::{Column, Facts, Name, Parent, Reference, Step};
use crate::warehouse::duckdb::{first_line, open_file};
use crate::warehouse::Timeouts;

const KIND: &str = "SELECT CASE table_type WHEN 'BASE TABLE' THEN 'table' WHEN 'VIEW' THEN 'view' ELSE lower(table_type) END \
    FROM information_schema.tables WHERE table_catalog = current_database() AND table_schema = ? AND table_name = ?";

const COLUMNS: &str = "SELECT column_name, NOT is_nullable, coalesce(column_default, '') \
    FROM duckdb_columns() WHERE database_name = current_database() AND schema_name = ? AND table_name = ? \
    ORDER BY column_index";

const KEY: &str = "SELECT unnest(constraint_column_names) FROM duckdb_constraints() \
    WHERE database_name = current_database() AND schema_name = ? AND table_name = ? AND constraint_type = 'PRIMARY KEY'";

/// Foreign keys into a table: DuckDB keeps them in the referencing table's schema.
const REFERENCES: &str = "SELECT coalesce(constraint_name, table_name || '_fkey'), table_name, \
    unnest(constraint_column_names), unnest(referenced_column_names) FROM duckdb_constraints() \
    WHERE database_name = current_database() AND schema_name = ? AND referenced_table = ? \
    AND constraint_type = 'FOREIGN KEY'";

/// Foreign keys of the table into others: name, referenced table, column, referenced column.
const PARENTS: &str = "SELECT coalesce(constraint_name, table_name || '_fkey'), referenced_table, \
    unnest(constraint_column_names), unnest(referenced_column_names) FROM duckdb_constraints() \
    WHERE database_name = current_database() AND schema_name = ? AND table_name = ? \
    AND constraint_type = 'FOREIGN KEY'";

pub(in crate::warehouse) struct DuckTransaction {
    conn: Option<Connection>,
}

impl DuckTransaction {
    pub(in crate::warehouse) fn begin(
        path: &Path,
        timeouts: Timeouts,
        read_only: bool,
    ) -> Result<Self, PublishError> {
        let mode = match read_only {
            true => AccessMode::ReadOnly,
            false => AccessMode::ReadWrite,
        };
        let conn = open_file(path, timeouts.connect, mode)?;
        let tx = Self { conn: Some(conn) };
        tx.conn()
            .execute_batch("BEGIN TRANSACTION")
            .map_err(|e| failed(&e, "BEGIN TRANSACTION", &Name::new("", "")))?;
        Ok(tx)
    }

    fn conn(&self) -> &Connection {
        self.conn
            .as_ref()
            .expect("the connection lives until commit")
    }

    fn strings(
        &self,
        sql: &str,
        name: &Name,
        width: usize,
    ) -> Result<Vec<Vec<String>>, PublishError> {
        let fail = |e: duckdb::Error| failed(&e, sql, name);
        let mut statement = self.conn().prepare(sql).map_err(fail)?;
        let rows = statement
            .query_map([&name.schema, &name.name], |row| {
                (0..width)
                    .map(|i| {
                        row.get::<_, Option<String>>(i)
                            .or_else(|_| row.get::<_, bool>(i).map(|b| Some(b.to_string())))
                            .map(Option::unwrap_or_default)
                    })
                    .collect::<Result<Vec<String>, _>>()
            })
            .map_err(fail)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(fail)
    }

    fn read(&self, w: &Wanted) -> Result<Facts, PublishError> {
        let kind = |name: &Name| {
            self.strings(KIND, name, 1)
                .map(|rows| rows.into_iter().next().map(|mut r| r.remove(0)))
        };
        let mut facts = Facts {
            dest: w.dest.clone(),
            staged: w.staged.clone(),
            kind: kind(&w.dest)?,
            staged_kind: kind(&w.staged)?,
            columns: Vec::new(),
            staged_columns: Vec::new(),
            key: Vec::new(),
            triggers: Vec::new(),
            references: Vec::new(),
            parents: Vec::new(),
            sequences: Vec::new(),
            dependents: Vec::new(),
            not_null: w.not_null.clone(),
            swap: Default::default(),
            rights: Default::default(),
            staged_rights: Default::default(),
            may_create: true,
        };
        let column = |r: &Vec<String>| Column {
            name: r[0].clone(),
            not_null: r[1] == "true",
            ..Column::default()
        };
        facts.staged_columns = self
            .strings(COLUMNS, &w.staged, 3)?
            .iter()
            .map(column)
            .collect();
        if facts.kind.is_none() {
            return Ok(facts);
        }
        for r in self.strings(COLUMNS, &w.dest, 3)? {
            if let Some(sequence) = nextval(&r[2], &w.dest.schema) {
                facts.sequences.push((r[0].clone(), sequence));
            }
            facts.columns.push(column(&r));
        }
        facts.key = self
            .strings(KEY, &w.dest, 1)?
            .into_iter()
            .map(|mut r| r.remove(0))
            .collect();
        let schema = &w.dest.schema;
        facts.references = foreign_keys(self.strings(REFERENCES, &w.dest, 4)?, schema)
            .into_iter()
            .map(|(constraint, from, columns, to_columns)| Reference {
                constraint,
                from,
                columns,
                to_columns,
            })
            .collect();
        facts.parents = foreign_keys(self.strings(PARENTS, &w.dest, 4)?, schema)
            .into_iter()
            .map(|(constraint, to, columns, to_columns)| Parent {
                constraint,
                to,
                columns,
                to_columns,
            })
            .collect();
        Ok(facts)
    }
}

/// Rows of (constraint, other table, column, its referenced column), one per column, gathered
/// into one key per constraint and table, in the order the rows come.
fn foreign_keys(
    rows: Vec<Vec<String>>,
    schema: &str,
) -> Vec<(String, Name, Vec<String>, Vec<String>)> {
    let mut out: Vec<(String, Name, Vec<String>, Vec<String>)> = Vec::new();
    for r in rows {
        let other = Name::new(schema, &r[1]);
        match out.iter_mut().find(|k| k.0 == r[0] && k.1 == other) {
            Some(k) => {
                k.2.push(r[2].clone());
                k.3.push(r[3].clone());
            }
            None => out.push((r[0].clone(), other, vec![r[2].clone()], vec![r[3].clone()])),
        }
    }
    out
}

/// The sequence a column default `nextval('name')` draws from; a bare name is in `schema`.
fn nextval(default: &str, schema: &str) -> Option<Name> {
    let rest = default.trim().strip_prefix("nextval('")?;
    let end = rest.find("')")?;
    let text = rest[..end].replace("''", "'");
    Some(match text.rsplit_once('.') {
        Some((s, n)) => Name::new(s, n),
        None => Name::new(schema, &text),
    })
}

fn failed(e: &duckdb::Error, sql: &str, relation: &Name) -> PublishError {
    PublishError::Statement {
        relation: relation.shown(),
        sql: sql.lines().next().unwrap_or(sql).to_string(),
        message: first_line(&e.to_string()),
    }
}

impl Transaction for DuckTransaction {
    fn run(&mut self, step: &Step) -> Result<(), PublishError> {
        let mut statement = self
            .conn()
            .prepare(&step.sql)
            .map_err(|e| failed(&e, &step.sql, &step.relation))?;
        statement
            .execute(params_from_iter(&step.params))
            .map(|_| ())
            .map_err(|e| failed(&e, &step.sql, &step.relation))
    }

    fn value(&mut self, step: &Step) -> Result<Option<i64>, PublishError> {
        let fail = |e: duckdb::Error| failed(&e, &step.sql, &step.relation);
        let mut statement = self.conn().prepare(&step.sql).map_err(fail)?;
        let mut rows = statement
            .query(params_from_iter(&step.params))
            .map_err(fail)?;
        match rows.next().map_err(fail)? {
            Some(row) => row.get(0).map_err(fail),
            None => Ok(None),
        }
    }

    fn facts(&mut self, wanted: &[Wanted]) -> Result<Vec<Facts>, PublishError> {
        wanted.iter().map(|w| self.read(w)).collect()
    }

    fn commit(mut self: Box<Self>) -> Result<(), PublishError> {
        let conn = self.conn.take().expect("the connection lives until commit");
        conn.execute_batch("COMMIT")
            .map_err(|e| failed(&e, "COMMIT", &Name::new("", "")))?;
        drop(conn);
        Ok(())
    }
}

impl Drop for DuckTransaction {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            let _ = conn.execute_batch("ROLLBACK");
        }
    }
}
