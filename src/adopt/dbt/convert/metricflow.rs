//! MetricFlow's semantic layer as sqb's: each semantic model's measures and dimensions on the
//! sidecar of the model it reads, its foreign entities as joins to the models whose primary
//! entity they name, and simple and ratio metrics as bindings in `contracts/metrics/`. What has
//! no sqb form (other aggregations and metric types, Jinja filters, expressions as dimensions)
//! is reported.

use serde_json::Value;
use toml_edit::{InlineTable, Table};

use super::{Importer, Target};
use crate::adopt::dbt::manifest::{Metric, SemanticModel};
use crate::adopt::dbt::{Carried, ColumnOut};

/// MetricFlow's aggregations that sqb's measures have, and their sqb names.
fn aggregation(agg: &str) -> Option<&'static str> {
    Some(match agg {
        "sum" => "sum",
        "count" => "count",
        "count_distinct" => "count_distinct",
        "average" => "avg",
        "min" => "min",
        "max" => "max",
        _ => return None,
    })
}

const GRANULARITIES: &[&str] = &["hour", "day", "week", "month", "quarter", "year"];

/// Whether an expression is a plain column name.
fn column_name(expr: &str) -> Option<&str> {
    let e = expr.trim();
    let plain = e
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && e.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    plain.then_some(e)
}

impl Importer<'_> {
    /// A MetricFlow metric that is not bound, and why.
    fn metric_not_carried(&mut self, file: &str, id: &str, what: String) {
        self.entry(file, id, "metric", Carried::Not, what);
    }

    /// Carries every semantic model and metric over, or reports it.
    pub(in crate::adopt::dbt) fn carry_semantic_layer(&mut self) {
        let models = self.manifest.semantic_models.clone();
        let mut primary: Vec<(String, usize, String)> = Vec::new();
        for (_, sm) in &models {
            if let Some(i) = self.semantic_target(sm) {
                for entity in sm
                    .entities
                    .iter()
                    .filter(|e| e.kind == "primary" || e.kind == "unique")
                {
                    let column = entity.expr.clone().unwrap_or_else(|| entity.name.clone());
                    primary.push((entity.name.clone(), i, column));
                }
            }
        }
        for (id, sm) in &models {
            let Some(i) = self.semantic_target(sm) else {
                self.semantic_entry(
                    id,
                    sm,
                    Carried::Not,
                    format!(
                        "`{}` reads a resource the import does not write as a model",
                        sm.name
                    ),
                );
                continue;
            };
            self.measures(id, sm, i);
            self.dimensions(id, sm, i);
            self.joins(id, sm, i, &primary);
        }
        let metrics = self.manifest.metrics.clone();
        for (id, metric) in &metrics {
            self.metric(id, metric, &models);
        }
    }

    fn semantic_target(&self, sm: &SemanticModel) -> Option<usize> {
        sm.depends_on
            .nodes
            .iter()
            .find_map(|n| match self.targets.get(n) {
                Some(Target::Model(i)) => Some(*i),
                _ => None,
            })
    }

    /// What became of part of the semantic model `sm` (`id` in the manifest).
    fn semantic_entry(&mut self, id: &str, sm: &SemanticModel, carried: Carried, detail: String) {
        self.entry(
            &sm.original_file_path,
            id,
            "semantic model",
            carried,
            detail,
        );
    }

    /// The model's declared column `name`, declared (without a type) if the YAML did not.
    fn ensure_column(&mut self, model: usize, name: &str) {
        let columns = &mut self.models[model].columns;
        if !columns.iter().any(|c| c.name.eq_ignore_ascii_case(name)) {
            columns.push(ColumnOut {
                name: name.to_string(),
                ..ColumnOut::default()
            });
        }
    }

    fn measures(&mut self, id: &str, sm: &SemanticModel, model: usize) {
        for measure in &sm.measures {
            let Some(agg) = aggregation(&measure.agg) else {
                self.semantic_entry(
                    id,
                    sm,
                    Carried::Not,
                    format!(
                        "measure `{}`: the `{}` aggregation has no sqb measure",
                        measure.name, measure.agg
                    ),
                );
                continue;
            };
            let mut table = Table::new();
            table.insert("agg", agg.into());
            match &measure.expr {
                None | Some(Value::Null) => {
                    table.insert("column", measure.name.as_str().into());
                    self.ensure_column(model, &measure.name);
                }
                Some(Value::String(e)) => match column_name(e) {
                    Some(column) => {
                        table.insert("column", column.into());
                        self.ensure_column(model, column);
                    }
                    None => {
                        table.insert("expr", e.as_str().into());
                    }
                },
                Some(other) if agg == "count" => {
                    // `expr: 1` counts rows.
                    let _ = other;
                }
                Some(other) => {
                    table.insert("expr", other.to_string().into());
                }
            }
            if measure
                .non_additive_dimension
                .as_ref()
                .is_some_and(|v| !v.is_null())
            {
                self.semantic_entry(id, sm, Carried::Partly, format!("measure `{}` is non-additive over a dimension: carried as a plain measure; bind a `semi_additive` metric to collapse it", measure.name));
            }
            self.models[model]
                .semantic
                .push(("measures", measure.name.clone(), table));
        }
    }

    fn dimensions(&mut self, id: &str, sm: &SemanticModel, model: usize) {
        for dimension in &sm.dimensions {
            let column = dimension
                .expr
                .as_deref()
                .map_or(Some(dimension.name.as_str()), column_name);
            let Some(column) = column.map(str::to_string) else {
                self.semantic_entry(id, sm, Carried::Not, format!("dimension `{}` is an expression; a sqb dimension reads a column (compute it in the model)", dimension.name));
                continue;
            };
            let mut table = Table::new();
            if column != dimension.name {
                table.insert("column", column.as_str().into());
            }
            if dimension.kind == "time" {
                let grain = dimension
                    .type_params
                    .as_ref()
                    .and_then(|p| p.get("time_granularity"))
                    .and_then(Value::as_str);
                if let Some(g) = grain.filter(|g| GRANULARITIES.contains(g)) {
                    table.insert("granularity", g.into());
                }
            }
            self.ensure_column(model, &column);
            self.models[model]
                .semantic
                .push(("dimensions", dimension.name.clone(), table));
        }
    }

    /// A foreign entity joins the model whose primary entity has its name.
    fn joins(
        &mut self,
        id: &str,
        sm: &SemanticModel,
        model: usize,
        primary: &[(String, usize, String)],
    ) {
        for entity in sm.entities.iter().filter(|e| e.kind == "foreign") {
            let Some((_, target, remote)) = primary
                .iter()
                .find(|(name, i, _)| *name == entity.name && *i != model)
            else {
                self.semantic_entry(id, sm, Carried::Not, format!("foreign entity `{}` names no primary entity of another semantic model: no join", entity.name));
                continue;
            };
            let local = entity.expr.clone().unwrap_or_else(|| entity.name.clone());
            if column_name(&local).is_none() {
                self.semantic_entry(
                    id,
                    sm,
                    Carried::Not,
                    format!(
                        "foreign entity `{}` is an expression; a sqb join compares columns",
                        entity.name
                    ),
                );
                continue;
            }
            let mut on = InlineTable::new();
            on.insert(&local, remote.as_str().into());
            let mut table = Table::new();
            table.insert("to", self.models[*target].name.as_str().into());
            table.insert("on", toml_edit::Value::InlineTable(on).into());
            table.insert("relationship", "many_to_one".into());
            self.ensure_column(model, &local);
            self.models[model]
                .semantic
                .push(("joins", entity.name.clone(), table));
        }
    }

    /// Simple and ratio metrics become bindings; the others are reported.
    fn metric(&mut self, id: &str, metric: &Metric, models: &[(String, SemanticModel)]) {
        let file = metric.original_file_path.clone();
        let name_of = |v: &Value| -> Option<String> {
            v.get("name")
                .and_then(Value::as_str)
                .map(str::to_string)
                .or_else(|| v.as_str().map(str::to_string))
        };
        // A filter is MetricFlow's Jinja (`{{ Dimension('order__status') }}`), not SQL: bound
        // without it, the metric would be another one.
        let filtered = |v: Option<&Value>| {
            v.and_then(|v| v.get("filter"))
                .is_some_and(|f| !f.is_null())
        };
        let params = &metric.type_params;
        if metric.filter.as_ref().is_some_and(|f| !f.is_null())
            || ["measure", "numerator", "denominator"]
                .iter()
                .any(|k| filtered(params.get(*k)))
        {
            self.metric_not_carried(&file, id, format!("`{}` has a filter, written in MetricFlow's Jinja rather than SQL: not bound; bind it by hand with a `population_filter`", metric.name));
            return;
        }
        let mut canonical = Table::new();
        match metric.kind.as_str() {
            "simple" => {
                let Some(measure) = metric.type_params.get("measure").and_then(name_of) else {
                    self.metric_not_carried(
                        &file,
                        id,
                        format!("`{}` names no measure", metric.name),
                    );
                    return;
                };
                let owner = models
                    .iter()
                    .find(|(_, sm)| sm.measures.iter().any(|m| m.name == measure));
                let Some(model) = owner.and_then(|(_, sm)| self.semantic_target(sm)) else {
                    self.metric_not_carried(&file, id, format!("`{}` reads measure `{measure}`, which no imported semantic model declares", metric.name));
                    return;
                };
                canonical.insert("kind", "single".into());
                canonical.insert("source", self.models[model].name.as_str().into());
                canonical.insert("measure", measure.as_str().into());
            }
            "ratio" => {
                let part = |key: &str| metric.type_params.get(key).and_then(name_of);
                let (Some(numerator), Some(denominator)) = (part("numerator"), part("denominator"))
                else {
                    self.metric_not_carried(
                        &file,
                        id,
                        format!("`{}` is a ratio without both parts", metric.name),
                    );
                    return;
                };
                canonical.insert("kind", "ratio".into());
                canonical.insert("numerator", numerator.as_str().into());
                canonical.insert("denominator", denominator.as_str().into());
            }
            other => {
                self.metric_not_carried(
                    &file,
                    id,
                    format!(
                        "`{}` is a `{other}` metric, which sqb's bindings do not express",
                        metric.name
                    ),
                );
                return;
            }
        }
        let mut doc = toml_edit::DocumentMut::new();
        doc.decor_mut().set_prefix(format!(
            "# MetricFlow's metric `{}` ({}), imported by `sqb import dbt`.\n",
            metric.name, file
        ));
        doc.insert("metric", metric.name.as_str().into());
        if let Some(label) = &metric.label {
            doc.insert("label", label.as_str().into());
        }
        canonical.decor_mut().set_prefix("\n");
        doc.insert("canonical", toml_edit::Item::Table(canonical));
        self.metric_files.push((
            format!("contracts/metrics/{}.toml", metric.name),
            doc.to_string(),
        ));
    }
}
