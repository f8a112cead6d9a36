//! Which realizations of a metric a query is served from: its finality rule's final
//! realization, with the provisional one's rows after the final watermark (`coalescing =
//! "watermark"`), the final one alone (`final_only`), or the one a `restrict_source` guardrail
//! of the query's context names. A metric without a rule is served from its canonical source.

use super::Refusal;
use crate::project::contracts::{Finality, Guardrail, Realization};
use crate::project::metrics::MetricBinding;

/// The realizations a leaf of the metric reads.
pub(super) enum Served<'p> {
    /// No finality rule: the canonical source.
    Canonical,
    /// One realization alone: `final` is whether it is the final one.
    One {
        realization: &'p Realization,
        is_final: bool,
    },
    /// The final realization, and the provisional one's rows after the final watermark.
    Coalesced {
        settled: &'p Realization,
        live: &'p Realization,
    },
}

/// The finality rule of `binding`, if any (rules name the metric by its canonical name).
pub(super) fn rule<'p>(rules: &'p [Finality], binding: &MetricBinding) -> Option<&'p Finality> {
    let name = binding.name()?;
    rules.iter().find(|f| {
        f.metric
            .as_ref()
            .is_some_and(|m| m.value.eq_ignore_ascii_case(&name.value))
    })
}

fn role_of(r: &Realization) -> &str {
    r.role.as_ref().map_or("", |x| x.value.as_str())
}

/// What a query of the metric reads, given the `restrict_source` guardrail governing it in
/// the query's context, if any.
pub(super) fn served<'p>(
    rule: Option<&'p Finality>,
    restriction: Option<&'p Guardrail>,
    metric: &str,
) -> Result<Served<'p>, Refusal> {
    let Some(rule) = rule else {
        return Ok(Served::Canonical);
    };
    let settled = rule
        .realizations
        .iter()
        .find(|r| role_of(r) == "final")
        .ok_or_else(|| {
            Refusal::new(
                "unsupported_measure",
                format!("the finality rule of metric `{metric}` has no final realization"),
            )
        })?;
    if let Some(g) = restriction {
        let wanted = g.restrict_to.as_ref().map_or("", |r| r.value.as_str());
        let id = g.id.as_ref().map_or("?", |i| i.value.as_str());
        let realization = rule
            .realizations
            .iter()
            .find(|r| role_of(r) == wanted)
            .ok_or_else(|| Refusal {
                code: "guardrail",
                message: format!(
                    "guardrail `{id}` serves metric `{metric}` only from its {wanted} realization, which its finality rule does not declare"
                ),
                hint: g.rationale.as_ref().map(|r| r.value.clone()),
            })?;
        return Ok(Served::One {
            realization,
            is_final: wanted == "final",
        });
    }
    let live: Vec<&Realization> = rule
        .realizations
        .iter()
        .filter(|r| role_of(r) == "provisional")
        .collect();
    let final_only = rule
        .coalescing
        .as_ref()
        .is_some_and(|c| c.value == "final_only");
    match live.as_slice() {
        _ if final_only => Ok(Served::One {
            realization: settled,
            is_final: true,
        }),
        [] => Ok(Served::One {
            realization: settled,
            is_final: true,
        }),
        [live] => Ok(Served::Coalesced { settled, live }),
        _ => Err(Refusal {
            code: "unsupported_measure",
            message: format!(
                "metric `{metric}` has {} provisional realizations: which one's rows follow the final watermark is not declared",
                live.len()
            ),
            hint: Some(
                "keep one provisional realization, or serve the final one alone (`coalescing = \"final_only\"`)"
                    .into(),
            ),
        }),
    }
}

/// How two realizations' aggregates of a measure combine into one: only aggregates whose
/// partial results add up (or bound each other) can be coalesced.
pub(super) fn combine(agg: &str, metric: &str) -> Result<&'static str, Refusal> {
    match agg {
        "sum" | "count" | "sum_boolean" => Ok("sum"),
        "min" => Ok("min"),
        "max" => Ok("max"),
        other => Err(Refusal {
            code: "unsupported_measure",
            message: format!(
                "metric `{metric}` aggregates by `{other}`, which cannot be combined over its final and provisional realizations"
            ),
            hint: Some("serve the final realization alone (`coalescing = \"final_only\"`)".into()),
        }),
    }
}

/// Two values combined, NULL only when both are.
pub(super) fn combined(how: &str, a: &str, b: &str) -> String {
    match how {
        "min" | "max" => {
            let op = if how == "min" { "<" } else { ">" };
            format!("CASE WHEN {a} IS NULL THEN {b} WHEN {b} IS NULL THEN {a} WHEN {a} {op} {b} THEN {a} ELSE {b} END")
        }
        _ => format!(
            "CASE WHEN {a} IS NULL AND {b} IS NULL THEN NULL ELSE COALESCE({a}, 0) + COALESCE({b}, 0) END"
        ),
    }
}
