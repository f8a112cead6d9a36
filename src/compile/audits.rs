//! Audits that cannot run are compile errors, located at the audit: an unknown name (E089),
//! or a missing, mistyped or unknown argument, a `relationships` to nothing, a `where` or an
//! `expression` that is not one SQL expression (E090); a user-defined audit's SQL
//! (`audits/<name>.sql`) that is not one query with placeholders sqb fills (E091). A check sqb
//! cannot run is never skipped at run time.

use std::collections::HashMap;

use crate::audit::spec::{
    is_builtin, parse, parse_custom, parse_relation, Check, Spec, SpecError, RELATION_NAMES,
};
use crate::audit::template::{Bindings, Template};
use crate::diagnostics::{Code, Diagnostic};
use crate::project::{Audit, AuditDef, Column, Project};
use crate::source::Loc;

pub fn check(project: &Project, diags: &mut Vec<Diagnostic>) {
    check_defs(project, diags);
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

/// The audits of one declared column.
pub fn check_column(project: &Project, column: &Column, diags: &mut Vec<Diagnostic>) {
    for audit in column.docs.iter().flat_map(|d| d.audits.iter()) {
        if let Some(d) = check_one(project, column, audit) {
            diags.push(d);
        }
    }
}

/// An audit of a whole relation (a model's or a source's own `audits`).
fn check_relation(project: &Project, owner: &str, audit: &Audit) -> Option<Diagnostic> {
    let spec = match parse_relation(audit) {
        Ok(spec) => spec,
        Err(SpecError::Unknown(_))
            if crate::audit::spec::custom(project, &audit.name).is_some() =>
        {
            let def = crate::audit::spec::custom(project, &audit.name).expect("checked above");
            return check_custom(project, &format!("`{owner}`"), None, audit, def);
        }
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
        Err(SpecError::Unknown(_))
            if crate::audit::spec::custom(project, &audit.name).is_some() =>
        {
            let def = crate::audit::spec::custom(project, &audit.name).expect("checked above");
            let owner = format!("column `{name}`");
            return check_custom(project, &owner, Some(name), audit, def);
        }
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
                None => d.hint("sqb runs not_null, unique, accepted_values, relationships, accepted_range, not_constant, at_least_one and expression, and the audits of audits/<name>.sql (docs/audits.md)"),
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

/// Each user-defined audit's file: a name of its own, placeholders sqb fills, and one query in
/// the project's dialect once they are filled (E091).
fn check_defs(project: &Project, diags: &mut Vec<Diagnostic>) {
    let mut seen: HashMap<&str, &AuditDef> = HashMap::new();
    for def in &project.audit_defs {
        let file = project.sources.get(def.file);
        let here = Loc::file_start(def.file);
        let sql = |message: String| Diagnostic::error(Code::AuditSql, message);
        if is_builtin(&def.name) {
            diags.push(
                sql(format!(
                    "{} has the name of a built-in audit, `{}`",
                    file.rel_path, def.name
                ))
                .at(here, "this audit")
                .hint("rename the file: a built-in audit keeps its name"),
            );
            continue;
        }
        if let Some(first) = seen.insert(&def.name, def) {
            diags.push(
                sql(format!(
                    "two user-defined audits are named `{}`: {} and {}",
                    def.name,
                    project.sources.get(first.file).rel_path,
                    file.rel_path
                ))
                .at(here, "the second")
                .hint("an audit's name is its file name: rename one"),
            );
            continue;
        }
        let template = match Template::parse(file.text()) {
            Ok(t) => t,
            Err(e) => {
                let at = Loc::new(def.file, e.offset..e.offset + 2);
                diags.push(sql(format!("{}: {}", file.rel_path, e.message)).at(at, "here"));
                continue;
            }
        };
        if let Err(why) = one_query(project, &template.stand_in()) {
            diags.push(
                sql(format!("{} is not one SQL query: {why}", file.rel_path))
                    .at(here, "this audit")
                    .hint("an audit is a SELECT that returns the failing rows, placeholders in `{{ }}` (docs/audits.md)"),
            );
        }
    }
}

/// Whether `sql` is one query in the project's dialect.
fn one_query(project: &Project, sql: &str) -> Result<(), String> {
    let dialect = super::sql::parse::dialect(project.engine());
    let statements =
        sqlparser::parser::Parser::parse_sql(dialect.as_ref(), sql).map_err(|e| e.to_string())?;
    match statements.as_slice() {
        [sqlparser::ast::Statement::Query(_)] => Ok(()),
        [] => Err("it is empty".into()),
        [_] => Err("it is a statement, not a query".into()),
        _ => Err(format!("it holds {} statements", statements.len())),
    }
}

/// The use of a user-defined audit: every argument its SQL reads is given, with a type it
/// takes, and nothing else; `{{ column }}` only in a column's audit. A file that does not
/// parse is reported once, at the file (E091).
fn check_custom(
    project: &Project,
    owner: &str,
    column: Option<&str>,
    audit: &Audit,
    def: &AuditDef,
) -> Option<Diagnostic> {
    let spec = match parse_custom(audit) {
        Ok(spec) => spec,
        Err(SpecError::Argument(why)) => return Some(argument(owner, audit, why)),
        Err(SpecError::Unknown(_)) => return None,
    };
    let file = project.sources.get(def.file);
    let template = Template::parse(file.text()).ok()?;
    let Check::Custom { args, .. } = &spec.check else {
        return None;
    };
    let reads = template.arguments();
    if let Some((key, _)) = args.iter().find(|(k, _)| !reads.contains(&k.as_str())) {
        let list = match reads.is_empty() {
            true => "none".to_string(),
            false => reads
                .iter()
                .map(|r| format!("`{r}`"))
                .collect::<Vec<_>>()
                .join(", "),
        };
        return Some(argument(
            owner,
            audit,
            format!(
                "`{key}` is no argument of {}, which reads {list}",
                file.rel_path
            ),
        ));
    }
    let with = Bindings {
        relation: "sqb_relation",
        column,
        args,
        engine: project.engine(),
    };
    if let Err(why) = template.render(&with, &mut Vec::new()) {
        return Some(argument(owner, audit, format!("{why} ({})", file.rel_path)));
    }
    snippets(project, owner, audit, &spec)
}
