//! The checks on the tenancy and roles policies: scoped relations and their tenant columns
//! exist, with one type, and are never also shared; under `undeclared_source = "deny"` every
//! relation a query can reach is classified; roles resolve what they inherit (acyclically),
//! allow and deny only metrics and dimensions that exist, and mask only columns that resolve —
//! an unresolvable mask is an error, never a silent no-op.
//!
//! [`effective_role`] applies single-parent, field-level inheritance.

use std::collections::HashMap;

use super::metrics::relation;
use super::relation::{needs, resolve_on, Need, Relations};
use super::resolve::{self, Metrics};
use crate::diagnostics::{did_you_mean, Code, Diagnostic, Severity};
use crate::project::policies::{Access, Allow, Mask, Role, Roles, Tenancy};
use crate::project::{Column, Project};
use crate::source::{Loc, Spanned};
use crate::types::{self, DataType};

pub(super) fn check(
    project: &Project,
    relations: &Relations<'_>,
    metrics: &Metrics<'_>,
    diags: &mut Vec<Diagnostic>,
) {
    if let Some(tenancy) = &project.contracts.tenancy {
        tenancy_checks(project, relations, metrics, tenancy, diags);
    }
    if let Some(roles) = &project.contracts.roles {
        roles_checks(project, relations, roles, diags);
    }
}

fn tenancy_checks(
    project: &Project,
    relations: &Relations<'_>,
    metrics: &Metrics<'_>,
    tenancy: &Tenancy,
    diags: &mut Vec<Diagnostic>,
) {
    let what = "the tenancy policy names";
    let mut first: Option<(&Column, &Spanned<String>)> = None;
    for scoped in &tenancy.scoped {
        let Some(source) = scoped.source.as_ref() else {
            continue;
        };
        let Some(r) = relation(relations, source, what, diags) else {
            continue;
        };
        if let Some(shared) = tenancy.shared.iter().find(|s| s.value == source.value) {
            diags.push(
                Diagnostic::error(
                    Code::TenancyOverlap,
                    format!("`{}` is both scoped and shared", source.value),
                )
                .at(source.loc.clone(), "scoped here")
                .related(shared.loc.clone(), "shared here")
                .hint("a relation is either scoped to the tenant or shared by all: keep one"),
            );
        }
        let Some(column) = scoped.column.as_ref() else {
            continue;
        };
        let Some(declared) = resolve_on(
            r,
            column,
            &format!("the tenant column of {}", r.describe()),
            diags,
        ) else {
            continue;
        };
        let need = Need {
            what: format!("the tenant column of {}", r.describe()),
            expected: "a type",
            fits: |_| true,
            hint: "",
        };
        needs(declared, column, &need, diags);
        if declared.is_nullable() {
            diags.push(
                Diagnostic::warning(Code::TenancyColumnNullable, format!("the tenant column `{}` of {} may be NULL", column.value, r.describe()))
                    .at(column.loc.clone(), "nullable")
                    .related(declared.name.loc.clone(), "declared here without `nullable = false`")
                    .hint("a row without a tenant is seen by no tenant: declare the column `nullable = false`"),
            );
        }
        match first {
            None => first = Some((declared, column)),
            Some((other, other_at)) => {
                one_type(project, (other, other_at), (declared, column), diags)
            }
        }
    }
    for shared in &tenancy.shared {
        relation(relations, shared, what, diags);
    }
    unclassified(project, relations, metrics, tenancy, diags);
}

/// Every scoped relation's tenant column has one type.
fn one_type(
    project: &Project,
    first: (&Column, &Spanned<String>),
    other: (&Column, &Spanned<String>),
    diags: &mut Vec<Diagnostic>,
) {
    let ((a, a_at), (b, b_at)) = (first, other);
    let (Some(ta), Some(tb)) = (&a.ty, &b.ty) else {
        return;
    };
    let engine = project.engine();
    if types::equivalent(ta, tb, engine) && types::equivalent(tb, ta, engine) {
        return;
    }
    let spelled = |c: &Column| {
        c.type_text
            .as_ref()
            .map_or(String::new(), |t| t.value.to_string())
    };
    diags.push(
        Diagnostic::error(Code::TenancyColumn, format!("tenant columns differ in type: `{}` is {}, `{}` is {}", a_at.value, spelled(a), b_at.value, spelled(b)))
            .at(b_at.loc.clone(), format!("{} here", spelled(b)))
            .related(a_at.loc.clone(), format!("{} here", spelled(a)))
            .hint("the principal's one tenant value is compared with every scoped column: declare them with one type"),
    );
}

/// Every relation reachable over declared joins from a relation a metric reads is scoped or
/// shared: an error under `undeclared_source = "deny"` (the default), a warning under `warn`.
fn unclassified(
    project: &Project,
    relations: &Relations<'_>,
    metrics: &Metrics<'_>,
    tenancy: &Tenancy,
    diags: &mut Vec<Diagnostic>,
) {
    let classified = |name: &str| {
        tenancy
            .scoped
            .iter()
            .any(|s| s.source.as_ref().is_some_and(|x| x.value == name))
            || tenancy.shared.iter().any(|s| s.value == name)
    };
    let mut starts: Vec<&Spanned<String>> = Vec::new();
    for binding in &project.metrics {
        starts.extend(resolve::leaf_sources(metrics, binding));
    }
    for rule in &project.contracts.finality {
        starts.extend(rule.realizations.iter().filter_map(|r| r.source.as_ref()));
    }
    let mut reported: Vec<&str> = Vec::new();
    for start in starts {
        let Some(from) = relations.get(&start.value) else {
            continue;
        };
        for name in resolve::reachable_names(relations, from) {
            if classified(name) || reported.contains(&name) {
                continue;
            }
            reported.push(name);
            let at = reached_at(relations, name).unwrap_or_else(|| start.loc.clone());
            let (severity, code) = match tenancy.warns_undeclared() {
                true => (Severity::Warning, Code::TenancyUnclassifiedWarn),
                false => (Severity::Error, Code::TenancyUnclassified),
            };
            let message = format!("`{name}` is read by semantic queries but the tenancy policy neither scopes nor shares it");
            let diag = match severity {
                Severity::Warning => Diagnostic::warning(code, message),
                _ => Diagnostic::error(code, message),
            };
            diags.push(
                diag.at(at, "reachable here")
                    .related(Loc::file_start(tenancy.file), "the tenancy policy")
                    .hint(format!("add `{name}` to `scoped_sources` with its tenant column, or to `shared_sources`")),
            );
        }
    }
}

/// Where a relation is reached: a join's `to` naming it, or its own declaration.
fn reached_at(relations: &Relations<'_>, name: &str) -> Option<Loc> {
    let by_join = relations
        .iter()
        .flat_map(|r| r.semantic.into_iter().flat_map(|s| s.joins.iter()))
        .find_map(|j| {
            j.to.as_ref()
                .filter(|t| t.value == name)
                .map(|t| t.loc.clone())
        });
    by_join.or_else(|| {
        relations
            .iter()
            .find(|r| r.name == name)
            .map(|r| r.loc.clone())
    })
}

fn roles_checks(
    project: &Project,
    relations: &Relations<'_>,
    roles: &Roles,
    diags: &mut Vec<Diagnostic>,
) {
    let names: Vec<&str> = roles.roles.iter().map(|r| r.name.value.as_str()).collect();
    let unknown = |name: &Spanned<String>, what: String| {
        let diag = Diagnostic::error(
            Code::UnknownRole,
            format!("{what} `{}`, which roles.toml does not declare", name.value),
        )
        .at(name.loc.clone(), "no such role");
        match did_you_mean(&name.value, names.iter().copied()) {
            Some(close) => diag.hint(format!("did you mean `{close}`?")),
            None => diag.hint(format!("declare it as `[roles.{}]`", name.value)),
        }
    };
    if let Some(default) = &roles.default_role {
        if !names.contains(&default.value.as_str()) {
            diags.push(unknown(default, "`default_role` is".into()));
        }
    }
    for role in &roles.roles {
        if let Some(parent) = &role.inherits {
            if !names.contains(&parent.value.as_str()) {
                diags.push(unknown(
                    parent,
                    format!("role `{}` inherits", role.name.value),
                ));
            }
        }
        for (kind, access) in [("metric", &role.metrics), ("dimension", &role.dimensions)] {
            entries(project, relations, role, kind, access, diags);
        }
        for mask in role.masking.iter().flatten() {
            masked_column(relations, role, mask, diags);
        }
    }
    cycles(roles, diags);
}

/// Every allow and deny entry names an existing metric or dimension.
fn entries(
    project: &Project,
    relations: &Relations<'_>,
    role: &Role,
    kind: &str,
    access: &Access,
    diags: &mut Vec<Diagnostic>,
) {
    let allowed = match &access.allow {
        Some(Allow::Only(list)) => list.value.iter().collect(),
        _ => Vec::new(),
    };
    let denied = access.deny.iter().flat_map(|d| d.value.iter());
    let known: Vec<String> = match kind {
        "metric" => project
            .metrics
            .iter()
            .flat_map(|b| b.name().into_iter().chain(b.aliases.iter()))
            .map(|n| n.value.to_lowercase())
            .collect(),
        _ => relations
            .iter()
            .flat_map(|r| {
                r.semantic.into_iter().flat_map(move |s| {
                    s.dimensions.iter().flat_map(move |d| {
                        [d.name.value.clone(), format!("{}.{}", r.name, d.name.value)]
                    })
                })
            })
            .collect(),
    };
    for entry in allowed.into_iter().chain(denied) {
        if entry.value == "*" {
            continue;
        }
        let exists = match kind {
            "metric" => known.contains(&entry.value.to_lowercase()),
            _ => known.contains(&entry.value),
        };
        if exists {
            continue;
        }
        let diag = Diagnostic::error(
            Code::RoleUnknownEntry,
            format!(
                "role `{}` names {kind} `{}`, which does not exist",
                role.name.value, entry.value
            ),
        )
        .at(entry.loc.clone(), format!("no such {kind}"));
        diags.push(
            match did_you_mean(&entry.value, known.iter().map(String::as_str)) {
                Some(close) => diag.hint(format!("did you mean `{close}`?")),
                None if kind == "metric" => {
                    diag.hint("name a metric bound in contracts/metrics/, or one of its aliases")
                }
                None => diag.hint(
                    "name a dimension declared by a model or source, or `relation.dimension`",
                ),
            },
        );
    }
}

/// A mask's `relation.column` resolves; a `partial` mask needs a string column.
fn masked_column(relations: &Relations<'_>, role: &Role, mask: &Mask, diags: &mut Vec<Diagnostic>) {
    let Some(target) = &mask.column else { return };
    let unresolved = |message: String, hint: String| {
        Diagnostic::error(
            Code::MaskUnresolved,
            format!(
                "role `{}` masks `{}`, {message}",
                role.name.value, target.value
            ),
        )
        .at(target.loc.clone(), "masks nothing")
        .hint(format!(
            "{hint} — an unresolvable mask would leave the data unmasked"
        ))
    };
    let Some((rel, col)) = target.value.split_once('.') else {
        diags.push(unresolved(
            "which is not `relation.column`".into(),
            "write `column = \"customers.email\"`".into(),
        ));
        return;
    };
    let Some(r) = relations.get(rel) else {
        let hint = match did_you_mean(rel, relations.iter().map(|r| r.name)) {
            Some(close) => format!("did you mean `{close}.{col}`?"),
            None => "name a model or source of the project".into(),
        };
        diags.push(unresolved(
            format!("but `{rel}` is no model or source"),
            hint,
        ));
        return;
    };
    let Some(column) = r.column(col) else {
        let hint = match did_you_mean(col, r.columns.iter().map(|c| c.name.value.as_str())) {
            Some(close) => format!("did you mean `{rel}.{close}`?"),
            None => format!(
                "declare the column under [columns.{col}] of {}",
                r.describe()
            ),
        };
        diags.push(
            unresolved(format!("which {} does not declare", r.describe()), hint)
                .related(r.loc.clone(), format!("the columns of {}", r.describe())),
        );
        return;
    };
    if mask.strategy.as_ref().is_some_and(|s| s.value == "partial") {
        let need = Need {
            what: format!("the partial mask of role `{}`", role.name.value),
            expected: "a string type",
            fits: |t| matches!(t, DataType::Varchar(_) | DataType::Char(_) | DataType::Text | DataType::Named(_)),
            hint: "a partial mask keeps the first characters of a string: use `hash` or `null` for other types",
        };
        needs(column, target, &need, diags);
    }
}

/// Inheritance is acyclic: each cycle printed once, in full.
fn cycles(roles: &Roles, diags: &mut Vec<Diagnostic>) {
    let parent: HashMap<&str, &Spanned<String>> = roles
        .roles
        .iter()
        .filter_map(|r| Some((r.name.value.as_str(), r.inherits.as_ref()?)))
        .collect();
    let mut reported: Vec<Vec<&str>> = Vec::new();
    for role in &roles.roles {
        let mut chain = vec![role.name.value.as_str()];
        let mut at = role.name.value.as_str();
        while let Some(next) = parent.get(at) {
            if let Some(from) = chain.iter().position(|c| *c == next.value) {
                let mut cycle: Vec<&str> = chain[from..].to_vec();
                let mut key = cycle.clone();
                key.sort_unstable();
                if !reported.contains(&key) {
                    reported.push(key);
                    cycle.push(&next.value);
                    diags.push(
                        Diagnostic::error(
                            Code::RoleCycle,
                            format!("roles inherit from each other: {}", cycle.join(" → ")),
                        )
                        .at(next.loc.clone(), "closes the cycle")
                        .hint(
                            "a role inherits from one parent; one of these must inherit from none",
                        ),
                    );
                }
                break;
            }
            chain.push(&next.value);
            at = &next.value;
        }
    }
}

/// A role with what it inherits applied: each field the role authors (even as `[]`) replaces
/// its parent's; `None` for an unknown role. A cycle stops the walk where it closes.
pub fn effective_role(roles: &Roles, name: &str) -> Option<Role> {
    let by_name: HashMap<&str, &Role> = roles
        .roles
        .iter()
        .map(|r| (r.name.value.as_str(), r))
        .collect();
    let mut effective = (*by_name.get(name)?).clone();
    let mut seen = vec![name.to_string()];
    let mut parent = effective.inherits.clone();
    while let Some(p) = parent {
        if seen.contains(&p.value) {
            break;
        }
        let Some(role) = by_name.get(p.value.as_str()) else {
            break;
        };
        seen.push(p.value.clone());
        inherit(&mut effective, role);
        parent = role.inherits.clone();
    }
    Some(effective)
}

fn inherit(child: &mut Role, parent: &Role) {
    fn or<T: Clone>(mine: &mut Option<T>, theirs: &Option<T>) {
        if mine.is_none() {
            mine.clone_from(theirs);
        }
    }
    or(&mut child.metrics.allow, &parent.metrics.allow);
    or(&mut child.metrics.deny, &parent.metrics.deny);
    or(&mut child.dimensions.allow, &parent.dimensions.allow);
    or(&mut child.dimensions.deny, &parent.dimensions.deny);
    or(&mut child.allow_tags, &parent.allow_tags);
    or(&mut child.run_sql, &parent.run_sql);
    or(&mut child.tenancy_exempt, &parent.tenancy_exempt);
    or(&mut child.masking, &parent.masking);
}
