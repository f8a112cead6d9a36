//! The token fuzz `scripts/fuzz-tokens` runs: mutations of a proven token
//! (`sqb::identity::fuzz`) put to the verifier `sqb serve` uses, seed after seed, for SECONDS
//! (default 600). Each one must be refused without a panic; the first that passes stops the
//! run with its seed and step, exit 1.
//!
//! `fuzz_tokens [SECONDS]`

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context};
use jsonwebtoken::{encode, EncodingKey, Header};
use serde_json::json;
use sqb::identity::fuzz::Mutations;
use sqb::identity::{Keys, Verifier};

const SECRET: &[u8] = b"the-fuzz-secret-of-at-least-32-bytes";
const STEPS_PER_SEED: u64 = 10_000;

fn main() -> anyhow::Result<()> {
    let seconds: u64 = match std::env::args().nth(1) {
        Some(s) => s.parse().context("SECONDS")?,
        None => 600,
    };
    let now = SystemTime::now().duration_since(UNIX_EPOCH)?.as_secs();
    // Valid for the whole run, so that every refusal is the mutation's doing.
    let claims = json!({
        "iss": "https://auth.fuzz", "aud": "sqb", "exp": now + seconds + 3600, "nbf": now - 10,
        "customer_id": 2, "roles": ["customer"],
    });
    let base = encode(
        &Header::default(),
        &claims,
        &EncodingKey::from_secret(SECRET),
    )?;
    let verifier = Verifier::new(Keys::Secret(SECRET), "https://auth.fuzz", "sqb")?;
    verifier
        .verify(&base)
        .map_err(|r| anyhow::anyhow!("the proven token is refused: {r}"))?;
    let limit = Duration::from_secs(seconds);
    let started = Instant::now();
    let mut tried: u64 = 0;
    let mut seed = 0u64;
    while started.elapsed() < limit {
        let mut mutations = Mutations::new(&base, seed);
        for step in 0..STEPS_PER_SEED {
            let token = mutations.next_token();
            if verifier.verify(&token).is_ok() {
                bail!("seed {seed}, step {step}: a mutated token passed: {token}");
            }
            tried += 1;
        }
        seed += 1;
    }
    println!(
        "{tried} mutated tokens over {} seeds in {:.0}s: none passed, none panicked",
        seed,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
