use jsonwebtoken::{encode, EncodingKey, Header};
use serde_json::{json, Value};

use super::fuzz::Mutations;
use super::{Keys, Verifier};

const SECRET: &[u8] = b"a-unit-test-secret-of-32-bytes-or-more";

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

fn signed(claims: &Value) -> String {
    encode(
        &Header::default(),
        claims,
        &EncodingKey::from_secret(SECRET),
    )
    .unwrap()
}

fn verifier() -> Verifier {
    Verifier::new(Keys::Secret(SECRET), "https://auth.test", "sqb").unwrap()
}

fn proven() -> String {
    signed(&json!({
        "iss": "https://auth.test", "aud": "sqb", "exp": now() + 600, "nbf": now() - 10,
        "customer_id": 2,
    }))
}

#[test]
fn a_proven_token_passes_with_its_claims() {
    let claims = verifier().verify(&proven()).unwrap();
    assert_eq!(claims["customer_id"], 2);
}

#[test]
fn short_and_empty_secrets_are_refused() {
    assert!(Verifier::new(Keys::Secret(b""), "i", "a").is_err());
    assert!(Verifier::new(Keys::Secret(b"short"), "i", "a").is_err());
    assert!(Verifier::new(Keys::Jwks("{\"keys\": []}"), "i", "a").is_err());
    assert!(Verifier::new(Keys::Jwks("not json"), "i", "a").is_err());
}

/// Thousands of mutations of a proven token (bit flips, truncations, swapped and forged
/// segments, `alg: none`, other algorithms, odd claims, oversized tokens): none panics, none
/// passes. `scripts/fuzz-tokens` runs the same generator for ten minutes.
#[test]
fn no_mutation_of_a_proven_token_passes() {
    let verifier = verifier();
    let base = proven();
    for seed in 0..4u64 {
        let mut mutations = Mutations::new(&base, seed);
        for step in 0..2_500 {
            let token = mutations.next_token();
            if let Ok(claims) = verifier.verify(&token) {
                panic!("seed {seed}, step {step}: {token} passed with {claims:?}");
            }
        }
    }
}
