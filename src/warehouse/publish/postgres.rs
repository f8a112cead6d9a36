//! The Postgres write transaction: one session of its own, every statement sent and awaited
//! alone (never a batch with its COMMIT), under `lock_timeout` and `statement_timeout`. The
//! catalog facts are read with bind parameters, inside the transaction, after the locks.

use std::str::FromStr;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgConnection, PgRow};
use sqlx::{Connection, Row};

use super::swap_catalog::{self, Catalog};
use super::{seconds, PublishError, Transaction, Wanted};
use crate::redact::redact;
use crate::table_facts::{
    Column, Dependent, Facts, Name, Parent, Reference, Rights, Step, Trigger,
};
use crate::warehouse::postgres::{connect_as, message, register_secrets, sqlstate};
use crate::warehouse::{Timeouts, WarehouseError};

/// The relation's oid and kind; none when it does not exist. `$1` schema, `$2` name.
const RELATION: &str = r#"
SELECT c.oid::bigint,
       CASE c.relkind WHEN 'r' THEN 'table' WHEN 'p' THEN 'partitioned table' WHEN 'v' THEN 'view'
                      WHEN 'm' THEN 'materialized view' WHEN 'f' THEN 'foreign table' ELSE 'relation' END
  FROM pg_catalog.pg_class c
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = $1 AND c.relname = $2 AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
"#;

/// Columns in order, with the sequence each owns (serial or identity). `$1` the oid.
const COLUMNS: &str = r#"
SELECT a.attname::text, a.attgenerated <> '', a.attidentity = 'a', a.attnotnull,
       (SELECT ARRAY[sn.nspname::text, s.relname::text]
          FROM pg_catalog.pg_depend d
          JOIN pg_catalog.pg_class s ON s.oid = d.objid AND s.relkind = 'S'
          JOIN pg_catalog.pg_namespace sn ON sn.oid = s.relnamespace
         WHERE d.classid = 'pg_catalog.pg_class'::regclass AND d.refobjid = a.attrelid
           AND d.refobjsubid = a.attnum AND d.deptype IN ('a', 'i')
         LIMIT 1)
  FROM pg_catalog.pg_attribute a
 WHERE a.attrelid = $1::bigint::oid AND a.attnum > 0 AND NOT a.attisdropped
 ORDER BY a.attnum
"#;

/// The primary key's columns, in key order. `$1` the oid.
const KEY: &str = r#"
SELECT a.attname::text
  FROM pg_catalog.pg_constraint con
 CROSS JOIN LATERAL unnest(con.conkey) WITH ORDINALITY AS k(attnum, i)
  JOIN pg_catalog.pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum
 WHERE con.conrelid = $1::bigint::oid AND con.contype = 'p'
 ORDER BY k.i
"#;

/// User triggers that fire. `$1` the oid.
const TRIGGERS: &str = r#"
SELECT t.tgname::text, t.tgenabled::text
  FROM pg_catalog.pg_trigger t
 WHERE t.tgrelid = $1::bigint::oid AND NOT t.tgisinternal AND t.tgenabled <> 'D'
 ORDER BY 1
"#;

/// Foreign keys into the relation, from plain and partitioned tables (a partition's clone of
/// its parent's key is its parent's). `$1` the oid.
const REFERENCES: &str = r#"
SELECT con.conname::text, fn.nspname::text, fc.relname::text,
       (SELECT array_agg(a.attname::text ORDER BY k.i)
          FROM unnest(con.conkey) WITH ORDINALITY AS k(attnum, i)
          JOIN pg_catalog.pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum),
       (SELECT array_agg(a.attname::text ORDER BY k.i)
          FROM unnest(con.confkey) WITH ORDINALITY AS k(attnum, i)
          JOIN pg_catalog.pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.attnum)
  FROM pg_catalog.pg_constraint con
  JOIN pg_catalog.pg_class fc ON fc.oid = con.conrelid
  JOIN pg_catalog.pg_namespace fn ON fn.oid = fc.relnamespace
 WHERE con.contype = 'f' AND con.confrelid = $1::bigint::oid AND con.conparentid = 0
 ORDER BY 2, 3, 1
"#;

/// Foreign keys of the relation into other tables (or itself). `$1` the oid.
const PARENTS: &str = r#"
SELECT con.conname::text, tn.nspname::text, tc.relname::text,
       (SELECT array_agg(a.attname::text ORDER BY k.i)
          FROM unnest(con.conkey) WITH ORDINALITY AS k(attnum, i)
          JOIN pg_catalog.pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum),
       (SELECT array_agg(a.attname::text ORDER BY k.i)
          FROM unnest(con.confkey) WITH ORDINALITY AS k(attnum, i)
          JOIN pg_catalog.pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.attnum)
  FROM pg_catalog.pg_constraint con
  JOIN pg_catalog.pg_class tc ON tc.oid = con.confrelid
  JOIN pg_catalog.pg_namespace tn ON tn.oid = tc.relnamespace
 WHERE con.contype = 'f' AND con.conrelid = $1::bigint::oid AND con.conparentid = 0
 ORDER BY 1
"#;

/// Materialized views over the relation, directly or through views, the nearest first.
/// `$1` the oid.
const DEPENDENTS: &str = r#"
WITH RECURSIVE up(oid, depth) AS (
    SELECT $1::bigint::oid, 0
  UNION
    SELECT r.ev_class, up.depth + 1
      FROM up
      JOIN pg_catalog.pg_depend d
        ON d.refobjid = up.oid AND d.classid = 'pg_catalog.pg_rewrite'::regclass
       AND d.refclassid = 'pg_catalog.pg_class'::regclass
      JOIN pg_catalog.pg_rewrite r ON r.oid = d.objid
     WHERE r.ev_class <> up.oid AND up.depth < 32
)
SELECT n.nspname::text, c.relname::text, c.relispopulated, max(up.depth)::int, c.oid::bigint
  FROM up
  JOIN pg_catalog.pg_class c ON c.oid = up.oid
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
 WHERE c.relkind = 'm'
 GROUP BY 1, 2, 3, 5
 ORDER BY 4, 1, 2
"#;

/// What this session may do to the relation: its owner, whether the session holds the owner's
/// rights (a member that inherits them: what `ALTER`, `REFRESH` and `ALTER SEQUENCE` check),
/// and its table privileges. `$1` the oid.
const RIGHTS: &str = r#"
SELECT pg_catalog.pg_get_userbyid(c.relowner)::text, pg_catalog.pg_has_role(c.relowner, 'USAGE'),
       pg_catalog.has_table_privilege(c.oid, 'SELECT'), pg_catalog.has_table_privilege(c.oid, 'INSERT'),
       pg_catalog.has_table_privilege(c.oid, 'UPDATE'), pg_catalog.has_table_privilege(c.oid, 'DELETE'),
       pg_catalog.has_table_privilege(c.oid, 'TRUNCATE')
  FROM pg_catalog.pg_class c
 WHERE c.oid = $1::bigint::oid
"#;

/// Whether this session may create in the schema `$1`; no row when it does not exist.
const MAY_CREATE: &str = r#"
SELECT pg_catalog.has_schema_privilege(n.oid, 'CREATE')
  FROM pg_catalog.pg_namespace n
 WHERE n.nspname = $1
"#;

/// Who holds a granted lock on the relation (`$1`, a qualified name), besides this session.
const HOLDERS: &str = r#"
SELECT a.pid, coalesce(a.usename::text, ''), coalesce(a.application_name, ''),
       coalesce(a.state, ''), l.mode,
       coalesce(extract(epoch FROM now() - a.xact_start)::bigint, 0)
  FROM pg_catalog.pg_locks l
  JOIN pg_catalog.pg_stat_activity a ON a.pid = l.pid
 WHERE l.locktype = 'relation' AND l.relation = pg_catalog.to_regclass($1)
   AND l.granted AND l.pid <> pg_catalog.pg_backend_pid()
 ORDER BY a.xact_start NULLS LAST, a.pid
"#;

pub(in crate::warehouse) struct PgTransaction {
    runtime: tokio::runtime::Runtime,
    conn: Option<PgConnection>,
    lock_timeout: Duration,
}

impl PgTransaction {
    pub(in crate::warehouse) fn begin(
        url: &str,
        timeouts: Timeouts,
        lock_timeout: Duration,
        read_only: bool,
    ) -> Result<Self, PublishError> {
        register_secrets(url);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| {
                WarehouseError::Runtime(format!("could not start the async runtime: {e}"))
            })?;
        let options = PgConnectOptions::from_str(url)
            .map_err(|e| WarehouseError::BadUrl(redact(&e.to_string())))?;
        let options = crate::warehouse::postgres::quiet(options).application_name("sqb promote");
        let server = format!("{}:{}", options.get_host(), options.get_port());
        let database = options
            .get_database()
            .unwrap_or(options.get_username())
            .to_string();
        let conn = runtime.block_on(connect_as(
            &options,
            &server,
            &database,
            timeouts.connect,
            read_only,
        ))?;
        let mut tx = Self {
            runtime,
            conn: Some(conn),
            lock_timeout,
        };
        let begin = match read_only {
            true => "BEGIN ISOLATION LEVEL READ COMMITTED READ ONLY",
            false => "BEGIN ISOLATION LEVEL READ COMMITTED READ WRITE",
        };
        let none = Name::new("", "");
        tx.execute(begin, &[], &none)?;
        let lock = format!("{}ms", lock_timeout.as_millis().max(1));
        let statement = format!("{}ms", timeouts.statement.as_millis().max(1));
        // An empty search_path: every name the catalog deparses comes schema-qualified, and no
        // name in the publish's statements resolves to an object another role planted.
        tx.execute(
            "SELECT pg_catalog.set_config('lock_timeout', $1, true), pg_catalog.set_config('statement_timeout', $2, true), pg_catalog.set_config('search_path', '', true)",
            &[lock, statement],
            &none,
        )?;
        Ok(tx)
    }

    fn execute(
        &mut self,
        sql: &str,
        params: &[String],
        relation: &Name,
    ) -> Result<(), PublishError> {
        self.fetch(sql, params, relation).map(|_| ())
    }

    fn fetch(
        &mut self,
        sql: &str,
        params: &[String],
        relation: &Name,
    ) -> Result<Vec<PgRow>, PublishError> {
        let mut query = sqlx::query(sql);
        for p in params {
            query = query.bind(p);
        }
        let result = {
            let conn = self
                .conn
                .as_mut()
                .expect("the connection lives until commit");
            self.runtime.block_on(query.fetch_all(conn))
        };
        result.map_err(|e| self.failed(e, sql, relation))
    }

    fn rows(&mut self, sql: &str, oid: i64) -> Result<Vec<PgRow>, PublishError> {
        self.oid_rows(sql, &[oid])
    }

    /// The rows of a catalog query whose parameters are oids.
    fn oid_rows(&mut self, sql: &str, oids: &[i64]) -> Result<Vec<PgRow>, PublishError> {
        let mut query = sqlx::query(sql);
        for oid in oids {
            query = query.bind(*oid);
        }
        let result = {
            let conn = self
                .conn
                .as_mut()
                .expect("the connection lives until commit");
            self.runtime.block_on(query.fetch_all(conn))
        };
        result.map_err(|e| self.failed(e, "the catalog query", &Name::new("", "")))
    }

    /// The error of a failed statement; a lock timeout names who held the lock, read once the
    /// transaction is rolled back.
    fn failed(&mut self, err: sqlx::Error, sql: &str, relation: &Name) -> PublishError {
        let state = sqlstate(&err);
        match state.as_deref() {
            Some("55P03") => {
                let holders = self.holders(relation);
                PublishError::LockTimeout {
                    relation: relation.shown(),
                    seconds: seconds(self.lock_timeout),
                    holders,
                }
            }
            Some("57P01" | "57P02" | "57P03" | "08000" | "08003" | "08006") => {
                PublishError::Lost(redact(&message(&err)))
            }
            None if matches!(err, sqlx::Error::Io(_) | sqlx::Error::Protocol(_)) => {
                PublishError::Lost(redact(&message(&err)))
            }
            _ => PublishError::Statement {
                relation: relation.shown(),
                sql: sql.lines().next().unwrap_or(sql).to_string(),
                message: redact(&message(&err)),
            },
        }
    }

    fn holders(&mut self, relation: &Name) -> Vec<String> {
        let conn = self
            .conn
            .as_mut()
            .expect("the connection lives until commit");
        let qualified = relation.sql();
        self.runtime.block_on(async {
            if sqlx::query("ROLLBACK").execute(&mut *conn).await.is_err() {
                return Vec::new();
            }
            let rows = sqlx::query(HOLDERS)
                .bind(qualified)
                .fetch_all(&mut *conn)
                .await
                .unwrap_or_default();
            rows.iter()
                .map(|r| {
                    let (pid, user, app, state, mode, age): (
                        i32,
                        String,
                        String,
                        String,
                        String,
                        i64,
                    ) = (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4), r.get(5));
                    let app = match app.is_empty() {
                        true => String::new(),
                        false => format!(", {app}"),
                    };
                    format!("pid {pid} ({user}{app}, {state}, in a transaction for {age}s, {mode})")
                })
                .collect()
        })
    }

    fn read(&mut self, w: &Wanted) -> Result<Facts, PublishError> {
        let (dest_oid, kind) = self.relation(&w.dest)?;
        let (staged_oid, staged_kind) = self.relation(&w.staged)?;
        let mut facts = Facts {
            dest: w.dest.clone(),
            staged: w.staged.clone(),
            kind,
            staged_kind,
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
            rights: Rights::all(),
            staged_rights: Rights::all(),
            may_create: true,
        };
        if let Some(oid) = staged_oid {
            facts.staged_columns = self.columns(oid)?.into_iter().map(|(c, _)| c).collect();
            facts.staged_rights = self.rights(oid)?;
        }
        let Some(oid) = dest_oid else {
            let schema = [w.dest.schema.clone()];
            let rows = self.fetch(MAY_CREATE, &schema, &w.dest)?;
            facts.may_create = rows.first().is_some_and(|r| r.get(0));
            return Ok(facts);
        };
        facts.rights = self.rights(oid)?;
        for (column, sequence) in self.columns(oid)? {
            if let Some(sequence) = sequence {
                facts.sequences.push((column.name.clone(), sequence));
            }
            facts.columns.push(column);
        }
        facts.key = self.rows(KEY, oid)?.iter().map(|r| r.get(0)).collect();
        facts.triggers = self
            .rows(TRIGGERS, oid)?
            .iter()
            .map(|r| Trigger {
                name: r.get(0),
                enabled: r.get::<String, _>(1).chars().next().unwrap_or('O'),
            })
            .collect();
        facts.references = self
            .rows(REFERENCES, oid)?
            .iter()
            .map(|r| Reference {
                constraint: r.get(0),
                from: Name::new(&r.get::<String, _>(1), &r.get::<String, _>(2)),
                columns: r.get(3),
                to_columns: r.get(4),
            })
            .collect();
        facts.parents = self
            .rows(PARENTS, oid)?
            .iter()
            .map(|r| Parent {
                constraint: r.get(0),
                to: Name::new(&r.get::<String, _>(1), &r.get::<String, _>(2)),
                columns: r.get(3),
                to_columns: r.get(4),
            })
            .collect();
        if let (Some(staged), Some("table" | "partitioned table")) =
            (staged_oid, facts.kind.as_deref())
        {
            facts.swap = swap_catalog::read(self, &facts, oid, staged)?;
        }
        for r in self.rows(DEPENDENTS, oid)? {
            facts.dependents.push(Dependent {
                name: Name::new(&r.get::<String, _>(0), &r.get::<String, _>(1)),
                populated: r.get(2),
                depth: r.get(3),
                rights: self.rights(r.get(4))?,
            });
        }
        Ok(facts)
    }

    fn rights(&mut self, oid: i64) -> Result<Rights, PublishError> {
        let rows = self.rows(RIGHTS, oid)?;
        Ok(match rows.first() {
            Some(r) => Rights {
                owner: r.get(0),
                owns: r.get(1),
                select: r.get(2),
                insert: r.get(3),
                update: r.get(4),
                delete: r.get(5),
                truncate: r.get(6),
            },
            None => Rights::all(),
        })
    }

    fn relation(&mut self, name: &Name) -> Result<(Option<i64>, Option<String>), PublishError> {
        let rows = self.fetch(RELATION, &[name.schema.clone(), name.name.clone()], name)?;
        Ok(match rows.first() {
            Some(r) => (Some(r.get(0)), Some(r.get(1))),
            None => (None, None),
        })
    }

    fn columns(&mut self, oid: i64) -> Result<Vec<(Column, Option<Name>)>, PublishError> {
        Ok(self
            .rows(COLUMNS, oid)?
            .iter()
            .map(|r| {
                (
                    Column {
                        name: r.get(0),
                        generated: r.get(1),
                        identity_always: r.get(2),
                        not_null: r.get(3),
                    },
                    r.get::<Option<Vec<String>>, _>(4)
                        .filter(|n| n.len() == 2)
                        .map(|n| Name::new(&n[0], &n[1])),
                )
            })
            .collect())
    }
}

impl Catalog for PgTransaction {
    fn rows_of(&mut self, sql: &str, oids: &[i64]) -> Result<Vec<PgRow>, PublishError> {
        self.oid_rows(sql, oids)
    }

    fn fetch(
        &mut self,
        sql: &str,
        params: &[String],
        relation: &Name,
    ) -> Result<Vec<PgRow>, PublishError> {
        PgTransaction::fetch(self, sql, params, relation)
    }
}

impl Transaction for PgTransaction {
    fn run(&mut self, step: &Step) -> Result<(), PublishError> {
        self.execute(&step.sql, &step.params, &step.relation)
    }

    fn value(&mut self, step: &Step) -> Result<Option<i64>, PublishError> {
        let rows = self.fetch(&step.sql, &step.params, &step.relation)?;
        Ok(rows.first().map(|r| r.get::<i64, _>(0)))
    }

    fn facts(&mut self, wanted: &[Wanted]) -> Result<Vec<Facts>, PublishError> {
        wanted.iter().map(|w| self.read(w)).collect()
    }

    fn commit(mut self: Box<Self>) -> Result<(), PublishError> {
        let none = Name::new("", "");
        self.execute("COMMIT", &[], &none)?;
        if let Some(conn) = self.conn.take() {
            let _ = self.runtime.block_on(conn.close());
        }
        Ok(())
    }
}

impl Drop for PgTransaction {
    fn drop(&mut self) {
        // Not committed: roll back before closing, rather than leave it to the server.
        if let Some(mut conn) = self.conn.take() {
            let _ = self.runtime.block_on(async {
                let _ = sqlx::query("ROLLBACK").execute(&mut conn).await;
                conn.close().await
            });
        }
    }
}
