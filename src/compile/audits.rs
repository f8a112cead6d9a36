//! Audits that cannot run are compile errors, located at the audit: an unknown name (E089),
//! or a missing, mistyped or unknown argument, a `relationships` to nothing, a `where` or an
//! `expression` that is not one SQL expression (E090). A check sqb cannot run is never
//! skipped at run time.

use crate::audit::spec::{parse, parse_relation, Check, Spec, SpecError, RELATION_NAMES};
use crate::diagnostics::{Code, Diagnostic};
use crate::project::{Audit, Column, Project};

pub fn check(project: &Project, diags: &mut Vec<Diagnostic>) {
    let columns = project
        .models
        .iter()
        .flat_map(|m| m.columns.iter())
        .chain(project.source_tables.iter().flat_map(|s| s.columns.iter()))
        .chain(project.schemas.values().flat_map(|s| s.columns.iter()));
    for column in columns {
        for audit in column.docs.iter().flat_map(|d| d.audits.iter()) {
            if let Some(d) = check_one(project, column, audit) {
                diags.push(d);
            }
        }
    }
    let own = project
        .models
        .iter()
        .map(|m| {
            (
                m.name.as_str(),
                m.props.audits.as_deref().unwrap_or_default(),
            )
        })
        .chain(
            project
                .source_tables
                .iter()
                .map(|s| (s.name.value.as_str(), s.audits.as_slice())),
        );
    for (owner, audits) in own {
        for audit in audits {
            if let Some(d) = check_relation(project, owner, audit) {
                diags.push(d);
            }
        }
    }
}

/// An audit of a whole relation (a model's or a source's own `audits`).
fn check_relation(project: &Project, owner: &str, audit: &Audit) -> Option<Diagnostic> {
    let spec = match parse_relation(audit) {
        Ok(spec) => spec,
        Err(SpecError::Unknown(close)) => {
            let d = Diagnostic::error(
                Code::UnknownAudit,
                format!(
                    "`{owner}` has an audit sqb cannot run on a relation: `{}`",
                    audit.name
                ),
            )
            .at(audit.loc.clone(), "unknown audit");
            if crate::audit::spec::NAMES.contains(&audit.name.as_str()) {
                return Some(d.hint(format!(
                    "`{}` checks one column: declare it in that column's `audits` (for several columns together: unique_combination_of_columns)",
                    audit.name
                )));
            }
            return Some(match close {
                Some(close) => d.hint(format!("did you mean `{close}`?")),
                None => d.hint(format!(
                    "a relation's own audits are {}; column audits go under [columns.NAME] (docs/audits.md)",
                    RELATION_NAMES.iter().filter(|n| !n.contains('.')).copied().collect::<Vec<_>>().join(", ")
                )),
            });
        }
        Err(SpecError::Argument(why)) => return Some(argument(&format!("`{owner}`"), audit, why)),
    };
    snippets(project, &format!("`{owner}`"), audit, &spec)
}

fn check_one(project: &Project, column: &Column, audit: &Audit) -> Option<Diagnostic> {
    let name = &column.name.value;
    let spec = match parse(audit, name) {
        Ok(spec) => spec,
        Err(SpecError::Unknown(close)) => {
            let d = Diagnostic::error(
                Code::UnknownAudit,
                format!(
                    "column `{name}` has an audit sqb cannot run: `{}`",
                    audit.name
                ),
            )
            .at(audit.loc.clone(), "unknown audit");
            return Some(match close {
                Some(close) => d.hint(format!("did you mean `{close}`?")),
                None => d.hint("sqb runs not_null, unique, accepted_values, relationships, accepted_range, not_constant, at_least_one and expression (docs/audits.md)"),
            });
        }
        Err(SpecError::Argument(why)) => {
            return Some(argument(&format!("column `{name}`"), audit, why))
        }
    };
    if let Check::Relationships { to, .. } = &spec.check {
        let known = project.model(to).is_some()
            || project.source_tables.iter().any(|s| &s.name.value == to)
            || project.imported_relation(to).is_some();
        if !known {
            return Some(argument(
                &format!("column `{name}`"),
                audit,
                format!("`to` names no model, source or imported model (`import.model`): `{to}`"),
            ));
        }
    }
    snippets(project, &format!("column `{name}`"), audit, &spec)
}

/// A `where` or an `expression` that is not one SQL expression in the project's dialect.
fn snippets(project: &Project, owner: &str, audit: &Audit, spec: &Spec) -> Option<Diagnostic> {
    let expression = match &spec.check {
        Check::Expression(e) => Some(e.as_str()),
        _ => None,
    };
    for (key, text) in [
        ("where", spec.filter.as_deref()),
        ("expression", expression),
    ] {
        if let Some(Err(e)) = text.map(|t| crate::semantic::predicate::parse(project, t)) {
            return Some(argument(
                owner,
                audit,
                format!("`{key}` is not one SQL expression: {e}"),
            ));
        }
    }
    None
}

/// E090 for `audit` of `owner` (`column \`x\``, or a relation's name in backquotes).
fn argument(owner: &str, audit: &Audit, why: String) -> Diagnostic {
    Diagnostic::error(
        Code::AuditArgument,
        format!("audit `{}` of {owner} cannot run: {why}", audit.name),
    )
    .at(audit.loc.clone(), "this audit")
    .hint("docs/audits.md lists each audit's arguments")
}
