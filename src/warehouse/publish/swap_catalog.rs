//! What the Postgres catalog says about swapping a destination table with its staged copy: why
//! it cannot be (the first reason found), or everything of its identity a swap must make
//! again, deparsed by the server itself (`pg_get_constraintdef`, `pg_get_indexdef`,
//! `pg_get_triggerdef`, `pg_get_viewdef`, `pg_get_expr`). Read inside the publish transaction,
//! whose `search_path` is empty, so that every deparsed name is schema-qualified.

/// Why the destination (`$1`) cannot be swapped with its staged copy (`$2`): one row per
/// reason, the most telling first. None: a swap carries everything bound to it.
pub(super) const WHY_NOT: &str = r#"
WITH d AS (SELECT * FROM pg_catalog.pg_class WHERE oid = $1::bigint::oid),
     s AS (SELECT * FROM pg_catalog.pg_class WHERE oid = $2::bigint::oid),
     dcols AS (
       SELECT a.*, row_number() OVER (ORDER BY a.attnum) AS pos
         FROM pg_catalog.pg_attribute a WHERE a.attrelid = $1::bigint::oid AND a.attnum > 0 AND NOT a.attisdropped),
     scols AS (
       SELECT a.*, row_number() OVER (ORDER BY a.attnum) AS pos
         FROM pg_catalog.pg_attribute a WHERE a.attrelid = $2::bigint::oid AND a.attnum > 0 AND NOT a.attisdropped),
     deps AS (
       SELECT dep.*, pg_catalog.pg_describe_object(dep.classid, dep.objid, dep.objsubid) AS what
         FROM pg_catalog.pg_depend dep
        WHERE dep.refclassid = 'pg_catalog.pg_class'::regclass AND dep.refobjid = $1::bigint::oid),
     typed AS (
       SELECT dep.*, pg_catalog.pg_describe_object(dep.classid, dep.objid, dep.objsubid) AS what
         FROM pg_catalog.pg_depend dep, d
         JOIN pg_catalog.pg_type t ON t.oid = d.reltype
        WHERE dep.refclassid = 'pg_catalog.pg_type'::regclass AND dep.refobjid IN (t.oid, t.typarray)
          AND NOT (dep.classid = 'pg_catalog.pg_class'::regclass AND dep.objid = d.oid)
          AND NOT (dep.classid = 'pg_catalog.pg_type'::regclass AND dep.objid = t.typarray))
SELECT why FROM (
  SELECT 1 AS o, 'it is partitioned' AS why FROM d WHERE relkind = 'p'
  UNION ALL SELECT 2, 'it is a partition' FROM d WHERE relispartition
  UNION ALL SELECT 3, 'the staged relation is not a plain table' FROM s WHERE relkind <> 'r' OR relispartition
  UNION ALL SELECT 4, pg_catalog.format('foreign key %I of %s references it', con.conname, con.conrelid::regclass)
    FROM pg_catalog.pg_constraint con WHERE con.contype = 'f' AND con.confrelid = $1::bigint::oid
  UNION ALL SELECT 5, pg_catalog.format('%s reads it (a materialized view is bound to it)', v.oid::regclass)
    FROM deps JOIN pg_catalog.pg_rewrite r ON deps.classid = 'pg_catalog.pg_rewrite'::regclass AND r.oid = deps.objid
    JOIN pg_catalog.pg_class v ON v.oid = r.ev_class WHERE v.relkind = 'm'
  UNION ALL SELECT 6, pg_catalog.format('%s is typed by its row type', what) FROM typed
  UNION ALL SELECT 7, 'it inherits, or is inherited by, another table'
    FROM pg_catalog.pg_inherits WHERE inhrelid IN ($1::bigint::oid, $2::bigint::oid) OR inhparent IN ($1::bigint::oid, $2::bigint::oid)
  UNION ALL SELECT 8, pg_catalog.format('column %I is generated', attname) FROM dcols WHERE attgenerated <> ''
  UNION ALL SELECT 9, pg_catalog.format('column %I is an identity column', attname) FROM dcols WHERE attidentity <> ''
  UNION ALL SELECT 10, pg_catalog.format('%s depends on it', what) FROM deps
   WHERE NOT (
         (deps.classid = 'pg_catalog.pg_rewrite'::regclass
          AND EXISTS (SELECT 1 FROM pg_catalog.pg_rewrite r JOIN pg_catalog.pg_class v ON v.oid = r.ev_class
                       WHERE r.oid = deps.objid AND v.relkind IN ('v', 'm') AND v.oid <> $1::bigint::oid))
      OR (deps.classid = 'pg_catalog.pg_constraint'::regclass
          AND EXISTS (SELECT 1 FROM pg_catalog.pg_constraint c WHERE c.oid = deps.objid AND c.conrelid = $1::bigint::oid))
      OR (deps.classid = 'pg_catalog.pg_constraint'::regclass
          AND EXISTS (SELECT 1 FROM pg_catalog.pg_constraint c WHERE c.oid = deps.objid AND c.contype = 'f'))
      OR (deps.classid = 'pg_catalog.pg_attrdef'::regclass
          AND EXISTS (SELECT 1 FROM pg_catalog.pg_attrdef x WHERE x.oid = deps.objid AND x.adrelid = $1::bigint::oid))
      OR (deps.classid = 'pg_catalog.pg_trigger'::regclass
          AND EXISTS (SELECT 1 FROM pg_catalog.pg_trigger x WHERE x.oid = deps.objid AND x.tgrelid = $1::bigint::oid))
      OR (deps.classid = 'pg_catalog.pg_type'::regclass AND deps.deptype = 'i')
      OR (deps.classid = 'pg_catalog.pg_class'::regclass
          AND EXISTS (SELECT 1 FROM pg_catalog.pg_class x WHERE x.oid = deps.objid
                       AND (x.relkind IN ('i', 't') OR (x.relkind = 'S' AND deps.deptype = 'a')))))
  UNION ALL SELECT 11, pg_catalog.format('the staged copy is not bare: %s depends on it', pg_catalog.pg_describe_object(dep.classid, dep.objid, dep.objsubid))
    FROM pg_catalog.pg_depend dep
   WHERE dep.refclassid = 'pg_catalog.pg_class'::regclass AND dep.refobjid = $2::bigint::oid
     AND NOT (dep.classid = 'pg_catalog.pg_type'::regclass AND dep.deptype = 'i')
     AND NOT (dep.classid = 'pg_catalog.pg_class'::regclass
              AND EXISTS (SELECT 1 FROM pg_catalog.pg_class x WHERE x.oid = dep.objid AND x.relkind = 't'))
  UNION ALL SELECT 12, pg_catalog.format('column %s differs from the staged copy''s in position, type or collation', coalesce(pg_catalog.quote_ident(dc.attname), pg_catalog.quote_ident(sc.attname)))
    FROM dcols dc FULL JOIN scols sc ON sc.pos = dc.pos
   WHERE dc.attname IS DISTINCT FROM sc.attname OR dc.atttypid IS DISTINCT FROM sc.atttypid
      OR dc.atttypmod IS DISTINCT FROM sc.atttypmod OR dc.attcollation IS DISTINCT FROM sc.attcollation
  UNION ALL SELECT 13, pg_catalog.format('column %I has its own storage, compression, options or statistics target', a.attname)
    FROM dcols a JOIN pg_catalog.pg_type t ON t.oid = a.atttypid
   WHERE a.attstorage <> t.typstorage OR a.attcompression <> '' OR a.attoptions IS NOT NULL OR coalesce(a.attstattarget, -1) <> -1
  UNION ALL SELECT 14, 'it has row security, a replica identity, storage parameters, a tablespace or an access method of its own'
    FROM d, s
   WHERE d.relrowsecurity OR d.relforcerowsecurity OR s.relrowsecurity OR s.relforcerowsecurity
      OR d.relreplident <> 'd' OR s.relreplident <> 'd'
      OR d.reloptions IS DISTINCT FROM s.reloptions OR d.reltablespace <> s.reltablespace
      OR d.relam <> s.relam OR d.relpersistence <> s.relpersistence OR d.reloftype <> 0 OR s.reloftype <> 0
  UNION ALL SELECT 15, pg_catalog.format('index %s has a tablespace, a statistics target or is the replica identity', i.indexrelid::regclass)
    FROM pg_catalog.pg_index i JOIN pg_catalog.pg_class ic ON ic.oid = i.indexrelid
   WHERE i.indrelid = $1::bigint::oid
     AND (ic.reltablespace <> 0 OR i.indisreplident
          OR EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a WHERE a.attrelid = i.indexrelid AND coalesce(a.attstattarget, -1) <> -1))
  UNION ALL SELECT 16, 'it has a security label' FROM pg_catalog.pg_seclabel l
   WHERE l.classoid = 'pg_catalog.pg_class'::regclass AND l.objoid IN ($1::bigint::oid, $2::bigint::oid)
  UNION ALL SELECT 17, pg_catalog.format('a privilege on it was granted by %s, not by its owner', pg_catalog.pg_get_userbyid(x.grantor))
    FROM (SELECT c.relowner, c.relacl FROM d c UNION ALL SELECT c.relowner, c.relacl FROM s c) c,
         pg_catalog.aclexplode(c.relacl) x WHERE x.grantor <> c.relowner
  UNION ALL SELECT 18, pg_catalog.format('a privilege on column %I was granted by %s, not by its owner', a.attname, pg_catalog.pg_get_userbyid(x.grantor))
    FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_class c ON c.oid = a.attrelid,
         pg_catalog.aclexplode(a.attacl) x
   WHERE a.attrelid IN ($1::bigint::oid, $2::bigint::oid) AND x.grantor <> c.relowner
  UNION ALL SELECT 19, pg_catalog.format('this session cannot act as its owner %s, as a swap must to rename and drop it', pg_catalog.pg_get_userbyid(d.relowner))
    FROM d WHERE NOT pg_catalog.pg_has_role(d.relowner, 'USAGE')
  UNION ALL SELECT 20, pg_catalog.format('this session cannot act as %s, the staged copy''s owner', pg_catalog.pg_get_userbyid(s.relowner))
    FROM s WHERE NOT pg_catalog.pg_has_role(s.relowner, 'USAGE')
  UNION ALL SELECT 21, pg_catalog.format('this session cannot act as %s, the owner of %s, which a swap makes again', pg_catalog.pg_get_userbyid(v.relowner), v.oid::regclass)
    FROM deps JOIN pg_catalog.pg_rewrite r ON deps.classid = 'pg_catalog.pg_rewrite'::regclass AND r.oid = deps.objid
    JOIN pg_catalog.pg_class v ON v.oid = r.ev_class
   WHERE v.relkind = 'v' AND NOT pg_catalog.pg_has_role(v.relowner, 'USAGE')
  UNION ALL SELECT 22, pg_catalog.format('this session may not create in schema %I', n.nspname)
    FROM d JOIN pg_catalog.pg_namespace n ON n.oid = d.relnamespace
   WHERE NOT pg_catalog.has_schema_privilege(n.oid, 'CREATE')
) AS reasons
ORDER BY o, why
"#;

/// The owners of `$1` and `$2`.
pub(super) const OWNERS: &str = r#"
SELECT pg_catalog.pg_get_userbyid((SELECT relowner FROM pg_catalog.pg_class WHERE oid = $1::bigint::oid))::text,
       pg_catalog.pg_get_userbyid((SELECT relowner FROM pg_catalog.pg_class WHERE oid = $2::bigint::oid))::text
"#;

/// Column defaults of `$1`.
pub(super) const DEFAULTS: &str = r#"
SELECT a.attname::text, pg_catalog.pg_get_expr(x.adbin, x.adrelid)
  FROM pg_catalog.pg_attrdef x
  JOIN pg_catalog.pg_attribute a ON a.attrelid = x.adrelid AND a.attnum = x.adnum
 WHERE x.adrelid = $1::bigint::oid AND a.attgenerated = '' AND NOT a.attisdropped
 ORDER BY a.attnum
"#;

/// Constraints of `$1` (NOT NULL is a column's in Postgres 15): keys first, foreign keys last.
/// A constraint trigger's constraint comes with its trigger.
pub(super) const CONSTRAINTS: &str = r#"
SELECT c.conname::text, pg_catalog.pg_get_constraintdef(c.oid)
  FROM pg_catalog.pg_constraint c
 WHERE c.conrelid = $1::bigint::oid AND c.contype IN ('p', 'u', 'x', 'c', 'f')
 ORDER BY CASE c.contype WHEN 'p' THEN 0 WHEN 'u' THEN 1 WHEN 'x' THEN 2 WHEN 'c' THEN 3 ELSE 4 END, c.conname
"#;

/// Indexes of `$1` that no constraint makes, and whether the table is clustered on each (a
/// constraint's index included).
pub(super) const INDEXES: &str = r#"
SELECT ic.relname::text, pg_catalog.pg_get_indexdef(i.indexrelid), i.indisclustered,
       EXISTS (SELECT 1 FROM pg_catalog.pg_constraint c
                WHERE c.conindid = i.indexrelid AND c.conrelid = i.indrelid AND c.contype IN ('p', 'u', 'x'))
  FROM pg_catalog.pg_index i
  JOIN pg_catalog.pg_class ic ON ic.oid = i.indexrelid
 WHERE i.indrelid = $1::bigint::oid
 ORDER BY ic.relname
"#;

/// User triggers of `$1`, disabled ones too.
pub(super) const TRIGGERS: &str = r#"
SELECT t.tgname::text, pg_catalog.pg_get_triggerdef(t.oid), t.tgenabled::text
  FROM pg_catalog.pg_trigger t
 WHERE t.tgrelid = $1::bigint::oid AND NOT t.tgisinternal
 ORDER BY t.tgname
"#;

/// The privileges on `$1` and its columns (the owner's default ones spelled out), in the order
/// of their acl, which granting them in this order makes again.
pub(super) const GRANTS: &str = r#"
SELECT x.privilege_type::text, NULL::text,
       CASE x.grantee WHEN 0 THEN 'PUBLIC' ELSE pg_catalog.pg_get_userbyid(x.grantee)::text END,
       x.is_grantable, 0 AS attnum, x.i
  FROM pg_catalog.pg_class c,
       pg_catalog.aclexplode(coalesce(c.relacl, pg_catalog.acldefault('r', c.relowner))) WITH ORDINALITY AS x(grantor, grantee, privilege_type, is_grantable, i)
 WHERE c.oid = $1::bigint::oid
UNION ALL
SELECT x.privilege_type::text, a.attname::text,
       CASE x.grantee WHEN 0 THEN 'PUBLIC' ELSE pg_catalog.pg_get_userbyid(x.grantee)::text END,
       x.is_grantable, a.attnum, x.i
  FROM pg_catalog.pg_attribute a, pg_catalog.aclexplode(a.attacl) WITH ORDINALITY AS x(grantor, grantee, privilege_type, is_grantable, i)
 WHERE a.attrelid = $1::bigint::oid AND a.attacl IS NOT NULL AND NOT a.attisdropped
ORDER BY 5, 6
"#;

/// Roles that hold a privilege on `$1` or a column of it; the owner's, when it has no acl.
pub(super) const GRANTEES: &str = r#"
SELECT DISTINCT CASE x.grantee WHEN 0 THEN 'PUBLIC' ELSE pg_catalog.pg_get_userbyid(x.grantee)::text END
  FROM pg_catalog.pg_class c, pg_catalog.aclexplode(coalesce(c.relacl, pg_catalog.acldefault('r', c.relowner))) x
 WHERE c.oid = $1::bigint::oid
UNION
SELECT CASE x.grantee WHEN 0 THEN 'PUBLIC' ELSE pg_catalog.pg_get_userbyid(x.grantee)::text END
  FROM pg_catalog.pg_attribute a, pg_catalog.aclexplode(a.attacl) x
 WHERE a.attrelid = $1::bigint::oid AND a.attacl IS NOT NULL
ORDER BY 1
"#;

/// Comments on `$1`, its columns, constraints, indexes and triggers: what each is on (`table`,
/// `column`, `constraint`, `index`, `trigger`), its name, the index's schema, and the text.
pub(super) const COMMENTS: &str = r#"
SELECT 'table', '', '', x.description FROM pg_catalog.pg_description x
 WHERE x.classoid = 'pg_catalog.pg_class'::regclass AND x.objoid = $1::bigint::oid AND x.objsubid = 0
UNION ALL
SELECT 'column', a.attname::text, '', x.description FROM pg_catalog.pg_description x
  JOIN pg_catalog.pg_attribute a ON a.attrelid = x.objoid AND a.attnum = x.objsubid
 WHERE x.classoid = 'pg_catalog.pg_class'::regclass AND x.objoid = $1::bigint::oid AND x.objsubid > 0
UNION ALL
SELECT 'constraint', c.conname::text, '', x.description FROM pg_catalog.pg_description x
  JOIN pg_catalog.pg_constraint c ON c.oid = x.objoid
 WHERE x.classoid = 'pg_catalog.pg_constraint'::regclass AND c.conrelid = $1::bigint::oid AND c.contype <> 't'
UNION ALL
SELECT 'index', ic.relname::text, n.nspname::text, x.description FROM pg_catalog.pg_description x
  JOIN pg_catalog.pg_index i ON i.indexrelid = x.objoid
  JOIN pg_catalog.pg_class ic ON ic.oid = i.indexrelid
  JOIN pg_catalog.pg_namespace n ON n.oid = ic.relnamespace
 WHERE x.classoid = 'pg_catalog.pg_class'::regclass AND i.indrelid = $1::bigint::oid AND x.objsubid = 0
UNION ALL
SELECT 'trigger', t.tgname::text, '', x.description FROM pg_catalog.pg_description x
  JOIN pg_catalog.pg_trigger t ON t.oid = x.objoid
 WHERE x.classoid = 'pg_catalog.pg_trigger'::regclass AND t.tgrelid = $1::bigint::oid AND NOT t.tgisinternal
ORDER BY 1, 2
"#;

/// Views that read `$1` directly, with their definition and options.
pub(super) const VIEWS: &str = r#"
SELECT DISTINCT n.nspname::text, v.relname::text, pg_catalog.pg_get_viewdef(v.oid),
       coalesce(v.reloptions, '{}')::text[]
  FROM pg_catalog.pg_depend dep
  JOIN pg_catalog.pg_rewrite r ON dep.classid = 'pg_catalog.pg_rewrite'::regclass AND r.oid = dep.objid
  JOIN pg_catalog.pg_class v ON v.oid = r.ev_class AND v.relkind = 'v'
  JOIN pg_catalog.pg_namespace n ON n.oid = v.relnamespace
 WHERE dep.refclassid = 'pg_catalog.pg_class'::regclass AND dep.refobjid = $1::bigint::oid
   AND v.oid <> $1::bigint::oid
 ORDER BY 1, 2
"#;

/// Whether a relation (or index, or sequence) named `$2` exists in schema `$1`.
pub(super) const TAKEN: &str = r#"
SELECT count(*) FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = $1 AND c.relname = $2
"#;

use sqlx::postgres::PgRow;
use sqlx::Row;

use super::PublishError;
use crate::table_facts::{Carried, Comment, Commented, Facts, Grant, Name, Swap, View};

/// The writer's transaction, as the swap's catalog queries run in it.
pub(super) trait Catalog {
    /// The rows of a query whose parameters are oids.
    fn rows_of(&mut self, sql: &str, oids: &[i64]) -> Result<Vec<PgRow>, PublishError>;
    /// The rows of a query whose parameters are text, about `relation`.
    fn fetch(
        &mut self,
        sql: &str,
        params: &[String],
        relation: &Name,
    ) -> Result<Vec<PgRow>, PublishError>;

    fn rows(&mut self, sql: &str, oid: i64) -> Result<Vec<PgRow>, PublishError> {
        self.rows_of(sql, &[oid])
    }
}

/// Whether `facts.dest` (oid `dest`) can be swapped with its staged copy (oid `staged`), and
/// what the swap then carries.
pub(super) fn read(
    tx: &mut impl Catalog,
    facts: &Facts,
    dest: i64,
    staged: i64,
) -> Result<Swap, PublishError> {
    if let Some(why) = tx.rows_of(WHY_NOT, &[dest, staged])?.first() {
        return Ok(Swap::No(why.get(0)));
    }
    let owners = tx.rows_of(OWNERS, &[dest, staged])?;
    let (owner, staged_owner): (String, String) = (owners[0].get(0), owners[0].get(1));
    let mut carried = Carried {
        old_name: free_name(tx, &facts.dest)?,
        not_null: names(facts.columns.iter().filter(|c| c.not_null)),
        staged_not_null: names(facts.staged_columns.iter().filter(|c| c.not_null)),
        defaults: pairs(tx.rows(DEFAULTS, dest)?),
        constraints: pairs(tx.rows(CONSTRAINTS, dest)?),
        ..Carried::default()
    };
    for r in tx.rows(INDEXES, dest)? {
        let (name, definition, clustered, of_constraint): (String, String, bool, bool) =
            (r.get(0), r.get(1), r.get(2), r.get(3));
        if clustered {
            carried.clustered = Some(name);
        }
        if !of_constraint {
            carried.indexes.push(definition);
        }
    }
    carried.triggers = tx
        .rows(TRIGGERS, dest)?
        .iter()
        .map(|r| {
            let enabled: String = r.get(2);
            (r.get(0), r.get(1), enabled.chars().next().unwrap_or('O'))
        })
        .collect();
    carried.grants = tx
        .rows(GRANTS, dest)?
        .iter()
        .map(|r| Grant {
            privilege: r.get(0),
            column: r.get(1),
            grantee: r.get(2),
            grantable: r.get(3),
        })
        .collect();
    let mut grantees: Vec<String> = tx
        .rows(GRANTEES, staged)?
        .iter()
        .map(|r| r.get::<String, _>(0))
        .map(|g| if g == staged_owner { owner.clone() } else { g })
        .collect();
    grantees.push("PUBLIC".to_string());
    grantees.sort();
    grantees.dedup();
    carried.staged_grantees = grantees;
    carried.comments = comments(tx, dest)?;
    carried.staged_comments = comments(tx, staged)?.into_iter().map(|c| c.on).collect();
    carried.views = tx
        .rows(VIEWS, dest)?
        .iter()
        .map(|r| View {
            name: Name::new(&r.get::<String, _>(0), &r.get::<String, _>(1)),
            definition: r.get(2),
            options: r.get(3),
        })
        .collect();
    carried.owner = owner;
    carried.staged_owner = staged_owner;
    Ok(Swap::Yes(Box::new(carried)))
}

fn names<'a>(columns: impl Iterator<Item = &'a crate::table_facts::Column>) -> Vec<String> {
    columns.map(|c| c.name.clone()).collect()
}

fn pairs(rows: Vec<PgRow>) -> Vec<(String, String)> {
    rows.iter().map(|r| (r.get(0), r.get(1))).collect()
}

fn comments(tx: &mut impl Catalog, oid: i64) -> Result<Vec<Comment>, PublishError> {
    Ok(tx
        .rows(COMMENTS, oid)?
        .iter()
        .filter_map(|r| {
            let (kind, name, schema, text): (String, String, String, String) =
                (r.get(0), r.get(1), r.get(2), r.get(3));
            let on = match kind.as_str() {
                "table" => Commented::Table,
                "column" => Commented::Column(name),
                "constraint" => Commented::Constraint(name),
                "index" => Commented::Index(Name::new(&schema, &name)),
                "trigger" => Commented::Trigger(name),
                _ => return None,
            };
            Some(Comment { on, text })
        })
        .collect())
}

/// A name beside the destination's that nothing in its schema has: where the old table waits
/// for its drop. Postgres cuts names at 63 bytes.
fn free_name(tx: &mut impl Catalog, dest: &Name) -> Result<String, PublishError> {
    for i in 0..1000 {
        let suffix = match i {
            0 => "__sqb_old".to_string(),
            _ => format!("__sqb_old{i}"),
        };
        let mut base = dest.name.clone();
        while base.len() + suffix.len() > 63 {
            base.pop();
        }
        let candidate = format!("{base}{suffix}");
        let rows = tx.fetch(TAKEN, &[dest.schema.clone(), candidate.clone()], dest)?;
        if rows.first().map(|r| r.get::<i64, _>(0)) == Some(0) {
            return Ok(candidate);
        }
    }
    Err(PublishError::Statement {
        relation: dest.shown(),
        sql: TAKEN.trim().lines().next().unwrap_or_default().to_string(),
        message: "no free name for the old table beside it".to_string(),
    })
}
