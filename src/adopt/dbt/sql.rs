//! Rewriting dbt's compiled SQL: every relation dbt rendered for a `ref()` or `source()`
//! (`"db"."schema"."orders"`) becomes the name of the sqb model or source it is, so that sqb's
//! DAG has the same edges as dbt's.
//!
//! The text is read by sqlparser's tokenizer in the project's dialect, the one sqb's analysis
//! reads it in: string literals and comments are tokens of their own and never renamed, and at
//! each dotted name (parts joined by dots with nothing between them) the longest prefix that is a
//! known relation is replaced. Everything else is kept byte for byte.

use std::collections::HashMap;
use std::ops::Range;

use sqlparser::tokenizer::{Location, Token, Tokenizer};

use crate::engine::Engine;

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

/// `code` with every known relation but `except` replaced; the tokenizer's error when `code`
/// is not SQL it can read (the text is then kept as it is, and compiling it says where).
pub fn rewrite(
    code: &str,
    relations: &Relations<'_>,
    except: Option<&str>,
    engine: Engine,
) -> Result<Rewritten, String> {
    let dialect = engine.dialect();
    let tokens = Tokenizer::new(dialect.as_ref(), code)
        .tokenize_with_location()
        .map_err(|e| e.to_string())?;
    let mut offsets = Offsets::new(code);
    let tokens: Vec<(Token, Range<usize>)> = tokens
        .into_iter()
        .map(|t| {
            let start = offsets.at(t.span.start);
            (t.token, start..offsets.at(t.span.end))
        })
        .collect();
    let mut out = String::with_capacity(code.len());
    let (mut copied, mut replaced, mut kept) = (0, 0, false);
    let mut i = 0;
    while i < tokens.len() {
        let parts = name_at(&tokens, i);
        if parts.is_empty() {
            i += 1;
            continue;
        }
        let start = tokens[i].1.start;
        let mut next = i + 1;
        for &end_token in parts.iter().rev() {
            let end = tokens[end_token].1.end;
            let name = &code[start..end];
            if Some(name) == except {
                kept = true;
                next = end_token + 1;
                break;
            }
            if let Some(replacement) = relations.names.get(name) {
                out.push_str(&code[copied..start]);
                out.push_str(replacement);
                copied = end;
                replaced += 1;
                next = end_token + 1;
                break;
            }
        }
        i = next;
    }
    out.push_str(&code[copied..]);
    Ok(Rewritten {
        sql: out,
        replaced,
        kept,
    })
}

/// The parts of the dotted name that starts at token `i`, as the index of each part's token (at
/// most four parts); none when no name starts there. A part after a dot belongs to the name
/// before it (`x."db"."t"` is not the relation `"db"."t"`).
fn name_at(tokens: &[(Token, Range<usize>)], i: usize) -> Vec<usize> {
    let is_word = |k: usize| matches!(tokens.get(k), Some((Token::Word(_), _)));
    let touches = |a: usize, b: usize| tokens[a].1.end == tokens[b].1.start;
    let is_dot = |k: usize| matches!(tokens.get(k), Some((Token::Period, _)));
    if !is_word(i) || (i > 0 && is_dot(i - 1) && touches(i - 1, i)) {
        return Vec::new();
    }
    let mut parts = vec![i];
    let mut at = i;
    while parts.len() < 4
        && is_dot(at + 1)
        && is_word(at + 2)
        && touches(at, at + 1)
        && touches(at + 1, at + 2)
    {
        at += 2;
        parts.push(at);
    }
    parts
}

/// Byte offsets of the tokenizer's locations (lines from 1, columns from 1 in characters),
/// asked for in order: each is found from the one before.
struct Offsets<'a> {
    code: &'a str,
    line: u64,
    column: u64,
    byte: usize,
}

impl<'a> Offsets<'a> {
    fn new(code: &'a str) -> Self {
        Self {
            code,
            line: 1,
            column: 1,
            byte: 0,
        }
    }

    fn at(&mut self, location: Location) -> usize {
        if (location.line, location.column) < (self.line, self.column) {
            *self = Offsets::new(self.code);
        }
        let mut chars = self.code[self.byte..].chars();
        while (self.line, self.column) < (location.line, location.column) {
            let Some(c) = chars.next() else {
                break;
            };
            self.byte += c.len_utf8();
            if c == '\n' {
                self.line += 1;
                self.column = 1;
            } else {
                self.column += 1;
            }
        }
        self.byte
    }
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
        let r = rewrite(code, &relations, None, Engine::DuckDb).unwrap();
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
        let r = rewrite(
            code,
            &relations,
            Some(r#""db"."main"."orders""#),
            Engine::DuckDb,
        )
        .unwrap();
        assert_eq!(r.sql, code);
        assert!(r.kept && r.replaced == 0);
    }

    #[test]
    fn a_stray_quote_in_a_literal_does_not_hide_what_follows() {
        let (sql, _) = run(r#"select 'a"b' from "db"."main"."orders""#);
        assert_eq!(sql, r#"select 'a"b' from orders"#);
    }

    #[test]
    fn multi_byte_text_and_dollar_quotes_keep_their_bytes() {
        let (sql, used) =
            run("select 'é ü', $$db.main.customers$$ as \"ñame\"\n  from db.main.customers -- ☃\n");
        assert_eq!(
            sql,
            "select 'é ü', $$db.main.customers$$ as \"ñame\"\n  from customers -- ☃\n"
        );
        assert_eq!(used, 1);
    }

    #[test]
    fn text_the_tokenizer_cannot_read_is_an_error() {
        let relations = Relations::new([("db.main.customers", "customers")]);
        assert!(rewrite("select 'unterminated", &relations, None, Engine::DuckDb).is_err());
    }
}
