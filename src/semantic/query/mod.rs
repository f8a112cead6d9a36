//! Compiling a semantic query — metrics by name or alias, grouped by dimensions, filtered — to
//! one read-only SQL statement for the project's engine, or a typed refusal; it never guesses.
//!
//! Every metric is computed from leaves: one aggregate of one measure (or column) of one
//! relation. Each leaf is aggregated on its own relation at the requested grain before
//! anything is combined, with its metric's population filter and the mandatory-filter
//! guardrails that govern it AND-ed in first, so a join for a dimension can never multiply a
//! measure: a dimension is reached only over joins that match at most one row
//! (`many_to_one`, `one_to_one`), else the query is refused (`fanout_unsafe`). Composite
//! metrics (ratio, weighted average) divide their components' leaves after aggregating them.
//!
//! The compiler is split by what it does: `guardrails` (which guardrails govern a leaf, the
//! dimensions they require, their restrictions and watermarks), `joins` (dimensions reached over
//! declared joins, filters qualified to the relations they name), `sql` (the statement's text:
//! each leaf, the collapse to the requested grain, the outer query), `access` (roles, masks and
//! tenant scoping), `finality` (a metric's realizations), `refusal` (why a query is refused).
//!
//! Pure: the SQL text is built from the project alone; identifiers are always quoted and no
//! value of a request reaches the SQL except through the project's own predicates, which
//! parse as expressions first. Part 2's `sqb query` runs it.

use std::fmt::Write as _;

use sqlparser::ast::{Expr, Ident};

mod access;
mod conversion;
mod finality;
mod guardrails;
mod joins;
mod refusal;
mod sql;
mod time;

pub use access::tenancy_exempt;
pub use refusal::Refusal;
use sql::*;
use time::*;

use super::predicate;
use super::relation::{Relation, Relations};
use super::resolve::{self, Metrics, Reached};
use crate::catalog::Namespace;
use crate::engine::Engine;
use crate::engine_rules;
use crate::project::contracts::{AppliesTo, Guardrail};
use crate::project::metrics::MetricBinding;
use crate::project::Project;
use crate::semantic::filter;
use crate::source::{Loc, Spanned};
use crate::types::DataType;

/// What a caller asks for.
#[derive(Debug, Clone, Default)]
pub struct QueryRequest {
    pub metrics: Vec<String>,
    pub dimensions: Vec<String>,
    pub filters: Vec<String>,
    /// The named context the query is asked from (`[semantic] contexts`).
    pub context: Option<String>,
    /// Who asks: the principal's claims (the tenancy and roles policies name which ones).
    pub principal: Option<serde_json::Map<String, serde_json::Value>>,
    /// Scope the query to this tenant whatever the principal's claims and roles say
    /// (`sqb assert --tenants`: the principal's view of one tenant).
    pub tenant: Option<String>,
    /// Output columns to order the rows by, before the dimensions: a metric or dimension of
    /// the request, descending with a leading `-` (MetricFlow's `--order-by -revenue`).
    pub order_by: Vec<String>,
    /// At most this many rows, after ordering.
    pub limit: Option<u64>,
}

/// The compiled statement and the names of its output columns, in order: the dimensions as
/// requested, then the metrics as requested.
#[derive(Debug, Clone, PartialEq)]
pub struct CompiledQuery {
    pub sql: String,
    pub columns: Vec<String>,
    /// What `severity = "warn"` guardrails and `warn` policies say of the query: it is
    /// served, with these.
    pub warnings: Vec<String>,
    /// The values bound to `$1`, `$2`, …: never spliced into the SQL.
    pub params: Vec<String>,
    /// What each requested metric is served from, in request order.
    pub metrics: Vec<ServedMetric>,
    /// Each scoped relation the statement reads, as it reads it: the proof `sqb assert
    /// --tenants` runs that no row of another tenant gets through.
    pub scoped_reads: Vec<ScopedRead>,
}

/// A tenant-scoped relation as the statement reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct ScopedRead {
    pub relation: String,
    /// The FROM item, `(SELECT * FROM … WHERE CAST(col AS VARCHAR) = $1)`.
    pub from: String,
    pub column: String,
}

/// What a requested metric is served from, and how its result says whether it is final.
#[derive(Debug, Clone, PartialEq)]
pub struct ServedMetric {
    /// The output column (the metric as requested).
    pub column: String,
    /// The metric's canonical name.
    pub metric: String,
    /// The relations its leaves read.
    pub sources: Vec<String>,
    /// A metric with a finality rule: the boolean output column after the metrics saying
    /// whether a row's value holds only final rows (`<column>.final`).
    pub final_flag: Option<String>,
    /// The rule's `result_flag`: `column` keeps the flag column in what is shown; `metadata`
    /// and `none` drop it (metadata says it per metric).
    pub result_flag: String,
    /// The `min_trust` guardrails governing it in the query's context: (id, level, warns,
    /// rationale).
    pub min_trust: Vec<MinTrust>,
    /// A `single` metric whose every aggregate is a sum or a count: its total over a set of
    /// disjoint row sets (tenants) is the sum of their totals.
    pub additive: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct MinTrust {
    pub id: String,
    pub level: String,
    pub warns: bool,
    pub rationale: Option<String>,
}

/// Compiles `request` against the project's semantic contracts.
pub fn compile(
    project: &Project,
    namespace: &Namespace,
    request: &QueryRequest,
) -> Result<CompiledQuery, Refusal> {
    let relations = super::relation::relations(project);
    let metrics = Metrics::new(project);
    let mut warnings = Vec::new();
    let roles = access::roles(project, request.principal.as_ref())?;
    let scoping = match (&request.tenant, &project.contracts.tenancy) {
        (Some(tenant), Some(policy)) => access::Scoping::Scoped {
            policy,
            tenant: tenant.clone(),
        },
        _ => access::scoping(project, request.principal.as_ref(), &roles, &mut warnings)?,
    };
    let c = Compiler {
        context: request.context.clone(),
        project,
        engine: project.engine(),
        namespace,
        relations: &relations,
        metrics: &metrics,
        scoping,
        roles,
        warnings: std::cell::RefCell::new(warnings),
        scoped_reads: std::cell::RefCell::new(Vec::new()),
        nested: std::cell::Cell::new(0),
    };
    c.compile(request)
}

struct Compiler<'a, 'p> {
    context: Option<String>,
    project: &'p Project,
    engine: Engine,
    namespace: &'a Namespace,
    relations: &'a Relations<'p>,
    metrics: &'a Metrics<'p>,
    scoping: access::Scoping<'p>,
    roles: Option<Vec<crate::project::policies::Role>>,
    /// Said while compiling: served anyway.
    warnings: std::cell::RefCell<Vec<String>>,
    scoped_reads: std::cell::RefCell<Vec<ScopedRead>>,
    /// How many metric filters deep the compiler is (`metric(name, entity)` in a filter).
    nested: std::cell::Cell<u8>,
}

/// One aggregate over one relation: the unit every metric is computed from.
struct Leaf<'a, 'p> {
    binding: &'p MetricBinding,
    measure: Option<&'p Spanned<String>>,
    /// An opaque metric's native grain: the only grouping it is served at.
    native_grain: Option<&'p crate::project::NameList>,
    relation: &'a Relation<'p>,
    /// The aggregate over the relation's columns, aliased `s`.
    aggregate: String,
    /// Predicates over the relation's columns (population filter, guardrails).
    filters: Vec<&'p Spanned<String>>,
    /// A semi-additive metric's collapse: the time dimension (or column) and how it collapses.
    collapse: Option<(&'p Spanned<String>, &'p str)>,
    /// Its `collapse_groupings`: the point is chosen over all rows within these (MetricFlow's
    /// rule), not within each requested group.
    groupings: Option<&'p crate::project::NameList>,
    /// `join_to_timespine`: grouped by its time, every point of the time spine is a row.
    spine: bool,
    /// `fill_nulls_with`: its value where it has none.
    fill: Option<i64>,
    /// A cumulative metric: how far back each point adds up.
    cumulative: Option<Cumulative<'p>>,
    /// An offset in time: each point's value is the metric's at the point this far before it
    /// (`Window`), or at the start of its period (`ToGrain`).
    offset: Option<Offset<'p>>,
    /// A conversion metric's conversions: its aggregate is the conversion measure's, over the
    /// conversion events that follow a row of the leaf's relation.
    conversion: Option<Conversion<'a, 'p>>,
    /// Read from a provisional realization.
    provisional: bool,
    /// The provisional realization's rows after the final watermark: the leaf also counts
    /// them (`n`); a group with any is provisional.
    after: Option<String>,
}

impl<'p> Leaf<'_, 'p> {
    /// The metric's own `filter` over dimensions.
    fn binding_filter(&self) -> Option<&'p Spanned<String>> {
        self.binding
            .canonical
            .as_ref()
            .and_then(|c| c.filter.as_ref())
    }

    /// Its `filter`, when a ratio or derived metric gives it (`filter_given = true`).
    fn given_filter(&self) -> Option<&'p Spanned<String>> {
        let given = self
            .binding
            .canonical
            .as_ref()
            .and_then(|c| c.filter_given.as_ref())
            .is_some_and(|g| g.value);
        self.binding_filter().filter(|_| given)
    }
}

/// How a cumulative leaf adds up before each point of the time spine.
#[derive(Clone, Copy)]
struct Cumulative<'p> {
    /// `7 days` is (7, "day").
    window: Option<(u32, &'static str)>,
    grain_to_date: Option<&'p str>,
    /// `first`, `last` or `average` of the points of a coarser period.
    period_agg: &'p str,
}

/// Where a conversion metric's conversion events are, and which follow a base event.
#[derive(Clone, Copy)]
struct Conversion<'a, 'p> {
    relation: &'a Relation<'p>,
    measure: &'p Spanned<String>,
    /// `base_column = "conversion_column"` pairs.
    on: &'p [(Spanned<String>, Spanned<String>)],
    /// How long after a base event a conversion counts (`None`: ever after).
    window: Option<(u32, &'static str)>,
}

/// How far a leaf is offset in time.
#[derive(Clone, Copy)]
enum Offset<'p> {
    Window(u32, &'static str),
    ToGrain(&'p str),
}

/// One value of a metric in a group: a leaf's, or a final and a provisional leaf's combined.
#[derive(Clone, Copy)]
enum Part {
    Leaf(usize),
    Coalesced {
        settled: usize,
        live: usize,
        how: &'static str,
    },
}

/// How a requested metric is computed from its leaves (indexes into the leaf list).
enum Formula {
    Value(Part),
    Divide {
        numerator: Part,
        denominator: Part,
        on_zero: String,
        metric: String,
    },
    /// A derived metric: its expression over the formulas of the metrics it lists, by their
    /// lower-cased names.
    Derived {
        expr: Box<Expr>,
        inputs: Vec<(String, Formula)>,
    },
}

impl Formula {
    /// Every part the formula reads.
    fn parts(&self) -> Vec<Part> {
        match self {
            Formula::Value(p) => vec![*p],
            Formula::Divide {
                numerator,
                denominator,
                ..
            } => vec![*numerator, *denominator],
            Formula::Derived { inputs, .. } => inputs.iter().flat_map(|(_, f)| f.parts()).collect(),
        }
    }
}

impl<'a, 'p> Compiler<'a, 'p> {
    fn compile(&self, request: &QueryRequest) -> Result<CompiledQuery, Refusal> {
        if request.metrics.is_empty() {
            return Err(Refusal::new("unresolved", "the query names no metric"));
        }
        let mut leaves: Vec<Leaf<'a, 'p>> = Vec::new();
        let mut formulas = Vec::new();
        let mut served = Vec::new();
        let mut bound = Vec::new();
        for name in &request.metrics {
            let binding = self.metric(name)?;
            access::metric_allowed(self.roles.as_deref(), binding, name)?;
            let first = leaves.len();
            formulas.push(self.formula(binding, &mut leaves)?);
            served.push(self.served_metric(name, binding, &leaves[first..]));
            bound.push((binding, first..leaves.len()));
        }
        let asked: Vec<String> = request
            .dimensions
            .iter()
            .map(|d| self.at_default_grain(d, &bound, &leaves))
            .collect();
        for d in &asked {
            for leaf in &leaves {
                let reached = self.leaf_dimension(leaf, &self.spanned(d))?;
                access::dimension_allowed(self.roles.as_deref(), &reached, d)?;
                access::expression_unmasked(self.project, self.roles.as_deref(), &reached, d)?;
            }
        }
        let dimensions: Vec<Spanned<String>> = asked.iter().map(|d| self.spanned(d)).collect();
        let filters: Vec<Spanned<String>> = request
            .filters
            .iter()
            .map(|f| self.metricflow_filter(f).map(|f| self.spanned(&f)))
            .collect::<Result<_, _>>()?;
        let mut warnings = Vec::new();
        for leaf in &leaves {
            self.native_grain(leaf, &dimensions)?;
            self.required_dimensions(leaf, request, &dimensions, &filters, &mut warnings)?;
            warnings.extend(self.mandatory_warnings(leaf));
        }
        warnings.dedup();
        let mut marked = Vec::new();
        for f in &formulas {
            sql::presence_leaves(f, &leaves, &mut marked);
        }
        let mut bodies = Vec::new();
        for (i, leaf) in leaves.iter().enumerate() {
            let mut body = self.leaf_sql(leaf, &dimensions, &filters)?;
            if marked.contains(&i) {
                body.sql = format!("  SELECT *, 1 AS \"e\" FROM (\n{}\n  ) AS \"x\"", body.sql);
            }
            bodies.push(body);
        }
        // A leaf with a presence column keeps a query of its own.
        let ctes = sql::ctes(bodies, &marked);
        let mut columns: Vec<String> = request.dimensions.clone();
        columns.extend(request.metrics.iter().cloned());
        let masks = match leaves.first() {
            Some(leaf) => self.masks(leaf, &dimensions)?,
            None => Vec::new(),
        };
        let mut sql = self.outer_sql(&ctes, &formulas, &columns, &masks, &leaves, &served);
        sql.push_str(&order_and_limit(request, &columns, masks.len())?);
        let mut said = self.warnings.borrow().clone();
        said.extend(warnings);
        said.dedup();
        Ok(CompiledQuery {
            sql,
            columns,
            warnings: said,
            params: self.scoping.params(),
            metrics: served,
            scoped_reads: self.scoped_reads.take(),
        })
    }

    /// `metric_time` asked without a grain, at MetricFlow's default: the coarsest of the
    /// metrics' default grains, each its `time_granularity`, else the coarser of `day` and its
    /// leaves' time grains. Any other dimension, and `metric_time` where no leaf has a time, as
    /// asked.
    fn at_default_grain(
        &self,
        asked: &str,
        bound: &[(&'p MetricBinding, std::ops::Range<usize>)],
        leaves: &[Leaf<'a, 'p>],
    ) -> String {
        if !asked.eq_ignore_ascii_case("metric_time") {
            return asked.to_string();
        }
        let rank = |g: &str| GRAIN_RANK.iter().position(|x| *x == g);
        let day = rank("day").unwrap_or(1);
        let mut grain: Option<usize> = None;
        for (binding, range) in bound {
            let times = leaves[range.clone()]
                .iter()
                .filter_map(|leaf| {
                    let measure = leaf.measure.map(|m| m.value.as_str());
                    let time = resolve::agg_time(leaf.relation, measure)?;
                    let declared = leaf
                        .relation
                        .semantic?
                        .dimensions
                        .iter()
                        .find(|d| d.name.value == time.value)?
                        .granularity
                        .as_ref()
                        .map_or("day", |g| g.value.as_str());
                    rank(declared)
                })
                .max();
            let Some(times) = times else { continue };
            let own = binding
                .time_granularity
                .as_ref()
                .and_then(|g| rank(&g.value));
            grain = grain.max(Some(own.unwrap_or(times.max(day))));
        }
        match grain {
            Some(g) => format!("metric_time.{}", GRAIN_RANK[g]),
            None => asked.to_string(),
        }
    }

    /// What a requested metric is served from: the relations of its leaves, its finality
    /// flag, and the `min_trust` guardrails governing it in the query's context.
    fn served_metric(
        &self,
        asked: &str,
        binding: &'p MetricBinding,
        leaves: &[Leaf<'a, 'p>],
    ) -> ServedMetric {
        let mut sources: Vec<String> = Vec::new();
        for leaf in leaves {
            if !sources.iter().any(|s| s == leaf.relation.name) {
                sources.push(leaf.relation.name.to_string());
            }
        }
        // A composite of a metric with a finality rule (revenue in average order value) is as
        // final as its components.
        let rules = &self.project.contracts.finality;
        let rule = finality::rule(rules, binding)
            .or_else(|| leaves.iter().find_map(|l| finality::rule(rules, l.binding)));
        let mut min_trust = Vec::new();
        for leaf in leaves {
            for g in self.governing(leaf, "min_trust", self.context.as_deref()) {
                let id = g.id.as_ref().map_or("?", |i| i.value.as_str()).to_string();
                if min_trust.iter().any(|m: &MinTrust| m.id == id) {
                    continue;
                }
                min_trust.push(MinTrust {
                    id,
                    level: g
                        .level
                        .as_ref()
                        .map_or("trusted", |l| l.value.as_str())
                        .to_string(),
                    warns: g.warns(),
                    rationale: g.rationale.as_ref().map(|r| r.value.clone()),
                });
            }
        }
        let single = binding
            .canonical
            .as_ref()
            .and_then(|c| c.kind.as_ref())
            .is_some_and(|k| k.value == "single");
        let additive = single
            && leaves.iter().all(|l| {
                l.aggregate.starts_with("sum(")
                    || (l.aggregate.starts_with("count(")
                        && !l.aggregate.starts_with("count(DISTINCT"))
            });
        ServedMetric {
            additive,
            column: asked.to_string(),
            metric: binding
                .name()
                .map_or(asked, |n| n.value.as_str())
                .to_string(),
            sources,
            final_flag: rule.map(|_| format!("{asked}.final")),
            result_flag: rule
                .and_then(|r| r.result_flag.as_ref())
                .map_or("metadata", |f| f.value.as_str())
                .to_string(),
            min_trust,
        }
    }

    /// An opaque metric is served only grouped by exactly its native grain's columns.
    fn native_grain(
        &self,
        leaf: &Leaf<'a, 'p>,
        dimensions: &[Spanned<String>],
    ) -> Result<(), Refusal> {
        let Some(grain) = leaf.native_grain else {
            return Ok(());
        };
        let mut asked: Vec<String> = Vec::new();
        for d in dimensions {
            let reached = self.leaf_dimension(leaf, d)?;
            if reached.path.is_empty() && reached.granularity.is_none() {
                asked.push(reached.dimension.column().value.to_lowercase());
            }
        }
        let mut native: Vec<String> = grain.value.iter().map(|g| g.value.to_lowercase()).collect();
        asked.sort();
        native.sort();
        if asked.len() == dimensions.len() && asked == native {
            return Ok(());
        }
        let name = leaf.binding.name().map_or("?", |n| n.value.as_str());
        Err(Refusal {
            code: "unsupported_measure",
            message: format!(
                "metric `{name}` is opaque: it is served only by {}",
                native.join(", ")
            ),
            hint: Some("group by exactly its native grain's columns, on its own relation".into()),
        })
    }

    fn metric(&self, name: &str) -> Result<&'p MetricBinding, Refusal> {
        resolve::metric(self.metrics, &self.spanned(name)).map_err(|d| {
            let code = match d.code {
                crate::diagnostics::Code::QueryAmbiguous => "ambiguous",
                _ => "unresolved",
            };
            Refusal::from_diagnostic(code, &d)
        })
    }

    /// The leaves a metric needs, appended to `leaves`, and how they combine.
    fn formula(
        &self,
        binding: &'p MetricBinding,
        leaves: &mut Vec<Leaf<'a, 'p>>,
    ) -> Result<Formula, Refusal> {
        let name = binding.name().map_or("?", |n| n.value.as_str());
        let Some(c) = &binding.canonical else {
            return Err(Refusal::new(
                "unsupported_measure",
                format!("metric `{name}` has no canonical definition"),
            ));
        };
        let kind = c.kind.as_ref().map_or("", |k| k.value.as_str());
        let composite = |numerator: &Spanned<String>,
                         denominator: &Spanned<String>,
                         leaves: &mut Vec<Leaf<'a, 'p>>| {
            let n = self.single(self.metric(&numerator.value)?, leaves)?;
            let d = self.single(self.metric(&denominator.value)?, leaves)?;
            let on_zero = c
                .on_zero_denominator
                .as_ref()
                .map_or("null", |z| z.value.as_str())
                .to_string();
            Ok(Formula::Divide {
                numerator: n,
                denominator: d,
                on_zero,
                metric: name.to_string(),
            })
        };
        match (
            kind,
            &c.numerator,
            &c.denominator,
            &c.weighted_sum,
            &c.weight,
        ) {
            ("ratio", Some(n), Some(d), _, _) | ("weighted_avg", _, _, Some(n), Some(d)) => {
                composite(n, d, leaves)
            }
            ("derived", ..) => self.derived(name, c, leaves),
            ("conversion", ..) => self.conversion(binding, c, leaves),
            _ => Ok(Formula::Value(self.single(binding, leaves)?)),
        }
    }

    /// A derived metric: each metric it lists computed as it would be on its own, then its
    /// expression over them.
    fn derived(
        &self,
        name: &str,
        c: &crate::project::metrics::Canonical,
        leaves: &mut Vec<Leaf<'a, 'p>>,
    ) -> Result<Formula, Refusal> {
        let unsupported =
            |why: &str| Refusal::new("unsupported_measure", format!("metric `{name}` {why}"));
        let (Some(expr), Some(listed)) = (&c.expr, &c.metrics) else {
            return Err(unsupported("is derived without `expr` and `metrics`"));
        };
        let expr = filter::parse(&expr.value, self.engine)
            .map_err(|r| unsupported(&format!("has an `expr` that {}", r.why)))?;
        let mut inputs = Vec::new();
        for input in &listed.value {
            let binding = self.metric(&input.value)?;
            let formula = self.formula(binding, leaves)?;
            inputs.push((input.value.to_lowercase(), formula));
        }
        Ok(Formula::Derived {
            expr: Box::new(expr),
            inputs,
        })
    }

    /// A conversion metric: its base measure over the base events (the opportunities), and
    /// its conversion measure over the conversion events that follow one with the same `on`
    /// values within the `window`, each counted for the latest base event before it, as
    /// MetricFlow counts them; `conversion_rate` divides the conversions by the opportunities.
    fn conversion(
        &self,
        binding: &'p MetricBinding,
        c: &'p crate::project::metrics::Canonical,
        leaves: &mut Vec<Leaf<'a, 'p>>,
    ) -> Result<Formula, Refusal> {
        let name = binding.name().map_or("?", |n| n.value.as_str());
        let unsupported =
            |why: &str| Refusal::new("unsupported_measure", format!("metric `{name}` {why}"));
        if finality::rule(&self.project.contracts.finality, binding).is_some() {
            return Err(unsupported(
                "is a conversion metric with a finality rule, which sqb does not combine",
            ));
        }
        let relation = |source: Option<&Spanned<String>>| {
            let source = source.ok_or_else(|| unsupported("names no relation"))?;
            self.relations.get(&source.value).ok_or_else(|| {
                unsupported(&format!(
                    "reads `{}`, which is no model or source",
                    source.value
                ))
            })
        };
        let base = relation(c.source.as_ref())?;
        let events = relation(c.conversion_source.as_ref())?;
        let measure = c
            .conversion_measure
            .as_ref()
            .ok_or_else(|| unsupported("names no conversion measure"))?;
        let (agg, _) = self.measure_operand(events, Some(measure), name)?;
        let mut converted = self.leaf(binding, base, false)?;
        // MetricFlow sums a count's conversions as ones and zeros: none is NULL, not 0.
        let agg = if agg == "count" { "sum" } else { agg };
        converted.aggregate = aggregate_of(agg, "\"s\".\"__sqb_cv\"");
        converted.conversion = Some(Conversion {
            relation: events,
            measure,
            on: c.on.as_ref().map_or(&[][..], |o| o.value.as_slice()),
            window: c
                .window
                .as_ref()
                .and_then(|w| crate::project::metrics::window_parts(&w.value)),
        });
        leaves.push(converted);
        let conversions = Part::Leaf(leaves.len() - 1);
        // The base events give the groups, as MetricFlow's outer join of them does: a group
        // with base events and no conversion is there, its conversions NULL.
        leaves.push(self.leaf(binding, base, false)?);
        let opportunities = Part::Leaf(leaves.len() - 1);
        if c.calculation
            .as_ref()
            .is_some_and(|k| k.value == "conversions")
        {
            return Ok(Formula::Value(conversions));
        }
        Ok(Formula::Divide {
            numerator: conversions,
            denominator: opportunities,
            on_zero: c
                .on_zero_denominator
                .as_ref()
                .map_or("null", |z| z.value.as_str())
                .to_string(),
            metric: name.to_string(),
        })
    }

    /// A metric computed from one aggregate: of its canonical source, or of the realizations
    /// its finality rule and the query's context serve.
    fn single(
        &self,
        binding: &'p MetricBinding,
        leaves: &mut Vec<Leaf<'a, 'p>>,
    ) -> Result<Part, Refusal> {
        let (name, c, kind) = canonical(binding)?;
        let unsupported =
            |why: &str| Refusal::new("unsupported_measure", format!("metric `{name}` {why}"));
        let canonical = c
            .source
            .as_ref()
            .ok_or_else(|| unsupported("is not computed from one relation"))?;
        let rule = finality::rule(&self.project.contracts.finality, binding);
        let restriction = rule.and_then(|rule| self.restriction(binding, rule, &canonical.value));
        let relation_of = |source: Option<&Spanned<String>>| {
            let source = source.unwrap_or(canonical);
            self.relations.get(&source.value).ok_or_else(|| {
                unsupported(&format!(
                    "is computed from `{}`, which is no model or source",
                    source.value
                ))
            })
        };
        let push = |leaf: Leaf<'a, 'p>, leaves: &mut Vec<Leaf<'a, 'p>>| {
            leaves.push(leaf);
            leaves.len() - 1
        };
        match finality::served(rule, restriction, name)? {
            finality::Served::Canonical => {
                let leaf = self.leaf(binding, relation_of(None)?, false)?;
                Ok(Part::Leaf(push(leaf, leaves)))
            }
            finality::Served::One {
                realization,
                is_final,
            } => {
                let relation = relation_of(realization.source.as_ref())?;
                let leaf = self.leaf(binding, relation, !is_final)?;
                Ok(Part::Leaf(push(leaf, leaves)))
            }
            finality::Served::Coalesced { settled, live } => {
                if kind != "single" {
                    return Err(unsupported(&format!(
                        "is `{kind}`: only a `single` metric's final and provisional realizations can be combined"
                    )));
                }
                let settled_rel = relation_of(settled.source.as_ref())?;
                let live_rel = relation_of(live.source.as_ref())?;
                let agg = settled_rel
                    .semantic
                    .and_then(|s| {
                        s.measures
                            .iter()
                            .find(|m| c.measure.as_ref().is_some_and(|x| x.value == m.name.value))
                    })
                    .and_then(|m| m.agg.as_ref())
                    .map_or("", |a| a.value.as_str());
                let how = finality::combine(agg, name)?;
                let after = self.after_watermark(settled, settled_rel, live, live_rel, name)?;
                let settled_leaf = self.leaf(binding, settled_rel, false)?;
                let mut live_leaf = self.leaf(binding, live_rel, true)?;
                live_leaf.after = Some(after);
                Ok(Part::Coalesced {
                    settled: push(settled_leaf, leaves),
                    live: push(live_leaf, leaves),
                    how,
                })
            }
        }
    }

    /// One aggregate of the metric over `relation`, with its population filter and the
    /// mandatory filters governing it.
    fn leaf(
        &self,
        binding: &'p MetricBinding,
        relation: &'a Relation<'p>,
        provisional: bool,
    ) -> Result<Leaf<'a, 'p>, Refusal> {
        let (name, c, kind) = canonical(binding)?;
        let unsupported =
            |why: &str| Refusal::new("unsupported_measure", format!("metric `{name}` {why}"));
        let aggregate = match kind {
            "single" | "opaque" | "semi_additive" | "cumulative" | "conversion" => {
                self.measure_aggregate(relation, c.measure.as_ref(), name)?
            }
            "distinct_count" => {
                let column = c
                    .distinct_on
                    .as_ref()
                    .ok_or_else(|| unsupported("has no `distinct_on`"))?;
                format!("count(DISTINCT {})", column_ref("s", &column.value))
            }
            "percentile" => {
                let (Some(column), Some(q)) = (&c.column, &c.quantile) else {
                    return Err(unsupported("has no `column` and `quantile`"));
                };
                let col = column_ref("s", &column.value);
                let discrete = c.discrete.as_ref().is_some_and(|d| d.value);
                let rules = engine_rules::of(self.engine);
                match c.approximate.as_ref().is_some_and(|a| a.value) {
                    true => rules
                        .approximate_percentile(&col, &q.value.to_string())
                        .ok_or_else(|| {
                            unsupported(
                                "is an approximate percentile, which this engine does not compute",
                            )
                        })?,
                    false => rules.percentile(&col, &q.value.to_string(), discrete),
                }
            }
            other => {
                return Err(unsupported(&format!(
                    "is `{other}`, which this compiler does not serve"
                )))
            }
        };
        let native_grain = c.native_grain.as_ref().filter(|_| kind == "opaque");
        let mut leaf = Leaf {
            binding,
            measure: c.measure.as_ref(),
            native_grain,
            relation,
            aggregate,
            filters: c.population_filter.iter().collect(),
            groupings: c
                .collapse_groupings
                .as_ref()
                .filter(|_| kind == "semi_additive"),
            spine: c.join_to_timespine.as_ref().is_some_and(|j| j.value),
            fill: c.fill_nulls_with.as_ref().map(|f| f.value),
            offset: match (&c.offset_window, &c.offset_to_grain) {
                (Some(w), _) => crate::project::metrics::window_parts(&w.value)
                    .map(|(n, unit)| Offset::Window(n, unit)),
                (None, Some(g)) => Some(Offset::ToGrain(g.value.as_str())),
                (None, None) => None,
            },
            cumulative: (kind == "cumulative").then(|| Cumulative {
                window: c
                    .window
                    .as_ref()
                    .and_then(|w| crate::project::metrics::window_parts(&w.value)),
                grain_to_date: c.grain_to_date.as_ref().map(|g| g.value.as_str()),
                period_agg: c.period_agg.as_ref().map_or("first", |p| p.value.as_str()),
            }),
            collapse: match (kind, &c.collapse_dimension, &c.collapse_agg) {
                ("semi_additive", Some(d), Some(agg)) => Some((d, agg.value.as_str())),
                ("semi_additive", _, _) => return Err(unsupported("has no collapse dimension")),
                _ => None,
            },
            conversion: None,
            provisional,
            after: None,
        };
        let mandatory = self.governing(&leaf, "mandatory_filter", None);
        leaf.filters
            .extend(mandatory.into_iter().filter_map(|g| g.filter.as_ref()));
        Ok(leaf)
    }

    fn measure_aggregate(
        &self,
        relation: &Relation<'p>,
        measure: Option<&Spanned<String>>,
        metric: &str,
    ) -> Result<String, Refusal> {
        let (agg, operand) = self.measure_operand(relation, measure, metric)?;
        Ok(aggregate_of(agg, &operand))
    }

    /// A measure's aggregation and what it aggregates, over the relation aliased `s` (`*` for
    /// a count of rows).
    fn measure_operand(
        &self,
        relation: &Relation<'p>,
        measure: Option<&Spanned<String>>,
        metric: &str,
    ) -> Result<(&'p str, String), Refusal> {
        let name = measure.map_or("", |m| m.value.as_str());
        let found = relation
            .semantic
            .and_then(|s| s.measures.iter().find(|m| m.name.value == name))
            .ok_or_else(|| {
                Refusal::new(
                    "unresolved",
                    format!(
                        "metric `{metric}` reads measure `{name}`, which {} does not declare",
                        relation.describe()
                    ),
                )
            })?;
        let agg = found.agg.as_ref().map_or("", |a| a.value.as_str());
        let operand = match (&found.column, &found.expr) {
            (Some(column), _) => column_ref("s", &column.value),
            (None, Some(expr)) => self.qualified(expr, relation)?,
            (None, None) => "*".to_string(),
        };
        Ok((agg, operand))
    }
}

/// The statement's order and limit: the request's `order_by` columns (descending with a
/// leading `-`), then the dimensions in order; then at most `limit` rows. An order that names
/// no output column is refused.
fn order_and_limit(
    request: &QueryRequest,
    columns: &[String],
    dims: usize,
) -> Result<String, Refusal> {
    let mut order: Vec<String> = Vec::new();
    let mut used = Vec::new();
    for asked in &request.order_by {
        let (name, descending) = match asked.trim().strip_prefix('-') {
            Some(name) => (name.trim(), true),
            None => (asked.trim(), false),
        };
        let Some(i) = output_column(columns, name) else {
            return Err(Refusal {
                code: "unresolved",
                message: format!("the order `{asked}` names no column of the query"),
                hint: Some(format!(
                    "order by a metric or dimension the query asks for: {}",
                    columns.join(", ")
                )),
            });
        };
        if !used.contains(&i) {
            used.push(i);
            order.push(format!(
                "{}{}",
                i + 1,
                if descending { " DESC" } else { "" }
            ));
        }
    }
    order.extend(
        (0..dims)
            .filter(|i| !used.contains(i))
            .map(|i| (i + 1).to_string()),
    );
    let mut out = String::new();
    if !order.is_empty() {
        out.push_str(&format!("\nORDER BY {}", order.join(", ")));
    }
    // An integer, parsed as one: no text of the request reaches the statement. Both engines
    // take a BIGINT; more rows than that is no limit at all.
    if let Some(limit) = request.limit.map(|l| l.min(i64::MAX as u64)) {
        out.push_str(&format!("\nLIMIT {limit}"));
    }
    Ok(out)
}

/// The index of the output column `name` names: as asked, in any case, or spelled with `__`
/// for `.` (MetricFlow's `metric_time__month` for `metric_time.month`).
pub fn output_column(columns: &[String], name: &str) -> Option<usize> {
    let plain = |s: &str| s.replace("__", ".").to_ascii_lowercase();
    columns
        .iter()
        .position(|c| c == name)
        .or_else(|| columns.iter().position(|c| plain(c) == plain(name)))
}

/// A measure's aggregate of `operand`.
fn aggregate_of(agg: &str, operand: &str) -> String {
    match agg {
        "count_distinct" => format!("count(DISTINCT {operand})"),
        "count" => format!("count({operand})"),
        // MetricFlow's: a NULL counts as nothing, and a group of NULLs sums to NULL.
        "sum_boolean" => format!("sum(CAST({operand} AS INTEGER))"),
        other => format!("{other}({operand})"),
    }
}

impl Compiler<'_, '_> {
    /// A name of the request as the resolver takes it; a request has no file, so its
    /// location is the project file's start (never shown: refusals carry only the text).
    /// A filter with MetricFlow's references (`{{ Dimension('customer__segment') }}`) in the
    /// dimension names they stand for; a filter without any, as it is.
    fn metricflow_filter(&self, filter: &str) -> Result<String, Refusal> {
        if !filter.contains("{{") && !filter.contains("{%") {
            return Ok(filter.to_string());
        }
        crate::semantic::filter::template::substitute(
            filter,
            crate::semantic::filter::template::query_reference,
        )
        .map_err(|why| Refusal::new("invalid_filter", why))
    }

    fn spanned(&self, s: &str) -> Spanned<String> {
        Spanned::new(s.to_string(), Loc::file_start(self.project.config.file))
    }
}
