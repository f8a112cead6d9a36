//! Keeping credentials out of every output.
//!
//! Passwords are registered when sqb starts (`SQB_DATABASE_URL`'s, `PGPASSWORD`) and when a
//! connection is configured; [`redact`] then removes them (and any `user:password@` in a URL)
//! from any text before it is printed or written. [`mask_source`] overwrites what a source file
//! shows of a secret (those, a URL's password, the value of a key named like a password) byte
//! for byte, for the snippets of diagnostics.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::{Mutex, OnceLock};

fn secrets() -> &'static Mutex<Vec<String>> {
    static SECRETS: OnceLock<Mutex<Vec<String>>> = OnceLock::new();
    SECRETS.get_or_init(|| Mutex::new(Vec::new()))
}

/// Remembers a secret to remove from output. Empty secrets are ignored.
pub fn register(secret: &str) {
    if secret.is_empty() {
        return;
    }
    let mut list = secrets().lock().unwrap_or_else(|e| e.into_inner());
    if !list.iter().any(|s| s == secret) {
        list.push(secret.to_string());
        // Longest first, so that a secret containing another is removed whole.
        list.sort_by_key(|s| std::cmp::Reverse(s.len()));
    }
}

/// Registers the passwords of the environment: `SQB_DATABASE_URL`'s (as written and
/// percent-decoded) and `PGPASSWORD`, before anything is read that might echo them.
pub fn register_environment() {
    if let Ok(url) = std::env::var("SQB_DATABASE_URL") {
        register_url(&url);
    }
    if let Ok(password) = std::env::var("PGPASSWORD") {
        register(&password);
    }
}

/// Registers the password of `url`, as written and percent-decoded.
pub fn register_url(url: &str) {
    if let Ok(parsed) = url::Url::parse(url) {
        if let Some(password) = parsed.password() {
            register(password);
            if let Ok(decoded) = percent_encoding::percent_decode_str(password).decode_utf8() {
                register(&decoded);
            }
        }
    }
}

/// `text` with every registered secret and every URL password replaced by `***`.
pub fn redact(text: &str) -> String {
    let mut out = redact_url_passwords(text);
    let list = secrets().lock().unwrap_or_else(|e| e.into_inner());
    for secret in list.iter() {
        out = out.replace(secret.as_str(), "***");
    }
    out
}

/// Replaces the password in `scheme://user:password@host` forms.
fn redact_url_passwords(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        let (head, tail) = rest.split_at(i + 3);
        out.push_str(head);
        let authority_end = tail
            .find(|c: char| c == '/' || c.is_whitespace() || c == '?' || c == '"' || c == '\'')
            .unwrap_or(tail.len());
        let authority = &tail[..authority_end];
        match (authority.rfind('@'), authority.find(':')) {
            (Some(at), Some(colon)) if colon < at => {
                out.push_str(&authority[..colon]);
                out.push_str(":***");
                out.push_str(&authority[at..]);
            }
            _ => out.push_str(authority),
        }
        rest = &tail[authority_end..];
    }
    out.push_str(rest);
    out
}

/// Key names whose values are secrets, matched anywhere in a key (`db_password`, `API_TOKEN`).
const SECRET_KEYS: [&str; 4] = ["password", "passwd", "secret", "token"];

/// `text` with every secret it shows overwritten by `*`, byte for byte, so that every offset
/// into it still points where it did: registered secrets, the password of a
/// `scheme://user:password@host`, and the value of any key whose name says password, secret or
/// token (`password = "…"`, `password=…` in a key-value DSN or a URL's query, `"token": "…"`).
pub fn mask_source(text: &str) -> Cow<'_, str> {
    let mut ranges = url_password_ranges(text);
    ranges.extend(secret_value_ranges(text));
    let list = secrets().lock().unwrap_or_else(|e| e.into_inner());
    for secret in list.iter() {
        ranges.extend(
            text.match_indices(secret.as_str())
                .map(|(i, s)| i..i + s.len()),
        );
    }
    if ranges.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut bytes = text.as_bytes().to_vec();
    for range in ranges {
        bytes[range].fill(b'*');
    }
    // Each range spans whole characters (it starts and ends at a match or an ASCII delimiter),
    // so the bytes stay UTF-8; a lossy decoding would only ever add more masking.
    Cow::Owned(
        String::from_utf8(bytes)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
    )
}

/// Where the passwords of `scheme://user:password@host` forms are.
fn url_password_ranges(text: &str) -> Vec<Range<usize>> {
    let mut ranges = Vec::new();
    let mut from = 0;
    while let Some(i) = text[from..].find("://") {
        let start = from + i + 3;
        let authority_len = text[start..]
            .find(|c: char| c == '/' || c.is_whitespace() || c == '?' || c == '"' || c == '\'')
            .unwrap_or(text.len() - start);
        let authority = &text[start..start + authority_len];
        if let (Some(at), Some(colon)) = (authority.rfind('@'), authority.find(':')) {
            if colon < at {
                ranges.push(start + colon + 1..start + at);
            }
        }
        from = start + authority_len;
    }
    ranges
}

/// Where the values of keys named like secrets are: after the key, optional quotes and
/// spaces, `=` or `:`, then a quoted value up to its closing quote on the same line, or a bare
/// one up to a space, quote, comma, semicolon, `&` or closing bracket.
fn secret_value_ranges(text: &str) -> Vec<Range<usize>> {
    let lower = text.to_ascii_lowercase();
    let mut ranges = Vec::new();
    for key in SECRET_KEYS {
        for (i, _) in lower.match_indices(key) {
            let word_end = i + lower[i..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
                .unwrap_or(lower.len() - i);
            if let Some(value) = value_after(text, word_end) {
                ranges.push(value);
            }
        }
    }
    ranges
}

fn value_after(text: &str, key_end: usize) -> Option<Range<usize>> {
    let bytes = text.as_bytes();
    let skip = |mut i: usize, set: &[u8]| {
        while i < bytes.len() && set.contains(&bytes[i]) {
            i += 1;
        }
        i
    };
    let i = skip(key_end, b" \t\"'");
    if !matches!(bytes.get(i), Some(b'=' | b':')) {
        return None;
    }
    let i = skip(i + 1, b" \t");
    let (start, stops): (usize, &[u8]) = match bytes.get(i) {
        Some(q @ (b'"' | b'\'')) => (i + 1, std::slice::from_ref(q)),
        _ => (i, b" \t\"',;&)]}"),
    };
    let len = bytes[start..]
        .iter()
        .position(|b| stops.contains(b) || *b == b'\n' || *b == b'\r')
        .unwrap_or(bytes.len() - start);
    (len > 0).then_some(start..start + len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removes_url_passwords_and_registered_secrets() {
        register("s3cr3t-pw");
        assert_eq!(
            redact("failed: postgres://ana:hunter2@db:5432/shop and s3cr3t-pw"),
            "failed: postgres://ana:***@db:5432/shop and ***"
        );
        assert_eq!(redact("postgres://ana@db/shop"), "postgres://ana@db/shop");
        assert_eq!(redact("no url here"), "no url here");
    }

    #[test]
    fn masks_secrets_in_source_text_byte_for_byte() {
        register("pl4nted-Only-Here");
        let cases = [
            (
                "urll = \"postgres://ana:hunter2@db/shop\"",
                "urll = \"postgres://ana:*******@db/shop\"",
            ),
            ("password = \"hunter2\"", "password = \"*******\""),
            (
                "url = \"host=db password=hunter2 user=ana\"",
                "url = \"host=db password=******* user=ana\"",
            ),
            ("\"api_token\": \"abc\"", "\"api_token\": \"***\""),
            (
                "x = \"pl4nted-Only-Here\" # é",
                "x = \"*****************\" # é",
            ),
            ("schema = \"analytics\"", "schema = \"analytics\""),
            ("password", "password"),
        ];
        for (text, masked) in cases {
            let got = mask_source(text);
            assert_eq!(got, masked, "{text}");
            assert_eq!(got.len(), text.len());
        }
    }
}
