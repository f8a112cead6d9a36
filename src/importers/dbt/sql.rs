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
pub struct Rewritten<'a> {
    pub sql: String,
    /// The relation names replaced, in order.
    pub used: Vec<&'a str>,
    /// Whether the excepted relation occurs (and was kept).
    pub kept: bool,
}

/// `code` with every known relation but `except` replaced.
pub fn rewrite<'a>(code: &str, relations: &Relations<'a>, except: Option<&str>) -> Rewritten<'a> {
    let bytes = code.as_bytes();
    let mut out = String::with_capacity(code.len());
    let mut used = Vec::new();
    let mut kept = false;
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\'' => i = skip_string(bytes, i),
            b'-' if bytes.get(i + 1) == Some(&b'-') => i = skip_line(bytes, i),
            b'/' if bytes.get(i + 1) == Some(&b'*') => i = skip_block(bytes, i),
            b'"' if !follows_dot(bytes, i) => {
                i = name_at(
                    code,
                    i,
                    relations,
                    except,
                    &mut out,
                    &mut copied,
                    &mut used,
                    &mut kept,
                )
            }
            c if is_ident_start(c) && i > 0 && is_ident_byte(bytes[i - 1]) => i += 1,
            c if is_ident_start(c) && !follows_dot(bytes, i) => {
                i = name_at(
                    code,
                    i,
                    relations,
                    except,
                    &mut out,
                    &mut copied,
                    &mut used,
                    &mut kept,
                )
            }
            _ => i += 1,
        }
    }
    out.push_str(&code[copied..]);
    Rewritten {
        sql: out,
        used,
        kept,
    }
}

/// At the start of a dotted name: replaces its longest known prefix, and returns where to go
/// on (after the replaced prefix, or after the name's first part).
fn name_at<'a>(
    code: &str,
    start: usize,
    relations: &Relations<'a>,
    except: Option<&str>,
    out: &mut String,
    copied: &mut usize,
    used: &mut Vec<&'a str>,
    kept: &mut bool,
) -> usize {
    let bytes = code.as_bytes();
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
        if Some(&code[start..end]) == except {
            *kept = true;
            return end;
        }
        if let Some((name, replacement)) = relations.names.get_key_value(&code[start..end]) {
            out.push_str(&code[*copied..start]);
            out.push_str(replacement);
            *copied = end;
            used.push(*name);
            return end;
        }
    }
    first
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

    fn run(code: &str) -> (String, Vec<&'static str>) {
        let r = run_with(code);
        (r.sql, r.used)
    }

    fn run_with(code: &str) -> Rewritten<'static> {
        let relations = Relations::new([
            (r#""db"."main"."orders""#, "orders"),
            (r#""db"."raw"."orders""#, "raw.orders"),
            ("db.main.customers", "customers"),
        ]);
        rewrite(code, &relations, None)
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
        assert_eq!(used.len(), 4);
    }

    #[test]
    fn leaves_literals_comments_and_longer_names_alone() {
        let code = "select '\"db\".\"main\".\"orders\"', 'it''s' -- db.main.customers\n/* db.main.customers */ from db.main.customers_v2, xdb.main.customers, x.\"db\".\"main\".\"orders\"";
        let (sql, used) = run(code);
        assert_eq!(sql, code);
        assert!(used.is_empty());
    }

    #[test]
    fn the_excepted_relation_is_kept() {
        let relations = Relations::new([(r#""db"."main"."orders""#, "orders")]);
        let code = r#"select * from "db"."main"."orders""#;
        let r = rewrite(code, &relations, Some(r#""db"."main"."orders""#));
        assert_eq!(r.sql, code);
        assert!(r.kept && r.used.is_empty());
    }

    #[test]
    fn a_stray_quote_in_a_literal_does_not_hide_what_follows() {
        let (sql, _) = run(r#"select 'a"b' from "db"."main"."orders""#);
        assert_eq!(sql, r#"select 'a"b' from orders"#);
    }
}
