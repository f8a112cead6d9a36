//! DuckDB introspection through the duckdb crate: the file opened read-only, the catalog read
//! with `duckdb_columns()`. Its calls block: they run directly on the warehouse session's own
//! thread, which exists for nothing else.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::Duration;

use duckdb::core::LogicalTypeId;
use duckdb::{AccessMode, Config, Connection};

use super::waiting::Waiting;
use super::{listings, Backend, Reply, SchemaListing, Timeouts, WarehouseError};
use crate::catalog::{
    Described, Namespace, PhysicalColumn, PhysicalRelation, Rejected, RelationKind, RowBuffer,
};
use crate::rows::{date_from_days, timestamp_from_micros, Cell, Column, Rows, Statement};

/// Every column of one schema. `?1`: catalog, `?2`: schema. Which relations are views is
/// known from [`VIEWS_QUERY`], read first (joining `duckdb_views()` here cost a tenth of the
/// query at 10,000 relations).
pub const CATALOG_QUERY: &str = "
SELECT c.table_name, c.column_name, c.data_type, c.is_nullable
  FROM duckdb_columns() c
 WHERE c.database_name = ? AND c.schema_name = ?
 ORDER BY c.table_oid, c.column_index";

/// The views of one schema, and whether DuckDB made them. `?1`: catalog, `?2`: schema.
const VIEWS_QUERY: &str =
    "SELECT view_name, internal FROM duckdb_views() WHERE database_name = ? AND schema_name = ?";

/// Relations of one schema that exist without readable columns (such as views that no longer
/// bind). `?1`: catalog, `?2`: schema.
const RELATIONS_QUERY: &str = "
SELECT table_name, false AS is_view FROM duckdb_tables() WHERE database_name = ? AND schema_name = ?
UNION ALL
SELECT view_name, true FROM duckdb_views() WHERE database_name = ? AND schema_name = ? AND NOT internal";

/// Every user schema of the file's catalog with its tables and views (a schema without any gives
/// one row with a NULL relation). `$1`: catalog.
const SURVEY_QUERY: &str = "
WITH relations AS (
    SELECT schema_name, table_name AS relation FROM duckdb_tables() WHERE database_name = $1
    UNION ALL
    SELECT schema_name, view_name FROM duckdb_views() WHERE database_name = $1 AND NOT internal
)
SELECT s.schema_name, r.relation
  FROM duckdb_schemas() s
  LEFT JOIN relations r ON r.schema_name = s.schema_name
 WHERE s.database_name = $1
   AND s.schema_name NOT IN ('information_schema', 'pg_catalog')
 ORDER BY 1, 2";

pub struct DuckDbIntrospector {
    conn: Connection,
    catalog: String,
}

impl DuckDbIntrospector {
    /// Opens the database file read-only (blocking). A file another process holds locked (a
    /// writer) is waited for, up to `wait`, as `waiting` says.
    pub fn open(path: &Path, wait: Duration, waiting: Waiting) -> Result<Self, WarehouseError> {
        let conn = open_file_waiting(path, wait, AccessMode::ReadOnly, waiting)?;
        let catalog: String = conn
            .query_row("SELECT current_database()", [], |row| row.get(0))
            .map_err(|e| WarehouseError::Query(first_line(&e.to_string())))?;
        Ok(DuckDbIntrospector { conn, catalog })
    }
}

/// Opens the database file in `mode`, waiting up to `wait` while another process holds it
/// locked. Only `sqb promote`'s writer opens it other than read-only.
pub(super) fn open_file(
    path: &Path,
    wait: Duration,
    mode: AccessMode,
) -> Result<Connection, WarehouseError> {
    open_file_waiting(path, wait, mode, Waiting::default())
}

/// [`open_file`], waiting for a lock as `waiting` says.
fn open_file_waiting(
    path: &Path,
    wait: Duration,
    mode: AccessMode,
    waiting: Waiting,
) -> Result<Connection, WarehouseError> {
    let shown = std::fs::canonicalize(path)
        .unwrap_or_else(|_| path.to_path_buf())
        .display()
        .to_string();
    if !path.is_file() {
        return Err(WarehouseError::DuckDbMissing { path: shown });
    }
    let deadline = std::time::Instant::now() + wait;
    let mut said = false;
    loop {
        match open_once(path, &shown, &mode) {
            Err(WarehouseError::DuckDbLocked { .. })
                if std::time::Instant::now() < deadline && !waiting.stopped() =>
            {
                if !said {
                    waiting.say(format!(
                        "waiting up to {}s for {shown}, which another process holds locked",
                        wait.as_secs().max(1)
                    ));
                    said = true;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            other => return other,
        }
    }
}

fn open_once(path: &Path, shown: &str, mode: &AccessMode) -> Result<Connection, WarehouseError> {
    let open_error = |e: duckdb::Error| {
        let reason = e.to_string();
        // Not just "lock": other messages say "block".
        if reason.contains("Could not set lock") || reason.contains("Conflicting lock") {
            WarehouseError::DuckDbLocked {
                path: shown.to_string(),
            }
        } else {
            WarehouseError::DuckDbOpen {
                path: shown.to_string(),
                reason: first_line(&reason),
            }
        }
    };
    let mode = match mode {
        AccessMode::ReadOnly => AccessMode::ReadOnly,
        AccessMode::ReadWrite => AccessMode::ReadWrite,
        AccessMode::Automatic => AccessMode::Automatic,
    };
    let config = Config::default().access_mode(mode).map_err(open_error)?;
    Connection::open_with_flags(path, config).map_err(open_error)
}

pub(super) fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or(text).to_string()
}

impl Backend for DuckDbIntrospector {
    /// Blocks the calling thread: the session calls it on its own thread, where nothing else
    /// waits on the runtime.
    fn relations<'a>(
        &'a mut self,
        namespace: &'a Namespace,
        names: &'a [String],
    ) -> Reply<'a, Vec<PhysicalRelation>> {
        Box::pin(std::future::ready(self.catalog_of(namespace, names)))
    }

    /// Blocks the calling thread, as `relations` does. The file is the one catalog a DuckDB
    /// connection reads: a statement for another database is refused.
    fn run<'a>(
        &'a mut self,
        database: Option<&'a str>,
        statement: &'a Statement,
        timeouts: Timeouts,
    ) -> Reply<'a, Rows> {
        let result = match database.filter(|db| *db != self.catalog) {
            Some(db) => Err(WarehouseError::DuckDbCatalog {
                wanted: db.to_string(),
                actual: self.catalog.clone(),
            }),
            None => self.execute(statement, timeouts.statement),
        };
        Box::pin(std::future::ready(result))
    }

    /// Blocks the calling thread, as `relations` does.
    fn run_all<'a>(
        &'a mut self,
        database: Option<&'a str>,
        statements: &'a [Statement],
        timeouts: Timeouts,
        workers: usize,
    ) -> Reply<'a, Vec<Result<Rows, WarehouseError>>> {
        let result = match database.filter(|db| *db != self.catalog) {
            Some(db) => Err(WarehouseError::DuckDbCatalog {
                wanted: db.to_string(),
                actual: self.catalog.clone(),
            }),
            None => self.on_connections(statements, workers, |conn, part| {
                Ok(part
                    .iter()
                    .map(|s| execute_on(conn, s, timeouts.statement))
                    .collect())
            }),
        };
        Box::pin(std::future::ready(result))
    }

    /// Blocks the calling thread, as `relations` does.
    fn describe<'a>(
        &'a mut self,
        database: Option<&'a str>,
        queries: &'a [String],
        timeouts: Timeouts,
        workers: usize,
    ) -> Reply<'a, Vec<Described>> {
        Box::pin(std::future::ready(self.describe_all(
            database,
            queries,
            timeouts.statement,
            workers,
        )))
    }

    /// Blocks the calling thread, as `relations` does.
    fn survey(&mut self) -> Reply<'_, Vec<SchemaListing>> {
        Box::pin(std::future::ready(self.list_schemas()))
    }

    fn default_database(&self) -> &str {
        &self.catalog
    }

    /// A connection of its own to the database already open: no file read again, one catalog
    /// and one buffer cache shared.
    fn fork(&self) -> Option<Result<Box<dyn Backend + Send>, WarehouseError>> {
        Some(
            self.conn
                .try_clone()
                .map(|conn| {
                    Box::new(DuckDbIntrospector {
                        conn,
                        catalog: self.catalog.clone(),
                    }) as Box<dyn Backend + Send>
                })
                .map_err(|e| WarehouseError::Query(first_line(&e.to_string()))),
        )
    }

    /// A read-only database is not torn down here: freeing its catalog takes a while and
    /// writes nothing. It is parked, left to the process's exit unless the command goes on to
    /// work that needs the memory ([`free_parked`]).
    fn close(self: Box<Self>) {
        if let Ok(mut parked) = PARKED.lock() {
            parked.push(*self);
        }
    }
}

/// The read-only DuckDB databases whose sessions ended. A static is never dropped: what stays
/// here is left to the process's exit.
static PARKED: std::sync::Mutex<Vec<DuckDbIntrospector>> = std::sync::Mutex::new(Vec::new());

/// Tears the DuckDB databases of ended sessions down on a thread of their own
/// ([`crate::memory::free_in_background`]).
pub fn free_parked() {
    if let Ok(mut parked) = PARKED.lock() {
        let databases = std::mem::take(&mut *parked);
        if !databases.is_empty() {
            crate::memory::free_in_background(databases);
        }
    }
}

impl DuckDbIntrospector {
    fn list_schemas(&self) -> Result<Vec<SchemaListing>, WarehouseError> {
        let query_error = |e: duckdb::Error| WarehouseError::Query(first_line(&e.to_string()));
        let mut stmt = self.conn.prepare(SURVEY_QUERY).map_err(query_error)?;
        let rows = stmt
            .query_map([&self.catalog], |row| {
                Ok((row.get::<_, String>(0)?, row.get::<_, Option<String>>(1)?))
            })
            .map_err(query_error)?;
        let rows: Vec<(String, Option<String>)> =
            rows.collect::<Result<_, _>>().map_err(query_error)?;
        Ok(listings(rows))
    }

    /// The relations of `namespace` among `names` (up to case), from the one file.
    fn catalog_of(
        &self,
        namespace: &Namespace,
        names: &[String],
    ) -> Result<Vec<PhysicalRelation>, WarehouseError> {
        let catalog = match &namespace.database {
            Some(db) if db != &self.catalog => {
                return Err(WarehouseError::DuckDbCatalog {
                    wanted: db.clone(),
                    actual: self.catalog.clone(),
                })
            }
            _ => self.catalog.clone(),
        };
        let wanted: HashSet<String> = names.iter().map(|n| n.to_lowercase()).collect();
        read_schema(&self.conn, &catalog, &namespace.schema, &wanted)
    }
}

fn read_schema(
    conn: &Connection,
    catalog: &str,
    schema: &str,
    wanted: &HashSet<String>,
) -> Result<Vec<PhysicalRelation>, WarehouseError> {
    let query_error = |e: duckdb::Error| WarehouseError::Query(first_line(&e.to_string()));
    let (views, all_views) = view_names(conn, catalog, schema, wanted).map_err(query_error)?;
    // Binding a view refreshes the columns DuckDB keeps for it (until then, those of when it was
    // created, even after a table it reads changed a type): every view is bound first, on
    // connections of their own, so that the catalog read after it has the columns a query of
    // the view gets, whatever the timing.
    let probed: HashMap<&str, String> = std::thread::scope(|scope| {
        let (probing, left) = spawn_probes(scope, conn, catalog, schema, &views);
        let mut probed: HashMap<&str, String> =
            probe_all(conn, catalog, schema, left).into_iter().collect();
        probed.extend(
            probing
                .into_iter()
                .flat_map(|h| h.join().unwrap_or_default()),
        );
        probed
    });
    let relations = tracing::debug_span!("catalog rows read")
        .in_scope(|| read_columns(conn, catalog, schema, wanted, &all_views));
    let mut relations = relations.map_err(query_error)?;
    for relation in relations
        .iter_mut()
        .filter(|r| r.kind == RelationKind::View)
    {
        if let Some(reason) = probed.get(relation.name.as_str()) {
            relation.unavailable = Some(reason.clone());
        }
    }
    tracing::debug_span!("unreadable relations listed")
        .in_scope(|| add_unreadable(conn, catalog, schema, wanted, &mut relations))?;
    Ok(relations)
}

/// The columns of the wanted relations, in catalog order, those of `views` as views. The rows
/// are held compactly until the statement, and with it DuckDB's sort and result, is dropped.
fn read_columns(
    conn: &Connection,
    catalog: &str,
    schema: &str,
    wanted: &HashSet<String>,
    views: &HashSet<String>,
) -> Result<Vec<PhysicalRelation>, duckdb::Error> {
    let mut buffer = RowBuffer::default();
    let mut stmt = conn.prepare(CATALOG_QUERY)?;
    let mut rows = stmt.query([catalog, schema])?;
    let too_many = |_| {
        duckdb::Error::FromSqlConversionFailure(
            0,
            duckdb::types::Type::Text,
            "the catalog's names and types take more than 4 GiB".into(),
        )
    };
    // The relation of the rows being read, and its kind when it is wanted.
    let (mut current, mut taken) = (String::new(), None);
    while let Some(row) = rows.next()? {
        let table = text(row, 0)?;
        if table != current {
            current.clear();
            current.push_str(table);
            taken = None;
            if wanted.contains(&table.to_lowercase()) {
                let kind = if views.contains(table) {
                    RelationKind::View
                } else {
                    RelationKind::Table
                };
                buffer.start_relation(table, kind).map_err(too_many)?;
                taken = Some(kind);
            }
        }
        if let Some(kind) = taken {
            let nullable: bool = row.get(3)?;
            buffer
                .push_column(
                    text(row, 1)?,
                    text(row, 2)?,
                    kind.knows_nullability().then_some(nullable),
                )
                .map_err(too_many)?;
        }
    }
    drop(rows);
    drop(stmt);
    Ok(buffer.into_relations())
}

/// Column `index` of a catalog row, as text.
fn text<'r>(row: &'r duckdb::Row<'_>, index: usize) -> Result<&'r str, duckdb::Error> {
    row.get_ref(index)?.as_str().map_err(|e| {
        duckdb::Error::FromSqlConversionFailure(index, duckdb::types::Type::Text, Box::new(e))
    })
}

/// The wanted views of the schema that are bound (those users made), and every wanted view.
fn view_names(
    conn: &Connection,
    catalog: &str,
    schema: &str,
    wanted: &HashSet<String>,
) -> Result<(Vec<String>, HashSet<String>), duckdb::Error> {
    let mut stmt = conn.prepare(VIEWS_QUERY)?;
    let mut rows = stmt.query([catalog, schema])?;
    let (mut bound, mut all) = (Vec::new(), HashSet::new());
    while let Some(row) = rows.next()? {
        let name: String = row.get(0)?;
        if wanted.contains(&name.to_lowercase()) {
            let internal: bool = row.get(1)?;
            if !internal {
                bound.push(name.clone());
            }
            all.insert(name);
        }
    }
    Ok((bound, all))
}

/// A probing thread's answer: the views that do not bind, with the reason.
type Probed<'e> = Vec<(&'e str, String)>;

/// Starts binding `views` on connections of their own (one per core, at most four). Returns
/// the threads, and the views left for the caller's connection where no second connection
/// could be made.
fn spawn_probes<'s, 'e>(
    scope: &'s std::thread::Scope<'s, 'e>,
    conn: &Connection,
    catalog: &'e str,
    schema: &'e str,
    views: &'e [String],
) -> (
    Vec<std::thread::ScopedJoinHandle<'s, Probed<'e>>>,
    Vec<&'e String>,
) {
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 4);
    let chunk = views.len().div_ceil(workers).max(64);
    let mut handles = Vec::new();
    let mut left = Vec::new();
    for part in views.chunks(chunk) {
        match conn.try_clone() {
            Ok(own) => handles.push(scope.spawn(move || {
                tracing::debug_span!("views bound", views = part.len())
                    .in_scope(|| probe_all(&own, catalog, schema, part))
            })),
            Err(_) => left.extend(part),
        }
    }
    (handles, left)
}

/// Views bound by one statement: each statement has a cost of its own (a third of binding one
/// view), so views are bound in batches, and one by one only in a batch that does not bind.
const VIEWS_PER_STATEMENT: usize = 32;

fn probe_all<'e>(
    conn: &Connection,
    catalog: &str,
    schema: &str,
    views: impl IntoIterator<Item = &'e String>,
) -> Probed<'e> {
    let views: Vec<&'e String> = views.into_iter().collect();
    let mut probed = Vec::new();
    for batch in views.chunks(VIEWS_PER_STATEMENT) {
        if batch.len() > 1 && bind(conn, &union_of(catalog, schema, batch)).is_none() {
            continue;
        }
        probed.extend(batch.iter().filter_map(|view| {
            bind(conn, &union_of(catalog, schema, &[view])).map(|reason| (view.as_str(), reason))
        }));
    }
    probed
}

/// DuckDB keeps a view's columns from when it was created, even after a relation it reads is
/// dropped. Binding the view tells whether those columns are still real; the reason if not.
/// The query is bound as `DESCRIBE` binds it: only bound, not planned (preparing the query
/// itself plans it too, about as long again), and never run.
fn bind(conn: &Connection, sql: &str) -> Option<String> {
    match conn.prepare(&format!("DESCRIBE {sql}")) {
        Ok(_) => None,
        Err(e) => Some(first_line(&e.to_string())),
    }
}

/// One statement that binds every view of `views`: `SELECT 1 FROM v1 UNION ALL SELECT 1 FROM
/// v2 …`. Binding `FROM v` binds the view's whole query, its select list included.
fn union_of(catalog: &str, schema: &str, views: &[&String]) -> String {
    views
        .iter()
        .map(|view| {
            // Identifiers cannot be bind parameters here; they are quoted (quotes doubled).
            let name = [catalog, schema, view.as_str()]
                .map(crate::ident::quoted)
                .join(".");
            format!("SELECT 1 FROM {name}")
        })
        .collect::<Vec<_>>()
        .join(" UNION ALL ")
}

/// Adds the wanted relations that exist but had no columns in `duckdb_columns()`.
fn add_unreadable(
    conn: &Connection,
    catalog: &str,
    schema: &str,
    wanted: &HashSet<String>,
    relations: &mut Vec<PhysicalRelation>,
) -> Result<(), WarehouseError> {
    let query_error = |e: duckdb::Error| WarehouseError::Query(first_line(&e.to_string()));
    let seen: HashSet<String> = relations.iter().map(|r| r.name.clone()).collect();
    // DuckDB's names are unique up to case: when every wanted name has its columns, no other
    // relation can answer to one (listing every relation is a tenth of a second at 10,000).
    let folded: HashSet<String> = seen.iter().map(|n| n.to_lowercase()).collect();
    if wanted.iter().all(|w| folded.contains(w)) {
        return Ok(());
    }
    let mut stmt = conn.prepare(RELATIONS_QUERY).map_err(query_error)?;
    let mut rows = stmt
        .query([catalog, schema, catalog, schema])
        .map_err(query_error)?;
    while let Some(row) = rows.next().map_err(query_error)? {
        let name: String = row.get(0).map_err(query_error)?;
        if seen.contains(&name) || !wanted.contains(&name.to_lowercase()) {
            continue;
        }
        let is_view: bool = row.get(1).map_err(query_error)?;
        relations.push(PhysicalRelation {
            name,
            kind: if is_view { RelationKind::View } else { RelationKind::Table },
            columns: Vec::new(),
            unavailable: is_view.then(|| "the view's columns could not be read; it may reference a relation that no longer exists".to_string()),
        });
    }
    Ok(())
}

impl DuckDbIntrospector {
    /// Runs one statement on the read-only file, its parameters bound as text, interrupted
    /// when it outlasts `limit` (DuckDB has no statement timeout of its own).
    fn execute(&self, statement: &Statement, limit: Duration) -> Result<Rows, WarehouseError> {
        execute_on(&self.conn, statement, limit)
    }

    /// Each query's columns as `DESCRIBE` binds them, without running the query, on up to
    /// `workers` connections to the file at once (binding takes milliseconds a query). DuckDB
    /// does not know whether a query's column can be NULL.
    fn describe_all(
        &self,
        database: Option<&str>,
        queries: &[String],
        limit: Duration,
        workers: usize,
    ) -> Result<Vec<Described>, WarehouseError> {
        if let Some(db) = database.filter(|db| *db != self.catalog) {
            return Err(WarehouseError::DuckDbCatalog {
                wanted: db.to_string(),
                actual: self.catalog.clone(),
            });
        }
        self.on_connections(queries, workers, |conn, part| {
            describe_part(conn, part, limit)
        })
    }

    /// `work` on contiguous parts of `items`, each on a connection to the file of its own and
    /// a thread of its own, on up to `workers` at once; the answers in the items' order.
    fn on_connections<T: Sync, R: Send>(
        &self,
        items: &[T],
        workers: usize,
        work: impl Fn(&Connection, &[T]) -> Result<Vec<R>, WarehouseError> + Sync,
    ) -> Result<Vec<R>, WarehouseError> {
        // Fewer than 8 items are not worth another connection (TPC-H's 22 queries take three).
        let workers = workers.clamp(1, items.len().div_ceil(8).max(1));
        if workers == 1 {
            return work(&self.conn, items);
        }
        let size = items.len().div_ceil(workers);
        let connections = items
            .chunks(size)
            .map(|_| self.conn.try_clone())
            .collect::<duckdb::Result<Vec<Connection>>>()
            .map_err(|e| WarehouseError::Query(first_line(&e.to_string())))?;
        let work = &work;
        std::thread::scope(|scope| {
            let parts: Vec<_> = items
                .chunks(size)
                .zip(connections)
                .map(|(part, conn)| scope.spawn(move || work(&conn, part)))
                .collect();
            let mut out = Vec::with_capacity(items.len());
            for part in parts {
                let answers = part.join().map_err(|_| {
                    WarehouseError::Runtime("a DuckDB connection's thread stopped".into())
                })?;
                out.extend(answers?);
            }
            Ok(out)
        })
    }
}

/// Runs one statement on `conn`, its parameters bound as text, interrupted when it outlasts
/// `limit` (DuckDB has no statement timeout of its own).
fn execute_on(
    conn: &Connection,
    statement: &Statement,
    limit: Duration,
) -> Result<Rows, WarehouseError> {
    match watched(conn, limit, || run_statement(conn, statement)) {
        Err(Watched::TimedOut) => Err(WarehouseError::QueryTimeout {
            seconds: limit.as_secs(),
        }),
        Err(Watched::Failed(e)) => Err(WarehouseError::Failed(first_line(&e.to_string()))),
        Ok(rows) => Ok(rows),
    }
}

/// Describes `queries` one after another on `conn`.
fn describe_part(
    conn: &Connection,
    queries: &[String],
    limit: Duration,
) -> Result<Vec<Described>, WarehouseError> {
    let mut out = Vec::with_capacity(queries.len());
    for query in queries {
        out.push(match watched(conn, limit, || describe_one(conn, query)) {
            Ok(columns) => Ok(columns),
            Err(Watched::TimedOut) => {
                return Err(WarehouseError::QueryTimeout {
                    seconds: limit.as_secs(),
                })
            }
            Err(Watched::Failed(e)) => Err(rejected(query, &e.to_string())),
        });
    }
    Ok(out)
}

/// Runs `work` on `conn`, interrupting it past `limit`.
fn watched<T>(
    conn: &Connection,
    limit: Duration,
    work: impl FnOnce() -> duckdb::Result<T>,
) -> Result<T, Watched> {
    let handle = conn.interrupt_handle();
    let (done, finished) = std::sync::mpsc::channel::<()>();
    let timed_out = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = timed_out.clone();
    let watchdog = std::thread::spawn(move || {
        if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = finished.recv_timeout(limit) {
            flag.store(true, std::sync::atomic::Ordering::SeqCst);
            handle.interrupt();
        }
    });
    let result = work();
    let _ = done.send(());
    let _ = watchdog.join();
    match result {
        Err(_) if timed_out.load(std::sync::atomic::Ordering::SeqCst) => Err(Watched::TimedOut),
        Err(e) => Err(Watched::Failed(e)),
        Ok(value) => Ok(value),
    }
}

/// How watched work failed.
enum Watched {
    TimedOut,
    Failed(duckdb::Error),
}

/// One query's columns: `DESCRIBE` binds the query and answers with its names and types
/// spelled as the catalog spells them.
fn describe_one(conn: &Connection, query: &str) -> duckdb::Result<Vec<PhysicalColumn>> {
    let mut stmt = conn.prepare(&format!("DESCRIBE {query}"))?;
    let mut rows = stmt.query([])?;
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        out.push(PhysicalColumn::new(
            row.get(0)?,
            row.get::<_, String>(1)?,
            None,
        ));
    }
    Ok(out)
}

/// DuckDB's refusal: its message without the echoed query, pointing at the start of the line
/// its `LINE n:` names (the query's lines are the statement's: `DESCRIBE ` is on the first).
fn rejected(query: &str, message: &str) -> Rejected {
    let (text, echo) = match message.find("\n\nLINE ") {
        Some(at) => (&message[..at], &message[at + 2..]),
        None => (message, ""),
    };
    let line = echo
        .strip_prefix("LINE ")
        .and_then(|rest| rest.split(':').next())
        .and_then(|n| n.trim().parse::<usize>().ok());
    let offset = line.and_then(|n| match n {
        0 => None,
        1 => Some(0),
        n => query.match_indices('\n').nth(n - 2).map(|(i, _)| i + 1),
    });
    Rejected {
        message: text.trim().to_string(),
        offset,
    }
}

fn run_statement(conn: &Connection, statement: &Statement) -> duckdb::Result<Rows> {
    // Cached on the connection: a pooled session that runs the same query again (a server's
    // requests differ in their bound values) skips parsing, binding and planning.
    let mut stmt = conn.prepare_cached(&statement.sql)?;
    let mut rows = stmt.query(duckdb::params_from_iter(statement.params.iter()))?;
    let mut out = Vec::new();
    let mut width = None;
    while let Some(row) = rows.next()? {
        let n = *width.get_or_insert_with(|| row.as_ref().column_count());
        let mut cells = Vec::with_capacity(n);
        for i in 0..n {
            cells.push(cell(row.get_ref(i)?)?);
        }
        out.push(cells);
    }
    drop(rows);
    let columns: Vec<Column> = (0..stmt.column_count())
        .map(|i| Column {
            name: stmt.column_name(i).map_or(String::new(), |n| n.to_string()),
            type_name: match stmt.column_logical_type(i).id() {
                // Arrow carries a HUGEINT as DECIMAL(38,0); it is an integer (`sum` of
                // integers, a count), as the engine and MetricFlow say.
                LogicalTypeId::Hugeint | LogicalTypeId::UHugeint => "integer".into(),
                _ => type_name(&stmt.column_type(i)),
            },
        })
        .collect();
    // An instant reads as its UTC wall time: said with the `Z` its column's type calls for.
    for (i, column) in columns.iter().enumerate() {
        if column.type_name == "timestamptz" {
            for row in &mut out {
                if let Some(Cell::Timestamp(text)) = row.get_mut(i) {
                    text.push('Z');
                }
            }
        }
    }
    Ok(Rows { columns, rows: out })
}

fn type_name(ty: &duckdb::arrow::datatypes::DataType) -> String {
    use duckdb::arrow::datatypes::DataType as T;
    match ty {
        T::Boolean => "boolean".into(),
        T::Int8 | T::Int16 | T::Int32 | T::Int64 | T::UInt8 | T::UInt16 | T::UInt32 | T::UInt64 => {
            "integer".into()
        }
        T::Decimal128(p, s) | T::Decimal256(p, s) => format!("decimal({p},{s})"),
        T::Float16 | T::Float32 | T::Float64 => "double".into(),
        T::Date32 | T::Date64 => "date".into(),
        T::Timestamp(_, Some(_)) => "timestamptz".into(),
        T::Timestamp(_, None) => "timestamp".into(),
        T::Utf8 | T::LargeUtf8 | T::Utf8View | T::Dictionary(..) => "varchar".into(),
        other => other.to_string().to_lowercase(),
    }
}

fn cell(value: duckdb::types::ValueRef<'_>) -> duckdb::Result<Cell> {
    use duckdb::types::ValueRef as V;
    let unreadable = |what: &str| {
        duckdb::Error::FromSqlConversionFailure(
            0,
            duckdb::types::Type::Any,
            format!(
                "a value of type {what}, which sqb cannot read; cast it in the metric's measure"
            )
            .into(),
        )
    };
    Ok(match value {
        V::Null => Cell::Null,
        V::Boolean(b) => Cell::Bool(b),
        V::TinyInt(i) => Cell::Int(i.into()),
        V::SmallInt(i) => Cell::Int(i.into()),
        V::Int(i) => Cell::Int(i.into()),
        V::BigInt(i) => Cell::Int(i.into()),
        V::HugeInt(i) => Cell::Int(i),
        V::UTinyInt(i) => Cell::Int(i.into()),
        V::USmallInt(i) => Cell::Int(i.into()),
        V::UInt(i) => Cell::Int(i.into()),
        V::UBigInt(i) => Cell::Int(i.into()),
        V::UHugeInt(i) => i128::try_from(i)
            .map(Cell::Int)
            .unwrap_or(Cell::Decimal(i.to_string())),
        V::Float(f) => Cell::Float(f.into()),
        V::Double(f) => Cell::Float(f),
        V::Decimal(d) => Cell::Decimal(d.to_string()),
        V::Date32(days) => {
            Cell::Date(date_from_days(days.into()).ok_or_else(|| unreadable("DATE"))?)
        }
        V::Timestamp(unit, v) => Cell::Timestamp(
            timestamp_from_micros(unit.to_micros(v), false)
                .ok_or_else(|| unreadable("TIMESTAMP"))?,
        ),
        V::Text(_) | V::Enum(..) => {
            Cell::Text(value.as_str().map_err(|_| unreadable("text"))?.to_string())
        }
        other => return Err(unreadable(&format!("{:?}", other.data_type()))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Views are bound many to a statement: a batch holding views that no longer bind is bound
    /// again view by view, so exactly those views are reported, each with its own reason, at
    /// either end of a batch, in a batch of one, and under a name that needs quoting.
    #[test]
    fn views_that_no_longer_bind_are_found_in_any_batch() {
        let conn = Connection::open_in_memory().unwrap();
        let mut sql = String::from("CREATE SCHEMA s;");
        let count = 2 * VIEWS_PER_STATEMENT + 1;
        for i in 0..count {
            sql += &format!("CREATE TABLE s.t{i} (id INTEGER, v VARCHAR);");
            sql += &format!("CREATE VIEW s.v{i} AS SELECT id, v FROM s.t{i};");
        }
        sql += "CREATE VIEW s.\"odd\"\"name\" AS SELECT id FROM s.t1;";
        let broken = [0, VIEWS_PER_STATEMENT - 1, VIEWS_PER_STATEMENT, count - 1];
        for i in broken {
            sql += &format!("DROP TABLE s.t{i};");
        }
        // A view whose column is gone binds no more either.
        sql += "ALTER TABLE s.t5 DROP COLUMN v;";
        conn.execute_batch(&sql).unwrap();
        let wanted: HashSet<String> = (0..count)
            .map(|i| format!("v{i}"))
            .chain(["odd\"name".to_string()])
            .collect();

        let relations = read_schema(&conn, "memory", "s", &wanted).unwrap();

        let mut unavailable: Vec<(&str, &str)> = relations
            .iter()
            .filter_map(|r| Some((r.name.as_str(), r.unavailable.as_deref()?)))
            .collect();
        unavailable.sort();
        let mut expected: Vec<String> = broken.iter().map(|i| format!("v{i}")).collect();
        expected.push("v5".to_string());
        expected.sort();
        let names: Vec<&str> = unavailable.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, expected);
        for (name, reason) in &unavailable {
            let table = format!("t{}", &name[1..]);
            assert!(reason.contains(&table) || *name == "v5", "{name}: {reason}");
        }
        assert_eq!(relations.len(), wanted.len());
    }

    /// The columns of `name` as (name, type) pairs.
    fn columns_of<'r>(relations: &'r [PhysicalRelation], name: &str) -> Vec<(&'r str, &'r str)> {
        let relation = relations.iter().find(|r| r.name == name).unwrap();
        relation
            .columns
            .iter()
            .map(|c| (c.name.as_str(), c.type_text.as_str()))
            .collect()
    }

    /// Views whose tables changed after they were bound have the columns a query of them gets,
    /// in one batch of views or several; a view that repeats a name has the catalog's names for
    /// it, and an unchanged view its own.
    #[test]
    fn views_over_changed_tables_have_their_new_columns() {
        for changed in [1, VIEWS_PER_STATEMENT + 1] {
            let conn = Connection::open_in_memory().unwrap();
            let mut sql = String::from("CREATE SCHEMA s; CREATE TABLE s.kept (id INTEGER);");
            sql += "CREATE VIEW s.same AS SELECT id FROM s.kept;";
            sql += "CREATE VIEW s.twice AS SELECT id AS a, id AS a FROM s.kept;";
            for i in 0..changed {
                sql += &format!("CREATE TABLE s.t{i} (a INTEGER, b VARCHAR);");
                sql += &format!("CREATE VIEW s.v{i} AS SELECT * FROM s.t{i};");
                sql += &format!("ALTER TABLE s.t{i} ALTER a TYPE BIGINT;");
                sql += &format!("ALTER TABLE s.t{i} ADD COLUMN z DATE;");
            }
            conn.execute_batch(&sql).unwrap();
            let wanted: HashSet<String> = (0..changed)
                .map(|i| format!("v{i}"))
                .chain(["same".to_string(), "twice".to_string()])
                .collect();

            let relations = read_schema(&conn, "memory", "s", &wanted).unwrap();

            for i in 0..changed {
                let expected = [("a", "BIGINT"), ("b", "VARCHAR"), ("z", "DATE")];
                assert_eq!(
                    columns_of(&relations, &format!("v{i}")),
                    expected,
                    "{changed}"
                );
            }
            assert_eq!(columns_of(&relations, "same"), [("id", "INTEGER")]);
            assert_eq!(
                columns_of(&relations, "twice"),
                [("a", "INTEGER"), ("a_1", "INTEGER")]
            );
            assert!(relations.iter().all(|r| r.unavailable.is_none()));
            assert!(relations
                .iter()
                .all(|r| r.columns.iter().all(|c| c.nullable.is_none())));
        }
    }
}
