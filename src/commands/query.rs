//! `sqb query`: the request from the arguments, the op, the result on stdout and what is said
//! of it (trust, finality, warnings) on stderr; a refusal prints its code and ends with its
//! own exit status.

use crate::cli::{GlobalArgs, PrincipalArgs, QueryArgs, QueryFormat};
use crate::commands::{note, project_root, say, stdout, timeouts};
use crate::error::UserError;
use crate::exit::ExitStatus;
use crate::message::Level;
use crate::ops::query::{query, QueryOptions, QueryOutcome};
use crate::report::query::{self as printer, QueryFormat as Printed};
use crate::semantic::query::{QueryRequest, Refusal};

pub fn run(global: &GlobalArgs, args: &QueryArgs) -> anyhow::Result<ExitStatus> {
    let root = project_root(global)?;
    let options = QueryOptions {
        from: args.from.clone(),
        request: QueryRequest {
            metrics: args.metrics.clone(),
            dimensions: args.dimensions.clone(),
            filters: args.filters.clone(),
            context: args.context.clone(),
            principal: principal(&args.principal)?,
            tenant: None,
            order_by: args.order_by.clone(),
            limit: args.limit,
        },
        saved: args.saved.clone(),
        sql_only: args.sql,
        harness: args.harness,
        timeouts: timeouts(&args.connect),
        use_cache: !global.no_cache,
    };
    let format = match args.format {
        QueryFormat::Text => Printed::Text,
        QueryFormat::Json => Printed::Json,
        QueryFormat::Csv => Printed::Csv,
    };
    match query(&root, &options) {
        Ok(outcome) => {
            stdout(|w| printer::emit(&outcome, format, w))?;
            if format != Printed::Json {
                said(global, &outcome);
            }
            Ok(ExitStatus::Success)
        }
        Err(err) => match err.downcast_ref::<Refusal>() {
            Some(refusal) => Ok(refused(global, refusal, format)?),
            None => Err(err),
        },
    }
}

/// Each refusal code and the exit status `sqb query` ends with: part of the CLI contract.
const REFUSAL_CODES: &[(&str, u8)] = &[
    ("unresolved", 10),
    ("ambiguous", 11),
    ("ambiguous_join_path", 12),
    ("unreachable", 13),
    ("fanout_unsafe", 14),
    ("unsupported_measure", 15),
    ("guardrail", 16),
    ("undeclared_source", 17),
    ("no_principal", 18),
    ("forbidden", 19),
    ("invalid_filter", 20),
    ("zero_denominator", 21),
    ("invalid_claims", 22),
];

/// The exit status of a refusal's code (2, a failure, for a code the table lacks).
fn exit_status(refusal: &Refusal) -> u8 {
    REFUSAL_CODES
        .iter()
        .find(|(c, _)| *c == refusal.code)
        .map_or(2, |(_, s)| *s)
}

/// A refusal: its code and message (and hint) on stderr, or as JSON on stdout.
pub fn refused(
    global: &GlobalArgs,
    refusal: &Refusal,
    format: Printed,
) -> anyhow::Result<ExitStatus> {
    if format == Printed::Json {
        stdout(|w| printer::refusal_json(refusal, w))?;
    }
    if format != Printed::Json || !global.quiet {
        super::print_refusal(refusal);
    }
    Ok(ExitStatus::Refused(exit_status(refusal)))
}

/// Each metric's trust and finality, and the warnings, on stderr.
fn said(global: &GlobalArgs, outcome: &QueryOutcome) {
    for w in &outcome.warnings {
        say(global, Level::Warning, w);
    }
    for m in &outcome.metrics {
        let finality = match (m.is_final, &m.final_rows) {
            (Some(true), _) => ", final".to_string(),
            (Some(false), Some(rows)) => format!(", provisional in {}", provisional_rows(rows)),
            (Some(false), None) => ", holds provisional rows".to_string(),
            (None, _) => String::new(),
        };
        let reasons = match m.trust.reasons.is_empty() {
            true => String::new(),
            false => format!(" ({})", m.trust.reasons.join("; ")),
        };
        note(
            global,
            &format!(
                "{}: trust {}{reasons}{finality}",
                m.served.column,
                m.trust.tier.as_str()
            ),
        );
    }
    for h in &outcome.harness {
        let verdict = match h.passed() {
            true => "passed",
            false => "FAILED",
        };
        note(global, &format!("assertion {} {verdict}", h.id));
    }
}

/// The 1-based numbers of the rows holding provisional values: `row 3`, `rows 1, 4`.
fn provisional_rows(flags: &[bool]) -> String {
    let numbers: Vec<String> = flags
        .iter()
        .enumerate()
        .filter(|(_, f)| !**f)
        .map(|(i, _)| (i + 1).to_string())
        .collect();
    match numbers.len() {
        1 => format!("row {}", numbers[0]),
        _ => format!("rows {}", numbers.join(", ")),
    }
}

/// The principal's claims: `--principal FILE` or `--claims JSON`, a JSON object.
pub fn principal(
    args: &PrincipalArgs,
) -> anyhow::Result<Option<serde_json::Map<String, serde_json::Value>>> {
    let (text, what) = match (&args.principal, &args.claims) {
        (Some(path), _) => (
            std::fs::read_to_string(path).map_err(|e| {
                UserError::new(format!(
                    "could not read the principal {}: {e}",
                    path.display()
                ))
            })?,
            path.display().to_string(),
        ),
        (None, Some(json)) => (json.clone(), "--claims".to_string()),
        (None, None) => return Ok(None),
    };
    match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(serde_json::Value::Object(map)) => Ok(Some(map)),
        Ok(_) => Err(UserError::new(format!("{what} is not a JSON object"))
            .with_hint("claims look like {\"customer_id\": \"2\", \"roles\": [\"customer\"]}")
            .into()),
        Err(e) => Err(UserError::new(format!(
            "{what} is not valid JSON: {e} (line {}, column {})",
            e.line(),
            e.column()
        ))
        .with_hint("claims look like {\"customer_id\": \"2\", \"roles\": [\"customer\"]}")
        .into()),
    }
}
