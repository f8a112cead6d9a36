//! MetricFlow's saved queries as sqb's (`contracts/queries/NAME.toml`, asked as `sqb query
//! --saved NAME`): the metrics, the group-by items as sqb dimensions (`Dimension('order_id__status')`
//! is `status`; over a join, `customer.segment`; `TimeDimension('metric_time', 'month')` is
//! `metric_time.month`, each metric in its own time), and the where filters over those dimensions. A
//! saved query on a metric that was not carried is not carried either; its `order_by` (a metric
//! or a group-by item, `.descending(True)` as a leading `-`) and `limit` are the saved query's;
//! exports are MetricFlow's to build.

use serde_json::Value;
use toml_edit::DocumentMut;

use super::metrics::Pass;
use super::Layer;
use crate::adopt::dbt::convert::Importer;
use crate::adopt::dbt::manifest::SavedQueryNode;
use crate::adopt::dbt::Carried;
use crate::semantic::filter::template::Call;

impl Importer<'_> {
    /// Writes every saved query whose metrics were bound, and reports the others.
    pub(super) fn carry_saved_queries(&mut self, layer: &Layer, pass: &Pass<'_>) {
        for (id, saved) in self.manifest.saved_queries.clone() {
            let what = match self.saved_query(layer, pass, &saved) {
                Ok(doc) => {
                    self.metric_files
                        .push((format!("contracts/queries/{}.toml", saved.name), doc));
                    for export in &saved.exports {
                        let name = export.get("name").and_then(Value::as_str).unwrap_or("?");
                        let what = format!("`{}`: its export `{name}` is MetricFlow's to build; sqb builds nothing", saved.name);
                        self.entry(
                            &saved.original_file_path,
                            &id,
                            "saved query",
                            Carried::Partly,
                            what,
                        );
                    }
                    continue;
                }
                Err(why) => format!("`{}` {why}", saved.name),
            };
            self.entry(
                &saved.original_file_path,
                &id,
                "saved query",
                Carried::Not,
                what,
            );
        }
    }

    /// The saved query's file, or why it has none (a phrase after its name).
    fn saved_query(
        &self,
        layer: &Layer,
        pass: &Pass<'_>,
        saved: &SavedQueryNode,
    ) -> Result<String, String> {
        let file = format!("contracts/queries/{}.toml", saved.name);
        if let Some(why) = self.excluded(&file, "saved_query", &saved.name) {
            return Err(format!("is not carried: {why}"));
        }
        let params = &saved.query_params;
        let limit = match params.get("limit").filter(|l| !l.is_null()) {
            None => None,
            Some(l) => Some(
                l.as_u64()
                    .ok_or_else(|| format!("has a `limit` of {l}, which is no row count"))?,
            ),
        };
        let metrics: Vec<String> = strings(params.get("metrics"));
        if metrics.is_empty() {
            return Err("asks for no metric".into());
        }
        for m in &metrics {
            match pass.fates.get(m) {
                Some(Ok(())) => {}
                Some(Err(why)) => {
                    return Err(format!(
                        "asks for metric `{m}`, which is not carried: {why}"
                    ))
                }
                None => {
                    return Err(format!(
                        "asks for metric `{m}`, which the project does not define"
                    ))
                }
            }
        }
        let base = pass.base.get(&metrics[0]).map(|&i| &layer.models[i].1);
        let mut dimensions = Vec::new();
        for item in strings(params.get("group_by")) {
            dimensions.push(group_by(&item, base, layer)?);
        }
        let mut filters = Vec::new();
        let wheres = params
            .get("where")
            .and_then(|w| w.get("where_filters"))
            .and_then(Value::as_array);
        for filter in wheres.into_iter().flatten() {
            let template = filter
                .get("where_sql_template")
                .and_then(Value::as_str)
                .unwrap_or_default();
            filters.push(where_filter(template, base, layer)?);
        }
        let mut order_by = Vec::new();
        for item in strings(params.get("order_by")) {
            let ordered = order_item(&item, base, layer)?;
            let name = ordered.strip_prefix('-').unwrap_or(&ordered);
            if !metrics.iter().chain(&dimensions).any(|n| n == name) {
                return Err(format!("orders by `{item}`, which it does not ask for"));
            }
            order_by.push(ordered);
        }
        let mut doc = DocumentMut::new();
        doc.decor_mut().set_prefix(format!(
            "# MetricFlow's saved query `{}` ({}), imported by `sqb import dbt`.\n",
            saved.name, saved.original_file_path
        ));
        doc.insert("name", saved.name.as_str().into());
        if let Some(d) = saved.description.as_deref().filter(|d| !d.is_empty()) {
            doc.insert("description", d.trim().into());
        }
        let array = |items: &[String]| crate::adopt::dbt::convert::string_array(items);
        doc.insert("metrics", array(&metrics).into());
        if !dimensions.is_empty() {
            doc.insert("dimensions", array(&dimensions).into());
        }
        if !filters.is_empty() {
            doc.insert("filters", array(&filters).into());
        }
        if !order_by.is_empty() {
            doc.insert("order_by", array(&order_by).into());
        }
        if let Some(limit) = limit.and_then(|l| i64::try_from(l).ok()) {
            doc.insert("limit", limit.into());
        }
        Ok(doc.to_string())
    }
}

fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

/// A group-by item (`Dimension('order_id__status')`, `TimeDimension('metric_time', 'month')`)
/// as the sqb dimension the query names.
fn group_by(
    item: &str,
    base: Option<&crate::adopt::dbt::manifest::SemanticModel>,
    layer: &Layer,
) -> Result<String, String> {
    let refused = || format!("groups by `{item}`, which sqb does not translate");
    let call = Call::parse(item.trim()).ok_or_else(refused)?;
    let mut grain = None;
    for (method, args) in &call.methods {
        match (method.as_str(), args.as_slice()) {
            ("grain", [g]) => grain = Some(g.clone()),
            _ => return Err(refused()),
        }
    }
    let name = match (call.function.as_str(), call.args.as_slice()) {
        // An entity of the metric's own semantic model: the dimension the import writes for it.
        ("Entity", [name]) if grain.is_none() && !name.contains("__") => {
            let own = base.is_some_and(|b| b.entities.iter().any(|e| e.name == *name));
            return match own {
                true => Ok(name.clone()),
                false => Err(refused()),
            };
        }
        ("Dimension", [name]) => name.clone(),
        ("TimeDimension", [name]) => name.clone(),
        ("TimeDimension", [name, g]) => {
            grain = Some(g.clone());
            name.clone()
        }
        _ => return Err(refused()),
    };
    dimension_name(&name, grain.as_deref(), base, layer)
        .map_err(|why| format!("groups by `{item}`: {why}"))
}

/// An `order_by` item (`Metric('revenue').descending(True)`, `Dimension('order_id__status')`)
/// as the output column it names, `-` first when descending.
fn order_item(
    item: &str,
    base: Option<&crate::adopt::dbt::manifest::SemanticModel>,
    layer: &Layer,
) -> Result<String, String> {
    let refused = || format!("orders by `{item}`, which sqb does not translate");
    let mut text = item.trim();
    let mut descending = false;
    for (suffix, desc) in [
        (".descending(True)", true),
        (".descending(true)", true),
        (".descending(False)", false),
        (".descending(false)", false),
    ] {
        if let Some(rest) = text.strip_suffix(suffix) {
            text = rest;
            descending = desc;
            break;
        }
    }
    let call = Call::parse(text).ok_or_else(refused)?;
    let name = match (call.function.as_str(), call.args.as_slice()) {
        ("Metric", [metric]) if call.methods.is_empty() && call.group_by.is_empty() => {
            metric.clone()
        }
        ("Metric", _) => return Err(refused()),
        _ => group_by(text, base, layer).map_err(|why| format!("orders by `{item}`: {why}"))?,
    };
    Ok(match descending {
        true => format!("-{name}"),
        false => name,
    })
}

/// The sqb dimension for MetricFlow's `entity__dimension` (or `metric_time`) read from the
/// semantic model `base`: its own dimension by name, or a joined model's as `entity.name`.
fn dimension_name(
    name: &str,
    grain: Option<&str>,
    base: Option<&crate::adopt::dbt::manifest::SemanticModel>,
    layer: &Layer,
) -> Result<String, String> {
    let base = base.ok_or("the metric's semantic model is unknown")?;
    let (path, dim) = match name {
        // Each metric's own time, as sqb's `metric_time` is.
        "metric_time" => {
            base.defaults
                .as_ref()
                .and_then(|d| d.get("agg_time_dimension"))
                .and_then(Value::as_str)
                .ok_or("`metric_time` needs the semantic model's `agg_time_dimension`")?;
            return Ok(match grain {
                Some(g) => format!("metric_time.{g}"),
                None => "metric_time".to_string(),
            });
        }
        _ => {
            let (entity, dim) = name
                .rsplit_once("__")
                .ok_or_else(|| format!("`{name}` names no entity"))?;
            if entity.contains("__") {
                return Err(
                    "a path over several joins, which sqb's dimension names do not spell".into(),
                );
            }
            let own = base
                .entities
                .iter()
                .any(|e| e.name == entity && e.kind != "foreign");
            match own {
                true => (None, dim.to_string()),
                false => (Some(entity.to_string()), dim.to_string()),
            }
        }
    };
    let owner = match &path {
        None => Some(base),
        Some(entity) => layer.models.iter().map(|(_, sm)| sm).find(|sm| {
            sm.entities
                .iter()
                .any(|e| e.name == *entity && (e.kind == "primary" || e.kind == "unique"))
        }),
    };
    let dimension = owner
        .and_then(|sm| sm.dimensions.iter().find(|d| d.name == dim))
        .ok_or_else(|| format!("no semantic model reached declares dimension `{dim}`"))?;
    let own_grain = dimension
        .type_params
        .as_ref()
        .and_then(|p| p.get("time_granularity"))
        .and_then(Value::as_str);
    let mut out = match path {
        Some(entity) => format!("{entity}.{dim}"),
        None => dim,
    };
    if let Some(g) = grain.filter(|g| Some(*g) != own_grain) {
        out = format!("{out}.{g}");
    }
    Ok(out)
}

/// A where filter over dimensions: each `{{ Dimension('entity__dim') }}`, `{{
/// TimeDimension('metric_time', 'day') }}` (or `.grain('day')`) and `{{ Entity('own') }}` is the
/// sqb dimension's name, as a group-by item is; `{{ Metric('m', group_by=['e']) }}` is
/// `metric(m, e)`.
fn where_filter(
    template: &str,
    base: Option<&crate::adopt::dbt::manifest::SemanticModel>,
    layer: &Layer,
) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = template.trim();
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after.find("}}").ok_or_else(|| {
            format!("filters with `{template}`, which opens `{{{{` without closing it")
        })?;
        let inner = after[..end].trim();
        let call = Call::parse(inner)
            .filter(|c| matches!(c.function.as_str(), "Dimension" | "TimeDimension" | "Entity" | "Metric"))
            .ok_or_else(|| format!("filters with `{{{{ {inner} }}}}`, which sqb does not translate in a saved query"))?;
        let name = match call.function.as_str() {
            // A metric's value for an entity: `metric(name, entity)`, the entity as the
            // dimension the import writes for it.
            "Metric" => crate::semantic::filter::template::query_reference(&call),
            _ => group_by(inner, base, layer),
        }
        .map_err(|why| format!("filters with `{{{{ {inner} }}}}`: {why}"))?;
        out.push_str(&name);
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Ok(out)
}
