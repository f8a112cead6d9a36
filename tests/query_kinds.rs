//! Every kind of metric the compiler serves (testdata/query/kinds): each statement runs on a
//! real DuckDB file and a real Postgres database and returns exactly the rows of a hand-written
//! query; `sqb query --sql` is pinned per kind and engine; a zero denominator under
//! `on_zero_denominator = "error"` is refused (exit 21) on both.

mod common;

use std::path::Path;

use common::{copy_tree, duckdb_file, pg_exec, pg_strings, repo, run, sqb, transcript, TestDb};
use sqb::catalog::Namespace;
use sqb::project::Project;
use sqb::semantic::query::{compile, QueryRequest};

struct Case {
    name: &'static str,
    metric: &'static str,
    dimensions: &'static [&'static str],
    /// `{ratio}` is the engine's type of a division; `{median}` its median of `amount`, `{p75}`
    /// its discrete 75th percentile.
    expected: &'static str,
}

const CASES: &[Case] = &[
    Case {
        name: "single",
        metric: "revenue",
        dimensions: &["order_date"],
        expected: "SELECT date_trunc('day', ordered_on), sum(amount) FROM shop.orders GROUP BY 1",
    },
    Case {
        name: "sum_boolean",
        metric: "rush_orders",
        dimensions: &["order_date.month"],
        // February's flags are all NULL: its sum is NULL, as MetricFlow's is.
        expected: "SELECT date_trunc('month', ordered_on), sum(CASE WHEN rush THEN 1 WHEN NOT rush THEN 0 END) \
                   FROM shop.orders GROUP BY 1",
    },
    Case {
        name: "weighted_avg",
        metric: "price_per_unit",
        dimensions: &["order_date.month"],
        expected: "SELECT date_trunc('month', ordered_on), CAST(sum(amount) AS {ratio}) / sum(quantity) \
                   FROM shop.orders GROUP BY 1",
    },
    Case {
        name: "ratio",
        metric: "revenue_per_order",
        dimensions: &["order_date.month"],
        // The denominator's population filter applies to it alone.
        expected: "SELECT n.m, CAST(n.s AS {ratio}) / d.c FROM \
                   (SELECT date_trunc('month', ordered_on) AS m, sum(amount) AS s FROM shop.orders GROUP BY 1) n \
                   JOIN (SELECT date_trunc('month', ordered_on) AS m, count(*) AS c FROM shop.orders \
                         WHERE amount >= 1 GROUP BY 1) d ON d.m = n.m",
    },
    Case {
        name: "derived",
        metric: "revenue_per_unit",
        dimensions: &["order_date.month"],
        expected: "SELECT date_trunc('month', ordered_on), sum(amount) / sum(quantity) FROM shop.orders GROUP BY 1",
    },
    Case {
        name: "derived_over_a_ratio",
        metric: "twice_revenue_per_order",
        dimensions: &["order_date.month"],
        expected: "SELECT n.m, 2 * (CAST(n.s AS {ratio}) / d.c) FROM \
                   (SELECT date_trunc('month', ordered_on) AS m, sum(amount) AS s FROM shop.orders GROUP BY 1) n \
                   JOIN (SELECT date_trunc('month', ordered_on) AS m, count(*) AS c FROM shop.orders \
                         WHERE amount >= 1 GROUP BY 1) d ON d.m = n.m",
    },
    Case {
        name: "distinct_count",
        metric: "customers",
        dimensions: &["order_date.month"],
        expected: "SELECT date_trunc('month', ordered_on), count(DISTINCT customer_id) FROM shop.orders GROUP BY 1",
    },
    Case {
        name: "percentile",
        metric: "median_amount",
        dimensions: &["order_date.month"],
        expected: "SELECT date_trunc('month', ordered_on), {median} FROM shop.orders GROUP BY 1",
    },
    Case {
        name: "percentile_discrete",
        metric: "p75_amount",
        dimensions: &["order_date.month"],
        expected: "SELECT date_trunc('month', ordered_on), {p75} FROM shop.orders GROUP BY 1",
    },
    Case {
        name: "opaque",
        metric: "order_revenue",
        dimensions: &["order_id"],
        expected: "SELECT order_id, sum(amount) FROM shop.orders GROUP BY 1",
    },
    Case {
        name: "semi_additive_by_month",
        metric: "balance",
        dimensions: &["balance_date.month"],
        // Each month's last day with balances, summed over customers (January: 60 + 5).
        expected: "SELECT date_trunc('month', as_of), sum(balance) FROM shop.balances b \
                   WHERE as_of = (SELECT max(as_of) FROM shop.balances l \
                                  WHERE date_trunc('month', l.as_of) = date_trunc('month', b.as_of)) \
                   GROUP BY 1",
    },
    Case {
        name: "semi_additive_as_metricflow_by_customer",
        metric: "closing_balance",
        dimensions: &["customer"],
        // The last day of all, not each customer's: customer 7 has no balance on it.
        expected: "SELECT customer_id, sum(balance) FROM shop.balances \
                   WHERE as_of = (SELECT max(as_of) FROM shop.balances) GROUP BY 1",
    },
    Case {
        name: "semi_additive_as_metricflow_by_month",
        metric: "closing_balance",
        dimensions: &["metric_time.month"],
        expected: "SELECT date_trunc('month', as_of), sum(balance) FROM shop.balances b \
                   WHERE as_of = (SELECT max(as_of) FROM shop.balances l \
                                  WHERE date_trunc('month', l.as_of) = date_trunc('month', b.as_of)) \
                   GROUP BY 1",
    },
    Case {
        name: "semi_additive_within_groupings",
        metric: "latest_balance",
        dimensions: &[],
        // Each customer's own last day: 60 (January 31st) and 9 (February 28th).
        expected: "SELECT sum(balance) FROM shop.balances b \
                   WHERE as_of = (SELECT max(as_of) FROM shop.balances l WHERE l.customer_id = b.customer_id)",
    },
    Case {
        name: "metric_time_of_each_relation",
        metric: "net_revenue",
        dimensions: &["metric_time.month"],
        // Revenue by the month ordered, refunds by the month paid out; March has refunds only.
        expected: "SELECT coalesce(r.m, f.m), r.s - f.s FROM \
                   (SELECT date_trunc('month', ordered_on) AS m, sum(amount) AS s FROM shop.orders GROUP BY 1) r \
                   FULL JOIN (SELECT date_trunc('month', refunded_on) AS m, sum(amount) AS s FROM shop.refunds GROUP BY 1) f \
                   ON f.m = r.m",
    },
    Case {
        name: "metric_time_of_a_measure",
        metric: "units",
        dimensions: &["metric_time__day"],
        // Units are in time when shipped; one order has not shipped.
        expected: "SELECT date_trunc('day', shipped_on), sum(quantity) FROM shop.orders GROUP BY 1",
    },
    Case {
        name: "joined_to_the_time_spine",
        metric: "orders_daily",
        dimensions: &["metric_time"],
        // Every day of the calendar, 0 where nothing was ordered.
        expected: "SELECT c.d, coalesce(o.n, 0) FROM \
                   (SELECT DISTINCT date_trunc('day', day) AS d FROM shop.calendar) c \
                   LEFT JOIN (SELECT date_trunc('day', ordered_on) AS d, count(*) AS n FROM shop.orders GROUP BY 1) o \
                   ON o.d = c.d",
    },
    Case {
        name: "joined_to_the_time_spine_by_month",
        metric: "orders_daily",
        dimensions: &["metric_time.month", "order_id"],
        // December has no orders: a row of its own, without an order.
        expected: "SELECT c.d, o.i, coalesce(o.n, 0) FROM \
                   (SELECT DISTINCT date_trunc('month', day) AS d FROM shop.calendar) c \
                   LEFT JOIN (SELECT date_trunc('month', ordered_on) AS d, order_id AS i, count(*) AS n \
                              FROM shop.orders GROUP BY 1, 2) o \
                   ON o.d = c.d",
    },
    Case {
        name: "filled_without_the_time_spine",
        metric: "orders_daily",
        dimensions: &["order_id"],
        expected: "SELECT order_id, count(*) FROM shop.orders GROUP BY 1",
    },
    Case {
        name: "cumulative_over_a_window",
        metric: "revenue_last_3_days",
        dimensions: &["metric_time"],
        // Each day of the calendar with orders in the three days up to it.
        expected: "SELECT c.d, sum(o.amount) FROM (SELECT DISTINCT date_trunc('day', day) AS d FROM shop.calendar) c \
                   JOIN shop.orders o ON date_trunc('day', o.ordered_on) <= c.d \
                   AND date_trunc('day', o.ordered_on) > c.d - INTERVAL '3 day' GROUP BY 1",
    },
    Case {
        name: "cumulative_month_to_date",
        metric: "revenue_month_to_date",
        dimensions: &["metric_time", "order_date.month"],
        expected: "SELECT c.d, date_trunc('month', o.ordered_on), sum(o.amount) \
                   FROM (SELECT DISTINCT date_trunc('day', day) AS d FROM shop.calendar) c \
                   JOIN shop.orders o ON date_trunc('day', o.ordered_on) <= c.d \
                   AND date_trunc('day', o.ordered_on) >= date_trunc('month', c.d) GROUP BY 1, 2",
    },
    Case {
        name: "cumulative_by_month",
        metric: "revenue_to_date",
        dimensions: &["metric_time.month"],
        // Each month's first day with revenue to date: January 1st (10) and February 1st (45.5).
        expected: "SELECT date_trunc('month', c.d), sum(o.amount) \
                   FROM (SELECT min(d) AS d FROM (SELECT DISTINCT date_trunc('day', day) AS d FROM shop.calendar \
                         WHERE day >= (SELECT min(ordered_on) FROM shop.orders)) x GROUP BY date_trunc('month', d)) c \
                   JOIN shop.orders o ON date_trunc('day', o.ordered_on) <= c.d GROUP BY 1",
    },
    Case {
        name: "cumulative_joined_to_the_spine",
        metric: "revenue_last_3_days_filled",
        dimensions: &["metric_time"],
        // Every day of the calendar: 0 where no order falls in its three days.
        expected: "SELECT c.d, coalesce(sum(o.amount), 0) \
                   FROM (SELECT DISTINCT date_trunc('day', day) AS d FROM shop.calendar) c \
                   LEFT JOIN shop.orders o ON date_trunc('day', o.ordered_on) <= c.d \
                   AND date_trunc('day', o.ordered_on) > c.d - INTERVAL '3 day' GROUP BY 1",
    },
    Case {
        name: "cumulative_joined_to_the_spine_by_month",
        metric: "revenue_last_3_days_filled",
        dimensions: &["metric_time.month"],
        // Each month is its first calendar day's value, data or not: December 30th (0),
        // January 1st (10) and February 1st (0), not February 10th's 12.25.
        expected: "SELECT date_trunc('month', c.d), coalesce(sum(o.amount), 0) \
                   FROM (SELECT min(d) AS d FROM (SELECT DISTINCT date_trunc('day', day) AS d FROM shop.calendar) x \
                         GROUP BY date_trunc('month', d)) c \
                   LEFT JOIN shop.orders o ON date_trunc('day', o.ordered_on) <= c.d \
                   AND date_trunc('day', o.ordered_on) > c.d - INTERVAL '3 day' GROUP BY 1",
    },
    Case {
        name: "cumulative_averaged_over_the_spine_by_month",
        metric: "revenue_last_3_days_averaged",
        dimensions: &["metric_time.month"],
        // Each month is the average of all its calendar days, 0 on those without an order in
        // their three days, not of the days with orders alone.
        expected: "SELECT date_trunc('month', d), avg(v) \
                   FROM (SELECT c.d, coalesce(sum(o.amount), 0) AS v \
                         FROM (SELECT DISTINCT date_trunc('day', day) AS d FROM shop.calendar) c \
                         LEFT JOIN shop.orders o ON date_trunc('day', o.ordered_on) <= c.d \
                         AND date_trunc('day', o.ordered_on) > c.d - INTERVAL '3 day' GROUP BY 1) x \
                   GROUP BY 1",
    },
    Case {
        name: "cumulative_over_all_time_without_its_time",
        metric: "revenue_to_date",
        dimensions: &["order_id"],
        expected: "SELECT order_id, sum(amount) FROM shop.orders GROUP BY 1",
    },
    Case {
        name: "offset_by_a_window",
        metric: "revenue_prior_month",
        dimensions: &["metric_time.month"],
        expected: "SELECT c.m, sum(o.amount) FROM (SELECT DISTINCT date_trunc('month', day) AS m FROM shop.calendar) c \
                   JOIN shop.orders o ON date_trunc('month', o.ordered_on) = date_trunc('month', c.m - INTERVAL '1 month') \
                   GROUP BY 1",
    },
    Case {
        name: "offset_to_a_grain",
        metric: "revenue_month_start",
        dimensions: &["metric_time"],
        // Every January day of the calendar reads January 1st's revenue.
        expected: "SELECT c.d, sum(o.amount) FROM (SELECT DISTINCT date_trunc('day', day) AS d FROM shop.calendar) c \
                   JOIN shop.orders o ON date_trunc('day', o.ordered_on) = date_trunc('month', c.d) GROUP BY 1",
    },
    Case {
        name: "conversion_rate",
        metric: "refund_rate",
        dimensions: &["order_date.month"],
        // Each refund is the customer's latest order of at least 1 within 35 days before it:
        // January's order 2 converts (1 of 3); February's only order of at least 1 does not.
        expected: "SELECT b.m, CAST(c.n AS {ratio}) / b.n \
                   FROM (SELECT date_trunc('month', ordered_on) AS m, count(*) AS n FROM shop.orders \
                         WHERE amount >= 1 GROUP BY 1) b \
                   LEFT JOIN (SELECT date_trunc('month', o.ordered_on) AS m, count(*) AS n FROM shop.refunds r \
                         JOIN shop.orders o ON o.customer_id = r.customer_id AND o.ordered_on = \
                         (SELECT max(x.ordered_on) FROM shop.orders x WHERE x.customer_id = r.customer_id \
                          AND x.amount >= 1 AND x.ordered_on <= r.refunded_on \
                          AND x.ordered_on > r.refunded_on - INTERVAL '35 day') GROUP BY 1) c ON c.m = b.m",
    },
    Case {
        name: "conversions",
        metric: "refunded_after_order",
        dimensions: &["order_date.month"],
        // Customer 8's refund of order 3 counts for their later order 5 (February), as
        // MetricFlow counts it: January 30.00, February 3.25.
        expected: "SELECT date_trunc('month', o.ordered_on), sum(r.amount) FROM shop.refunds r \
                   JOIN shop.orders o ON o.customer_id = r.customer_id AND o.ordered_on = \
                   (SELECT max(x.ordered_on) FROM shop.orders x WHERE x.customer_id = r.customer_id \
                    AND x.ordered_on <= r.refunded_on) GROUP BY 1",
    },
    Case {
        name: "conversions_total",
        metric: "refunded_after_order",
        dimensions: &[],
        expected: "SELECT sum(amount) FROM shop.refunds",
    },
    Case {
        name: "default_grain",
        metric: "revenue_monthly",
        dimensions: &["metric_time"],
        expected: "SELECT date_trunc('month', ordered_on), sum(amount) FROM shop.orders GROUP BY 1",
    },
    Case {
        name: "custom_granularity",
        metric: "revenue",
        dimensions: &["metric_time.fiscal_month"],
        // February 10th and 11th are in March's fiscal month.
        expected: "SELECT CAST(date_trunc('month', ordered_on + INTERVAL '20 day') AS DATE), sum(amount) \
                   FROM shop.orders GROUP BY 1",
    },
    Case {
        name: "custom_granularity_of_a_ratio",
        metric: "revenue_per_order",
        dimensions: &["order_date.fiscal_month"],
        expected: "SELECT n.m, CAST(n.s AS {ratio}) / d.c FROM \
                   (SELECT CAST(date_trunc('month', ordered_on + INTERVAL '20 day') AS DATE) AS m, sum(amount) AS s \
                    FROM shop.orders GROUP BY 1) n \
                   JOIN (SELECT CAST(date_trunc('month', ordered_on + INTERVAL '20 day') AS DATE) AS m, count(*) AS c \
                    FROM shop.orders WHERE amount >= 1 GROUP BY 1) d ON d.m = n.m",
    },
    Case {
        name: "custom_granularity_of_a_cumulative",
        metric: "revenue_to_date",
        dimensions: &["metric_time.fiscal_month"],
        // Each fiscal month's first day with revenue to date: January 1st (10), January 12th
        // (45.50) and February 9th (45.50).
        expected: "SELECT c.fm, sum(o.amount) \
                   FROM (SELECT fiscal_month AS fm, min(day) AS d FROM shop.calendar \
                         WHERE day >= (SELECT min(ordered_on) FROM shop.orders) GROUP BY 1) c \
                   JOIN shop.orders o ON o.ordered_on <= c.d GROUP BY 1",
    },
    Case {
        name: "custom_granularity_of_an_offset",
        metric: "revenue_prior_month",
        dimensions: &["metric_time.fiscal_month"],
        // Each day reads the revenue of the same day a month before, added up in its fiscal
        // month: February 1st and 2nd read January's orders.
        expected: "SELECT c.fiscal_month, sum(o.amount) FROM shop.calendar c \
                   JOIN shop.orders o ON o.ordered_on = CAST(c.day - INTERVAL '1 month' AS DATE) GROUP BY 1",
    },
    Case {
        name: "custom_granularity_of_the_time_spine",
        metric: "orders_daily",
        dimensions: &["metric_time.fiscal_month"],
        // February's fiscal month has no orders: a row of its own, 0.
        expected: "SELECT c.fm, coalesce(o.n, 0) FROM (SELECT DISTINCT fiscal_month AS fm FROM shop.calendar) c \
                   LEFT JOIN (SELECT k.fiscal_month AS fm, count(*) AS n FROM shop.orders o \
                              JOIN shop.calendar k ON k.day = o.ordered_on GROUP BY 1) o ON o.fm = c.fm",
    },
    Case {
        name: "custom_granularity_of_a_conversion",
        metric: "refund_rate",
        dimensions: &["order_date.fiscal_month"],
        // January's fiscal month converts 1 of 3; March's one order of at least 1 does not.
        expected: "SELECT b.m, CAST(c.n AS {ratio}) / b.n \
                   FROM (SELECT k.fiscal_month AS m, count(*) AS n FROM shop.orders o \
                         JOIN shop.calendar k ON k.day = o.ordered_on WHERE amount >= 1 GROUP BY 1) b \
                   LEFT JOIN (SELECT k.fiscal_month AS m, count(*) AS n FROM shop.refunds r \
                         JOIN shop.orders o ON o.customer_id = r.customer_id AND o.ordered_on = \
                         (SELECT max(x.ordered_on) FROM shop.orders x WHERE x.customer_id = r.customer_id \
                          AND x.amount >= 1 AND x.ordered_on <= r.refunded_on \
                          AND x.ordered_on > r.refunded_on - INTERVAL '35 day') \
                         JOIN shop.calendar k ON k.day = o.ordered_on GROUP BY 1) c ON c.m = b.m",
    },
    Case {
        name: "custom_granularity_of_a_non_additive_measure",
        metric: "closing_balance",
        dimensions: &["metric_time.fiscal_month"],
        // Each fiscal month's last day with balances: January 1st (100), January 31st (60 + 5);
        // February 28th is past the calendar, in no fiscal month (9).
        expected: "SELECT k.fiscal_month, sum(b.balance) FROM shop.balances b \
                   LEFT JOIN shop.calendar k ON k.day = b.as_of \
                   WHERE b.as_of = (SELECT max(x.as_of) FROM shop.balances x \
                                    LEFT JOIN shop.calendar y ON y.day = x.as_of \
                                    WHERE y.fiscal_month IS NOT DISTINCT FROM k.fiscal_month) \
                   GROUP BY 1",
    },
    Case {
        name: "expression_dimensions",
        metric: "revenue",
        dimensions: &["is_large", "order_week_day.month"],
        expected: "SELECT amount >= 10, date_trunc('month', CAST(ordered_on AS timestamp)), sum(amount) \
                   FROM shop.orders GROUP BY 1, 2",
    },
    Case {
        name: "filter_over_dimensions",
        metric: "revenue_large",
        dimensions: &["order_date.month"],
        expected: "SELECT date_trunc('month', ordered_on), sum(amount) FROM shop.orders \
                   WHERE amount >= 10 AND ordered_on >= DATE '2026-01-02' GROUP BY 1",
    },
    Case {
        name: "semi_additive_total",
        metric: "balance",
        dimensions: &[],
        expected: "SELECT sum(balance) FROM shop.balances WHERE as_of = (SELECT max(as_of) FROM shop.balances)",
    },
];

/// The kinds project on a DuckDB file of its warehouse, in a temp dir, and the warehouse's SQL.
fn on_duckdb() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    kinds_in(dir.path(), "duckdb");
    let warehouse = std::fs::read_to_string(dir.path().join("warehouse.sql")).unwrap();
    duckdb_file(&dir.path().join("w.duckdb"), &warehouse);
    (dir, warehouse)
}

/// The kinds project on a new Postgres database `name` holding the same warehouse (`None`
/// where the tests have no Postgres, which `TestDb` fails under `CI=true`).
fn on_postgres(name: &str, warehouse: &str) -> Option<(TestDb, tempfile::TempDir)> {
    let db = TestDb::create(name)?;
    let pg = tempfile::tempdir().unwrap();
    kinds_in(pg.path(), "postgres");
    pg_exec(&db.url, warehouse);
    Some((db, pg))
}

fn kinds_in(root: &Path, engine: &str) -> Project {
    copy_tree(&repo().join("testdata/query/kinds"), root);
    let toml = std::fs::read_to_string(root.join("sqb.toml")).unwrap();
    let toml = toml.replace("engine = \"duckdb\"", &format!("engine = \"{engine}\""));
    std::fs::write(root.join("sqb.toml"), toml).unwrap();
    let project = Project::load(root).unwrap();
    assert!(project.diagnostics.is_empty(), "{:#?}", project.diagnostics);
    project
}

fn compiled(project: &Project, case: &Case) -> String {
    let request = QueryRequest {
        metrics: vec![case.metric.to_string()],
        dimensions: case.dimensions.iter().map(|d| d.to_string()).collect(),
        ..QueryRequest::default()
    };
    let namespace = Namespace {
        database: None,
        schema: "shop".into(),
    };
    compile(project, &namespace, &request)
        .unwrap_or_else(|r| panic!("{}: {r:?}", case.name))
        .sql
}

/// Rows in one and not the other, either way, counting duplicates.
fn difference(compiled: &str, expected: &str) -> String {
    format!(
        "SELECT count(*) FROM (\
         (SELECT * FROM ({compiled}) a EXCEPT ALL SELECT * FROM ({expected}) b) \
         UNION ALL \
         (SELECT * FROM ({expected}) c EXCEPT ALL SELECT * FROM ({compiled}) d)) x"
    )
}

/// `sqb query --sql` of every case, in one transcript.
fn sql_transcript(root: &Path) -> String {
    CASES
        .iter()
        .map(|case| {
            let mut cmd = sqb();
            cmd.current_dir(root)
                .args(["query", "--sql", "-m", case.metric]);
            for d in case.dimensions {
                cmd.args(["-d", d]);
            }
            format!("# {}\n{}", case.name, transcript(&run(&mut cmd), root))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_kind_returns_the_hand_written_rows_on_duckdb() {
    let dir = tempfile::tempdir().unwrap();
    let project = kinds_in(dir.path(), "duckdb");
    let db = dir.path().join("w.duckdb");
    let warehouse = std::fs::read_to_string(dir.path().join("warehouse.sql")).unwrap();
    duckdb_file(&db, &warehouse);
    let conn = duckdb::Connection::open(&db).unwrap();
    for case in CASES {
        let sql = compiled(&project, case);
        let expected = case
            .expected
            .replace("{ratio}", "double")
            .replace("{median}", "quantile_cont(amount, 0.5)")
            .replace("{p75}", "quantile_disc(amount, 0.75)");
        let rows: i64 = conn
            .query_row(&format!("SELECT count(*) FROM ({sql})"), [], |r| r.get(0))
            .unwrap_or_else(|e| panic!("{}: {e}\n{sql}", case.name));
        assert!(rows > 0, "{}: no rows", case.name);
        let diff: i64 = conn
            .query_row(&difference(&sql, &expected), [], |r| r.get(0))
            .unwrap_or_else(|e| panic!("{}: {e}", case.name));
        assert_eq!(diff, 0, "{}: rows differ\n{sql}", case.name);
    }
    drop(conn);
    insta::assert_snapshot!(sql_transcript(dir.path()));
}

#[test]
fn every_kind_returns_the_hand_written_rows_on_postgres() {
    let Some(db) = TestDb::create("query_kinds") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let project = kinds_in(dir.path(), "postgres");
    pg_exec(
        &db.url,
        &std::fs::read_to_string(dir.path().join("warehouse.sql")).unwrap(),
    );
    for case in CASES {
        let sql = compiled(&project, case);
        let expected = case
            .expected
            .replace("{ratio}", "numeric")
            .replace(
                "{median}",
                "percentile_cont(0.5) WITHIN GROUP (ORDER BY amount)",
            )
            .replace(
                "{p75}",
                "percentile_disc(0.75) WITHIN GROUP (ORDER BY amount)",
            );
        let count = pg_strings(&db.url, &format!("SELECT count(*)::text FROM ({sql}) q"));
        assert_ne!(count, ["0"], "{}: no rows", case.name);
        let diff = pg_strings(
            &db.url,
            &format!("SELECT ({})::text", difference(&sql, &expected)),
        );
        assert_eq!(diff, ["0"], "{}: rows differ\n{sql}", case.name);
    }
    insta::assert_snapshot!(sql_transcript(dir.path()));
}

#[test]
fn a_zero_denominator_is_refused_on_both_engines() {
    // February 11th's only order is below the denominator's population (amount >= 1).
    let args = [
        "query",
        "-m",
        "revenue_per_order",
        "--filter",
        "order_date = '2026-02-11'",
        "--format",
        "json",
    ];
    let (dir, warehouse) = on_duckdb();
    let out = run(sqb().current_dir(dir.path()).args(args));
    let duck = transcript(&out, dir.path());
    assert_eq!(out.status.code(), Some(21), "{duck}");
    insta::assert_snapshot!(duck);
    // A day with a denominator is served.
    let out = run(sqb().current_dir(dir.path()).args([
        "query",
        "-m",
        "revenue_per_order",
        "--filter",
        "order_date = '2026-02-10'",
    ]));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        transcript(&out, dir.path())
    );
    let Some((db, pg)) = on_postgres("query_zero", &warehouse) else {
        return;
    };
    let out = run(sqb()
        .current_dir(pg.path())
        .env("SQB_DATABASE_URL", &db.url)
        .args(args));
    assert_eq!(
        out.status.code(),
        Some(21),
        "{}",
        transcript(&out, pg.path())
    );
}

/// A filter on the time of a metric joined to the time spine would have to filter the spine's
/// points too: refused (exit 15), never answered with points the filter excludes; on another
/// dimension it is served. A cumulative metric over a window, asked without its time, is
/// refused too.
#[test]
fn a_time_filter_on_a_spine_metric_filters_its_points() {
    let (dir, _) = on_duckdb();
    let ask = |filter: &str| {
        run(sqb().current_dir(dir.path()).args([
            "query",
            "--format",
            "csv",
            "-m",
            "orders_daily",
            "-d",
            "metric_time",
            "--filter",
            filter,
        ]))
    };
    // As MetricFlow filters it: the spine's points before the 2nd and after the 4th are gone,
    // the 3rd is there with 0.
    let out = ask("metric_time >= DATE '2026-01-02' AND metric_time.month < DATE '2026-02-01' AND metric_time <= DATE '2026-01-04'");
    let text = transcript(&out, dir.path());
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "metric_time,orders_daily\n2026-01-02T00:00:00,2\n2026-01-03T00:00:00,0\n2026-01-04T00:00:00,0\n",
        "{text}"
    );
    // On its time and on something else: refused, never half applied.
    let out = ask("metric_time >= DATE '2026-01-02' OR order_id > 1");
    let text = transcript(&out, dir.path());
    assert_eq!(out.status.code(), Some(15), "{text}");
    assert!(
        text.contains("is on its time and on something else"),
        "{text}"
    );
    // On another time dimension of its relation: refused.
    let out = ask("ship_date >= DATE '2026-01-02'");
    let text = transcript(&out, dir.path());
    assert_eq!(out.status.code(), Some(15), "{text}");
    assert!(
        text.contains("joins to the time spine, and the filter"),
        "{text}"
    );
    let out = ask("order_id > 1");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        transcript(&out, dir.path())
    );
    // A window without its time, as MetricFlow refuses it.
    let out = run(sqb().current_dir(dir.path()).args([
        "query",
        "-m",
        "revenue_last_3_days",
        "-d",
        "order_id",
    ]));
    let text = transcript(&out, dir.path());
    assert_eq!(out.status.code(), Some(15), "{text}");
    assert!(
        text.contains("adds up over a window of time, and the query does not group by its time"),
        "{text}"
    );
}

/// `metric(name, entity)` in a filter: the metric's value for each row's entity, computed on
/// its own (with its own population filter) and joined in, as MetricFlow reads
/// `{{ Metric('orders', group_by=['customer']) }}`; held to hand-written SQL on both engines.
#[test]
fn a_metric_in_a_filter_is_read_for_each_rows_entity() {
    let cases: &[(&str, &[&str], &str, &str)] = &[
        (
            "revenue",
            &["order_date.month"],
            "metric(orders, customer) >= 2",
            // Customer 7 has two orders of at least 1; 8 and 9 have one each.
            "SELECT date_trunc('month', o.ordered_on), sum(o.amount) FROM shop.orders o \
             LEFT JOIN (SELECT customer_id, count(*) AS n FROM shop.orders WHERE amount >= 1 GROUP BY 1) m \
             ON m.customer_id = o.customer_id WHERE m.n >= 2 GROUP BY 1",
        ),
        (
            "refunds",
            &["customer"],
            "{{ Metric('revenue', group_by=['customer']) }} > 10 OR customer = 8",
            // Over another relation: customers 7 (40.00) and 9 (12.25) bought more than 10.
            "SELECT r.customer_id, sum(r.amount) FROM shop.refunds r \
             LEFT JOIN (SELECT customer_id, sum(amount) AS s FROM shop.orders GROUP BY 1) m \
             ON m.customer_id = r.customer_id WHERE m.s > 10 OR r.customer_id = 8 GROUP BY 1",
        ),
    ];
    let compile_case =
        |project: &Project, (metric, dims, filter, _): &(&str, &[&str], &str, &str)| {
            let request = QueryRequest {
                metrics: vec![metric.to_string()],
                dimensions: dims.iter().map(|d| d.to_string()).collect(),
                filters: vec![filter.to_string()],
                ..QueryRequest::default()
            };
            let namespace = Namespace {
                database: None,
                schema: "shop".into(),
            };
            compile(project, &namespace, &request)
                .unwrap_or_else(|r| panic!("{filter}: {r:?}"))
                .sql
        };
    let dir = tempfile::tempdir().unwrap();
    let project = kinds_in(dir.path(), "duckdb");
    let db = dir.path().join("w.duckdb");
    duckdb_file(
        &db,
        &std::fs::read_to_string(dir.path().join("warehouse.sql")).unwrap(),
    );
    let conn = duckdb::Connection::open(&db).unwrap();
    for case in cases {
        let sql = compile_case(&project, case);
        let rows: i64 = conn
            .query_row(&format!("SELECT count(*) FROM ({sql})"), [], |r| r.get(0))
            .unwrap_or_else(|e| panic!("{}: {e}\n{sql}", case.2));
        assert!(rows > 0, "{}: no rows", case.2);
        let diff: i64 = conn
            .query_row(&difference(&sql, case.3), [], |r| r.get(0))
            .unwrap();
        assert_eq!(diff, 0, "{}: rows differ\n{sql}", case.2);
    }
    drop(conn);
    if let Some(db) = TestDb::create("query_kinds_metric_filter") {
        let pg = tempfile::tempdir().unwrap();
        let project = kinds_in(pg.path(), "postgres");
        pg_exec(
            &db.url,
            &std::fs::read_to_string(pg.path().join("warehouse.sql")).unwrap(),
        );
        for case in cases {
            let sql = compile_case(&project, case);
            let diff = pg_strings(
                &db.url,
                &format!("SELECT ({})::text", difference(&sql, case.3)),
            );
            assert_eq!(diff, ["0"], "{}: rows differ\n{sql}", case.2);
        }
    }
    // What cannot be read is refused, never dropped from the filter.
    for (filter, code, says) in [
        (
            "metric(nope, customer) > 1",
            10,
            "no metric is named `nope`",
        ),
        (
            "metric(orders) > 1",
            20,
            "`metric` takes a metric's name and an entity's",
        ),
        ("metric(orders, nope) > 1", 10, "nope"),
        ("__sqb_metric_0__ > 1", 20, "which sqb keeps for itself"),
    ] {
        let out = run(sqb()
            .current_dir(dir.path())
            .args(["query", "-m", "revenue", "--filter", filter]));
        let text = transcript(&out, dir.path());
        assert_eq!(out.status.code(), Some(code), "{filter}: {text}");
        assert!(text.contains(says), "{filter}: {text}");
    }
}

/// A filter on the time of a metric offset in time filters the offset points, not the rows
/// they read, as MetricFlow reads it: February's point reads January's revenue although the
/// filter excludes January's orders. On its time and on something else: refused. The same on
/// Postgres.
#[test]
fn a_time_filter_on_an_offset_metric_filters_the_offset_points() {
    let ask = |dir: &Path, url: Option<&str>, filter: Option<&str>| {
        let mut cmd = sqb();
        cmd.current_dir(dir).args([
            "query",
            "--format",
            "csv",
            "-m",
            "revenue_prior_month",
            "-d",
            "metric_time.month",
        ]);
        if let Some(url) = url {
            cmd.env("SQB_DATABASE_URL", url);
        }
        if let Some(filter) = filter {
            cmd.args(["--filter", filter]);
        }
        run(&mut cmd)
    };
    let from_february = "metric_time >= DATE '2026-02-01'";
    let (dir, warehouse) = on_duckdb();
    let out = ask(dir.path(), None, Some(from_february));
    let text = transcript(&out, dir.path());
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "metric_time.month,revenue_prior_month\n2026-02-01T00:00:00,45.50\n",
        "{text}"
    );
    let out = ask(
        dir.path(),
        None,
        Some("metric_time >= DATE '2026-02-01' OR order_id > 1"),
    );
    let text = transcript(&out, dir.path());
    assert_eq!(out.status.code(), Some(15), "{text}");
    assert!(
        text.contains("is offset in time, and the filter") && text.contains("on something else"),
        "{text}"
    );
    let Some((db, pg)) = on_postgres("query_offset_points", &warehouse) else {
        return;
    };
    let all = ask(pg.path(), Some(&db.url), None);
    let filtered = ask(pg.path(), Some(&db.url), Some(from_february));
    assert_eq!(
        filtered.status.code(),
        Some(0),
        "{}",
        transcript(&filtered, pg.path())
    );
    let all = String::from_utf8_lossy(&all.stdout).into_owned();
    let kept: Vec<&str> = all.lines().filter(|l| !l.starts_with("2026-01")).collect();
    assert_eq!(kept.len(), 2, "{all}");
    assert_eq!(
        String::from_utf8_lossy(&filtered.stdout),
        format!("{}\n", kept.join("\n"))
    );
}

/// `--order-by` orders by a metric or dimension asked (`-` first for descending) before the
/// dimensions, `--limit` keeps the first rows; an order naming no column is refused. The same
/// on Postgres.
#[test]
fn the_rows_are_ordered_and_limited_as_asked() {
    let ask = |dir: &Path, url: Option<&str>, order: &str| {
        let mut cmd = sqb();
        cmd.current_dir(dir).args([
            "query",
            "--format",
            "csv",
            "-m",
            "revenue",
            "-d",
            "order_id",
            "--order-by",
            order,
            "--limit",
            "2",
        ]);
        if let Some(url) = url {
            cmd.env("SQB_DATABASE_URL", url);
        }
        run(&mut cmd)
    };
    let top = "order_id,revenue\n2,30.00\n4,12.25\n";
    let (dir, warehouse) = on_duckdb();
    let out = ask(dir.path(), None, "-revenue");
    let text = transcript(&out, dir.path());
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), top, "{text}");
    let out = ask(dir.path(), None, "order_id");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "order_id,revenue\n1,10.00\n2,30.00\n"
    );
    // More rows than a BIGINT counts is no limit at all.
    let out = run(sqb().current_dir(dir.path()).args([
        "query",
        "--format",
        "csv",
        "-m",
        "revenue",
        "--limit",
        &u64::MAX.to_string(),
    ]));
    let text = transcript(&out, dir.path());
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "revenue\n58.50\n",
        "{text}"
    );
    let out = ask(dir.path(), None, "-revenu");
    let text = transcript(&out, dir.path());
    assert_eq!(out.status.code(), Some(10), "{text}");
    assert!(
        text.contains("the order `-revenu` names no column of the query"),
        "{text}"
    );
    let Some((db, pg)) = on_postgres("query_order", &warehouse) else {
        return;
    };
    let out = ask(pg.path(), Some(&db.url), "-revenue");
    let text = transcript(&out, pg.path());
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), top, "{text}");
}
