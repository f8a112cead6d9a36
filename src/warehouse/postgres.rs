//! Postgres introspection through sqlx: read-only sessions, three pg_catalog queries per namespace
//! (`catalog`).
//!
//! `information_schema.columns` is not used: it reports arrays as `ARRAY` and enums and domains
//! as `USER-DEFINED`, omits materialized views and marks every view column nullable. The catalog
//! query reads `format_type(atttypid, atttypmod)`, the full type text as the server prints it.

/// What the catalog says of type `t` (`et`: its element type when it is an array; `tn`: the
/// namespace of the element type, else of the type): an enum's members, a domain's base type,
/// the schema of a type outside the system schemas. Three columns, each NULL where it says
/// nothing.
macro_rules! type_details {
    () => {
        r#"
       CASE WHEN t.typtype = 'e' OR et.typtype = 'e' THEN
           (SELECT array_agg(e.enumlabel::text ORDER BY e.enumsortorder)
              FROM pg_catalog.pg_enum e
             WHERE e.enumtypid = CASE WHEN t.typtype = 'e' THEN t.oid ELSE et.oid END)
       END AS enum_members,
       CASE WHEN t.typtype = 'd' THEN pg_catalog.format_type(t.typbasetype, t.typtypmod) END AS domain_base,
       CASE WHEN tn.nspname NOT IN ('pg_catalog', 'information_schema') THEN tn.nspname::text END AS type_schema"#
    };
}
use type_details;

mod catalog;
mod describe;

pub use catalog::{COLUMNS_QUERY, RELATIONS_QUERY, TYPES_QUERY};

use std::collections::HashMap;
use std::str::FromStr;
use std::time::{Duration, Instant};

use sqlx::postgres::{PgConnectOptions, PgConnection, PgRow};
use sqlx::{Column as _, Connection, Row, TypeInfo as _};

use super::{listings, Backend, Reply, SchemaListing, Timeouts, WarehouseError};
use crate::catalog::{Described, Namespace, PhysicalRelation, RelationKind, UserType};
use crate::redact::{redact, register, register_url};
use crate::rows::{Cell, Column, Rows, Statement};

/// Every user schema of the database the session reads, with its relations (a schema without
/// any gives one row with a NULL relation). Schemas the user may not use are left out: their
/// catalog rows could not be read anyway.
pub const SURVEY_QUERY: &str = r#"
SELECT n.nspname::text AS schema, c.relname::text AS relname
  FROM pg_catalog.pg_namespace n
  LEFT JOIN pg_catalog.pg_class c
    ON c.relnamespace = n.oid
   AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
   AND NOT c.relispartition
 WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')
   AND n.nspname NOT LIKE 'pg\_toast%'
   AND n.nspname NOT LIKE 'pg\_temp\_%'
   AND pg_catalog.has_schema_privilege(n.oid, 'USAGE')
 ORDER BY 1, 2
"#;

/// `options` whose statements sqlx logs at debug level only, slow ones included: by default
/// it logs a statement past a second, with its SQL, at warn, and a query's SQL (a tenant's,
/// under `sqb serve`) must not reach a log read at info level.
pub(crate) fn quiet(options: PgConnectOptions) -> PgConnectOptions {
    use sqlx::ConnectOptions as _;
    options
        .log_statements(log::LevelFilter::Debug)
        .log_slow_statements(log::LevelFilter::Debug, Duration::from_secs(1))
}

/// Connects lazily, one read-only session per database, all with the same credentials.
pub struct PgIntrospector {
    base: PgConnectOptions,
    server: String,
    default_database: String,
    timeouts: Timeouts,
    sessions: HashMap<String, PgConnection>,
}

impl PgIntrospector {
    /// Prepares a connection from a URL; nothing is sent until the first query.
    pub fn configure(url: &str, timeouts: Timeouts) -> Result<Self, WarehouseError> {
        register_secrets(url);
        let base = PgConnectOptions::from_str(url)
            .map_err(|e| WarehouseError::BadUrl(redact(&e.to_string())))?;
        let server = format!("{}:{}", base.get_host(), base.get_port());
        let default_database = base
            .get_database()
            .unwrap_or(base.get_username())
            .to_string();
        let statement_ms = timeouts.statement.as_millis().to_string();
        let base = quiet(base).application_name("sqb").options([
            ("default_transaction_read_only", "on"),
            ("statement_timeout", statement_ms.as_str()),
            ("lock_timeout", statement_ms.as_str()),
        ]);
        Ok(Self {
            base,
            server,
            default_database,
            timeouts,
            sessions: HashMap::new(),
        })
    }

    async fn session(&mut self, database: &str) -> Result<&mut PgConnection, WarehouseError> {
        if !self.sessions.contains_key(database) {
            let options = self.base.clone().database(database);
            let conn = connect(&options, &self.server, database, self.timeouts.connect).await?;
            self.sessions.insert(database.to_string(), conn);
        }
        Ok(self.sessions.get_mut(database).expect("inserted above"))
    }
}

/// The connection libpq's environment describes (`PGHOST`, `PGPORT`, `PGUSER`, `PGDATABASE`,
/// and their defaults), as a URL without a password: what `sqb init` connects to, and writes,
/// when it is given no URL.
pub fn environment_url() -> String {
    let options = PgConnectOptions::new();
    const PART: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
        .remove(b'.')
        .remove(b'-')
        .remove(b'_')
        .remove(b'~');
    let encode = |s: &str| percent_encoding::utf8_percent_encode(s, PART).to_string();
    let host = match options.get_socket() {
        Some(socket) => encode(&socket.display().to_string()),
        None => encode(options.get_host()),
    };
    let user = encode(options.get_username());
    let database = options
        .get_database()
        .map(|d| format!("/{}", encode(d)))
        .unwrap_or_default();
    format!("postgres://{user}@{host}:{}{database}", options.get_port())
}

pub(super) fn register_secrets(url: &str) {
    register_url(url);
    if let Ok(password) = std::env::var("PGPASSWORD") {
        register(&password);
    }
}

/// Connects, retrying only transient refusals (server starting, connection refused, too many
/// connections) with bounded backoff, all within the connect timeout.
async fn connect(
    options: &PgConnectOptions,
    server: &str,
    database: &str,
    limit: Duration,
) -> Result<PgConnection, WarehouseError> {
    connect_as(options, server, database, limit, true).await
}

/// Connects as [`connect`] does; read-only unless `read_only` is false (`sqb promote`'s
/// writer, the one session of sqb that may write).
pub(super) async fn connect_as(
    options: &PgConnectOptions,
    server: &str,
    database: &str,
    limit: Duration,
    read_only: bool,
) -> Result<PgConnection, WarehouseError> {
    let deadline = Instant::now() + limit;
    let mut delay = Duration::from_millis(100);
    let timeout = || WarehouseError::ConnectTimeout {
        server: server.to_string(),
        seconds: limit.as_secs().max(1),
    };
    for attempt in 0.. {
        let remaining = deadline.saturating_duration_since(Instant::now());
        let result = tokio::time::timeout(remaining, PgConnection::connect_with(options))
            .await
            .map_err(|_| timeout())?;
        match result {
            Ok(conn) if !read_only => return Ok(conn),
            Ok(mut conn) => {
                // Belt and braces: the session is read-only even if startup options were ignored.
                sqlx::query("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
                    .execute(&mut conn)
                    .await
                    .map_err(|e| classify(e, server, options, database))?;
                return Ok(conn);
            }
            Err(err) if attempt < 3 && is_transient(&err) && remaining > delay * 2 => {
                tokio::time::sleep(delay).await;
                delay *= 2;
            }
            Err(err) => return Err(classify(err, server, options, database)),
        }
    }
    unreachable!("the loop returns")
}

pub(super) fn sqlstate(err: &sqlx::Error) -> Option<String> {
    match err {
        sqlx::Error::Database(db) => db.code().map(|c| c.into_owned()),
        _ => None,
    }
}

fn is_transient(err: &sqlx::Error) -> bool {
    match err {
        sqlx::Error::Io(io) => io.kind() == std::io::ErrorKind::ConnectionRefused,
        _ => matches!(sqlstate(err).as_deref(), Some("57P03" | "53300")),
    }
}

fn classify(
    err: sqlx::Error,
    server: &str,
    options: &PgConnectOptions,
    database: &str,
) -> WarehouseError {
    let server = server.to_string();
    match sqlstate(&err).as_deref() {
        Some("28P01" | "28000") => WarehouseError::Auth {
            server,
            user: options.get_username().to_string(),
        },
        Some("3D000") => WarehouseError::NoDatabase {
            server,
            database: database.to_string(),
        },
        Some("57014") => WarehouseError::StatementTimeout { seconds: 0 },
        Some("42501") => WarehouseError::Permission(redact(&message(&err))),
        _ => WarehouseError::Connect {
            server,
            reason: redact(&message(&err)),
        },
    }
}

pub(super) fn message(err: &sqlx::Error) -> String {
    match err {
        sqlx::Error::Database(db) => db.message().to_string(),
        sqlx::Error::Io(io) => io.to_string(),
        sqlx::Error::Tls(tls) => format!("TLS: {tls}"),
        other => other.to_string(),
    }
}

fn relation_kind(relkind: &str) -> RelationKind {
    match relkind {
        "p" => RelationKind::PartitionedTable,
        "v" => RelationKind::View,
        "m" => RelationKind::MaterializedView,
        "f" => RelationKind::ForeignTable,
        _ => RelationKind::Table,
    }
}

/// The three columns `type_details!` gives, from `first` on, as the type's details (`None` when
/// it has none).
fn user_type(row: &PgRow, first: usize) -> Result<Option<UserType>, sqlx::Error> {
    let details = UserType {
        enum_members: row.try_get(first)?,
        domain_base: row.try_get(first + 1)?,
        schema: row.try_get(first + 2)?,
    };
    Ok((details != UserType::default()).then_some(details))
}

impl Backend for PgIntrospector {
    fn relations<'a>(
        &'a mut self,
        namespace: &'a Namespace,
        names: &'a [String],
    ) -> Reply<'a, Vec<PhysicalRelation>> {
        Box::pin(self.catalog(namespace, names))
    }

    fn run<'a>(
        &'a mut self,
        database: Option<&'a str>,
        statement: &'a Statement,
        _: Timeouts,
    ) -> Reply<'a, Rows> {
        Box::pin(self.execute(database, statement))
    }

    fn describe<'a>(
        &'a mut self,
        database: Option<&'a str>,
        queries: &'a [String],
        _: Timeouts,
        _: usize,
    ) -> Reply<'a, Vec<Described>> {
        Box::pin(self.describe_all(database, queries))
    }

    fn survey(&mut self) -> Reply<'_, Vec<SchemaListing>> {
        Box::pin(async {
            let statement = Statement {
                sql: SURVEY_QUERY.to_string(),
                params: Vec::new(),
            };
            let rows = self.execute(None, &statement).await?;
            let text = |cell: &Cell| match cell {
                Cell::Text(t) => Some(t.clone()),
                _ => None,
            };
            Ok(listings(rows.rows.iter().filter_map(|row| {
                Some((text(row.first()?)?, row.get(1).and_then(text)))
            })))
        })
    }

    fn default_database(&self) -> &str {
        &self.default_database
    }

    /// Pings every session this introspector holds; one that does not answer is dropped.
    fn connect(&mut self) -> Reply<'_, ()> {
        Box::pin(async {
            let database = self.default_database.clone();
            self.session(&database).await.map(|_| ())
        })
    }

    fn alive(&mut self) -> Reply<'_, bool> {
        Box::pin(async {
            let mut alive = true;
            for conn in self.sessions.values_mut() {
                alive &= conn.ping().await.is_ok();
            }
            Ok(alive)
        })
    }
}

impl PgIntrospector {
    /// One catalog query of `namespace`'s relations among `names`, in a transaction rolled
    /// back.
    async fn catalog(
        &mut self,
        namespace: &Namespace,
        names: &[String],
    ) -> Result<Vec<PhysicalRelation>, WarehouseError> {
        let database = namespace
            .database
            .clone()
            .unwrap_or_else(|| self.default_database.clone());
        let statement = self.timeouts.statement;
        let server = self.server.clone();
        let options = self.base.clone();
        let conn = self.session(&database).await?;
        let query = async {
            let mut tx = conn.begin().await?;
            let relations = catalog::read(&mut tx, &namespace.schema, names).await?;
            tx.rollback().await?;
            Ok::<_, sqlx::Error>(relations)
        };
        let guard = statement + Duration::from_secs(5);
        match tokio::time::timeout(guard, query).await {
            Err(_) => Err(WarehouseError::StatementTimeout {
                seconds: statement.as_secs(),
            }),
            Ok(Err(err)) => Err(match classify(err, &server, &options, &database) {
                WarehouseError::StatementTimeout { .. } => WarehouseError::StatementTimeout {
                    seconds: statement.as_secs(),
                },
                WarehouseError::Connect { reason, .. } => WarehouseError::Query(reason),
                other => other,
            }),
            Ok(Ok(relations)) => Ok(relations),
        }
    }
}

impl PgIntrospector {
    /// Runs one statement in a read-only transaction (the session's own, rolled back) under the
    /// statement timeout, its parameters bound as text, and decodes every row.
    async fn execute(
        &mut self,
        database: Option<&str>,
        statement: &Statement,
    ) -> Result<Rows, WarehouseError> {
        let database = database.map_or_else(|| self.default_database.clone(), str::to_string);
        let limit = self.timeouts.statement;
        let server = self.server.clone();
        let options = self.base.clone();
        let conn = self.session(&database).await?;
        let query = async {
            let mut tx = conn.begin().await?;
            let mut query = sqlx::query(&statement.sql);
            for param in &statement.params {
                query = query.bind(param);
            }
            let rows = query.fetch_all(&mut *tx).await?;
            tx.rollback().await?;
            Ok::<_, sqlx::Error>(rows)
        };
        let rows = match tokio::time::timeout(limit + Duration::from_secs(5), query).await {
            Err(_) => {
                return Err(WarehouseError::QueryTimeout {
                    seconds: limit.as_secs(),
                })
            }
            Ok(Err(err)) => {
                return Err(match classify(err, &server, &options, &database) {
                    WarehouseError::StatementTimeout { .. } => WarehouseError::QueryTimeout {
                        seconds: limit.as_secs(),
                    },
                    WarehouseError::Connect { reason, .. } => WarehouseError::Failed(reason),
                    other => other,
                })
            }
            Ok(Ok(rows)) => rows,
        };
        decode_rows(&rows)
    }
}

fn decode_rows(rows: &[PgRow]) -> Result<Rows, WarehouseError> {
    let Some(first) = rows.first() else {
        return Ok(Rows::default());
    };
    let columns: Vec<Column> = first
        .columns()
        .iter()
        .map(|c| Column {
            name: c.name().to_string(),
            type_name: c.type_info().name().to_lowercase(),
        })
        .collect();
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        let cells = (0..columns.len())
            .map(|i| decode_cell(row, i, &columns[i]))
            .collect::<Result<Vec<_>, _>>()?;
        out.push(cells);
    }
    Ok(Rows { columns, rows: out })
}

fn decode_cell(row: &PgRow, i: usize, column: &Column) -> Result<Cell, WarehouseError> {
    use sqlx::ValueRef as _;
    let raw = row.try_get_raw(i).map_err(|e| undecodable(column, &e))?;
    if raw.is_null() {
        return Ok(Cell::Null);
    }
    let get_err = |e: sqlx::Error| undecodable(column, &e);
    Ok(match column.type_name.as_str() {
        "bool" => Cell::Bool(row.try_get(i).map_err(get_err)?),
        "int2" => Cell::Int(row.try_get::<i16, _>(i).map_err(get_err)?.into()),
        "int4" => Cell::Int(row.try_get::<i32, _>(i).map_err(get_err)?.into()),
        "int8" => Cell::Int(row.try_get::<i64, _>(i).map_err(get_err)?.into()),
        "float4" => Cell::Float(row.try_get::<f32, _>(i).map_err(get_err)?.into()),
        "float8" => Cell::Float(row.try_get(i).map_err(get_err)?),
        "numeric" => {
            let value = row
                .try_get::<sqlx::types::BigDecimal, _>(i)
                .map_err(get_err)?;
            // The decoded value's scale is a multiple of Postgres's 4-digit groups: the display
            // scale the server prints (`2328.60`, not `2328.6000`) is the binary header's.
            let scale = raw
                .as_bytes()
                .ok()
                .and_then(|b| b.get(6..8))
                .map(|b| i64::from(u16::from_be_bytes([b[0], b[1]])));
            let value = match scale {
                Some(scale) => value.with_scale(scale),
                None => value,
            };
            Cell::Decimal(value.to_plain_string())
        }
        "date" => Cell::Date(
            row.try_get::<chrono::NaiveDate, _>(i)
                .map_err(get_err)?
                .format("%Y-%m-%d")
                .to_string(),
        ),
        "timestamp" => Cell::Timestamp(crate::rows::format_timestamp(
            &row.try_get::<chrono::NaiveDateTime, _>(i)
                .map_err(get_err)?,
            false,
        )),
        "timestamptz" => Cell::Timestamp(crate::rows::format_timestamp(
            &row.try_get::<chrono::DateTime<chrono::Utc>, _>(i)
                .map_err(get_err)?
                .naive_utc(),
            true,
        )),
        "text" | "varchar" | "bpchar" | "char" | "name" => {
            Cell::Text(row.try_get(i).map_err(get_err)?)
        }
        // An enum's binary form is its label.
        _ => match raw.as_bytes().ok().map(std::str::from_utf8) {
            Some(Ok(label)) if is_enum(&raw) => Cell::Text(label.to_string()),
            _ => {
                return Err(WarehouseError::Failed(format!(
                "column `{}` is of type {}, which sqb cannot read; cast it in the metric's measure",
                column.name, column.type_name
            )))
            }
        },
    })
}

fn is_enum(raw: &sqlx::postgres::PgValueRef<'_>) -> bool {
    use sqlx::ValueRef as _;
    matches!(raw.type_info().kind(), sqlx::postgres::PgTypeKind::Enum(_))
}

fn undecodable(column: &Column, err: &sqlx::Error) -> WarehouseError {
    WarehouseError::Failed(format!(
        "could not read column `{}` ({}): {}",
        column.name,
        column.type_name,
        redact(&message(err))
    ))
}
