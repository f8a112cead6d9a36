//! MetricFlow's semantic layer as sqb's: each semantic model's measures and dimensions on the
//! sidecar of the model it reads, its foreign entities as joins to the models whose primary
//! entity they name, and metrics as bindings in `contracts/metrics/` (`metrics`), their
//! Jinja filters translated to population filters (`filters`).
//!
//! What has no sqb form is reported, and so is everything that reads it: a metric on a measure
//! that was not carried is not carried either, and its entry names the chain. Nothing is
//! written that `sqb compile` would reject, so the import always compiles.

mod filters;
mod metrics;
mod saved;

use std::collections::HashMap;

use serde_json::Value;
use toml_edit::{InlineTable, Table};

use super::{Importer, Target};
use crate::adopt::dbt::manifest::{SemanticMeasure, SemanticModel};
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
        "sum_boolean" => "sum_boolean",
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

/// What became of one MetricFlow measure.
#[derive(Debug, Clone)]
enum Fate {
    /// A sqb measure of the same name on the model.
    Measure { model: usize },
    /// A quantile of a column, which sqb binds as a `percentile` metric.
    Percentile {
        model: usize,
        column: String,
        quantile: f64,
        discrete: bool,
        /// MetricFlow's `use_approximate_percentile` (DuckDB's `approx_quantile`).
        approximate: bool,
    },
    /// Not carried, and why.
    Dropped(String),
}

/// The semantic layer as the import sees it while it carries it over.
struct Layer {
    models: Vec<(String, SemanticModel)>,
    /// Measure name → the index of its semantic model in `models`, and its fate.
    measures: HashMap<String, (usize, Fate)>,
    /// Primary (and unique) entities: name, model index, column.
    primary: Vec<(String, usize, String)>,
}

impl Layer {
    fn measure(&self, name: &str) -> Option<(&SemanticModel, &SemanticMeasure, &Fate)> {
        let (sm, fate) = self.measures.get(name)?;
        let model = &self.models[*sm].1;
        let measure = model.measures.iter().find(|m| m.name == name)?;
        Some((model, measure, fate))
    }
}

impl Importer<'_> {
    /// Carries every semantic model and metric over, or reports it.
    pub(in crate::adopt::dbt) fn carry_semantic_layer(&mut self) {
        self.carry_time_spine();
        let models = self.manifest.semantic_models.clone();
        let mut layer = Layer {
            primary: Vec::new(),
            measures: HashMap::new(),
            models: Vec::new(),
        };
        for (_, sm) in &models {
            if let Some(i) = self.semantic_target(sm) {
                for entity in sm
                    .entities
                    .iter()
                    .filter(|e| e.kind == "primary" || e.kind == "unique")
                {
                    let column = entity.expr.clone().unwrap_or_else(|| entity.name.clone());
                    if column_name(&column).is_some() {
                        layer.primary.push((entity.name.clone(), i, column));
                    }
                }
            }
        }
        for (index, (id, sm)) in models.iter().enumerate() {
            let Some(i) = self.semantic_target(sm) else {
                let why = format!(
                    "`{}` reads a resource the import does not write as a model",
                    sm.name
                );
                for measure in &sm.measures {
                    let fate = Fate::Dropped(format!("its semantic model {why}"));
                    layer.measures.insert(measure.name.clone(), (index, fate));
                }
                self.semantic_entry(id, sm, Carried::Not, why);
                continue;
            };
            for measure in &sm.measures {
                let fate = self.measure(id, sm, measure, i);
                layer.measures.insert(measure.name.clone(), (index, fate));
            }
            self.dimensions(id, sm, i);
            for (measure, why) in self.agg_times(id, sm, i) {
                layer.measures.insert(measure, (index, Fate::Dropped(why)));
            }
            self.joins(id, sm, i, &layer.primary);
        }
        self.settle_agg_times(&models);
        layer.models = models;
        let pass = self.carry_metrics(&layer);
        self.carry_saved_queries(&layer, &pass);
    }

    /// The project's time spine: the model with dbt's `time_spine:` property (its
    /// `standard_granularity_column`), else the legacy `metricflow_time_spine` model's
    /// `date_day`, as `time_spine = { column = … }` on its sidecar.
    fn carry_time_spine(&mut self) {
        let nodes = &self.manifest.nodes;
        let declared = nodes.iter().find_map(|n| {
            let column = n
                .time_spine
                .as_ref()?
                .get("standard_granularity_column")?
                .as_str()?;
            Some((n, column.to_string()))
        });
        let legacy = || {
            nodes
                .iter()
                .find(|n| n.resource_type == "model" && n.name == "metricflow_time_spine")
                .map(|n| (n, "date_day".to_string()))
        };
        let Some((node, column)) = declared.or_else(legacy) else {
            return;
        };
        let Some(Target::Model(model)) = self.targets.get(&node.unique_id).cloned() else {
            return;
        };
        if column_name(&column).is_none() {
            return;
        }
        let grain = node
            .columns
            .iter()
            .find(|(name, _)| *name == column)
            .and_then(|(_, c)| c.granularity.clone())
            .filter(|g| GRANULARITIES.contains(&g.as_str()));
        let mut spine = InlineTable::new();
        spine.insert("column", column.as_str().into());
        if let Some(g) = grain.filter(|g| g != "day") {
            spine.insert("granularity", g.as_str().into());
        }
        self.ensure_column(model, &column);
        let customs = self.custom_granularities(node, model);
        if !customs.is_empty() {
            spine.insert(
                "custom_granularities",
                toml_edit::Value::InlineTable(customs),
            );
        }
        self.models[model]
            .props
            .push(("time_spine", toml_edit::Value::InlineTable(spine)));
    }

    /// The time spine's `custom_granularities` (name → column; `column_name` defaults to the
    /// name), each column declared on the model.
    fn custom_granularities(
        &mut self,
        node: &crate::adopt::dbt::manifest::Node,
        model: usize,
    ) -> InlineTable {
        let mut customs = InlineTable::new();
        let listed = node
            .time_spine
            .as_ref()
            .and_then(|t| t.get("custom_granularities"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for custom in &listed {
            let Some(name) = custom.get("name").and_then(Value::as_str) else {
                continue;
            };
            let column = custom
                .get("column_name")
                .and_then(Value::as_str)
                .unwrap_or(name);
            let usable = column_name(column).is_some()
                && !GRANULARITIES.contains(&name)
                && !customs.contains_key(name);
            if !usable {
                let what = format!("custom granularity `{name}` of the time spine: its column `{column}` is no column sqb reads, or its name is a standard grain's or taken");
                let path = node
                    .patch_path
                    .clone()
                    .unwrap_or_else(|| node.original_file_path.clone());
                self.entry(&path, &node.unique_id, "model", Carried::Partly, what);
                continue;
            }
            self.ensure_column(model, column);
            customs.insert(name, column.into());
        }
        customs
    }

    /// Whether the import carries a time spine.
    pub(super) fn has_time_spine(&self) -> bool {
        self.models
            .iter()
            .any(|m| m.props.iter().any(|(k, _)| *k == "time_spine"))
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

    /// The model's declared column `name`, declared (without a type) if the YAML did not:
    /// MetricFlow reads it, so the model has it.
    fn ensure_column(&mut self, model: usize, name: &str) {
        let columns = &mut self.models[model].columns;
        if !columns.iter().any(|c| c.name.eq_ignore_ascii_case(name)) {
            columns.push(ColumnOut {
                name: name.to_string(),
                ..ColumnOut::default()
            });
        }
    }

    /// The columns an expression MetricFlow reads names, declared on the model (without a type)
    /// where the YAML did not: the model has them.
    fn expression_columns(&mut self, model: usize, expr: &str) {
        let Ok(parsed) = crate::semantic::predicate::parse_for(self.engine, expr) else {
            return;
        };
        for parts in crate::semantic::predicate::column_refs(&parsed) {
            if let Some(column) = parts.last() {
                self.ensure_column(model, column);
            }
        }
    }

    /// The sidecar file of model `model`.
    fn sidecar_of(&self, model: usize) -> String {
        format!("{}.toml", self.models[model].path)
    }

    /// Writes measure `measure` as a sqb measure, or says why it cannot be one.
    fn measure(
        &mut self,
        id: &str,
        sm: &SemanticModel,
        measure: &SemanticMeasure,
        model: usize,
    ) -> Fate {
        let dropped = |this: &mut Self, why: String| {
            this.semantic_entry(
                id,
                sm,
                Carried::Not,
                format!("measure `{}`: {why}", measure.name),
            );
            Fate::Dropped(why)
        };
        if let Some(why) = self.excluded(&self.sidecar_of(model), "measures", &measure.name) {
            return dropped(self, why);
        }
        if matches!(measure.agg.as_str(), "median" | "percentile") {
            // A percentile binding is in its relation's time: the sidecar's, or the one this
            // semantic model is about to give it.
            let own = measure.agg_time_dimension.as_deref().or(sm_time(sm));
            let relation = self.relation_time(model);
            let relation = relation.as_deref().or(sm_time(sm));
            if let Some(own) = own.filter(|t| Some(*t) != relation) {
                let why = format!("a `{}` in a time of its own (`{own}`): sqb's percentile binding is in its relation's time", measure.agg);
                return dropped(self, why);
            }
            return match percentile(measure, self.engine) {
                Ok((column, quantile, discrete, approximate)) => {
                    self.ensure_column(model, &column);
                    let what = format!("measure `{}` is a `{}`: not a sqb measure, but each metric that reads it is a `percentile` binding of `{column}`", measure.name, measure.agg);
                    self.semantic_entry(id, sm, Carried::Partly, what);
                    Fate::Percentile {
                        model,
                        column,
                        quantile,
                        discrete,
                        approximate,
                    }
                }
                Err(why) => dropped(self, why),
            };
        }
        let Some(agg) = aggregation(&measure.agg) else {
            let why = format!("the `{}` aggregation has no sqb measure", measure.agg);
            return dropped(self, why);
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
            // `expr: 1` counts rows.
            Some(_) if agg == "count" => {}
            Some(other) => {
                table.insert("expr", other.to_string().into());
            }
        }
        self.models[model]
            .semantic
            .push(("measures", measure.name.clone(), table));
        Fate::Measure { model }
    }

    fn dimensions(&mut self, id: &str, sm: &SemanticModel, model: usize) {
        for dimension in &sm.dimensions {
            if let Some(why) = self.excluded(&self.sidecar_of(model), "dimensions", &dimension.name)
            {
                self.semantic_entry(
                    id,
                    sm,
                    Carried::Not,
                    format!("dimension `{}`: {why}", dimension.name),
                );
                continue;
            }
            let column = dimension
                .expr
                .as_deref()
                .map_or(Some(dimension.name.as_str()), column_name)
                .map(str::to_string);
            let mut table = Table::new();
            match (&column, dimension.expr.as_deref()) {
                (Some(c), _) if *c != dimension.name => {
                    table.insert("column", c.as_str().into());
                }
                (Some(_), _) => {}
                (None, Some(expr)) => {
                    self.expression_columns(model, expr);
                    table.insert("expr", expr.trim().into());
                }
                (None, None) => unreachable!("a dimension without an expr reads its name"),
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
            if let Some(column) = &column {
                self.ensure_column(model, column);
            }
            self.models[model]
                .semantic
                .push(("dimensions", dimension.name.clone(), table));
        }
        self.entity_dimensions(sm, model);
    }

    /// Each entity of the semantic model as a dimension of its column, so that it can be
    /// grouped by as MetricFlow groups by an entity (`customer`, `order_id__customer`): the
    /// measure's own rows' value, no join. Not where a dimension of that name is already on
    /// the sidecar (another semantic model's, or a dimension of this one).
    fn entity_dimensions(&mut self, sm: &SemanticModel, model: usize) {
        for entity in &sm.entities {
            let taken = self.models[model]
                .semantic
                .iter()
                .any(|(kind, n, _)| *kind == "dimensions" && n == &entity.name);
            if taken {
                continue;
            }
            let expr = entity.expr.as_deref().unwrap_or(&entity.name);
            let mut table = Table::new();
            match column_name(expr) {
                Some(column) => {
                    if column != entity.name {
                        table.insert("column", column.into());
                    }
                    self.ensure_column(model, column);
                }
                None => {
                    self.expression_columns(model, expr);
                    table.insert("expr", expr.trim().into());
                }
            }
            self.models[model]
                .semantic
                .push(("dimensions", entity.name.clone(), table));
        }
    }

    /// `metric_time` for the semantic model's measures: its `defaults.agg_time_dimension` as the
    /// sidecar's `agg_time_dimension` (unless another semantic model of the same dbt model set
    /// it first), a measure's own time on the measure where it is not the sidecar's, each only
    /// when that time dimension was carried; else the report says `metric_time` is not. A
    /// measure whose own time was not carried, on a sidecar with a time, is taken back (sqb
    /// would answer `metric_time` in the sidecar's): its name and why.
    fn agg_times(&mut self, id: &str, sm: &SemanticModel, model: usize) -> Vec<(String, String)> {
        let mut dropped = Vec::new();
        let default = sm_time(sm);
        if let (Some(time), None) = (default, self.relation_time(model)) {
            match self.time_carried(model, time) {
                true => self.models[model]
                    .props
                    .push(("agg_time_dimension", time.into())),
                false => {
                    let what = format!("`metric_time` of its measures: their `agg_time_dimension` `{time}` is not carried as a time dimension, so sqb refuses `metric_time` for them");
                    self.semantic_entry(id, sm, Carried::Partly, what);
                }
            }
        }
        let relation = self.relation_time(model);
        for measure in &sm.measures {
            let Some(own) = measure.agg_time_dimension.as_deref().or(default) else {
                continue;
            };
            if Some(own) == relation.as_deref() {
                continue;
            }
            let ok = self.time_carried(model, own);
            let table = self.models[model]
                .semantic
                .iter_mut()
                .rev()
                .find(|(kind, n, _)| *kind == "measures" && *n == measure.name);
            match (ok, table) {
                (true, Some((_, _, table))) => {
                    table.insert("agg_time_dimension", own.into());
                }
                // Said of the semantic model already: sqb refuses `metric_time` for it.
                (false, Some(_)) if relation.is_none() => {}
                (false, Some(_)) => {
                    let why = format!("its `agg_time_dimension` `{own}` is not carried as a time dimension, and sqb would answer `metric_time` for it in its model's `{}`", relation.as_deref().unwrap_or_default());
                    self.models[model]
                        .semantic
                        .retain(|(kind, n, _)| !(*kind == "measures" && *n == measure.name));
                    self.semantic_entry(
                        id,
                        sm,
                        Carried::Not,
                        format!("measure `{}`: {why}", measure.name),
                    );
                    dropped.push((measure.name.clone(), why));
                }
                // Not a sqb measure: a percentile in another time than its relation's was
                // dropped by `measure`.
                (_, None) => {}
            }
        }
        dropped
    }

    /// A sidecar's `agg_time_dimension` whose dimension another semantic model of the same dbt
    /// model redeclared without a grain (the last declaration is the one written) is taken
    /// back: sqb then refuses `metric_time` there rather than answer it in another time.
    fn settle_agg_times(&mut self, models: &[(String, SemanticModel)]) {
        for model in 0..self.models.len() {
            let Some(time) = self.relation_time(model) else {
                continue;
            };
            if self.time_carried(model, &time) {
                continue;
            }
            self.models[model]
                .props
                .retain(|(k, _)| *k != "agg_time_dimension");
            let setter = models.iter().find(|(_, sm)| {
                sm_time(sm) == Some(time.as_str()) && self.semantic_target(sm) == Some(model)
            });
            if let Some((id, sm)) = setter {
                let what = format!("`metric_time` of its measures: their `agg_time_dimension` `{time}` is declared again without a grain by another semantic model of the same model, so sqb refuses `metric_time` for them");
                self.semantic_entry(id, sm, Carried::Partly, what);
            }
        }
    }

    /// The sidecar's `agg_time_dimension`, once a semantic model of the dbt model set it.
    fn relation_time(&self, model: usize) -> Option<String> {
        self.models[model]
            .props
            .iter()
            .find(|(k, _)| *k == "agg_time_dimension")
            .and_then(|(_, v)| v.as_str().map(str::to_string))
    }

    /// Whether measure `name` of the model has a time: its own, or the sidecar's.
    pub(super) fn measure_in_time(&self, model: usize, name: &str) -> bool {
        let own = self.models[model].semantic.iter().any(|(kind, n, t)| {
            *kind == "measures" && n == name && t.contains_key("agg_time_dimension")
        });
        own || self.relation_time(model).is_some()
    }

    /// Whether dimension `name` is on the sidecar as a time dimension (the last table of that
    /// name is the one written).
    fn time_carried(&self, model: usize, name: &str) -> bool {
        self.models[model]
            .semantic
            .iter()
            .rev()
            .find(|(kind, n, _)| *kind == "dimensions" && n == name)
            .is_some_and(|(_, _, t)| t.contains_key("granularity"))
    }

    /// A foreign entity joins each model whose primary entity has its name, on the columns the
    /// two entities name (both declared on their models: MetricFlow reads them). The first
    /// join is named for the entity; a further one for its model, with `entity` saying which
    /// entity it reaches, so that `entity.dimension` resolves through whichever model holds
    /// the dimension, as MetricFlow does.
    fn joins(
        &mut self,
        id: &str,
        sm: &SemanticModel,
        model: usize,
        primary: &[(String, usize, String)],
    ) {
        for entity in sm.entities.iter().filter(|e| e.kind == "foreign") {
            let not = |this: &mut Self, why: String| {
                let what = format!("foreign entity `{}` {why}", entity.name);
                this.semantic_entry(id, sm, Carried::Not, what);
            };
            let targets: Vec<(usize, String)> = primary
                .iter()
                .filter(|(name, i, _)| *name == entity.name && *i != model)
                .map(|(_, i, remote)| (*i, remote.clone()))
                .collect();
            if targets.is_empty() {
                not(
                    self,
                    "names no primary entity of another semantic model: no join".into(),
                );
                continue;
            }
            let local = entity.expr.clone().unwrap_or_else(|| entity.name.clone());
            if column_name(&local).is_none() {
                not(self, "is an expression; a sqb join compares columns".into());
                continue;
            }
            for (n, (target, remote)) in targets.iter().enumerate() {
                let target_name = self.models[*target].name.clone();
                let alias = match n {
                    0 => entity.name.clone(),
                    _ => target_name.clone(),
                };
                if let Some(why) = self.excluded(&self.sidecar_of(model), "joins", &alias) {
                    not(self, format!("is not joined to `{target_name}`: {why}"));
                    continue;
                }
                let taken = self.models[model]
                    .semantic
                    .iter()
                    .any(|(kind, name, _)| *kind == "joins" && *name == alias);
                if taken {
                    not(
                        self,
                        format!("is not joined to `{target_name}`: the sidecar has a join named `{alias}` already"),
                    );
                    continue;
                }
                let mut on = InlineTable::new();
                on.insert(&local, remote.as_str().into());
                let mut table = Table::new();
                table.insert("to", target_name.as_str().into());
                table.insert("on", toml_edit::Value::InlineTable(on).into());
                table.insert("relationship", "many_to_one".into());
                if n > 0 {
                    table.insert("entity", entity.name.as_str().into());
                }
                self.ensure_column(model, &local);
                self.ensure_column(*target, remote);
                self.models[model].semantic.push(("joins", alias, table));
            }
        }
    }
}

/// A `median` or `percentile` measure as sqb's percentile: its column, quantile and whether it
/// is discrete.
fn percentile(
    measure: &SemanticMeasure,
    engine: crate::engine::Engine,
) -> Result<(String, f64, bool, bool), String> {
    let params = measure.agg_params.as_ref().filter(|p| !p.is_null());
    let flag = |key: &str| {
        params
            .and_then(|p| p.get(key))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    };
    let approximate = flag("use_approximate_percentile");
    if approximate && flag("use_discrete_percentile") {
        return Err(
            "an approximate discrete percentile, which MetricFlow computes on no engine sqb reads"
                .into(),
        );
    }
    if approximate
        && crate::engine_rules::of(engine)
            .approximate_percentile("x", "0.5")
            .is_none()
    {
        return Err(format!(
            "an approximate percentile, which {engine} does not compute (nor MetricFlow on it)"
        ));
    }
    let quantile = match measure.agg.as_str() {
        "median" => 0.5,
        _ => match params
            .and_then(|p| p.get("percentile"))
            .and_then(Value::as_f64)
        {
            Some(q) if q > 0.0 && q < 1.0 => q,
            Some(q) => {
                return Err(format!(
                    "the percentile {q} is not strictly between 0 and 1"
                ))
            }
            None => return Err("a percentile without `agg_params.percentile`".into()),
        },
    };
    let column = match &measure.expr {
        None | Some(Value::Null) => Some(measure.name.clone()),
        Some(Value::String(e)) => column_name(e).map(str::to_string),
        Some(_) => None,
    };
    let Some(column) = column else {
        return Err(format!(
            "a `{}` of an expression; sqb's percentile reads a column (compute it in the model)",
            measure.agg
        ));
    };
    Ok((
        column,
        quantile,
        flag("use_discrete_percentile"),
        approximate,
    ))
}

/// How a non-additive measure collapses, in sqb's terms: its `non_additive_dimension`, the
/// point it keeps (`max` is `last`, `min` is `first`) and the columns of its window groupings.
pub(super) struct Collapse {
    pub dimension: String,
    pub agg: &'static str,
    pub groupings: Vec<String>,
}

impl Importer<'_> {
    /// A non-additive measure's collapse, when sqb's `semi_additive` under `collapse_groupings`
    /// computes exactly what MetricFlow does; else why not.
    pub(super) fn collapse(
        &mut self,
        sm: &SemanticModel,
        measure: &SemanticMeasure,
        model: usize,
    ) -> Result<Option<Collapse>, String> {
        let Some(spec) = measure
            .non_additive_dimension
            .as_ref()
            .filter(|v| !v.is_null())
        else {
            return Ok(None);
        };
        let name = spec.get("name").and_then(Value::as_str).unwrap_or_default();
        let grain_of = |this: &Self, dimension: &str| {
            this.models[model]
                .semantic
                .iter()
                .rev()
                .find(|(kind, n, _)| *kind == "dimensions" && n == dimension)
                .and_then(|(_, _, t)| t.get("granularity")?.as_str().map(str::to_string))
        };
        let non_additive = format!("non-additive over `{name}`");
        let Some(grain) = grain_of(self, name) else {
            return Err(format!(
                "{non_additive}, which is not carried as a time dimension"
            ));
        };
        let time = measure.agg_time_dimension.as_deref().or_else(|| {
            sm.defaults
                .as_ref()
                .and_then(|d| d.get("agg_time_dimension"))
                .and_then(Value::as_str)
        });
        // MetricFlow picks the point at the grain of the measure's agg time dimension.
        if time.and_then(|t| grain_of(self, t)).as_deref() != Some(grain.as_str()) {
            return Err(format!(
                "{non_additive}, whose grain is not that of its agg time dimension"
            ));
        }
        let agg = match spec.get("window_choice").and_then(Value::as_str) {
            Some("max") => "last",
            Some("min") => "first",
            other => {
                return Err(format!(
                    "{non_additive} by `{}`, which sqb does not collapse by",
                    other.unwrap_or("nothing")
                ))
            }
        };
        let mut groupings = Vec::new();
        let entities = spec.get("window_groupings").and_then(Value::as_array);
        for entity in entities.into_iter().flatten() {
            let entity = entity.as_str().unwrap_or_default();
            let column = sm
                .entities
                .iter()
                .find(|e| e.name == entity)
                .map(|e| e.expr.clone().unwrap_or_else(|| e.name.clone()));
            let Some(column) = column.filter(|c| column_name(c).is_some()) else {
                return Err(format!(
                    "{non_additive} within entity `{entity}`, which is no column of its semantic model"
                ));
            };
            self.ensure_column(model, &column);
            groupings.push(column);
        }
        Ok(Some(Collapse {
            dimension: name.to_string(),
            agg,
            groupings,
        }))
    }
}

/// A semantic model's `defaults.agg_time_dimension`.
fn sm_time(sm: &SemanticModel) -> Option<&str> {
    sm.defaults
        .as_ref()
        .and_then(|d| d.get("agg_time_dimension"))
        .and_then(Value::as_str)
}
