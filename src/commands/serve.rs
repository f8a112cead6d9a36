//! `sqb serve`: the address it listens on, on stderr once it is bound; then requests until a
//! signal.

use crate::cli::{GlobalArgs, ServeArgs};
use crate::commands::{note, project_root, timeouts};
use crate::exit::ExitStatus;
use crate::ops::serve::{serve, ServeOptions};

pub fn run(global: &GlobalArgs, args: &ServeArgs) -> anyhow::Result<ExitStatus> {
    let root = project_root(global)?;
    let options = ServeOptions {
        listen: args.listen.clone(),
        from: args.from.clone(),
        watch: args.watch,
        timeouts: timeouts(&args.connect),
        use_cache: !global.no_cache,
    };
    serve(&root, &options, |addr| {
        note(global, &format!("listening on http://{addr}"));
    })?;
    note(global, "stopped: every in-flight request was answered");
    Ok(ExitStatus::Success)
}
