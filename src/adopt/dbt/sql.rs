//! Rewriting dbt's compiled SQL: every relation dbt rendered for a `ref()` or `source()`
//! (`"db"."schema"."orders"`) becomes the name of the sqb model or source it is, so that sqb's
//! DAG has the same edges as dbt's.
//!
//! A small lexer walks the text: string literals and comments are copied untouched, and at each
//! dotted name the longest prefix that is a known relation is replaced. Everything else is kept
//! byte for byte.

use std::collections::HashMap;

/// What a relation name in the compiled SQL is replaced with.
pub struct Relations<'a> {
    names: HashMap<&'a str, &'a str>,
}

impl<'a> Relations<'a> {
    pub fn new(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        Self {
            names: pairs.into_iter().collect(),
        }
    }
}

/// What [`rewrite`] made of a statement.
pub struct Rewritten {
    pub sql: String,
    /// How many relations were replaced.
    pub replaced: usize,
    /// Whether the excepted relation occurs (and was kept).
    pub kept: bool,
}

/// `code` with every known relation but `except` replaced.
pub fn rewrite(code: &str, relations: &Relations<'_>, except: Option<&str>) -> Rewritten {
    let mut r = Rewriter {
        code,
        relations,
        except,
        out: String::with_capacity(code.len()),
        copied: 0,
        replaced: 0,
        kept: false,
    };
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        i = match bytes[i] {
            b'\'' => skip_string(bytes, i),
            b'-' if bytes.get(i + 1) == Some(&b'-') => skip_line(bytes, i),
            b'/' if bytes.get(i + 1) == Some(&b'*') => skip_block(bytes, i),
            b'"' if !follows_dot(bytes, i) => r.name_at(i),
            c if is_ident_start(c) && i > 0 && is_ident_byte(bytes[i - 1]) => i + 1,
            c if is_ident_start(c) && !follows_dot(bytes, i) => r.name_at(i),
            _ => i + 1,
        };
    }
    r.out.push_str(&code[r.copied..]);
    Rewritten {
        sql: r.out,
        replaced: r.replaced,
        kept: r.kept,
    }
}

struct Rewriter<'c, 'r> {
    code: &'c str,
    relations: &'r Relations<'r>,
    except: Option<&'c str>,
    out: String,
    /// How much of `code` is in `out`.
    copied: usize,
    replaced: usize,
    kept: bool,
}

impl Rewriter<'_, '_> {
    /// At the start of a dotted name: replaces its longest known prefix, and returns where to
    /// go on (after the replaced prefix, or after the name's first part).
    fn name_at(&mut self, start: usize) -> usize {
        let bytes = self.code.as_bytes();
        let mut ends = Vec::new();
        let mut at = start;
        while let Some(end) = part_end(bytes, at) {
            ends.push(end);
            if ends.len() == 4 || bytes.get(end) != Some(&b'.') {
                break;
            }
            at = end + 1;
        }
        let Some(&first) = ends.first() else {
            return start + 1;
        };
        for &end in ends.iter().rev() {
            if bytes
                .get(end)
                .is_some_and(|&c| is_ident_byte(c) || c == b'"')
            {
                continue;
            }
            let name = &self.code[start..end];
            if Some(name) == self.except {
                self.kept = true;
                return end;
            }
            if let Some(replacement) = self.relations.names.get(name) {
                self.out.push_str(&self.code[self.copied..start]);
                self.out.push_str(replacement);
                self.copied = end;
                self.replaced += 1;
                return end;
            }
        }
        first
    }
}

/// The end of one identifier (quoted or bare) starting at `at`.
fn part_end(bytes: &[u8], at: usize) -> Option<usize> {
    match bytes.get(at)? {
        b'"' => {
            let mut i = at + 1;
            while i < bytes.len() {
                if bytes[i] == b'"' {
                    if bytes.get(i + 1) == Some(&b'"') {
                        i += 2;
                        continue;
                    }
                    return Some(i + 1);
                }
                i += 1;
            }
            None
        }
        &c if is_ident_start(c) => {
            let mut i = at + 1;
            while i < bytes.len() && is_ident_byte(bytes[i]) {
                i += 1;
            }
            Some(i)
        }
        _ => None,
    }
}

/// A part after a dot belongs to the name before it (`x."db"."t"` is not the relation `"db"."t"`).
fn follows_dot(bytes: &[u8], at: usize) -> bool {
    at > 0 && bytes[at - 1] == b'.'
}

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c >= 0x80
}

fn is_ident_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80
}

fn skip_string(bytes: &[u8], at: usize) -> usize {
    let mut i = at + 1;
    while i < bytes.len() {
        if bytes[i] == b'\'' {
            if bytes.get(i + 1) == Some(&b'\'') {
                i += 2;
                continue;
            }
            return i + 1;
        }
        i += 1;
    }
    bytes.len()
}

fn skip_line(bytes: &[u8], at: usize) -> usize {
    bytes[at..]
        .iter()
        .position(|&c| c == b'\n')
        .map_or(bytes.len(), |p| at + p + 1)
}

fn skip_block(bytes: &[u8], at: usize) -> usize {
    bytes[at + 2..]
        .windows(2)
        .position(|w| w == b"*/")
        .map_or(bytes.len(), |p| at + 2 + p + 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(code: &str) -> (String, usize) {
        let relations = Relations::new([
            (r#""db"."main"."orders""#, "orders"),
            (r#""db"."raw"."orders""#, "raw.orders"),
            ("db.main.customers", "customers"),
        ]);
        let r = rewrite(code, &relations, None);
        (r.sql, r.replaced)
    }

    #[test]
    fn replaces_quoted_and_bare_relations() {
        let (sql, used) = run(
            r#"with orders as (select * from "db"."main"."orders") select * from orders join db.main.customers c on true join "db"."raw"."orders" r on db.main.customers.id = r.id"#,
        );
        assert_eq!(
            sql,
            "with orders as (select * from orders) select * from orders join customers c on true join raw.orders r on customers.id = r.id"
        );
        assert_eq!(used, 4);
    }

    #[test]
    fn leaves_literals_comments_and_longer_names_alone() {
        let code = "select '\"db\".\"main\".\"orders\"', 'it''s' -- db.main.customers\n/* db.main.customers */ from db.main.customers_v2, xdb.main.customers, x.\"db\".\"main\".\"orders\"";
        let (sql, used) = run(code);
        assert_eq!(sql, code);
        assert_eq!(used, 0);
    }

    #[test]
    fn the_excepted_relation_is_kept() {
        let relations = Relations::new([(r#""db"."main"."orders""#, "orders")]);
        let code = r#"select * from "db"."main"."orders""#;
        let r = rewrite(code, &relations, Some(r#""db"."main"."orders""#));
        assert_eq!(r.sql, code);
        assert!(r.kept && r.replaced == 0);
    }

    #[test]
    fn a_stray_quote_in_a_literal_does_not_hide_what_follows() {
        let (sql, _) = run(r#"select 'a"b' from "db"."main"."orders""#);
        assert_eq!(sql, r#"select 'a"b' from orders"#);
    }
}
