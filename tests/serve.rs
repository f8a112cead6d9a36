//! `sqb serve` on 127.0.0.1 (an ephemeral port) over the shop example's real DuckDB
//! warehouse: every token that is not proven is refused with 401, a request cannot add a claim,
//! each tenant's answer is exactly what `sqb query` answers for the same claims, and SIGTERM
//! drains and exits 0. On Postgres: each tenant's rows are what plain SQL scoped to it
//! returns, from a bounded read-only pool that survives its sessions being terminated.

mod common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::*;
use jsonwebtoken::{encode, EncodingKey, Header};
use serde_json::{json, Value};

const SECRET: &str = "a-test-secret-of-at-least-32-bytes-long";

fn shop() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    copy_tree(&repo().join("examples/shop"), tmp.path());
    let _ = std::fs::remove_file(tmp.path().join("warehouse.duckdb"));
    let _ = std::fs::remove_dir_all(tmp.path().join(".sqb"));
    duckdb_file(&tmp.path().join("warehouse.duckdb"), &shop_migrations());
    // The shop's own [serve] is replaced by the tests' (the last section of its sqb.toml).
    let toml = tmp.path().join("sqb.toml");
    let mut text = std::fs::read_to_string(&toml).unwrap();
    let at = text
        .find("\n[serve]\n")
        .expect("the shop has a [serve] section");
    text.truncate(at);
    text.push_str(
        "\n[serve]\ntarget = \"prod\"\nissuer = \"https://auth.test\"\naudience = \"sqb\"\nsecret_env = \"SQB_TEST_JWT_SECRET\"\n",
    );
    std::fs::write(&toml, text).unwrap();
    tmp
}

struct Server {
    child: Child,
    base: String,
    /// What the server has said on stderr since it started listening.
    said: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl Server {
    fn start(root: &Path) -> Server {
        Self::start_with(root, &[], &[])
    }

    /// Starts the server with more environment (a warehouse URL) and arguments.
    fn start_with(root: &Path, env: &[(&str, &str)], args: &[&str]) -> Server {
        // A free port, unless the project's [serve] names its own `listen`.
        let own_listen = std::fs::read_to_string(root.join("sqb.toml"))
            .unwrap()
            .contains("\nlisten = ");
        let listen: &[&str] = if own_listen {
            &[]
        } else {
            &["--listen", "127.0.0.1:0"]
        };
        let mut child = sqb()
            .arg("--project-dir")
            .arg(root)
            .arg("serve")
            .args(listen)
            .args(args)
            .envs(env.iter().copied())
            .env("SQB_TEST_JWT_SECRET", SECRET)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let base = loop {
            let line = lines
                .next()
                .expect("the server says where it listens")
                .unwrap();
            if let Some(addr) = line.split("listening on ").nth(1) {
                break addr.trim().to_string();
            }
        };
        // Keep reading stderr so that the server never blocks on a full pipe.
        let said = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let kept = said.clone();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                kept.lock().unwrap().push(line);
            }
        });
        Server { child, base, said }
    }

    /// Sends SIGHUP and waits until the server says it reloaded (or did not).
    fn hangup(&self) -> String {
        let before = self.said.lock().unwrap().len();
        unsafe { libc::kill(self.child.id() as i32, libc::SIGHUP) };
        self.reload_said(before)
    }

    /// Runs `change` and waits until the server (started with --watch) says it reloaded (or
    /// did not).
    fn after_change(&self, change: impl FnOnce()) -> String {
        let before = self.said.lock().unwrap().len();
        change();
        self.reload_said(before)
    }

    fn reload_said(&self, before: usize) -> String {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            let said = self.said.lock().unwrap()[before..].join("\n");
            if said.contains("reloaded") {
                return said;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "no word of a reload: {said}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits until the server has said `needle` (since it started), and returns all it said.
    fn until_said(&self, needle: &str) -> String {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            let said = self.said.lock().unwrap().join("\n");
            if said.contains(needle) {
                return said;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "never said {needle}: {said}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn get(&self, path: &str, token: Option<&str>) -> (u16, String) {
        let mut request =
            ureq::get(&format!("{}{path}", self.base)).timeout(Duration::from_secs(30));
        if let Some(t) = token {
            request = request.set("Authorization", &format!("Bearer {t}"));
        }
        answer(request.call())
    }

    fn query(&self, token: Option<&str>, body: Value) -> (u16, String) {
        let mut request =
            ureq::post(&format!("{}/v1/query", self.base)).timeout(Duration::from_secs(30));
        if let Some(t) = token {
            request = request.set("Authorization", &format!("Bearer {t}"));
        }
        answer(request.send_json(body))
    }

    fn stop(mut self) -> std::process::ExitStatus {
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        self.child.wait().unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn answer(result: Result<ureq::Response, ureq::Error>) -> (u16, String) {
    match result {
        Ok(r) => (r.status(), r.into_string().unwrap()),
        Err(ureq::Error::Status(code, r)) => (code, r.into_string().unwrap()),
        Err(e) => panic!("{e}"),
    }
}

/// A customer's `orders` by `status` over HTTP, each row as `status=count`.
fn orders_by_status(server: &Server, customer: u64) -> Vec<String> {
    let t = token(&claims(json!({ "customer_id": customer })), SECRET);
    let (status, text) = server.query(
        Some(&t),
        json!({ "metrics": ["orders"], "dimensions": ["status"] }),
    );
    assert_eq!(status, 200, "{text}");
    let doc: Value = serde_json::from_str(&text).unwrap();
    let cell = |v: &Value| v.as_str().map_or(v.to_string(), str::to_string);
    doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| format!("{}={}", cell(&r["status"]), cell(&r["orders"])))
        .collect()
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

fn claims(extra: Value) -> Value {
    let mut c = json!({
        "iss": "https://auth.test",
        "aud": "sqb",
        "exp": now() + 600,
        "nbf": now() - 10,
    });
    for (k, v) in extra.as_object().unwrap() {
        match v {
            Value::Null => {
                c.as_object_mut().unwrap().remove(k);
            }
            v => c[k] = v.clone(),
        }
    }
    c
}

fn token(claims: &Value, secret: &str) -> String {
    encode(
        &Header::default(),
        claims,
        &EncodingKey::from_secret(secret.as_bytes()),
    )
    .unwrap()
}

fn b64(v: &Value) -> String {
    sqb::identity::fuzz::base64url(&serde_json::to_vec(v).unwrap())
}

#[test]
fn every_token_that_is_not_proven_is_refused_with_401() {
    let root = shop();
    let server = Server::start(root.path());
    let good = claims(json!({ "customer_id": 2 }));
    let unsigned = format!(
        "{}.{}.",
        b64(&json!({"alg": "none", "typ": "JWT"})),
        b64(&good)
    );
    let cases: Vec<(&str, Option<String>, &str)> = vec![
        ("no header", None, "no bearer token"),
        ("garbage", Some("not-a-token".into()), "malformed token"),
        ("alg none", Some(unsigned), "malformed token"),
        (
            "another key",
            Some(token(&good, "another-secret-that-is-also-32-bytes!")),
            "bad signature",
        ),
        (
            "expired",
            Some(token(
                &claims(json!({"customer_id": 2, "exp": now() - 3600})),
                SECRET,
            )),
            "the token has expired",
        ),
        (
            "not yet",
            Some(token(
                &claims(json!({"customer_id": 2, "nbf": now() + 3600})),
                SECRET,
            )),
            "the token is not valid yet",
        ),
        (
            "no exp",
            Some(token(
                &claims(json!({"customer_id": 2, "exp": null})),
                SECRET,
            )),
            "the token lacks `exp`",
        ),
        (
            "no nbf",
            Some(token(
                &claims(json!({"customer_id": 2, "nbf": null})),
                SECRET,
            )),
            "the token lacks `nbf`",
        ),
        (
            "other audience",
            Some(token(
                &claims(json!({"customer_id": 2, "aud": "other"})),
                SECRET,
            )),
            "the token is for another audience",
        ),
        (
            "other issuer",
            Some(token(
                &claims(json!({"customer_id": 2, "iss": "https://evil"})),
                SECRET,
            )),
            "the token is from another issuer",
        ),
    ];
    let body = json!({ "metrics": ["revenue"], "dimensions": ["status"] });
    for (case, t, why) in &cases {
        let (status, text) = server.query(t.as_deref(), body.clone());
        assert_eq!(status, 401, "{case}: {text}");
        let doc: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(doc["error"]["code"], "unauthorized", "{case}");
        assert_eq!(doc["error"]["message"], *why, "{case}");
        assert!(!text.contains(SECRET));
        let (status, _) = server.get("/v1/catalog", t.as_deref());
        assert_eq!(status, 401, "{case}: the catalog");
    }
    let (status, text) = server.query(Some(&token(&good, SECRET)), body.clone());
    assert_eq!(status, 200, "{text}");
    // A request cannot add or override a claim.
    let mut smuggled = body.clone();
    smuggled["principal"] = json!({ "roles": ["finance"] });
    let (status, text) = server.query(Some(&token(&good, SECRET)), smuggled);
    assert_eq!(status, 400, "{text}");
    assert!(text.contains("unknown field `principal`"), "{text}");
    assert_eq!(server.stop().code(), Some(0));
}

/// Each tenant's answer over HTTP is what `sqb query` answers for the same claims: never a
/// row of another tenant. A token without the tenancy claim is refused with its code.
#[test]
fn each_tenant_gets_exactly_its_own_answer() {
    let root = shop();
    let server = Server::start(root.path());
    // Tenants (one with no orders) and queries drawn from what the customer role may ask,
    // by a fixed seed: each answer over HTTP equals the CLI's for the same claims.
    let shapes: [(&[&str], &[&str]); 4] = [
        (&["revenue", "orders"], &["status"]),
        (&["orders"], &["order_date"]),
        (&["revenue"], &[]),
        (&["revenue"], &["order_date", "status"]),
    ];
    let mut seed: u64 = 0x5eed;
    let mut answers = Vec::new();
    for round in 0..12 {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let customer = 1 + (seed >> 33) % 4;
        let (metrics, dimensions) = shapes[((seed >> 40) % 4) as usize];
        let t = token(&claims(json!({ "customer_id": customer })), SECRET);
        let (status, text) = server.query(
            Some(&t),
            json!({ "metrics": metrics, "dimensions": dimensions }),
        );
        assert_eq!(status, 200, "{text}");
        let served: Value = serde_json::from_str(&text).unwrap();
        assert!(served.get("sql").is_none(), "a response never holds SQL");
        let mut cmd = sqb();
        cmd.arg("--project-dir")
            .arg(root.path())
            .args(["query", "--format", "json", "--from", "prod"])
            .args(["--claims", &json!({ "customer_id": customer }).to_string()]);
        for m in metrics {
            cmd.args(["-m", m]);
        }
        for d in dimensions {
            cmd.args(["-d", d]);
        }
        let out = run(&mut cmd);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            transcript(&out, root.path())
        );
        let cli: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            served["rows"], cli["rows"],
            "round {round}: customer {customer}"
        );
        if round < 2 || answers.len() < 2 {
            answers.push(served["rows"].clone());
        }
    }
    // Independently of sqb's compiler: each tenant's orders by status are what plain SQL over
    // the DuckDB file, scoped to that tenant, gives (customer 5 has none).
    let file = duckdb::Connection::open_with_flags(
        root.path().join("warehouse.duckdb"),
        duckdb::Config::default()
            .access_mode(duckdb::AccessMode::ReadOnly)
            .unwrap(),
    )
    .unwrap();
    for customer in 1..=5u64 {
        let mut plain = file
            .prepare(
                "SELECT status || '=' || count(*) FROM analytics.fct_orders
                  WHERE customer_id = ? AND status IN ('placed', 'shipped')
                  GROUP BY status ORDER BY status",
            )
            .unwrap();
        let expected: Vec<String> = plain
            .query_map([customer as i64], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(
            orders_by_status(&server, customer),
            expected,
            "customer {customer}"
        );
    }
    let first = token(&claims(json!({ "customer_id": 1 })), SECRET);
    let second = token(&claims(json!({ "customer_id": 2 })), SECRET);
    // A MetricFlow client's request (its spelling of a time grain, a templated filter) answers
    // as the same request in sqb's names.
    let rows_of = |body: Value| {
        let (status, text) = server.query(Some(&first), body);
        assert_eq!(status, 200, "{text}");
        let doc: Value = serde_json::from_str(&text).unwrap();
        let rows = doc["rows"].as_array().unwrap().clone();
        rows.iter()
            .map(|r| r.as_object().unwrap().values().cloned().collect::<Vec<_>>())
            .collect::<Vec<_>>()
    };
    let metricflow = rows_of(json!({
        "metrics": ["revenue"],
        "dimensions": ["order_date__month"],
        "filters": ["{{ Dimension('status') }} <> 'placed'"],
    }));
    let plain = rows_of(json!({
        "metrics": ["revenue"],
        "dimensions": ["order_date.month"],
        "filters": ["status <> 'placed'"],
    }));
    assert!(!plain.is_empty());
    assert_eq!(metricflow, plain);
    let ask = json!({ "metrics": ["revenue"], "dimensions": ["status"] });
    answers = vec![
        serde_json::from_str::<Value>(&server.query(Some(&first), ask.clone()).1).unwrap()["rows"]
            .clone(),
        serde_json::from_str::<Value>(&server.query(Some(&second), ask).1).unwrap()["rows"].clone(),
    ];
    assert_ne!(answers[0], answers[1]);
    // A filter cannot widen the tenant's scope, and one that is not in the filter language
    // (a subquery) is refused with its code.
    let (status, text) = server.query(
        Some(&second),
        json!({ "metrics": ["revenue"], "dimensions": ["status"], "filters": ["1 = 1 OR status <> 'x'"] }),
    );
    assert_eq!(status, 200, "{text}");
    let widened: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(widened["rows"], answers[1], "{text}");
    let (status, text) = server.query(
        Some(&second),
        json!({ "metrics": ["revenue"], "filters": ["status IN (SELECT status FROM raw.orders)"] }),
    );
    assert_eq!(status, 400, "{text}");
    assert!(text.contains("\"invalid_filter\""), "{text}");
    let anonymous = token(&claims(json!({})), SECRET);
    let (status, text) = server.query(Some(&anonymous), json!({ "metrics": ["revenue"] }));
    assert_eq!(status, 403, "{text}");
    let doc: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["error"]["code"], "no_principal", "{text}");

    // The catalog: what the customer role may ask for, and no more.
    let customer = token(&claims(json!({ "customer_id": 1 })), SECRET);
    let (status, text) = server.get("/v1/catalog", Some(&customer));
    assert_eq!(status, 200, "{text}");
    let catalog: Value = serde_json::from_str(&text).unwrap();
    let names: Vec<&str> = catalog["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["metric"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["orders", "revenue"], "{text}");

    // Assertions read every tenant's rows: a customer may not run them, an analyst may.
    let run_assertions = |t: &str, body: Value| {
        answer(
            ureq::post(&format!("{}/v1/assert", server.base))
                .timeout(Duration::from_secs(60))
                .set("Authorization", &format!("Bearer {t}"))
                .send_json(body),
        )
    };
    let (status, text) = run_assertions(&customer, json!({}));
    assert_eq!(status, 403, "{text}");
    assert!(text.contains("\"forbidden\""), "{text}");
    let analyst = token(&claims(json!({ "roles": ["analyst"] })), SECRET);
    let (status, text) = run_assertions(&analyst, json!({ "select": ["revenue_total"] }));
    assert_eq!(status, 200, "{text}");
    let report: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(report["summary"]["total"], 1, "{text}");
    assert_eq!(report["assertions"][0]["id"], "revenue_total", "{text}");
    assert!(
        !text.contains("\"sql\""),
        "a response never holds SQL: {text}"
    );
    let (status, text) = run_assertions(&analyst, json!({}));
    assert_eq!(status, 200, "{text}");
    let report: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(report["summary"]["total"], 3, "{text}");
    let (status, text) = run_assertions(&analyst, json!({ "principal": {} }));
    assert_eq!(status, 400, "{text}");
    for select in ["[unclosed", "no_such_assertion"] {
        let (status, text) = run_assertions(&analyst, json!({ "select": [select] }));
        assert_eq!(status, 400, "{select}: {text}");
        assert!(text.contains("\"bad_request\""), "{select}: {text}");
    }

    let (status, _) = server.get("/healthz", None);
    assert_eq!(status, 200);
    let (status, _) = server.get("/readyz", None);
    assert_eq!(status, 200);
    let (status, metrics) = server.get("/metrics", None);
    assert_eq!(status, 200);
    assert!(
        metrics.contains("sqb_requests_total{route=\"/v1/query\",status=\"200\",code=\"\"} 22"),
        "{metrics}"
    );
    assert!(
        metrics.contains(
            "sqb_requests_total{route=\"/v1/query\",status=\"403\",code=\"no_principal\"} 1"
        ),
        "{metrics}"
    );
    assert_eq!(server.stop().code(), Some(0));
}

/// RS256/ES256 through a JWKS file (testdata/serve, made by OpenSSL): the key's token passes;
/// an HS256 token, a tampered signature or another key id do not.
#[test]
fn a_jwks_server_takes_only_tokens_its_keys_signed() {
    let root = shop();
    let toml = root.path().join("sqb.toml");
    let text = std::fs::read_to_string(&toml).unwrap().replace(
        "secret_env = \"SQB_TEST_JWT_SECRET\"",
        "jwks = \"keys/jwks.json\"",
    );
    std::fs::write(&toml, text).unwrap();
    std::fs::create_dir_all(root.path().join("keys")).unwrap();
    std::fs::copy(
        repo().join("testdata/serve/jwks.json"),
        root.path().join("keys/jwks.json"),
    )
    .unwrap();
    let server = Server::start(root.path());
    let pem = std::fs::read(repo().join("testdata/serve/es256.pem")).unwrap();
    let key = EncodingKey::from_ec_pem(&pem).unwrap();
    let es256 = |kid: &str| {
        let mut header = Header::new(jsonwebtoken::Algorithm::ES256);
        header.kid = Some(kid.to_string());
        encode(&header, &claims(json!({ "customer_id": 1 })), &key).unwrap()
    };
    let body = json!({ "metrics": ["revenue"] });
    let good = es256("test-es256");
    let (status, text) = server.query(Some(&good), body.clone());
    assert_eq!(status, 200, "{text}");
    // A character in the middle of the signature: still base64url, no longer the signature.
    let at = good.rfind('.').unwrap() + 10;
    let mut tampered = good.clone();
    let was = tampered.remove(at);
    tampered.insert(at, if was == 'A' { 'B' } else { 'A' });
    let hs256 = token(&claims(json!({ "customer_id": 1 })), SECRET);
    for (case, t, why) in [
        ("hs256", hs256, "algorithm not allowed"),
        ("tampered", tampered, "bad signature"),
        ("other kid", es256("another"), "unknown key id"),
    ] {
        let (status, text) = server.query(Some(&t), body.clone());
        assert_eq!(status, 401, "{case}: {text}");
        let doc: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(doc["error"]["message"], why, "{case}");
    }
    assert_eq!(server.stop().code(), Some(0));
}

/// SIGHUP compiles the project again and swaps it in only if it compiles: a broken edit leaves
/// the last good project serving, and says where it is broken.
#[test]
fn a_reload_swaps_in_only_a_project_that_compiles() {
    let root = shop();
    let server = Server::start(root.path());
    let t = token(&claims(json!({ "customer_id": 2 })), SECRET);
    let ask = json!({ "metrics": ["revenue"], "dimensions": ["status"] });
    assert_eq!(server.query(Some(&t), ask.clone()).0, 200);

    let toml = root.path().join("sqb.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    std::fs::write(&toml, text.replace("[serve]\n", "[serve]\nmax_rows = 1\n")).unwrap();
    let said = server.hangup();
    assert!(
        said.contains("reloaded: the new project compiles"),
        "{said}"
    );
    let (status, body) = server.query(Some(&t), ask.clone());
    assert_eq!(status, 422, "{body}");
    assert!(body.contains("too_many_rows"), "{body}");

    let metric = root.path().join("contracts/metrics/revenue.toml");
    let good = std::fs::read_to_string(&metric).unwrap();
    std::fs::write(&metric, "this is = = not toml").unwrap();
    let said = server.hangup();
    assert!(
        said.contains("not reloaded, the project serving is unchanged"),
        "{said}"
    );
    assert!(said.contains("contracts/metrics/revenue.toml"), "{said}");
    // Still the last good project: max_rows = 1, and revenue still answers.
    let (status, body) = server.query(Some(&t), json!({ "metrics": ["revenue"] }));
    assert_eq!(status, 200, "{body}");
    assert_eq!(server.query(Some(&t), ask).0, 422);
    std::fs::write(&metric, good).unwrap();
    assert_eq!(server.stop().code(), Some(0));
}

/// A client that sends its headers and then trickles its body is answered 408 (`slow_request`)
/// once `body_timeout_ms` has passed, and holds nothing after: the next request is served.
#[test]
fn a_body_that_does_not_arrive_in_time_is_answered_408() {
    use std::io::{Read as _, Write as _};
    let root = shop();
    let toml = root.path().join("sqb.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    std::fs::write(
        &toml,
        text.replace("[serve]\n", "[serve]\nbody_timeout_ms = 300\n"),
    )
    .unwrap();
    let server = Server::start(root.path());
    let address = server.base.trim_start_matches("http://").to_string();
    let mut slow = std::net::TcpStream::connect(&address).unwrap();
    slow.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    write!(
        slow,
        "POST /v1/query HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"metrics\""
    )
    .unwrap();
    let started = std::time::Instant::now();
    let mut reply = Vec::new();
    let mut chunk = [0u8; 1024];
    while !String::from_utf8_lossy(&reply).contains("slow_request") {
        match slow.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => reply.extend_from_slice(&chunk[..n]),
        }
    }
    let reply = String::from_utf8_lossy(&reply);
    assert!(reply.starts_with("HTTP/1.1 408"), "{reply}");
    assert!(reply.contains("body_timeout_ms"), "{reply}");
    // Not before the 300 ms it was given.
    assert!(started.elapsed() >= Duration::from_millis(250), "{reply}");
    let t = token(&claims(json!({ "customer_id": 2 })), SECRET);
    let (status, text) = server.query(Some(&t), json!({ "metrics": ["revenue"] }));
    assert_eq!(status, 200, "{text}");
}

/// Each request has an id: the client's `x-request-id` is given back, else a new UUID is. The
/// server's log at info level (every library's) names each request by its id and never shows a
/// token, the compiled SQL or a tenant's values.
#[test]
fn each_request_has_an_id_and_the_log_shows_no_token_and_no_sql() {
    let root = shop();
    let server = Server::start_with(root.path(), &[("RUST_LOG", "info")], &[]);
    let t = token(&claims(json!({ "customer_id": 3 })), SECRET);
    let post = |id: Option<&str>| {
        let mut request =
            ureq::post(&format!("{}/v1/query", server.base)).timeout(Duration::from_secs(30));
        request = request.set("Authorization", &format!("Bearer {t}"));
        if let Some(id) = id {
            request = request.set("x-request-id", id);
        }
        let response = request
            .send_json(json!({ "metrics": ["revenue"], "dimensions": ["status"] }))
            .unwrap();
        let id = response.header("x-request-id").map(str::to_string);
        assert_eq!(response.status(), 200);
        id
    };
    assert_eq!(
        post(Some("from-the-proxy-42")).as_deref(),
        Some("from-the-proxy-42")
    );
    let made = post(None).expect("a request without an id is given one");
    assert_eq!(made.len(), 36, "a UUID: {made}");
    let (status, _) = server.query(Some("not.a.token"), json!({ "metrics": ["revenue"] }));
    assert_eq!(status, 401);
    // The 401 is the last request: its line is the last to come.
    let said = server.until_said("status=401");
    assert!(said.contains(&format!("id={made}")), "{said}");
    assert!(said.contains("id=from-the-proxy-42"), "{said}");
    assert!(said.contains("status=200"), "{said}");
    for secret in [t.as_str(), "not.a.token", SECRET] {
        assert!(!said.contains(secret), "a token in the log: {said}");
    }
    let lower = said.to_lowercase();
    for sql in ["select", "fct_orders", "customer_id"] {
        assert!(!lower.contains(sql), "`{sql}` in the log: {said}");
    }
}

/// On Postgres, a statement past a second is not logged with its SQL at info level (sqlx logs
/// slow statements at warn by default): a tenant's compiled SQL stays out of the log.
#[test]
fn on_postgres_a_slow_query_s_sql_stays_out_of_the_log() {
    let Some(db) = TestDb::create("serve_slow") else {
        return;
    };
    pg_exec(&db.url, &shop_migrations());
    pg_exec(
        &db.url,
        "ALTER TABLE analytics.fct_orders RENAME TO fct_orders_rows;
         CREATE VIEW analytics.fct_orders AS
             SELECT o.* FROM analytics.fct_orders_rows o, (SELECT pg_sleep(1.2)) AS slow;",
    );
    let root = shop();
    let toml = root.path().join("sqb.toml");
    let text = std::fs::read_to_string(&toml)
        .unwrap()
        .replace("engine = \"duckdb\"", "engine = \"postgres\"");
    std::fs::write(&toml, text).unwrap();
    let server = Server::start_with(
        root.path(),
        &[("SQB_DATABASE_URL", &db.url), ("RUST_LOG", "info")],
        &[],
    );
    let t = token(&claims(json!({ "customer_id": 2 })), SECRET);
    let (status, text) = server.query(Some(&t), json!({ "metrics": ["orders"] }));
    assert_eq!(status, 200, "{text}");
    let said = server.until_said("status=200");
    let lower = said.to_lowercase();
    for sql in ["select", "fct_orders", "customer_id"] {
        assert!(!lower.contains(sql), "`{sql}` in the log: {said}");
    }
}

/// Every `[serve]` setting of a reloaded project applies: a smaller `max_request_bytes` refuses
/// a body the server took before (413, `too_large`), and a new `listen` moves the server (the new
/// address answers, the old one takes no connection). An address it cannot bind leaves it where
/// it was, saying why.
#[test]
fn a_reload_applies_the_new_limits_and_moves_to_a_new_listen() {
    let root = shop();
    let free_port = || {
        std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    };
    let toml = root.path().join("sqb.toml");
    let original = std::fs::read_to_string(&toml).unwrap();
    let serve_with = |port: u16, bytes: u32| {
        let serve =
            format!("[serve]\nlisten = \"127.0.0.1:{port}\"\nmax_request_bytes = {bytes}\n");
        std::fs::write(&toml, original.replace("[serve]\n", &serve)).unwrap();
    };
    let first = free_port();
    serve_with(first, 4096);
    let server = Server::start(root.path());
    assert_eq!(server.base, format!("http://127.0.0.1:{first}"));
    let t = token(&claims(json!({ "customer_id": 2 })), SECRET);
    // A body padded with JSON whitespace to `size` bytes.
    let body = |size: usize| {
        let ask = r#"{"metrics": ["revenue"]}"#;
        format!("{ask}{}", " ".repeat(size - ask.len()))
    };
    let post = |port: u16, text: &str| {
        answer(
            ureq::post(&format!("http://127.0.0.1:{port}/v1/query"))
                .timeout(Duration::from_secs(30))
                .set("Authorization", &format!("Bearer {t}"))
                .set("Content-Type", "application/json")
                .send_string(text),
        )
    };
    assert_eq!(post(first, &body(2000)).0, 200);
    let (status, text) = post(first, &body(5000));
    assert_eq!(status, 413, "{text}");
    assert!(text.contains("too_large"), "{text}");

    let second = free_port();
    serve_with(second, 1024);
    let said = server.hangup();
    assert!(
        said.contains("reloaded: the new project compiles"),
        "{said}"
    );
    let said = server.until_said("moved from");
    assert!(
        said.contains(&format!(
            "listening on http://127.0.0.1:{second} (moved from 127.0.0.1:{first})"
        )),
        "{said}"
    );
    assert_eq!(post(second, &body(1000)).0, 200);
    let (status, text) = post(second, &body(2000));
    assert_eq!(status, 413, "the reloaded limit applies: {text}");
    // The old listener is closed once its accept loop sees the stop: within moments.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", first)).is_ok() {
        assert!(
            std::time::Instant::now() < deadline,
            "the old address still takes connections"
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    // An address another process holds: the server stays where it is.
    let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let third = held.local_addr().unwrap().port();
    serve_with(third, 1024);
    server.hangup();
    let said = server.until_said("still listening on");
    assert!(
        said.contains(&format!("could not listen on 127.0.0.1:{third}: "))
            && said.contains(&format!("still listening on 127.0.0.1:{second}")),
        "{said}"
    );
    assert_eq!(post(second, &body(1000)).0, 200);
    let (_, metrics) = answer(
        ureq::get(&format!("http://127.0.0.1:{second}/metrics"))
            .timeout(Duration::from_secs(30))
            .call(),
    );
    assert!(
        metrics.contains(r#"route="/v1/query",status="413",code="too_large""#),
        "{metrics}"
    );
    drop(held);
    assert_eq!(server.stop().code(), Some(0));
}

/// With --watch a changed file reloads the project as SIGHUP does: a metric file broken keeps
/// the last good project serving; repaired, it is swapped in. The warehouse file and `.sqb/`
/// changing (every query writes neither, but a build does) reload nothing.
#[test]
fn with_watch_a_changed_file_reloads_only_a_project_that_compiles() {
    let root = shop();
    let server = Server::start_with(root.path(), &[], &["--watch"]);
    let t = token(&claims(json!({ "customer_id": 2 })), SECRET);
    let ask = json!({ "metrics": ["revenue"], "dimensions": ["status"] });
    assert_eq!(server.query(Some(&t), ask.clone()).0, 200);
    let metric = root.path().join("contracts/metrics/revenue.toml");
    let good = std::fs::read_to_string(&metric).unwrap();
    let said = server.after_change(|| std::fs::write(&metric, "this is = = not toml").unwrap());
    assert!(
        said.contains("not reloaded, the project serving is unchanged"),
        "{said}"
    );
    assert!(said.contains("contracts/metrics/revenue.toml"), "{said}");
    assert_eq!(server.query(Some(&t), ask.clone()).0, 200);
    let relabelled = good.replace("label = \"Revenue\"", "label = \"Net revenue\"");
    assert_ne!(relabelled, good);
    let said = server.after_change(|| std::fs::write(&metric, &relabelled).unwrap());
    assert!(
        said.contains("reloaded: the new project compiles"),
        "{said}"
    );
    let (status, text) = server.get("/v1/catalog", Some(&t));
    assert_eq!(status, 200, "{text}");
    assert!(text.contains("Net revenue"), "{text}");
    let before = server.said.lock().unwrap().len();
    std::fs::create_dir_all(root.path().join(".sqb")).unwrap();
    std::fs::write(root.path().join(".sqb/touched"), "x").unwrap();
    std::fs::write(root.path().join("scratch.duckdb"), "x").unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let said = server.said.lock().unwrap()[before..].join("\n");
    assert!(!said.contains("reload"), "{said}");
    assert_eq!(server.stop().code(), Some(0));
}

/// `[serve]` is checked by `sqb compile` like every other file: located errors, nothing served.
#[test]
fn a_serve_section_that_cannot_work_is_a_located_error() {
    let root = shop();
    let toml = root.path().join("sqb.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    let broken = text
        .replace("issuer = \"https://auth.test\"\n", "")
        .replace(
            "target = \"prod\"\n",
            "target = \"prd\"\nlisten = \"localhost\"\nport = 80\n",
        );
    std::fs::write(&toml, broken).unwrap();
    let out = run(sqb().arg("--project-dir").arg(root.path()).arg("compile"));
    let text = transcript(&out, root.path());
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("[serve] target `prd` is not defined"),
        "{text}"
    );
    assert!(
        text.contains("`localhost` is not an address to listen on"),
        "{text}"
    );
    assert!(text.contains("port"), "{text}");
    assert!(text.contains("issuer"), "{text}");
    let out = run(sqb()
        .arg("--project-dir")
        .arg(root.path())
        .args(["serve", "--listen", "127.0.0.1:0"])
        .env("SQB_TEST_JWT_SECRET", SECRET));
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        transcript(&out, root.path())
    );
    // A JWKS "file" that is a FIFO: refused, never waited on.
    let fifo = shop();
    let toml = fifo.path().join("sqb.toml");
    let text = std::fs::read_to_string(&toml).unwrap().replace(
        "secret_env = \"SQB_TEST_JWT_SECRET\"",
        "jwks = \"keys.fifo\"",
    );
    std::fs::write(&toml, text).unwrap();
    let path = std::ffi::CString::new(fifo.path().join("keys.fifo").to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
    let out =
        run(sqb()
            .arg("--project-dir")
            .arg(fifo.path())
            .args(["serve", "--listen", "127.0.0.1:0"]));
    let text = transcript(&out, fifo.path());
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("is not a regular file"), "{text}");
    // No secret in the environment: it does not start.
    let ok = shop();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sqb"));
    cmd.arg("--project-dir")
        .arg(ok.path())
        .args(["serve", "--listen", "127.0.0.1:0"])
        .env("SQB_NO_CACHE", "1")
        .env_remove("SQB_TEST_JWT_SECRET");
    let out = run(&mut cmd);
    let text = transcript(&out, ok.path());
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("the HS256 secret is not set"), "{text}");
}

/// The shop on a Postgres database of its own, served on a pool of two read-only sessions by a
/// login role with a password: each tenant's rows (concurrent requests of mixed tenants, and a
/// LEFT JOIN to a scoped dimension with unmatched rows, included) are exactly what plain SQL
/// scoped to that tenant returns; the server never holds
/// more than its sessions, never writes, and answers on after its sessions are terminated; an
/// unreachable warehouse is 503 without the password.
#[test]
fn on_postgres_each_tenant_gets_its_own_rows_from_a_bounded_read_only_pool() {
    let Some(db) = TestDb::create("serve_pg") else {
        return;
    };
    pg_exec(&db.url, &shop_migrations());
    const PASSWORD: &str = "s3rve-pl4nted";
    let role = format!("sqb_serve_{}", std::process::id());
    pg_exec(
        &db.url,
        &format!(
            "DROP ROLE IF EXISTS {role}; CREATE ROLE {role} LOGIN PASSWORD '{PASSWORD}';
             GRANT ALL ON ALL TABLES IN SCHEMA analytics, dev, raw TO {role};
             GRANT ALL ON SCHEMA analytics, dev, raw TO {role};"
        ),
    );
    // Customer 4 has orders and no row in dim_customers (a LEFT JOIN keeps them, in a NULL
    // group); customer 5 has a row there and no order.
    pg_exec(
        &db.url,
        "INSERT INTO analytics.fct_orders VALUES
             (200, 4, TIMESTAMP WITH TIME ZONE '2026-05-02 09:00:00+00', 'placed', 'pickup', 10.00, false),
             (201, 4, TIMESTAMP WITH TIME ZONE '2026-05-03 09:00:00+00', 'shipped', 'delivery', 150.00, true);
         INSERT INTO analytics.dim_customers VALUES
             (5, 'Barbara Liskov', NULL, TIMESTAMP WITH TIME ZONE '2026-06-01 00:00:00+00', 0, 0);",
    );
    let url = db
        .url
        .replace("sqb_test:sqb_test@", &format!("{role}:{PASSWORD}@"));
    let root = shop();
    // The customer role may also group by a dimension of the joined dim_customers.
    let roles = root.path().join("contracts/policies/roles.toml");
    let text = std::fs::read_to_string(&roles).unwrap().replacen(
        r#"dimensions = { allow = ["order_date", "status"] }"#,
        r#"dimensions = { allow = ["order_date", "status", "first_order_month"] }"#,
        1,
    );
    std::fs::write(&roles, text).unwrap();
    let toml = root.path().join("sqb.toml");
    let text = std::fs::read_to_string(&toml)
        .unwrap()
        .replace("engine = \"duckdb\"", "engine = \"postgres\"")
        + "connections = 2\n";
    std::fs::write(&toml, text).unwrap();
    let server = Server::start_with(root.path(), &[("SQB_DATABASE_URL", &url)], &[]);
    let expected = |customer: u64| -> Value {
        let rows = pg_strings(
            &db.url,
            &format!(
                "SELECT status || '=' || count(*) FROM analytics.fct_orders
                  WHERE customer_id = {customer} AND status IN ('placed', 'shipped')
                  GROUP BY status ORDER BY status"
            ),
        );
        Value::from(rows)
    };
    let served = |server: &Server, customer: u64| Value::from(orders_by_status(server, customer));
    // Over the LEFT JOIN to dim_customers, each scoped before it is joined: what plain SQL
    // gives with both relations filtered to the tenant first.
    let expected_joined = |customer: u64| -> Value {
        let rows = pg_strings(
            &db.url,
            &format!(
                "SELECT month || '=' || count(*) FROM (
                   SELECT coalesce(to_char(c.first_ordered_at AT TIME ZONE 'UTC', 'YYYY-MM'), 'null') AS month
                     FROM (SELECT * FROM analytics.fct_orders WHERE customer_id = {customer}) o
                     LEFT JOIN (SELECT * FROM analytics.dim_customers WHERE customer_id = {customer}) c
                       ON c.customer_id = o.customer_id
                    WHERE o.status IN ('placed', 'shipped')) g
                  GROUP BY month ORDER BY 1"
            ),
        );
        Value::from(rows)
    };
    let served_joined = |server: &Server, customer: u64| -> Value {
        let t = token(&claims(json!({ "customer_id": customer })), SECRET);
        let (status, text) = server.query(
            Some(&t),
            json!({ "metrics": ["orders"], "dimensions": ["customer.first_order_month"] }),
        );
        assert_eq!(status, 200, "{text}");
        let doc: Value = serde_json::from_str(&text).unwrap();
        let mut rows: Vec<String> = doc["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let month = &r["customer.first_order_month"];
                let month = month
                    .as_str()
                    .map_or("null".to_string(), |m| m[..7].to_string());
                format!("{month}={}", r["orders"])
            })
            .collect();
        rows.sort();
        Value::from(rows)
    };
    for customer in [4, 5, 1, 2, 3] {
        assert_eq!(
            served_joined(&server, customer),
            expected_joined(customer),
            "customer {customer} over the LEFT JOIN"
        );
    }
    assert_eq!(
        expected_joined(4),
        json!(["null=2"]),
        "the unmatched rows are a group"
    );
    assert_eq!(expected_joined(5), json!([]));
    let mut seed: u64 = 0xfeed;
    for _ in 0..8 {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let customer = 1 + (seed >> 33) % 5;
        assert_eq!(
            served(&server, customer),
            expected(customer),
            "customer {customer}"
        );
        assert_eq!(
            served_joined(&server, customer),
            expected_joined(customer),
            "customer {customer} over the LEFT JOIN"
        );
    }
    // Mixed tenants at once, more than the pool holds: no session carries one tenant's scope
    // into another's answer.
    std::thread::scope(|scope| {
        for worker in 0..6u64 {
            let (server, expected, served) = (&server, &expected, &served);
            scope.spawn(move || {
                for i in 0..5 {
                    let customer = 1 + (worker + i) % 4;
                    assert_eq!(served(server, customer), expected(customer));
                }
            });
        }
    });
    let sessions = |state: &str| {
        pg_strings(
            &db.url,
            &format!(
                "SELECT count(*)::text FROM pg_stat_activity WHERE usename = '{role}' {state}"
            ),
        )[0]
        .parse::<u32>()
        .unwrap()
    };
    assert!(sessions("") <= 2, "the pool holds at most its two sessions");
    // The sessions are terminated under the server: the next requests still answer.
    pg_exec(
        &db.url,
        &format!("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '{role}'"),
    );
    for customer in [1, 2, 3] {
        assert_eq!(
            served(&server, customer),
            expected(customer),
            "after termination"
        );
    }
    let (status, _) = server.get("/readyz", None);
    assert_eq!(status, 200);
    let (_, metrics) = server.get("/metrics", None);
    assert!(metrics.contains("sqb_pool_size 2"), "{metrics}");
    assert!(metrics.contains("sqb_warehouse_seconds_count"), "{metrics}");
    assert_eq!(server.stop().code(), Some(0));

    // The same project against a port nothing listens on: not ready, each query 503, and the
    // password in no answer.
    let (dead, _) = unreachable_postgres_url();
    let server = Server::start_with(
        root.path(),
        &[("SQB_DATABASE_URL", &dead)],
        &["--connect-timeout", "1s"],
    );
    let (status, text) = server.get("/readyz", None);
    assert_eq!(status, 503, "{text}");
    let t = token(&claims(json!({ "customer_id": 1 })), SECRET);
    let (status, text) = server.query(
        Some(&t),
        json!({ "metrics": ["orders"], "dimensions": ["status"] }),
    );
    assert_eq!(status, 503, "{text}");
    assert!(text.contains("warehouse_unavailable"), "{text}");
    assert!(!text.contains("secret-pw"), "{text}");
    let said = server.said.lock().unwrap().join("\n");
    assert!(!said.contains("secret-pw"), "{said}");
    assert_eq!(server.stop().code(), Some(0));
    pg_exec(&db.url, &format!("DROP OWNED BY {role}"));
    drop(db);
    if let Some(admin) = postgres_url() {
        pg_exec(&admin, &format!("DROP ROLE IF EXISTS {role}"));
    }
}

/// A request's `order_by` and `limit` are `sqb query`'s: the first rows in that order, and an
/// order naming no column of the query refused with the refusal's code.
#[test]
fn a_request_is_ordered_and_limited_as_it_asks() {
    let root = shop();
    let server = Server::start(root.path());
    let t = token(&claims(json!({ "customer_id": 1 })), SECRET);
    let all = orders_by_status(&server, 1);
    assert!(all.len() >= 2, "{all:?}");
    let count = |row: &String| -> i64 { row.rsplit('=').next().unwrap().parse().unwrap() };
    let mut expected = all.clone();
    expected.sort_by(|a, b| count(b).cmp(&count(a)).then(a.cmp(b)));
    let (status, text) = server.query(
        Some(&t),
        json!({ "metrics": ["orders"], "dimensions": ["status"], "order_by": ["-orders"], "limit": 1 }),
    );
    assert_eq!(status, 200, "{text}");
    let doc: Value = serde_json::from_str(&text).unwrap();
    let rows = doc["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{text}");
    let top = format!(
        "{}={}",
        rows[0]["status"].as_str().unwrap(),
        rows[0]["orders"]
    );
    assert_eq!(top, expected[0], "{text}");
    let (status, text) = server.query(
        Some(&t),
        json!({ "metrics": ["orders"], "dimensions": ["status"], "order_by": ["-revenue"] }),
    );
    assert_ne!(status, 200, "{text}");
    assert!(text.contains("\"unresolved\""), "{text}");
    assert_eq!(server.stop().code(), Some(0));
}
