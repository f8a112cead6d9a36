//! A client of `sqb serve`, for scripts/demo: signs an HS256 token with the secret in
//! `SQB_JWT_SECRET` for the claims given (adding `iss`, `aud`, `exp` and `nbf` from
//! `SQB_JWT_ISSUER` and `SQB_JWT_AUDIENCE`), posts the body to PATH (default `/v1/query`), and
//! prints the status and answer.
//!
//! `serve_client http://127.0.0.1:PORT '{"customer_id": 2}' '{"metrics": ["revenue"]}'`
//! `serve_client http://127.0.0.1:PORT '{"roles": ["analyst"]}' '{}' /v1/assert`

use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context};
use serde_json::Value;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (base, claims, body, path) = match args.as_slice() {
        [base, claims, body] => (base, claims, body, "/v1/query"),
        [base, claims, body, path] => (base, claims, body, path.as_str()),
        _ => bail!("usage: serve_client BASE_URL CLAIMS_JSON BODY_JSON [PATH]"),
    };
    let secret = std::env::var("SQB_JWT_SECRET").context("SQB_JWT_SECRET is not set")?;
    let env = |name: &str| std::env::var(name).with_context(|| format!("{name} is not set"));
    let now = SystemTime::now().duration_since(UNIX_EPOCH)?.as_secs();
    let mut claims: Value = serde_json::from_str(claims).context("CLAIMS_JSON")?;
    claims["iss"] = env("SQB_JWT_ISSUER")?.into();
    claims["aud"] = env("SQB_JWT_AUDIENCE")?.into();
    claims["exp"] = (now + 300).into();
    claims["nbf"] = now.into();
    let token = jsonwebtoken::encode(
        &jsonwebtoken::Header::default(),
        &claims,
        &jsonwebtoken::EncodingKey::from_secret(secret.as_bytes()),
    )?;
    let body: Value = serde_json::from_str(body).context("BODY_JSON")?;
    let response = ureq::post(&format!("{base}{path}"))
        .set("Authorization", &format!("Bearer {token}"))
        .send_json(body);
    let (status, text) = match response {
        Ok(r) => (r.status(), r.into_string()?),
        Err(ureq::Error::Status(code, r)) => (code, r.into_string()?),
        Err(e) => return Err(e.into()),
    };
    println!("HTTP {status}");
    println!("{text}");
    Ok(())
}
