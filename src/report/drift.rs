//! `sqb drift report`: what a drift history says over a period — each open finding with when it
//! was first and last seen and in how many runs, the findings resolved in the period and when,
//! the counts per day by severity and kind, and the resources with the most open drift — and
//! its printers (text, JSON, Markdown).

use std::collections::BTreeMap;
use std::io::{self, Write};

use serde::Serialize;

/// The version of the JSON format; bumped only on incompatible changes.
pub const SCHEMA_VERSION: u32 = 1;

/// One run, as it is stored.
pub struct RunRecord {
    /// `YYYY-MM-DD HH:MM:SS[.ffffff]`, UTC.
    pub run_at: String,
    pub target: String,
    pub engine: String,
    pub database: String,
    pub schema: String,
    pub sqb_version: String,
    pub git_commit: Option<String>,
    pub resources: usize,
    pub errors: usize,
    pub warnings: usize,
    pub infos: usize,
    pub by_kind: Vec<(String, usize)>,
    pub findings: Vec<FindingRecord>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct FindingRecord {
    pub fingerprint: String,
    pub resource_type: String,
    pub resource_name: String,
    pub relation: String,
    pub kind: String,
    pub column: Option<String>,
    pub severity: String,
    pub message: String,
}

/// A period of a history, summarized by the store (in SQL, where the rows are).
#[derive(Debug, Default)]
pub struct Summary {
    /// Each run's time (`YYYY-MM-DD HH:MM:SS`, UTC) and target, oldest first.
    pub runs: Vec<(String, String)>,
    /// Each fingerprint seen, with its latest fields.
    pub tracks: Vec<Track>,
    /// Per day (of its last run), the count of findings of each severity and kind.
    pub days: Vec<DayCount>,
}

/// What one fingerprint did over the runs: the first and last runs that had it (indexes into
/// `Summary::runs`) and how many did.
#[derive(Debug)]
pub struct Track {
    pub finding: FindingRecord,
    pub first: usize,
    pub last: usize,
    pub runs: usize,
}

#[derive(Debug)]
pub struct DayCount {
    pub date: String,
    pub severity: String,
    pub kind: String,
    pub count: usize,
}

#[derive(Debug, Serialize)]
pub struct DriftReport {
    pub schema_version: u32,
    pub target: String,
    /// The period's start as asked (`YYYY-MM-DD HH:MM:SS`, UTC), if any.
    pub since: Option<String>,
    pub runs: usize,
    pub first_run: Option<String>,
    pub last_run: Option<String>,
    /// The findings of the last run, longest open first.
    pub open: Vec<OpenFinding>,
    /// Findings seen in the period and absent from the last run, most recently resolved first.
    pub resolved: Vec<ResolvedDrift>,
    /// Per day (of the day's last run): findings by severity and by kind.
    pub days: Vec<Day>,
    /// The resources with the most open findings (at most ten).
    pub top_resources: Vec<TopResource>,
}

#[derive(Debug, Serialize)]
pub struct OpenFinding {
    #[serde(flatten)]
    pub finding: Finding,
    pub first_seen: String,
    pub last_seen: String,
    /// The runs of the period that had it.
    pub runs_open: usize,
}

#[derive(Debug, Serialize)]
pub struct ResolvedDrift {
    #[serde(flatten)]
    pub finding: Finding,
    pub first_seen: String,
    pub last_seen: String,
    /// The first run without it.
    pub resolved_at: String,
}

#[derive(Debug, Serialize, Clone)]
pub struct Finding {
    pub fingerprint: String,
    pub resource_type: String,
    pub resource_name: String,
    pub relation: String,
    pub kind: String,
    pub column: Option<String>,
    pub severity: String,
    pub message: String,
}

impl From<&FindingRecord> for Finding {
    fn from(f: &FindingRecord) -> Self {
        Finding {
            fingerprint: f.fingerprint.clone(),
            resource_type: f.resource_type.clone(),
            resource_name: f.resource_name.clone(),
            relation: f.relation.clone(),
            kind: f.kind.clone(),
            column: f.column.clone(),
            severity: f.severity.clone(),
            message: f.message.clone(),
        }
    }
}

impl Finding {
    /// The order findings are listed in within a date: resource, kind, column.
    fn key(&self) -> (&str, &str, &str, Option<&str>, &str) {
        (
            &self.resource_type,
            &self.resource_name,
            &self.kind,
            self.column.as_deref(),
            &self.fingerprint,
        )
    }

    /// `model orders: type_mismatch on amount`.
    pub fn describe(&self) -> String {
        let column = self
            .column
            .as_ref()
            .map_or_else(String::new, |c| format!(" on {c}"));
        format!(
            "{} {}: {}{column}",
            self.resource_type, self.resource_name, self.kind
        )
    }
}

#[derive(Debug, Serialize)]
pub struct Day {
    pub date: String,
    pub errors: usize,
    pub warnings: usize,
    pub infos: usize,
    pub by_kind: BTreeMap<String, usize>,
}

#[derive(Debug, Serialize)]
pub struct TopResource {
    pub resource_type: String,
    pub resource_name: String,
    pub relation: String,
    pub open: usize,
}

/// The report of one target's period.
pub fn build(target: String, since: Option<String>, summary: &Summary) -> DriftReport {
    let runs = &summary.runs;
    let at = |i: usize| runs.get(i).map_or_else(String::new, |r| r.0.clone());
    let last = runs.len().checked_sub(1);
    let mut open = Vec::new();
    let mut resolved = Vec::new();
    for t in &summary.tracks {
        let finding = Finding::from(&t.finding);
        let (first_seen, last_seen) = (at(t.first), at(t.last));
        if Some(t.last) == last {
            open.push(OpenFinding {
                finding,
                first_seen,
                last_seen,
                runs_open: t.runs,
            });
        } else {
            resolved.push(ResolvedDrift {
                finding,
                first_seen,
                last_seen,
                resolved_at: at(t.last + 1),
            });
        }
    }
    // Longest open first, most recently resolved first; then by what they are about.
    open.sort_by(|a, b| (&a.first_seen, a.finding.key()).cmp(&(&b.first_seen, b.finding.key())));
    resolved
        .sort_by(|a, b| (&b.resolved_at, a.finding.key()).cmp(&(&a.resolved_at, b.finding.key())));
    DriftReport {
        schema_version: SCHEMA_VERSION,
        target,
        since,
        runs: runs.len(),
        first_run: runs.first().map(|r| r.0.clone()),
        last_run: runs.last().map(|r| r.0.clone()),
        top_resources: top(&open),
        open,
        resolved,
        days: days(&summary.days),
    }
}

fn days(counts: &[DayCount]) -> Vec<Day> {
    let mut days: BTreeMap<&str, Day> = BTreeMap::new();
    for c in counts {
        let day = days.entry(&c.date).or_insert_with(|| Day {
            date: c.date.clone(),
            errors: 0,
            warnings: 0,
            infos: 0,
            by_kind: BTreeMap::new(),
        });
        match c.severity.as_str() {
            "error" => day.errors += c.count,
            "warning" => day.warnings += c.count,
            _ => day.infos += c.count,
        }
        *day.by_kind.entry(c.kind.clone()).or_default() += c.count;
    }
    days.into_values().collect()
}

fn top(open: &[OpenFinding]) -> Vec<TopResource> {
    let mut counts: BTreeMap<(&str, &str), (usize, &str)> = BTreeMap::new();
    for o in open {
        let f = &o.finding;
        let entry = counts
            .entry((&f.resource_type, &f.resource_name))
            .or_insert((0, &f.relation));
        entry.0 += 1;
    }
    let mut top: Vec<TopResource> = counts
        .into_iter()
        .map(|((t, n), (count, relation))| TopResource {
            resource_type: t.to_string(),
            resource_name: n.to_string(),
            relation: relation.to_string(),
            open: count,
        })
        .collect();
    top.sort_by_key(|t| std::cmp::Reverse(t.open));
    top.truncate(10);
    top
}

pub fn emit_json(report: &DriftReport, w: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *w, report)?;
    writeln!(w)
}

fn period(report: &DriftReport) -> String {
    match (&report.first_run, &report.last_run) {
        (Some(first), Some(last)) => format!(
            "{} from {first} to {last} (UTC)",
            crate::report::count(report.runs, "run", "runs")
        ),
        _ => "no runs".to_string(),
    }
}

pub fn emit_text(report: &DriftReport, w: &mut dyn Write) -> io::Result<()> {
    writeln!(w, "drift of `{}`: {}", report.target, period(report))?;
    writeln!(
        w,
        "{} open, {} resolved in the period",
        report.open.len(),
        report.resolved.len()
    )?;
    if !report.open.is_empty() {
        writeln!(w, "\nopen (first seen, runs open):")?;
        for o in &report.open {
            writeln!(
                w,
                "  {}  {:>4}  {} [{}]",
                o.first_seen,
                o.runs_open,
                o.finding.describe(),
                o.finding.severity
            )?;
        }
    }
    if !report.resolved.is_empty() {
        writeln!(w, "\nresolved (when, first seen):")?;
        for r in &report.resolved {
            writeln!(
                w,
                "  {}  {}  {}",
                r.resolved_at,
                r.first_seen,
                r.finding.describe()
            )?;
        }
    }
    if !report.top_resources.is_empty() {
        writeln!(w, "\nmost open drift:")?;
        for t in &report.top_resources {
            writeln!(
                w,
                "  {:>4}  {} {} ({})",
                t.open, t.resource_type, t.resource_name, t.relation
            )?;
        }
    }
    if !report.days.is_empty() {
        writeln!(w, "\nper day (errors, warnings, notes):")?;
        for d in &report.days {
            writeln!(
                w,
                "  {}  {:>4} {:>4} {:>4}",
                d.date, d.errors, d.warnings, d.infos
            )?;
        }
    }
    Ok(())
}

/// GitHub's limit for a comment is 65,536 characters; the tables stop well before it, with a
/// count of what they leave out.
const MARKDOWN_ROWS: usize = 100;

pub fn emit_markdown(report: &DriftReport, w: &mut dyn Write) -> io::Result<()> {
    writeln!(w, "## sqb drift report: `{}`\n", report.target)?;
    writeln!(
        w,
        "{}: **{} open**, {} resolved in the period.\n",
        period(report),
        report.open.len(),
        report.resolved.len()
    )?;
    let cell = |t: &str| t.replace('|', "\\|").replace('\n', " ");
    if !report.open.is_empty() {
        writeln!(
            w,
            "### Open\n\n| finding | severity | first seen | runs open |\n|---|---|---|---|"
        )?;
        for o in report.open.iter().take(MARKDOWN_ROWS) {
            writeln!(
                w,
                "| {} | {} | {} | {} |",
                cell(&o.finding.describe()),
                o.finding.severity,
                o.first_seen,
                o.runs_open
            )?;
        }
        more(w, report.open.len())?;
    }
    if !report.resolved.is_empty() {
        writeln!(
            w,
            "### Resolved\n\n| finding | resolved | first seen |\n|---|---|---|"
        )?;
        for r in report.resolved.iter().take(MARKDOWN_ROWS) {
            writeln!(
                w,
                "| {} | {} | {} |",
                cell(&r.finding.describe()),
                r.resolved_at,
                r.first_seen
            )?;
        }
        more(w, report.resolved.len())?;
    }
    if !report.days.is_empty() {
        writeln!(
            w,
            "### Per day\n\n| day | errors | warnings | notes |\n|---|---|---|---|"
        )?;
        // The latest days, when there are more than fit.
        let skip = report.days.len().saturating_sub(MARKDOWN_ROWS);
        for d in report.days.iter().skip(skip) {
            writeln!(
                w,
                "| {} | {} | {} | {} |",
                d.date, d.errors, d.warnings, d.infos
            )?;
        }
        if skip > 0 {
            writeln!(
                w,
                "\n…and {skip} earlier days (`--format json` has them all).\n"
            )?;
        } else {
            writeln!(w)?;
        }
    }
    Ok(())
}

fn more(w: &mut dyn Write, total: usize) -> io::Result<()> {
    match total.checked_sub(MARKDOWN_ROWS) {
        Some(left) if left > 0 => {
            writeln!(w, "\n…and {left} more (`--format json` has them all).\n")
        }
        _ => writeln!(w),
    }
}

/// Escapes text for HTML element content and attribute values.
fn html(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// The page's style and its one script (sortable tables), inline: the page loads nothing, and
/// its Content-Security-Policy forbids it to.
const PAGE_HEAD: &str = r#"<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #1f2328; }
table { border-collapse: collapse; margin: 1em 0 2em; }
th, td { border: 1px solid #d0d7de; padding: 4px 8px; text-align: left; }
th { background: #f6f8fa; cursor: pointer; user-select: none; }
th[aria-sort=ascending]::after { content: " ▲"; }
th[aria-sort=descending]::after { content: " ▼"; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.error { color: #cf222e; } .warning { color: #9a6700; } .info { color: #57606a; }
svg text { font: 11px system-ui, sans-serif; fill: #57606a; }
</style>"#;

const SORT_SCRIPT: &str = r#"<script>
for (const table of document.querySelectorAll("table.sortable")) {
  const heads = table.querySelectorAll("th");
  heads.forEach((th, col) => th.addEventListener("click", () => {
    const down = th.getAttribute("aria-sort") === "ascending";
    heads.forEach(h => h.removeAttribute("aria-sort"));
    th.setAttribute("aria-sort", down ? "descending" : "ascending");
    const body = table.tBodies[0];
    const rows = [...body.rows];
    const key = r => r.cells[col].dataset.key ?? r.cells[col].textContent;
    rows.sort((a, b) => key(a).localeCompare(key(b), undefined, { numeric: true }) * (down ? -1 : 1));
    rows.forEach(r => body.appendChild(r));
  }));
}
document.body.dataset.ready = "sortable";
</script>"#;

/// Open findings per day by severity, stacked: an inline SVG.
fn chart(days: &[Day]) -> String {
    let (width, height, left, bottom) = (720.0_f64, 220.0_f64, 40.0_f64, 24.0_f64);
    let top = days
        .iter()
        .map(|d| d.errors + d.warnings + d.infos)
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let plot = (width - left - 8.0, height - bottom - 8.0);
    let step = plot.0 / days.len().max(1) as f64;
    let bar = (step * 0.8).max(1.0);
    let mut svg = format!(
        "<svg id=\"trend\" role=\"img\" aria-label=\"open findings per day by severity\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" xmlns=\"http://www.w3.org/2000/svg\">\n"
    );
    svg.push_str(&format!(
        "<text x=\"0\" y=\"14\">{}</text><text x=\"0\" y=\"{:.0}\">0</text>\n",
        top,
        8.0 + plot.1
    ));
    for (i, d) in days.iter().enumerate() {
        let x = left + i as f64 * step;
        let mut y = 8.0 + plot.1;
        for (count, class, colour) in [
            (d.errors, "error", "#cf222e"),
            (d.warnings, "warning", "#d4a72c"),
            (d.infos, "info", "#8c959f"),
        ] {
            if count == 0 {
                continue;
            }
            let h = count as f64 / top * plot.1;
            y -= h;
            svg.push_str(&format!(
                "<rect class=\"{class}\" x=\"{x:.1}\" y=\"{y:.1}\" width=\"{bar:.1}\" height=\"{h:.1}\" fill=\"{colour}\"><title>{} {class}: {count}</title></rect>\n",
                d.date
            ));
        }
    }
    if let (Some(first), Some(last)) = (days.first(), days.last()) {
        svg.push_str(&format!(
            "<text x=\"{left}\" y=\"{height}\">{}</text><text x=\"{}\" y=\"{height}\" text-anchor=\"end\">{}</text>\n",
            first.date,
            width - 8.0,
            last.date
        ));
    }
    svg.push_str("</svg>");
    svg
}

/// One self-contained page: the trend chart, then the tables (sortable by any column).
pub fn emit_html(report: &DriftReport, w: &mut dyn Write) -> io::Result<()> {
    let title = format!("sqb drift report: {}", report.target);
    writeln!(
        w,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n{PAGE_HEAD}\n<title>{}</title>\n</head>\n<body>",
        html(&title)
    )?;
    writeln!(w, "<h1>{}</h1>", html(&title))?;
    writeln!(
        w,
        "<p>{}: <strong>{} open</strong>, {} resolved in the period.</p>",
        html(&period(report)),
        report.open.len(),
        report.resolved.len()
    )?;
    writeln!(
        w,
        "<h2>Findings per day</h2>\n<p><span style=\"color:#cf222e\">■</span> errors \
         <span style=\"color:#d4a72c\">■</span> warnings \
         <span style=\"color:#8c959f\">■</span> notes (each day's last run)</p>\n{}",
        chart(&report.days)
    )?;
    let table = |w: &mut dyn Write, id: &str, heads: &[&str]| -> io::Result<()> {
        let heads: String = heads.iter().map(|h| format!("<th>{h}</th>")).collect();
        writeln!(
            w,
            "<table id=\"{id}\" class=\"sortable\"><thead><tr>{heads}</tr></thead><tbody>"
        )
    };
    writeln!(w, "<h2>Open</h2>")?;
    table(
        w,
        "open",
        &[
            "finding",
            "severity",
            "first seen",
            "last seen",
            "runs open",
        ],
    )?;
    for o in &report.open {
        let s = html(&o.finding.severity);
        writeln!(
            w,
            "<tr><td>{}</td><td class=\"{s}\">{s}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td></tr>",
            html(&o.finding.describe()),
            o.first_seen,
            o.last_seen,
            o.runs_open
        )?;
    }
    writeln!(w, "</tbody></table>\n<h2>Resolved</h2>")?;
    table(w, "resolved", &["finding", "resolved", "first seen"])?;
    for r in &report.resolved {
        writeln!(
            w,
            "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
            html(&r.finding.describe()),
            r.resolved_at,
            r.first_seen
        )?;
    }
    writeln!(w, "</tbody></table>\n<h2>Most open drift</h2>")?;
    table(w, "resources", &["resource", "relation", "open"])?;
    for t in &report.top_resources {
        writeln!(
            w,
            "<tr><td>{} {}</td><td>{}</td><td class=\"n\">{}</td></tr>",
            html(&t.resource_type),
            html(&t.resource_name),
            html(&t.relation),
            t.open
        )?;
    }
    writeln!(w, "</tbody></table>\n<h2>Per day</h2>")?;
    table(w, "days", &["day", "errors", "warnings", "notes"])?;
    for d in &report.days {
        writeln!(
            w,
            "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            d.date, d.errors, d.warnings, d.infos
        )?;
    }
    writeln!(w, "</tbody></table>\n{SORT_SCRIPT}\n</body>\n</html>")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A year of daily runs with a thousand findings still fits a GitHub comment (65,536
    /// characters), and says how much it leaves out.
    #[test]
    fn markdown_of_a_year_fits_a_comment() {
        let runs: Vec<(String, String)> = (0..365)
            .map(|d| {
                (
                    crate::clock::timestamp(1_735_696_800 + d * 86_400),
                    "prod".into(),
                )
            })
            .collect();
        let tracks = (0..1_000)
            .map(|i| Track {
                finding: FindingRecord {
                    fingerprint: format!("{i:032x}"),
                    resource_type: "model".into(),
                    resource_name: format!("a_rather_long_model_name_{:04}", i / 25),
                    relation: "warehouse.analytics.x".into(),
                    kind: "undeclared_physical_column".into(),
                    column: Some(format!("column_with_a_long_name_{i:04}")),
                    severity: "error".into(),
                    message: "m".repeat(80),
                },
                first: i % 365,
                last: if i % 3 == 0 { 200 } else { 364 },
                runs: 100,
            })
            .collect();
        let days = runs
            .iter()
            .map(|(at, _)| DayCount {
                date: at[..10].to_string(),
                severity: "error".into(),
                kind: "undeclared_physical_column".into(),
                count: 1_000,
            })
            .collect();
        let summary = Summary { runs, tracks, days };
        let report = build("prod".into(), None, &summary);
        assert_eq!(report.open.len() + report.resolved.len(), 1_000);
        let mut out = Vec::new();
        emit_markdown(&report, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.len() < 65_536, "{} characters", text.len());
        assert!(text.contains("…and 566 more"), "{text}");
        assert!(text.contains("…and 265 earlier days"), "{text}");
        assert_eq!(
            report.resolved[0].resolved_at,
            report.days[201].date.clone() + " 02:00:00"
        );
    }
}
