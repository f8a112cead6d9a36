//! A fast lexer for the plain SQL most models are written in: words, numbers, strings, quoted
//! identifiers, comments, whitespace and the common punctuation and operators.
//!
//! It gives exactly the tokens sqlparser's own tokenizer gives for the project's dialect, spans
//! included, less whitespace and comments, or `None` as soon as the text holds anything else (an
//! operator that could run on, a prefixed string such as `E'…'`, `$`, a non-ASCII character
//! outside a string or comment…), and the caller tokenizes with sqlparser. The tests hold the
//! two tokenizers to that on generated text. sqlparser's tokenizer, with its per-character
//! dialect calls and its keyword search, was a quarter of a cold compile.
//!
//! Whitespace and comments are left out because the parser skips them in these dialects: it
//! looks at them only after a `:` or `@` placeholder sigil (which this lexer declines), in
//! BigQuery names, optimizer hints and newline-joined strings (none of them PostgreSQL's or
//! DuckDB's), and when it hands comments back (sqb never asks). The parser then builds the same
//! statements, and the tests compare those too; a model's indentation was a third of its tokens,
//! and skipping them a fifth of the parse (#20).

use std::collections::HashMap;
use std::sync::OnceLock;

use sqlparser::keywords::{Keyword, ALL_KEYWORDS, ALL_KEYWORDS_INDEX};
use sqlparser::tokenizer::{Location, Span, Token, TokenWithSpan, Whitespace, Word};

use crate::engine::Engine;

/// The tokens of `sql` as sqlparser tokenizes it in `engine`'s dialect, without whitespace and
/// comments, or `None` when `sql` steps outside what this lexer knows.
pub fn tokens(sql: &str, engine: Engine) -> Option<Vec<TokenWithSpan>> {
    let mut lexer = Lexer {
        text: sql,
        bytes: sql.as_bytes(),
        pos: 0,
        line: 1,
        column: 1,
        engine,
    };
    // At most one token per byte: reserved once for a model of ordinary size, since regrowing
    // copies every token so far; a huge file grows as it goes rather than reserving ~90 bytes
    // per byte up front.
    let mut out = Vec::with_capacity(sql.len().min(16 * 1024));
    while lexer.pos < lexer.bytes.len() {
        let start = lexer.location();
        let token = lexer.token()?;
        if !matches!(token, Token::Whitespace(_)) {
            out.push(TokenWithSpan::new(
                token,
                Span::new(start, lexer.location()),
            ));
        }
    }
    Some(out)
}

/// A comment the parser may read as an optimizer hint (`--+ …`, `/*+ … */`, `/*abc+ … */`):
/// sqlparser keeps those after `SELECT` and friends in the PostgreSQL dialect, so the lexer
/// declines rather than drop them with the other comments.
fn reads_as_hint(comment: &str) -> bool {
    comment
        .split_once('+')
        .is_some_and(|(before, _)| before.bytes().all(|b| b.is_ascii_alphanumeric()))
}

struct Lexer<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    line: u64,
    column: u64,
    engine: Engine,
}

impl Lexer<'_> {
    fn location(&self) -> Location {
        Location::new(self.line, self.column)
    }

    fn peek(&self, ahead: usize) -> Option<u8> {
        self.bytes.get(self.pos + ahead).copied()
    }

    /// Steps over `n` ASCII bytes that are not line breaks.
    fn skip(&mut self, n: usize) {
        self.pos += n;
        self.column += n as u64;
    }

    /// Steps over `text[pos..end]`, counting lines and characters as sqlparser does.
    fn skip_to(&mut self, end: usize) {
        for &b in &self.bytes[self.pos..end] {
            if b == b'\n' {
                self.line += 1;
                self.column = 1;
            } else if b & 0xC0 != 0x80 {
                // One column per character: UTF-8 continuation bytes add none.
                self.column += 1;
            }
        }
        self.pos = end;
    }

    fn token(&mut self) -> Option<Token> {
        let b = self.bytes[self.pos];
        let token = match b {
            b' ' => self.single(Token::Whitespace(Whitespace::Space)),
            b'\t' => self.single(Token::Whitespace(Whitespace::Tab)),
            b'\n' => {
                self.skip_to(self.pos + 1);
                Token::Whitespace(Whitespace::Newline)
            }
            b'\r' if self.peek(1) == Some(b'\n') => {
                self.skip_to(self.pos + 2);
                Token::Whitespace(Whitespace::Newline)
            }
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => self.word()?,
            b'0'..=b'9' => self.number()?,
            b'\'' => Token::SingleQuotedString(self.quoted(b'\'')?),
            b'"' => Token::Word(Word {
                value: self.quoted(b'"')?,
                quote_style: Some('"'),
                keyword: Keyword::NoKeyword,
            }),
            b'(' => self.single(Token::LParen),
            b')' => self.single(Token::RParen),
            b',' => self.single(Token::Comma),
            b';' => self.single(Token::SemiColon),
            b'[' => self.single(Token::LBracket),
            b']' => self.single(Token::RBracket),
            b'*' => self.single(Token::Mul),
            b'+' => self.single(Token::Plus),
            // `.5` is a number and `._` a field access.
            b'.' if !matches!(self.peek(1), Some(b'0'..=b'9' | b'_')) => self.single(Token::Period),
            b'-' if self.peek(1) == Some(b'-') => self.comment()?,
            b'-' => match (self.peek(1), self.peek(2)) {
                (Some(b'>'), Some(b'>')) => self.operator(3, Token::LongArrow)?,
                (Some(b'>'), _) => self.operator(2, Token::Arrow)?,
                _ => self.operator(1, Token::Minus)?,
            },
            b'/' if self.peek(1) == Some(b'*') => self.block_comment()?,
            b'/' => self.operator(1, Token::Div)?,
            b'=' => self.operator(1, Token::Eq)?,
            b'<' => match self.peek(1) {
                Some(b'=') => self.operator(2, Token::LtEq)?,
                Some(b'>') => self.operator(2, Token::Neq)?,
                _ => self.operator(1, Token::Lt)?,
            },
            b'>' => match self.peek(1) {
                Some(b'=') => self.operator(2, Token::GtEq)?,
                _ => self.operator(1, Token::Gt)?,
            },
            b'!' if self.peek(1) == Some(b'=') => self.operator(2, Token::Neq)?,
            b'|' if self.peek(1) == Some(b'|') => self.operator(2, Token::StringConcat)?,
            b':' if self.peek(1) == Some(b':') => {
                self.skip(2);
                Token::DoubleColon
            }
            _ => return None,
        };
        Some(token)
    }

    fn single(&mut self, token: Token) -> Token {
        self.skip(1);
        token
    }

    /// An operator of `len` bytes, unless an operator character follows: sqlparser reads those
    /// as longer or custom operators (`->`, `<=>`, `||/`, PostgreSQL's `<->`…).
    fn operator(&mut self, len: usize, token: Token) -> Option<Token> {
        let next = self.peek(len);
        if next.is_some_and(|c| b"+-*/<>=~!@#%^&|`?\\:".contains(&c)) {
            return None;
        }
        self.skip(len);
        Some(token)
    }

    /// `-- …` up to the line's end. PostgreSQL's ends at a carriage return too.
    fn comment(&mut self) -> Option<Token> {
        let start = self.pos + 2;
        let stops = self.engine.comment_ends();
        let end = self.bytes[start..]
            .iter()
            .position(|b| stops.contains(b))
            .map_or(self.bytes.len(), |i| start + i);
        let comment = self.text[start..end].to_string();
        if reads_as_hint(&comment) {
            return None;
        }
        self.skip_to(end);
        Some(Token::Whitespace(Whitespace::SingleLineComment {
            comment,
            prefix: "--".to_string(),
        }))
    }

    /// `/* … */`, nested ones inside it kept as written (both dialects nest them). Unterminated
    /// declines, and sqlparser reports it.
    fn block_comment(&mut self) -> Option<Token> {
        let start = self.pos + 2;
        let mut depth = 1;
        let mut i = start;
        while depth > 0 {
            match (self.bytes.get(i)?, self.bytes.get(i + 1)) {
                (b'/', Some(b'*')) => (depth, i) = (depth + 1, i + 2),
                (b'*', Some(b'/')) => (depth, i) = (depth - 1, i + 2),
                _ => i += 1,
            }
        }
        let comment = self.text[start..i - 2].to_string();
        if reads_as_hint(&comment) {
            return None;
        }
        self.skip_to(i);
        Some(Token::Whitespace(Whitespace::MultiLineComment(comment)))
    }

    /// A word of ASCII letters, digits and `_`. Whatever could make it something else (`E'…'`,
    /// `U&'…'`, `B"…"`, `$` or a non-ASCII letter in it, `COPY … FROM STDIN`'s data) declines.
    fn word(&mut self) -> Option<Token> {
        let start = self.pos;
        let end = self.bytes[start..]
            .iter()
            .position(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
            .map_or(self.bytes.len(), |i| start + i);
        if self
            .bytes
            .get(end)
            .is_some_and(|b| b"'\"&$".contains(b) || !b.is_ascii())
        {
            return None;
        }
        let value = &self.text[start..end];
        let keyword = keyword(value);
        if keyword == Keyword::COPY {
            return None;
        }
        self.skip(end - start);
        Some(Token::Word(Word {
            value: value.to_string(),
            quote_style: None,
            keyword,
        }))
    }

    /// Digits, with a fraction of digits after a `.` if one follows. Underscores, exponents,
    /// `0x…`, suffixes and a number running into a word decline.
    fn number(&mut self) -> Option<Token> {
        let start = self.pos;
        let digits = |from: usize| {
            self.bytes[from..]
                .iter()
                .position(|b| !b.is_ascii_digit())
                .map_or(self.bytes.len(), |i| from + i)
        };
        let mut end = digits(start);
        if self.bytes.get(end) == Some(&b'.')
            && self.bytes.get(end + 1).is_some_and(u8::is_ascii_digit)
        {
            end = digits(end + 1);
        }
        if self
            .bytes
            .get(end)
            .is_some_and(|b| b.is_ascii_alphanumeric() || b"_.$".contains(b) || !b.is_ascii())
        {
            return None;
        }
        self.skip(end - start);
        Some(Token::Number(self.text[start..end].to_string(), false))
    }

    /// A string or a quoted identifier: a doubled quote is one quote. Unterminated declines,
    /// and sqlparser reports it.
    fn quoted(&mut self, quote: u8) -> Option<String> {
        let mut value = String::new();
        let mut from = self.pos + 1;
        loop {
            let close = from + self.bytes[from..].iter().position(|b| *b == quote)?;
            value.push_str(&self.text[from..close]);
            if self.bytes.get(close + 1) != Some(&quote) {
                self.skip_to(close + 1);
                return Some(value);
            }
            value.push(quote as char);
            from = close + 2;
        }
    }
}

/// sqlparser's keyword for a word of ASCII letters, digits and `_`, looked up in a hash map
/// instead of sqlparser's binary search of its 800 keywords.
fn keyword(word: &str) -> Keyword {
    static KEYWORDS: OnceLock<HashMap<&'static [u8], Keyword, foldhash::fast::RandomState>> =
        OnceLock::new();
    const LONGEST: usize = 64;
    if word.len() > LONGEST {
        return Keyword::NoKeyword;
    }
    let keywords = KEYWORDS.get_or_init(|| {
        debug_assert!(ALL_KEYWORDS.iter().all(|k| k.len() <= LONGEST));
        ALL_KEYWORDS
            .iter()
            .map(|k| k.as_bytes())
            .zip(ALL_KEYWORDS_INDEX.iter().copied())
            .collect()
    });
    let mut upper = [0u8; LONGEST];
    let upper = &mut upper[..word.len()];
    upper.copy_from_slice(word.as_bytes());
    upper.make_ascii_uppercase();
    keywords.get(&*upper).copied().unwrap_or(Keyword::NoKeyword)
}

#[cfg(test)]
mod tests;
