//! The sqlparser dialects SQL is read in: PostgreSQL's and DuckDB's, exactly, with two
//! shortcuts at the start of an expression that skip a speculative parse.
//!
//! Before it parses any expression prefix, sqlparser tries to read a typed string literal
//! (`DATE '2020-01-01'`): it parses a data type, finds no string after it, formats an error and
//! backtracks. In the models `generate` and most users write (`CAST(s.col AS type) AS col`, one
//! per column) that attempt was about 30% of the parse, the largest part of a cold compile (#20).
//! The shortcuts take only the cases whose outcome the next few tokens already decide:
//!
//! - `CAST ( name AS … )` followed by a token that can neither continue a data type nor start a
//!   literal: a data type named `CAST` takes its parenthesis as modifiers (`CAST(a, AS, b)`), so
//!   the attempt could only succeed with a string or `ARRAY` after the `)`; without one, the cast
//!   is parsed at once. If that fails, sqlparser's own path runs from the same token and fails
//!   the same way.
//! - a name with no keyword meaning, or a dotted chain of them, followed by a token that can
//!   neither continue a data type nor start a literal (`,` `)` `=` `AS` `FROM` …): sqlparser
//!   would give `Identifier` of the first name (the chain's dots are read after the prefix); so
//!   does the shortcut.
//!
//! Everything else is sqlparser's: [`Fast`] forwards to the wrapped dialect every method that
//! PostgreSQL's or DuckDB's dialect overrides in sqlparser 0.64 (the others are the trait's
//! defaults either way; `Cargo.toml` pins that version, since a new one may override more), and
//! its type id, so `dialect_of!` checks inside the parser still see PostgreSQL or DuckDB.
//! sqlparser's own `derive_dialect!` would forward them all, but it reads the trait from the
//! newest sqlparser source in the cargo registry, which breaks the build on a machine that has
//! fetched a newer sqlparser for another project, and in vendored builds. One difference is
//! deliberate: the speculative parse counts against sqlparser's nesting limit (50), so a name
//! nested exactly at that limit parses here where sqlparser alone would stop.
//! The tests parse generated and repository SQL both ways and compare the trees, spans included.

use std::any::TypeId;

use sqlparser::ast::{CastKind, Expr};
use sqlparser::dialect::{BindPlaceholderStyle, Dialect, Precedence};
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

/// sqlparser's dialect `D`, with the shortcuts in `parse_prefix`.
#[derive(Debug)]
pub struct Fast<D>(D);

impl<D: Dialect> Fast<D> {
    pub fn new(dialect: D) -> Self {
        Fast(dialect)
    }
}

impl<D: Dialect> Dialect for Fast<D> {
    fn dialect(&self) -> TypeId {
        self.0.dialect()
    }

    fn parse_prefix(&self, parser: &mut Parser) -> Option<Result<Expr, ParserError>> {
        prefix(parser)
    }

    fn allow_extract_custom(&self) -> bool {
        self.0.allow_extract_custom()
    }
    fn allow_extract_single_quotes(&self) -> bool {
        self.0.allow_extract_single_quotes()
    }
    fn get_next_precedence(&self, parser: &Parser) -> Option<Result<u8, ParserError>> {
        self.0.get_next_precedence(parser)
    }
    fn identifier_quote_style(&self, identifier: &str) -> Option<char> {
        self.0.identifier_quote_style(identifier)
    }
    fn is_custom_operator_part(&self, ch: char) -> bool {
        self.0.is_custom_operator_part(ch)
    }
    fn is_custom_type_typed_string(&self, first_keyword: Keyword, qualified: bool) -> bool {
        self.0.is_custom_type_typed_string(first_keyword, qualified)
    }
    fn is_delimited_identifier_start(&self, ch: char) -> bool {
        self.0.is_delimited_identifier_start(ch)
    }
    fn is_identifier_part(&self, ch: char) -> bool {
        self.0.is_identifier_part(ch)
    }
    fn is_identifier_start(&self, ch: char) -> bool {
        self.0.is_identifier_start(ch)
    }
    fn is_interval_qualifier(&self, kw: Keyword) -> bool {
        self.0.is_interval_qualifier(kw)
    }
    fn is_reserved_for_identifier(&self, kw: Keyword) -> bool {
        self.0.is_reserved_for_identifier(kw)
    }
    fn is_table_alias(&self, kw: &Keyword, parser: &mut Parser) -> bool {
        self.0.is_table_alias(kw, parser)
    }
    fn ordered_bind_placeholder_style(&self) -> Option<BindPlaceholderStyle> {
        self.0.ordered_bind_placeholder_style()
    }
    fn prec_value(&self, prec: Precedence) -> u8 {
        self.0.prec_value(prec)
    }
    fn support_map_literal_syntax(&self) -> bool {
        self.0.support_map_literal_syntax()
    }
    fn supports_add_column_if_not_exists(&self) -> bool {
        self.0.supports_add_column_if_not_exists()
    }
    fn supports_aggregate_order_by_with_empty_args(&self) -> bool {
        self.0.supports_aggregate_order_by_with_empty_args()
    }
    fn supports_aliased_function_args(&self) -> bool {
        self.0.supports_aliased_function_args()
    }
    fn supports_alter_column_type_using(&self) -> bool {
        self.0.supports_alter_column_type_using()
    }
    fn supports_alter_user_as_alter_role(&self) -> bool {
        self.0.supports_alter_user_as_alter_role()
    }
    fn supports_array_typedef_with_brackets(&self) -> bool {
        self.0.supports_array_typedef_with_brackets()
    }
    fn supports_attach_partition_of(&self) -> bool {
        self.0.supports_attach_partition_of()
    }
    fn supports_bitwise_shift_operators(&self) -> bool {
        self.0.supports_bitwise_shift_operators()
    }
    fn supports_column_generic_options(&self) -> bool {
        self.0.supports_column_generic_options()
    }
    fn supports_comma_separated_trim(&self) -> bool {
        self.0.supports_comma_separated_trim()
    }
    fn supports_comment_on(&self) -> bool {
        self.0.supports_comment_on()
    }
    fn supports_comment_optimizer_hint(&self) -> bool {
        self.0.supports_comment_optimizer_hint()
    }
    fn supports_comparison_in_between_low_bound(&self) -> bool {
        self.0.supports_comparison_in_between_low_bound()
    }
    fn supports_copy_from_stdin_data(&self) -> bool {
        self.0.supports_copy_from_stdin_data()
    }
    fn supports_create_group(&self) -> bool {
        self.0.supports_create_group()
    }
    fn supports_create_index_with_clause(&self) -> bool {
        self.0.supports_create_index_with_clause()
    }
    fn supports_create_role_if_not_exists(&self) -> bool {
        self.0.supports_create_role_if_not_exists()
    }
    fn supports_create_table_like_parenthesized(&self) -> bool {
        self.0.supports_create_table_like_parenthesized()
    }
    fn supports_cte_materialization(&self) -> bool {
        self.0.supports_cte_materialization()
    }
    fn supports_detach(&self) -> bool {
        self.0.supports_detach()
    }
    fn supports_detach_partition_of(&self) -> bool {
        self.0.supports_detach_partition_of()
    }
    fn supports_dictionary_syntax(&self) -> bool {
        self.0.supports_dictionary_syntax()
    }
    fn supports_drop_group(&self) -> bool {
        self.0.supports_drop_group()
    }
    fn supports_empty_projections(&self) -> bool {
        self.0.supports_empty_projections()
    }
    fn supports_exclude_constraint(&self) -> bool {
        self.0.supports_exclude_constraint()
    }
    fn supports_explain_with_utility_options(&self) -> bool {
        self.0.supports_explain_with_utility_options()
    }
    fn supports_factorial_operator(&self) -> bool {
        self.0.supports_factorial_operator()
    }
    fn supports_filter_during_aggregation(&self) -> bool {
        self.0.supports_filter_during_aggregation()
    }
    fn supports_from_first_select(&self) -> bool {
        self.0.supports_from_first_select()
    }
    fn supports_geometric_types(&self) -> bool {
        self.0.supports_geometric_types()
    }
    fn supports_group_by_expr(&self) -> bool {
        self.0.supports_group_by_expr()
    }
    fn supports_insert_table_alias(&self) -> bool {
        self.0.supports_insert_table_alias()
    }
    fn supports_install(&self) -> bool {
        self.0.supports_install()
    }
    fn supports_interval_options(&self) -> bool {
        self.0.supports_interval_options()
    }
    fn supports_lambda_functions(&self) -> bool {
        self.0.supports_lambda_functions()
    }
    fn supports_left_associative_joins_without_parens(&self) -> bool {
        self.0.supports_left_associative_joins_without_parens()
    }
    fn supports_listen_notify(&self) -> bool {
        self.0.supports_listen_notify()
    }
    fn supports_load_extension(&self) -> bool {
        self.0.supports_load_extension()
    }
    fn supports_named_fn_args_with_assignment_operator(&self) -> bool {
        self.0.supports_named_fn_args_with_assignment_operator()
    }
    fn supports_named_fn_args_with_colon_operator(&self) -> bool {
        self.0.supports_named_fn_args_with_colon_operator()
    }
    fn supports_named_fn_args_with_eq_operator(&self) -> bool {
        self.0.supports_named_fn_args_with_eq_operator()
    }
    fn supports_named_fn_args_with_expr_name(&self) -> bool {
        self.0.supports_named_fn_args_with_expr_name()
    }
    fn supports_nested_comments(&self) -> bool {
        self.0.supports_nested_comments()
    }
    fn supports_non_decimal_integer_literals(&self) -> bool {
        self.0.supports_non_decimal_integer_literals()
    }
    fn supports_notnull_operator(&self) -> bool {
        self.0.supports_notnull_operator()
    }
    fn supports_numeric_literal_underscores(&self) -> bool {
        self.0.supports_numeric_literal_underscores()
    }
    fn supports_order_by_all(&self) -> bool {
        self.0.supports_order_by_all()
    }
    fn supports_order_by_using_operator(&self) -> bool {
        self.0.supports_order_by_using_operator()
    }
    fn supports_select_wildcard_exclude(&self) -> bool {
        self.0.supports_select_wildcard_exclude()
    }
    fn supports_select_wildcard_replace(&self) -> bool {
        self.0.supports_select_wildcard_replace()
    }
    fn supports_select_wildcard_with_alias(&self) -> bool {
        self.0.supports_select_wildcard_with_alias()
    }
    fn supports_set_names(&self) -> bool {
        self.0.supports_set_names()
    }
    fn supports_sql_option_without_value(&self) -> bool {
        self.0.supports_sql_option_without_value()
    }
    fn supports_string_escape_constant(&self) -> bool {
        self.0.supports_string_escape_constant()
    }
    fn supports_string_literal_column_alias(&self, explicit: bool) -> bool {
        self.0.supports_string_literal_column_alias(explicit)
    }
    fn supports_string_literal_table_alias(&self, explicit: bool) -> bool {
        self.0.supports_string_literal_table_alias(explicit)
    }
    fn supports_table_inheritance_markers(&self) -> bool {
        self.0.supports_table_inheritance_markers()
    }
    fn supports_tilde_like_match_operator(&self) -> bool {
        self.0.supports_tilde_like_match_operator()
    }
    fn supports_trailing_commas(&self) -> bool {
        self.0.supports_trailing_commas()
    }
    fn supports_unicode_string_literal(&self) -> bool {
        self.0.supports_unicode_string_literal()
    }
    fn supports_xml_expressions(&self) -> bool {
        self.0.supports_xml_expressions()
    }
}

/// The prefix expression at the parser's position when a shortcut decides it, else `None`
/// (sqlparser parses it, from the same position).
fn prefix(parser: &mut Parser) -> Option<Result<Expr, ParserError>> {
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
        let expr = p.parse_cast_expr(CastKind::Cast)?;
        // `CAST(a AS b) ARRAY 'x'` is a typed string of the type `CAST(a, AS, b) ARRAY`.
        if ends_name(p, 0) {
            Ok(expr)
        } else {
            Err(ParserError::ParserError(String::new()))
        }
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
