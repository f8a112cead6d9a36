//! The name DuckDB gives an unaliased output expression: a column's own name, and otherwise the
//! expression's own text (`count_star()`, `sum(x)`, `(a + b)`), rendered here for the forms
//! whose printing is known; anything else stays unnamed (shape unknown).

use sqlparser::ast::{
    BinaryOperator, CastKind, DataType as SqlType, Expr, FunctionArg, FunctionArgExpr,
    FunctionArguments, Ident, Value,
};

use crate::engine::Engine;
use crate::types::{self, DataType};

fn stored(ident: &Ident) -> String {
    Engine::DuckDb.stored_name(&ident.value, ident.quote_style.is_some())
}

/// DuckDB names a column reference by the column (never its qualifier); other expressions by
/// their text.
pub(super) fn duckdb_top(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Identifier(ident) => Some(stored(ident)),
        Expr::CompoundIdentifier(parts) => Some(stored(parts.last()?)),
        Expr::Nested(inner) => duckdb_top(inner),
        _ => duckdb(expr),
    }
}

/// An expression as DuckDB prints it, for the forms whose printing is known.
fn duckdb(expr: &Expr) -> Option<String> {
    Some(match expr {
        Expr::Identifier(ident) => plain(ident)?,
        Expr::CompoundIdentifier(parts) => parts
            .iter()
            .map(plain)
            .collect::<Option<Vec<_>>>()?
            .join("."),
        Expr::Nested(inner) => duckdb(inner)?,
        Expr::Value(v) => match &v.value {
            Value::Number(n, false) if n.bytes().all(|b| b.is_ascii_digit() || b == b'.') => {
                n.clone()
            }
            Value::SingleQuotedString(s) if !s.contains(['\'', '\\']) => format!("'{s}'"),
            Value::Boolean(b) => b.to_string(),
            Value::Null => "NULL".to_string(),
            _ => return None,
        },
        Expr::BinaryOp { left, op, right } => {
            let op = match op {
                BinaryOperator::Plus => "+",
                BinaryOperator::Minus => "-",
                BinaryOperator::Multiply => "*",
                BinaryOperator::Divide => "/",
                BinaryOperator::Modulo => "%",
                BinaryOperator::Eq => "=",
                BinaryOperator::Lt => "<",
                BinaryOperator::Gt => ">",
                BinaryOperator::LtEq => "<=",
                BinaryOperator::GtEq => ">=",
                BinaryOperator::StringConcat => "||",
                BinaryOperator::NotEq => "!=",
                BinaryOperator::And => "AND",
                BinaryOperator::Or => "OR",
                _ => return None,
            };
            format!("({} {op} {})", duckdb(left)?, duckdb(right)?)
        }
        Expr::IsNull(inner) => format!("({} IS NULL)", duckdb(inner)?),
        Expr::IsNotNull(inner) => format!("({} IS NOT NULL)", duckdb(inner)?),
        Expr::UnaryOp {
            op: sqlparser::ast::UnaryOperator::Not,
            expr,
        } => format!("(NOT {})", duckdb(expr)?),
        Expr::Cast {
            kind,
            expr,
            data_type,
            format: None,
        } => {
            let keyword = match kind {
                CastKind::Cast | CastKind::DoubleColon => "CAST",
                CastKind::TryCast => "TRY_CAST",
                CastKind::SafeCast => return None,
            };
            format!(
                "{keyword}({} AS {})",
                duckdb(expr)?,
                duckdb_type_name(data_type)?
            )
        }
        Expr::Case {
            operand: None,
            conditions,
            else_result,
            ..
        } => {
            let mut out = "CASE ".to_string();
            for when in conditions {
                out.push_str(&format!(
                    " WHEN ({}) THEN ({})",
                    duckdb(&when.condition)?,
                    duckdb(&when.result)?
                ));
            }
            let otherwise = match else_result {
                Some(e) => duckdb(e)?,
                None => "NULL".to_string(),
            };
            format!("{out} ELSE {otherwise} END")
        }
        Expr::Function(f)
            if f.over.is_none()
                && f.filter.is_none()
                && f.within_group.is_empty()
                && f.null_treatment.is_none() =>
        {
            let [name] = f.name.0.as_slice() else {
                return None;
            };
            let ident = name.as_ident()?;
            let name = match ident.value.to_ascii_lowercase() {
                // An operator DuckDB prints in capitals.
                n if n == "coalesce" => n,
                _ => plain(ident)?.to_ascii_lowercase(),
            };
            let FunctionArguments::List(list) = &f.args else {
                return None;
            };
            if !list.clauses.is_empty() {
                return None;
            }
            let distinct = match &list.duplicate_treatment {
                None => "",
                Some(sqlparser::ast::DuplicateTreatment::Distinct) => "DISTINCT ",
                Some(_) => return None,
            };
            if name == "count" && list.args.len() == 1 && distinct.is_empty() {
                if let FunctionArg::Unnamed(FunctionArgExpr::Wildcard) = &list.args[0] {
                    return Some("count_star()".to_string());
                }
            }
            let args = list
                .args
                .iter()
                .map(|a| match a {
                    FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => duckdb(e),
                    _ => None,
                })
                .collect::<Option<Vec<_>>>()?;
            let name = match name.as_str() {
                "coalesce" => "COALESCE".to_string(),
                _ => name,
            };
            format!("{name}({distinct}{})", args.join(", "))
        }
        _ => return None,
    })
}

/// The bundled DuckDB's keywords that are not unreserved (`duckdb_keywords()`): it quotes them
/// when it prints an identifier. tests/engine_types.rs checks the list against the engine.
pub const DUCKDB_QUOTED_KEYWORDS: &[&str] = &[
    "all",
    "analyse",
    "analyze",
    "and",
    "anti",
    "any",
    "array",
    "as",
    "asc",
    "asof",
    "asymmetric",
    "at",
    "authorization",
    "between",
    "bigint",
    "binary",
    "bit",
    "boolean",
    "both",
    "by",
    "case",
    "cast",
    "char",
    "character",
    "check",
    "coalesce",
    "collate",
    "collation",
    "column",
    "columns",
    "concurrently",
    "constraint",
    "create",
    "cross",
    "dec",
    "decimal",
    "default",
    "deferrable",
    "desc",
    "describe",
    "distinct",
    "do",
    "else",
    "end",
    "except",
    "exists",
    "extract",
    "false",
    "fetch",
    "float",
    "for",
    "foreign",
    "freeze",
    "from",
    "full",
    "generated",
    "glob",
    "group",
    "grouping",
    "grouping_id",
    "having",
    "ilike",
    "in",
    "initially",
    "inner",
    "inout",
    "int",
    "integer",
    "intersect",
    "interval",
    "into",
    "is",
    "isnull",
    "join",
    "lambda",
    "lateral",
    "leading",
    "left",
    "like",
    "limit",
    "map",
    "national",
    "natural",
    "nchar",
    "none",
    "not",
    "notnull",
    "null",
    "nullif",
    "numeric",
    "offset",
    "on",
    "only",
    "or",
    "order",
    "out",
    "outer",
    "overlaps",
    "overlay",
    "pivot",
    "pivot_longer",
    "pivot_wider",
    "placing",
    "position",
    "positional",
    "precision",
    "primary",
    "qualify",
    "real",
    "references",
    "returning",
    "right",
    "row",
    "select",
    "semi",
    "setof",
    "show",
    "similar",
    "smallint",
    "some",
    "struct",
    "substring",
    "summarize",
    "symmetric",
    "table",
    "tablesample",
    "then",
    "time",
    "timestamp",
    "to",
    "trailing",
    "treat",
    "trim",
    "true",
    "try_cast",
    "tuple",
    "union",
    "unique",
    "unpack",
    "unpivot",
    "using",
    "values",
    "varchar",
    "variadic",
    "verbose",
    "when",
    "where",
    "window",
    "with",
    "xmlattributes",
    "xmlconcat",
    "xmlelement",
    "xmlexists",
    "xmlforest",
    "xmlnamespaces",
    "xmlparse",
    "xmlpi",
    "xmlroot",
    "xmlserialize",
    "xmltable",
];

/// An identifier DuckDB prints as written: a plain name that is not a keyword it would quote.
fn plain(ident: &Ident) -> Option<String> {
    let v = &ident.value;
    let simple = v.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && v.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    let keyword = DUCKDB_QUOTED_KEYWORDS
        .iter()
        .any(|k| k.eq_ignore_ascii_case(v));
    (simple && !keyword).then(|| v.clone())
}

/// A cast's type as DuckDB prints it: a name as written, but the grammar's own type keywords
/// in their full spelling (`INT` is `INTEGER`), and decimals as `DECIMAL(p, s)`.
fn duckdb_type_name(ty: &SqlType) -> Option<String> {
    let written = ty.to_string().to_ascii_uppercase();
    match written.as_str() {
        "DOUBLE PRECISION" => return Some("DOUBLE".to_string()),
        "INT" => return Some("INTEGER".to_string()),
        "INTEGER" | "BIGINT" | "SMALLINT" | "BOOLEAN" | "VARCHAR" | "TIMESTAMP" => {
            return Some(written)
        }
        _ => {}
    }
    let keyword = DUCKDB_QUOTED_KEYWORDS
        .iter()
        .any(|k| k.eq_ignore_ascii_case(&written));
    if written.bytes().all(|b| b.is_ascii_alphanumeric()) && !keyword {
        return Some(written);
    }
    match types::parse(&written, Engine::DuckDb).ok()? {
        DataType::Numeric(Some((p, s))) => Some(format!("DECIMAL({p}, {})", s.unwrap_or(0))),
        DataType::Varchar(Some(n)) if written.starts_with("VARCHAR(") => {
            Some(format!("VARCHAR({n})"))
        }
        _ => None,
    }
}
