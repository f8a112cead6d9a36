//! Resolving the names of a semantic query, offline: metrics by name or alias, dimensions by
//! name, `alias.dimension` (through a declared join) or with a granularity
//! (`order_date.month`), reachable from every source a metric is computed from; MetricFlow's
//! `entity__dimension[__grain]` spelling read as the same.
//!
//! `sqb compile` resolves each assertion's query here, so that an unknown, ambiguous or
//! unreachable name fails in CI without a warehouse.

use std::collections::{HashMap, VecDeque};

use super::relation::{Relation, Relations};
use crate::diagnostics::{did_you_mean, Code, Diagnostic};
use crate::project::metrics::MetricBinding;
use crate::project::semantic::{Dimension, GRANULARITIES};
use crate::project::Project;
use crate::source::Spanned;

/// A name that does not resolve, as the diagnostic that says why (boxed: it is large and
/// rare).
fn fail<T>(diag: Diagnostic) -> Result<T, Box<Diagnostic>> {
    Err(Box::new(diag))
}

/// The metric bindings by lower-cased name and alias, built once for every lookup.
pub(super) struct Metrics<'p> {
    project: &'p Project,
    by_name: HashMap<String, Vec<&'p MetricBinding>>,
}

impl<'p> Metrics<'p> {
    pub fn new(project: &'p Project) -> Self {
        let mut by_name: HashMap<String, Vec<&'p MetricBinding>> = HashMap::new();
        for b in &project.metrics {
            let mut names: Vec<String> = b
                .name()
                .into_iter()
                .chain(&b.aliases)
                .map(|n| n.value.to_lowercase())
                .collect();
            names.dedup();
            for name in names {
                let list = by_name.entry(name).or_default();
                if !list.iter().any(|x| std::ptr::eq(*x, b)) {
                    list.push(b);
                }
            }
        }
        Metrics { project, by_name }
    }
}

/// A metric name or alias resolved: active bindings first, deprecated ones only when no
/// active binding has the name.
pub(super) fn metric<'p>(
    metrics: &Metrics<'p>,
    name: &Spanned<String>,
) -> Result<&'p MetricBinding, Box<Diagnostic>> {
    let project = metrics.project;
    let named = metrics
        .by_name
        .get(&name.value.to_lowercase())
        .map(Vec::as_slice)
        .unwrap_or_default();
    let active: Vec<&MetricBinding> = named.iter().copied().filter(|b| b.is_active()).collect();
    let found = match active.is_empty() {
        true => named.to_vec(),
        false => active,
    };
    match found.as_slice() {
        [one] => Ok(one),
        [] => {
            let names = project
                .metrics
                .iter()
                .filter_map(|b| b.name())
                .map(|n| n.value.as_str());
            let diag = Diagnostic::error(
                Code::QueryUnresolved,
                format!("no metric is named `{}`", name.value),
            )
            .at(name.loc.clone(), "no such metric or alias");
            fail(match did_you_mean(&name.value, names) {
                Some(close) => diag.hint(format!("did you mean `{close}`?")),
                None => {
                    diag.hint("name a metric bound in contracts/metrics/, or one of its aliases")
                }
            })
        }
        several => {
            let mut diag = Diagnostic::error(
                Code::QueryAmbiguous,
                format!("`{}` names {} metrics", name.value, several.len()),
            )
            .at(name.loc.clone(), "ambiguous");
            let mut candidates = Vec::new();
            for b in several {
                if let Some(n) = b.name() {
                    diag = diag.related(n.loc.clone(), format!("metric `{}`", n.value));
                    candidates.push(format!("`{}`", n.value));
                }
            }
            fail(diag.hint(format!("name one of {}", candidates.join(", "))))
        }
    }
}

/// The relations a metric is computed from: its source, or its components' sources.
pub(super) fn leaf_sources<'p>(
    metrics: &Metrics<'p>,
    binding: &'p MetricBinding,
) -> Vec<&'p Spanned<String>> {
    let mut out: Vec<&'p Spanned<String>> = Vec::new();
    for (source, _) in leaves(metrics, binding) {
        if !out.iter().any(|s| s.value == source.value) {
            out.push(source);
        }
    }
    out
}

/// Each relation a metric reads (its components' too) with the measure it aggregates there
/// (none for a metric of a column), each pair once.
pub(super) fn leaves<'p>(
    metrics: &Metrics<'p>,
    binding: &'p MetricBinding,
) -> Vec<(&'p Spanned<String>, Option<&'p Spanned<String>>)> {
    let mut out: Vec<(&'p Spanned<String>, Option<&'p Spanned<String>>)> = Vec::new();
    let mut seen = Vec::new();
    let mut todo = vec![binding];
    while let Some(b) = todo.pop() {
        if seen.iter().any(|s| std::ptr::eq(*s, b)) {
            continue;
        }
        seen.push(b);
        let Some(c) = &b.canonical else { continue };
        if let Some(source) = &c.source {
            let measure = c.measure.as_ref();
            let known = out.iter().any(|(s, m)| {
                s.value == source.value && m.map(|m| &m.value) == measure.map(|m| &m.value)
            });
            if !known {
                out.push((source, measure));
            }
        }
        for component in c.components() {
            if let Ok(next) = metric(metrics, component) {
                todo.push(next);
            }
        }
    }
    out
}

/// A dimension reached from a relation.
pub(super) struct Reached<'a, 'p> {
    /// The join aliases walked, empty for the relation's own dimensions.
    pub path: Vec<&'p str>,
    pub relation: &'a Relation<'p>,
    pub dimension: &'p Dimension,
    pub granularity: Option<&'p str>,
}

impl Reached<'_, '_> {
    /// `alias.dimension`, as a query could name it unambiguously.
    pub fn spelled(&self) -> String {
        let mut parts: Vec<&str> = self.path.clone();
        parts.push(&self.dimension.name.value);
        parts.join(".")
    }
}

/// Every relation reachable over declared joins, each with the shortest alias paths to it
/// (two at most: two shortest paths make an unqualified name ambiguous).
fn reachable<'a, 'p>(
    relations: &'a Relations<'p>,
    from: &'a Relation<'p>,
) -> Vec<(&'a Relation<'p>, Vec<Vec<&'p str>>)> {
    let mut paths: HashMap<&str, (usize, Vec<Vec<&'p str>>)> = HashMap::new();
    let mut order = vec![from.name];
    paths.insert(from.name, (0, vec![Vec::new()]));
    let mut queue = VecDeque::from([from]);
    while let Some(at) = queue.pop_front() {
        let (depth, at_paths) = paths[at.name].clone();
        for join in at.semantic.iter().flat_map(|s| s.joins.iter()) {
            let Some(target) = join.to.as_ref().and_then(|t| relations.get(&t.value)) else {
                continue;
            };
            let extended: Vec<Vec<&'p str>> = at_paths
                .iter()
                .map(|p| {
                    p.iter()
                        .copied()
                        .chain([join.alias.value.as_str()])
                        .collect()
                })
                .collect();
            match paths.get_mut(target.name) {
                None => {
                    paths.insert(target.name, (depth + 1, extended));
                    order.push(target.name);
                    queue.push_back(target);
                }
                Some((d, existing)) if *d == depth + 1 => {
                    for p in extended {
                        if existing.len() < 2 {
                            existing.push(p);
                        }
                    }
                }
                Some(_) => {}
            }
        }
    }
    order
        .into_iter()
        .filter_map(|name| {
            let paths = paths.remove(name).map(|(_, p)| p).unwrap_or_default();
            Some((relations.get(name)?, paths))
        })
        .collect()
}

/// The names of every relation reachable from `from` (itself included).
pub(super) fn reachable_names<'p>(relations: &Relations<'p>, from: &Relation<'p>) -> Vec<&'p str> {
    reachable(relations, from)
        .into_iter()
        .map(|(r, _)| r.name)
        .collect()
}

/// Resolves a dimension reference from `from`: sqb's dotted name, else MetricFlow's
/// double-underscore one. `metric_time` reaches here only where no agg time dimension stands
/// for it (the query compiler reads it as the measure's), and is refused saying so.
pub(super) fn dimension<'a, 'p>(
    relations: &'a Relations<'p>,
    from: &'a Relation<'p>,
    reference: &Spanned<String>,
) -> Result<Reached<'a, 'p>, Box<Diagnostic>> {
    match dotted(relations, from, reference) {
        Err(_) if is_metric_time(&reference.value) => fail(no_metric_time(from, reference)),
        Err(_) if reference.value.contains("__") && !reference.value.contains('.') => {
            metricflow(relations, from, reference)
        }
        resolved => resolved,
    }
}

/// `metric_time`, `metric_time.month`, `metric_time__month`.
fn is_metric_time(reference: &str) -> bool {
    metric_time_grain(reference).is_some()
}

/// The grain of a `metric_time` reference: `Some(None)` for `metric_time` itself,
/// `Some(Some("month"))` for `metric_time.month` and `metric_time__month`.
fn metric_time_grain(reference: &str) -> Option<Option<&str>> {
    let rest = reference.strip_prefix("metric_time")?;
    match rest {
        "" => Some(None),
        _ => rest
            .strip_prefix('.')
            .or_else(|| rest.strip_prefix("__"))
            .map(Some),
    }
}

/// The time dimension `metric_time` is for an aggregate of `measure` (none for a metric that
/// reads a column) on `from`: the measure's `agg_time_dimension`, else the relation's.
pub(super) fn agg_time<'p>(
    from: &Relation<'p>,
    measure: Option<&str>,
) -> Option<&'p Spanned<String>> {
    let semantic = from.semantic?;
    measure
        .and_then(|m| semantic.measures.iter().find(|x| x.name.value == m))
        .and_then(|m| m.agg_time_dimension.as_ref())
        .or(semantic.agg_time_dimension.as_ref())
}

/// MetricFlow's `metric_time` (`metric_time`, `metric_time.month`, `metric_time__month`) as
/// the agg time dimension of `measure` on `from`, at that grain. Any other reference, and
/// `metric_time` where no agg time dimension stands for it ([`dimension`] refuses it, saying
/// so), as it is.
pub(super) fn metric_time(
    relations: &Relations<'_>,
    from: &Relation<'_>,
    measure: Option<&str>,
    reference: &Spanned<String>,
) -> Result<Spanned<String>, Box<Diagnostic>> {
    let (Some(grain), Some(time)) = (metric_time_grain(&reference.value), agg_time(from, measure))
    else {
        return Ok(reference.clone());
    };
    let value = match grain {
        Some(g) if grain_of(relations, g).is_none() => {
            return fail(
                Diagnostic::error(
                    Code::QueryUnresolved,
                    format!(
                        "`{}` asks for the grain `{g}`, which is none",
                        reference.value
                    ),
                )
                .at(reference.loc.clone(), "no such grain")
                .hint(format!("a grain is one of {}", GRANULARITIES.join(", "))),
            )
        }
        Some(g) => format!("{}.{g}", time.value),
        None => time.value.clone(),
    };
    Ok(Spanned::new(value, reference.loc.clone()))
}

/// MetricFlow's spelling of a group-by item, `entity__...__dimension[__grain]`, read as sqb's:
/// each entity a join of that name (`customer__segment` is `customer.segment`), a leading
/// entity that is the relation's own key column left out (`order_id__status` is `status`,
/// as MetricFlow reads the measure's own entity), a last part that is a granularity
/// (`ordered_at__month` is `ordered_at.month`).
fn metricflow<'a, 'p>(
    relations: &'a Relations<'p>,
    from: &'a Relation<'p>,
    reference: &Spanned<String>,
) -> Result<Reached<'a, 'p>, Box<Diagnostic>> {
    let parts: Vec<&str> = reference.value.split("__").collect();
    let spelled = |parts: &[&str]| Spanned {
        value: parts.join("."),
        loc: reference.loc.clone(),
    };
    let first = dotted(relations, from, &spelled(&parts));
    // The relation's own entity: a key column, or the dimension the import writes for it.
    let own_entity = parts.len() > 1
        && (from.column(parts[0]).is_some()
            || from
                .semantic
                .is_some_and(|s| s.dimensions.iter().any(|d| d.name.value == parts[0])))
        && !from
            .semantic
            .iter()
            .flat_map(|s| s.joins.iter())
            .any(|j| j.alias.value == parts[0]);
    match first {
        Err(_) if own_entity => dotted(relations, from, &spelled(&parts[1..])),
        resolved => resolved,
    }
}

/// Why `metric_time` is no dimension here (the relation names no agg time dimension), and
/// what to declare or group by instead.
fn no_metric_time(from: &Relation<'_>, reference: &Spanned<String>) -> Diagnostic {
    let times: Vec<String> = from
        .semantic
        .iter()
        .flat_map(|s| s.dimensions.iter())
        .filter_map(|d| {
            let grain = &d.granularity.as_ref()?.value;
            Some(format!("`{}.{grain}`", d.name.value))
        })
        .collect();
    let diag = Diagnostic::error(
        Code::QueryUnresolved,
        format!(
            "`{}` is the time of each measure, and {} names no `agg_time_dimension` for the \
             measure asked",
            reference.value,
            from.describe()
        ),
    )
    .at(reference.loc.clone(), "no time for this measure");
    match times.is_empty() {
        true => diag.hint(format!("{} declares no time dimension", from.describe())),
        false => diag.hint(format!(
            "declare `agg_time_dimension` in its sidecar, or group by one of its time \
             dimensions: {}",
            times.join(", ")
        )),
    }
}

/// Resolves sqb's dotted name: `dim`, `alias[.alias...].dim`, either with a granularity.
fn dotted<'a, 'p>(
    relations: &'a Relations<'p>,
    from: &'a Relation<'p>,
    reference: &Spanned<String>,
) -> Result<Reached<'a, 'p>, Box<Diagnostic>> {
    let parts: Vec<&str> = reference.value.split('.').collect();
    let direct = by_parts(relations, from, &parts, reference);
    let grain = parts
        .last()
        .filter(|_| parts.len() > 1)
        .and_then(|g| grain_of(relations, g));
    match (direct, grain) {
        (Ok(found), _) => Ok(found),
        (Err(first), Some(grain)) => {
            let mut found = by_parts(relations, from, &parts[..parts.len() - 1], reference)
                .map_err(|_| first)?;
            check_granularity(relations, &found, grain, reference)?;
            found.granularity = Some(grain);
            Ok(found)
        }
        (Err(e), None) => Err(e),
    }
}

/// A grain by its name: a standard one, or a custom granularity of the project's time spine.
pub(super) fn grain_of<'p>(relations: &Relations<'p>, grain: &str) -> Option<&'p str> {
    GRANULARITIES
        .iter()
        .copied()
        .find(|g| *g == grain)
        .or_else(|| custom_grain(relations, grain).map(|(name, _)| name))
}

/// A custom granularity of the project's time spine: its name and the spine's column.
pub(super) fn custom_grain<'p>(
    relations: &Relations<'p>,
    grain: &str,
) -> Option<(&'p str, &'p str)> {
    let (_, spine) = super::relation::time_spine(relations)?;
    spine
        .custom_granularities
        .iter()
        .find(|(name, _)| name.value == grain)
        .map(|(name, column)| (name.value.as_str(), column.value.as_str()))
}

/// A requested granularity is that of a time dimension, and not finer than the declared one.
fn check_granularity(
    relations: &Relations<'_>,
    found: &Reached<'_, '_>,
    grain: &str,
    reference: &Spanned<String>,
) -> Result<(), Box<Diagnostic>> {
    let name = &found.dimension.name.value;
    let Some(declared) = &found.dimension.granularity else {
        return fail(
            Diagnostic::error(
                Code::QueryUnresolved,
                format!("dimension `{name}` has no granularity to group `{grain}` by"),
            )
            .at(reference.loc.clone(), "not a time dimension")
            .related(
                found.dimension.name.loc.clone(),
                "declared here without a `granularity`",
            )
            .hint(format!(
                "group by `{name}` itself, or declare its `granularity`"
            )),
        );
    };
    let rank = |g: &str| GRANULARITIES.iter().position(|x| *x == g);
    // A custom granularity is read from the time spine's points, at the spine's grain.
    let asked = match custom_grain(relations, grain) {
        Some(_) => super::relation::time_spine(relations).and_then(|(_, s)| rank(s.granularity())),
        None => rank(grain),
    };
    if asked < rank(&declared.value) {
        return fail(
            Diagnostic::error(
                Code::QueryUnresolved,
                format!(
                    "dimension `{name}` is by {}, finer than `{grain}` cannot be served",
                    declared.value
                ),
            )
            .at(
                reference.loc.clone(),
                format!("finer than {}", declared.value),
            )
            .related(declared.loc.clone(), "its granularity")
            .hint(format!("group by `{name}.{}` or coarser", declared.value)),
        );
    }
    Ok(())
}

/// Among the joins of `at` that reach entity `entity` (by their `entity`, else their alias),
/// the one whose relation has dimension `name`, when the entity has several joins (MetricFlow
/// resolves an entity through whichever semantic model holds the dimension). The join named
/// `entity` itself decides when its relation has the dimension; else two that have it are
/// ambiguous; none, or a single join, leave the alias to decide.
fn by_entity<'p>(
    relations: &Relations<'p>,
    at: &Relation<'p>,
    entity: &str,
    name: &str,
    reference: &Spanned<String>,
) -> Result<Option<&'p crate::project::semantic::Join>, Box<Diagnostic>> {
    let joins: Vec<&'p crate::project::semantic::Join> = at
        .semantic
        .iter()
        .flat_map(|s| s.joins.iter())
        .filter(|j| j.entity() == entity)
        .collect();
    if joins.len() < 2 {
        return Ok(None);
    }
    let holds = |j: &crate::project::semantic::Join| {
        j.to.as_ref()
            .and_then(|to| relations.get(&to.value))
            .and_then(|r| r.semantic)
            .is_some_and(|s| s.dimensions.iter().any(|d| d.name.value == name))
    };
    // The join the name is the alias of decides, when its relation has the dimension.
    if joins.iter().any(|j| j.alias.value == entity && holds(j)) {
        return Ok(None);
    }
    let holding: Vec<&'p crate::project::semantic::Join> =
        joins.into_iter().filter(|j| holds(j)).collect();
    match holding.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(one)),
        several => {
            let aliases: Vec<String> = several
                .iter()
                .map(|j| format!("`{}.{name}`", j.alias.value))
                .collect();
            fail(
                Diagnostic::error(
                    Code::QueryAmbiguous,
                    format!(
                        "dimension `{name}` of entity `{entity}` is reachable from {} {} ways",
                        at.describe(),
                        several.len()
                    ),
                )
                .at(reference.loc.clone(), "more than one join reaches it")
                .hint(format!("name the join: {}", aliases.join(" or "))),
            )
        }
    }
}

/// `dim`, or `alias[.alias...].dim` through declared joins.
fn by_parts<'a, 'p>(
    relations: &'a Relations<'p>,
    from: &'a Relation<'p>,
    parts: &[&str],
    reference: &Spanned<String>,
) -> Result<Reached<'a, 'p>, Box<Diagnostic>> {
    let (name, aliases) = parts.split_last().unwrap_or((&"", &[]));
    if aliases.is_empty() {
        return unqualified(relations, from, name, reference);
    }
    let mut at = from;
    let mut path = Vec::new();
    for (depth, alias) in aliases.iter().enumerate() {
        let last = depth + 1 == aliases.len();
        let join = match last {
            true => by_entity(relations, at, alias, name, reference)?,
            false => None,
        }
        .or_else(|| {
            at.semantic
                .iter()
                .flat_map(|s| s.joins.iter())
                .find(|j| j.alias.value == *alias)
        });
        let target = join.and_then(|j| {
            let to = j.to.as_ref()?;
            relations.get(&to.value)
        });
        let (Some(join), Some(target)) = (join, target) else {
            let aliases = at
                .semantic
                .iter()
                .flat_map(|s| s.joins.iter())
                .map(|j| j.alias.value.as_str());
            let diag = Diagnostic::error(
                Code::QueryUnresolved,
                format!(
                    "`{}` names join `{alias}`, which {} does not declare",
                    reference.value,
                    at.describe()
                ),
            )
            .at(reference.loc.clone(), "no such join")
            .related(at.loc.clone(), format!("the joins of {}", at.describe()));
            return fail(match did_you_mean(alias, aliases) {
                Some(close) => diag.hint(format!("did you mean `{close}`?")),
                None => diag.hint(format!(
                    "declare it under [joins.{alias}] of {}",
                    at.describe()
                )),
            });
        };
        path.push(join.alias.value.as_str());
        at = target;
    }
    let own = at
        .semantic
        .iter()
        .flat_map(|s| s.dimensions.iter())
        .find(|d| d.name.value == *name);
    match own {
        Some(dimension) => Ok(Reached {
            path,
            relation: at,
            dimension,
            granularity: None,
        }),
        None => fail(unknown(relations, at, name, reference)),
    }
}

/// An unqualified dimension: the relation's own first, else the one reachable relation that
/// declares it.
fn unqualified<'a, 'p>(
    relations: &'a Relations<'p>,
    from: &'a Relation<'p>,
    name: &str,
    reference: &Spanned<String>,
) -> Result<Reached<'a, 'p>, Box<Diagnostic>> {
    let mut found: Vec<Reached<'a, 'p>> = Vec::new();
    for (relation, paths) in reachable(relations, from) {
        let Some(dimension) = relation
            .semantic
            .iter()
            .flat_map(|s| s.dimensions.iter())
            .find(|d| d.name.value == name)
        else {
            continue;
        };
        if paths.first().is_some_and(|p| p.is_empty()) {
            return Ok(Reached {
                path: Vec::new(),
                relation,
                dimension,
                granularity: None,
            });
        }
        for path in paths {
            found.push(Reached {
                path,
                relation,
                dimension,
                granularity: None,
            });
        }
    }
    if found.len() == 1 {
        return Ok(found.remove(0));
    }
    if found.is_empty() {
        return fail(unknown(relations, from, name, reference));
    }
    let candidates: Vec<String> = found.iter().map(|f| format!("`{}`", f.spelled())).collect();
    let mut diag = Diagnostic::error(
        Code::QueryAmbiguous,
        format!(
            "dimension `{name}` is reachable from {} {} ways",
            from.describe(),
            found.len()
        ),
    )
    .at(reference.loc.clone(), "ambiguous");
    for f in &found {
        diag = diag.related(f.dimension.name.loc.clone(), format!("`{}`", f.spelled()));
    }
    fail(diag.hint(format!(
        "name it through its join: {}",
        candidates.join(" or ")
    )))
}

/// A dimension not found: unreachable when some relation declares it, else unknown.
fn unknown(
    relations: &Relations<'_>,
    from: &Relation<'_>,
    name: &str,
    reference: &Spanned<String>,
) -> Diagnostic {
    let elsewhere = relations.iter().find_map(|r| {
        Some((
            r,
            r.semantic?
                .dimensions
                .iter()
                .find(|d| d.name.value == name)?,
        ))
    });
    if let Some((relation, dimension)) = elsewhere {
        return Diagnostic::error(
            Code::QueryUnreachable,
            format!(
                "dimension `{name}` of {} is not reachable from {}",
                relation.describe(),
                from.describe()
            ),
        )
        .at(reference.loc.clone(), "unreachable over the declared joins")
        .related(dimension.name.loc.clone(), "declared here")
        .hint(format!(
            "declare a join from {} that leads to {}",
            from.describe(),
            relation.describe()
        ));
    }
    let names: Vec<&str> = reachable(relations, from)
        .into_iter()
        .flat_map(|(r, _)| r.semantic.into_iter().flat_map(|s| s.dimensions.iter()))
        .map(|d| d.name.value.as_str())
        .collect();
    let diag = Diagnostic::error(
        Code::QueryUnresolved,
        format!("no dimension is named `{name}`"),
    )
    .at(reference.loc.clone(), "no such dimension");
    match did_you_mean(name, names.iter().copied()) {
        Some(close) => diag.hint(format!("did you mean `{close}`?")),
        None => diag.hint(format!(
            "declare it under [dimensions.{name}] of {} or of a relation it joins",
            from.describe()
        )),
    }
}
