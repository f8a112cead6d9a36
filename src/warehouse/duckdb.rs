//! DuckDB introspection through the duckdb crate: the file opened read-only, the catalog read
//! with `duckdb_columns()`, blocking calls kept off the async runtime's workers.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use duckdb::{AccessMode, Config, Connection};

use super::{
    Introspector, Namespace, PhysicalColumn, PhysicalRelation, RelationKind, WarehouseError,
};

/// Every column of one schema, with whether its relation is a view. `?1`: catalog, `?2`: schema.
pub const CATALOG_QUERY: &str = "
SELECT c.table_name, c.column_name, c.data_type, c.is_nullable, v.view_name IS NOT NULL AS is_view
  FROM duckdb_columns() c
  LEFT JOIN duckdb_views() v
    ON v.database_name = c.database_name AND v.schema_name = c.schema_name AND v.view_name = c.table_name
 WHERE c.database_name = ? AND c.schema_name = ?
 ORDER BY c.table_oid, c.column_index";

/// Relations of one schema that exist without readable columns (such as views that no longer
/// bind). `?1`: catalog, `?2`: schema.
const RELATIONS_QUERY: &str = "
SELECT table_name, false AS is_view FROM duckdb_tables() WHERE database_name = ? AND schema_name = ?
UNION ALL
SELECT view_name, true FROM duckdb_views() WHERE database_name = ? AND schema_name = ? AND NOT internal";

pub struct DuckDbIntrospector {
    conn: Arc<Mutex<Connection>>,
    catalog: String,
}

impl DuckDbIntrospector {
    /// Opens the database file read-only.
    pub async fn open(path: &Path) -> Result<Self, WarehouseError> {
        let path = path.to_path_buf();
        tokio::task::spawn_blocking(move || open_blocking(&path))
            .await
            .map_err(|e| WarehouseError::Query(e.to_string()))?
    }
}

fn open_blocking(path: &PathBuf) -> Result<DuckDbIntrospector, WarehouseError> {
    let shown = path.display().to_string();
    if !path.is_file() {
        return Err(WarehouseError::DuckDbMissing { path: shown });
    }
    let open_error = |e: duckdb::Error| {
        let reason = e.to_string();
        // Not just "lock": other messages say "block".
        if reason.contains("Could not set lock") || reason.contains("Conflicting lock") {
            WarehouseError::DuckDbLocked {
                path: shown.clone(),
            }
        } else {
            WarehouseError::DuckDbOpen {
                path: shown.clone(),
                reason: first_line(&reason),
            }
        }
    };
    let config = Config::default()
        .access_mode(AccessMode::ReadOnly)
        .map_err(open_error)?;
    let conn = Connection::open_with_flags(path, config).map_err(open_error)?;
    let catalog: String = conn
        .query_row("SELECT current_database()", [], |row| row.get(0))
        .map_err(|e| WarehouseError::Query(first_line(&e.to_string())))?;
    Ok(DuckDbIntrospector {
        conn: Arc::new(Mutex::new(conn)),
        catalog,
    })
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or(text).to_string()
}

impl Introspector for DuckDbIntrospector {
    async fn relations(
        &mut self,
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
        let schema = namespace.schema.clone();
        let conn = Arc::clone(&self.conn);
        tokio::task::spawn_blocking(move || {
            let conn = conn.lock().unwrap_or_else(|e| e.into_inner());
            read_schema(&conn, &catalog, &schema, &wanted)
        })
        .await
        .map_err(|e| WarehouseError::Query(e.to_string()))?
    }

    fn default_database(&self) -> &str {
        &self.catalog
    }
}

fn read_schema(
    conn: &Connection,
    catalog: &str,
    schema: &str,
    wanted: &HashSet<String>,
) -> Result<Vec<PhysicalRelation>, WarehouseError> {
    let query_error = |e: duckdb::Error| WarehouseError::Query(first_line(&e.to_string()));
    let mut relations: Vec<PhysicalRelation> = Vec::new();
    let start = std::time::Instant::now();
    let mut stmt = conn.prepare(CATALOG_QUERY).map_err(query_error)?;
    let mut rows = stmt.query([catalog, schema]).map_err(query_error)?;
    while let Some(row) = rows.next().map_err(query_error)? {
        let table: String = row.get(0).map_err(query_error)?;
        if !wanted.contains(&table.to_lowercase()) {
            continue;
        }
        if relations.last().is_none_or(|r| r.name != table) {
            super::shrink_last(&mut relations);
            let is_view: bool = row.get(4).map_err(query_error)?;
            let kind = if is_view {
                RelationKind::View
            } else {
                RelationKind::Table
            };
            relations.push(PhysicalRelation {
                name: table,
                kind,
                columns: Vec::new(),
                unavailable: None,
            });
        }
        let relation = relations.last_mut().expect("pushed above");
        let nullable: bool = row.get(3).map_err(query_error)?;
        relation.columns.push(PhysicalColumn::new(
            row.get(1).map_err(query_error)?,
            row.get(2).map_err(query_error)?,
            relation.kind.knows_nullability().then_some(nullable),
        ));
    }
    super::shrink_last(&mut relations);
    tracing::debug!(
        elapsed_ms = start.elapsed().as_secs_f64() * 1e3,
        "catalog rows read"
    );
    add_unreadable(conn, catalog, schema, wanted, &mut relations)?;
    crate::logging::timed("views bound", || {
        probe_views(conn, catalog, schema, &mut relations)
    });
    Ok(relations)
}

/// Binds every view, on as many connections as there are cores (binding is CPU work).
fn probe_views(conn: &Connection, catalog: &str, schema: &str, relations: &mut [PhysicalRelation]) {
    let mut views: Vec<&mut PhysicalRelation> = relations
        .iter_mut()
        .filter(|r| r.kind == RelationKind::View && r.unavailable.is_none())
        .collect();
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 4);
    let chunk = views.len().div_ceil(workers).max(64);
    std::thread::scope(|scope| {
        let mut parts = views.chunks_mut(chunk);
        let first = parts.next();
        for part in parts {
            // A second connection to the same database; where it cannot be made, this thread
            // binds its share on the shared one below.
            let Ok(own) = conn.try_clone() else {
                for view in part {
                    view.unavailable = probe_view(conn, catalog, schema, &view.name);
                }
                continue;
            };
            scope.spawn(move || {
                for view in part {
                    view.unavailable = probe_view(&own, catalog, schema, &view.name);
                }
            });
        }
        for view in first.into_iter().flatten() {
            view.unavailable = probe_view(conn, catalog, schema, &view.name);
        }
    });
}

/// DuckDB keeps a view's columns from when it was created, even after a relation it reads is
/// dropped. Binding the view tells whether those columns are still real; the reason if not.
fn probe_view(conn: &Connection, catalog: &str, schema: &str, view: &str) -> Option<String> {
    // Identifiers cannot be bind parameters here; they are quoted (quotes doubled) instead.
    let name = [catalog, schema, view]
        .map(|part| format!("\"{}\"", part.replace('"', "\"\"")))
        .join(".");
    match conn.prepare(&format!("SELECT * FROM {name} LIMIT 0")) {
        Ok(_) => None,
        Err(e) => Some(first_line(&e.to_string())),
    }
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
