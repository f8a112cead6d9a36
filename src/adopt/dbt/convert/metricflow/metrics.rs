//! MetricFlow's metrics as sqb bindings, in the order their inputs allow: a metric is bound
//! only when everything it reads was carried, and otherwise its entry says which input was not
//! and why, down the chain (`share` reads metric `revenue`, which is not carried: `revenue`
//! reads measure `price_median`, which …).

use std::collections::HashMap;

use serde_json::Value;
use toml_edit::{DocumentMut, Table};

use super::filters::{self, Scope};
use super::{non_additive, Fate, Layer};
use crate::adopt::dbt::convert::Importer;
use crate::adopt::dbt::manifest::Metric;
use crate::adopt::dbt::Carried;

/// The metrics' fates while they are bound: a binding, or the sentence saying why not.
pub(super) struct Pass<'l> {
    layer: &'l Layer,
    metrics: Vec<(String, Metric)>,
    pub fates: HashMap<String, Result<(), String>>,
    /// Each bound metric's semantic model (index into the layer's): its measure's, or its
    /// first input's.
    pub base: HashMap<String, usize>,
    /// The metrics being bound, innermost last: a metric that reads itself is a cycle.
    stack: Vec<String>,
}

/// A metric's input: the measure or metric it names, and what MetricFlow says about it.
struct Input<'v> {
    name: String,
    spec: Option<&'v Value>,
}

impl<'v> Input<'v> {
    fn of(value: Option<&'v Value>) -> Option<Self> {
        let value = value?;
        if let Some(name) = value.as_str() {
            return Some(Self {
                name: name.to_string(),
                spec: None,
            });
        }
        let name = value.get("name")?.as_str()?.to_string();
        Some(Self {
            name,
            spec: Some(value),
        })
    }

    fn get(&self, key: &str) -> Option<&'v Value> {
        self.spec?.get(key).filter(|v| !v.is_null())
    }

    fn filter(&self) -> Option<&'v Value> {
        self.get("filter")
    }
}

impl Importer<'_> {
    /// Binds every metric whose inputs were carried, and reports the others.
    pub(super) fn carry_metrics<'l>(&mut self, layer: &'l Layer) -> Pass<'l> {
        let mut pass = Pass {
            layer,
            metrics: self.manifest.metrics.clone(),
            fates: HashMap::new(),
            base: HashMap::new(),
            stack: Vec::new(),
        };
        for i in 0..pass.metrics.len() {
            let name = pass.metrics[i].1.name.clone();
            let _ = self.resolve(&mut pass, &name);
        }
        pass
    }

    /// Metric `name` bound (once), or the sentence that says why it is not.
    fn resolve(&mut self, pass: &mut Pass<'_>, name: &str) -> Result<(), String> {
        if let Some(fate) = pass.fates.get(name) {
            return fate.clone();
        }
        let Some(index) = pass.metrics.iter().position(|(_, m)| m.name == name) else {
            return Err(format!("no metric of the project is named `{name}`"));
        };
        if pass.stack.iter().any(|n| n == name) {
            return Err(format!("`{name}` reads itself"));
        }
        pass.stack.push(name.to_string());
        let (id, metric) = pass.metrics[index].clone();
        let result = self.bind(pass, &metric);
        pass.stack.pop();
        let fate = match result {
            Ok(canonical) => {
                self.write_binding(&metric, canonical);
                Ok(())
            }
            Err(why) => {
                let what = format!("`{name}` {why}");
                self.entry(
                    &metric.original_file_path,
                    &id,
                    "metric",
                    Carried::Not,
                    what.clone(),
                );
                Err(what)
            }
        };
        pass.fates.insert(name.to_string(), fate.clone());
        fate
    }

    /// The `[canonical]` table of `metric`, or why it has none (a phrase after its name).
    fn bind(&mut self, pass: &mut Pass<'_>, metric: &Metric) -> Result<Table, String> {
        let file = format!("contracts/metrics/{}.toml", metric.name);
        if let Some(why) = self.excluded(&file, "metric", &metric.name) {
            return Err(format!("is not carried: {why}"));
        }
        match metric.kind.as_str() {
            "simple" => self.simple(pass, metric),
            "ratio" => self.ratio(pass, metric),
            "derived" => self.derived(pass, metric),
            other => Err(format!(
                "is a `{other}` metric, which sqb's bindings do not express"
            )),
        }
    }

    fn simple(&mut self, pass: &mut Pass<'_>, metric: &Metric) -> Result<Table, String> {
        let Some(input) = Input::of(metric.type_params.get("measure")) else {
            return Err("names no measure".into());
        };
        let m = &input.name;
        if input.get("join_to_timespine").and_then(Value::as_bool) == Some(true) {
            return Err(format!("joins measure `{m}` to the time spine, so that days without data are rows; sqb's bindings have no time spine"));
        }
        if let Some(fill) = input.get("fill_nulls_with") {
            return Err(format!(
                "fills measure `{m}`'s empty groups with {fill}; sqb's bindings leave them out"
            ));
        }
        if let Some((index, _)) = pass.layer.measures.get(m) {
            pass.base.insert(metric.name.clone(), *index);
        }
        let Some((sm, measure, fate)) = pass.layer.measure(m) else {
            return Err(format!(
                "reads measure `{m}`, which no semantic model declares"
            ));
        };
        if let Some(dimension) = non_additive(measure) {
            return Err(format!("reads measure `{m}`, which is non-additive over `{dimension}`: MetricFlow collapses it over that dimension and its window groupings only, which no sqb kind does"));
        }
        let mut canonical = Table::new();
        let model = match fate {
            Fate::Dropped(why) => {
                return Err(format!("reads measure `{m}`, which is not carried: {why}"))
            }
            Fate::Measure { model } => {
                canonical.insert("kind", "single".into());
                canonical.insert("source", self.models[*model].name.as_str().into());
                canonical.insert("measure", m.as_str().into());
                *model
            }
            Fate::Percentile {
                model,
                column,
                quantile,
                discrete,
            } => {
                canonical.insert("kind", "percentile".into());
                canonical.insert("source", self.models[*model].name.as_str().into());
                canonical.insert("column", column.as_str().into());
                canonical.insert("quantile", (*quantile).into());
                if *discrete {
                    canonical.insert("discrete", true.into());
                }
                *model
            }
        };
        let scope = Scope { sm, measure };
        let mut predicates = Vec::new();
        for filter in [metric.filter.as_ref(), input.filter()]
            .into_iter()
            .flatten()
        {
            let translated = filters::translate(filter, &scope, self.engine)
                .map_err(|why| format!("has a filter sqb cannot carry: {why}"))?;
            for column in &translated.columns {
                self.ensure_column(model, column);
            }
            predicates.extend(translated.predicates);
        }
        if let Some(filter) = filters::conjunction(&predicates) {
            canonical.insert("population_filter", filter.into());
        }
        Ok(canonical)
    }

    fn ratio(&mut self, pass: &mut Pass<'_>, metric: &Metric) -> Result<Table, String> {
        let part = |key: &str| Input::of(metric.type_params.get(key));
        let (Some(numerator), Some(denominator)) = (part("numerator"), part("denominator")) else {
            return Err("is a ratio without both parts".into());
        };
        if metric.filter.as_ref().is_some_and(|f| !f.is_null()) {
            return Err("is a ratio with a filter of its own; a sqb ratio divides two bound metrics, each with its own filter".into());
        }
        for (role, input) in [("numerator", &numerator), ("denominator", &denominator)] {
            if input.filter().is_some() {
                return Err(format!("filters its {role} `{}` in the ratio itself; a sqb ratio divides two bound metrics as they are", input.name));
            }
            if let Err(why) = self.resolve(pass, &input.name) {
                return Err(format!(
                    "reads metric `{}`, which is not carried: {why}",
                    input.name
                ));
            }
        }
        if let Some(base) = pass.base.get(&numerator.name).copied() {
            pass.base.insert(metric.name.clone(), base);
        }
        let mut canonical = Table::new();
        canonical.insert("kind", "ratio".into());
        canonical.insert("numerator", numerator.name.as_str().into());
        canonical.insert("denominator", denominator.name.as_str().into());
        Ok(canonical)
    }

    /// A derived metric: its expression over the metrics it lists, an input's alias replaced
    /// by the metric's name. An input offset in time or filtered has no sqb form.
    fn derived(&mut self, pass: &mut Pass<'_>, metric: &Metric) -> Result<Table, String> {
        let params = &metric.type_params;
        let Some(expr) = params.get("expr").and_then(Value::as_str) else {
            return Err("is derived without an `expr`".into());
        };
        if metric.filter.as_ref().is_some_and(|f| !f.is_null()) {
            return Err("is derived with a filter of its own; a sqb derived metric computes its metrics as they are, each with its own filter".into());
        }
        let inputs: Vec<Input<'_>> = params
            .get("metrics")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(|v| Input::of(Some(v))).collect())
            .unwrap_or_default();
        if inputs.is_empty() {
            return Err("is derived from no metric".into());
        }
        let mut renames: Vec<(String, String)> = Vec::new();
        let mut names: Vec<String> = Vec::new();
        for input in &inputs {
            let m = &input.name;
            for key in ["offset_window", "offset_to_grain"] {
                if let Some(offset) = input.get(key) {
                    return Err(format!("reads metric `{m}` offset in time (`{key}: {}`), which sqb's derived metrics do not express", text(offset)));
                }
            }
            if input.filter().is_some() {
                return Err(format!("filters metric `{m}` in the derivation itself; a sqb derived metric computes its metrics as they are"));
            }
            if let Err(why) = self.resolve(pass, m) {
                return Err(format!("reads metric `{m}`, which is not carried: {why}"));
            }
            if let Some(alias) = input.get("alias").and_then(Value::as_str) {
                renames.push((alias.to_lowercase(), m.clone()));
            }
            if !names.contains(m) {
                names.push(m.clone());
            }
        }
        if let Some(base) = pass.base.get(&inputs[0].name).copied() {
            pass.base.insert(metric.name.clone(), base);
        }
        let expr = derived_expr(expr, &renames, self.engine)?;
        let mut canonical = Table::new();
        canonical.insert("kind", "derived".into());
        canonical.insert("expr", expr.into());
        canonical.insert("metrics", super::super::string_array(&names).into());
        Ok(canonical)
    }

    fn write_binding(&mut self, metric: &Metric, mut canonical: Table) {
        let mut doc = DocumentMut::new();
        doc.decor_mut().set_prefix(format!(
            "# MetricFlow's metric `{}` ({}), imported by `sqb import dbt`.\n",
            metric.name, metric.original_file_path
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

/// A JSON value as it reads in YAML: a string without its quotes.
fn text(value: &Value) -> String {
    value
        .as_str()
        .map_or_else(|| value.to_string(), str::to_string)
}

/// MetricFlow's derived `expr` as sqb's: one expression of the filter language, its aliases
/// (lower-cased) replaced by the metrics' names.
fn derived_expr(
    expr: &str,
    renames: &[(String, String)],
    engine: crate::engine::Engine,
) -> Result<String, String> {
    let mut parsed = crate::semantic::filter::parse(expr, engine).map_err(|r| {
        format!(
            "has the expression `{}`, which sqb refuses: {}",
            expr.trim(),
            r.why
        )
    })?;
    if renames.is_empty() {
        return Ok(expr.trim().to_string());
    }
    let _ = sqlparser::ast::visit_expressions_mut(&mut parsed, |e| {
        if let sqlparser::ast::Expr::Identifier(ident) = e {
            let lower = ident.value.to_lowercase();
            if let Some((_, name)) = renames.iter().find(|(alias, _)| *alias == lower) {
                *ident = sqlparser::ast::Ident::new(name.clone());
            }
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    Ok(parsed.to_string())
}
