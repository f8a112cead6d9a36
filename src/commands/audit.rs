//! `sqb audit`: the declared audits run against a target; the report on stdout (or
//! `--output`), the summary on stderr.

use crate::cli::{AuditArgs, AuditFormat, GlobalArgs};
use crate::commands::{history, note, project_root, timeouts};
use crate::exit::ExitStatus;
use crate::ops::audit::{audit, AuditOptions};
use crate::ops::drift::record_audit;
use crate::ops::inspect::{target_name, SelectOptions};
use crate::report::audit::{emit_json, emit_text};
use crate::report::audit_ci::{emit_github, emit_junit, emit_markdown, emit_sarif};
use crate::report::{self, count, Output};

pub fn run(global: &GlobalArgs, args: &AuditArgs) -> anyhow::Result<ExitStatus> {
    let root = project_root(global)?;
    let options = AuditOptions {
        from: target_name(&root, args.from.as_deref())?,
        selection: SelectOptions {
            select: args.selection.select.clone(),
            exclude: args.selection.exclude.clone(),
            file: args.selection.select_file.clone(),
        },
        timeouts: timeouts(&args.connect),
        use_cache: !global.no_cache,
        workers: usize::from(args.parallel.connections),
    };
    let mut report = audit(&root, &options)?;
    report.summarize();
    let output = Output::of(args.output.as_deref());
    let prefix = match args.format {
        AuditFormat::Github | AuditFormat::Sarif => crate::commands::github_prefix(&root)?,
        _ => String::new(),
    };
    report::write(output, |w| match args.format {
        AuditFormat::Text => emit_text(&report, w),
        AuditFormat::Json => emit_json(&report, w),
        AuditFormat::Junit => emit_junit(&report, w),
        AuditFormat::Github => emit_github(&report, &prefix, w),
        AuditFormat::Sarif => emit_sarif(&report, &prefix, w),
        AuditFormat::Markdown => emit_markdown(&report, w),
    })?;
    let s = &report.summary;
    if s.audits == 0 {
        // A check that has nothing to check must not pass, as `contract diff` does not.
        return Err(crate::error::UserError::new(
            "nothing was checked: no selected model or source declares an audit",
        )
        .with_hint(
            "declare them on columns: `audits = [\"unique\", \"not_null\"]` (docs/audits.md)",
        )
        .into());
    }
    if let Some(h) = history(&args.history) {
        let run = record_audit(&h.path, &report, &root, h.timeout)?;
        note(
            global,
            &format!("recorded run {run} in {}", h.path.display()),
        );
    }
    note(
        global,
        &format!(
            "{} on {} of target `{}`: {} pass, {} fail, {} warn, {} could not run ({})",
            count(s.audits, "audit", "audits"),
            count(s.relations, "relation", "relations"),
            report.target,
            s.pass,
            s.fail,
            s.warn,
            s.error,
            count(s.queries, "query", "queries"),
        ),
    );
    Ok(match (s.error, s.fail) {
        (0, 0) => ExitStatus::Success,
        (0, _) => ExitStatus::Failure,
        _ => ExitStatus::Error,
    })
}
