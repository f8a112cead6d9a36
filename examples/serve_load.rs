//! The load `scripts/bench-serve` puts on a running `sqb serve`, bounded in count and time:
//! CLIENTS threads each post the same query with a token signed by `SQB_JWT_SECRET` (issuer
//! and audience from `SQB_JWT_ISSUER` and `SQB_JWT_AUDIENCE`) until REQUESTS have been sent or
//! SECONDS have passed, then it prints requests/s, p50, p99, the errors and the server's
//! resident memory before and after (from /proc/PID/status).
//!
//! `serve_load BASE_URL SERVER_PID CLIENTS REQUESTS SECONDS CLAIMS_JSON QUERY_JSON`

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context};
use serde_json::Value;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [base, pid, clients, requests, seconds, claims, body] = args.as_slice() else {
        bail!(
            "usage: serve_load BASE_URL SERVER_PID CLIENTS REQUESTS SECONDS CLAIMS_JSON QUERY_JSON"
        );
    };
    let clients: usize = clients.parse().context("CLIENTS")?;
    let total: usize = requests.parse().context("REQUESTS")?;
    let limit = Duration::from_secs(seconds.parse().context("SECONDS")?);
    let token = token(claims)?;
    let body: Value = serde_json::from_str(body).context("QUERY_JSON")?;
    let rss_before = rss(pid);
    let before = scrape(base);
    let sent = Arc::new(AtomicUsize::new(0));
    let errors = Arc::new(AtomicUsize::new(0));
    let latencies = Arc::new(Mutex::new(Vec::with_capacity(total)));
    let started = Instant::now();
    let threads: Vec<_> = (0..clients)
        .map(|_| {
            let (sent, errors, latencies) = (sent.clone(), errors.clone(), latencies.clone());
            let (url, token, body) = (format!("{base}/v1/query"), token.clone(), body.clone());
            std::thread::spawn(move || {
                let agent = ureq::AgentBuilder::new().build();
                while sent.fetch_add(1, Ordering::SeqCst) < total && started.elapsed() < limit {
                    let t = Instant::now();
                    let ok = agent
                        .post(&url)
                        .set("Authorization", &format!("Bearer {token}"))
                        .send_json(body.clone())
                        .map(|r| r.into_string().is_ok())
                        .unwrap_or(false);
                    latencies.lock().unwrap().push(t.elapsed());
                    if !ok {
                        errors.fetch_add(1, Ordering::SeqCst);
                    }
                }
            })
        })
        .collect();
    for t in threads {
        let _ = t.join();
    }
    let elapsed = started.elapsed().as_secs_f64();
    let mut latencies = latencies.lock().unwrap().clone();
    latencies.sort();
    let at = |q: f64| {
        latencies
            .get(((latencies.len() as f64 - 1.0) * q).round() as usize)
            .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
    };
    println!(
        "{} requests by {clients} clients in {elapsed:.2}s: {:.0} requests/s, p50 {:.2} ms, p99 {:.2} ms, {} errors, server RSS {} -> {} KiB",
        latencies.len(),
        latencies.len() as f64 / elapsed,
        at(0.5),
        at(0.99),
        errors.load(Ordering::SeqCst),
        rss_before,
        rss(pid),
    );
    let after = scrape(base);
    let per = |sum: usize, count: usize| {
        let n = after[count] - before[count];
        if n > 0.0 {
            (after[sum] - before[sum]) / n * 1000.0
        } else {
            0.0
        }
    };
    let (served, warehouse) = (per(0, 1), per(2, 3));
    println!(
        "inside the server, per query: {served:.2} ms, of which {warehouse:.2} ms in the warehouse; the server's own {:.2} ms",
        served - warehouse
    );
    Ok(())
}

/// From the server's /metrics: the query route's request time (sum, count) and the
/// warehouse's (sum, count); zeros when they cannot be read.
fn scrape(base: &str) -> [f64; 4] {
    let text = ureq::get(&format!("{base}/metrics"))
        .call()
        .ok()
        .and_then(|r| r.into_string().ok())
        .unwrap_or_default();
    let value = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    [
        value("sqb_request_seconds_sum{route=\"/v1/query\"} "),
        value("sqb_request_seconds_count{route=\"/v1/query\"} "),
        value("sqb_warehouse_seconds_sum "),
        value("sqb_warehouse_seconds_count "),
    ]
}

fn token(claims: &str) -> anyhow::Result<String> {
    let env = |name: &str| std::env::var(name).with_context(|| format!("{name} is not set"));
    let now = SystemTime::now().duration_since(UNIX_EPOCH)?.as_secs();
    let mut claims: Value = serde_json::from_str(claims).context("CLAIMS_JSON")?;
    claims["iss"] = env("SQB_JWT_ISSUER")?.into();
    claims["aud"] = env("SQB_JWT_AUDIENCE")?.into();
    claims["exp"] = (now + 3600).into();
    claims["nbf"] = now.into();
    Ok(jsonwebtoken::encode(
        &jsonwebtoken::Header::default(),
        &claims,
        &jsonwebtoken::EncodingKey::from_secret(env("SQB_JWT_SECRET")?.as_bytes()),
    )?)
}

/// The process's resident memory in KiB, 0 when it cannot be read.
fn rss(pid: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}
