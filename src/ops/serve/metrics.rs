//! The server's Prometheus metrics, in the text exposition format: requests by route, status
//! and code; request latency and warehouse time as histograms.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;

use crate::warehouse::pool::Usage;

/// Upper bounds of the latency buckets, in seconds.
const BUCKETS: &[f64] = &[
    0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0,
];

#[derive(Default)]
struct Histogram {
    counts: Vec<u64>,
    sum: f64,
    count: u64,
}

impl Histogram {
    fn observe(&mut self, seconds: f64) {
        if self.counts.is_empty() {
            self.counts = vec![0; BUCKETS.len()];
        }
        for (i, bound) in BUCKETS.iter().enumerate() {
            if seconds <= *bound {
                self.counts[i] += 1;
            }
        }
        self.sum += seconds;
        self.count += 1;
    }

    fn render(&self, name: &str, labels: &str, out: &mut String) {
        let sep = if labels.is_empty() { "" } else { "," };
        for (i, bound) in BUCKETS.iter().enumerate() {
            let n = self.counts.get(i).copied().unwrap_or(0);
            let _ = writeln!(out, "{name}_bucket{{{labels}{sep}le=\"{bound}\"}} {n}");
        }
        let _ = writeln!(
            out,
            "{name}_bucket{{{labels}{sep}le=\"+Inf\"}} {}",
            self.count
        );
        let braces = if labels.is_empty() {
            String::new()
        } else {
            format!("{{{labels}}}")
        };
        let _ = writeln!(out, "{name}_sum{braces} {}", self.sum);
        let _ = writeln!(out, "{name}_count{braces} {}", self.count);
    }
}

#[derive(Default)]
struct Inner {
    requests: BTreeMap<(String, u16, String), u64>,
    latency: BTreeMap<String, Histogram>,
    warehouse: Histogram,
}

#[derive(Default)]
pub(crate) struct Metrics(Mutex<Inner>);

impl Metrics {
    pub fn record(&self, route: &str, status: u16, code: &str, seconds: f64) {
        let mut inner = self.0.lock().unwrap_or_else(|p| p.into_inner());
        *inner
            .requests
            .entry((route.to_string(), status, code.to_string()))
            .or_insert(0) += 1;
        inner
            .latency
            .entry(route.to_string())
            .or_default()
            .observe(seconds);
    }

    /// Time a query spent compiling and in the warehouse.
    pub fn warehouse(&self, seconds: f64) {
        let mut inner = self.0.lock().unwrap_or_else(|p| p.into_inner());
        inner.warehouse.observe(seconds);
    }

    pub fn render(&self, pool: Usage) -> String {
        let inner = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let mut out = String::new();
        out.push_str("# HELP sqb_requests_total Requests answered, by route, status and code.\n");
        out.push_str("# TYPE sqb_requests_total counter\n");
        for ((route, status, code), n) in &inner.requests {
            let _ = writeln!(
                out,
                "sqb_requests_total{{route=\"{route}\",status=\"{status}\",code=\"{code}\"}} {n}"
            );
        }
        out.push_str("# HELP sqb_request_seconds Time to answer a request, by route.\n");
        out.push_str("# TYPE sqb_request_seconds histogram\n");
        for (route, h) in &inner.latency {
            h.render(
                "sqb_request_seconds",
                &format!("route=\"{route}\""),
                &mut out,
            );
        }
        out.push_str(
            "# HELP sqb_query_seconds Time a query spent compiling and in the warehouse.\n",
        );
        out.push_str("# TYPE sqb_query_seconds histogram\n");
        inner.warehouse.render("sqb_query_seconds", "", &mut out);
        render_pool(pool, &mut out);
        out
    }
}

fn render_pool(pool: Usage, out: &mut String) {
    out.push_str("# HELP sqb_pool_connections Warehouse sessions of the pool, by state.\n");
    out.push_str("# TYPE sqb_pool_connections gauge\n");
    let _ = writeln!(out, "sqb_pool_connections{{state=\"busy\"}} {}", pool.busy);
    let _ = writeln!(out, "sqb_pool_connections{{state=\"idle\"}} {}", pool.idle);
    out.push_str(
        "# HELP sqb_pool_size The most sessions the pool opens (`[serve] connections`).\n",
    );
    out.push_str("# TYPE sqb_pool_size gauge\n");
    let _ = writeln!(out, "sqb_pool_size {}", pool.size);
    out.push_str("# HELP sqb_pool_opened_total Sessions opened, replacements included.\n");
    out.push_str("# TYPE sqb_pool_opened_total counter\n");
    let _ = writeln!(out, "sqb_pool_opened_total {}", pool.opened);
    out.push_str("# HELP sqb_warehouse_seconds Time statements spent in the warehouse.\n");
    out.push_str("# TYPE sqb_warehouse_seconds summary\n");
    let _ = writeln!(out, "sqb_warehouse_seconds_sum {}", pool.run_seconds);
    let _ = writeln!(out, "sqb_warehouse_seconds_count {}", pool.runs);
}
