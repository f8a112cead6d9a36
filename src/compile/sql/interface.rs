//! Enforced upstream contracts and complete source declarations as compile-time interfaces: a
//! column reference that such an upstream does not declare is an error wherever it appears in a SELECT (projection, joins,
//! filters, GROUP BY, HAVING, QUALIFY, windows, ORDER BY), and so is an unqualified reference that more
//! than one relation has. Subqueries and lambdas have scopes of their own and are not looked into.

use sqlparser::ast::{Expr, Ident, Select};

use super::lineage::own_level_columns;
use super::{same_column, stored_name, Issue, Merged, Rel};
use crate::engine::Engine;

struct Checker<'a> {
    rels: &'a [Rel],
    outputs: &'a [String],
    merged: &'a Merged,
    engine: Engine,
    issues: Vec<Issue>,
}

fn position(ident: &Ident) -> Option<(usize, usize)> {
    (ident.span.start.line > 0).then_some((
        ident.span.start.line as usize,
        ident.span.start.column as usize,
    ))
}

impl Checker<'_> {
    fn has(&self, rel: &Rel, name: &str) -> Option<bool> {
        rel.shape
            .as_ref()
            .map(|cols| cols.iter().any(|c| same_column(&c.name, name, self.engine)))
    }

    fn unqualified(&mut self, ident: &Ident) {
        let name = stored_name(ident, self.engine);
        if self
            .outputs
            .iter()
            .any(|o| same_column(o, &name, self.engine))
        {
            return;
        }
        // Unknown shapes may hold the column: nothing is proven then.
        if self.rels.iter().any(|r| r.shape.is_none()) {
            return;
        }
        let holders: Vec<&Rel> = self
            .rels
            .iter()
            .filter(|r| self.has(r, &name) == Some(true))
            .collect();
        match holders.as_slice() {
            [] if self.rels.iter().any(|r| !r.interface.is_empty()) => {
                self.issues.push(Issue::Undeclared {
                    // Every relation's shape is known and none has it: name the interfaces.
                    interfaces: self
                        .rels
                        .iter()
                        .flat_map(|r| r.interface.iter().cloned())
                        .collect(),
                    column: name,
                    position: position(ident),
                })
            }
            [_, _, ..] if !self.merged.has(&name, self.engine) => {
                self.issues.push(Issue::Ambiguous {
                    column: name,
                    relations: holders.iter().map(|r| r.key.clone()).collect(),
                    position: position(ident),
                })
            }
            _ => {}
        }
    }

    fn qualified(&mut self, relation: &Ident, column: &Ident) {
        let key = relation.value.to_lowercase();
        let Some(rel) = self.rels.iter().find(|r| r.key == key) else {
            return;
        };
        let name = stored_name(column, self.engine);
        if !rel.interface.is_empty() && self.has(rel, &name) == Some(false) {
            self.issues.push(Issue::Undeclared {
                interfaces: rel.interface.clone(),
                column: name,
                position: position(column),
            });
        }
    }
}

/// The references of one SELECT (its own level only) and of its query's ORDER BY that break an
/// enforced interface.
pub(super) fn check(
    select: &Select,
    order_by: Option<&[Expr]>,
    rels: &[Rel],
    outputs: &[String],
    merged: &Merged,
    engine: Engine,
) -> Vec<Issue> {
    let mut checker = Checker {
        rels,
        outputs,
        merged,
        engine,
        issues: Vec::new(),
    };
    let mut refs = own_level_columns(select);
    for expr in order_by.unwrap_or_default() {
        refs.extend(own_level_columns(expr));
    }
    for (relation, column) in refs {
        match relation {
            Some(relation) => checker.qualified(&relation, &column),
            None => checker.unqualified(&column),
        }
    }
    checker.issues
}
