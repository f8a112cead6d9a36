//! Parsing type strings, as users declare them and as catalogs print them, into [`DataType`].

use super::DataType;
use crate::engine::Engine;

/// A type string that does not parse; `offset` is the byte where parsing stopped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct TypeParseError {
    pub message: String,
    pub offset: usize,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Word(String),
    Quoted(String),
    Number(u64),
    Str(String),
    Punct(char),
}

/// Limits nesting so that hostile input cannot overflow the stack.
const MAX_DEPTH: usize = 64;

/// Parses a type string as `engine` spells it. `FLOAT` is 8 bytes in Postgres and 4 in DuckDB.
pub fn parse(text: &str, engine: Engine) -> Result<DataType, TypeParseError> {
    let tokens = lex(text)?;
    let mut parser = Parser {
        tokens,
        pos: 0,
        engine,
        end: text.len(),
        depth: 0,
    };
    let ty = parser.parse_type()?;
    if parser.pos < parser.tokens.len() {
        return Err(parser.error("unexpected text after the type"));
    }
    Ok(ty)
}

fn lex(text: &str) -> Result<Vec<(Tok, usize)>, TypeParseError> {
    let mut out = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some(&(i, c)) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c.is_alphabetic() || c == '_' {
            let mut word = String::new();
            while let Some(&(_, c)) = chars.peek() {
                if c.is_alphanumeric() || c == '_' || c == '$' {
                    word.push(c);
                    chars.next();
                } else {
                    break;
                }
            }
            out.push((Tok::Word(word), i));
        } else if c.is_ascii_digit() {
            let mut n: u64 = 0;
            while let Some(&(_, c)) = chars.peek() {
                let Some(d) = c.to_digit(10) else { break };
                n = n.saturating_mul(10).saturating_add(u64::from(d));
                chars.next();
            }
            out.push((Tok::Number(n), i));
        } else if c == '"' || c == '\'' {
            chars.next();
            let s = lex_quoted(&mut chars, c).ok_or_else(|| TypeParseError {
                message: format!(
                    "unterminated {}",
                    if c == '"' { "quoted name" } else { "string" }
                ),
                offset: i,
            })?;
            out.push((
                if c == '"' {
                    Tok::Quoted(s)
                } else {
                    Tok::Str(s)
                },
                i,
            ));
        } else if "()[],.".contains(c) {
            chars.next();
            out.push((Tok::Punct(c), i));
        } else {
            return Err(TypeParseError {
                message: format!("unexpected character `{c}`"),
                offset: i,
            });
        }
    }
    Ok(out)
}

fn lex_quoted(
    chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>,
    quote: char,
) -> Option<String> {
    let mut s = String::new();
    while let Some((_, c)) = chars.next() {
        if c == quote {
            if chars.peek().map(|&(_, c)| c) == Some(quote) {
                chars.next();
                s.push(quote);
            } else {
                return Some(s);
            }
        } else {
            s.push(c);
        }
    }
    None
}

/// An identifier as SQL spells it: unquoted names fold to lower case; quoted ones keep their
/// quotes unless they are plain lower-case names.
fn ident(name: &str, quoted: bool) -> String {
    if quoted {
        crate::ident::quote_ident(name)
    } else {
        name.to_ascii_lowercase()
    }
}

struct Parser {
    tokens: Vec<(Tok, usize)>,
    pos: usize,
    engine: Engine,
    end: usize,
    depth: usize,
}

impl Parser {
    fn error(&self, message: impl Into<String>) -> TypeParseError {
        TypeParseError {
            message: message.into(),
            offset: self.tokens.get(self.pos).map_or(self.end, |t| t.1),
        }
    }

    fn peek(&self) -> Option<&Tok> {
        self.tokens.get(self.pos).map(|t| &t.0)
    }

    fn peek_word(&self) -> Option<String> {
        match self.peek() {
            Some(Tok::Word(w)) => Some(w.to_ascii_lowercase()),
            _ => None,
        }
    }

    fn eat_punct(&mut self, c: char) -> bool {
        if self.peek() == Some(&Tok::Punct(c)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect_punct(&mut self, c: char) -> Result<(), TypeParseError> {
        if self.eat_punct(c) {
            Ok(())
        } else {
            Err(self.error(format!("expected `{c}`")))
        }
    }

    fn eat_word(&mut self, word: &str) -> bool {
        if self.peek_word().as_deref() == Some(word) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn number(&mut self) -> Result<u32, TypeParseError> {
        match self.peek() {
            Some(Tok::Number(n)) => {
                let n = u32::try_from(*n).map_err(|_| self.error("number is too large"))?;
                self.pos += 1;
                Ok(n)
            }
            _ => Err(self.error("expected a number")),
        }
    }

    fn parse_type(&mut self) -> Result<DataType, TypeParseError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error("type is nested too deeply"));
        }
        let mut ty = self.parse_base()?;
        while self.eat_punct('[') {
            let size = if self.eat_punct(']') {
                None
            } else {
                let n = self.number()?;
                self.expect_punct(']')?;
                Some(n)
            };
            ty = DataType::Array {
                element: Box::new(ty),
                size,
            };
        }
        self.depth -= 1;
        Ok(ty)
    }

    fn parse_base(&mut self) -> Result<DataType, TypeParseError> {
        let (first, quoted) = match self.peek().cloned() {
            Some(Tok::Word(w)) => (w, false),
            Some(Tok::Quoted(q)) => (q, true),
            _ => return Err(self.error("expected a type name")),
        };
        self.pos += 1;
        if self.eat_punct('.') {
            return self.parse_qualified(first, quoted);
        }
        if quoted {
            self.skip_modifiers()?;
            return Ok(DataType::Named(ident(&first, true)));
        }
        let lower = first.to_ascii_lowercase();
        self.parse_named(&lower)
    }

    fn parse_qualified(
        &mut self,
        schema: String,
        quoted: bool,
    ) -> Result<DataType, TypeParseError> {
        let schema = ident(&schema, quoted);
        let name = match self.peek().cloned() {
            Some(Tok::Word(w)) => ident(&w, false),
            Some(Tok::Quoted(q)) => ident(&q, true),
            _ => return Err(self.error("expected a type name after `.`")),
        };
        self.pos += 1;
        self.skip_modifiers()?;
        Ok(DataType::Named(format!("{schema}.{name}")))
    }

    /// Skips `(…)` modifiers of an opaque type, such as `geometry(Point, 4326)`.
    fn skip_modifiers(&mut self) -> Result<(), TypeParseError> {
        if !self.eat_punct('(') {
            return Ok(());
        }
        let mut depth = 1;
        while depth > 0 {
            match self.peek() {
                None => return Err(self.error("expected `)`")),
                Some(Tok::Punct('(')) => depth += 1,
                Some(Tok::Punct(')')) => depth -= 1,
                _ => {}
            }
            self.pos += 1;
        }
        Ok(())
    }

    fn parse_named(&mut self, name: &str) -> Result<DataType, TypeParseError> {
        use DataType::*;
        let ty = match name {
            "int" | "integer" | "int4" | "signed" | "serial" | "serial4" | "int32" => Integer,
            "smallint" | "int2" | "short" | "smallserial" | "serial2" | "int16" => SmallInt,
            "bigint" | "int8" | "long" | "bigserial" | "serial8" | "int64" => BigInt,
            "tinyint" | "int1" => TinyInt,
            "hugeint" | "int128" => HugeInt,
            "utinyint" | "uint8" => UTinyInt,
            "usmallint" | "uint16" => USmallInt,
            "uinteger" | "uint32" => UInteger,
            "ubigint" | "uint64" => UBigInt,
            "uhugeint" | "uint128" => UHugeInt,
            "numeric" | "decimal" | "dec" => Numeric(self.numeric_args()?),
            "real" | "float4" => Real,
            "float8" => Double,
            "double" => {
                self.eat_word("precision");
                Double
            }
            "float" => self.float()?,
            "varchar" | "nvarchar" => Varchar(self.length()?),
            "character" | "char" | "nchar" | "national" => self.character(name)?,
            "bpchar" => Char(self.length()?),
            "text" | "string" => Text,
            "bool" | "boolean" | "logical" => Boolean,
            "date" => Date,
            "time" | "timetz" => {
                let (precision, tz) = self.time_tail(name == "timetz")?;
                Time { precision, tz }
            }
            "timestamp" | "timestamptz" | "datetime" => {
                let (precision, tz) = self.time_tail(name == "timestamptz")?;
                Timestamp { precision, tz }
            }
            "interval" => self.interval()?,
            "uuid" => Uuid,
            "json" => Json,
            "jsonb" => Jsonb,
            "bytea" | "blob" | "binary" | "varbinary" | "bytes" => Bytes,
            "struct" | "row" => Struct(self.fields("STRUCT")?),
            "union" => Union(self.fields("UNION")?),
            "map" => self.map()?,
            "list" => self.list()?,
            "enum" => Enum(self.enum_members()?),
            "bit" if self.eat_word("varying") => self.opaque("bit varying")?,
            _ => match name.strip_prefix('_') {
                // Postgres names array types after their element with a leading underscore;
                // the element is a type name, so it starts with a letter (`_2` is not `2[]`).
                Some(element) if element.starts_with(|c: char| c.is_alphabetic()) => Array {
                    element: Box::new(self.parse_named(element)?),
                    size: None,
                },
                _ => self.opaque(name)?,
            },
        };
        Ok(ty)
    }

    fn opaque(&mut self, name: &str) -> Result<DataType, TypeParseError> {
        self.skip_modifiers()?;
        Ok(DataType::Named(name.to_string()))
    }

    fn optional_args(&mut self) -> Result<Option<Vec<u32>>, TypeParseError> {
        if !self.eat_punct('(') {
            return Ok(None);
        }
        let mut args = vec![self.number()?];
        while self.eat_punct(',') {
            args.push(self.number()?);
        }
        self.expect_punct(')')?;
        Ok(Some(args))
    }

    fn length(&mut self) -> Result<Option<u32>, TypeParseError> {
        let start = self.pos;
        match self.optional_args()?.as_deref() {
            None => Ok(None),
            Some([n]) => Ok(Some(*n)),
            Some(_) => {
                self.pos = start;
                Err(self.error("a length takes one number"))
            }
        }
    }

    fn numeric_args(&mut self) -> Result<Option<(u32, Option<u32>)>, TypeParseError> {
        let start = self.pos;
        let args = self.optional_args()?;
        let fail = |p: &mut Self, msg: &str| {
            p.pos = start;
            Err(p.error(msg))
        };
        match args.as_deref() {
            None => Ok(None),
            Some([p]) if *p >= 1 => Ok(Some((*p, None))),
            Some([p, s]) if *p >= 1 && s <= p => Ok(Some((*p, Some(*s)))),
            Some([_, _]) | Some([_]) => fail(
                self,
                "precision must be at least 1 and scale at most precision",
            ),
            Some(_) => fail(self, "NUMERIC takes a precision and an optional scale"),
        }
    }

    fn float(&mut self) -> Result<DataType, TypeParseError> {
        Ok(match self.length()? {
            Some(p) if p <= 24 => DataType::Real,
            Some(_) => DataType::Double,
            None if self.engine.bare_float_is_double() => DataType::Double,
            None => DataType::Real,
        })
    }

    fn character(&mut self, name: &str) -> Result<DataType, TypeParseError> {
        if name == "national" && !self.eat_word("character") && !self.eat_word("char") {
            return Err(self.error("expected `CHARACTER` after `NATIONAL`"));
        }
        if self.eat_word("varying") {
            return Ok(DataType::Varchar(self.length()?));
        }
        Ok(DataType::Char(self.length()?))
    }

    fn time_tail(&mut self, mut tz: bool) -> Result<(Option<u32>, bool), TypeParseError> {
        let precision = self.length()?;
        if self.eat_word("with") {
            tz = true;
            self.time_zone()?;
        } else if self.eat_word("without") {
            tz = false;
            self.time_zone()?;
        }
        Ok((precision, tz))
    }

    fn time_zone(&mut self) -> Result<(), TypeParseError> {
        if self.eat_word("time") && self.eat_word("zone") {
            Ok(())
        } else {
            Err(self.error("expected `TIME ZONE`"))
        }
    }

    fn interval(&mut self) -> Result<DataType, TypeParseError> {
        const FIELDS: &[&str] = &["year", "month", "day", "hour", "minute", "second", "to"];
        while let Some(word) = self.peek_word() {
            if !FIELDS.contains(&word.as_str()) {
                break;
            }
            self.pos += 1;
        }
        self.length()?;
        Ok(DataType::Interval)
    }

    fn fields(&mut self, kind: &str) -> Result<Vec<(String, DataType)>, TypeParseError> {
        self.expect_punct('(')?;
        let mut fields = Vec::new();
        loop {
            let name = match self.peek().cloned() {
                Some(Tok::Word(w)) | Some(Tok::Quoted(w)) => w,
                _ => return Err(self.error(format!("expected a {kind} field name"))),
            };
            self.pos += 1;
            fields.push((name, self.parse_type()?));
            if !self.eat_punct(',') {
                break;
            }
        }
        self.expect_punct(')')?;
        Ok(fields)
    }

    fn map(&mut self) -> Result<DataType, TypeParseError> {
        self.expect_punct('(')?;
        let key = self.parse_type()?;
        self.expect_punct(',')?;
        let value = self.parse_type()?;
        self.expect_punct(')')?;
        Ok(DataType::Map(Box::new(key), Box::new(value)))
    }

    fn list(&mut self) -> Result<DataType, TypeParseError> {
        self.expect_punct('(')?;
        let element = self.parse_type()?;
        self.expect_punct(')')?;
        Ok(DataType::Array {
            element: Box::new(element),
            size: None,
        })
    }

    fn enum_members(&mut self) -> Result<Vec<String>, TypeParseError> {
        self.expect_punct('(')?;
        let mut members = Vec::new();
        loop {
            match self.peek().cloned() {
                Some(Tok::Str(s)) => members.push(s),
                _ => return Err(self.error("expected a quoted enum member")),
            }
            self.pos += 1;
            if !self.eat_punct(',') {
                break;
            }
        }
        self.expect_punct(')')?;
        Ok(members)
    }
}
