//! `sqb promote`: the report on stdout (with `--dry-run`, the exact statements), the verdict on
//! stderr.

use crate::cli::{GlobalArgs, PromoteArgs, PromoteStrategy};
use crate::commands::{note, project_root, say, timeouts};
use crate::exit::ExitStatus;
use crate::message::Level;
use crate::ops::inspect::SelectOptions;
use crate::ops::promote::{promote, PromoteOptions, PromoteReport, Verdict};
use crate::promote::Strategy;
use crate::report::{self, count, Output};

pub fn run(global: &GlobalArgs, args: &PromoteArgs) -> anyhow::Result<ExitStatus> {
    let root = project_root(global)?;
    let options = PromoteOptions {
        from: args.from.clone(),
        to: args.to.clone(),
        selection: SelectOptions {
            select: args.selection.select.clone(),
            exclude: args.selection.exclude.clone(),
            file: args.selection.select_file.clone(),
        },
        timeouts: timeouts(&args.connect),
        use_cache: !global.no_cache,
        workers: usize::from(args.parallel.connections),
        dry_run: args.dry_run,
        lock_timeout: std::time::Duration::from_secs(args.lock_timeout),
        strategy: match args.strategy {
            PromoteStrategy::Auto => Strategy::Auto,
            PromoteStrategy::Copy => Strategy::Copy,
            PromoteStrategy::Swap => Strategy::Swap,
        },
    };
    let report = promote(&root, &options)?;
    report::write(Output::of(None), |w| w.write_all(text(&report).as_bytes()))?;
    for n in &report.notes {
        say(global, Level::Warning, n);
    }
    let relations = count(report.relations.len(), "relation", "relations");
    Ok(match report.verdict {
        Verdict::Published => {
            note(
                global,
                &format!(
                    "published {relations} from `{}` into `{}` in one transaction ({})",
                    report.from,
                    report.to,
                    count(report.statements.len(), "statement", "statements")
                ),
            );
            ExitStatus::Success
        }
        Verdict::Planned => {
            note(
                global,
                &format!(
                    "dry run: {relations} would be published into `{}`; nothing was changed",
                    report.to
                ),
            );
            ExitStatus::Success
        }
        Verdict::Refused => {
            say(
                global,
                Level::Error,
                &format!(
                    "nothing was published into `{}`: {}",
                    report.to,
                    count(report.refusals.len(), "check failed", "checks failed")
                ),
            );
            ExitStatus::Failure
        }
    })
}

/// The report: what was checked, what was refused, and the statements (run, or to run).
fn text(report: &PromoteReport) -> String {
    let mut out = format!(
        "promote {} -> {} ({}): {}, {}\n",
        report.from,
        report.to,
        report.engine.as_str(),
        count(report.relations.len(), "relation", "relations"),
        count(report.audits, "audit", "audits"),
    );
    for r in &report.refusals {
        out.push_str(&format!("refused {}: {}\n", r.relation, r.why));
    }
    if report.verdict != Verdict::Refused {
        for s in &report.strategies {
            out.push_str(&format!("publish {s}\n"));
        }
        out.push_str(match report.verdict {
            Verdict::Planned => "\n-- the publish, in one transaction (not run: --dry-run)\n",
            _ => "\n-- the publish, in one transaction\n",
        });
        out.push_str("BEGIN;\n");
        for s in &report.statements {
            out.push_str(&format!("{s};\n"));
        }
        out.push_str("COMMIT;\n");
    }
    out
}
