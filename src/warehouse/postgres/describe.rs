//! Describing a query without running it: the server parses and plans it for a prepared
//! statement and answers with its row description, which names each column's type by OID and,
//! for a column read straight from a relation, that relation's column. One more catalog query
//! spells every type as `format_type` does, with the relation column's length, precision and
//! scale where there is one (sqlx keeps no type modifier of a row description).

use std::time::Duration;

use sqlx::postgres::{PgConnection, PgDatabaseError, PgErrorPosition};
use sqlx::{Column as _, Connection as _, Executor as _, Row as _, Statement as _};

use super::{classify, PgIntrospector};
use crate::catalog::{Described, PhysicalColumn, Rejected};
use crate::warehouse::WarehouseError;

/// `$1`: type OIDs; `$2`: the relation each column is read from (0: none); `$3`: its attribute
/// number. One row per column, in order.
const SPELL_QUERY: &str = concat!(
    r#"
SELECT pg_catalog.format_type(t.oid, a.atttypmod) AS type_text,
       (a.attrelid IS NULL AND t.typmodin <> 0) AS size_unknown,"#,
    super::type_details!(),
    r#"
  FROM unnest($1::oid[], $2::oid[], $3::int2[]) WITH ORDINALITY AS c(typ, rel, att, i)
  JOIN pg_catalog.pg_type t ON t.oid = c.typ
  LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid = c.rel AND a.attnum = c.att AND c.rel <> 0
  LEFT JOIN pg_catalog.pg_type et ON et.oid = t.typelem AND t.typcategory = 'A'
  LEFT JOIN pg_catalog.pg_namespace tn ON tn.oid = coalesce(et.typnamespace, t.typnamespace)
 ORDER BY c.i
"#
);

/// How many prepared statements a describing session holds before it closes them all: below
/// sqlx's statement cache capacity (100), so that the cache never closes them one by one.
const CLOSE_BATCH: usize = 90;

/// A described column before its type is spelled.
struct Raw {
    name: String,
    type_oid: u32,
    relation: u32,
    attribute: i16,
}

impl PgIntrospector {
    /// Describes each query on the session of `database`, each under the statement timeout.
    pub(super) async fn describe_all(
        &mut self,
        database: Option<&str>,
        queries: &[String],
    ) -> Result<Vec<Described>, WarehouseError> {
        let database = database.map_or_else(|| self.default_database.clone(), str::to_string);
        let limit = self.timeouts.statement + Duration::from_secs(5);
        let server = self.server.clone();
        let options = self.base.clone();
        let fail = |err: sqlx::Error| match classify(err, &server, &options, &database) {
            WarehouseError::Connect { reason, .. } => WarehouseError::Failed(reason),
            other => other,
        };
        let seconds = self.timeouts.statement.as_secs();
        let timeout = || WarehouseError::QueryTimeout { seconds };
        let conn = self.session(&database).await?;
        let mut raw = Vec::with_capacity(queries.len());
        for query in queries {
            // A full statement cache closes its oldest statement on each prepare, one round
            // trip each; closing them all at once costs one round trip per batch.
            if conn.cached_statements_size() >= CLOSE_BATCH {
                conn.clear_cached_statements().await.map_err(fail)?;
            }
            let prepared = tokio::time::timeout(limit, prepare(conn, query))
                .await
                .map_err(|_| timeout())?;
            raw.push(match prepared {
                Ok(columns) => Ok(columns),
                Err(sqlx::Error::Database(db)) => Err(rejected(query, db.as_ref())),
                Err(err) => return Err(fail(err)),
            });
        }
        let spelled = tokio::time::timeout(limit, spell(conn, &raw))
            .await
            .map_err(|_| timeout())?
            .map_err(fail)?;
        let mut spelled = spelled.into_iter();
        Ok(raw
            .into_iter()
            .map(|described| {
                described.map(|columns| {
                    columns
                        .into_iter()
                        .zip(spelled.by_ref())
                        .map(|(raw, mut column)| {
                            column.name = raw.name;
                            column
                        })
                        .collect()
                })
            })
            .collect())
    }
}

/// The prepared statement's columns. sqlx keeps the statement in the connection's cache, which
/// closes the oldest on the server beyond its capacity.
async fn prepare(conn: &mut PgConnection, query: &str) -> Result<Vec<Raw>, sqlx::Error> {
    let statement = (&mut *conn).prepare(query).await?;
    let columns = statement
        .columns()
        .iter()
        .map(|c| Raw {
            name: c.name().to_string(),
            type_oid: c.type_info().oid().map_or(0, |o| o.0),
            relation: c.relation_id().map_or(0, |o| o.0),
            attribute: c.relation_attribute_no().unwrap_or(0),
        })
        .collect();
    Ok(columns)
}

/// Every described column's type, spelled by the server, in one query.
async fn spell(
    conn: &mut PgConnection,
    raw: &[Result<Vec<Raw>, Rejected>],
) -> Result<Vec<PhysicalColumn>, sqlx::Error> {
    let columns: Vec<&Raw> = raw.iter().flatten().flatten().collect();
    if columns.is_empty() {
        return Ok(Vec::new());
    }
    let oid = |n: u32| sqlx::postgres::types::Oid(n);
    let types: Vec<_> = columns.iter().map(|c| oid(c.type_oid)).collect();
    let relations: Vec<_> = columns.iter().map(|c| oid(c.relation)).collect();
    let attributes: Vec<i16> = columns.iter().map(|c| c.attribute).collect();
    let rows = sqlx::query(SPELL_QUERY)
        .bind(types)
        .bind(relations)
        .bind(attributes)
        .fetch_all(&mut *conn)
        .await?;
    if rows.len() != columns.len() {
        return Err(sqlx::Error::Protocol(format!(
            "{} of {} described columns have a type in pg_type",
            rows.len(),
            columns.len()
        )));
    }
    rows.iter()
        .map(|row| {
            let user_type = super::user_type(row, 2)?;
            Ok(PhysicalColumn {
                name: String::new(),
                type_text: row.try_get::<String, _>(0)?.into(),
                nullable: None,
                user_type: user_type.map(Box::new),
                size_unknown: row.try_get(1)?,
            })
        })
        .collect()
}

/// The server's refusal, pointing into `query` where it says where.
fn rejected(query: &str, error: &dyn sqlx::error::DatabaseError) -> Rejected {
    let position = error
        .try_downcast_ref::<PgDatabaseError>()
        .and_then(|e| e.position());
    // Postgres counts characters from 1.
    let offset = match position {
        Some(PgErrorPosition::Original(at)) => query
            .char_indices()
            .nth(at.saturating_sub(1))
            .map(|(i, _)| i),
        _ => None,
    };
    Rejected {
        message: crate::redact::redact(error.message()),
        offset,
    }
}
