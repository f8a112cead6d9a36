//! Keeping credentials out of every output.
//!
//! Passwords are registered once, when a connection is configured; [`redact`] then removes them
//! (and any `user:password@` in a URL) from any text before it is printed or written.

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
}
