//! `sqb query`'s result: a table, JSON (typed values; exact decimals as strings) or CSV on
//! stdout, and with `--sql` the statement itself. What is said of the result — each metric's
//! trust and finality, warnings, the harness — is in the JSON, and on stderr for the others
//! (the command prints it).

use std::io::{self, Write};

use comfy_table::{presets, ContentArrangement, Table};
use serde_json::{json, Value};

use super::assert::AssertionOutcome;
use crate::rows::{Cell, Rows};
use crate::semantic::query::{CompiledQuery, Refusal, ServedMetric};
use crate::semantic::trust::Trust;

/// A metric of the result: what it was served from, whether its rows are all final, its trust.
#[derive(Debug, Clone)]
pub struct MetricOutcome {
    pub served: ServedMetric,
    /// With a finality rule and rows read: whether every row holds only final rows.
    pub is_final: Option<bool>,
    /// With `result_flag = "metadata"`: whether each row (in order) holds only final rows.
    pub final_rows: Option<Vec<bool>>,
    pub trust: Trust,
}

#[derive(Debug)]
pub struct QueryOutcome {
    pub target: String,
    pub compiled: CompiledQuery,
    /// `None` with `--sql`.
    pub rows: Option<Rows>,
    pub metrics: Vec<MetricOutcome>,
    pub warnings: Vec<String>,
    pub harness: Vec<AssertionOutcome>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueryFormat {
    Text,
    Json,
    Csv,
}

pub fn emit(outcome: &QueryOutcome, format: QueryFormat, w: &mut dyn Write) -> io::Result<()> {
    match (format, &outcome.rows) {
        (QueryFormat::Json, _) => {
            serde_json::to_writer_pretty(&mut *w, &json_of(outcome))?;
            writeln!(w)
        }
        (_, None) => sql(outcome, w),
        (QueryFormat::Text, Some(rows)) => writeln!(w, "{}", table(rows)),
        (QueryFormat::Csv, Some(rows)) => csv(rows, w),
    }
}

/// The statement, and its parameters as comments.
fn sql(outcome: &QueryOutcome, w: &mut dyn Write) -> io::Result<()> {
    writeln!(w, "{};", outcome.compiled.sql)?;
    for (i, p) in outcome.compiled.params.iter().enumerate() {
        writeln!(w, "-- ${} = {}", i + 1, Value::String(p.clone()))?;
    }
    Ok(())
}

fn table(rows: &Rows) -> String {
    let mut table = Table::new();
    table
        .load_style(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(rows.columns.iter().map(|c| c.name.clone()));
    for row in &rows.rows {
        table.add_row(row.iter().map(|c| match c {
            Cell::Null => "NULL".to_string(),
            other => other.display(),
        }));
    }
    table.to_string()
}

fn csv(rows: &Rows, w: &mut dyn Write) -> io::Result<()> {
    let mut out = ::csv::Writer::from_writer(w);
    out.write_record(rows.columns.iter().map(|c| c.name.as_str()))
        .map_err(io::Error::other)?;
    for row in &rows.rows {
        out.write_record(row.iter().map(Cell::display))
            .map_err(io::Error::other)?;
    }
    out.flush()
}

/// A value as JSON: numbers that are exact stay exact (decimals as strings, integers beyond
/// 64 bits too).
pub fn cell_json(cell: &Cell) -> Value {
    match cell {
        Cell::Null => Value::Null,
        Cell::Bool(b) => Value::Bool(*b),
        Cell::Int(i) => match i64::try_from(*i) {
            Ok(small) => Value::from(small),
            Err(_) => Value::String(i.to_string()),
        },
        Cell::Float(f) => serde_json::Number::from_f64(*f)
            .map_or_else(|| Value::String(f.to_string()), Value::Number),
        Cell::Decimal(s) | Cell::Text(s) | Cell::Date(s) | Cell::Timestamp(s) => {
            Value::String(s.clone())
        }
    }
}

/// The answer as JSON, as `--format json` prints it.
pub fn document(outcome: &QueryOutcome) -> Value {
    json_of(outcome)
}

fn json_of(outcome: &QueryOutcome) -> Value {
    let metrics: Vec<Value> = outcome
        .metrics
        .iter()
        .map(|m| {
            let mut metric = json!({
                "column": m.served.column,
                "metric": m.served.metric,
                "sources": m.served.sources,
                "final": m.is_final,
                "trust": { "tier": m.trust.tier.as_str(), "reasons": m.trust.reasons },
            });
            if let Some(rows) = &m.final_rows {
                metric["final_rows"] = json!(rows);
            }
            metric
        })
        .collect();
    let mut doc = json!({
        "target": outcome.target,
        "sql": outcome.compiled.sql,
        "params": outcome.compiled.params,
        "metrics": metrics,
        "warnings": outcome.warnings,
    });
    if let Some(rows) = &outcome.rows {
        doc["columns"] = rows
            .columns
            .iter()
            .map(|c| json!({ "name": c.name, "type": c.type_name }))
            .collect();
        doc["rows"] = rows
            .rows
            .iter()
            .map(|r| {
                Value::Object(
                    rows.columns
                        .iter()
                        .zip(r)
                        .map(|(c, v)| (c.name.clone(), cell_json(v)))
                        .collect(),
                )
            })
            .collect();
    }
    if !outcome.harness.is_empty() {
        doc["harness"] = outcome
            .harness
            .iter()
            .map(super::assert::outcome_json)
            .collect();
    }
    doc
}

/// A refusal as JSON, for `--format json`.
pub fn refusal_json(refusal: &Refusal, w: &mut dyn Write) -> io::Result<()> {
    let doc = json!({ "refused": {
        "code": refusal.code,
        "message": refusal.message,
        "hint": refusal.hint,
    }});
    serde_json::to_writer_pretty(&mut *w, &doc)?;
    writeln!(w)
}
