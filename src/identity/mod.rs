//! Who is asking, proven: `sqb serve` takes a principal's claims only from a JSON Web Token
//! that this module verifies, never from the request.
//!
//! A [`Verifier`] holds the keys (an HS256 secret, or the RS256/ES256 keys of a JWKS document),
//! the issuer and the audience. A token passes only with an allowed algorithm (never `none`),
//! a valid signature by a known key, and `exp`, `nbf`, `iss` and `aud` present and holding
//! (with [`LEEWAY`] seconds of clock skew). Pure: the caller reads the secret and the file.

pub mod fuzz;
#[cfg(test)]
mod tests;

use jsonwebtoken::jwk::{AlgorithmParameters, JwkSet, KeyAlgorithm};
use jsonwebtoken::{decode, decode_header, errors::ErrorKind, Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value};

/// Seconds of clock skew allowed on `exp` and `nbf`.
pub const LEEWAY: u64 = 30;

/// The keys tokens are signed with.
pub enum Keys<'a> {
    /// HS256: the shared secret.
    Secret(&'a [u8]),
    /// RS256 / ES256: a JWKS document (`{"keys": [...]}`).
    Jwks(&'a str),
}

/// Why the keys cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("the HS256 secret is empty")]
    EmptySecret,
    #[error("the HS256 secret is {0} bytes: at least 32 are needed")]
    ShortSecret(usize),
    #[error("not a JWKS document: {0}")]
    BadJwks(String),
    #[error("the JWKS document has no RS256 or ES256 key")]
    NoKey,
}

/// Why a token is refused: short, and the same for every caller (401).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Rejection(pub String);

struct Key {
    kid: Option<String>,
    algorithm: Algorithm,
    key: DecodingKey,
}

pub struct Verifier {
    keys: Vec<Key>,
    issuer: String,
    audience: String,
}

impl Verifier {
    pub fn new(keys: Keys<'_>, issuer: &str, audience: &str) -> Result<Self, KeyError> {
        let keys = match keys {
            Keys::Secret([]) => return Err(KeyError::EmptySecret),
            Keys::Secret(s) if s.len() < 32 => return Err(KeyError::ShortSecret(s.len())),
            Keys::Secret(s) => vec![Key {
                kid: None,
                algorithm: Algorithm::HS256,
                key: DecodingKey::from_secret(s),
            }],
            Keys::Jwks(text) => jwks(text)?,
        };
        Ok(Self {
            keys,
            issuer: issuer.to_string(),
            audience: audience.to_string(),
        })
    }

    /// The token's claims, once it is proven.
    pub fn verify(&self, token: &str) -> Result<Map<String, Value>, Rejection> {
        let reject = |why: &str| Rejection(why.to_string());
        let header = decode_header(token).map_err(|_| reject("malformed token"))?;
        let key = self
            .keys
            .iter()
            .find(|k| {
                k.algorithm == header.alg
                    && (header.kid.is_none() || k.kid.is_none() || k.kid == header.kid)
            })
            .ok_or_else(
                || match self.keys.iter().any(|k| k.algorithm == header.alg) {
                    true => reject("unknown key id"),
                    false => reject("algorithm not allowed"),
                },
            )?;
        let mut validation = Validation::new(key.algorithm);
        validation.leeway = LEEWAY;
        validation.validate_exp = true;
        validation.validate_nbf = true;
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(&[&self.audience]);
        validation.set_required_spec_claims(&["exp", "nbf", "iss", "aud"]);
        decode::<Map<String, Value>>(token, &key.key, &validation)
            .map(|data| data.claims)
            .map_err(|e| {
                reject(match e.kind() {
                    ErrorKind::ExpiredSignature => "the token has expired",
                    ErrorKind::ImmatureSignature => "the token is not valid yet",
                    ErrorKind::InvalidIssuer => "the token is from another issuer",
                    ErrorKind::InvalidAudience => "the token is for another audience",
                    ErrorKind::InvalidSignature => "bad signature",
                    ErrorKind::MissingRequiredClaim(c) => match c.as_str() {
                        "exp" => "the token lacks `exp`",
                        "nbf" => "the token lacks `nbf`",
                        "iss" => "the token lacks `iss`",
                        _ => "the token lacks `aud`",
                    },
                    ErrorKind::InvalidAlgorithm => "algorithm not allowed",
                    _ => "malformed token",
                })
            })
    }
}

/// The RS256 and ES256 keys of a JWKS document; keys of other kinds are left out.
fn jwks(text: &str) -> Result<Vec<Key>, KeyError> {
    let set: JwkSet = serde_json::from_str(text).map_err(|e| KeyError::BadJwks(e.to_string()))?;
    let mut keys = Vec::new();
    for jwk in &set.keys {
        let algorithm = match (&jwk.algorithm, jwk.common.key_algorithm) {
            (AlgorithmParameters::RSA(_), None | Some(KeyAlgorithm::RS256)) => Algorithm::RS256,
            (AlgorithmParameters::EllipticCurve(_), None | Some(KeyAlgorithm::ES256)) => {
                Algorithm::ES256
            }
            _ => continue,
        };
        let key = DecodingKey::from_jwk(jwk).map_err(|e| KeyError::BadJwks(e.to_string()))?;
        keys.push(Key {
            kid: jwk.common.key_id.clone(),
            algorithm,
            key,
        });
    }
    match keys.is_empty() {
        true => Err(KeyError::NoKey),
        false => Ok(keys),
    }
}
