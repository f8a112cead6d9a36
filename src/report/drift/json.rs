//! `drift report --format json`: the report as its JSON wire format.

use std::io::{self, Write};

use super::DriftReport;

pub fn emit_json(report: &DriftReport, w: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *w, report)?;
    writeln!(w)
}
