//! Checking that each model's SQL parses as exactly one query in the project engine's dialect.

use sqlparser::ast::{Spanned as _, Statement};
use sqlparser::dialect::Dialect;
use sqlparser::parser::{Parser, ParserError};

use crate::diagnostics::{Code, Diagnostic};
use crate::engine::Engine;
use crate::project::{Model, Project};
use crate::source::{Loc, SourceFile};

/// The sqlparser dialect of an engine.
pub fn dialect(engine: Engine) -> Box<dyn Dialect> {
    engine.dialect()
}

/// Parses a model's SQL; returns the query statement, or reports why it is not one.
pub fn check_model(
    project: &Project,
    model: &Model,
    diags: &mut Vec<Diagnostic>,
) -> Option<Box<Statement>> {
    let file = project.sources.get(model.sql_file);
    let statements = match parse(file.text(), project.engine()) {
        Ok(statements) => statements,
        Err(err) => {
            diags.push(syntax_error(model, file, &err, project.engine()));
            return None;
        }
    };
    let mut statements = statements.into_iter();
    let Some(first) = statements.next() else {
        diags.push(
            Diagnostic::error(
                Code::SqlNotSingleSelect,
                format!("model `{}` has no SQL statement", model.name),
            )
            .at(Loc::file_start(model.sql_file), "empty model")
            .hint("a model is one SELECT statement"),
        );
        return None;
    };
    if let Some(second) = statements.next() {
        diags.push(
            Diagnostic::error(
                Code::SqlNotSingleSelect,
                format!("model `{}` has more than one statement", model.name),
            )
            .at(statement_loc(model, file, &second), "a second statement")
            .hint("a model is exactly one SELECT statement; move the others into their own models"),
        );
        return None;
    }
    if !matches!(first, Statement::Query(_)) {
        diags.push(
            Diagnostic::error(
                Code::SqlNotSingleSelect,
                format!("model `{}` is not a SELECT query", model.name),
            )
            .at(statement_loc(model, file, &first), "not a query")
            .hint("a model is one SELECT (or WITH … SELECT) statement; sqb materializes it"),
        );
        return None;
    }
    // Boxed: a statement is kilobytes inline, and one per model waits for the second pass.
    Some(Box::new(first))
}

/// The statements of `sql`, tokenized by [`super::lex`] where it can.
fn parse(sql: &str, engine: Engine) -> Result<Vec<Statement>, ParserError> {
    let dialect = dialect(engine);
    match super::lex::tokens(sql, engine) {
        Some(tokens) => Parser::new(dialect.as_ref())
            .with_tokens_with_locations(tokens)
            .parse_statements(),
        None => Parser::parse_sql(dialect.as_ref(), sql),
    }
}

fn statement_loc(model: &Model, file: &SourceFile, statement: &Statement) -> Loc {
    let span = statement.span();
    if span.start.line == 0 {
        return Loc::file_start(model.sql_file);
    }
    let start = file.offset_of(span.start.line as usize, span.start.column as usize);
    let end = file
        .offset_of(span.end.line as usize, span.end.column as usize)
        .max(start);
    let first_line_end = file.text()[start..].find('\n').map_or(end, |i| start + i);
    Loc::new(model.sql_file, start..end.min(first_line_end))
}

fn syntax_error(model: &Model, file: &SourceFile, err: &ParserError, engine: Engine) -> Diagnostic {
    let (text, position) = match err {
        ParserError::TokenizerError(s) | ParserError::ParserError(s) => split_position(s),
        ParserError::RecursionLimitExceeded => ("the query is nested too deeply".to_string(), None),
    };
    let loc = match position {
        Some((line, column)) => {
            let start = file.offset_of(line, column);
            let end = file.text()[start..]
                .chars()
                .next()
                .map_or(start, |c| start + c.len_utf8());
            Loc::new(model.sql_file, start..end)
        }
        None => Loc::file_start(model.sql_file),
    };
    Diagnostic::error(
        Code::SqlSyntax,
        format!(
            "model `{}` does not parse as {engine} SQL: {text}",
            model.name
        ),
    )
    .at(loc, text)
    .hint("model SQL is plain SQL in the connection engine's dialect, with no templating")
}

/// Splits sqlparser's " at Line: L, Column: C" suffix off a message.
fn split_position(message: &str) -> (String, Option<(usize, usize)>) {
    let Some((text, rest)) = message.rsplit_once(" at Line: ") else {
        return (message.to_string(), None);
    };
    let position = rest
        .split_once(", Column: ")
        .and_then(|(line, column)| Some((line.trim().parse().ok()?, column.trim().parse().ok()?)));
    match position {
        Some(p) => (text.to_string(), Some(p)),
        None => (message.to_string(), None),
    }
}

#[cfg(test)]
mod tests {
    use super::split_position;

    #[test]
    fn splits_sqlparser_positions() {
        assert_eq!(
            split_position("Expected: an expression, found: ) at Line: 3, Column: 14"),
            (
                "Expected: an expression, found: )".to_string(),
                Some((3, 14))
            )
        );
        assert_eq!(split_position("odd"), ("odd".to_string(), None));
    }
}
