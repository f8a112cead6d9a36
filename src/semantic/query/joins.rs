//! Join planning: each requested dimension reached from a leaf's relation over declared joins
//! that match at most one row (`metric_time` as the leaf's own time dimension), the filters
//! qualified to the relations they name.

#[allow(clippy::wildcard_imports)]
use super::*;

impl<'a, 'p> Compiler<'a, 'p> {
    pub(super) fn dimension(
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

    /// A dimension reference as it reads from a leaf: `metric_time` is the leaf's time.
    pub(super) fn leaf_dimension(
        &self,
        leaf: &Leaf<'a, 'p>,
        reference: &Spanned<String>,
    ) -> Result<Reached<'a, 'p>, Refusal> {
        self.dimension(leaf.relation, &self.metric_time(leaf, reference)?)
    }

    /// MetricFlow's `metric_time` (`metric_time`, `metric_time.month`, `metric_time__month`)
    /// as the leaf's agg time dimension at that grain: its measure's `agg_time_dimension`,
    /// else its relation's. Any other reference, and `metric_time` on a relation that names
    /// no agg time dimension (the resolver refuses it, saying so), as it is.
    pub(super) fn metric_time(
        &self,
        leaf: &Leaf<'a, 'p>,
        reference: &Spanned<String>,
    ) -> Result<Spanned<String>, Refusal> {
        let measure = leaf.measure.map(|m| m.value.as_str());
        resolve::metric_time(self.relations, leaf.relation, measure, reference)
            .map_err(|d| Refusal::from_diagnostic("unresolved", &d))
    }

    /// Joins along `path` from the leaf's relation (`s`), each once; the alias of its end.
    pub(super) fn join_path(
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
    pub(super) fn qualified(
        &self,
        text: &Spanned<String>,
        relation: &Relation<'p>,
    ) -> Result<String, Refusal> {
        self.qualified_as(text, relation, "s")
    }

    /// A SQL snippet over `relation`'s columns, each qualified with `alias`.
    pub(super) fn qualified_as(
        &self,
        text: &Spanned<String>,
        relation: &Relation<'p>,
        alias: &str,
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
                    Ident::with_quote('"', alias),
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
    pub(super) fn filterable(&self, reached: &Reached<'a, 'p>, asked: &str) -> Result<(), Refusal> {
        access::dimension_allowed(self.roles.as_deref(), reached, asked)?;
        for column in access::columns_read(self.project, reached) {
            if let Some(strategy) =
                access::mask_of(self.roles.as_deref(), reached.relation.name, &column)
            {
                return Err(Refusal {
                    code: "forbidden",
                    message: format!(
                        "filter names `{asked}`, which the principal sees masked (`{strategy}` of `{}.{column}`): filtering on it would reveal what the mask hides",
                        reached.relation.name
                    ),
                    hint: Some("filter on another dimension, or ask as a role that sees the column".into()),
                });
            }
        }
        Ok(())
    }

    /// A filter parsed, and held to the filter language (`semantic::filter`).
    pub(super) fn in_filter_language(&self, text: &Spanned<String>) -> Result<Expr, Refusal> {
        filter::parse(&text.value, self.engine).map_err(|refused| {
            Refusal::new(
                "invalid_filter",
                format!("filter `{}`: {refused}", text.value),
            )
        })
    }

    /// A query's filter (or a metric's over dimensions) in the language, with its
    /// `metric(name, entity)` calls.
    pub(super) fn in_query_filter_language(&self, text: &Spanned<String>) -> Result<Expr, Refusal> {
        filter::parse_query(&text.value, self.engine).map_err(|refused| {
            Refusal::new(
                "invalid_filter",
                format!("filter `{}`: {refused}", text.value),
            )
        })
    }

    /// A query filter over dimensions: each reference replaced by the dimension's SQL, each
    /// `metric(name, entity)` by the metric's value for the row's entity.
    pub(super) fn query_filter(
        &self,
        leaf: &Leaf<'a, 'p>,
        text: &Spanned<String>,
        joins: &mut Vec<(Vec<&'p str>, String)>,
    ) -> Result<String, Refusal> {
        let mut expr = self.in_query_filter_language(text)?;
        if predicate::column_refs(&expr)
            .iter()
            .flatten()
            .any(|p| p.starts_with(METRIC_VALUE))
        {
            return Err(Refusal::new(
                "invalid_filter",
                format!(
                    "filter `{}` names `{METRIC_VALUE}…`, which sqb keeps for itself",
                    text.value
                ),
            ));
        }
        let mut failure = None;
        let mut values = Vec::new();
        let _ = sqlparser::ast::visit_expressions_mut(&mut expr, |e| {
            let Expr::Function(f) = e else {
                return std::ops::ControlFlow::Continue(());
            };
            let Some((metric, entity)) = filter::metric_call(f) else {
                return std::ops::ControlFlow::Continue(());
            };
            match self.metric_in_filter(leaf, &metric, &entity, joins) {
                Ok(sql) => {
                    *e = Expr::Identifier(Ident::new(format!("{METRIC_VALUE}{}__", values.len())));
                    values.push(sql);
                    std::ops::ControlFlow::Continue(())
                }
                Err(refusal) => {
                    failure = Some(refusal);
                    std::ops::ControlFlow::Break(())
                }
            }
        });
        if let Some(refusal) = failure {
            return Err(refusal);
        }
        let _ = sqlparser::ast::visit_expressions_mut(&mut expr, |e| {
            let parts: Vec<String> = match e {
                Expr::Identifier(id) if id.value.starts_with(METRIC_VALUE) => {
                    return std::ops::ControlFlow::Continue(())
                }
                Expr::Identifier(id) => vec![id.value.clone()],
                Expr::CompoundIdentifier(p) => p.iter().map(|i| i.value.clone()).collect(),
                _ => return std::ops::ControlFlow::Continue(()),
            };
            let reference = self.spanned(&parts.join("."));
            let sql = self.leaf_dimension(leaf, &reference).and_then(|r| {
                self.filterable(&r, &reference.value)?;
                self.dimension_sql(leaf.relation, &r, joins)
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
        if let Some(refusal) = failure {
            return Err(refusal);
        }
        let mut sql = expr.to_string();
        for (i, value) in values.iter().enumerate() {
            sql = sql.replace(&format!("{METRIC_VALUE}{i}__"), value);
        }
        Ok(sql)
    }

    /// `metric(name, entity)` in a filter: the metric asked on its own, grouped by the entity,
    /// LEFT JOINed to the leaf's rows on the entity's key (NULL where the key has no value of
    /// it), as MetricFlow joins a metric in a filter; its SQL is the joined value.
    fn metric_in_filter(
        &self,
        leaf: &Leaf<'a, 'p>,
        metric: &str,
        entity: &str,
        joins: &mut Vec<(Vec<&'p str>, String)>,
    ) -> Result<String, Refusal> {
        let binding = self.metric(metric)?;
        let name = binding.name().map_or("", |n| n.value.as_str());
        let reached = self.leaf_dimension(leaf, &self.spanned(entity))?;
        self.filterable(&reached, entity)?;
        let mut key: Vec<&'p str> = vec!["#metric", name];
        key.extend(reached.path.iter().copied());
        key.push(reached.dimension.name.value.as_str());
        if let Some(i) = joins.iter().position(|(k, _)| *k == key) {
            return Ok(column_ref(&format!("g{i}"), metric));
        }
        let own = self.dimension_sql(leaf.relation, &reached, joins)?;
        if self.nested.get() >= 3 {
            return Err(Refusal::new(
                "invalid_filter",
                format!("`metric({metric}, {entity})` is in a filter of a metric read by a filter three times over: sqb nests metric filters no deeper"),
            ));
        }
        self.nested.set(self.nested.get() + 1);
        let sub = self.compile(&QueryRequest {
            metrics: vec![metric.to_string()],
            dimensions: vec![entity.to_string()],
            context: self.context.clone(),
            ..QueryRequest::default()
        });
        self.nested.set(self.nested.get() - 1);
        let sub = sub.map_err(|r| Refusal {
            message: format!("the filter's `metric({metric}, {entity})`: {}", r.message),
            ..r
        })?;
        self.scoped_reads.borrow_mut().extend(sub.scoped_reads);
        let mut warnings = self.warnings.borrow_mut();
        for w in sub.warnings {
            if !warnings.contains(&w) {
                warnings.push(w);
            }
        }
        let alias = format!("g{}", joins.len());
        let indented = sub.sql.replace('\n', "\n    ");
        joins.push((
            key,
            format!(
                "LEFT JOIN (\n    {indented}\n  ) AS {} ON {} = {own}",
                quote(&alias),
                column_ref(&alias, entity)
            ),
        ));
        Ok(column_ref(&alias, metric))
    }
}

/// The placeholder a filter's metric value stands as between the passes that resolve it.
const METRIC_VALUE: &str = "__sqb_metric_";
