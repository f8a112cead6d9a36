//! MetricFlow's semantic layer through `sqb import dbt`, proven against MetricFlow itself: the
//! dbt project testdata/dbt/semantic was built by real dbt and asked the questions of its
//! mf-queries.txt by real MetricFlow (`mf query`, scripts/dbt-fixture), and `sqb query` on the
//! imported project must answer each the same on the same DuckDB file. Every metric of the
//! project is either bound and asked, or named in the import's report.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use common::{run, sqb, transcript};
use serde_json::Value;

fn fixture() -> PathBuf {
    common::repo().join("testdata/dbt/semantic")
}

/// The import of the fixture, with the warehouse dbt built beside its sqb.toml.
fn imported(dir: &Path) -> (PathBuf, Value) {
    let out = dir.join("out");
    let result = run(sqb()
        .args(["import", "dbt", "--format", "json"])
        .arg(fixture())
        .arg("--out")
        .arg(&out));
    assert_eq!(
        result.status.code(),
        Some(0),
        "{}",
        transcript(&result, dir)
    );
    std::fs::copy(
        fixture().join("target/semantic.duckdb"),
        out.join("semantic.duckdb"),
    )
    .unwrap();
    (out, serde_json::from_slice(&result.stdout).unwrap())
}

/// One question of mf-queries.txt: its line number, and its metrics, group-by items and where
/// filter, or the saved query it asks.
struct Question {
    line: usize,
    metrics: Vec<String>,
    group_by: Vec<String>,
    filter: Option<String>,
    saved: Option<String>,
}

/// Metrics the import does not carry, asked of MetricFlow anyway to record why
/// ([`metricflow_applies_no_input_measure_s_filter_to_a_conversion_metric`]).
const NOT_CARRIED: &[&str] = &["smb_refund_rate", "damaged_refund_rate"];

fn questions() -> Vec<Question> {
    let text = std::fs::read_to_string(fixture().join("mf-queries.txt")).unwrap();
    let list = |s: &str| -> Vec<String> {
        s.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect()
    };
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'))
        // A `postgres:` line is answered by MetricFlow on PostgreSQL; sqb answers it as any
        // other, from the same rows.
        .map(|(i, l)| (i, l.strip_prefix("postgres:").unwrap_or(l)))
        .map(|(i, l)| match l.strip_prefix("saved:") {
            Some(name) => Question {
                line: i + 1,
                metrics: Vec::new(),
                group_by: Vec::new(),
                filter: None,
                saved: Some(name.trim().to_string()),
            },
            None => {
                let mut parts = l.split('|');
                Question {
                    line: i + 1,
                    metrics: list(parts.next().unwrap()),
                    group_by: list(parts.next().unwrap()),
                    filter: parts.next().map(|f| f.trim().to_string()),
                    saved: None,
                }
            }
        })
        .collect()
}

/// What an output column holds, whoever names it: `entity__dimension` and `join.dimension` are
/// the dimension; `metric_time__month` (asked as MetricFlow spells it) is `metric_time.month`,
/// and so is `ordered_at.month`, which a saved query of the orders asks for it.
fn column_key(header: &str) -> String {
    if let Some(grain) = header
        .strip_prefix("metric_time__")
        .or_else(|| header.strip_prefix("ordered_at."))
    {
        return format!("metric_time.{grain}");
    }
    // sqb names a column as it was asked: MetricFlow's spelling reads as the dotted one.
    let header = header.replace("__", ".");
    match header.rsplit_once('.') {
        Some((_, grain)) if GRAINS.contains(&grain) => header.to_string(),
        Some((_, dim)) => dim.to_string(),
        None => header,
    }
}

const GRAINS: &[&str] = &["hour", "day", "week", "month", "quarter", "year"];

/// A value as both print it: a number by its value (a double bit for bit, a decimal exactly,
/// as MetricFlow's CSV prints decimals as Python floats), a time with a space for its `T`, a
/// boolean in lower case (Python prints `True`), NULL empty.
fn value(text: &str) -> String {
    if let Ok(n) = text.parse::<f64>() {
        return format!("{:?}", n.to_bits());
    }
    match text {
        "True" | "False" => return text.to_lowercase(),
        _ => {}
    }
    let is_time =
        text.len() > 10 && text.as_bytes()[10] == b'T' && text[..4].parse::<u16>().is_ok();
    // MetricFlow's CSV prints a DATE (a custom granularity's period, read from the time
    // spine as it is) as a timestamp at midnight.
    let is_date = text.len() == 10
        && text.as_bytes()[4] == b'-'
        && text.as_bytes()[7] == b'-'
        && text[..4].parse::<u16>().is_ok();
    match (is_time, is_date) {
        (true, _) => text.replacen('T', " ", 1),
        (_, true) => format!("{text} 00:00:00"),
        _ => text.to_string(),
    }
}

/// The rows of `csv` with their columns in the order of `keys` (by [`column_key`]), and
/// the header's keys.
fn rows(csv: &str, keys: &[String]) -> (Vec<String>, BTreeSet<Vec<String>>) {
    let mut reader = csv::ReaderBuilder::new().from_reader(csv.as_bytes());
    let header: Vec<String> = reader.headers().unwrap().iter().map(column_key).collect();
    let order: Vec<usize> = keys
        .iter()
        .map(|k| header.iter().position(|h| h == k).unwrap_or(usize::MAX))
        .collect();
    let rows = reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            order
                .iter()
                .map(|&i| r.get(i).map(value).unwrap_or_default())
                .collect()
        })
        .collect();
    (header, rows)
}

/// The metric columns MetricFlow answered with integers: every value printed without a point
/// (Python prints a float or a decimal with one), and at least one value.
fn integer_columns(csv: &str) -> Vec<String> {
    let mut reader = csv::ReaderBuilder::new().from_reader(csv.as_bytes());
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    let records: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    header
        .iter()
        .enumerate()
        .filter(|(i, h)| {
            let values: Vec<&str> = records.iter().filter_map(|r| r.get(*i)).collect();
            !h.contains("__")
                && values.iter().any(|v| !v.is_empty())
                && values
                    .iter()
                    .all(|v| v.is_empty() || v.parse::<i64>().is_ok())
        })
        .map(|(_, h)| h.clone())
        .collect()
}

/// A count (MetricFlow's integer) comes back typed as an integer, with integer values: DuckDB's
/// `sum` of integers is a HUGEINT, which its Arrow result carries as DECIMAL(38,0).
#[test]
fn integer_answers_are_typed_as_integers() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, _) = imported(tmp.path());
    let mut checked = 0;
    for q in questions().iter().filter(|q| q.saved.is_none()) {
        let expected =
            std::fs::read_to_string(fixture().join(format!("target/mf/{}.csv", q.line))).unwrap();
        let integers = integer_columns(&expected);
        let wanted: Vec<&String> = q.metrics.iter().filter(|m| integers.contains(m)).collect();
        if wanted.is_empty() || wanted.iter().any(|m| NOT_CARRIED.contains(&m.as_str())) {
            continue;
        }
        let mut cmd = sqb();
        cmd.arg("--project-dir")
            .arg(&out)
            .args(["-q", "query", "--format", "json"]);
        for m in &wanted {
            cmd.args(["--metric", m]);
        }
        // Grouped as the question is: an offset metric is refused without its time.
        for g in &q.group_by {
            cmd.args(["--dimension", g]);
        }
        let result = run(&mut cmd);
        assert_eq!(
            result.status.code(),
            Some(0),
            "{}",
            transcript(&result, tmp.path())
        );
        let answer: Value = serde_json::from_slice(&result.stdout).unwrap();
        let metrics = answer["columns"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| wanted.iter().any(|m| c["name"] == m.as_str()));
        for column in metrics {
            assert_eq!(column["type"], "integer", "line {}: {column}", q.line);
            let name = column["name"].as_str().unwrap();
            for row in answer["rows"].as_array().unwrap() {
                assert!(row[name].is_i64() || row[name].is_null(), "{row}");
            }
            checked += 1;
        }
    }
    assert!(checked >= 2, "only {checked} integer answers checked");
}

#[test]
fn every_bound_metric_answers_as_mf_query_does() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, _) = imported(tmp.path());
    for q in questions() {
        if q.metrics.iter().any(|m| NOT_CARRIED.contains(&m.as_str())) {
            continue;
        }
        let expected = std::fs::read_to_string(fixture().join(format!("target/mf/{}.csv", q.line)))
            .unwrap_or_else(|e| panic!("line {}: {e}: run scripts/dbt-fixture semantic", q.line));
        let mut cmd = sqb();
        cmd.arg("--project-dir")
            .arg(&out)
            .args(["-q", "query", "--format", "csv"]);
        if let Some(saved) = &q.saved {
            cmd.args(["--saved", saved]);
        }
        for m in &q.metrics {
            cmd.args(["--metric", m]);
        }
        for g in &q.group_by {
            cmd.args(["--dimension", g]);
        }
        if let Some(filter) = &q.filter {
            cmd.args(["--filter", filter]);
        }
        let result = run(&mut cmd);
        let shown = transcript(&result, tmp.path());
        assert_eq!(result.status.code(), Some(0), "line {}: {shown}", q.line);
        let sqb_csv = String::from_utf8(result.stdout).unwrap();
        let (mut keys, _) = rows(&sqb_csv, &[]);
        keys.sort();
        let (_, sqb_rows) = rows(&sqb_csv, &keys);
        // `metric_time` asked without a grain: MetricFlow names the column with the grain it
        // chose (`metric_time__month`), sqb as it was asked; the values must be the same.
        let expected = match q.group_by.iter().any(|g| g == "metric_time") {
            true => bare_metric_time(&expected),
            false => expected,
        };
        let (mut mf_keys, mf_rows) = rows(&expected, &keys);
        mf_keys.sort();
        assert_eq!(mf_keys, keys, "line {}: the columns differ", q.line);
        assert!(
            !mf_rows.is_empty(),
            "line {}: MetricFlow answered nothing",
            q.line
        );
        assert_eq!(sqb_rows, mf_rows, "line {}", q.line);
    }
}

/// A MetricFlow CSV whose `metric_time__<grain>` column is named `metric_time`.
fn bare_metric_time(csv: &str) -> String {
    let (header, body) = csv.split_once('\n').unwrap_or((csv, ""));
    let header: Vec<&str> = header
        .split(',')
        .map(|h| match h.strip_prefix("metric_time__") {
            Some(grain) if GRAINS.contains(&grain) => "metric_time",
            _ => h,
        })
        .collect();
    format!("{}\n{body}", header.join(","))
}

/// `metric_time` is each measure's agg time dimension; where the import could not carry it
/// (the customers' `first_seen` is an expression), sqb refuses it for their metrics and says
/// what to declare, and the import's report says so too. A misspelt dimension behind an entity
/// is refused with the name it meant.
#[test]
fn metric_time_without_an_agg_time_dimension_is_refused_with_what_to_declare() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, _) = imported(tmp.path());
    // The customers' time is an expression, carried as one; without the sidecar's
    // `agg_time_dimension` their measures have no time.
    let sidecar = out.join("models/marts/customers.toml");
    let text = std::fs::read_to_string(&sidecar).unwrap();
    assert!(
        text.contains("expr = \"cast('2024-01-01' as date)\""),
        "{text}"
    );
    let without = text.replace("agg_time_dimension = \"first_seen\"\n", "");
    assert_ne!(without, text);
    std::fs::write(&sidecar, without).unwrap();
    let ask_for = |metric: &str, dimension: &str| {
        run(sqb().arg("--project-dir").arg(&out).args([
            "query",
            "--sql",
            "--metric",
            metric,
            "--dimension",
            dimension,
        ]))
    };
    let ask = |dimension: &str| ask_for("revenue", dimension);
    for spelled in ["metric_time__month", "metric_time.month", "metric_time"] {
        let refused = ask_for("enterprise_customers", spelled);
        let text = transcript(&refused, tmp.path());
        assert_eq!(refused.status.code(), Some(10), "{text}");
        assert!(
            text.contains(&format!("`{spelled}` is the time of each measure, and model `customers` names no `agg_time_dimension`")),
            "{text}"
        );
        assert_eq!(ask(spelled).status.code(), Some(0), "{spelled}");
    }
    let refused = ask("metric_time__fortnight");
    let text = transcript(&refused, tmp.path());
    assert_eq!(refused.status.code(), Some(10), "{text}");
    assert!(
        text.contains("the grain `fortnight`, which is none"),
        "{text}"
    );
    let refused = ask("customer__segmnt");
    let text = transcript(&refused, tmp.path());
    assert_eq!(refused.status.code(), Some(10), "{text}");
    assert!(text.contains("did you mean `segment`?"), "{text}");
    assert_eq!(ask("customer__segment").status.code(), Some(0));
    assert_eq!(ask("order_id__status").status.code(), Some(0));
}

/// A `--filter` in MetricFlow's template form answers as the same filter in sqb's names, on the
/// imported warehouse; what a query filter cannot say is refused as `invalid_filter`.
#[test]
fn metricflow_template_filters_answer_as_sqb_names_do() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, _) = imported(tmp.path());
    let ask = |filter: &str| {
        run(sqb()
            .arg("--project-dir")
            .arg(&out)
            .args(["-q", "query", "--format", "csv", "--metric", "revenue"])
            .args(["--dimension", "customer__segment", "--filter", filter]))
    };
    let unfiltered = ask("TRUE");
    assert_eq!(unfiltered.status.code(), Some(0));
    for (template, plain) in [
        (
            "{{ Dimension('customer__segment') }} = 'enterprise'",
            "customer.segment = 'enterprise'",
        ),
        (
            "{{ TimeDimension('order_id__ordered_at', 'month') }} >= DATE '2024-02-01'",
            "ordered_at.month >= DATE '2024-02-01'",
        ),
        (
            "{{ Dimension('order_id__status') }} <> 'returned' AND {{ Dimension('customer__segment') }} IS NOT NULL",
            "status <> 'returned' AND customer.segment IS NOT NULL",
        ),
        (
            "{{ TimeDimension('metric_time', 'month') }} >= DATE '2024-02-01'",
            "ordered_at.month >= DATE '2024-02-01'",
        ),
        ("{{ Entity('customer') }} = 3", "customer = 3"),
        (
            "{{ Metric('order_count', group_by=['customer']) }} >= 3",
            "metric(order_count, customer) >= 3",
        ),
    ] {
        let (templated, plained) = (ask(template), ask(plain));
        let shown = transcript(&templated, tmp.path());
        assert_eq!(templated.status.code(), Some(0), "{template}: {shown}");
        assert_eq!(plained.status.code(), Some(0), "{plain}");
        assert_eq!(templated.stdout, plained.stdout, "{template}");
        assert_ne!(templated.stdout, unfiltered.stdout, "{template} filtered nothing");
    }
    for refused in [
        "{{ Entity('customer', 'x') }} = 3",
        "{{ Metric('revenue') }} > 3",
        "{{ Metric('revenue', group_by=['customer', 'order_id']) }} > 3",
    ] {
        let out = ask(refused);
        let shown = transcript(&out, tmp.path());
        assert!(
            matches!(out.status.code(), Some(10) | Some(20)),
            "{refused}: {shown}"
        );
    }
}

#[test]
fn every_metric_is_asked_or_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, report) = imported(tmp.path());
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(fixture().join("target/manifest.json")).unwrap(),
    )
    .unwrap();
    let reported: BTreeSet<&str> = report["not_carried_over"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "metric" && e["carried"] == "not")
        .map(|e| e["node"].as_str().unwrap())
        .collect();
    let asked: BTreeSet<String> = questions().into_iter().flat_map(|q| q.metrics).collect();
    for (id, metric) in manifest["metrics"].as_object().unwrap() {
        let name = metric["name"].as_str().unwrap();
        let bound = out.join(format!("contracts/metrics/{name}.toml")).exists();
        assert!(
            bound != reported.contains(id.as_str()),
            "`{name}` must be bound or reported, not both or neither"
        );
        assert!(
            !bound || asked.contains(name),
            "`{name}` is bound but no question of mf-queries.txt asks for it"
        );
        if !bound {
            // Asked for anyway, it is refused with the import's reason, from its record.
            let asked = run(sqb()
                .arg("--project-dir")
                .arg(&out)
                .args(["query", "--sql", "--metric", name]));
            let text = transcript(&asked, tmp.path());
            assert_eq!(asked.status.code(), Some(10), "{text}");
            assert!(
                text.contains(&format!(
                    "hint: `sqb import dbt` did not carry the dbt metric `{name}` over: `{name}`"
                )),
                "{text}"
            );
        }
    }
    for (id, saved) in manifest["saved_queries"].as_object().unwrap() {
        let name = saved["name"].as_str().unwrap();
        let written = out.join(format!("contracts/queries/{name}.toml")).exists();
        let refused = report["not_carried_over"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["node"] == id.as_str() && e["carried"] == "not");
        assert!(
            written != refused,
            "saved query `{name}`: written {written}, refused {refused}"
        );
    }
    // A default grain is carried as the binding's `time_granularity`.
    let monthly =
        std::fs::read_to_string(out.join("contracts/metrics/monthly_revenue.toml")).unwrap();
    assert!(
        monthly.contains("time_granularity = \"month\""),
        "{monthly}"
    );
    // Besides the project's metrics, the filtered or offset inputs of ratios and derived metrics.
    let mut files: Vec<String> = std::fs::read_dir(out.join("contracts/metrics"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let copies: Vec<&String> = files.iter().filter(|f| f.contains("__")).collect();
    assert_eq!(
        copies,
        [
            "enterprise_net_revenue__refunds.toml",
            "enterprise_net_revenue__revenue.toml",
            "large_completed_share__denominator.toml",
            "large_completed_share__numerator.toml",
            "large_order_revenue__revenue.toml",
            "large_order_share__numerator.toml",
            "large_orders_filled__orders_filled.toml",
            "large_revenue_growth__revenue.toml",
            "large_revenue_growth__revenue_prior_month.toml",
            "orders_filled_growth__orders_filled_month_before.toml",
            "revenue_growth__revenue_prior_month.toml",
            "revenue_vs_month_start__first_day_revenue.toml",
            "revenue_vs_week_before__week_before.toml",
            "spring_revenue_growth__revenue.toml",
            "spring_revenue_growth__revenue_prior_month.toml",
        ]
    );
    assert_eq!(
        (files.len() - copies.len(), reported.len()),
        (55, 3),
        "bound and reported metrics: {report:#}"
    );
}

/// The fixture's conversion metrics, asked together. MetricFlow answers each alone (the
/// `postgres:` lines of mf-queries.txt); asked together, MetricFlow 0.211's shared plan moves
/// its `GEN_RANDOM_UUID()` row key into every window's PARTITION BY and counts each (order,
/// refund request) pair, so these answers are worked out by hand from migrations/raw.sql under
/// MetricFlow's rule, which tests/query_kinds.rs also holds to hand-written SQL on both engines.
const CONVERSIONS: &[&str] = &[
    "refund_request_rate",
    "refund_requests_after_order",
    "same_order_refund_rate",
    "completed_order_refund_rate",
];

/// Conversion metrics as the import binds them answer as MetricFlow counts conversions: each
/// refund request counts once, for the customer's latest order at or before its day (within
/// the window; of the same order with the constant property; of a completed order with the
/// metric's filter), over the 12 orders (7 completed).
#[test]
fn conversion_metrics_answer_as_metricflow_counts_them() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, _) = imported(tmp.path());
    let ask = |dimensions: &[&str]| {
        let mut cmd = sqb();
        cmd.arg("--project-dir")
            .arg(&out)
            .args(["-q", "query", "--format", "csv"]);
        for m in CONVERSIONS {
            cmd.args(["--metric", m]);
        }
        for d in dimensions {
            cmd.args(["--dimension", d]);
        }
        let result = run(&mut cmd);
        let shown = transcript(&result, tmp.path());
        assert_eq!(result.status.code(), Some(0), "{shown}");
        String::from_utf8(result.stdout).unwrap()
    };
    // 7 days: four requests follow an order of the customer's within a week (Jan 9 → 10,
    // Feb 2 → 3, Feb 14 → 20, Mar 15 → 16), not Jan 31 (Jan 3); all five follow one ever
    // after and their own order; only Feb 3 follows a completed order within 14 days.
    assert_eq!(
        ask(&[]),
        "refund_request_rate,refund_requests_after_order,same_order_refund_rate,completed_order_refund_rate\n\
         0.3333333333333333,5,0.4166666666666667,0.14285714285714285\n"
    );
    // By the month of the order each request is counted for.
    assert_eq!(
        ask(&["metric_time__month"]),
        "metric_time__month,refund_request_rate,refund_requests_after_order,same_order_refund_rate,completed_order_refund_rate\n\
         2024-01-01T00:00:00,0.25,2,0.5,\n\
         2024-02-01T00:00:00,0.5,2,0.5,0.5\n\
         2024-03-01T00:00:00,0.25,1,0.25,\n"
    );
}

/// The import's record is only a hint: corrupt, or a FIFO where the file was, a metric that is
/// not there is still refused (`unresolved`) at once, with the generic hint.
#[test]
fn a_broken_record_leaves_the_plain_refusal() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, _) = imported(tmp.path());
    let record = out.join("dbt-import.json");
    let ask = || {
        let (done, finished) = std::sync::mpsc::channel();
        let root = out.clone();
        std::thread::spawn(move || {
            let _ = done.send(run(sqb().arg("--project-dir").arg(&root).args([
                "query",
                "--sql",
                "--metric",
                "approximate_p90_discrete",
            ])));
        });
        finished
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("sqb query answers without waiting on the record")
    };
    std::fs::write(&record, "{ not json").unwrap();
    let corrupt = ask();
    std::fs::remove_file(&record).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(&record)
        .status()
        .unwrap();
    assert!(made.success());
    let fifo = ask();
    for asked in [corrupt, fifo] {
        let text = transcript(&asked, tmp.path());
        assert_eq!(asked.status.code(), Some(10), "{text}");
        assert!(
            text.contains("no metric is named `approximate_p90_discrete`"),
            "{text}"
        );
        assert!(!text.contains("did not carry"), "{text}");
    }
}

/// Why a conversion metric whose base or conversion measure has a filter of its own is not
/// carried: MetricFlow 0.211 applies neither. `smb_refund_rate` and `damaged_refund_rate` are
/// `refund_request_rate` with a filter on its base measure and on its conversion measure, and
/// MetricFlow gives all three the same answers; the import reports both with that reason, and
/// `sqb query` refuses them.
#[test]
fn metricflow_applies_no_input_measure_s_filter_to_a_conversion_metric() {
    let answer = |metric: &str, group_by: &[&str]| mf_rows(&[metric], group_by);
    let plain = answer("refund_request_rate", &[]);
    assert_eq!(answer("smb_refund_rate", &[]), plain);
    assert_eq!(answer("damaged_refund_rate", &[]), plain);
    assert_eq!(
        answer("smb_refund_rate", &["customer__segment"]),
        answer("refund_request_rate", &["customer__segment"]),
        "the enterprise and unknown segments are there: the base filter is not applied"
    );
    let tmp = tempfile::tempdir().unwrap();
    let (out, report) = imported(tmp.path());
    for (metric, side) in [
        ("smb_refund_rate", "base"),
        ("damaged_refund_rate", "conversion"),
    ] {
        let entry = report["not_carried_over"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["node"] == format!("metric.semantic.{metric}").as_str())
            .unwrap_or_else(|| panic!("{metric}: {report:#}"));
        let what = entry["what"].as_str().unwrap();
        assert!(
            what.contains(&format!("filters its {side} measure"))
                && what.contains("MetricFlow applies no filter of an input measure"),
            "{entry}"
        );
        let asked = run(sqb()
            .arg("--project-dir")
            .arg(&out)
            .args(["query", "--sql", "--metric", metric]));
        assert_eq!(
            asked.status.code(),
            Some(10),
            "{}",
            transcript(&asked, tmp.path())
        );
    }
}

/// The MetricFlow answer (data rows) to the question of mf-queries.txt that asks `metrics` by
/// `group_by` without a filter.
fn mf_rows(metrics: &[&str], group_by: &[&str]) -> Vec<String> {
    let q = questions()
        .into_iter()
        .find(|q| q.metrics == metrics && q.group_by == group_by && q.filter.is_none())
        .unwrap_or_else(|| panic!("mf-queries.txt asks {metrics:?} by {group_by:?}"));
    let csv = std::fs::read_to_string(fixture().join(format!("target/mf/{}.csv", q.line))).unwrap();
    csv.lines().skip(1).map(str::to_string).collect()
}

/// A derived metric's filter on its time, with an input offset in time: MetricFlow filters the
/// offset points, not the rows (`spring_revenue_growth` from March is `revenue_growth` from
/// March, its February revenue unfiltered), which a population filter would not give. The
/// import writes it as the offset copy's `filter`, which sqb reads on the offset points, and
/// as the other input's population filter.
#[test]
fn a_time_filter_on_an_offset_input_filters_the_offset_points() {
    let growth = mf_rows(&["revenue_growth"], &["metric_time__month"]);
    let from_march: Vec<String> = growth
        .into_iter()
        .filter(|r| r.as_str() >= "2024-03")
        .collect();
    assert_eq!(
        mf_rows(&["spring_revenue_growth"], &["metric_time__month"]),
        from_march
    );
    let tmp = tempfile::tempdir().unwrap();
    let (out, _) = imported(tmp.path());
    let binding = |name: &str| {
        std::fs::read_to_string(out.join(format!("contracts/metrics/{name}.toml"))).unwrap()
    };
    let offset = binding("spring_revenue_growth__revenue_prior_month");
    assert!(
        offset.contains("filter = \"metric_time__day >= '2024-03-01'\"")
            && !offset.contains("population_filter"),
        "{offset}"
    );
    let plain = binding("spring_revenue_growth__revenue");
    assert!(
        plain.contains("population_filter = \"ordered_at >= '2024-03-01'\""),
        "{plain}"
    );
}

/// A saved query's `order_by` and `limit` come across: its rows are MetricFlow's, in
/// MetricFlow's order.
#[test]
fn saved_queries_keep_metricflow_s_order_and_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, _) = imported(tmp.path());
    for saved in ["top_statuses", "latest_two_months"] {
        let q = questions()
            .into_iter()
            .find(|q| q.saved.as_deref() == Some(saved))
            .unwrap_or_else(|| panic!("mf-queries.txt asks `saved: {saved}`"));
        let expected =
            std::fs::read_to_string(fixture().join(format!("target/mf/{}.csv", q.line))).unwrap();
        let result = run(sqb()
            .arg("--project-dir")
            .arg(&out)
            .args(["-q", "query", "--format", "csv", "--saved", saved]));
        assert_eq!(
            result.status.code(),
            Some(0),
            "{}",
            transcript(&result, tmp.path())
        );
        let ordered = |csv: &str| -> Vec<Vec<String>> {
            csv.lines()
                .skip(1)
                .map(|l| l.split(',').map(value).collect())
                .collect()
        };
        let sqb_rows = ordered(&String::from_utf8(result.stdout).unwrap());
        assert_eq!(sqb_rows.len(), 2, "{saved}: {sqb_rows:?}");
        assert_eq!(sqb_rows, ordered(&expected), "{saved}");
    }
}
