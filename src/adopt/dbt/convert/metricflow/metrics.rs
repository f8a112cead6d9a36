//! MetricFlow's metrics as sqb bindings, in the order their inputs allow: a metric is bound
//! only when everything it reads was carried, and otherwise its entry says which input was not
//! and why, down the chain (`share` reads metric `revenue`, which is not carried: `revenue`
//! reads measure `price_median`, which …).

use std::collections::HashMap;

use serde_json::Value;
use toml_edit::{DocumentMut, Table};

use super::filters::{self, Scope};
use super::{Fate, Layer};
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
    /// The measure of each bound simple metric, and its `[canonical]`: an input of a ratio or a
    /// derived metric filtered there is this binding with the filter AND-ed in.
    simple: HashMap<String, (String, Table)>,
    /// Filtered copies written for an input of a metric being bound (the metric's name, the
    /// copy's name, comment and `[canonical]`): written only if the metric is.
    pending: Vec<(String, String, String, Table)>,
    /// The metrics being bound, innermost last: a metric that reads itself is a cycle.
    stack: Vec<String>,
}

/// How a MetricFlow filter of a metric is carried: predicates on its source's rows, or a filter
/// over dimensions.
enum Read {
    Rows(Vec<String>),
    Dimensions(String),
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
            simple: HashMap::new(),
            pending: Vec::new(),
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
        let (copies, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut pass.pending)
            .into_iter()
            .partition(|(owner, ..)| owner == name);
        pass.pending = rest;
        for (_, copy, comment, canonical) in copies {
            match result.is_ok() {
                true => self.write_named(&copy, None, &comment, canonical),
                false => {
                    pass.fates.remove(&copy);
                }
            }
        }
        let fate = match result {
            Ok(canonical) => {
                let grain = metric.time_granularity.as_deref();
                let carried = grain.filter(|g| crate::project::metrics::GRAINS.contains(g));
                self.write_binding(&metric, carried, canonical);
                if let Some(grain) = grain.filter(|_| carried.is_none()) {
                    let what = format!("`{name}`'s default grain `{grain}` is not carried: it is no grain sqb has; asked for `metric_time` without a grain, sqb groups by `day`");
                    self.entry(
                        &metric.original_file_path,
                        &id,
                        "metric",
                        Carried::Partly,
                        what,
                    );
                }
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
            "cumulative" => self.cumulative(pass, metric),
            "conversion" => self.conversion(pass, metric),
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
        let spine = input.get("join_to_timespine").and_then(Value::as_bool) == Some(true);
        let fill = match input.get("fill_nulls_with").filter(|v| !v.is_null()) {
            None => None,
            Some(v) => Some(v.as_i64().ok_or_else(|| {
                format!("fills measure `{m}`'s empty groups with {v}, which is not an integer")
            })?),
        };
        if spine && !self.has_time_spine() {
            return Err(format!("joins measure `{m}` to the time spine, and the project has no time spine the import carries (`time_spine:` on a model, or `metricflow_time_spine`)"));
        }
        if let Some((index, _)) = pass.layer.measures.get(m) {
            pass.base.insert(metric.name.clone(), *index);
        }
        let Some((sm, measure, fate)) = pass.layer.measure(m) else {
            return Err(format!(
                "reads measure `{m}`, which no semantic model declares"
            ));
        };
        let mut canonical = Table::new();
        let model = match fate {
            Fate::Dropped(why) => {
                return Err(format!("reads measure `{m}`, which is not carried: {why}"))
            }
            Fate::Measure { model } => {
                let collapse = self
                    .collapse(sm, measure, *model)
                    .map_err(|why| format!("reads measure `{m}`, which is {why}"))?;
                let kind = if collapse.is_some() {
                    "semi_additive"
                } else {
                    "single"
                };
                canonical.insert("kind", kind.into());
                canonical.insert("source", self.models[*model].name.as_str().into());
                canonical.insert("measure", m.as_str().into());
                if let Some(c) = collapse {
                    canonical.insert("collapse_dimension", c.dimension.as_str().into());
                    canonical.insert("collapse_agg", c.agg.into());
                    let groupings: toml_edit::Array =
                        c.groupings.iter().map(String::as_str).collect();
                    canonical.insert("collapse_groupings", toml_edit::value(groupings));
                }
                *model
            }
            Fate::Percentile { .. }
                if measure
                    .non_additive_dimension
                    .as_ref()
                    .is_some_and(|v| !v.is_null()) =>
            {
                return Err(format!(
                    "reads measure `{m}`, a non-additive percentile, which sqb does not collapse"
                ));
            }
            Fate::Percentile {
                model,
                column,
                quantile,
                discrete,
                approximate,
            } => {
                canonical.insert("kind", "percentile".into());
                canonical.insert("source", self.models[*model].name.as_str().into());
                canonical.insert("column", column.as_str().into());
                canonical.insert("quantile", (*quantile).into());
                if *discrete {
                    canonical.insert("discrete", true.into());
                }
                if *approximate {
                    canonical.insert("approximate", true.into());
                }
                *model
            }
        };
        let scope = Scope { sm, measure };
        let mut predicates = Vec::new();
        let mut over_dimensions = Vec::new();
        for filter in [metric.filter.as_ref(), input.filter()]
            .into_iter()
            .flatten()
        {
            // Joined to the time spine, a filter is read as a query's filter is: on its time,
            // it filters the spine's points too, as MetricFlow filters them.
            if spine {
                over_dimensions.push(
                    filters::over_dimensions(filter)
                        .map_err(|why| format!("has a filter sqb cannot carry: {why}"))?,
                );
                continue;
            }
            match self
                .read_filter(filter, &scope, model)
                .map_err(|why| format!("has a filter sqb cannot carry: {why}"))?
            {
                Read::Rows(p) => predicates.extend(p),
                Read::Dimensions(d) => over_dimensions.push(d),
            }
        }
        if let Some(filter) = filters::conjunction(&predicates) {
            canonical.insert("population_filter", filter.into());
        }
        if !over_dimensions.is_empty() {
            let text = match over_dimensions.len() {
                1 => over_dimensions.remove(0),
                _ => over_dimensions
                    .iter()
                    .map(|f| format!("({f})"))
                    .collect::<Vec<_>>()
                    .join(" AND "),
            };
            canonical.insert("filter", text.into());
        }
        if spine {
            canonical.insert("join_to_timespine", true.into());
        }
        if let Some(fill) = fill {
            canonical.insert("fill_nulls_with", fill.into());
        }
        pass.simple
            .insert(metric.name.clone(), (m.clone(), canonical.clone()));
        Ok(canonical)
    }

    /// A MetricFlow filter of a metric of `model`: over its source's own columns, predicates
    /// on its rows (the columns they read declared on the model); over a join (`customer__segment`
    /// from the orders), a filter over dimensions, applied as a query's filter is, which is
    /// MetricFlow's reading; else why sqb cannot carry it.
    fn read_filter(
        &mut self,
        filter: &Value,
        scope: &Scope<'_>,
        model: usize,
    ) -> Result<Read, String> {
        match filters::translate(filter, scope, self.engine) {
            Ok(translated) => {
                for column in &translated.columns {
                    self.ensure_column(model, column);
                }
                Ok(Read::Rows(translated.predicates))
            }
            Err(why) if filters::over_a_join(filter, scope) => filters::over_dimensions(filter)
                .map(Read::Dimensions)
                .map_err(|_| why),
            Err(why) => Err(why),
        }
    }

    /// The metric an input of `owner` (its `role`: numerator, denominator, an alias) names, or
    /// with a filter a binding written for it: the simple metric it names with the filter
    /// added, named `<owner>__<role>`. The filter is the input's own and the owner's (MetricFlow
    /// gives a ratio's or derived metric's filter to each of its inputs): over the source's own
    /// columns it is AND-ed to the population filter, over a join to the metric's `filter`.
    fn input_metric(
        &mut self,
        pass: &mut Pass<'_>,
        owner: &Metric,
        role: &str,
        input: &Input<'_>,
    ) -> Result<String, String> {
        let m = &input.name;
        if let Err(why) = self.resolve(pass, m) {
            return Err(format!("reads metric `{m}`, which is not carried: {why}"));
        }
        let offset = offset_of(input)?;
        let inherited = owner.filter.as_ref().filter(|f| !f.is_null());
        let filters: Vec<&Value> = [input.filter(), inherited].into_iter().flatten().collect();
        if filters.is_empty() && offset.is_none() {
            return Ok(m.clone());
        }
        let Some((measure_name, mut canonical)) = pass.simple.get(m).cloned() else {
            return Err(format!("filters or offsets metric `{m}`, and `{m}` is not a simple metric the filter or offset could be added to"));
        };
        let spine = canonical.contains_key("join_to_timespine");
        if let Some((key, value)) = &offset {
            if canonical.get("kind").and_then(|k| k.as_str()) == Some("semi_additive") {
                return Err(format!(
                    "offsets metric `{m}`, a non-additive one, which sqb does not offset"
                ));
            }
            if !self.has_time_spine() {
                return Err(format!("offsets metric `{m}` in time over the time spine's points, and the project has no time spine the import carries"));
            }
            canonical.insert(key, value.as_str().into());
        }
        let name = format!("{}__{role}", owner.name);
        let taken = pass
            .metrics
            .iter()
            .any(|(_, x)| x.name.eq_ignore_ascii_case(&name))
            || pass.fates.contains_key(&name);
        if taken {
            return Err(format!("filters metric `{m}` in its definition, and `{name}`, the name its filtered copy would have, is taken"));
        }
        if let Some(why) = self.excluded(&format!("contracts/metrics/{name}.toml"), "metric", &name)
        {
            return Err(format!(
                "filters or offsets metric `{m}`, and its copy `{name}` is not carried: {why}"
            ));
        }
        let Some((sm, measure, fate)) = pass.layer.measure(&measure_name) else {
            return Err(format!(
                "reads measure `{measure_name}`, which no semantic model declares"
            ));
        };
        let model = match fate {
            Fate::Measure { model } | Fate::Percentile { model, .. } => *model,
            Fate::Dropped(why) => return Err(why.clone()),
        };
        let scope = Scope { sm, measure };
        let text = |key: &str| {
            canonical
                .get(key)
                .and_then(|f| f.as_str())
                .map(String::from)
        };
        let mut predicates: Vec<String> = text("population_filter").into_iter().collect();
        let own_filter = text("filter");
        let mut over_dimensions: Vec<String> = own_filter.iter().cloned().collect();
        let mut given = Vec::new();
        let filtered = !filters.is_empty();
        let mut on_points = Vec::new();
        for filter in filters {
            let refused =
                |why: String| format!("filters metric `{m}` with a filter sqb cannot carry: {why}");
            // Offset, MetricFlow reads a filter on its time alone on the offset points, not on
            // the rows: as sqb reads a binding's `filter` on an offset metric's time. Joined to
            // the spine, on the spine's points too, as sqb reads its `filter`.
            let reads = filters::reads(filter, &scope);
            if (offset.is_some() || spine) && reads.time {
                if reads.other && offset.is_some() {
                    return Err(format!("filters metric `{m}` on its time and on something else in one filter, and offsets it: MetricFlow then filters the rows, not the offset points, which it calls a bug and sqb does not reproduce"));
                }
                if reads.other {
                    return Err(format!("filters metric `{m}`, which joins to the time spine, on its time and on something else in one filter, which sqb does not read on the spine's points"));
                }
                on_points.push(filters::over_dimensions(filter).map_err(refused)?);
                continue;
            }
            // Joined to the spine, MetricFlow filters the rows, then again the spine's rows
            // where the query groups by what the filter reads (a spine point's NULL group is
            // gone): a given filter, as sqb reads `filter_given`.
            if spine {
                if own_filter.is_some() {
                    return Err(format!("filters metric `{m}`, which joins to the time spine and has a filter of its own, on other than its time: sqb applies again after the spine join the whole of a metric's `filter` or none of it"));
                }
                given.push(filters::over_dimensions(filter).map_err(refused)?);
                continue;
            }
            match self.read_filter(filter, &scope, model).map_err(refused)? {
                Read::Rows(p) => predicates.extend(p),
                Read::Dimensions(d) => over_dimensions.push(d),
            }
        }
        if let Some(filter) = filters::conjunction(&predicates) {
            canonical.insert("population_filter", filter.into());
        }
        let is_given = !given.is_empty();
        over_dimensions.extend(given);
        if !on_points.is_empty() && !over_dimensions.is_empty() {
            return Err(format!("filters metric `{m}` on its time, and on something else over a join or the time spine, and offsets it or joins it to the spine: sqb reads the one `filter` of such a metric on its time alone or on the rest, not both"));
        }
        over_dimensions.extend(on_points);
        if let Some(filter) = filters::conjunction(&over_dimensions) {
            canonical.insert("filter", filter.into());
        }
        if is_given {
            canonical.insert("filter_given", true.into());
        }
        let does = match (filtered, &offset) {
            (true, Some(_)) => "filters and offsets it",
            (false, Some(_)) => "offsets it in time",
            _ => "filters it",
        };
        let comment = format!(
            "# `{m}` as the {role} of MetricFlow's metric `{}` ({}) {does}, imported by `sqb import dbt`.\n",
            owner.name, owner.original_file_path
        );
        pass.pending
            .push((owner.name.clone(), name.clone(), comment, canonical));
        pass.fates.insert(name.clone(), Ok(()));
        if let Some(base) = pass.base.get(m).copied() {
            pass.base.insert(name.clone(), base);
        }
        Ok(name)
    }

    /// A cumulative metric: its measure bound as a simple metric's would be, adding up over
    /// its `window`, from the start of each `grain_to_date` period, or over all time.
    fn cumulative(&mut self, pass: &mut Pass<'_>, metric: &Metric) -> Result<Table, String> {
        let params = metric.type_params.get("cumulative_type_params");
        let param = |key: &str| {
            params
                .and_then(|p| p.get(key))
                .or_else(|| metric.type_params.get(key))
                .filter(|v| !v.is_null())
        };
        let window = match param("window") {
            None => None,
            Some(w) => {
                let text = match (
                    w.get("count").and_then(Value::as_u64),
                    w.get("granularity").and_then(Value::as_str),
                ) {
                    (Some(n), Some(g)) => format!("{n} {g}"),
                    _ => text(w),
                };
                match crate::project::metrics::window_parts(&text) {
                    Some((n, g)) => Some(format!("{n} {g}")),
                    None => {
                        return Err(format!(
                            "adds up over a window of `{text}`, which sqb does not read"
                        ))
                    }
                }
            }
        };
        let to_date = param("grain_to_date").map(text);
        if let Some(g) = to_date
            .as_deref()
            .filter(|g| !["day", "week", "month", "quarter", "year"].contains(g))
        {
            return Err(format!(
                "adds up from the start of each `{g}`, which is no grain sqb has"
            ));
        }
        let period_agg = param("period_agg").map(text);
        if !self.has_time_spine() {
            return Err("is cumulative over the time spine's points, and the project has no time spine the import carries (`time_spine:` on a model, or `metricflow_time_spine`)".into());
        }
        let mut canonical = self.simple(pass, metric)?;
        // Its filtered copies would be simple metrics, not cumulative ones.
        pass.simple.remove(&metric.name);
        if canonical.get("kind").and_then(|k| k.as_str()) != Some("single") {
            return Err("is cumulative over a measure that is not a plain sum, count, average, min or max (a percentile, a non-additive measure), which sqb does not add up".into());
        }
        canonical.insert("kind", "cumulative".into());
        if let Some(w) = window {
            canonical.insert("window", w.as_str().into());
        }
        if let Some(g) = to_date {
            canonical.insert("grain_to_date", g.as_str().into());
        }
        if let Some(p) = period_agg.filter(|p| p != "first") {
            canonical.insert("period_agg", p.as_str().into());
        }
        Ok(canonical)
    }

    /// A conversion metric: its base and conversion measures, each a plain measure carried
    /// with its time, matched on the columns of its entity and constant properties in the two
    /// semantic models; the metric's filter is on the base events, as MetricFlow's is.
    fn conversion(&mut self, pass: &mut Pass<'_>, metric: &Metric) -> Result<Table, String> {
        let params = metric.type_params.get("conversion_type_params");
        let param = |key: &str| params.and_then(|p| p.get(key)).filter(|v| !v.is_null());
        let (Some(base), Some(converted)) = (
            Input::of(param("base_measure").or_else(|| param("base_metric"))),
            Input::of(param("conversion_measure").or_else(|| param("conversion_metric"))),
        ) else {
            return Err(
                "is a conversion metric without both a base and a conversion measure".into(),
            );
        };
        let Some(entity) = param("entity").and_then(Value::as_str) else {
            return Err("is a conversion metric without an entity".into());
        };
        let mut sides = Vec::new();
        for (side, input) in [&base, &converted].into_iter().enumerate() {
            let m = &input.name;
            for key in ["join_to_timespine", "fill_nulls_with"] {
                if input.get(key).is_some_and(|v| v != &Value::Bool(false)) {
                    return Err(format!("converts over measure `{m}` with a `{key}` of its own, which sqb's conversion metric does not take"));
                }
            }
            // MetricFlow 0.211 applies neither input measure's own filter to a conversion metric
            // (measured: testdata/dbt/semantic's `smb_refund_rate` and `damaged_refund_rate`
            // answer as the unfiltered `refund_request_rate`); carried, sqb's answer would differ.
            if input.filter().is_some() {
                let what = ["base", "conversion"][side];
                return Err(format!("filters its {what} measure `{m}`, and MetricFlow applies no filter of an input measure to a conversion metric (it answers as if there were none), so the two would answer differently"));
            }
            let Some((sm, measure, fate)) = pass.layer.measure(m) else {
                return Err(format!(
                    "reads measure `{m}`, which no semantic model declares"
                ));
            };
            let model = match fate {
                Fate::Measure { model } => *model,
                Fate::Dropped(why) => {
                    return Err(format!("reads measure `{m}`, which is not carried: {why}"))
                }
                Fate::Percentile { .. } => {
                    return Err(format!("converts over measure `{m}`, a percentile, which sqb's conversion metric does not aggregate"))
                }
            };
            if measure
                .non_additive_dimension
                .as_ref()
                .is_some_and(|v| !v.is_null())
            {
                return Err(format!("converts over measure `{m}`, a non-additive one, which sqb's conversion metric does not collapse"));
            }
            if !self.measure_in_time(model, m) {
                return Err(format!(
                    "converts over measure `{m}`, whose time is not carried"
                ));
            }
            sides.push((sm, measure, model));
        }
        let mut names = vec![(entity.to_string(), entity.to_string())];
        for property in param("constant_properties")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let name = |key: &str| {
                property
                    .get(key)
                    .and_then(Value::as_str)
                    .map(str::to_string)
            };
            match (name("base_property"), name("conversion_property")) {
                (Some(b), Some(c)) => names.push((b, c)),
                _ => return Err("has a constant property without both names".into()),
            }
        }
        let mut on = toml_edit::InlineTable::new();
        for (b, c) in &names {
            let local = element_column(sides[0].0, b)?;
            let remote = element_column(sides[1].0, c)?;
            match on.get(&local).and_then(|v| v.as_str()) {
                Some(r) if r == remote => continue,
                Some(_) => return Err(format!("matches `{local}` of its base events with two columns of its conversion events, which sqb's `on` does not express")),
                None => {}
            }
            self.ensure_column(sides[0].2, &local);
            self.ensure_column(sides[1].2, &remote);
            on.insert(&local, remote.as_str().into());
        }
        let mut canonical = Table::new();
        canonical.insert("kind", "conversion".into());
        canonical.insert("source", self.models[sides[0].2].name.as_str().into());
        canonical.insert("measure", base.name.as_str().into());
        canonical.insert(
            "conversion_source",
            self.models[sides[1].2].name.as_str().into(),
        );
        canonical.insert("conversion_measure", converted.name.as_str().into());
        canonical.insert("on", toml_edit::value(on));
        if let Some(w) = param("window") {
            let text = match (
                w.get("count").and_then(Value::as_u64),
                w.get("granularity").and_then(Value::as_str),
            ) {
                (Some(n), Some(g)) => format!("{n} {g}"),
                _ => text(w),
            };
            let Some((n, g)) = crate::project::metrics::window_parts(&text) else {
                return Err(format!(
                    "converts within a window of `{text}`, which sqb does not read"
                ));
            };
            canonical.insert("window", format!("{n} {g}").into());
        }
        let calculation = param("calculation").map_or("conversion_rate".into(), text);
        match calculation.as_str() {
            "conversion_rate" => {}
            "conversions" => {
                canonical.insert("calculation", "conversions".into());
            }
            other => {
                return Err(format!(
                    "calculates `{other}`, which sqb's conversion metric does not"
                ))
            }
        }
        if let Some(filter) = metric.filter.as_ref().filter(|f| !f.is_null()) {
            let scope = Scope {
                sm: sides[0].0,
                measure: sides[0].1,
            };
            let translated = filters::translate(filter, &scope, self.engine)
                .map_err(|why| format!("has a filter sqb cannot carry: {why}"))?;
            for column in &translated.columns {
                self.ensure_column(sides[0].2, column);
            }
            if let Some(f) = filters::conjunction(&translated.predicates) {
                canonical.insert("population_filter", f.into());
            }
        }
        pass.base
            .insert(metric.name.clone(), pass.layer.measures[&base.name].0);
        Ok(canonical)
    }

    fn ratio(&mut self, pass: &mut Pass<'_>, metric: &Metric) -> Result<Table, String> {
        let part = |key: &str| Input::of(metric.type_params.get(key));
        let (Some(numerator), Some(denominator)) = (part("numerator"), part("denominator")) else {
            return Err("is a ratio without both parts".into());
        };
        let n = self.input_metric(pass, metric, "numerator", &numerator)?;
        let d = self.input_metric(pass, metric, "denominator", &denominator)?;
        if let Some(base) = pass.base.get(&n).copied() {
            pass.base.insert(metric.name.clone(), base);
        }
        let mut canonical = Table::new();
        canonical.insert("kind", "ratio".into());
        canonical.insert("numerator", n.as_str().into());
        canonical.insert("denominator", d.as_str().into());
        Ok(canonical)
    }

    /// A derived metric: its expression over the metrics it lists, an input's alias replaced
    /// by the metric's name, an input offset in time or filtered (by itself or by the derived
    /// metric's own filter) by the name of the copy written for it.
    fn derived(&mut self, pass: &mut Pass<'_>, metric: &Metric) -> Result<Table, String> {
        let params = &metric.type_params;
        let Some(expr) = params.get("expr").and_then(Value::as_str) else {
            return Err("is derived without an `expr`".into());
        };
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
            let alias = input.get("alias").and_then(Value::as_str);
            let role = alias.unwrap_or(m).to_string();
            let bound = self.input_metric(pass, metric, &role, input)?;
            if alias.is_some() || bound != *m {
                renames.push((role.to_lowercase(), bound.clone()));
            }
            if !names.contains(&bound) {
                names.push(bound);
            }
        }
        if let Some(base) = names.first().and_then(|n| pass.base.get(n)).copied() {
            pass.base.insert(metric.name.clone(), base);
        }
        let expr = derived_expr(expr, &renames, self.engine)?;
        let mut canonical = Table::new();
        canonical.insert("kind", "derived".into());
        canonical.insert("expr", expr.into());
        canonical.insert("metrics", super::super::string_array(&names).into());
        Ok(canonical)
    }

    /// The binding of `metric`, with its default grain (`time_granularity`) where it has one.
    fn write_binding(&mut self, metric: &Metric, grain: Option<&str>, canonical: Table) {
        let comment = format!(
            "# MetricFlow's metric `{}` ({}), imported by `sqb import dbt`.\n",
            metric.name, metric.original_file_path
        );
        let doc = binding_doc(
            &metric.name,
            metric.label.as_deref(),
            grain,
            &comment,
            canonical,
        );
        self.metric_files
            .push((format!("contracts/metrics/{}.toml", metric.name), doc));
    }

    fn write_named(&mut self, name: &str, label: Option<&str>, comment: &str, canonical: Table) {
        let doc = binding_doc(name, label, None, comment, canonical);
        self.metric_files
            .push((format!("contracts/metrics/{name}.toml"), doc));
    }
}

/// The text of a binding file.
fn binding_doc(
    name: &str,
    label: Option<&str>,
    grain: Option<&str>,
    comment: &str,
    mut canonical: Table,
) -> String {
    let mut doc = DocumentMut::new();
    doc.decor_mut().set_prefix(comment);
    doc.insert("metric", name.into());
    if let Some(label) = label {
        doc.insert("label", label.into());
    }
    if let Some(grain) = grain {
        doc.insert("time_granularity", grain.into());
    }
    canonical.decor_mut().set_prefix("\n");
    doc.insert("canonical", toml_edit::Item::Table(canonical));
    doc.to_string()
}

/// The column an entity or dimension of a semantic model reads (a constant property names
/// either), or why it has none sqb can match on.
fn element_column(
    sm: &crate::adopt::dbt::manifest::SemanticModel,
    name: &str,
) -> Result<String, String> {
    let expr = sm
        .entities
        .iter()
        .find(|e| e.name == name)
        .map(|e| e.expr.as_deref().unwrap_or(&e.name))
        .or_else(|| {
            sm.dimensions
                .iter()
                .find(|d| d.name == name)
                .map(|d| d.expr.as_deref().unwrap_or(&d.name))
        })
        .ok_or_else(|| {
            format!(
                "matches on `{name}`, which semantic model `{}` does not have",
                sm.name
            )
        })?;
    super::column_name(expr)
        .map(str::to_string)
        .ok_or_else(|| format!("matches on `{name}`, an expression in semantic model `{}`, which sqb's `on` does not express", sm.name))
}

/// An input's offset in time as a binding's key and value: `offset_window = "1 month"` or
/// `offset_to_grain = "month"`.
fn offset_of(input: &Input<'_>) -> Result<Option<(&'static str, String)>, String> {
    let m = &input.name;
    if let Some(w) = input.get("offset_window").filter(|v| !v.is_null()) {
        let spelled = match (
            w.get("count").and_then(Value::as_u64),
            w.get("granularity").and_then(Value::as_str),
        ) {
            (Some(n), Some(g)) => format!("{n} {g}"),
            _ => text(w),
        };
        return match crate::project::metrics::window_parts(&spelled) {
            Some((n, g)) => Ok(Some(("offset_window", format!("{n} {g}")))),
            None => Err(format!(
                "reads metric `{m}` offset by `{spelled}`, which sqb does not read"
            )),
        };
    }
    if let Some(g) = input.get("offset_to_grain").filter(|v| !v.is_null()) {
        let g = text(g);
        if !["day", "week", "month", "quarter", "year"].contains(&g.as_str()) {
            return Err(format!(
                "reads metric `{m}` offset to the start of each `{g}`, which is no grain sqb has"
            ));
        }
        return Ok(Some(("offset_to_grain", g)));
    }
    Ok(None)
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
