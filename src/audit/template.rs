//! A user-defined audit (`audits/<name>.sql`): a query that returns the failing rows, with
//! placeholders that are never spliced as text. `{{ relation }}` and `{{ column }}` become the
//! audited relation and column, quoted as identifiers; `{{ ident(arg) }}` the string argument
//! `arg`, quoted as an identifier; any other `{{ arg }}` the argument `arg` as a bound parameter
//! cast to its TOML type (a list as a parenthesized list of them, for `IN`). Placeholders in
//! string literals, quoted identifiers and comments are text.

use crate::engine::Engine;
use crate::ident::quote_ident;
use crate::project::AuditArg;

/// An audit's SQL, split at its placeholders.
#[derive(Debug, Clone, PartialEq)]
pub struct Template {
    pieces: Vec<Piece>,
}

#[derive(Debug, Clone, PartialEq)]
enum Piece {
    Text(String),
    Relation,
    Column,
    /// A bound value.
    Value(String),
    /// A string argument quoted as an identifier.
    Ident(String),
}

/// A placeholder that is not one, at a byte offset of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError {
    pub offset: usize,
    pub message: String,
}

/// Where the placeholders point when a template is rendered.
pub struct Bindings<'a> {
    /// The relation as SQL names it (quoted, or a CTE's name).
    pub relation: &'a str,
    /// The audited column, unquoted; `None` for an audit of a whole relation.
    pub column: Option<&'a str>,
    pub args: &'a [(String, AuditArg)],
    pub engine: Engine,
}

impl Template {
    /// Reads `text`; a final semicolon is dropped.
    pub fn parse(text: &str) -> Result<Self, TemplateError> {
        let text = text.trim_end().trim_end_matches(';');
        let mut pieces = Vec::new();
        let mut text_start = 0;
        let mut at = 0;
        let bytes = text.as_bytes();
        while at < bytes.len() {
            match bytes[at] {
                b'\'' | b'"' => at = closing(bytes, at, bytes[at]),
                b'-' if bytes.get(at + 1) == Some(&b'-') => {
                    at = text[at..].find('\n').map_or(bytes.len(), |n| at + n)
                }
                b'/' if bytes.get(at + 1) == Some(&b'*') => {
                    at = text[at + 2..]
                        .find("*/")
                        .map_or(bytes.len(), |n| at + n + 4)
                }
                b'{' if bytes.get(at + 1) == Some(&b'{') => {
                    let end = text[at..].find("}}").map(|n| at + n).ok_or(TemplateError {
                        offset: at,
                        message: "`{{` without its `}}`".into(),
                    })?;
                    if text_start < at {
                        pieces.push(Piece::Text(text[text_start..at].to_string()));
                    }
                    pieces.push(placeholder(text[at + 2..end].trim(), at)?);
                    at = end + 2;
                    text_start = at;
                }
                _ => at += 1,
            }
        }
        if text_start < text.len() {
            pieces.push(Piece::Text(text[text_start..].to_string()));
        }
        Ok(Self { pieces })
    }

    /// The arguments the template reads, each once, in order.
    pub fn arguments(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for piece in &self.pieces {
            if let Piece::Value(name) | Piece::Ident(name) = piece {
                if !out.contains(&name.as_str()) {
                    out.push(name);
                }
            }
        }
        out
    }

    /// Whether the template reads the audited column (so it must be a column's audit).
    pub fn uses_column(&self) -> bool {
        self.pieces.contains(&Piece::Column)
    }

    /// The arguments read as identifiers.
    pub fn identifier_arguments(&self) -> Vec<&str> {
        self.pieces
            .iter()
            .filter_map(|p| match p {
                Piece::Ident(name) => Some(name.as_str()),
                _ => None,
            })
            .collect()
    }

    /// The SQL with every placeholder filled, its values appended to `params` (`$n`).
    pub fn render(&self, with: &Bindings<'_>, params: &mut Vec<String>) -> Result<String, String> {
        let mut sql = String::new();
        for piece in &self.pieces {
            match piece {
                Piece::Text(text) => sql.push_str(text),
                Piece::Relation => sql.push_str(with.relation),
                Piece::Column => match with.column {
                    Some(column) => sql.push_str(&quote_ident(column)),
                    None => return Err("`{{ column }}` in an audit of a whole relation".into()),
                },
                Piece::Ident(name) => match argument(with.args, name)? {
                    AuditArg::Text(text) => sql.push_str(&quote_ident(text)),
                    _ => return Err(format!("`{name}` is read as an identifier: give a string")),
                },
                Piece::Value(name) => {
                    let value = argument(with.args, name)?;
                    sql.push_str(&bind(value, with.engine, params)?);
                }
            }
        }
        Ok(sql)
    }

    /// The SQL with stand-ins for its placeholders, for checking that it parses.
    pub fn stand_in(&self) -> String {
        self.pieces
            .iter()
            .map(|p| match p {
                Piece::Text(text) => text.as_str(),
                Piece::Relation => "sqb_relation",
                Piece::Column | Piece::Ident(_) => "sqb_column",
                Piece::Value(_) => "(NULL)",
            })
            .collect()
    }
}

/// The offset just past the quote that closes the one at `open` (a doubled quote escapes).
fn closing(bytes: &[u8], open: usize, quote: u8) -> usize {
    let mut at = open + 1;
    while at < bytes.len() {
        if bytes[at] == quote {
            if bytes.get(at + 1) == Some(&quote) {
                at += 2;
                continue;
            }
            return at + 1;
        }
        at += 1;
    }
    bytes.len()
}

fn placeholder(inner: &str, offset: usize) -> Result<Piece, TemplateError> {
    let name = |s: &str| {
        let mut chars = s.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    let ident = inner
        .strip_prefix("ident(")
        .and_then(|rest| rest.strip_suffix(')'))
        .map(str::trim);
    Ok(match (inner, ident) {
        ("relation", _) => Piece::Relation,
        ("column", _) => Piece::Column,
        (_, Some(arg)) if name(arg) => Piece::Ident(arg.to_string()),
        (arg, None) if name(arg) => Piece::Value(arg.to_string()),
        _ => {
            return Err(TemplateError {
                offset,
                message: format!(
                    "`{{{{ {inner} }}}}` is no placeholder: write `{{{{ relation }}}}`, `{{{{ column }}}}`, `{{{{ ARGUMENT }}}}` or `{{{{ ident(ARGUMENT) }}}}`"
                ),
            })
        }
    })
}

fn argument<'a>(args: &'a [(String, AuditArg)], name: &str) -> Result<&'a AuditArg, String> {
    args.iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v)
        .ok_or_else(|| format!("missing `{name}`"))
}

/// A value as a bound parameter cast to its type: `CAST($1 AS BIGINT)`.
fn bind(value: &AuditArg, engine: Engine, params: &mut Vec<String>) -> Result<String, String> {
    let (text, ty) = match value {
        AuditArg::Text(s) => (s.clone(), engine.text_type()),
        AuditArg::Int(i) => (i.to_string(), "BIGINT"),
        AuditArg::Float(f) if f.is_finite() => (f.to_string(), "FLOAT8"),
        AuditArg::Bool(b) => (b.to_string(), "BOOLEAN"),
        AuditArg::List(items) if !items.is_empty() => {
            let parts = items
                .iter()
                .map(|item| bind(item, engine, params))
                .collect::<Result<Vec<_>, _>>()?;
            return Ok(format!("({})", parts.join(", ")));
        }
        _ => return Err("takes a string, a number, a boolean or a non-empty list of them".into()),
    };
    params.push(text);
    Ok(format!("CAST(${} AS {ty})", params.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bindings<'a>(args: &'a [(String, AuditArg)]) -> Bindings<'a> {
        Bindings {
            relation: r#""shop"."orders""#,
            column: Some("Amount"),
            args,
            engine: Engine::Postgres,
        }
    }

    #[test]
    fn placeholders_become_quoted_identifiers_and_bound_values() {
        let t = Template::parse(
            "SELECT * FROM {{ relation }} WHERE {{column}} > {{ max }} AND {{ ident(other) }} IN {{ codes }}",
        )
        .unwrap();
        assert_eq!(t.arguments(), ["max", "other", "codes"]);
        let args = vec![
            ("max".to_string(), AuditArg::Int(100)),
            ("other".to_string(), AuditArg::Text("we\"ird".into())),
            (
                "codes".to_string(),
                AuditArg::List(vec![
                    AuditArg::Text("a".into()),
                    AuditArg::Text("b'".into()),
                ]),
            ),
        ];
        let mut params = Vec::new();
        let sql = t.render(&bindings(&args), &mut params).unwrap();
        assert_eq!(
            sql,
            r#"SELECT * FROM "shop"."orders" WHERE "Amount" > CAST($1 AS BIGINT) AND "we""ird" IN (CAST($2 AS text), CAST($3 AS text))"#
        );
        assert_eq!(params, ["100", "a", "b'"]);
    }

    #[test]
    fn literals_comments_and_quoted_names_are_text() {
        let sql = "SELECT '{{ max }}', \"{{x}}\" -- {{ y }}\n/* {{ z }} */ FROM {{ relation }}";
        let t = Template::parse(sql).unwrap();
        assert!(t.arguments().is_empty());
        assert_eq!(
            t.stand_in(),
            "SELECT '{{ max }}', \"{{x}}\" -- {{ y }}\n/* {{ z }} */ FROM sqb_relation"
        );
    }

    #[test]
    fn what_is_no_placeholder_is_located() {
        let err = Template::parse("SELECT 1 FROM {{ relation }} WHERE {{ 1 + 1 }}").unwrap_err();
        assert_eq!(err.offset, 35);
        let err = Template::parse("SELECT {{ relation").unwrap_err();
        assert_eq!(err.offset, 7);
        let t = Template::parse("SELECT {{ column }} FROM {{ relation }}").unwrap();
        let mut params = Vec::new();
        let whole = Bindings {
            column: None,
            ..bindings(&[])
        };
        assert!(t.render(&whole, &mut params).is_err());
    }
}
