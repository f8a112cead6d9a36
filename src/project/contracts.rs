//! `contracts/guardrails/*.toml`, `contracts/guardrails/finality-*.toml`,
//! `contracts/assertions/*.toml` and `contracts/queries/*.toml`: the rules every query of a
//! metric must obey, which realization of a metric is final, known-good queries with their
//! expected answers, and saved queries asked by name (docs/semantic-contracts.md).
//!
//! Reading checks each file's shape (unknown keys, types, allowed values, the fields each
//! guardrail kind requires); whether what they name exists is `crate::semantic`'s to check.

use toml_edit::{TableLike, Value};

use super::reader::Reader;
use crate::diagnostics::{Code, Diagnostic};
use crate::source::{FileId, Loc, Spanned};

const GUARDRAIL_KEYS: &[&str] = &[
    "id",
    "applies_to",
    "kind",
    "filter",
    "dimension",
    "context",
    "restrict_to",
    "level",
    "severity",
    "rationale",
    "phase",
];
pub const GUARDRAIL_KINDS: &[&str] = &[
    "mandatory_filter",
    "required_dimension",
    "restrict_source",
    "min_trust",
];
pub const TRUST_LEVELS: &[&str] = &["caution", "provisional", "trusted"];
pub const REALIZATION_ROLES: &[&str] = &["final", "provisional"];
const SEVERITIES: &[&str] = &["error", "warn"];
/// The kind-specific fields of a guardrail.
const KIND_FIELDS: &[&str] = &["filter", "dimension", "context", "restrict_to", "level"];

/// The fields a guardrail kind requires, and the optional ones it takes.
pub fn guardrail_fields(kind: &str) -> (&'static [&'static str], &'static [&'static str]) {
    match kind {
        "mandatory_filter" => (&["filter"], &[]),
        "required_dimension" => (&["dimension"], &["context"]),
        "restrict_source" => (&["restrict_to", "context"], &[]),
        "min_trust" => (&["level", "context"], &[]),
        _ => (&[], &[]),
    }
}

/// What a guardrail governs: one measure of a relation, or one metric.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub enum AppliesTo {
    Measure {
        source: Spanned<String>,
        measure: Spanned<String>,
    },
    Metric(Spanned<String>),
}

#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct Guardrail {
    pub file: FileId,
    pub id: Option<Spanned<String>>,
    pub applies_to: Option<AppliesTo>,
    pub kind: Option<Spanned<String>>,
    pub filter: Option<Spanned<String>>,
    pub dimension: Option<Spanned<String>>,
    pub context: Option<Spanned<String>>,
    /// `restrict_to = { role = "final" }`: the realization role served.
    pub restrict_to: Option<Spanned<String>>,
    pub level: Option<Spanned<String>>,
    pub severity: Option<Spanned<String>>,
    pub rationale: Option<Spanned<String>>,
    pub phase: Option<Spanned<String>>,
}

impl Guardrail {
    /// `severity = "warn"`: a violation is a warning on the result, not a refusal.
    pub fn warns(&self) -> bool {
        self.severity.as_ref().is_some_and(|s| s.value == "warn")
    }
}

/// A finality rule: which realizations of a metric exist and which one is final.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct Finality {
    pub file: FileId,
    pub metric: Option<Spanned<String>>,
    pub realizations: Vec<Realization>,
    pub coalescing: Option<Spanned<String>>,
    pub result_flag: Option<Spanned<String>>,
    pub board_only_final: Option<Spanned<bool>>,
}

#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct Realization {
    pub loc: Loc,
    pub source: Option<Spanned<String>>,
    pub role: Option<Spanned<String>>,
    pub watermark: Option<Spanned<String>>,
    pub tz: Option<Spanned<String>>,
}

pub const COALESCING: &[&str] = &["watermark", "final_only"];
pub const RESULT_FLAGS: &[&str] = &["column", "metadata", "none"];

/// A known-good query and its expected answer.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct Assertion {
    pub file: FileId,
    pub id: Option<Spanned<String>>,
    pub query: Option<SemanticQuery>,
    pub expect: Option<Expect>,
    pub source_of_truth: Option<Spanned<String>>,
}

/// A saved query: a semantic query with a name, asked as `sqb query --saved NAME`.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct SavedQuery {
    pub file: FileId,
    pub name: Option<Spanned<String>>,
    pub description: Option<Spanned<String>>,
    pub query: SemanticQuery,
    /// Output columns the rows are ordered by, `-` first for descending.
    pub order_by: Vec<Spanned<String>>,
    /// At most this many rows.
    pub limit: Option<Spanned<u64>>,
}

/// A semantic query: metrics by name or alias, grouped by dimensions, filtered, in a context.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct SemanticQuery {
    pub loc: Loc,
    pub metrics: Vec<Spanned<String>>,
    pub dimensions: Vec<Spanned<String>>,
    pub filters: Vec<Spanned<String>>,
    pub context: Option<Spanned<String>>,
}

#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct Expect {
    pub loc: Loc,
    /// `rows = 12`: the number of rows.
    pub row_count: Option<Spanned<i64>>,
    /// `[[expect.rows]]`: exactly these rows, matched by their dimension values.
    pub rows: Vec<ExpectRow>,
    /// `values = { ... }`: the first row's values.
    pub values: Option<ExpectRow>,
    pub tolerance: Option<Spanned<Tolerance>>,
}

/// Output column → expected value.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct ExpectRow {
    pub loc: Loc,
    pub cells: Vec<(Spanned<String>, Spanned<Expected>)>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Expected {
    /// `{ null = true }`.
    Null,
    Bool(bool),
    Integer(i64),
    Float(f64),
    /// A string: text, or an exact decimal for a numeric column.
    Text(String),
    /// A TOML date or date-time, as written.
    Temporal(String),
}

#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Tolerance {
    Relative(f64),
    Absolute(f64),
}

/// Reads a guardrail file's root table.
pub(super) fn read_guardrail(r: &mut Reader<'_>, root: &dyn TableLike, file: FileId) -> Guardrail {
    r.check_keys(root, GUARDRAIL_KEYS, "a guardrail");
    let start = Loc::file_start(file);
    for (key, hint) in [
        ("id", "name it: `id = \"revenue_excludes_test_orders\"`"),
        ("applies_to", "say what it governs: `applies_to = { metric = \"revenue\" }` or `{ source = \"fct_orders\", measure = \"revenue\" }`"),
        ("kind", "one of mandatory_filter, required_dimension, restrict_source, min_trust"),
        ("rationale", "say why the rule exists: it is shown with every refusal"),
    ] {
        if !root.contains_key(key) {
            r.missing(start.clone(), key, "a guardrail", hint);
        }
    }
    let kind = r.choice(root, "kind", GUARDRAIL_KINDS);
    if let Some(kind) = &kind {
        kind_fields(r, root, kind, &start);
    }
    let restrict_to = r.table(root, "restrict_to").and_then(|t| {
        r.check_keys(t, &["role"], "`restrict_to`");
        let role = r.choice(t, "role", REALIZATION_ROLES);
        if role.is_none() && !t.contains_key("role") {
            let loc = r.key_loc(root, "restrict_to");
            r.missing(
                loc,
                "role",
                "`restrict_to`",
                "write `restrict_to = { role = \"final\" }`",
            );
        }
        role
    });
    let rationale = r.string(root, "rationale");
    if let Some(empty) = rationale.as_ref().filter(|s| s.value.trim().is_empty()) {
        r.push(
            Diagnostic::error(Code::InvalidValue, "a guardrail's `rationale` is empty")
                .at(empty.loc.clone(), "say why the rule exists")
                .hint("the rationale is shown to whoever the guardrail refuses"),
        );
    }
    Guardrail {
        file,
        id: r.string(root, "id"),
        applies_to: applies_to(r, root),
        filter: r.string(root, "filter"),
        dimension: r.string(root, "dimension"),
        context: r.string(root, "context"),
        level: r.choice(root, "level", TRUST_LEVELS),
        severity: r.choice(root, "severity", SEVERITIES),
        phase: r.string(root, "phase"),
        rationale,
        restrict_to,
        kind,
    }
}

/// Every field the kind requires is there, and no kind-specific field foreign to it.
fn kind_fields(r: &mut Reader<'_>, root: &dyn TableLike, kind: &Spanned<String>, start: &Loc) {
    let (required, optional) = guardrail_fields(&kind.value);
    let takes = || {
        let all: Vec<&str> = required.iter().chain(optional).copied().collect();
        format!("a `{}` guardrail takes {}", kind.value, all.join(", "))
    };
    for key in KIND_FIELDS {
        if root.contains_key(key) && !required.contains(key) && !optional.contains(key) {
            r.push(
                Diagnostic::error(
                    Code::GuardrailShape,
                    format!("`{key}` does not belong to a `{}` guardrail", kind.value),
                )
                .at(
                    r.key_loc(root, key),
                    format!("not a field of `{}`", kind.value),
                )
                .related(kind.loc.clone(), "the kind is set here")
                .hint(takes()),
            );
        }
    }
    for key in required {
        if !root.contains_key(key) {
            let context = format!("a `{}` guardrail", kind.value);
            r.missing(start.clone(), key, &context, takes());
        }
    }
}

/// `applies_to`: exactly `{ source, measure }` or `{ metric }`.
fn applies_to(r: &mut Reader<'_>, root: &dyn TableLike) -> Option<AppliesTo> {
    let t = r.table(root, "applies_to")?;
    r.check_keys(t, &["source", "measure", "metric"], "`applies_to`");
    let source = r.string(t, "source");
    let measure = r.string(t, "measure");
    let metric = r.string(t, "metric");
    let loc = r.value_loc(root, "applies_to");
    let shape = |r: &mut Reader<'_>, message: &str| {
        r.push(
            Diagnostic::error(Code::GuardrailShape, format!("`applies_to` {message}"))
                .at(
                    loc.clone(),
                    "expected `{ metric = .. }` or `{ source = .., measure = .. }`",
                )
                .hint("a guardrail governs one metric, or one measure of one model or source"),
        );
    };
    match (source, measure, metric) {
        (None, None, Some(metric)) => Some(AppliesTo::Metric(metric)),
        (Some(source), Some(measure), None) => Some(AppliesTo::Measure { source, measure }),
        (_, _, Some(_)) => {
            shape(r, "names both a metric and a measure");
            None
        }
        (None, None, None) if t.is_empty() => {
            shape(r, "is empty");
            None
        }
        (None, None, None) => None,
        (Some(_), None, None) => {
            shape(r, "names a source but no measure");
            None
        }
        (None, Some(_), None) => {
            shape(r, "names a measure but not its source");
            None
        }
    }
}

/// Reads a finality rule's root table.
pub(super) fn read_finality(r: &mut Reader<'_>, root: &dyn TableLike, file: FileId) -> Finality {
    r.check_keys(
        root,
        &[
            "metric",
            "realizations",
            "coalescing",
            "result_flag",
            "board_only_final",
        ],
        "a finality rule",
    );
    let start = Loc::file_start(file);
    for (key, hint) in [
        (
            "metric",
            "name the metric it governs: `metric = \"revenue\"`",
        ),
        (
            "realizations",
            "list its realizations as `[[realizations]]` tables with `source` and `role`",
        ),
    ] {
        if !root.contains_key(key) {
            r.missing(start.clone(), key, "a finality rule", hint);
        }
    }
    let hint = "write each realization as a `[[realizations]]` table";
    let realizations = r
        .tables(root, "realizations", hint)
        .into_iter()
        .map(|(t, loc)| {
            r.check_keys(t, &["source", "role", "watermark", "tz"], "a realization");
            for key in ["source", "role"] {
                if !t.contains_key(key) {
                    let hint =
                        "a realization names its `source` and its `role` (final or provisional)";
                    r.missing(loc.clone(), key, "a realization", hint);
                }
            }
            Realization {
                source: r.string(t, "source"),
                role: r.choice(t, "role", REALIZATION_ROLES),
                watermark: r.string(t, "watermark"),
                tz: r.string(t, "tz"),
                loc,
            }
        })
        .collect();
    Finality {
        file,
        metric: r.string(root, "metric"),
        coalescing: r.choice(root, "coalescing", COALESCING),
        result_flag: r.choice(root, "result_flag", RESULT_FLAGS),
        board_only_final: r.boolean(root, "board_only_final"),
        realizations,
    }
}

/// Reads an assertion file's root table.
pub(super) fn read_assertion(r: &mut Reader<'_>, root: &dyn TableLike, file: FileId) -> Assertion {
    r.check_keys(
        root,
        &["id", "query", "expect", "source_of_truth"],
        "an assertion",
    );
    let start = Loc::file_start(file);
    for (key, hint) in [
        ("id", "name it: `id = \"revenue_2024\"`"),
        (
            "query",
            "say what it asks: `[query]` with `metrics = [\"revenue\"]`",
        ),
        (
            "expect",
            "say what the answer is: `[expect]` with `rows` or `values`",
        ),
    ] {
        if !root.contains_key(key) {
            r.missing(start.clone(), key, "an assertion", hint);
        }
    }
    let query = r.table(root, "query").map(|t| {
        r.check_keys(
            t,
            &["metrics", "dimensions", "filters", "context"],
            "[query]",
        );
        let list =
            |r: &mut Reader<'_>, key| r.strings(t, key, true).map(|l| l.value).unwrap_or_default();
        let query = SemanticQuery {
            loc: r.key_loc(root, "query"),
            metrics: list(r, "metrics"),
            dimensions: list(r, "dimensions"),
            filters: list(r, "filters"),
            context: r.string(t, "context"),
        };
        if query.metrics.is_empty() && !t.contains_key("metrics") {
            let hint = "name at least one metric: `metrics = [\"revenue\"]`";
            r.missing(query.loc.clone(), "metrics", "[query]", hint);
        }
        query
    });
    let expect = r
        .table(root, "expect")
        .map(|t| read_expect(r, t, r.key_loc(root, "expect")));
    Assertion {
        file,
        id: r.string(root, "id"),
        source_of_truth: r.string(root, "source_of_truth"),
        query,
        expect,
    }
}

/// `contracts/queries/NAME.toml`: `name`, `description`, and the query's `metrics`,
/// `dimensions`, `filters` and `context` at the top level.
pub(super) fn read_saved_query(
    r: &mut Reader<'_>,
    root: &dyn TableLike,
    file: FileId,
) -> SavedQuery {
    r.check_keys(
        root,
        &[
            "name",
            "description",
            "metrics",
            "dimensions",
            "filters",
            "context",
            "order_by",
            "limit",
        ],
        "a saved query",
    );
    let start = Loc::file_start(file);
    for (key, hint) in [
        ("name", "name it: `name = \"revenue_by_status\"`"),
        (
            "metrics",
            "name at least one metric: `metrics = [\"revenue\"]`",
        ),
    ] {
        if !root.contains_key(key) {
            r.missing(start.clone(), key, "a saved query", hint);
        }
    }
    let list = |r: &mut Reader<'_>, key| {
        r.strings(root, key, true)
            .map(|l| l.value)
            .unwrap_or_default()
    };
    let query = SemanticQuery {
        loc: r.key_loc(root, "metrics"),
        metrics: list(r, "metrics"),
        dimensions: list(r, "dimensions"),
        filters: list(r, "filters"),
        context: r.string(root, "context"),
    };
    let order_by = list(r, "order_by");
    let limit = r
        .integer(root, "limit")
        .and_then(|n| match u64::try_from(n.value) {
            Ok(value) => Some(Spanned { value, loc: n.loc }),
            Err(_) => {
                r.push(
                    Diagnostic::error(Code::InvalidValue, format!("invalid limit {}", n.value))
                        .at(n.loc, "expected 0 or more"),
                );
                None
            }
        });
    SavedQuery {
        file,
        name: r.string(root, "name"),
        description: r.string(root, "description"),
        query,
        order_by,
        limit,
    }
}

fn read_expect(r: &mut Reader<'_>, t: &dyn TableLike, loc: Loc) -> Expect {
    r.check_keys(t, &["rows", "values", "tolerance"], "[expect]");
    let mut expect = Expect {
        loc: loc.clone(),
        row_count: None,
        rows: Vec::new(),
        values: None,
        tolerance: read_tolerance(r, t),
    };
    match t.get("rows") {
        Some(item) if item.as_integer().is_some() => {
            expect.row_count = r.integer(t, "rows");
            if let Some(n) = expect.row_count.as_ref().filter(|n| n.value < 0) {
                r.push(
                    Diagnostic::error(Code::InvalidValue, format!("invalid row count {}", n.value))
                        .at(n.loc.clone(), "expected 0 or more"),
                );
            }
        }
        Some(_) => {
            let hint =
                "write `rows = 12` for a row count, or `[[expect.rows]]` tables for the rows";
            expect.rows = r
                .tables(t, "rows", hint)
                .into_iter()
                .map(|(row, loc)| read_row(r, row, loc))
                .collect();
        }
        None => {}
    }
    if let Some(values) = r.table(t, "values") {
        expect.values = Some(read_row(r, values, r.value_loc(t, "values")));
    }
    if expect.row_count.is_none()
        && expect.rows.is_empty()
        && expect.values.is_none()
        && !t.contains_key("rows")
    {
        r.push(
            Diagnostic::error(Code::MissingKey, "[expect] expects nothing")
                .at(loc, "no `rows` or `values`")
                .hint("say what the answer is: `rows = 12`, `values = { revenue = \"1234.50\" }` or `[[expect.rows]]` tables"),
        );
    }
    expect
}

/// `tolerance = { relative = 0.01 }` or `{ absolute = 0.5 }`, never negative.
fn read_tolerance(r: &mut Reader<'_>, t: &dyn TableLike) -> Option<Spanned<Tolerance>> {
    let item = t.get("tolerance")?;
    let hint = "write `tolerance = { relative = 0.01 }` or `tolerance = { absolute = 0.5 }`";
    let Some(table) = item.as_table_like() else {
        r.wrong_type(t, "tolerance", "a table", Some(hint.into()));
        return None;
    };
    r.check_keys(table, &["relative", "absolute"], "`tolerance`");
    let loc = r.value_loc(t, "tolerance");
    let relative = r.number(table, "relative");
    let absolute = r.number(table, "absolute");
    let (value, make): (Spanned<f64>, fn(f64) -> Tolerance) = match (relative, absolute) {
        (Some(v), None) => (v, Tolerance::Relative),
        (None, Some(v)) => (v, Tolerance::Absolute),
        (Some(_), Some(_)) => {
            r.push(
                Diagnostic::error(
                    Code::InvalidValue,
                    "`tolerance` is both relative and absolute",
                )
                .at(loc, "one of the two")
                .hint(hint),
            );
            return None;
        }
        (None, None) => {
            if table.is_empty() {
                r.push(
                    Diagnostic::error(Code::InvalidValue, "`tolerance` is empty")
                        .at(loc, "no bound")
                        .hint(hint),
                );
            }
            return None;
        }
    };
    if !(value.value >= 0.0 && value.value.is_finite()) {
        r.push(
            Diagnostic::error(
                Code::InvalidValue,
                format!("invalid tolerance {}", value.value),
            )
            .at(value.loc, "expected a number of 0 or more")
            .hint(hint),
        );
        return None;
    }
    Some(Spanned::new(make(value.value), loc))
}

fn read_row(r: &mut Reader<'_>, t: &dyn TableLike, loc: Loc) -> ExpectRow {
    let mut cells = Vec::new();
    for (key, item) in t.iter() {
        let at = r.value_loc(t, key);
        let value = match item.as_value() {
            Some(Value::String(s)) => Some(Expected::Text(s.value().clone())),
            Some(Value::Integer(i)) => Some(Expected::Integer(*i.value())),
            Some(Value::Float(f)) => Some(Expected::Float(*f.value())),
            Some(Value::Boolean(b)) => Some(Expected::Bool(*b.value())),
            Some(Value::Datetime(d)) => Some(Expected::Temporal(d.value().to_string())),
            Some(Value::InlineTable(n))
                if n.len() == 1 && n.get("null").and_then(|v| v.as_bool()) == Some(true) =>
            {
                Some(Expected::Null)
            }
            _ => None,
        };
        match value {
            Some(value) => cells.push((
                Spanned::new(key.to_string(), r.key_loc(t, key)),
                Spanned::new(value, at),
            )),
            None => r.wrong_type(
                t,
                key,
                "a string, number, boolean, date or `{ null = true }`",
                Some("write exact decimals as strings: `revenue = \"1234.50\"`".into()),
            ),
        }
    }
    ExpectRow { loc, cells }
}
