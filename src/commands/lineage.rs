//! `sqb lineage`: column-level lineage of one model, from the offline SQL analysis.

use crate::cli::{GlobalArgs, LineageArgs, TextOrJson};
use crate::commands::{project_root, stdout};
use crate::exit::ExitStatus;
use crate::ops::lineage::{lineage, LineageOptions};
use crate::report;

pub fn run(global: &GlobalArgs, args: &LineageArgs) -> anyhow::Result<ExitStatus> {
    let root = project_root(global)?;
    let options = LineageOptions {
        node: args.node.clone(),
        include_uses: args.include_uses,
        use_cache: !global.no_cache,
    };
    let lineage = lineage(&root, &options)?;
    match args.format {
        TextOrJson::Json => stdout(|w| report::lineage::emit_json(&lineage, w))?,
        TextOrJson::Text => stdout(|w| report::lineage::emit_text(&lineage, w))?,
    }
    Ok(ExitStatus::Success)
}
