//! Audits that cannot run are compile errors, located at the audit: an unknown name (E089),
//! or a missing, mistyped or unknown argument, a `relationships` to nothing, a `where` or an
//! `expression` that is not one SQL expression (E090). A check sqb cannot run is never
//! skipped at run time.

use crate::audit::spec::{parse, Check, SpecError};
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
        Err(SpecError::Argument(why)) => return Some(argument(name, audit, why)),
    };
    if let Check::Relationships { to, .. } = &spec.check {
        let known = project.model(to).is_some()
            || project.source_tables.iter().any(|s| &s.name.value == to);
        if !known {
            return Some(argument(
                name,
                audit,
                format!("`to` names no model or source: `{to}`"),
            ));
        }
    }
    let snippets = [
        ("where", spec.filter.as_deref()),
        (
            "expression",
            match &spec.check {
                Check::Expression(e) => Some(e.as_str()),
                _ => None,
            },
        ),
    ];
    for (key, text) in snippets {
        if let Some(Err(e)) = text.map(|t| crate::semantic::predicate::parse(project, t)) {
            return Some(argument(
                name,
                audit,
                format!("`{key}` is not one SQL expression: {e}"),
            ));
        }
    }
    None
}

fn argument(column: &str, audit: &Audit, why: String) -> Diagnostic {
    Diagnostic::error(
        Code::AuditArgument,
        format!(
            "audit `{}` of column `{column}` cannot run: {why}",
            audit.name
        ),
    )
    .at(audit.loc.clone(), "this audit")
    .hint("docs/audits.md lists each audit's arguments")
}
