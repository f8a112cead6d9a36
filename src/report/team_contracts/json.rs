//! The cross-team contract commands as JSON documents.

#[allow(clippy::wildcard_imports)]
use super::*;

#[derive(Serialize)]
struct DiffJson<'a> {
    schema_version: u32,
    /// `breaks` when a change breaks a model, else `clean`.
    verdict: &'static str,
    imports: Vec<ImportJson<'a>>,
}

#[derive(Serialize)]
struct ImportJson<'a> {
    import: &'a str,
    producer: &'a str,
    baseline: &'a str,
    snapshot: &'a str,
    changes: &'a [Impact],
}

pub fn diff_json(diffs: &[ImportDiff], w: &mut dyn Write) -> io::Result<()> {
    let report = DiffJson {
        schema_version: 1,
        verdict: match diffs.iter().any(ImportDiff::breaks) {
            true => "breaks",
            false => "clean",
        },
        imports: diffs
            .iter()
            .map(|d| ImportJson {
                import: &d.name,
                producer: &d.producer,
                baseline: &d.baseline,
                snapshot: &d.snapshot,
                changes: &d.changes,
            })
            .collect(),
    };
    serde_json::to_writer_pretty(&mut *w, &report)?;
    writeln!(w)
}

#[derive(Serialize)]
struct ConsumersJson<'a> {
    schema_version: u32,
    /// `breaks` when a change breaks a consumer's model, else `clean`.
    verdict: &'static str,
    producer: &'a str,
    /// The previous snapshot's content hash, and the one published now.
    before: &'a str,
    after: &'a str,
    consumers: Vec<ConsumerJson<'a>>,
}

#[derive(Serialize)]
struct ConsumerJson<'a> {
    consumer: &'a str,
    /// The reads file, as found in the consumers' directory.
    file: String,
    /// The snapshot the consumer computed its reads against.
    read_against: &'a str,
    /// That is not `before`: what the consumer reads since is not in its file.
    stale: bool,
    verdict: &'static str,
    changes: &'a [Impact],
}

pub fn consumers_json(report: &ConsumersReport, w: &mut dyn Write) -> io::Result<()> {
    let verdict = |breaks: bool| match breaks {
        true => "breaks",
        false => "clean",
    };
    let json = ConsumersJson {
        schema_version: 1,
        verdict: verdict(report.breaks()),
        producer: &report.producer,
        before: &report.before,
        after: &report.after,
        consumers: report
            .consumers
            .iter()
            .map(|c| ConsumerJson {
                consumer: &c.consumer,
                file: c.file.to_string_lossy().replace('\\', "/"),
                read_against: &c.read_against,
                stale: c.stale,
                verdict: verdict(c.breaks()),
                changes: &c.changes,
            })
            .collect(),
    };
    serde_json::to_writer_pretty(&mut *w, &json)?;
    writeln!(w)
}

#[derive(Serialize)]
struct UpdateJson<'a> {
    schema_version: u32,
    /// `update`, `check` or `dry_run`.
    mode: &'static str,
    imports: Vec<UpdateImportJson<'a>>,
}

#[derive(Serialize)]
struct UpdateImportJson<'a> {
    import: &'a str,
    producer: &'a str,
    /// `current`, `behind`, `would_accept` or `accepted`.
    verdict: &'static str,
    baseline: &'a str,
    snapshot: &'a str,
    /// The baseline file was rewritten to the snapshot.
    written: bool,
    /// There was no baseline: the snapshot is (or would be) the first one.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    first_baseline: bool,
    /// A concrete pin that is not the snapshot's hash.
    stale_pin: Option<&'a str>,
    changes: &'a [ChangelogEntry],
}

pub fn update_json(states: &[ImportState], mode: UpdateMode, w: &mut dyn Write) -> io::Result<()> {
    let json = UpdateJson {
        schema_version: 1,
        mode: match mode {
            UpdateMode::Update => "update",
            UpdateMode::Check => "check",
            UpdateMode::DryRun => "dry_run",
        },
        imports: states
            .iter()
            .map(|s| UpdateImportJson {
                import: &s.name,
                producer: &s.producer,
                verdict: mode.verdict(s),
                baseline: &s.baseline,
                snapshot: &s.snapshot,
                written: s.written,
                first_baseline: s.first,
                stale_pin: s.stale_pin.as_deref(),
                changes: match s.behind {
                    true => &s.changes,
                    false => &[],
                },
            })
            .collect(),
    };
    serde_json::to_writer_pretty(&mut *w, &json)?;
    writeln!(w)
}
