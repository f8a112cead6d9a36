//! The sqlparser dialects SQL is read in: PostgreSQL's and DuckDB's, exactly, with two
//! shortcuts at the start of an expression that skip a speculative parse.
//!
//! Before it parses any expression prefix, sqlparser tries to read a typed string literal
//! (`DATE '2020-01-01'`): it parses a data type, finds no string after it, formats an error and
//! backtracks. In the models `generate` and most users write (`CAST(s.col AS type) AS col`, one
//! per column) that attempt was about 30% of the parse, the largest part of a cold compile (#20).
//! The shortcuts take only the cases whose outcome the next few tokens already decide:
//!
//! - `CAST ( name AS`: a data type named `CAST` is only a typed string with no modifiers, and `(`
//!   starts modifiers, so the attempt cannot succeed: the cast is parsed at once. If that fails,
//!   sqlparser's own path runs from the same token and fails the same way.
//! - a name with no keyword meaning, or a dotted chain of them, followed by a token that can
//!   neither continue a data type nor start a literal (`,` `)` `=` `AS` `FROM` …): sqlparser
//!   would give `Identifier` of the first name (the chain's dots are read after the prefix); so
//!   does the shortcut.
//!
//! Everything else, and every other dialect method, is sqlparser's: the dialects are derived
//! with `derive_dialect!`, which forwards each method of the trait and keeps the type id, so
//! `dialect_of!` checks inside the parser still see PostgreSQL or DuckDB. One difference is
//! deliberate: the speculative parse counts against sqlparser's nesting limit (50), so a name
//! nested exactly at that limit parses here where sqlparser alone would stop.
//! The tests parse generated and repository SQL both ways and compare the trees, spans included.

use sqlparser::ast::{CastKind, Expr};
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

sqlparser::derive_dialect!(
    FastPostgreSqlDialect,
    sqlparser::dialect::PostgreSqlDialect,
    preserve_type_id = true,
    overrides = { parse_prefix = crate::engine::dialect::prefix(_parser) }
);

sqlparser::derive_dialect!(
    FastDuckDbDialect,
    sqlparser::dialect::DuckDbDialect,
    preserve_type_id = true,
    overrides = { parse_prefix = crate::engine::dialect::prefix(_parser) }
);

/// The prefix expression at the parser's position when a shortcut decides it, else `None`
/// (sqlparser parses it, from the same position).
pub(super) fn prefix(parser: &mut Parser) -> Option<Result<Expr, ParserError>> {
    let Token::Word(word) = &parser.peek_token_ref().token else {
        return None;
    };
    match word.keyword {
        Keyword::CAST => cast(parser),
        Keyword::NoKeyword => name(parser),
        _ => None,
    }
}

/// `CAST ( name AS type )`, parsed directly; on any failure, `None` and the position unmoved.
///
/// Only a plain name or dotted chain as the operand: it is read by [`name`], so the attempt never
/// reaches sqlparser's memo of failed prefixes, and a failure (in the type or the closing
/// parenthesis) leaves sqlparser's own path to fail the same way with the same message.
fn cast(parser: &mut Parser) -> Option<Result<Expr, ParserError>> {
    if parser.peek_nth_token_ref(1).token != Token::LParen || !is_plain(parser, 2) {
        return None;
    }
    let after = chain_end(parser, 2)?;
    let as_follows = matches!(&parser.peek_nth_token_ref(after).token, Token::Word(w) if w.keyword == Keyword::AS);
    // The operand must be one [`name`] takes, or sqlparser's own prefix parse (which remembers
    // its failures) would run inside the attempt.
    if !as_follows || !ends_name(parser, after) {
        return None;
    }
    let parsed = parser.maybe_parse(|p| {
        p.advance_token();
        p.parse_cast_expr(CastKind::Cast)
    });
    match parsed {
        Ok(Some(expr)) => Some(Ok(expr)),
        _ => None,
    }
}

/// Whether the token `ahead` positions on is a name with no keyword meaning.
fn is_plain(parser: &Parser, ahead: usize) -> bool {
    matches!(&parser.peek_nth_token_ref(ahead).token, Token::Word(w) if w.keyword == Keyword::NoKeyword)
}

/// The position just past the dotted chain of words that starts `ahead` positions on, or `None`
/// if a dot is not followed by a word.
fn chain_end(parser: &Parser, ahead: usize) -> Option<usize> {
    let mut at = ahead + 1;
    while parser.peek_nth_token_ref(at).token == Token::Period {
        if !matches!(parser.peek_nth_token_ref(at + 1).token, Token::Word(_)) {
            return None;
        }
        at += 2;
    }
    Some(at)
}

/// A plain name (or the first of a dotted chain) that nothing after it can make a typed string,
/// a function call, a lambda or an introduced string.
fn name(parser: &mut Parser) -> Option<Result<Expr, ParserError>> {
    // `xml '…'` is a typed string by name, but an unquoted `xml` is a keyword and never gets here.
    let head = parser.peek_token_ref();
    let Token::Word(word) = &head.token else {
        return None;
    };
    let ahead = chain_end(parser, 0)?;
    if !ends_name(parser, ahead) {
        return None;
    }
    let expr = Expr::Identifier(word.to_ident(head.span));
    parser.advance_token();
    Some(Ok(expr))
}

/// Whether the token `ahead` positions on can follow a finished name: not `(`, `[`, a literal, an
/// arrow, `ARRAY` or another word that a data type or a lambda could take.
fn ends_name(parser: &Parser, ahead: usize) -> bool {
    match &parser.peek_nth_token_ref(ahead).token {
        Token::Comma
        | Token::RParen
        | Token::SemiColon
        | Token::EOF
        | Token::Eq
        | Token::Neq
        | Token::Lt
        | Token::Gt
        | Token::LtEq
        | Token::GtEq
        | Token::Plus
        | Token::Minus
        | Token::Mul
        | Token::Div
        | Token::Mod
        | Token::StringConcat
        | Token::DoubleColon => true,
        Token::Word(next) => {
            matches!(
                next.keyword,
                Keyword::AS
                    | Keyword::FROM
                    | Keyword::WHERE
                    | Keyword::AND
                    | Keyword::OR
                    | Keyword::IS
                    | Keyword::ON
                    | Keyword::THEN
                    | Keyword::ELSE
                    | Keyword::END
                    | Keyword::WHEN
                    | Keyword::ASC
                    | Keyword::DESC
                    | Keyword::GROUP
                    | Keyword::ORDER
                    | Keyword::HAVING
                    | Keyword::LIMIT
                    | Keyword::UNION
            ) && parser.peek_nth_token_ref(ahead + 1).token != Token::Arrow
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests;
