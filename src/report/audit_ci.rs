//! `sqb audit` for CI: JUnit XML (one test case per audit; a failing error-severity audit is a
//! failure, one that could not run an error, a warn-severity failure passes with its message
//! in `system-out`), GitHub workflow commands (an annotation at each failing audit's
//! declaration), SARIF 2.1.0 for code scanning (a rule per audit, a result per audit that did
//! not pass), and a Markdown table for a pull-request comment.

use std::io::{self, Write};

use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};

use super::audit::{failures, AuditReport, AuditResult, Status};
use super::diff::github::{data, property};
use super::sarif::{driver, location, log, rule, AutomationDetails, Message, Run, SarifResult};
use crate::diagnostics::JsonLocation;

/// The audits SARIF has a rule for.
const RULES: &[&str] = crate::audit::spec::CHECKS;

/// What an audit fails on, from the last column of its row in docs/audits.md.
fn audit_help(name: &str) -> String {
    let doc = include_str!("../../docs/audits.md");
    let start = format!("| `{name}`");
    doc.lines()
        .find(|l| l.starts_with(&start))
        .and_then(|l| l.trim_end_matches(" |").rsplit(" | ").next())
        .map_or_else(String::new, |meaning| format!("fails on {meaning}"))
}

/// `sqb audit --format sarif`: a rule per audit, a result per audit that did not pass, at its
/// declaration, fingerprinted by target, relation, column and audit.
pub fn emit_sarif(report: &AuditReport, prefix: &str, w: &mut dyn Write) -> io::Result<()> {
    // The built-in audits, then each user-defined one the report holds.
    let mut names: Vec<&str> = RULES.to_vec();
    for r in &report.results {
        if !names.contains(&r.audit.as_str()) {
            names.push(&r.audit);
        }
    }
    let rules = names
        .iter()
        .map(|name| match RULES.contains(name) {
            true => rule(name, name, &audit_help(name), "docs/audits.md"),
            false => rule(
                name,
                name,
                &format!(
                    "a user-defined audit (audits/{name}.sql): fails on each row its query returns"
                ),
                "docs/audits.md",
            ),
        })
        .collect();
    let results = report
        .results
        .iter()
        .filter(|r| r.status != Status::Pass)
        .map(|r| {
            let at = JsonLocation {
                file: r.file.clone(),
                line: r.line,
                column: r.column_number,
                end_line: r.line,
                end_column: r.column_number,
                label: None,
            };
            let logical = match &r.column {
                Some(c) => format!("{}.{c}", r.relation),
                None => r.relation.clone(),
            };
            SarifResult {
                rule_id: r.audit.to_string(),
                rule_index: names.iter().position(|n| *n == r.audit).unwrap_or(0),
                level: match r.status {
                    Status::Warn => "warning",
                    _ => "error",
                },
                message: Message {
                    text: format!("{}: {}", title(r), verdict(r)),
                },
                locations: vec![location(prefix, &at, Some(logical))],
                partial_fingerprints: std::collections::BTreeMap::from([(
                    "sqbAudit/v1",
                    r.fingerprint.clone(),
                )]),
                baseline_state: None,
            }
        })
        .collect();
    log(
        Run {
            tool: driver(rules),
            automation_details: AutomationDetails {
                id: format!("sqb/audit/{}/", report.target),
            },
            column_kind: "unicodeCodePoints",
            results,
        },
        w,
    )
}

/// What a result says in one line: `3 failing rows`, `could not run: …`.
fn verdict(r: &AuditResult) -> String {
    match (r.status, r.failing) {
        (Status::Pass, _) => "pass".into(),
        (Status::Error, _) => format!(
            "could not run: {}",
            r.error.as_deref().unwrap_or("unknown error")
        ),
        (_, Some(n)) => failures(&r.audit, n),
        (_, None) => "no count".into(),
    }
}

fn title(r: &AuditResult) -> String {
    match &r.column {
        Some(column) => format!(
            "{} {column} of {} `{}`",
            r.audit, r.resource_type, r.resource
        ),
        None => format!("{} of {} `{}`", r.audit, r.resource_type, r.resource),
    }
}

pub fn emit_junit(report: &AuditReport, out: &mut dyn Write) -> io::Result<()> {
    let mut w = quick_xml::Writer::new_with_indent(&mut *out, b' ', 2);
    let s = &report.summary;
    let tests = s.audits.to_string();
    let failures = s.fail.to_string();
    let errors = s.error.to_string();
    let name = format!("sqb audit {}", report.target);
    let attrs = [
        ("name", name.as_str()),
        ("tests", tests.as_str()),
        ("failures", failures.as_str()),
        ("errors", errors.as_str()),
    ];
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    w.write_event(Event::Start(
        BytesStart::new("testsuites").with_attributes(attrs),
    ))?;
    w.write_event(Event::Start(
        BytesStart::new("testsuite").with_attributes(attrs),
    ))?;
    for r in &report.results {
        let case_name = match &r.column {
            Some(column) => format!("{column} {}", r.audit),
            None => r.audit.to_string(),
        };
        let classname = format!("{}.{}", r.resource_type, r.resource);
        let case = BytesStart::new("testcase").with_attributes([
            ("name", case_name.as_str()),
            ("classname", classname.as_str()),
            ("file", r.file.as_str()),
        ]);
        let tag = match r.status {
            Status::Pass => {
                w.write_event(Event::Empty(case))?;
                continue;
            }
            Status::Fail => Some("failure"),
            Status::Error => Some("error"),
            Status::Warn => None,
        };
        w.write_event(Event::Start(case))?;
        let message = verdict(r);
        let mut body = format!("{} ({}:{})", message, r.file, r.line);
        for row in &r.sample {
            let shown: Vec<String> = row.iter().map(|(k, v)| format!("{k}={v}")).collect();
            body.push('\n');
            body.push_str(&shown.join("  "));
        }
        match tag {
            Some(tag) => {
                w.write_event(Event::Start(BytesStart::new(tag).with_attributes([
                    ("type", r.audit.as_str()),
                    ("message", message.as_str()),
                ])))?;
                w.write_event(Event::Text(BytesText::new(&body)))?;
                w.write_event(Event::End(BytesEnd::new(tag)))?;
            }
            None => {
                w.write_event(Event::Start(BytesStart::new("system-out")))?;
                w.write_event(Event::Text(BytesText::new(&format!("warn: {body}"))))?;
                w.write_event(Event::End(BytesEnd::new("system-out")))?;
            }
        }
        w.write_event(Event::End(BytesEnd::new("testcase")))?;
    }
    w.write_event(Event::End(BytesEnd::new("testsuite")))?;
    w.write_event(Event::End(BytesEnd::new("testsuites")))?;
    out.write_all(b"\n")
}

/// One annotation per audit that did not pass, at its declaration (`prefix` is the project
/// root relative to the repository root).
pub fn emit_github(report: &AuditReport, prefix: &str, w: &mut dyn Write) -> io::Result<()> {
    for r in report.results.iter().filter(|r| r.status != Status::Pass) {
        let level = match r.status {
            Status::Warn => "warning",
            _ => "error",
        };
        writeln!(
            w,
            "::{level} file={prefix}{},line={},col={},title={}::{}",
            r.file,
            r.line,
            r.column_number,
            property(&format!("sqb audit: {}", title(r))),
            data(&verdict(r))
        )?;
    }
    Ok(())
}

pub fn emit_markdown(report: &AuditReport, w: &mut dyn Write) -> io::Result<()> {
    let s = &report.summary;
    writeln!(
        w,
        "### sqb audit `{}`: {} pass, {} fail, {} warn, {} could not run\n",
        report.target, s.pass, s.fail, s.warn, s.error
    )?;
    let shown: Vec<&AuditResult> = report
        .results
        .iter()
        .filter(|r| r.status != Status::Pass)
        .collect();
    if shown.is_empty() {
        return writeln!(w, "Every audit passes ({}).", s.audits);
    }
    writeln!(w, "| | relation | column | audit | result | declared at |")?;
    writeln!(w, "|---|---|---|---|---|---|")?;
    for r in shown {
        let mark = match r.status {
            Status::Warn => "⚠️",
            _ => "❌",
        };
        writeln!(
            w,
            "| {mark} | `{}` | `{}` | `{}` | {} | `{}:{}` |",
            r.relation,
            cell(r.column.as_deref().unwrap_or("(relation)")),
            r.audit,
            cell(&verdict(r)),
            r.file,
            r.line
        )?;
    }
    Ok(())
}

/// Text safe in a Markdown table cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}
