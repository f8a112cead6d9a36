//! Reading a namespace's relations from pg_catalog in three small queries, in one snapshot: the
//! wanted relations, then their columns, then each distinct type of those columns.
//!
//! The relations are matched by their exact names, which the server compares as it reads
//! pg_class; only names that match no relation exactly are looked for again up to case (a
//! relation that differs only by case is named in the report, never compared), so that a
//! project whose relations all exist pays for no `lower` of every name in the schema.
//!
//! The columns query is a plain scan of pg_attribute for the relations' OIDs: no join, no sort,
//! and six small values a column (the server's cost is mostly per value sent). It asks for no
//! order, so the server need not sort 250,000 rows (which cost it more than the rest of the
//! read): each column comes with its relation's OID and its number, and the reader puts it in
//! its place. A scan usually gives a relation's columns in order; a column whose catalog row
//! was rewritten (renamed, retyped, given a default) comes later, and only that relation's
//! columns are sorted. A column's type comes as its OID and modifier; each distinct pair is
//! spelled by `format_type` once, with the type's enum members, domain base and schema, which
//! were joined to every column before.

use foldhash::HashMap;
use futures_util::TryStreamExt;
use sqlx::postgres::types::Oid;
use sqlx::postgres::{PgConnection, PgRow, Postgres};
use sqlx::{Column as _, Decode, Executor as _, Row, Type, TypeInfo as _};

use super::relation_kind;
use crate::catalog::{PhysicalColumn, PhysicalRelation, TypeText, UserType};

/// The relations of one schema whose names `$2` matches as `$names` says, in the order of
/// their OIDs. `$1`: schema.
macro_rules! relations_query {
    ($names:literal) => {
        concat!(
            r#"
SELECT c.oid AS relid, c.relname::text AS relname, c.relkind::text AS relkind,
       c.relnatts AS natts
  FROM pg_catalog.pg_class c
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = $1
   AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
   AND NOT c.relispartition
   AND "#,
            $names,
            r#"
 ORDER BY c.oid
"#
        )
    };
}

/// The relations named exactly as one of `$2`. Since PostgreSQL 14, `= ANY` of a long array is
/// a hash lookup.
pub const RELATIONS_QUERY: &str = relations_query!("c.relname::text = ANY($2::text[])");

/// Before 14, `= ANY` compares with every element; a semi-join hashes the list instead.
const RELATIONS_QUERY_BEFORE_14: &str =
    relations_query!("c.relname::text IN (SELECT unnest($2::text[]))");

/// The relations named as one of `$2` up to case, for the names no relation has exactly
/// (through a hash join, so that 10,000 names stay linear).
const RELATIONS_UP_TO_CASE_QUERY: &str =
    relations_query!("lower(c.relname::text) IN (SELECT lower(w) FROM unnest($2::text[]) AS w)");

/// The columns of the relations `$1` (OIDs), in no promised order, each with its type's OID
/// and modifier: the type is spelled once per distinct pair (`TYPES_QUERY`), not once per
/// column (`format_type` was a quarter of the server's time). The name is sent as the `name`
/// it is: a cast to `text` cost the server an eighth of this query.
macro_rules! columns_query {
    ($relations:literal) => {
        concat!(
            r#"
SELECT a.attrelid AS relid,
       a.attnum AS attnum,
       a.attname AS attname,
       a.attnotnull AS not_null,
       a.atttypid AS type_oid,
       a.atttypmod AS type_mod
  FROM pg_catalog.pg_attribute a
 WHERE "#,
            $relations,
            r#"
   AND a.attnum > 0
   AND NOT a.attisdropped
"#
        )
    };
}

/// Since PostgreSQL 14, `= ANY` of a long array is a hash lookup.
pub const COLUMNS_QUERY: &str = columns_query!("a.attrelid = ANY($1::oid[])");

/// Before 14, `= ANY` compares with every element; a semi-join hashes the list instead.
const COLUMNS_QUERY_BEFORE_14: &str = columns_query!("a.attrelid IN (SELECT unnest($1::oid[]))");

/// Each (type OID `$1`, modifier `$2`) pair spelled as `format_type` spells it, with what the
/// catalog says of the type: an enum's members (or an array's enum element's), a domain's base
/// type, the schema of a type outside the system schemas. One row per pair, in order.
pub const TYPES_QUERY: &str = concat!(
    r#"
SELECT pg_catalog.format_type(t.oid, c.typmod) AS type_text,"#,
    super::type_details!(),
    r#"
  FROM unnest($1::oid[], $2::int4[]) WITH ORDINALITY AS c(typ, typmod, i)
  JOIN pg_catalog.pg_type t ON t.oid = c.typ
  LEFT JOIN pg_catalog.pg_type et ON et.oid = t.typelem AND t.typcategory = 'A'
  LEFT JOIN pg_catalog.pg_namespace tn ON tn.oid = coalesce(et.typnamespace, t.typnamespace)
 ORDER BY c.i
"#
);

/// Reads the relations of `schema` named (up to case) in `names`, in the order of their OIDs,
/// each relation's columns in the order of their attribute numbers. Runs in the caller's
/// transaction, which must not have read anything yet: its snapshot is taken here.
pub(super) async fn read(
    conn: &mut PgConnection,
    schema: &str,
    names: &[String],
) -> Result<Vec<PhysicalRelation>, sqlx::Error> {
    conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        .await?;
    let hashed = conn.server_version_num().is_none_or(|v| v >= 140_000);
    let mut read = read_relations(conn, schema, names, hashed).await?;
    if read.relations.is_empty() {
        return Ok(Vec::new());
    }
    let query = if hashed {
        COLUMNS_QUERY
    } else {
        COLUMNS_QUERY_BEFORE_14
    };
    read_columns(conn, query, &mut read).await?;
    let types = spell_types(conn, &read.pairs).await?;
    Ok(tracing::debug_span!("catalog columns placed").in_scope(|| read.finish(&types)))
}

/// The relations as read, where each one is by OID, each column given to its relation as it
/// comes, with its number and its (type, modifier) pair beside it until its type is spelled.
struct Read {
    relations: Vec<PhysicalRelation>,
    /// Each relation's count of attributes (dropped ones too): its columns' list is sized for
    /// them at its first column, so that no list grows a column at a time.
    natts: Vec<u16>,
    oids: Vec<Oid>,
    index: HashMap<u32, u32>,
    /// Each relation's columns' pairs (indexes into `pairs`) and numbers, in its columns' order.
    placed: Vec<Vec<(u32, i16)>>,
    pairs: Vec<(Oid, i32)>,
    pair_index: HashMap<(u32, i32), u32>,
}

/// The relations named exactly as one of `names`, and those named only up to case as one that
/// matched none exactly; in the order of their OIDs.
async fn read_relations(
    conn: &mut PgConnection,
    schema: &str,
    names: &[String],
    hashed: bool,
) -> Result<Read, sqlx::Error> {
    let exact = if hashed {
        RELATIONS_QUERY
    } else {
        RELATIONS_QUERY_BEFORE_14
    };
    let mut found = relations_named(conn, exact, schema, names).await?;
    let unmatched: Vec<&String> = {
        let named: foldhash::HashSet<&str> =
            found.iter().map(|(_, _, r)| r.name.as_str()).collect();
        names
            .iter()
            .filter(|n| !named.contains(n.as_str()))
            .collect()
    };
    if !unmatched.is_empty() {
        let seen: foldhash::HashSet<u32> = found.iter().map(|(o, _, _)| o.0).collect();
        let more = relations_named(conn, RELATIONS_UP_TO_CASE_QUERY, schema, &unmatched).await?;
        found.extend(more.into_iter().filter(|(o, _, _)| !seen.contains(&o.0)));
        found.sort_by_key(|(o, _, _)| o.0);
    }
    let mut oids = Vec::with_capacity(found.len());
    let mut natts = Vec::with_capacity(found.len());
    let mut relations = Vec::with_capacity(found.len());
    for (oid, count, relation) in found {
        oids.push(oid);
        natts.push(count);
        relations.push(relation);
    }
    let index = (0u32..).zip(&oids).map(|(i, o)| (o.0, i)).collect();
    Ok(Read {
        placed: vec![Vec::new(); relations.len()],
        relations,
        natts,
        oids,
        index,
        pairs: Vec::new(),
        pair_index: HashMap::default(),
    })
}

/// The relations of `schema` that `query` matches with `names`, each with its OID and its
/// count of attributes.
async fn relations_named<S: AsRef<str> + Sync>(
    conn: &mut PgConnection,
    query: &'static str,
    schema: &str,
    names: &[S],
) -> Result<Vec<(Oid, u16, PhysicalRelation)>, sqlx::Error> {
    let names: Vec<&str> = names.iter().map(AsRef::as_ref).collect();
    let rows = sqlx::query(query)
        .bind(schema)
        .bind(&names)
        .fetch_all(&mut *conn)
        .await?;
    rows.iter()
        .map(|row| {
            let relation = PhysicalRelation {
                name: row.try_get(1)?,
                kind: relation_kind(row.try_get(2)?),
                columns: Vec::new(),
                unavailable: None,
            };
            let natts: i16 = row.try_get(3)?;
            Ok((row.try_get(0)?, natts.max(0).unsigned_abs(), relation))
        })
        .collect()
}

impl Read {
    /// Adds one column to its relation; its type is spelled later. The row's fields are
    /// decoded without sqlx's check of each value's type, which [`check_column_types`] made
    /// once for the query (a quarter of the client's time on 250,000 rows).
    fn add(&mut self, row: &PgRow) -> Result<(), sqlx::Error> {
        let relid: Oid = field(row, 0)?;
        let Some(&at) = self.index.get(&relid.0) else {
            return Err(sqlx::Error::Protocol(format!(
                "the catalog gave columns of relation {} that it was not asked for",
                relid.0
            )));
        };
        let at = at as usize;
        let pair: (Oid, i32) = (field(row, 4)?, field(row, 5)?);
        let next = self.pairs.len() as u32;
        let pair_at = *self.pair_index.entry((pair.0 .0, pair.1)).or_insert(next);
        if pair_at == next {
            self.pairs.push(pair);
        }
        let (relation, placed) = (&mut self.relations[at], &mut self.placed[at]);
        if placed.capacity() == 0 {
            let natts = usize::from(self.natts[at]);
            relation.columns.reserve_exact(natts);
            placed.reserve_exact(natts);
        }
        let not_null: bool = field(row, 3)?;
        relation.columns.push(PhysicalColumn {
            name: field(row, 2)?,
            type_text: TypeText::EMPTY,
            nullable: relation.kind.knows_nullability().then_some(!not_null),
            user_type: None,
            size_unknown: false,
        });
        placed.push((pair_at, field(row, 1)?));
        Ok(())
    }

    /// Gives each column its type's text (shared by every column of that type) and details, and
    /// puts each relation's columns in the order of their numbers.
    fn finish(mut self, types: &[(TypeText, Option<UserType>)]) -> Vec<PhysicalRelation> {
        let mut sorted = 0usize;
        for (relation, placed) in self.relations.iter_mut().zip(&self.placed) {
            for (column, &(pair, _)) in relation.columns.iter_mut().zip(placed) {
                let (text, details) = &types[pair as usize];
                column.type_text = *text;
                if let Some(details) = details {
                    column.user_type = Some(Box::new(details.clone()));
                }
            }
            if !placed.is_sorted_by_key(|&(_, attnum)| attnum) {
                let attnums: Vec<i16> = placed.iter().map(|&(_, attnum)| attnum).collect();
                sort_columns(&mut relation.columns, &attnums);
                sorted += 1;
            }
        }
        if sorted > 0 {
            tracing::debug!(
                relations = sorted,
                "catalog columns came out of order; sorted"
            );
        }
        self.relations
    }
}

/// Sorts `columns` by `attnums` (one each).
fn sort_columns(columns: &mut Vec<PhysicalColumn>, attnums: &[i16]) {
    let mut order: Vec<usize> = (0..columns.len()).collect();
    order.sort_unstable_by_key(|&i| attnums[i]);
    let mut taken: Vec<Option<PhysicalColumn>> = columns.drain(..).map(Some).collect();
    columns.extend(order.iter().filter_map(|&i| taken[i].take()));
}

/// Reads every column `query` gives.
async fn read_columns(
    conn: &mut PgConnection,
    query: &str,
    read: &mut Read,
) -> Result<(), sqlx::Error> {
    let oids = std::mem::take(&mut read.oids);
    {
        let mut rows = sqlx::query(query).bind(&oids).fetch(&mut *conn);
        let mut checked = false;
        while let Some(row) = rows.try_next().await? {
            if !checked {
                check_column_types(&row)?;
                checked = true;
            }
            read.add(&row)?;
        }
    }
    read.oids = oids;
    Ok(())
}

/// Checks that the columns query's row holds what [`Read::add`] decodes, as sqlx's `try_get`
/// would check each value: every row of one query has its first row's column types.
fn check_column_types(row: &PgRow) -> Result<(), sqlx::Error> {
    expect::<Oid>(row, 0)?;
    expect::<i16>(row, 1)?;
    expect::<String>(row, 2)?;
    expect::<bool>(row, 3)?;
    expect::<Oid>(row, 4)?;
    expect::<i32>(row, 5)
}

/// An error unless the row's column `index` holds a `T`.
fn expect<T: Type<Postgres>>(row: &PgRow, index: usize) -> Result<(), sqlx::Error> {
    let Some(column) = row.columns().get(index) else {
        return Err(sqlx::Error::ColumnIndexOutOfBounds {
            index,
            len: row.len(),
        });
    };
    match T::compatible(column.type_info()) {
        true => Ok(()),
        false => Err(sqlx::Error::ColumnDecode {
            index: format!("{index:?}"),
            source: format!(
                "the catalog gave a value of type {} where sqb expects type {}",
                column.type_info().name(),
                T::type_info().name()
            )
            .into(),
        }),
    }
}

/// The row's field `index` decoded as a `T`, whose type [`check_column_types`] checked.
fn field<'r, T: Decode<'r, Postgres>>(row: &'r PgRow, index: usize) -> Result<T, sqlx::Error> {
    T::decode(row.try_get_raw(index)?).map_err(|source| sqlx::Error::ColumnDecode {
        index: format!("{index:?}"),
        source,
    })
}

/// Each (type, modifier) pair's text, and its type's details where it has any; in order.
async fn spell_types(
    conn: &mut PgConnection,
    pairs: &[(Oid, i32)],
) -> Result<Vec<(TypeText, Option<UserType>)>, sqlx::Error> {
    if pairs.is_empty() {
        return Ok(Vec::new());
    }
    let types: Vec<Oid> = pairs.iter().map(|p| p.0).collect();
    let mods: Vec<i32> = pairs.iter().map(|p| p.1).collect();
    let rows = sqlx::query(TYPES_QUERY)
        .bind(types)
        .bind(mods)
        .fetch_all(&mut *conn)
        .await?;
    if rows.len() != pairs.len() {
        return Err(sqlx::Error::Protocol(format!(
            "{} of {} column types are in pg_type",
            rows.len(),
            pairs.len()
        )));
    }
    rows.iter()
        .map(|row| {
            let text: &str = row.try_get(0)?;
            Ok((TypeText::new(text), super::user_type(row, 1)?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlx::Connection as _;

    /// The test server's URL (scripts/postgres prints it); `None` skips, except under CI=true.
    fn postgres_url() -> Option<String> {
        match std::env::var("SQB_TEST_POSTGRES_URL") {
            Ok(url) if !url.is_empty() => Some(url),
            _ if std::env::var("CI").as_deref() == Ok("true") => {
                panic!("SQB_TEST_POSTGRES_URL is not set and CI=true: PostgreSQL tests must run")
            }
            _ => None,
        }
    }

    /// The first row `sql` gives, through a connection of its own.
    fn first_row(url: &str, sql: &'static str) -> PgRow {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let mut conn = PgConnection::connect(url).await.expect("connect");
            sqlx::query(sql).fetch_one(&mut conn).await.expect("query")
        })
    }

    #[test]
    fn the_columns_rows_types_are_checked_once_then_decoded_unchecked() {
        let Some(url) = postgres_url() else { return };
        let row = first_row(
            &url,
            "SELECT 7::oid, 3::int2, 'id'::text, true, 23::oid, -1::int4",
        );
        check_column_types(&row).expect("the columns query's shape");
        assert_eq!(field::<Oid>(&row, 0).unwrap(), Oid(7));
        assert_eq!(field::<i16>(&row, 1).unwrap(), 3);
        assert_eq!(field::<String>(&row, 2).unwrap(), "id");
        assert!(field::<bool>(&row, 3).unwrap());
        assert_eq!(field::<i32>(&row, 5).unwrap(), -1);

        // A server that answers with other types is refused before any value is decoded.
        let row = first_row(
            &url,
            "SELECT 7::oid, 3::int8, 'id'::text, true, 23::oid, -1::int4",
        );
        let err = check_column_types(&row).unwrap_err().to_string();
        assert!(
            err.contains("a value of type INT8 where sqb expects type INT2"),
            "{err}"
        );
        let short = first_row(&url, "SELECT 7::oid, 3::int2");
        assert!(matches!(
            check_column_types(&short),
            Err(sqlx::Error::ColumnIndexOutOfBounds { index: 2, len: 2 })
        ));
        // A null is an error, as `try_get` makes it.
        let row = first_row(&url, "SELECT NULL::oid");
        assert!(field::<Oid>(&row, 0).is_err());
    }
}
