//! The filter language: what a filter a principal sends (`sqb query --filter`, an assertion's
//! filters, a request to `sqb serve`) and a guardrail's or population filter may say. A small
//! allow-list checked on the parsed tree, never on the text: comparisons, `AND`/`OR`/`NOT`,
//! `IN` a list of literals, `BETWEEN`, `LIKE`/`ILIKE` a literal pattern, `IS [NOT] NULL`,
//! `IS [NOT] DISTINCT FROM`, literals (and typed ones: `DATE '2026-01-01'`, `INTERVAL '7 days'`),
//! arithmetic, `||`, casts to sqb's types, `EXTRACT`, `TRIM`, and the engine's short list of
//! pure scalar functions. Everything else is refused, naming the part and where it starts:
//! subqueries and `EXISTS`, any other function (the file, network, catalog, settings, sleep and
//! admin functions of either engine among them), placeholders (`$1`), comments, and more than
//! one statement. Which columns a filter may name is the caller's (the dimensions the
//! principal may see unmasked). A query's filter, and a metric's `filter` over dimensions, may
//! also read a metric's value for an entity, `metric(order_count, customer)` (MetricFlow's
//! `{{ Metric('order_count', group_by=['customer']) }}`), which the query compiler joins in.

use std::ops::ControlFlow;

use sqlparser::ast::{
    BinaryOperator, CastKind, DataType as SqlType, Expr, FunctionArg, FunctionArgExpr,
    FunctionArguments, InTarget, Spanned, UnaryOperator, Value,
};
use sqlparser::tokenizer::{Token, Tokenizer, Whitespace};

use crate::engine::Engine;
use crate::engine_rules;

/// Why a filter is refused: the offending part, and where it starts (1-based column of its
/// line, and the line when the filter has several); no part when it does not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub part: String,
    pub why: String,
    pub line: u64,
    pub column: u64,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.part.is_empty() {
            return f.write_str(&self.why);
        }
        let at = match self.line {
            0 | 1 => format!("column {}", self.column),
            line => format!("line {line}, column {}", self.column),
        };
        write!(f, "{} at {at}: `{}`", self.why, self.part)
    }
}

/// Parses `text` as one filter of the language, or says what it may not contain. The
/// expression comes back as parsed, for the caller to resolve its column references.
pub fn parse(text: &str, engine: Engine) -> Result<Expr, Refused> {
    parse_with(text, engine, false)
}

/// Parses a query's filter (or a metric's `filter` over dimensions): the language, and
/// `metric(name, entity)` calls.
pub fn parse_query(text: &str, engine: Engine) -> Result<Expr, Refused> {
    parse_with(text, engine, true)
}

fn parse_with(text: &str, engine: Engine, metrics: bool) -> Result<Expr, Refused> {
    backslash(text)?;
    let dialect = engine.dialect();
    let tokens = Tokenizer::new(dialect.as_ref(), text)
        .tokenize_with_location()
        .map_err(|e| Refused {
            part: String::new(),
            why: format!("does not parse: {e}"),
            line: e.location.line,
            column: e.location.column,
        })?;
    for token in &tokens {
        let why = match &token.token {
            Token::Whitespace(Whitespace::SingleLineComment { .. })
            | Token::Whitespace(Whitespace::MultiLineComment(_)) => "a comment",
            Token::SemiColon => "a second statement",
            Token::Placeholder(_) => "a placeholder",
            _ => continue,
        };
        return Err(Refused {
            part: token.token.to_string().trim_end().to_string(),
            why: format!("{why} is not allowed in a filter"),
            line: token.span.start.line,
            column: token.span.start.column,
        });
    }
    let mut parser =
        sqlparser::parser::Parser::new(dialect.as_ref()).with_tokens_with_locations(tokens);
    let expr = parser
        .parse_expr()
        // The whole text is one expression: nothing may follow it.
        .and_then(|expr| parser.expect_token(&Token::EOF).map(|_| expr))
        .map_err(|e| Refused {
            part: String::new(),
            why: format!("does not parse: {e}"),
            line: 1,
            column: 1,
        })?;
    check_with(&expr, engine, metrics)?;
    Ok(expr)
}

/// `metric(name, entity)`: the metric's name and the entity's, when `f` is such a call.
pub fn metric_call(f: &sqlparser::ast::Function) -> Option<(String, String)> {
    let [name] = f.name.0.as_slice() else {
        return None;
    };
    if !name.as_ident()?.value.eq_ignore_ascii_case("metric") {
        return None;
    }
    let FunctionArguments::List(list) = &f.args else {
        return None;
    };
    let idents: Vec<String> = list
        .args
        .iter()
        .filter_map(|a| match a {
            FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::Identifier(id))) => {
                Some(id.value.clone())
            }
            _ => None,
        })
        .collect();
    match (idents.as_slice(), list.args.len(), list.clauses.is_empty()) {
        ([metric, entity], 2, true) if list.duplicate_treatment.is_none() => {
            Some((metric.clone(), entity.clone()))
        }
        _ => None,
    }
}

/// Every `metric(name, entity)` call of a filter, in order.
pub fn metric_calls(expr: &Expr) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let _ = sqlparser::ast::visit_expressions(expr, |e: &Expr| {
        if let Expr::Function(f) = e {
            out.extend(metric_call(f));
        }
        ControlFlow::<()>::Continue(())
    });
    out
}

/// The filter with each `metric(…)` call replaced by `NULL`: what is left names dimensions.
pub fn without_metric_calls(expr: &Expr) -> Expr {
    let mut expr = expr.clone();
    let _ = sqlparser::ast::visit_expressions_mut(&mut expr, |e: &mut Expr| {
        if matches!(e, Expr::Function(f) if metric_call(f).is_some()) {
            *e = Expr::value(Value::Null);
        }
        ControlFlow::<()>::Continue(())
    });
    expr
}

/// A backslash is refused anywhere: sqlparser's DuckDB dialect reads `\'` in a string as an
/// escaped quote, where DuckDB (and Postgres, with standard strings) end the string there, so
/// the text sqb checks and the text the engine runs would be two different filters.
fn backslash(text: &str) -> Result<(), Refused> {
    for (i, line) in text.split('\n').enumerate() {
        if let Some(at) = line.find('\\') {
            return Err(Refused {
                part: "\\".into(),
                why: "a backslash is not allowed in a filter (sqb and the engine read it differently in a string)".into(),
                line: i as u64 + 1,
                column: line[..at].chars().count() as u64 + 1,
            });
        }
    }
    Ok(())
}

/// Checks every node of `expr` against the language.
pub fn check(expr: &Expr, engine: Engine) -> Result<(), Refused> {
    check_with(expr, engine, false)
}

fn check_with(expr: &Expr, engine: Engine, metrics: bool) -> Result<(), Refused> {
    let functions = engine_rules::of(engine).filter_functions();
    let mut refused = None;
    let _ = sqlparser::ast::visit_expressions(expr, |e: &Expr| {
        match allowed(e, engine, functions, metrics) {
            Ok(()) => ControlFlow::Continue(()),
            Err(why) => {
                refused = Some(refusal(e, why));
                ControlFlow::Break(())
            }
        }
    });
    match refused {
        Some(r) => Err(r),
        None => Ok(()),
    }
}

fn refusal(e: &Expr, why: String) -> Refused {
    let start = e.span().start;
    Refused {
        part: e.to_string(),
        why,
        line: start.line,
        column: start.column,
    }
}

/// Whether one node is of the language; its children are visited in their turn.
fn allowed(e: &Expr, engine: Engine, functions: &[&str], metrics: bool) -> Result<(), String> {
    use BinaryOperator as B;
    let refuse = |what: &str| Err(format!("{what} is not allowed in a filter"));
    match e {
        Expr::Identifier(_)
        | Expr::CompoundIdentifier(_)
        | Expr::Nested(_)
        | Expr::IsNull(_)
        | Expr::IsNotNull(_)
        | Expr::IsTrue(_)
        | Expr::IsNotTrue(_)
        | Expr::IsFalse(_)
        | Expr::IsNotFalse(_)
        | Expr::IsDistinctFrom(..)
        | Expr::IsNotDistinctFrom(..)
        | Expr::Between { .. } => Ok(()),
        Expr::Value(v) => match &v.value {
            Value::Number(..) | Value::SingleQuotedString(_) | Value::Boolean(_) | Value::Null => {
                Ok(())
            }
            _ => refuse("this kind of literal"),
        },
        Expr::BinaryOp { op, .. } => match op {
            B::Eq | B::NotEq | B::Lt | B::LtEq | B::Gt | B::GtEq | B::And | B::Or => Ok(()),
            B::Plus | B::Minus | B::Multiply | B::Divide | B::Modulo | B::StringConcat => Ok(()),
            _ => refuse(&format!("the operator `{op}`")),
        },
        Expr::UnaryOp { op, .. } => match op {
            UnaryOperator::Not | UnaryOperator::Minus | UnaryOperator::Plus => Ok(()),
            _ => refuse(&format!("the operator `{op}`")),
        },
        Expr::In { target, .. } => match target {
            InTarget::List(items) if items.iter().all(is_literal) => Ok(()),
            InTarget::List(_) => refuse("`IN` a list of other than literals"),
            _ => refuse("`IN` other than a list of literals"),
        },
        Expr::Like {
            any,
            pattern,
            escape_char,
            ..
        }
        | Expr::ILike {
            any,
            pattern,
            escape_char,
            ..
        } => match !any && is_string(pattern) && escape_char.as_deref().is_none_or(is_string) {
            true => Ok(()),
            false => refuse("a pattern other than one string literal"),
        },
        Expr::Cast {
            kind: CastKind::Cast | CastKind::DoubleColon,
            data_type,
            format: None,
            ..
        } if sqb_type(data_type, engine) => Ok(()),
        Expr::Cast { .. } => refuse("a cast other than `CAST(x AS type)` to a built-in type"),
        Expr::TypedString(ts) if sqb_type(&ts.data_type, engine) => Ok(()),
        Expr::Interval(i) if is_string(&i.value) => Ok(()),
        Expr::Extract { .. } => Ok(()),
        Expr::Trim {
            trim_what,
            trim_characters: None,
            ..
        } if trim_what.as_deref().is_none_or(is_string) => Ok(()),
        Expr::Function(f) if metrics && metric_call(f).is_some() => Ok(()),
        Expr::Function(f) if metrics && f.name.to_string().eq_ignore_ascii_case("metric") => Err(
            "`metric` takes a metric's name and an entity's: `metric(order_count, customer)`"
                .into(),
        ),
        Expr::Function(f) => function(f, functions),
        Expr::Subquery(_) | Expr::Exists { .. } => refuse("a subquery"),
        _ => refuse("this expression"),
    }
}

/// A call of one of the engine's pure scalar functions, by its bare name, with plain
/// arguments: no schema, no `DISTINCT`, `FILTER`, `OVER` or `WITHIN GROUP`.
fn function(f: &sqlparser::ast::Function, functions: &[&str]) -> Result<(), String> {
    let name = match f.name.0.as_slice() {
        [part] => part.as_ident().map(|i| i.value.to_lowercase()),
        _ => None,
    };
    let plain_args = match &f.args {
        FunctionArguments::List(list) => {
            list.duplicate_treatment.is_none()
                && list.clauses.is_empty()
                && list
                    .args
                    .iter()
                    .all(|a| matches!(a, FunctionArg::Unnamed(FunctionArgExpr::Expr(_))))
        }
        _ => false,
    };
    let plain = plain_args
        && matches!(f.parameters, FunctionArguments::None)
        && f.filter.is_none()
        && f.over.is_none()
        && f.null_treatment.is_none()
        && f.within_group.is_empty()
        && !f.uses_odbc_syntax;
    match name {
        Some(name) if plain && functions.contains(&name.as_str()) => Ok(()),
        Some(name) if functions.contains(&name.as_str()) => Err(format!(
            "`{name}` is called with more than plain arguments, which is not allowed in a filter"
        )),
        _ => Err(format!(
            "the function `{}` is not allowed in a filter (allowed: {})",
            f.name,
            functions.join(", ")
        )),
    }
}

fn is_string(e: &Expr) -> bool {
    matches!(e, Expr::Value(v) if matches!(v.value, Value::SingleQuotedString(_)))
}

/// A literal, or a negative number.
fn is_literal(e: &Expr) -> bool {
    match e {
        Expr::Value(v) => matches!(
            v.value,
            Value::Number(..) | Value::SingleQuotedString(_) | Value::Boolean(_) | Value::Null
        ),
        Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr,
        } => matches!(expr.as_ref(), Expr::Value(v) if matches!(v.value, Value::Number(..))),
        _ => false,
    }
}

/// A type sqb models (not a user-defined or opaque name: `regclass`, a domain).
fn sqb_type(ty: &SqlType, engine: Engine) -> bool {
    use crate::types::DataType;
    let Ok(parsed) = crate::types::parse(&ty.to_string(), engine) else {
        return false;
    };
    fn modelled(t: &DataType) -> bool {
        match t {
            DataType::Named(_) => false,
            DataType::Array { element, .. } => modelled(element),
            DataType::Struct(_) | DataType::Union(_) | DataType::Map(..) => false,
            _ => true,
        }
    }
    modelled(&parsed)
}

pub mod template;

#[cfg(test)]
mod tests;
