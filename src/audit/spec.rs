//! What an audit says: its check, its `where` and its `severity`, read from the arguments as
//! written, with dbt's names (and dbt_utils' namespaced ones) accepted for the same checks.

use crate::project::{Audit, AuditArg};

/// A check of one column's values, counted as dbt counts its failures.
#[derive(Debug, Clone, PartialEq)]
pub enum Check {
    /// Rows where the column is NULL.
    NotNull,
    /// Values held by more than one row.
    Unique,
    /// Values (not NULL) outside the list, compared as text.
    AcceptedValues(Vec<String>),
    /// Rows whose value is outside the bounds (numbers).
    AcceptedRange {
        min: Option<String>,
        max: Option<String>,
        inclusive: bool,
    },
    /// One row when the column has exactly one distinct value.
    NotConstant,
    /// One row when the column has no value that is not NULL.
    AtLeastOne,
    /// Rows where the SQL predicate is false.
    Expression(String),
    /// Rows (not NULL) whose value the other relation's `field` does not hold.
    Relationships { to: String, field: String },
    /// Of a relation: combinations of the columns' values held by more than one row.
    UniqueCombination(Vec<String>),
    /// Of a relation: one row when its newest `field` is older than `interval` (`1 day`).
    Recency { field: String, interval: String },
    /// A user-defined audit (`audits/<name>.sql`): the rows its query returns.
    Custom {
        name: String,
        args: Vec<(String, AuditArg)>,
    },
}

impl Check {
    /// The audit's name as reports show it.
    pub fn name(&self) -> &str {
        match self {
            Check::NotNull => "not_null",
            Check::Unique => "unique",
            Check::AcceptedValues(_) => "accepted_values",
            Check::AcceptedRange { .. } => "accepted_range",
            Check::NotConstant => "not_constant",
            Check::AtLeastOne => "at_least_one",
            Check::Expression(_) => "expression",
            Check::Relationships { .. } => "relationships",
            Check::UniqueCombination(_) => "unique_combination_of_columns",
            Check::Recency { .. } => "recency",
            Check::Custom { name, .. } => name,
        }
    }
}

/// Whether a failing audit fails the run (`error`, the default) or is only reported (`warn`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AuditSeverity {
    Error,
    Warn,
}

/// An audit sqb can run.
#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    pub check: Check,
    /// dbt's `where`: a SQL predicate the relation's rows are filtered by first.
    pub filter: Option<String>,
    pub severity: AuditSeverity,
}

/// Why an audit cannot run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpecError {
    /// No such audit; the closest known name, if any.
    Unknown(Option<&'static str>),
    /// A missing, unknown or mistyped argument.
    Argument(String),
}

/// Each check's own name, as reports show it (SARIF's rules), in the order docs/audits.md
/// lists them.
pub const CHECKS: &[&str] = &[
    "not_null",
    "unique",
    "accepted_values",
    "relationships",
    "accepted_range",
    "not_constant",
    "at_least_one",
    "expression",
    "unique_combination_of_columns",
    "recency",
];

/// Every audit name sqb runs, dbt's and dbt_utils' spellings included.
pub const NAMES: &[&str] = &[
    "not_null",
    "unique",
    "accepted_values",
    "relationships",
    "accepted_range",
    "not_constant",
    "at_least_one",
    "expression",
    "expression_is_true",
    "dbt_utils.accepted_range",
    "dbt_utils.not_constant",
    "dbt_utils.at_least_one",
    "dbt_utils.expression_is_true",
];

/// Every audit name sqb runs on a whole relation (a model's or a source's own `audits`).
pub const RELATION_NAMES: &[&str] = &[
    "unique_combination_of_columns",
    "recency",
    "expression",
    "expression_is_true",
    "dbt_utils.unique_combination_of_columns",
    "dbt_utils.recency",
    "dbt_utils.expression_is_true",
];

/// Whether `name` is a built-in audit's (of a column or of a relation), which no user-defined
/// audit may take.
pub fn is_builtin(name: &str) -> bool {
    NAMES.contains(&name) || RELATION_NAMES.contains(&name)
}

/// The user-defined audit `name` runs: `audits/<name>.sql`, unless a built-in audit has that
/// name (compile reports such a file).
pub fn custom<'p>(
    project: &'p crate::project::Project,
    name: &str,
) -> Option<&'p crate::project::AuditDef> {
    match is_builtin(name) {
        true => None,
        false => project.audit_def(name),
    }
}

/// The units `recency` counts its interval in.
const DATEPARTS: &[&str] = &["minute", "hour", "day", "week", "month", "year"];

/// Reads `audit` of a whole relation.
pub fn parse_relation(audit: &Audit) -> Result<Spec, SpecError> {
    let mut args = Args::new(&audit.args);
    let (filter, severity) = common(&mut args)?;
    let short = audit.name.strip_prefix("dbt_utils.").unwrap_or(&audit.name);
    let check = match short {
        "unique_combination_of_columns" => {
            Check::UniqueCombination(args.required_list("combination_of_columns")?)
        }
        "recency" => {
            let field = args.required_text("field")?;
            let datepart = args.required_text("datepart")?.to_lowercase();
            if !DATEPARTS.contains(&datepart.as_str()) {
                return Err(SpecError::Argument(format!(
                    "`datepart` is one of {}, not `{datepart}`",
                    DATEPARTS.join(", ")
                )));
            }
            let interval = match args.take("interval") {
                Some(AuditArg::Int(n)) if *n > 0 => *n,
                _ => {
                    return Err(SpecError::Argument(
                        "`interval` takes a whole number above 0".into(),
                    ))
                }
            };
            Check::Recency {
                field,
                interval: format!("{interval} {datepart}"),
            }
        }
        "expression" if !audit.name.contains('.') => Check::Expression(predicate(&mut args)?),
        "expression_is_true" => Check::Expression(args.required_text("expression")?),
        _ => return Err(unknown(&audit.name, RELATION_NAMES)),
    };
    finish(args, check, filter, severity)
}

/// Reads the use of a user-defined audit: `where` and `severity` as every audit takes them, the
/// other arguments its template's (checked against it by `compile`).
pub fn parse_custom(audit: &Audit) -> Result<Spec, SpecError> {
    let mut args = Args::new(&audit.args);
    let (filter, severity) = common(&mut args)?;
    let rest = args.left.into_iter().cloned().collect();
    Ok(Spec {
        check: Check::Custom {
            name: audit.name.clone(),
            args: rest,
        },
        filter,
        severity,
    })
}

/// `expression`'s predicate: its one value, or its `expression` argument.
fn predicate(args: &mut Args<'_>) -> Result<String, SpecError> {
    args.text("value")?
        .or(args.text("expression")?)
        .ok_or_else(|| {
            SpecError::Argument(
                "`expression` takes a SQL predicate: `{ expression = \"amount >= 0\" }`".into(),
            )
        })
}

fn unknown(name: &str, names: &'static [&'static str]) -> SpecError {
    SpecError::Unknown(crate::diagnostics::did_you_mean(
        name,
        names.iter().copied(),
    ))
}

/// The spec, once no argument is left unread.
fn finish(
    args: Args<'_>,
    check: Check,
    filter: Option<String>,
    severity: AuditSeverity,
) -> Result<Spec, SpecError> {
    args.finish()?;
    Ok(Spec {
        check,
        filter,
        severity,
    })
}

/// `where` and `severity`, which every audit takes.
fn common(args: &mut Args<'_>) -> Result<(Option<String>, AuditSeverity), SpecError> {
    let filter = args.text("where")?;
    let severity = match args.text("severity")?.as_deref() {
        None => AuditSeverity::Error,
        Some(s) if s.eq_ignore_ascii_case("error") => AuditSeverity::Error,
        Some(s) if s.eq_ignore_ascii_case("warn") => AuditSeverity::Warn,
        Some(other) => {
            return Err(SpecError::Argument(format!(
                "`severity` is `error` or `warn`, not `{other}`"
            )))
        }
    };
    Ok((filter, severity))
}

/// Reads `audit` of column `column`.
pub fn parse(audit: &Audit, column: &str) -> Result<Spec, SpecError> {
    let mut args = Args::new(&audit.args);
    let (filter, severity) = common(&mut args)?;
    let short = audit.name.strip_prefix("dbt_utils.").unwrap_or(&audit.name);
    let check = match short {
        "not_null" if !audit.name.contains('.') => Check::NotNull,
        "unique" if !audit.name.contains('.') => Check::Unique,
        "accepted_values" if !audit.name.contains('.') => {
            Check::AcceptedValues(args.required_list("values")?)
        }
        "relationships" if !audit.name.contains('.') => Check::Relationships {
            to: args.required_text("to")?,
            field: args.required_text("field")?,
        },
        "accepted_range" => accepted_range(&mut args)?,
        "not_constant" => Check::NotConstant,
        "at_least_one" => Check::AtLeastOne,
        "expression" if !audit.name.contains('.') => Check::Expression(predicate(&mut args)?),
        "expression_is_true" => {
            let expression = args.required_text("expression")?;
            Check::Expression(format!(
                "{} {expression}",
                crate::ident::quote_ident(column)
            ))
        }
        _ => return Err(unknown(&audit.name, NAMES)),
    };
    finish(args, check, filter, severity)
}

fn accepted_range(args: &mut Args<'_>) -> Result<Check, SpecError> {
    let min = args.bound("min_value")?;
    let max = args.bound("max_value")?;
    if min.is_none() && max.is_none() {
        return Err(SpecError::Argument(
            "`accepted_range` needs `min_value`, `max_value` or both".into(),
        ));
    }
    if let (Some(min), Some(max)) = (&min, &max) {
        if bound_kind(min) != bound_kind(max) {
            return Err(SpecError::Argument(
                "`min_value` and `max_value` are of different kinds (a number, a date, a time)"
                    .into(),
            ));
        }
    }
    let inclusive = match args.take("inclusive") {
        None => true,
        Some(AuditArg::Bool(b)) => *b,
        Some(_) => return Err(SpecError::Argument("`inclusive` is true or false".into())),
    };
    Ok(Check::AcceptedRange {
        min,
        max,
        inclusive,
    })
}

/// What an `accepted_range` bound compares as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoundKind {
    Number,
    Date,
    Time,
}

/// The kind of a bound as [`Check::AcceptedRange`] holds it: `2026-01-01` is a date,
/// `2026-01-01 08:00:00[.ffffff]` a time, anything else (a number, as the parser checked) a
/// number.
pub fn bound_kind(bound: &str) -> BoundKind {
    use chrono::{NaiveDate, NaiveDateTime};
    if NaiveDate::parse_from_str(bound, "%Y-%m-%d").is_ok() {
        BoundKind::Date
    } else if NaiveDateTime::parse_from_str(bound, "%Y-%m-%d %H:%M:%S%.f").is_ok() {
        BoundKind::Time
    } else {
        BoundKind::Number
    }
}

/// The arguments, each taken once; what is left over is an error.
struct Args<'a> {
    left: Vec<&'a (String, AuditArg)>,
}

impl<'a> Args<'a> {
    fn new(args: &'a [(String, AuditArg)]) -> Self {
        Self {
            left: args.iter().collect(),
        }
    }

    fn take(&mut self, key: &str) -> Option<&'a AuditArg> {
        let at = self.left.iter().position(|(k, _)| k == key)?;
        Some(&self.left.remove(at).1)
    }

    fn text(&mut self, key: &str) -> Result<Option<String>, SpecError> {
        match self.take(key) {
            None => Ok(None),
            Some(AuditArg::Text(s)) if !s.trim().is_empty() => Ok(Some(s.clone())),
            Some(_) => Err(SpecError::Argument(format!(
                "`{key}` takes a non-empty string"
            ))),
        }
    }

    fn required_text(&mut self, key: &str) -> Result<String, SpecError> {
        self.text(key)?
            .ok_or_else(|| SpecError::Argument(format!("missing `{key}`")))
    }

    /// An `accepted_range` bound: a number, a date or a time without an offset, written as a
    /// TOML value or as text (dbt's `"'2026-01-01'"` quoted for its SQL, too).
    fn bound(&mut self, key: &str) -> Result<Option<String>, SpecError> {
        let text = match self.take(key) {
            None => return Ok(None),
            Some(AuditArg::Int(i)) => return Ok(Some(i.to_string())),
            Some(AuditArg::Float(f)) if f.is_finite() => return Ok(Some(f.to_string())),
            Some(AuditArg::Text(t) | AuditArg::Other(t)) => t.as_str(),
            Some(_) => "",
        };
        let unquoted = text
            .strip_prefix('\'')
            .and_then(|t| t.strip_suffix('\''))
            .unwrap_or(text)
            .replacen('T', " ", 1);
        match bound_kind(&unquoted) {
            BoundKind::Date | BoundKind::Time => Ok(Some(unquoted)),
            _ if text.parse::<f64>().is_ok_and(f64::is_finite) => Ok(Some(text.to_string())),
            BoundKind::Number => Err(SpecError::Argument(format!(
                "`{key}` takes a number, a date (2026-01-01) or a time without an offset (2026-01-01 08:00:00), not `{text}`"
            ))),
        }
    }

    fn required_list(&mut self, key: &str) -> Result<Vec<String>, SpecError> {
        let Some(AuditArg::List(items)) = self.take(key) else {
            return Err(SpecError::Argument(format!(
                "`{key}` takes a list: `{{ accepted_values = [\"a\", \"b\"] }}`"
            )));
        };
        let values: Option<Vec<String>> = items
            .iter()
            .map(|v| match v {
                AuditArg::Text(s) => Some(s.clone()),
                AuditArg::Int(i) => Some(i.to_string()),
                AuditArg::Bool(b) => Some(b.to_string()),
                _ => None,
            })
            .collect();
        match values {
            Some(values) if !values.is_empty() => Ok(values),
            Some(_) => Err(SpecError::Argument(format!("`{key}` is empty"))),
            None => Err(SpecError::Argument(format!(
                "`{key}` holds strings, integers or booleans"
            ))),
        }
    }

    /// dbt's config keys that change nothing sqb reports are accepted; anything else is a
    /// mistake.
    fn finish(self) -> Result<(), SpecError> {
        match self
            .left
            .iter()
            .find(|(k, _)| !matches!(k.as_str(), "quote" | "config" | "tags" | "meta"))
        {
            Some((key, _)) => Err(SpecError::Argument(format!("unknown argument `{key}`"))),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{FileId, Loc};

    fn audit(name: &str, args: Vec<(&str, AuditArg)>) -> Audit {
        Audit {
            name: name.into(),
            loc: Loc::file_start(FileId(0)),
            args: args.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
        }
    }

    /// Date and time bounds, as TOML writes them and as dbt quotes them for its SQL; a bound
    /// that is none of a number, a date or a local time, and bounds of two kinds, are refused.
    #[test]
    fn range_bounds_are_numbers_dates_or_times() {
        let range = |min: AuditArg, max: AuditArg| {
            parse(
                &audit(
                    "accepted_range",
                    vec![("min_value", min), ("max_value", max)],
                ),
                "x",
            )
            .map(|s| s.check)
        };
        let bounds = |min: &str, max: &str| Check::AcceptedRange {
            min: Some(min.into()),
            max: Some(max.into()),
            inclusive: true,
        };
        assert_eq!(
            range(
                AuditArg::Text("'2020-01-01'".into()),
                AuditArg::Other("2020-12-31".into())
            ),
            Ok(bounds("2020-01-01", "2020-12-31"))
        );
        assert_eq!(
            range(
                AuditArg::Other("2020-01-01T08:00:00".into()),
                AuditArg::Text("2020-01-02 09:30:00.5".into())
            ),
            Ok(bounds("2020-01-01 08:00:00", "2020-01-02 09:30:00.5"))
        );
        assert_eq!(
            range(AuditArg::Text("10".into()), AuditArg::Int(20)),
            Ok(bounds("10", "20"))
        );
        assert_eq!(super::bound_kind("2020-01-01"), super::BoundKind::Date);
        assert_eq!(
            super::bound_kind("2020-01-01 08:00:00"),
            super::BoundKind::Time
        );
        assert_eq!(super::bound_kind("-5.5"), super::BoundKind::Number);
        for (min, max, why) in [
            (
                AuditArg::Text("soon".into()),
                AuditArg::Int(1),
                "not `soon`",
            ),
            (
                AuditArg::Other("2020-01-01T08:00:00Z".into()),
                AuditArg::Int(1),
                "without an offset",
            ),
            (
                AuditArg::Other("2020-01-01".into()),
                AuditArg::Int(1),
                "different kinds",
            ),
            (
                AuditArg::Bool(true),
                AuditArg::Int(1),
                "takes a number, a date",
            ),
        ] {
            match range(min, max) {
                Err(SpecError::Argument(m)) => assert!(m.contains(why), "{m}"),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn dbt_spellings_read_as_sqb_checks() {
        let range = audit(
            "dbt_utils.accepted_range",
            vec![
                ("min_value", AuditArg::Int(0)),
                ("where", AuditArg::Text("x > 1".into())),
            ],
        );
        let spec = parse(&range, "amount").unwrap();
        assert_eq!(spec.filter.as_deref(), Some("x > 1"));
        assert_eq!(
            spec.check,
            Check::AcceptedRange {
                min: Some("0".into()),
                max: None,
                inclusive: true
            }
        );
        let expr = audit(
            "dbt_utils.expression_is_true",
            vec![("expression", AuditArg::Text(">= 0".into()))],
        );
        assert_eq!(
            parse(&expr, "Amount").unwrap().check,
            Check::Expression("\"Amount\" >= 0".into())
        );
    }

    #[test]
    fn what_cannot_run_is_refused() {
        assert_eq!(
            parse(&audit("uniqe", vec![]), "x"),
            Err(SpecError::Unknown(Some("unique")))
        );
        assert!(
            matches!(parse(&audit("relationships", vec![("to", AuditArg::Text("m".into()))]), "x"), Err(SpecError::Argument(m)) if m == "missing `field`")
        );
        assert!(matches!(
            parse(
                &audit("unique", vec![("severity", AuditArg::Text("fatal".into()))]),
                "x"
            ),
            Err(SpecError::Argument(_))
        ));
        assert!(
            matches!(parse(&audit("not_null", vec![("colour", AuditArg::Int(1))]), "x"), Err(SpecError::Argument(m)) if m == "unknown argument `colour`")
        );
    }
}
