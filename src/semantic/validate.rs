//! The checks on semantic declarations: every column, relation and join key they name
//! resolves, and each has a type its use needs. Every problem is reported at the declaration
//! that names it, with a second label at what it relied on.

use super::relation::{is_numeric, is_temporal, needs, resolve_on, Need, Relation, Relations};
use crate::diagnostics::{did_you_mean, Code, Diagnostic};
use crate::engine::Engine;
use crate::project::semantic::{Join, Semantic};
use crate::project::{Column, Project};
use crate::source::Spanned;
use crate::types;

/// The checks of each relation's measures, dimensions, joins and grain.
pub(super) fn check(project: &Project, relations: &Relations<'_>, diags: &mut Vec<Diagnostic>) {
    for relation in relations.iter() {
        let Some(semantic) = relation.semantic else {
            continue;
        };
        let check = Check {
            project,
            engine: project.engine(),
            relation,
            relations,
        };
        check.measures(semantic, diags);
        check.dimensions(semantic, diags);
        check.joins(semantic, diags);
        check.agg_time_dimensions(semantic, diags);
        check.time_spine(semantic, diags);
        if let Some(grain) = &semantic.grain {
            for column in &grain.value {
                check.resolve(column, "the grain", diags);
            }
        }
    }
}

struct Check<'a, 'p> {
    project: &'p Project,
    engine: Engine,
    relation: &'a Relation<'p>,
    relations: &'a Relations<'p>,
}

impl<'p> Check<'_, 'p> {
    /// The declared column `name` names, or an error at it.
    fn resolve(
        &self,
        name: &Spanned<String>,
        what: &str,
        diags: &mut Vec<Diagnostic>,
    ) -> Option<&'p Column> {
        resolve_on(self.relation, name, what, diags)
    }

    fn measures(&self, semantic: &Semantic, diags: &mut Vec<Diagnostic>) {
        for measure in &semantic.measures {
            let what = format!("measure `{}`", measure.name.value);
            let agg = measure.agg.as_ref().map(|a| a.value.as_str());
            match (&measure.column, &measure.expr) {
                (Some(column), Some(expr)) => diags.push(
                    Diagnostic::error(Code::MeasureShape, format!("{what} of {} has both a `column` and an `expr`", self.relation.describe()))
                        .at(expr.loc.clone(), "an expression")
                        .related(column.loc.clone(), "and a column")
                        .hint("a measure aggregates one column or one expression: keep one"),
                ),
                (None, None) if agg != Some("count") => diags.push(
                    Diagnostic::error(Code::MeasureShape, format!("{what} of {} aggregates nothing", self.relation.describe()))
                        .at(measure.name.loc.clone(), "no `column` or `expr`")
                        .hint("name the column it aggregates: `column = \"amount\"` (only `count` may count rows)"),
                ),
                _ => {}
            }
            if let Some(expr) = &measure.expr {
                let what = format!("the expression of {what} of {}", self.relation.describe());
                let snippet = super::predicate::Snippet {
                    text: expr,
                    what: &what,
                    example: "write one SQL expression over the relation's columns, such as \"amount - discount\"",
                    filter: false,
                };
                let mut lookup = super::predicate::on_relation(self.relation, &what);
                let parsed = super::predicate::check(self.project, &snippet, &mut lookup, diags);
                own_row_only(parsed.as_ref(), expr, &what, diags);
            }
            let Some(column) = measure.column.as_ref() else {
                continue;
            };
            let Some(declared) = self.resolve(column, &what, diags) else {
                continue;
            };
            if let Some(agg @ ("sum" | "avg")) = agg {
                let need = Need {
                    what: format!("{what} ({agg}) of {}", self.relation.describe()),
                    expected: "a numeric type",
                    fits: is_numeric,
                    hint: "aggregate a numeric column, or use count, count_distinct, min or max",
                };
                needs(declared, column, &need, diags);
            }
            if agg == Some("sum_boolean") {
                let need = Need {
                    what: format!("{what} (sum_boolean) of {}", self.relation.describe()),
                    expected: "a BOOLEAN type",
                    fits: |t| matches!(t, types::DataType::Boolean),
                    hint: "sum_boolean counts the rows where a BOOLEAN column is true",
                };
                needs(declared, column, &need, diags);
            }
        }
    }

    fn dimensions(&self, semantic: &Semantic, diags: &mut Vec<Diagnostic>) {
        for dimension in &semantic.dimensions {
            let what = format!("dimension `{}`", dimension.name.value);
            if let Some(expr) = &dimension.expr {
                self.dimension_expr(dimension, expr, &what, diags);
                continue;
            }
            let Some(declared) = self.resolve(dimension.column(), &what, diags) else {
                continue;
            };
            if let Some(granularity) = &dimension.granularity {
                let need = Need {
                    what: format!(
                        "{what} (granularity `{}`) of {}",
                        granularity.value,
                        self.relation.describe()
                    ),
                    expected: "a DATE or TIMESTAMP type",
                    fits: is_temporal,
                    hint: "a granularity groups dates and times: drop it, or use a DATE or TIMESTAMP column",
                };
                needs(declared, granularity, &need, diags);
            }
        }
    }

    /// A dimension over an expression: not a column as well, and one SQL expression over the
    /// relation's declared columns (its type is the warehouse's to say: not checked offline).
    fn dimension_expr(
        &self,
        dimension: &crate::project::semantic::Dimension,
        expr: &Spanned<String>,
        what: &str,
        diags: &mut Vec<Diagnostic>,
    ) {
        if let Some(column) = &dimension.column {
            diags.push(
                Diagnostic::error(
                    Code::InvalidValue,
                    format!(
                        "{what} of {} has both a `column` and an `expr`",
                        self.relation.describe()
                    ),
                )
                .at(expr.loc.clone(), "an expression")
                .related(column.loc.clone(), "and a column")
                .hint("a dimension reads one column or one expression: keep one"),
            );
            return;
        }
        let what = format!("the expression of {what} of {}", self.relation.describe());
        let snippet = super::predicate::Snippet {
            text: expr,
            what: &what,
            example: "write one SQL expression over the relation's columns, such as \"cast(ordered_at as date)\"",
            filter: false,
        };
        let mut lookup = super::predicate::on_relation(self.relation, &what);
        let parsed = super::predicate::check(self.project, &snippet, &mut lookup, diags);
        own_row_only(parsed.as_ref(), expr, &what, diags);
    }

    /// `[time_spine]` names a DATE or TIMESTAMP column, on one relation of the project only.
    fn time_spine(&self, semantic: &Semantic, diags: &mut Vec<Diagnostic>) {
        let Some(spine) = &semantic.time_spine else {
            return;
        };
        if let Some((first, _)) = super::relation::time_spine(self.relations)
            .filter(|(r, _)| r.name != self.relation.name)
        {
            diags.push(
                Diagnostic::error(
                    Code::TimeSpine,
                    format!(
                        "{} declares a time spine, and {} declares one already",
                        self.relation.describe(),
                        first.describe()
                    ),
                )
                .at(spine.loc.clone(), "a second time spine")
                .hint("a project has one time spine: keep one `[time_spine]`"),
            );
        }
        for (name, column) in &spine.custom_granularities {
            self.resolve(column, "a custom granularity of the time spine", diags);
            if crate::project::semantic::GRANULARITIES.contains(&name.value.as_str()) {
                diags.push(
                    Diagnostic::error(
                        Code::InvalidValue,
                        format!("the custom granularity `{}` is named like a grain", name.value),
                    )
                    .at(name.loc.clone(), "a standard grain")
                    .hint("name a custom granularity apart from hour, day, week, month, quarter and year"),
                );
            }
        }
        let Some(column) = &spine.column else { return };
        let Some(declared) = self.resolve(column, "the time spine", diags) else {
            return;
        };
        let need = Need {
            what: format!("the time spine of {}", self.relation.describe()),
            expected: "a DATE or TIMESTAMP type",
            fits: is_temporal,
            hint: "a time spine has one row per point of time: name its DATE or TIMESTAMP column",
        };
        needs(declared, column, &need, diags);
    }

    /// Each `agg_time_dimension` (the relation's, and a measure's) names a time dimension of
    /// the relation: one with a granularity.
    fn agg_time_dimensions(&self, semantic: &Semantic, diags: &mut Vec<Diagnostic>) {
        let named = semantic
            .agg_time_dimension
            .iter()
            .map(|t| (t, "the `agg_time_dimension`".to_string()))
            .chain(semantic.measures.iter().filter_map(|m| {
                let t = m.agg_time_dimension.as_ref()?;
                Some((
                    t,
                    format!("the `agg_time_dimension` of measure `{}`", m.name.value),
                ))
            }));
        let times = || {
            semantic
                .dimensions
                .iter()
                .filter(|d| d.granularity.is_some())
                .map(|d| d.name.value.as_str())
        };
        for (time, what) in named {
            let found = semantic
                .dimensions
                .iter()
                .find(|d| d.name.value == time.value);
            let problem = match found {
                Some(d) if d.granularity.is_some() => continue,
                Some(_) => "is a dimension without a `granularity`",
                None => "is no dimension of it",
            };
            let mut diag = Diagnostic::error(
                Code::AggTimeDimension,
                format!(
                    "{what} of {} is `{}`, which {problem}",
                    self.relation.describe(),
                    time.value
                ),
            )
            .at(time.loc.clone(), "not a time dimension of the relation");
            if let Some(d) = found {
                diag = diag.related(d.name.loc.clone(), "declared here without a `granularity`");
            }
            let listed: Vec<String> = times().map(|t| format!("`{t}`")).collect();
            diag = match (did_you_mean(&time.value, times()), listed.is_empty()) {
                (Some(close), _) if found.is_none() => diag.hint(format!("did you mean `{close}`?")),
                (_, true) => diag.hint("declare a `[dimensions.NAME]` with a `granularity` over a DATE or TIMESTAMP column, and name it"),
                (_, false) => diag.hint(format!("name a time dimension: {}", listed.join(", "))),
            };
            diags.push(diag);
        }
    }

    fn joins(&self, semantic: &Semantic, diags: &mut Vec<Diagnostic>) {
        for join in &semantic.joins {
            let Some(to) = &join.to else { continue };
            let Some(target) = self.relations.get(&to.value) else {
                let names = self.relations.iter().map(|r| r.name);
                let mut diag = Diagnostic::error(
                    Code::SemanticUnknownRelation,
                    format!(
                        "join `{}` of {} is to `{}`, which is no model or source",
                        join.alias.value,
                        self.relation.describe(),
                        to.value
                    ),
                )
                .at(to.loc.clone(), "no such model or source");
                diag = match did_you_mean(&to.value, names) {
                    Some(close) => diag.hint(format!("did you mean `{close}`?")),
                    None => diag.hint("name a model (its file stem) or a source of the project"),
                };
                diags.push(diag);
                continue;
            };
            self.join_keys(join, target, diags);
        }
    }

    fn join_keys(&self, join: &Join, target: &Relation<'p>, diags: &mut Vec<Diagnostic>) {
        let what = format!("join `{}`", join.alias.value);
        for (local, remote) in &join.on {
            let mine = self.resolve(local, &what, diags);
            let theirs = resolve_on(target, remote, &what, diags);
            let (Some(mine), Some(theirs)) = (mine, theirs) else {
                continue;
            };
            let (Some(a), Some(b)) = (&mine.ty, &theirs.ty) else {
                continue;
            };
            if types::equivalent(a, b, self.engine) && types::equivalent(b, a, self.engine) {
                continue;
            }
            let (ta, tb) = (mine.type_text.as_ref(), theirs.type_text.as_ref());
            let spelled = |t: Option<&Spanned<std::sync::Arc<str>>>| {
                t.map_or(String::new(), |t| t.value.to_string())
            };
            let mut diag = Diagnostic::error(
                Code::JoinKeyTypes,
                format!(
                    "{what} of {} compares `{}` ({}) with `{}.{}` ({})",
                    self.relation.describe(),
                    local.value,
                    spelled(ta),
                    target.name,
                    remote.value,
                    spelled(tb)
                ),
            )
            .at(local.loc.clone(), format!("{} here", spelled(ta)));
            if let Some(t) = tb {
                diag = diag.related(t.loc.clone(), format!("{} there", t.value));
            }
            diags.push(diag.hint("join keys must have equivalent types: declare both the same, or cast one in its model"));
        }
    }
}

/// A measure's or a dimension's expression reads its own row: one that reads a query of its
/// own is refused.
fn own_row_only(
    parsed: Option<&sqlparser::ast::Expr>,
    expr: &Spanned<String>,
    what: &str,
    diags: &mut Vec<Diagnostic>,
) {
    if parsed.is_some_and(super::predicate::reads_a_query) {
        diags.push(
            Diagnostic::error(
                Code::PredicateInvalid,
                format!("{what} reads a query of its own"),
            )
            .at(expr.loc.clone(), "a subquery")
            .hint(
                "an expression reads its own row's columns; join what it needs in the model's SQL",
            ),
        );
    }
}
