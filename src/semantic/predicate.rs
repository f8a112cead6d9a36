//! The SQL snippets of semantic contracts — population filters, guardrail filters, assertion
//! filters, measure expressions, finality watermarks: each parses as one expression in the
//! project's engine dialect, every column it names resolves in its scope, and a literal
//! compared with a column fits the column's type (an enum column's literal is a member).

use std::ops::ControlFlow;

use sqlparser::ast::{BinaryOperator, Expr, InTarget, UnaryOperator, Value};
use sqlparser::parser::ParserError;

use crate::diagnostics::{did_you_mean, Code, Diagnostic};
use crate::project::{Column, Project};
use crate::source::{Loc, Spanned};
use crate::types::DataType;

/// Parses `text` as exactly one SQL expression in the project's dialect.
pub fn parse(project: &Project, text: &str) -> Result<Expr, ParserError> {
    parse_for(project.engine(), text)
}

/// [`parse`] in `engine`'s dialect, for what writes a project before there is one to load.
pub fn parse_for(engine: crate::engine::Engine, text: &str) -> Result<Expr, ParserError> {
    let dialect = engine.dialect();
    sqlparser::parser::Parser::new(dialect.as_ref())
        .try_with_sql(text)
        .and_then(|mut p| {
            let expr = p.parse_expr()?;
            // The whole text is one expression: nothing may follow it.
            p.expect_token(&sqlparser::tokenizer::Token::EOF)?;
            Ok(expr)
        })
}

/// Whether an expression reads a query of its own (a subquery, `EXISTS`, `IN (SELECT …)`):
/// an expression of a relation reads its own row, never other relations behind the tenancy
/// policy's scoping and the roles' masks.
pub fn reads_a_query(expr: &Expr) -> bool {
    let found = sqlparser::ast::visit_expressions(expr, |e| match e {
        Expr::Subquery(_) | Expr::Exists { .. } => std::ops::ControlFlow::Break(()),
        Expr::In {
            target: sqlparser::ast::InTarget::List(_),
            ..
        } => std::ops::ControlFlow::Continue(()),
        // A subquery, a table or an UNNEST: not its own row's.
        Expr::In { .. } => std::ops::ControlFlow::Break(()),
        _ => std::ops::ControlFlow::Continue(()),
    });
    found.is_break()
}

/// Every column reference of an expression, as its dotted parts.
pub fn column_refs(expr: &Expr) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let _ = sqlparser::ast::visit_expressions(expr, |e: &Expr| {
        match e {
            Expr::Identifier(id) => out.push(vec![id.value.clone()]),
            Expr::CompoundIdentifier(parts) => {
                out.push(parts.iter().map(|p| p.value.clone()).collect())
            }
            _ => {}
        }
        ControlFlow::<()>::Continue(())
    });
    out
}

/// Resolves a column reference in a snippet's scope: the declared column, or `None` after
/// reporting why not.
pub type Lookup<'l, 'p> =
    dyn FnMut(&[String], &Spanned<String>, &mut Vec<Diagnostic>) -> Option<&'p Column> + 'l;

/// What is checked of one snippet.
pub struct Snippet<'a> {
    pub text: &'a Spanned<String>,
    /// "the population filter of metric `revenue`".
    pub what: &'a str,
    /// How to write one, for a parse error's hint.
    pub example: &'a str,
    /// A filter: held to the filter language ([`super::filter`]) as well.
    pub filter: bool,
}

/// Checks one snippet; returns its expression when it parses.
pub fn check(
    project: &Project,
    snippet: &Snippet<'_>,
    lookup: &mut Lookup<'_, '_>,
    diags: &mut Vec<Diagnostic>,
) -> Option<Expr> {
    let text = snippet.text;
    let expr = match parse(project, &text.value) {
        Ok(expr) => expr,
        Err(e) => {
            diags.push(
                Diagnostic::error(
                    Code::PredicateInvalid,
                    format!(
                        "{} does not parse as {} SQL",
                        snippet.what,
                        project.engine()
                    ),
                )
                .at(text.loc.clone(), e.to_string())
                .hint(snippet.example.to_string()),
            );
            return None;
        }
    };
    if snippet.filter {
        if let Err(refused) = super::filter::parse(&text.value, project.engine()) {
            diags.push(
                Diagnostic::error(
                    Code::PredicateInvalid,
                    format!(
                        "{} says more than the filter language allows",
                        snippet.what
                    ),
                )
                .at(text.loc.clone(), refused.to_string())
                .hint("a filter compares columns with literals, through the pure functions and operators of docs/security.md#filters"),
            );
            return None;
        }
    }
    let mut columns: Vec<(Vec<String>, Option<&Column>)> = Vec::new();
    for parts in column_refs(&expr) {
        if columns.iter().any(|(p, _)| *p == parts) {
            continue;
        }
        let column = lookup(&parts, text, diags);
        columns.push((parts, column));
    }
    let find = |e: &Expr| -> Option<(String, &Column)> {
        let parts: Vec<String> = match e {
            Expr::Identifier(id) => vec![id.value.clone()],
            Expr::CompoundIdentifier(p) => p.iter().map(|i| i.value.clone()).collect(),
            _ => return None,
        };
        let (_, column) = columns.iter().find(|(p, _)| *p == parts)?;
        Some((parts.join("."), (*column)?))
    };
    let _ = sqlparser::ast::visit_expressions(&expr, |e: &Expr| {
        let pairs: Vec<(&Expr, &Expr)> = match e {
            Expr::BinaryOp { left, op, right } if is_comparison(op) => {
                vec![
                    (left.as_ref(), right.as_ref()),
                    (right.as_ref(), left.as_ref()),
                ]
            }
            Expr::In {
                expr,
                target: InTarget::List(list),
                ..
            } => list.iter().map(|l| (expr.as_ref(), l)).collect(),
            Expr::Between {
                expr, low, high, ..
            } => vec![
                (expr.as_ref(), low.as_ref()),
                (expr.as_ref(), high.as_ref()),
            ],
            _ => Vec::new(),
        };
        for (column, literal) in pairs {
            if let Some((name, declared)) = find(column) {
                fit(project, &name, declared, literal, snippet, diags);
            }
        }
        ControlFlow::<()>::Continue(())
    });
    Some(expr)
}

fn is_comparison(op: &BinaryOperator) -> bool {
    use BinaryOperator::*;
    matches!(op, Eq | NotEq | Lt | LtEq | Gt | GtEq)
}

/// A literal compared with `column` must fit its declared type.
fn fit(
    project: &Project,
    name: &str,
    column: &Column,
    literal: &Expr,
    snippet: &Snippet<'_>,
    diags: &mut Vec<Diagnostic>,
) {
    let Some(value) = literal_of(literal) else {
        return;
    };
    let Some(ty) = column.ty.as_deref() else {
        return;
    };
    if let DataType::Named(enum_name) = ty {
        if let (Some(domain), Literal::Text(s)) = (project.enum_named(enum_name), &value) {
            let values = domain.values();
            if !values.contains(s) {
                let mut diag = Diagnostic::error(
                    Code::PredicateInvalid,
                    format!(
                        "{} compares `{name}` with '{s}', which is not a member of enum `{}`",
                        snippet.what, domain.name
                    ),
                )
                .at(
                    snippet.text.loc.clone(),
                    format!("'{s}' is no `{}`", domain.name),
                )
                .related(
                    Loc::file_start(domain.file),
                    format!("the members of `{}`", domain.name),
                );
                diag = match did_you_mean(s, values.iter().map(String::as_str)) {
                    Some(close) => diag.hint(format!("did you mean '{close}'?")),
                    None => diag.hint(format!("`{}` has {}", domain.name, values.join(", "))),
                };
                diags.push(diag);
            }
        }
        return;
    }
    if let Some(problem) = misfit(ty, &value) {
        let spelled = column
            .type_text
            .as_ref()
            .map_or(ty.to_string(), |t| t.value.to_string());
        let mut diag = Diagnostic::error(
            Code::PredicateInvalid,
            format!(
                "{} compares `{name}` ({spelled}) with {}, {problem}",
                snippet.what,
                value.describe()
            ),
        )
        .at(
            snippet.text.loc.clone(),
            format!("{} does not fit {spelled}", value.describe()),
        );
        if let Some(t) = &column.type_text {
            diag = diag.related(
                t.loc.clone(),
                format!("`{}` is declared {} here", column.name.value, t.value),
            );
        }
        diags.push(diag.hint("compare the column with a literal of its type"));
    }
}

enum Literal {
    Number(String),
    Text(String),
    Bool,
}

impl Literal {
    fn describe(&self) -> String {
        match self {
            Literal::Number(n) => format!("the number {n}"),
            Literal::Text(s) => format!("the string '{s}'"),
            Literal::Bool => "a boolean".into(),
        }
    }
}

fn literal_of(e: &Expr) -> Option<Literal> {
    match e {
        Expr::Value(v) => match &v.value {
            Value::Number(n, _) => Some(Literal::Number(n.clone())),
            Value::SingleQuotedString(s) => Some(Literal::Text(s.clone())),
            Value::Boolean(_) => Some(Literal::Bool),
            _ => None,
        },
        Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr,
        } => match literal_of(expr)? {
            Literal::Number(n) => Some(Literal::Number(format!("-{n}"))),
            _ => None,
        },
        _ => None,
    }
}

/// Why the literal does not fit the type, if it does not.
fn misfit(ty: &DataType, value: &Literal) -> Option<&'static str> {
    use DataType::*;
    let numeric = super::relation::is_numeric(ty);
    let text = matches!(ty, Varchar(_) | Char(_) | Text);
    match (value, ty) {
        (Literal::Number(_), _) if text => Some("which needs a quoted string"),
        (Literal::Number(_), Boolean) => Some("which needs true or false"),
        (Literal::Number(_), Date | Timestamp { .. }) => Some("which needs a quoted date or time"),
        (Literal::Text(s), _) if numeric && s.trim().parse::<f64>().is_err() => {
            Some("which is no number")
        }
        (Literal::Text(s), Date) if !is_date(s) => Some("which is no date (YYYY-MM-DD)"),
        (Literal::Text(s), Timestamp { .. }) if !is_timestamp(s) => {
            Some("which is no timestamp (YYYY-MM-DD[ HH:MM:SS])")
        }
        (Literal::Text(s), Boolean) if !is_boolean(s) => Some("which is no boolean"),
        (Literal::Bool, _) if numeric || text => Some("which is no boolean column"),
        _ => None,
    }
}

pub fn is_date(s: &str) -> bool {
    chrono::NaiveDate::parse_from_str(s.trim(), "%Y-%m-%d").is_ok()
}

pub fn is_timestamp(s: &str) -> bool {
    let s = s.trim();
    is_date(s)
        || [
            "%Y-%m-%d %H:%M:%S%.f",
            "%Y-%m-%dT%H:%M:%S%.f",
            "%Y-%m-%d %H:%M",
        ]
        .iter()
        .any(|f| chrono::NaiveDateTime::parse_from_str(s, f).is_ok())
        || chrono::DateTime::parse_from_rfc3339(s).is_ok()
        || chrono::DateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S%.f%#z").is_ok()
}

fn is_boolean(s: &str) -> bool {
    matches!(
        s.trim().to_ascii_lowercase().as_str(),
        "true" | "false" | "t" | "f" | "yes" | "no" | "1" | "0"
    )
}

/// The lookup of a snippet over one relation's columns: a bare name, or the relation's own
/// name before it.
pub(super) fn on_relation<'a, 'p>(
    relation: &'a super::relation::Relation<'p>,
    what: &'a str,
) -> impl FnMut(&[String], &Spanned<String>, &mut Vec<Diagnostic>) -> Option<&'p Column> + 'a {
    move |parts, text, diags| {
        let name = match parts {
            [name] => name,
            [qualifier, name] if qualifier.eq_ignore_ascii_case(relation.name) => name,
            _ => {
                diags.push(
                    Diagnostic::error(
                        Code::SemanticUnknownColumn,
                        format!(
                            "{what} names `{}`, which is no column of {}",
                            parts.join("."),
                            relation.describe()
                        ),
                    )
                    .at(text.loc.clone(), "not a column of the relation")
                    .hint("name the relation's columns by themselves"),
                );
                return None;
            }
        };
        super::relation::resolve_on(
            relation,
            &Spanned::new(name.clone(), text.loc.clone()),
            what,
            diags,
        )
    }
}
