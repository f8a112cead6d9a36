//! `sqb imports update`: each import's accepted changes, or with --check whether any is behind.

use crate::cli::{GlobalArgs, ImportsUpdateArgs};
use crate::commands::{note, project_root, stdout};
use crate::exit::ExitStatus;
use crate::ops::imports::{update, UpdateOptions};

pub fn run(global: &GlobalArgs, args: &ImportsUpdateArgs) -> anyhow::Result<ExitStatus> {
    let root = project_root(global)?;
    let options = UpdateOptions {
        names: args.names.clone(),
        check: args.check,
        dry_run: args.dry_run,
        force: args.force,
    };
    let states = update(&root, &options)?;
    let mut out = String::new();
    let mut failing = false;
    for state in &states {
        let verdict = match (state.behind, args.check, args.dry_run, state.written) {
            (false, ..) => "baseline is current",
            (true, true, ..) => "baseline is behind its snapshot",
            (true, _, true, _) => "would accept",
            (true, .., true) => "accepted",
            (true, ..) => "behind",
        };
        out.push_str(&format!("{}: {verdict}\n", state.name));
        if state.behind {
            for change in &state.changes {
                out.push_str(&format!("  {change}\n"));
            }
        }
        if let Some(pin) = &state.stale_pin {
            out.push_str(&format!(
                "  pin {pin} is not the snapshot: update it in sqb.toml\n"
            ));
            failing = true;
        }
        failing |= args.check && state.behind;
    }
    stdout(|w| w.write_all(out.as_bytes()))?;
    if failing {
        note(
            global,
            "hint: `sqb imports update` accepts the snapshots once the models handle them",
        );
        return Ok(ExitStatus::Failure);
    }
    Ok(ExitStatus::Success)
}
