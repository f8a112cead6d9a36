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
//! Pure: the SQL text is built from the project alone; identifiers are always quoted and no
//! value of a request reaches the SQL except through the project's own predicates, which
//! parse as expressions first. Part 2's `sqb query` runs it.

use std::fmt::Write as _;

use sqlparser::ast::{Expr, Ident};

mod access;
mod finality;

use super::predicate;
use super::relation::{Relation, Relations};
use super::resolve::{self, Metrics, Reached};
use crate::engine::Engine;
use crate::project::contracts::{AppliesTo, Guardrail};
use crate::project::metrics::MetricBinding;
use crate::project::Project;
use crate::source::{Loc, Spanned};
use crate::types::DataType;

/// What a caller asks for.
#[derive(Debug, Clone, Default)]
pub struct Request {
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
}

/// Where the relations are: models in the target's namespace; sources where they declare.
#[derive(Debug, Clone)]
pub struct Namespace {
    pub database: Option<String>,
    pub schema: String,
}

/// The compiled statement and the names of its output columns, in order: the dimensions as
/// requested, then the metrics as requested.
#[derive(Debug, Clone, PartialEq)]
pub struct Compiled {
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

/// Why a query is refused; `code` is stable (docs/semantic-contracts.md).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct Refusal {
    pub code: &'static str,
    pub message: String,
    pub hint: Option<String>,
}

/// Each refusal code and the exit status `sqb query` ends with: part of the CLI contract.
pub const REFUSAL_CODES: &[(&str, u8)] = &[
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
];

impl Refusal {
    /// The exit status of the refusal's code.
    pub fn exit_status(&self) -> u8 {
        REFUSAL_CODES
            .iter()
            .find(|(c, _)| *c == self.code)
            .map_or(2, |(_, s)| *s)
    }

    fn new(code: &'static str, message: impl Into<String>) -> Self {
        Refusal {
            code,
            message: message.into(),
            hint: None,
        }
    }

    fn from_diagnostic(code: &'static str, diag: &crate::diagnostics::Diagnostic) -> Self {
        Refusal {
            code,
            message: diag.message.clone(),
            hint: diag.hint.clone(),
        }
    }
}

/// Compiles `request` against the project's semantic contracts.
pub fn compile(
    project: &Project,
    namespace: &Namespace,
    request: &Request,
) -> Result<Compiled, Refusal> {
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
    /// Read from a provisional realization.
    provisional: bool,
    /// The provisional realization's rows after the final watermark: the leaf also counts
    /// them (`n`); a group with any is provisional.
    after: Option<String>,
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
}

impl<'a, 'p> Compiler<'a, 'p> {
    fn compile(&self, request: &Request) -> Result<Compiled, Refusal> {
        if request.metrics.is_empty() {
            return Err(Refusal::new("unresolved", "the query names no metric"));
        }
        let mut leaves: Vec<Leaf<'a, 'p>> = Vec::new();
        let mut formulas = Vec::new();
        let mut served = Vec::new();
        for name in &request.metrics {
            let binding = self.metric(name)?;
            access::metric_allowed(self.roles.as_deref(), binding, name)?;
            let first = leaves.len();
            formulas.push(self.formula(binding, &mut leaves)?);
            served.push(self.served_metric(name, binding, &leaves[first..]));
        }
        for d in &request.dimensions {
            for leaf in &leaves {
                let reached = self.dimension(leaf.relation, &self.spanned(d))?;
                access::dimension_allowed(self.roles.as_deref(), &reached, d)?;
            }
        }
        let dimensions: Vec<Spanned<String>> =
            request.dimensions.iter().map(|d| self.spanned(d)).collect();
        let filters: Vec<Spanned<String>> =
            request.filters.iter().map(|f| self.spanned(f)).collect();
        let mut warnings = Vec::new();
        for leaf in &leaves {
            self.native_grain(leaf, &dimensions)?;
            self.required_dimensions(leaf, request, &dimensions, &filters, &mut warnings)?;
            warnings.extend(self.mandatory_warnings(leaf));
        }
        warnings.dedup();
        let mut ctes = Vec::new();
        for (i, leaf) in leaves.iter().enumerate() {
            ctes.push(format!(
                "{} AS (\n{}\n)",
                leaf_name(i),
                self.leaf_sql(leaf, &dimensions, &filters)?
            ));
        }
        let mut columns: Vec<String> = request.dimensions.clone();
        columns.extend(request.metrics.iter().cloned());
        let masks = match leaves.first() {
            Some(leaf) => self.masks(leaf.relation, &dimensions)?,
            None => Vec::new(),
        };
        let sql = self.outer_sql(&ctes, &formulas, &columns, &masks, &leaves, &served);
        let mut said = self.warnings.borrow().clone();
        said.extend(warnings);
        said.dedup();
        Ok(Compiled {
            sql,
            columns,
            warnings: said,
            params: self.scoping.params(),
            metrics: served,
            scoped_reads: self.scoped_reads.take(),
        })
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

    /// The guardrails that govern a leaf (its metric, or its relation's measure) of a kind, in
    /// the query's context (a guardrail without one applies in every context).
    fn governing(
        &self,
        leaf: &Leaf<'a, 'p>,
        kind: &str,
        context: Option<&str>,
    ) -> Vec<&'p Guardrail> {
        self.governing_of(
            leaf.binding,
            leaf.relation.name,
            leaf.measure.map(|m| m.value.as_str()),
            kind,
            context,
        )
    }

    /// The guardrails of a kind governing a metric, or a measure of a relation, in a context.
    fn governing_of(
        &self,
        binding: &'p MetricBinding,
        relation: &str,
        measure: Option<&str>,
        kind: &str,
        context: Option<&str>,
    ) -> Vec<&'p Guardrail> {
        let project: &'p Project = self.project;
        project
            .contracts
            .guardrails
            .iter()
            .filter(|g| g.kind.as_ref().is_some_and(|k| k.value == kind))
            .filter(|g| {
                g.context
                    .as_ref()
                    .is_none_or(|c| Some(c.value.as_str()) == context)
            })
            .filter(|g| match &g.applies_to {
                Some(AppliesTo::Metric(m)) => {
                    resolve::metric(self.metrics, m).is_ok_and(|b| std::ptr::eq(b, binding))
                }
                Some(AppliesTo::Measure {
                    source,
                    measure: governed,
                }) => source.value == relation && measure == Some(governed.value.as_str()),
                None => false,
            })
            .collect()
    }

    /// `required_dimension`: the query groups by the dimension or filters on it, else it is
    /// refused (or, under `severity = "warn"`, served with a warning).
    fn required_dimensions(
        &self,
        leaf: &Leaf<'a, 'p>,
        request: &Request,
        dimensions: &[Spanned<String>],
        filters: &[Spanned<String>],
        warnings: &mut Vec<String>,
    ) -> Result<(), Refusal> {
        for g in self.governing(leaf, "required_dimension", request.context.as_deref()) {
            let Some(required) = &g.dimension else {
                continue;
            };
            let Ok(wanted) = resolve::dimension(self.relations, leaf.relation, required) else {
                continue;
            };
            let same = |r: &Spanned<String>| {
                resolve::dimension(self.relations, leaf.relation, r)
                    .is_ok_and(|d| std::ptr::eq(d.dimension, wanted.dimension))
            };
            let grouped = dimensions.iter().any(same);
            let filtered = filters.iter().any(|f| {
                predicate::parse(self.project, &f.value).is_ok_and(|e| {
                    predicate::column_refs(&e)
                        .iter()
                        .any(|parts| same(&self.spanned(&parts.join("."))))
                })
            });
            if grouped || filtered {
                continue;
            }
            let id = g.id.as_ref().map_or("?", |i| i.value.as_str());
            let message = format!(
                "guardrail `{id}` requires grouping by or filtering on `{}`",
                required.value
            );
            if g.warns() {
                warnings.push(message);
                continue;
            }
            return Err(Refusal {
                code: "guardrail",
                message,
                hint: g.rationale.as_ref().map(|r| r.value.clone()),
            });
        }
        Ok(())
    }

    /// What the `severity = "warn"` mandatory filters of a leaf say: applied, and said.
    fn mandatory_warnings(&self, leaf: &Leaf<'a, 'p>) -> Vec<String> {
        self.governing(leaf, "mandatory_filter", None)
            .into_iter()
            .filter(|g| g.warns())
            .filter_map(|g| {
                let id = g.id.as_ref()?;
                let filter = g.filter.as_ref()?;
                Some(format!(
                    "guardrail `{}` applied `{}`",
                    id.value, filter.value
                ))
            })
            .collect()
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
            let reached = self.dimension(leaf.relation, d)?;
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
            _ => Ok(Formula::Value(self.single(binding, leaves)?)),
        }
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

    /// The `restrict_source` guardrail governing a metric with a finality rule in the query's
    /// context: over the metric, or over its measure on any of its realizations.
    fn restriction(
        &self,
        binding: &'p MetricBinding,
        rule: &'p crate::project::contracts::Finality,
        canonical: &str,
    ) -> Option<&'p Guardrail> {
        let measure = binding
            .canonical
            .as_ref()
            .and_then(|c| c.measure.as_ref())
            .map(|m| m.value.as_str());
        let context = self.context.as_deref()?;
        std::iter::once(canonical)
            .chain(
                rule.realizations
                    .iter()
                    .filter_map(|r| r.source.as_ref().map(|s| s.value.as_str())),
            )
            .find_map(|relation| {
                self.governing_of(binding, relation, measure, "restrict_source", Some(context))
                    .into_iter()
                    .find(|g| g.context.is_some())
            })
    }

    /// The provisional realization's rows after the final one's watermark (all of them when
    /// the final one has no rows yet), over the scoped final relation.
    fn after_watermark(
        &self,
        settled: &'p crate::project::contracts::Realization,
        settled_rel: &Relation<'p>,
        live: &'p crate::project::contracts::Realization,
        live_rel: &Relation<'p>,
        metric: &str,
    ) -> Result<String, Refusal> {
        let (Some(settled_wm), Some(live_wm)) = (&settled.watermark, &live.watermark) else {
            return Err(Refusal {
                code: "unsupported_measure",
                message: format!("metric `{metric}` is coalesced by watermark, and a realization of it declares none"),
                hint: Some("give every realization a `watermark`, or serve the final one alone (`coalescing = \"final_only\"`)".into()),
            });
        };
        let zone = |r: &crate::project::contracts::Realization| {
            r.tz.as_ref()
                .map_or("UTC", |t| t.value.as_str())
                .to_string()
        };
        let instant = |rel: &Relation<'p>, wm: &Spanned<String>| {
            rel.column(&wm.value)
                .and_then(|c| c.ty.as_deref())
                .is_some_and(|t| matches!(t, DataType::Timestamp { tz: true, .. }))
        };
        let comparable = zone(settled) == zone(live)
            || (instant(settled_rel, settled_wm) && instant(live_rel, live_wm));
        if !comparable {
            return Err(Refusal {
                code: "unsupported_measure",
                message: format!("the watermarks of metric `{metric}`'s realizations are in different time zones ({} and {}) and are not both instants", zone(settled), zone(live)),
                hint: Some("make both watermarks TIMESTAMPTZ columns, or declare them in one zone".into()),
            });
        }
        let latest = format!(
            "(SELECT max({}) FROM {} AS \"s\")",
            self.qualified(settled_wm, settled_rel)?,
            self.source_sql(settled_rel)?
        );
        Ok(format!(
            "{} > {latest} OR {latest} IS NULL",
            self.qualified(live_wm, live_rel)?
        ))
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
            "single" | "opaque" | "semi_additive" => {
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
                match self.engine {
                    Engine::Postgres => {
                        format!("percentile_cont({}) WITHIN GROUP (ORDER BY {col})", q.value)
                    }
                    Engine::DuckDb => format!("quantile_cont({col}, {})", q.value),
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
            collapse: match (kind, &c.collapse_dimension, &c.collapse_agg) {
                ("semi_additive", Some(d), Some(agg)) => Some((d, agg.value.as_str())),
                ("semi_additive", _, _) => return Err(unsupported("has no collapse dimension")),
                _ => None,
            },
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
        Ok(match agg {
            "count_distinct" => format!("count(DISTINCT {operand})"),
            "count" => format!("count({operand})"),
            other => format!("{other}({operand})"),
        })
    }

    /// A leaf's query: its dimensions, its aggregate, its filters and the query's.
    fn leaf_sql(
        &self,
        leaf: &Leaf<'a, 'p>,
        dimensions: &[Spanned<String>],
        filters: &[Spanned<String>],
    ) -> Result<String, Refusal> {
        let mut joins: Vec<(Vec<&'p str>, String)> = Vec::new();
        let mut select = Vec::new();
        for (i, reference) in dimensions.iter().enumerate() {
            let reached = self.dimension(leaf.relation, reference)?;
            let expr = self.dimension_sql(leaf.relation, &reached, &mut joins)?;
            select.push(format!("{expr} AS \"d{i}\""));
        }
        let collapse = match leaf.collapse {
            Some((dimension, _)) => {
                Some(self.collapse_sql(leaf.relation, dimension, &mut joins)?)
            }
            None => None,
        };
        if let Some(t) = &collapse {
            select.push(format!("{t} AS \"t\""));
        }
        select.push(format!("{} AS \"v\"", leaf.aggregate));
        let mut predicates = Vec::new();
        if let Some(after) = &leaf.after {
            select.push("count(*) AS \"n\"".to_string());
            predicates.push(after.clone());
        }
        for filter in &leaf.filters {
            predicates.push(self.qualified(filter, leaf.relation)?);
        }
        for filter in filters {
            predicates.push(self.query_filter(leaf.relation, filter, &mut joins)?);
        }
        let mut sql = format!(
            "  SELECT {}\n  FROM {} AS \"s\"",
            select.join(", "),
            self.source_sql(leaf.relation)?
        );
        for (_, join) in &joins {
            let _ = write!(sql, "\n  {join}");
        }
        if !predicates.is_empty() {
            let _ = write!(
                sql,
                "\n  WHERE {}",
                predicates
                    .iter()
                    .map(|p| format!("({p})"))
                    .collect::<Vec<_>>()
                    .join(" AND ")
            );
        }
        let grouped = dimensions.len() + usize::from(collapse.is_some());
        if grouped > 0 {
            let groups: Vec<String> = (1..=grouped).map(|i| i.to_string()).collect();
            let _ = write!(sql, "\n  GROUP BY {}", groups.join(", "));
        }
        Ok(match leaf.collapse {
            Some((_, agg)) => collapsed(&sql, agg, dimensions.len()),
            None => sql,
        })
    }

    /// The collapse dimension's SQL: a dimension of the relation (at its granularity), or a
    /// column of it.
    fn collapse_sql(
        &self,
        relation: &'a Relation<'p>,
        name: &Spanned<String>,
        joins: &mut Vec<(Vec<&'p str>, String)>,
    ) -> Result<String, Refusal> {
        let own = relation
            .semantic
            .is_some_and(|s| s.dimensions.iter().any(|d| d.name.value == name.value));
        if own {
            let reached = self.dimension(relation, name)?;
            return self.dimension_sql(relation, &reached, joins);
        }
        Ok(column_ref("s", &name.value))
    }

    fn dimension(
        &self,
        from: &'a Relation<'p>,
        reference: &Spanned<String>,
    ) -> Result<Reached<'a, 'p>, Refusal> {
        resolve::dimension(self.relations, from, reference).map_err(|d| {
            let code = match d.code {
                crate::diagnostics::Code::QueryAmbiguous if d.message.contains("ways") => {
                    "ambiguous_join_path"
                }
                crate::diagnostics::Code::QueryAmbiguous => "ambiguous",
                crate::diagnostics::Code::QueryUnreachable => "unreachable",
                _ => "unresolved",
            };
            Refusal::from_diagnostic(code, &d)
        })
    }

    /// The SQL of a reached dimension, adding the joins its path needs.
    fn dimension_sql(
        &self,
        from: &Relation<'p>,
        reached: &Reached<'_, 'p>,
        joins: &mut Vec<(Vec<&'p str>, String)>,
    ) -> Result<String, Refusal> {
        let alias = self.join_path(from, &reached.path, joins)?;
        let name = &reached.dimension.column().value;
        let mut column = column_ref(&alias, name);
        let zoned = reached
            .relation
            .column(name)
            .and_then(|c| c.ty.as_deref())
            .is_some_and(|t| matches!(t, DataType::Timestamp { tz: true, .. }));
        // DuckDB truncates a TIMESTAMPTZ only with the ICU extension, which sqb neither bundles
        // nor downloads: the instant is truncated as UTC wall time instead.
        if zoned && self.engine == Engine::DuckDb {
            column = format!("CAST({column} AS TIMESTAMP)");
        }
        // A time dimension is served at its declared granularity unless asked for a coarser one.
        let declared = reached
            .dimension
            .granularity
            .as_ref()
            .map(|g| g.value.as_str());
        Ok(match reached.granularity.or(declared) {
            Some(grain) => format!("date_trunc('{grain}', {column})"),
            None => column,
        })
    }

    /// Joins along `path` from the leaf's relation (`s`), each once; the alias of its end.
    fn join_path(
        &self,
        from: &Relation<'p>,
        path: &[&'p str],
        joins: &mut Vec<(Vec<&'p str>, String)>,
    ) -> Result<String, Refusal> {
        let mut at = from;
        let mut at_alias = "s".to_string();
        for (depth, alias) in path.iter().enumerate() {
            let join = at
                .semantic
                .and_then(|s| s.joins.iter().find(|j| j.alias.value == *alias))
                .ok_or_else(|| {
                    Refusal::new(
                        "unreachable",
                        format!("{} declares no join `{alias}`", at.describe()),
                    )
                })?;
            let relationship = join.relationship.as_ref().map_or("", |r| r.value.as_str());
            if !matches!(relationship, "many_to_one" | "one_to_one") {
                return Err(Refusal {
                    code: "fanout_unsafe",
                    message: format!("join `{alias}` of {} is {}: grouping by what it reaches would count a measure once per matching row", at.describe(), if relationship.is_empty() { "of unknown cardinality" } else { relationship }),
                    hint: Some("group by a dimension reached over many_to_one or one_to_one joins, or declare the metric on the joined relation".into()),
                });
            }
            let target = join
                .to
                .as_ref()
                .and_then(|t| self.relations.get(&t.value))
                .ok_or_else(|| {
                    Refusal::new(
                        "unreachable",
                        format!("join `{alias}` leads to no model or source"),
                    )
                })?;
            let key: Vec<&'p str> = path[..=depth].to_vec();
            let name = format!("j_{}", key.join("_"));
            if !joins.iter().any(|(k, _)| *k == key) {
                let on: Vec<String> = join
                    .on
                    .iter()
                    .map(|(local, remote)| {
                        format!(
                            "{} = {}",
                            column_ref(&at_alias, &local.value),
                            column_ref(&name, &remote.value)
                        )
                    })
                    .collect();
                joins.push((
                    key,
                    format!(
                        "LEFT JOIN {} AS {} ON {}",
                        self.source_sql(target)?,
                        quote(&name),
                        on.join(" AND ")
                    ),
                ));
            }
            at = target;
            at_alias = name;
        }
        Ok(at_alias)
    }

    /// A predicate over the relation's columns, each qualified by the leaf's alias.
    fn qualified(
        &self,
        text: &Spanned<String>,
        relation: &Relation<'p>,
    ) -> Result<String, Refusal> {
        let mut expr = predicate::parse(self.project, &text.value).map_err(|e| {
            Refusal::new(
                "invalid_filter",
                format!("`{}` does not parse: {e}", text.value),
            )
        })?;
        let mut unknown = None;
        let _ = sqlparser::ast::visit_expressions_mut(&mut expr, |e| {
            if let Expr::Identifier(id) = e {
                if relation.column(&id.value).is_none() {
                    unknown = Some(id.value.clone());
                    return std::ops::ControlFlow::Break(());
                }
                *e = Expr::CompoundIdentifier(vec![
                    Ident::with_quote('"', "s"),
                    Ident::with_quote('"', id.value.clone()),
                ]);
            }
            std::ops::ControlFlow::Continue(())
        });
        // A predicate written for one relation, applied to another (a realization) that lacks
        // a column, is refused rather than sent to fail (or match another column) there.
        if let Some(name) = unknown {
            return Err(Refusal::new(
                "invalid_filter",
                format!(
                    "`{}` reads `{name}`, which {} does not declare",
                    text.value,
                    relation.describe()
                ),
            ));
        }
        Ok(expr.to_string())
    }

    /// A filter may name only what the principal may see unmasked: a denied dimension, or a
    /// comparison with a masked column, would tell what the roles hide.
    fn filterable(&self, reached: &Reached<'a, 'p>, asked: &str) -> Result<(), Refusal> {
        access::dimension_allowed(self.roles.as_deref(), reached, asked)?;
        let column = &reached.dimension.column().value;
        match access::mask_of(self.roles.as_deref(), reached.relation.name, column) {
            None => Ok(()),
            Some(strategy) => Err(Refusal {
                code: "forbidden",
                message: format!(
                    "filter names `{asked}`, which the principal sees masked (`{strategy}` of `{}.{column}`): filtering on it would reveal what the mask hides",
                    reached.relation.name
                ),
                hint: Some("filter on another dimension, or ask as a role that sees the column".into()),
            }),
        }
    }

    /// A query filter over dimensions: each reference replaced by the dimension's SQL.
    fn query_filter(
        &self,
        from: &'a Relation<'p>,
        text: &Spanned<String>,
        joins: &mut Vec<(Vec<&'p str>, String)>,
    ) -> Result<String, Refusal> {
        let mut expr = predicate::parse(self.project, &text.value).map_err(|e| {
            Refusal::new(
                "invalid_filter",
                format!("filter `{}` does not parse: {e}", text.value),
            )
        })?;
        let mut failure = None;
        let _ = sqlparser::ast::visit_expressions_mut(&mut expr, |e| {
            let parts: Vec<String> = match e {
                Expr::Identifier(id) => vec![id.value.clone()],
                Expr::CompoundIdentifier(p) => p.iter().map(|i| i.value.clone()).collect(),
                _ => return std::ops::ControlFlow::Continue(()),
            };
            let reference = self.spanned(&parts.join("."));
            let sql = self.dimension(from, &reference).and_then(|r| {
                self.filterable(&r, &reference.value)?;
                self.dimension_sql(from, &r, joins)
            });
            match sql.and_then(|s| {
                predicate::parse(self.project, &s)
                    .map_err(|e| Refusal::new("invalid_filter", e.to_string()))
            }) {
                Ok(replacement) => *e = Expr::Nested(Box::new(replacement)),
                Err(refusal) => {
                    failure = Some(refusal);
                    return std::ops::ControlFlow::Break(());
                }
            }
            std::ops::ControlFlow::Continue(())
        });
        match failure {
            Some(refusal) => Err(refusal),
            None => Ok(expr.to_string()),
        }
    }

    /// A relation as a FROM item: scoped to the principal's tenant before it is joined (so an
    /// outer join keeps its unmatched rows), shared, or refused as undeclared.
    fn source_sql(&self, relation: &Relation<'p>) -> Result<String, Refusal> {
        let table = self.relation_sql(relation);
        let access::Scoping::Scoped { policy, .. } = &self.scoping else {
            return Ok(table);
        };
        let scoped = policy
            .scoped
            .iter()
            .find(|s| s.source.as_ref().is_some_and(|x| x.value == relation.name));
        if let Some(column) = scoped.and_then(|s| s.column.as_ref()) {
            let from = format!(
                "(SELECT * FROM {table} WHERE CAST({} AS VARCHAR) = $1)",
                quote(&column.value)
            );
            let mut reads = self.scoped_reads.borrow_mut();
            if !reads.iter().any(|r| r.from == from) {
                reads.push(ScopedRead {
                    relation: relation.name.to_string(),
                    from: from.clone(),
                    column: column.value.clone(),
                });
            }
            return Ok(from);
        }
        if policy.shared.iter().any(|s| s.value == relation.name) {
            return Ok(table);
        }
        let message = format!(
            "{} is neither scoped nor shared by the tenancy policy",
            relation.describe()
        );
        if policy.warns_undeclared() {
            self.warnings
                .borrow_mut()
                .push(format!("{message}: read unscoped"));
            return Ok(table);
        }
        Err(Refusal {
            code: "undeclared_source",
            message,
            hint: Some("classify it in contracts/policies/tenancy.toml (`scoped_sources` or `shared_sources`)".into()),
        })
    }

    /// The mask each dimension output gets from the principal's roles, if any.
    fn masks(
        &self,
        from: &'a Relation<'p>,
        dimensions: &[Spanned<String>],
    ) -> Result<Vec<Option<String>>, Refusal> {
        dimensions
            .iter()
            .map(|d| {
                let reached = self.dimension(from, d)?;
                Ok(access::mask_of(
                    self.roles.as_deref(),
                    reached.relation.name,
                    &reached.dimension.column().value,
                ))
            })
            .collect()
    }

    fn relation_sql(&self, relation: &Relation<'p>) -> String {
        let (database, schema, table) = match self
            .project
            .source_tables
            .iter()
            .find(|s| s.name.value == relation.name && relation.kind == "source")
        {
            Some(s) => (
                s.database.as_ref().map(|d| d.value.clone()),
                s.schema.as_ref().map_or(String::new(), |x| x.value.clone()),
                s.relation_name().to_string(),
            ),
            None => {
                let model = self.project.model(relation.name);
                let table = model
                    .map_or(relation.name, |m| m.relation_name())
                    .to_string();
                (
                    self.namespace.database.clone(),
                    self.namespace.schema.clone(),
                    table,
                )
            }
        };
        let mut parts: Vec<String> = database.iter().map(|d| quote(d)).collect();
        parts.push(quote(&schema));
        parts.push(quote(&table));
        parts.join(".")
    }

    /// The statement: the leaves as CTEs, their dimension rows joined, each metric's formula.
    fn outer_sql(
        &self,
        ctes: &[String],
        formulas: &[Formula],
        columns: &[String],
        masks: &[Option<String>],
        all: &[Leaf<'a, 'p>],
        served: &[ServedMetric],
    ) -> String {
        let leaves = all.len();
        let dims = masks.len();
        let mut sql = format!("WITH {}", ctes.join(",\n"));
        let value = |part: &Part| match *part {
            Part::Leaf(i) => format!("{}.\"v\"", leaf_name(i)),
            Part::Coalesced { settled, live, how } => finality::combined(
                how,
                &format!("{}.\"v\"", leaf_name(settled)),
                &format!("{}.\"v\"", leaf_name(live)),
            ),
        };
        let metric_sql = |f: &Formula| match f {
            Formula::Value(part) => value(part),
            Formula::Divide {
                numerator,
                denominator,
                on_zero,
                metric,
            } => {
                let (n, d) = (value(numerator), value(denominator));
                let cast = match self.engine {
                    Engine::Postgres => "numeric",
                    Engine::DuckDb => "double",
                };
                match on_zero.as_str() {
                    "zero" => {
                        format!("CASE WHEN {d} = 0 THEN 0 ELSE CAST({n} AS {cast}) / {d} END")
                    }
                    // Postgres raises `division by zero` itself; DuckDB would give NULL.
                    "error" => match self.engine {
                        Engine::Postgres => format!("CAST({n} AS {cast}) / {d}"),
                        Engine::DuckDb => format!(
                            "CASE WHEN {d} = 0 THEN error({}) ELSE CAST({n} AS {cast}) / {d} END",
                            literal(&format!(
                                "division by zero: metric `{metric}` has a zero denominator"
                            ))
                        ),
                    },
                    _ => format!("CAST({n} AS {cast}) / NULLIF({d}, 0)"),
                }
            }
        };
        let mut select: Vec<String> = (0..dims)
            .map(|i| {
                let value = format!("\"k\".\"d{i}\"");
                let shown = match masks[i].as_deref() {
                    Some(strategy) => access::masked(self.engine, strategy, &value),
                    None => value,
                };
                format!("{shown} AS {}", quote(&columns[i]))
            })
            .collect();
        for (f, name) in formulas.iter().zip(&columns[dims..]) {
            select.push(format!("{} AS {}", metric_sql(f), quote(name)));
        }
        for (f, m) in formulas.iter().zip(served) {
            if let Some(flag) = &m.final_flag {
                select.push(format!("{} AS {}", final_sql(f, all), quote(flag)));
            }
        }
        if dims == 0 {
            let from: Vec<String> = (0..leaves).map(leaf_name).collect();
            let _ = write!(
                sql,
                "\nSELECT {}\nFROM {}",
                select.join(", "),
                from.join(" CROSS JOIN ")
            );
            return sql;
        }
        let keys: Vec<String> = (0..dims).map(|i| format!("\"d{i}\"")).collect();
        let unions: Vec<String> = (0..leaves)
            .map(|i| format!("SELECT {} FROM {}", keys.join(", "), leaf_name(i)))
            .collect();
        let _ = write!(
            sql,
            ",\n\"k\" AS (\n  {}\n)\nSELECT {}\nFROM \"k\"",
            unions.join("\n  UNION\n  "),
            select.join(", ")
        );
        for i in 0..leaves {
            let on: Vec<String> = keys
                .iter()
                .map(|k| format!("\"k\".{k} IS NOT DISTINCT FROM {}.{k}", leaf_name(i)))
                .collect();
            let _ = write!(sql, "\nLEFT JOIN {} ON {}", leaf_name(i), on.join(" AND "));
        }
        let order: Vec<String> = (1..=dims).map(|i| i.to_string()).collect();
        let _ = write!(sql, "\nORDER BY {}", order.join(", "));
        sql
    }
}

/// A metric's name, canonical definition and kind; a binding without one is not served.
fn canonical(
    binding: &MetricBinding,
) -> Result<(&str, &crate::project::metrics::Canonical, &str), Refusal> {
    let name = binding.name().map_or("?", |n| n.value.as_str());
    let c = binding.canonical.as_ref().ok_or_else(|| {
        Refusal::new(
            "unsupported_measure",
            format!("metric `{name}` has no canonical definition"),
        )
    })?;
    Ok((name, c, c.kind.as_ref().map_or("", |k| k.value.as_str())))
}

/// A semi-additive leaf: its per-time sums (`sql`, grouped by the dimensions and `t`)
/// collapsed over time — the last or first point of each group, or the average, least or
/// greatest of its points.
fn collapsed(sql: &str, agg: &str, dims: usize) -> String {
    let keys: Vec<String> = (0..dims).map(|i| format!("\"d{i}\"")).collect();
    let partition = match keys.is_empty() {
        true => String::new(),
        false => format!("PARTITION BY {} ", keys.join(", ")),
    };
    let mut out_keys = keys.clone();
    out_keys.push("\"v\"".into());
    match agg {
        "last" | "first" => {
            let order = if agg == "last" { "DESC" } else { "ASC" };
            format!(
                "  SELECT {} FROM (\n  SELECT *, row_number() OVER ({partition}ORDER BY \"t\" {order}) AS \"r\" FROM (\n{sql}\n  ) AS \"p\"\n  ) AS \"q\" WHERE \"r\" = 1",
                out_keys.join(", ")
            )
        }
        other => {
            let group = match keys.is_empty() {
                true => String::new(),
                false => format!(" GROUP BY {}", keys.join(", ")),
            };
            let mut select = keys.clone();
            select.push(format!("{other}(\"v\") AS \"v\""));
            format!(
                "  SELECT {} FROM (\n{sql}\n  ) AS \"p\"{group}",
                select.join(", ")
            )
        }
    }
}

/// Whether a group's value of a metric holds only final rows: no provisional leaf of it read
/// a row there (a leaf reading only a provisional realization never is).
fn final_sql(formula: &Formula, leaves: &[Leaf<'_, '_>]) -> String {
    let parts = match formula {
        Formula::Value(p) => vec![*p],
        Formula::Divide {
            numerator,
            denominator,
            ..
        } => vec![*numerator, *denominator],
    };
    let mut checks = Vec::new();
    for part in parts {
        let used = match part {
            Part::Leaf(i) => vec![i],
            Part::Coalesced { settled, live, .. } => vec![settled, live],
        };
        for i in used {
            match (&leaves[i].after, leaves[i].provisional) {
                (Some(_), _) => checks.push(format!("COALESCE({}.\"n\", 0) = 0", leaf_name(i))),
                (None, true) => checks.push("false".to_string()),
                (None, false) => {}
            }
        }
    }
    match checks.is_empty() {
        true => "true".to_string(),
        false => format!("({})", checks.join(" AND ")),
    }
}

/// A SQL string literal.
fn literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

fn leaf_name(i: usize) -> String {
    format!("\"m{i}\"")
}

impl Compiler<'_, '_> {
    /// A name of the request as the resolver takes it; a request has no file, so its
    /// location is the project file's start (never shown: refusals carry only the text).
    fn spanned(&self, s: &str) -> Spanned<String> {
        Spanned::new(s.to_string(), Loc::file_start(self.project.config.file))
    }
}

/// An identifier, always double-quoted (a column may be named like a keyword).
fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

fn column_ref(alias: &str, column: &str) -> String {
    format!("{}.{}", quote(alias), quote(column))
}
