//! The statements an audit run sends: one scan per relation that counts the failing rows of
//! every check at once (conditional aggregates, one window per `unique`, one join per
//! `relationships`), and for each check that failed a bounded sample of what failed.
//! Identifiers are quoted; values are bound parameters. A `where` or an `expression` is the
//! project's own SQL, checked at compile time, and runs in a read-only transaction. A
//! user-defined audit's query is counted in the same statement, as a scalar subquery.

use super::spec::{BoundKind, Check, Spec};
use super::template::{Bindings, Template};
use crate::engine::Engine;
use crate::ident::quoted;
use crate::rows::Statement;

/// One audit of one column, ready to run: `parent` is the quoted relation a `relationships`
/// check reads; `template` a user-defined audit's SQL.
#[derive(Debug, Clone)]
pub struct ColumnCheck<'a> {
    pub column: &'a str,
    pub spec: &'a Spec,
    pub parent: Option<String>,
    pub template: Option<Template>,
}

/// How many failing rows (or values) a sample shows at most.
pub const SAMPLE_ROWS: usize = 5;

/// The one statement counting every check's failures on `relation` (quoted): its first column
/// is the number of rows, then one count per check, in order.
pub fn scan(engine: Engine, relation: &str, checks: &[ColumnCheck<'_>]) -> Statement {
    let mut params = Vec::new();
    let mut windows = Vec::new();
    let mut joins = Vec::new();
    let mut counts = vec!["count(*)".to_string()];
    for (i, c) in checks.iter().enumerate() {
        let col = format!("t.{}", quoted(c.column));
        let filter = filter_of(c.spec);
        let count = match &c.spec.check {
            Check::NotNull => format!("count(*) FILTER (WHERE {filter} AND {col} IS NULL)"),
            Check::Unique => {
                windows.push(format!(
                    "sum(CASE WHEN {filter} THEN 1 ELSE 0 END) OVER (PARTITION BY {}) AS sqb_unique_{i}",
                    quoted(c.column)
                ));
                format!(
                    "count(DISTINCT {col}) FILTER (WHERE {filter} AND {col} IS NOT NULL AND t.sqb_unique_{i} > 1)"
                )
            }
            Check::AcceptedValues(values) => {
                let text = format!("CAST({col} AS {})", engine.text_type());
                let list = bind_all(&mut params, values);
                format!("count(DISTINCT {text}) FILTER (WHERE {filter} AND {col} IS NOT NULL AND {text} NOT IN ({list}))")
            }
            Check::AcceptedRange { .. } => format!(
                "count(*) FILTER (WHERE {filter} AND NOT ({}))",
                in_range(engine, &col, &c.spec.check, &mut params)
            ),
            Check::NotConstant => format!(
                "CASE WHEN count(DISTINCT {col}) FILTER (WHERE {filter}) = 1 THEN 1 ELSE 0 END"
            ),
            Check::AtLeastOne => {
                format!("CASE WHEN count({col}) FILTER (WHERE {filter}) = 0 THEN 1 ELSE 0 END")
            }
            Check::Expression(predicate) => {
                format!("count(*) FILTER (WHERE {filter} AND NOT ({predicate}))")
            }
            Check::Relationships { field, .. } => {
                let parent = c.parent.as_deref().unwrap_or_default();
                joins.push(format!(
                    "LEFT JOIN (SELECT DISTINCT {} AS sqb_key FROM {parent}) AS sqb_parent_{i} ON {col} = sqb_parent_{i}.sqb_key",
                    quoted(field)
                ));
                format!("count(*) FILTER (WHERE {filter} AND {col} IS NOT NULL AND sqb_parent_{i}.sqb_key IS NULL)")
            }
            Check::UniqueCombination(columns) => {
                let by = quoted_list(columns);
                let flag = format!("CASE WHEN {filter} THEN 1 ELSE 0 END");
                windows.push(format!(
                    "sum({flag}) OVER (PARTITION BY {by}) AS sqb_unique_{i}, row_number() OVER (PARTITION BY {by}, {flag}) AS sqb_first_{i}"
                ));
                format!("count(*) FILTER (WHERE {filter} AND t.sqb_unique_{i} > 1 AND t.sqb_first_{i} = 1)")
            }
            Check::Recency { field, interval } => {
                params.push(interval.clone());
                format!(
                    "CASE WHEN max(t.{}) FILTER (WHERE {filter}) >= {} - CAST(${} AS INTERVAL) THEN 0 ELSE 1 END",
                    quoted(field),
                    engine.now(),
                    params.len()
                )
            }
            Check::Custom { args, .. } => match custom_rows(engine, relation, c, args, &mut params)
            {
                Some(rows) => format!("(SELECT count(*) FROM ({rows}) AS sqb_rows_{i})"),
                // Compile refuses what does not render: a count that is NULL fails closed.
                None => "CAST(NULL AS BIGINT)".to_string(),
            },
        };
        counts.push(format!("{count} AS sqb_check_{i}"));
    }
    let inner = match windows.is_empty() {
        true => relation.to_string(),
        false => format!("(SELECT *, {} FROM {relation})", windows.join(", ")),
    };
    let mut sql = format!("SELECT {} FROM {inner} AS t", counts.join(", "));
    for join in joins {
        sql.push(' ');
        sql.push_str(&join);
    }
    Statement { sql, params }
}

/// The sample of one failed check: the failing rows (at most [`SAMPLE_ROWS`]), or for a
/// `unique` and an `accepted_values` the failing values with how many rows hold each. `None`
/// for a check about the whole column (`not_constant`, `at_least_one`).
pub fn sample(engine: Engine, relation: &str, check: &ColumnCheck<'_>) -> Option<Statement> {
    let col = format!("t.{}", quoted(check.column));
    let filter = filter_of(check.spec);
    let mut params = Vec::new();
    let limit = SAMPLE_ROWS;
    let sql = match &check.spec.check {
        Check::NotNull => format!("SELECT t.* FROM {relation} AS t WHERE {filter} AND {col} IS NULL LIMIT {limit}"),
        Check::Unique => format!(
            "SELECT {col} AS value, count(*) AS n FROM {relation} AS t WHERE {filter} AND {col} IS NOT NULL GROUP BY {col} HAVING count(*) > 1 ORDER BY count(*) DESC, 1 LIMIT {limit}"
        ),
        Check::AcceptedValues(values) => {
            let text = format!("CAST({col} AS {})", engine.text_type());
            let list = bind_all(&mut params, values);
            format!("SELECT {text} AS value, count(*) AS n FROM {relation} AS t WHERE {filter} AND {col} IS NOT NULL AND {text} NOT IN ({list}) GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT {limit}")
        }
        Check::AcceptedRange { .. } => format!(
            "SELECT t.* FROM {relation} AS t WHERE {filter} AND NOT ({}) LIMIT {limit}",
            in_range(engine, &col, &check.spec.check, &mut params)
        ),
        Check::Expression(predicate) => format!(
            "SELECT t.* FROM {relation} AS t WHERE {filter} AND NOT ({predicate}) LIMIT {limit}"
        ),
        Check::Relationships { field, .. } => format!(
            "SELECT t.* FROM {relation} AS t LEFT JOIN (SELECT DISTINCT {} AS sqb_key FROM {}) AS p ON {col} = p.sqb_key WHERE {filter} AND {col} IS NOT NULL AND p.sqb_key IS NULL LIMIT {limit}",
            quoted(field),
            check.parent.as_deref().unwrap_or_default()
        ),
        Check::UniqueCombination(columns) => {
            let by = columns
                .iter()
                .map(|c| format!("t.{}", quoted(c)))
                .collect::<Vec<_>>()
                .join(", ");
            format!("SELECT {by}, count(*) AS n FROM {relation} AS t WHERE {filter} GROUP BY {by} HAVING count(*) > 1 ORDER BY count(*) DESC LIMIT {limit}")
        }
        Check::Recency { field, .. } => format!(
            "SELECT max(t.{}) AS most_recent FROM {relation} AS t WHERE {filter}",
            quoted(field)
        ),
        Check::NotConstant | Check::AtLeastOne => return None,
        Check::Custom { args, .. } => {
            let rows = custom_rows(engine, relation, check, args, &mut params)?;
            format!("{rows} LIMIT {limit}")
        }
    };
    Some(Statement { sql, params })
}

fn quoted_list(columns: &[String]) -> String {
    columns
        .iter()
        .map(|c| quoted(c))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A user-defined audit's failing rows as one query: its SQL with the relation (under `where`,
/// a CTE of the rows it keeps), the column and the arguments filled in. Its values are appended
/// to `params` only when it renders.
fn custom_rows(
    engine: Engine,
    relation: &str,
    check: &ColumnCheck<'_>,
    args: &[(String, crate::project::AuditArg)],
    params: &mut Vec<String>,
) -> Option<String> {
    let template = check.template.as_ref()?;
    let (with, target) = match &check.spec.filter {
        Some(filter) => (
            format!("WITH sqb_audited AS (SELECT * FROM {relation} WHERE {filter}) "),
            "sqb_audited",
        ),
        None => (String::new(), relation),
    };
    let mut own = params.clone();
    let bindings = Bindings {
        relation: target,
        column: (!check.column.is_empty()).then_some(check.column),
        args,
        engine,
    };
    let body = template.render(&bindings, &mut own).ok()?;
    *params = own;
    // The newline ends a comment the audit's last line may hold.
    Some(format!("{with}SELECT * FROM ({body}\n) AS sqb_custom"))
}

fn filter_of(spec: &Spec) -> String {
    spec.filter
        .as_deref()
        .map_or_else(|| "TRUE".to_string(), |w| format!("({w})"))
}

/// `$n, $n+1, …` for `values`, bound.
fn bind_all(params: &mut Vec<String>, values: &[String]) -> String {
    values
        .iter()
        .map(|v| {
            params.push(v.clone());
            format!("${}", params.len())
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The predicate "within the bounds", the bounds bound as numbers.
fn in_range(engine: Engine, col: &str, check: &Check, params: &mut Vec<String>) -> String {
    let Check::AcceptedRange {
        min,
        max,
        inclusive,
    } = check
    else {
        return "TRUE".into();
    };
    let (lower, upper) = match inclusive {
        true => (">=", "<="),
        false => (">", "<"),
    };
    let mut bound = |op: &str, value: &str| {
        params.push(value.to_string());
        let ty = match super::spec::bound_kind(value) {
            BoundKind::Number => engine.bound_number_type(),
            BoundKind::Date => "DATE",
            BoundKind::Time => "TIMESTAMP",
        };
        format!("{col} {op} CAST(${} AS {ty})", params.len())
    };
    let parts: Vec<String> = [
        min.as_deref().map(|m| bound(lower, m)),
        max.as_deref().map(|m| bound(upper, m)),
    ]
    .into_iter()
    .flatten()
    .collect();
    parts.join(" AND ")
}
