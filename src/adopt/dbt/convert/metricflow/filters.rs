//! MetricFlow's where filters (`{{ Dimension('order_id__is_food_order') }} = true`) as sqb
//! population filters over the source's own columns. A reference becomes the column (or the
//! expression) its dimension or entity reads, a `TimeDimension` at a coarser grain is
//! truncated to it, and the result must pass sqb's filter language. What cannot be translated
//! exactly (a dimension of another semantic model, reached over a join; a `Metric` in a
//! filter; a method sqb does not know) is refused with the reason.

use serde_json::Value;

use crate::adopt::dbt::manifest::{SemanticMeasure, SemanticModel};
use crate::engine::Engine;
use crate::semantic::filter::template::{self, Call};

use super::column_name;

/// The semantic model a filter is read against: the one whose measure the metric aggregates.
pub(super) struct Scope<'a> {
    pub sm: &'a SemanticModel,
    pub measure: &'a SemanticMeasure,
}

/// A translated filter: one predicate per MetricFlow where filter, and the plain columns the
/// references read.
pub(super) struct Translated {
    pub predicates: Vec<String>,
    pub columns: Vec<String>,
}

/// The predicates AND-ed, each in parentheses when there are several.
pub(super) fn conjunction(predicates: &[String]) -> Option<String> {
    match predicates {
        [] => None,
        [one] => Some(one.clone()),
        many => Some(
            many.iter()
                .map(|p| format!("({p})"))
                .collect::<Vec<_>>()
                .join(" AND "),
        ),
    }
}

/// Translates `filter` (`{"where_filters": [{"where_sql_template": …}]}`, or one template).
/// A MetricFlow filter as a filter over dimensions, as `sqb query --filter` takes it (for a
/// binding's `filter`): each where filter's references in the dimension names sqb resolves,
/// over joins too, the filters AND-ed.
pub(super) fn over_dimensions(filter: &Value) -> Result<String, String> {
    let templates = templates(filter)?;
    let mut out = Vec::new();
    for template in templates {
        let text = crate::semantic::filter::template::substitute(
            template.trim(),
            crate::semantic::filter::template::query_reference,
        )?;
        out.push(text);
    }
    match out.len() {
        1 => Ok(out.remove(0)),
        _ => Ok(out
            .iter()
            .map(|f| format!("({f})"))
            .collect::<Vec<_>>()
            .join(" AND ")),
    }
}

/// Whether a filter names a dimension over a foreign entity of the scope's semantic model (a
/// join, `customer__segment` from the orders), or a metric's value for an entity (`Metric(…,
/// group_by=[…])`): one a population filter cannot read, and a filter over dimensions can.
pub(super) fn over_a_join(filter: &Value, scope: &Scope<'_>) -> bool {
    let Ok(templates) = templates(filter) else {
        return false;
    };
    let mut joined = false;
    for template in templates {
        let _ = crate::semantic::filter::template::substitute(template, |call| {
            let first = call
                .args
                .first()
                .and_then(|name| name.split("__").next())
                .unwrap_or_default();
            joined |= call.function == "Metric";
            joined |= scope
                .sm
                .entities
                .iter()
                .any(|e| e.name == first && e.kind == "foreign");
            Ok(String::new())
        });
    }
    joined
}

/// What a filter's references read: the time of the scope's measure (`metric_time`, or its agg
/// time dimension through one of the semantic model's own entities, at any grain), and
/// anything else.
pub(super) struct Reads {
    pub time: bool,
    pub other: bool,
}

pub(super) fn reads(filter: &Value, scope: &Scope<'_>) -> Reads {
    let mut reads = Reads {
        time: false,
        other: false,
    };
    let Ok(templates) = templates(filter) else {
        return reads;
    };
    let agg_time = agg_time(scope);
    for template in templates {
        let _ = template::substitute(template, |call| {
            let name = call.args.first().map(String::as_str).unwrap_or_default();
            let dimension = name.rsplit_once("__").map_or(name, |(_, d)| d);
            let time = matches!(call.function.as_str(), "Dimension" | "TimeDimension")
                && (name == "metric_time" || Some(dimension) == agg_time.as_deref());
            reads.time |= time;
            reads.other |= !time;
            Ok(String::new())
        });
    }
    reads
}

/// The time dimension of the scope's measure: its own, else its semantic model's default.
fn agg_time(scope: &Scope<'_>) -> Option<String> {
    scope.measure.agg_time_dimension.clone().or_else(|| {
        let defaults = scope.sm.defaults.as_ref()?;
        Some(defaults.get("agg_time_dimension")?.as_str()?.to_string())
    })
}

/// The where filters of a MetricFlow filter.
fn templates(filter: &Value) -> Result<Vec<&str>, String> {
    match filter {
        Value::String(s) => Ok(vec![s.as_str()]),
        Value::Object(o) => match o.get("where_filters") {
            Some(Value::Array(items)) => items
                .iter()
                .map(|f| {
                    f.get("where_sql_template")
                        .and_then(Value::as_str)
                        .ok_or_else(|| format!("a where filter of an unknown shape: {f}"))
                })
                .collect(),
            _ => Err(format!("a filter of an unknown shape: {filter}")),
        },
        other => Err(format!("a filter of an unknown shape: {other}")),
    }
}

pub(super) fn translate(
    filter: &Value,
    scope: &Scope<'_>,
    engine: Engine,
) -> Result<Translated, String> {
    let templates = templates(filter)?;
    let mut out = Translated {
        predicates: Vec::new(),
        columns: Vec::new(),
    };
    for template in templates {
        let predicate = substitute(template.trim(), scope, &mut out.columns)?;
        check(&predicate, template.trim(), engine)?;
        out.predicates.push(predicate);
    }
    Ok(out)
}

/// The predicate must be one expression in sqb's filter language.
fn check(predicate: &str, template: &str, engine: Engine) -> Result<(), String> {
    let refused = |why: String| format!("`{template}` translates to `{predicate}`, which {why}");
    let expr = crate::semantic::filter::parse(predicate, engine)
        .map_err(|r| refused(format!("does not parse: {}", r.why)))?;
    crate::semantic::filter::check(&expr, engine)
        .map_err(|r| refused(format!("sqb's filter language refuses: {}", r.why)))
}

/// Replaces every `{{ … }}` of `template` by the SQL it stands for.
fn substitute(
    template: &str,
    scope: &Scope<'_>,
    columns: &mut Vec<String>,
) -> Result<String, String> {
    template::substitute(template, |call| resolve(call, scope, columns))
}

/// The SQL a reference stands for.
fn resolve(call: &Call, scope: &Scope<'_>, columns: &mut Vec<String>) -> Result<String, String> {
    let shown = || call.shown();
    let mut grain = None;
    for (method, args) in &call.methods {
        match (method.as_str(), args.as_slice()) {
            ("grain", [g]) if call.function == "TimeDimension" || call.function == "Dimension" => {
                grain = Some(g.clone());
            }
            _ => {
                return Err(format!(
                    "`{}` calls `.{method}`, which sqb does not translate",
                    shown()
                ))
            }
        }
    }
    match (call.function.as_str(), call.args.as_slice()) {
        ("Dimension", [name]) => dimension(name, grain, scope, columns),
        ("TimeDimension", [name]) => dimension(name, grain, scope, columns),
        ("TimeDimension", [name, g]) => dimension(name, Some(g.clone()), scope, columns),
        ("Entity", [name]) => entity(name, scope, columns),
        ("Metric", _) => Err(format!(
            "`{}` filters on a metric's value; a sqb population filter reads the source's rows",
            shown()
        )),
        _ => Err(format!("`{}` is not a reference sqb translates", shown())),
    }
}

/// A column, or an expression in parentheses, noting a plain column as read.
fn sql_of(expr: &str, columns: &mut Vec<String>) -> String {
    match column_name(expr) {
        Some(c) => {
            columns.push(c.to_string());
            c.to_string()
        }
        None => format!("({})", expr.trim()),
    }
}

fn dimension(
    name: &str,
    grain: Option<String>,
    scope: &Scope<'_>,
    columns: &mut Vec<String>,
) -> Result<String, String> {
    let sm = scope.sm;
    let dim_name = match name {
        "metric_time" => agg_time(scope).ok_or_else(|| {
            format!(
                "`metric_time` needs the time dimension of measure `{}`, and it has none",
                scope.measure.name
            )
        })?,
        _ => {
            let (path, dim) = name
                .rsplit_once("__")
                .ok_or_else(|| format!("dimension `{name}` names no entity"))?;
            own_entity(path, name, scope)?;
            dim.to_string()
        }
    };
    let Some(dimension) = sm.dimensions.iter().find(|d| d.name == dim_name) else {
        return Err(format!(
            "dimension `{name}` is not one of semantic model `{}`'s: it is reached over a join, and a sqb population filter reads its source's own columns",
            sm.name
        ));
    };
    let sql = sql_of(
        dimension.expr.as_deref().unwrap_or(&dimension.name),
        columns,
    );
    let own = dimension
        .type_params
        .as_ref()
        .and_then(|p| p.get("time_granularity"))
        .and_then(Value::as_str);
    match grain {
        None => Ok(sql),
        Some(g) if Some(g.as_str()) == own => Ok(sql),
        Some(g) if dimension.kind == "time" && super::GRANULARITIES.contains(&g.as_str()) => {
            Ok(format!("date_trunc('{g}', {sql})"))
        }
        Some(g) => Err(format!(
            "dimension `{name}` at grain `{g}`, which sqb does not translate"
        )),
    }
}

/// `path` (the part of a reference before its last `__`) must be one entity of the scope's
/// semantic model that is its own: primary, unique or natural, not a foreign one.
fn own_entity(path: &str, name: &str, scope: &Scope<'_>) -> Result<(), String> {
    let sm = scope.sm;
    match sm.entities.iter().find(|e| e.name == path) {
        Some(e) if e.kind != "foreign" => Ok(()),
        Some(_) => Err(format!(
            "`{name}` is reached over foreign entity `{path}`, a join; a sqb population filter reads its source's own columns"
        )),
        None => Err(format!(
            "`{name}` is reached over `{path}`, which is not an entity of semantic model `{}`; a sqb population filter reads its source's own columns",
            sm.name
        )),
    }
}

fn entity(name: &str, scope: &Scope<'_>, columns: &mut Vec<String>) -> Result<String, String> {
    let Some(e) = scope.sm.entities.iter().find(|e| e.name == name) else {
        return Err(format!(
            "entity `{name}` is not one of semantic model `{}`'s",
            scope.sm.name
        ));
    };
    Ok(sql_of(e.expr.as_deref().unwrap_or(&e.name), columns))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conjunctions_parenthesize_several() {
        assert_eq!(conjunction(&[]), None);
        assert_eq!(conjunction(&["a = 1".into()]).as_deref(), Some("a = 1"));
        assert_eq!(
            conjunction(&["a = 1 OR b".into(), "c".into()]).as_deref(),
            Some("(a = 1 OR b) AND (c)")
        );
    }
}
