//! Tokens that must not pass: a proven token taken apart and mutated, for the verifier's fuzz
//! test and `scripts/fuzz-tokens` (which runs it for ten minutes). Deterministic by seed, so a
//! token that passed when it should not is reproduced by its seed and step.

/// Mutations of `base`, a token the verifier accepts, drawn from a seeded generator.
pub struct Mutations {
    base: String,
    state: u64,
}

const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Headers a forger might try: no algorithm, another algorithm, a key id no key has, a header
/// that is not JSON or not an object.
const HEADERS: &[&str] = &[
    r#"{"alg":"none","typ":"JWT"}"#,
    r#"{"alg":"None"}"#,
    r#"{"alg":"HS256","typ":"JWT"}"#,
    r#"{"alg":"HS512"}"#,
    r#"{"alg":"RS256","kid":"x"}"#,
    r#"{"alg":"ES256","kid":"../../etc/passwd"}"#,
    r#"{"alg":"PS256"}"#,
    r#"{"alg":"EdDSA"}"#,
    r#"{"alg":"HS256","crit":["exp"]}"#,
    r#"{"alg":"HS256","jku":"http://127.0.0.1:1/jwks"}"#,
    r#"{"alg":"HS256","x5u":"http://127.0.0.1:1/cert"}"#,
    r#"{"alg":"HS256","jwk":{"kty":"oct","k":"AAAA"}}"#,
    r#"["HS256"]"#,
    r#"{"alg":1}"#,
    "null",
    "{",
];

/// Claims a forger might try: another tenant, no expiry, a role added, nested and odd values.
const PAYLOADS: &[&str] = &[
    r#"{"customer_id":1}"#,
    r#"{"customer_id":2,"roles":["finance"]}"#,
    r#"{"iss":"x","aud":"y","exp":99999999999,"nbf":0,"roles":["analyst"]}"#,
    r#"{"exp":"never","nbf":null}"#,
    r#"{"exp":1e400}"#,
    r#"{"exp":-1,"nbf":-99999999999999999999}"#,
    r#"[]"#,
    r#""a string""#,
    r#"{"customer_id":{"$ne":null}}"#,
    "",
];

impl Mutations {
    pub fn new(base: &str, seed: u64) -> Self {
        Self {
            base: base.to_string(),
            state: seed ^ 0x9e37_79b9_7f4a_7c15,
        }
    }

    fn draw(&mut self, below: usize) -> usize {
        // splitmix64: good enough spread for choosing mutations, and reproducible.
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z % below.max(1) as u64) as usize
    }

    fn parts(&self) -> Vec<String> {
        self.base.split('.').map(str::to_string).collect()
    }

    fn random_segment(&mut self) -> String {
        let len = self.draw(96);
        (0..len)
            .map(|_| ALPHABET[self.draw(ALPHABET.len())] as char)
            .collect()
    }

    /// The next mutation; never `base` itself.
    pub fn next_token(&mut self) -> String {
        loop {
            let token = self.mutate();
            if token != self.base {
                return token;
            }
        }
    }

    fn mutate(&mut self) -> String {
        let mut bytes = self.base.clone().into_bytes();
        match self.draw(10) {
            0 => {
                let i = self.draw(bytes.len());
                bytes[i] ^= 1 << self.draw(8);
                String::from_utf8_lossy(&bytes).into_owned()
            }
            1 => {
                let i = self.draw(bytes.len());
                bytes[i] = ALPHABET[self.draw(ALPHABET.len())];
                String::from_utf8_lossy(&bytes).into_owned()
            }
            2 => {
                let at = self.draw(self.base.len());
                self.base[..at].to_string()
            }
            3 => {
                let mut parts = self.parts();
                let (a, b) = (self.draw(parts.len()), self.draw(parts.len()));
                parts.swap(a, b);
                let i = self.draw(parts.len());
                parts[i] = self.random_segment();
                parts.join(".")
            }
            4 => {
                let mut parts = self.parts();
                parts[0] = base64url(HEADERS[self.draw(HEADERS.len())].as_bytes());
                if self.draw(2) == 0 {
                    parts[2] = String::new();
                }
                parts.join(".")
            }
            5 => {
                let mut parts = self.parts();
                parts[1] = base64url(PAYLOADS[self.draw(PAYLOADS.len())].as_bytes());
                parts.join(".")
            }
            6 => {
                let mut parts = self.parts();
                let extra = self.random_segment();
                parts.insert(self.draw(parts.len() + 1), extra);
                parts.join(".")
            }
            7 => {
                let repeat = 1 + self.draw(2048);
                format!("{}.{}", self.base, "A".repeat(repeat))
            }
            8 => {
                let parts = self.parts();
                let header = base64url(HEADERS[self.draw(HEADERS.len())].as_bytes());
                let payload = base64url(PAYLOADS[self.draw(PAYLOADS.len())].as_bytes());
                format!("{header}.{payload}.{}", parts.get(2).map_or("", |s| s))
            }
            _ => {
                let weird = ["\u{0}", "=", "+", "/", " ", "\u{fffd}", "..", "\u{202e}"];
                let at = self.draw(self.base.len());
                let mut token = self.base.clone();
                if token.is_char_boundary(at) {
                    token.insert_str(at, weird[self.draw(weird.len())]);
                }
                token
            }
        }
    }
}

/// base64url without padding, as a JWT spells its parts (also for tests that forge tokens).
pub fn base64url(bytes: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().fold(0u32, |a, b| (a << 8) | u32::from(*b)) << (8 * (3 - chunk.len()));
        for i in 0..=chunk.len() {
            out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}
