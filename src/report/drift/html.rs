//! `drift report --format html`: one self-contained page (the trend chart, then the tables,
//! sortable by any column), rendered with maud, which escapes every value it is given. The page
//! loads nothing: its style and its one script are inline, and its Content-Security-Policy
//! forbids anything else.

use std::io::{self, Write};

use maud::{html, Markup, PreEscaped, DOCTYPE};

use super::{period, Day, DriftReport};

/// The page's style: static text of sqb's own.
const STYLE: &str = r#"body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #1f2328; }
table { border-collapse: collapse; margin: 1em 0 2em; }
th, td { border: 1px solid #d0d7de; padding: 4px 8px; text-align: left; }
th { background: #f6f8fa; cursor: pointer; user-select: none; }
th[aria-sort=ascending]::after { content: " ▲"; }
th[aria-sort=descending]::after { content: " ▼"; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.error { color: #cf222e; } .warning { color: #9a6700; } .info { color: #57606a; }
svg text { font: 11px system-ui, sans-serif; fill: #57606a; }
"#;

/// The tables' sorting, and a mark that it ran (`data-ready`); static text of sqb's own.
const SORT_SCRIPT: &str = r#"for (const table of document.querySelectorAll("table.sortable")) {
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
"#;

const CSP: &str =
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:";

/// The severities stacked in the chart, bottom up: each day's count, class and colour.
fn stacks(d: &Day) -> [(usize, &'static str, &'static str); 3] {
    [
        (d.errors, "error", "#cf222e"),
        (d.warnings, "warning", "#d4a72c"),
        (d.infos, "info", "#8c959f"),
    ]
}

/// Open findings per day by severity, stacked: an inline SVG.
fn chart(days: &[Day]) -> Markup {
    let (width, height, left, bottom) = (720.0_f64, 220.0_f64, 40.0_f64, 24.0_f64);
    let top = days
        .iter()
        .map(|d| d.errors + d.warnings + d.infos)
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let plot = (width - left - 8.0, height - bottom - 8.0);
    let step = plot.0 / days.len().max(1) as f64;
    let bar = format!("{:.1}", (step * 0.8).max(1.0));
    let bars = days.iter().enumerate().flat_map(|(i, d)| {
        let x = format!("{:.1}", left + i as f64 * step);
        let mut y = 8.0 + plot.1;
        stacks(d)
            .into_iter()
            .filter(|(count, _, _)| *count > 0)
            .map(move |(count, class, colour)| {
                let h = count as f64 / top * plot.1;
                y -= h;
                (
                    d,
                    x.clone(),
                    format!("{y:.1}"),
                    format!("{h:.1}"),
                    count,
                    class,
                    colour,
                )
            })
            .collect::<Vec<_>>()
    });
    html! {
        svg id="trend" role="img" aria-label="open findings per day by severity" width=(width)
            height=(height) viewBox={ "0 0 " (width) " " (height) } xmlns="http://www.w3.org/2000/svg" {
            text x="0" y="14" { (top) }
            text x="0" y=(format!("{:.0}", 8.0 + plot.1)) { "0" }
            @for (d, x, y, h, count, class, colour) in bars {
                rect class=(class) x=(x) y=(y) width=(bar) height=(h) fill=(colour) {
                    title { (d.date) " " (class) ": " (count) }
                }
            }
            @if let (Some(first), Some(last)) = (days.first(), days.last()) {
                text x=(left) y=(height) { (first.date) }
                text x=(width - 8.0) y=(height) text-anchor="end" { (last.date) }
            }
        }
    }
}

/// A sortable table: its id, its column heads and its rows.
fn table(id: &str, heads: &[&str], rows: Markup) -> Markup {
    html! {
        table id=(id) class="sortable" {
            thead { tr { @for h in heads { th { (h) } } } }
            tbody { (rows) }
        }
    }
}

fn page(report: &DriftReport) -> Markup {
    let title = format!("sqb drift report: {}", report.target);
    let open = html! {
        @for o in &report.open {
            tr {
                td { (o.finding.describe()) }
                td class=(o.finding.severity) { (o.finding.severity) }
                td { (o.first_seen) }
                td { (o.last_seen) }
                td class="n" { (o.runs_open) }
            }
        }
    };
    let resolved = html! {
        @for r in &report.resolved {
            tr { td { (r.finding.describe()) } td { (r.resolved_at) } td { (r.first_seen) } }
        }
    };
    let resources = html! {
        @for t in &report.top_resources {
            tr {
                td { (t.resource_type) " " (t.resource_name) }
                td { (t.relation) }
                td class="n" { (t.open) }
            }
        }
    };
    let days = html! {
        @for d in &report.days {
            tr {
                td { (d.date) }
                td class="n" { (d.errors) }
                td class="n" { (d.warnings) }
                td class="n" { (d.infos) }
            }
        }
    };
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta http-equiv="Content-Security-Policy" content=(CSP);
                meta name="viewport" content="width=device-width, initial-scale=1";
                style { (PreEscaped(STYLE)) }
                title { (title) }
            }
            body {
                h1 { (title) }
                p {
                    (period(report)) ": " strong { (report.open.len()) " open" } ", "
                    (report.resolved.len()) " resolved in the period."
                }
                h2 { "Findings per day" }
                p {
                    span style="color:#cf222e" { "■" } " errors "
                    span style="color:#d4a72c" { "■" } " warnings "
                    span style="color:#8c959f" { "■" } " notes (each day's last run)"
                }
                (chart(&report.days))
                h2 { "Open" }
                (table("open", &["finding", "severity", "first seen", "last seen", "runs open"], open))
                h2 { "Resolved" }
                (table("resolved", &["finding", "resolved", "first seen"], resolved))
                h2 { "Most open drift" }
                (table("resources", &["resource", "relation", "open"], resources))
                h2 { "Per day" }
                (table("days", &["day", "errors", "warnings", "notes"], days))
                script { (PreEscaped(SORT_SCRIPT)) }
            }
        }
    }
}

/// One self-contained page: the trend chart, then the tables (sortable by any column).
pub fn emit_html(report: &DriftReport, w: &mut dyn Write) -> io::Result<()> {
    w.write_all(page(report).into_string().as_bytes())?;
    writeln!(w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drift::{DayCount, FindingRecord, RunStamp, Summary, Track};
    use crate::report::drift::build;

    /// Every value from the history is escaped, in the tables and in the chart alike.
    #[test]
    fn values_from_the_history_are_escaped() {
        let evil = "<script>alert(1)</script>";
        let summary = Summary {
            runs: vec![RunStamp {
                at: "2026-11-01 02:00:00".into(),
                target: "prod".into(),
                command: crate::drift::AUDIT.into(),
            }],
            tracks: vec![Track {
                finding: FindingRecord {
                    fingerprint: "f".into(),
                    resource_type: "model".into(),
                    resource_name: evil.into(),
                    relation: format!("db.\"{evil}\""),
                    kind: "type_mismatch".into(),
                    column: Some("a&b".into()),
                    severity: "error\" onmouseover=\"x".into(),
                    message: "m".into(),
                    audit: Some(evil.into()),
                },
                command: crate::drift::AUDIT.into(),
                first: 0,
                last: 0,
                runs: 1,
            }],
            days: vec![DayCount {
                date: format!("2026-11-01{evil}"),
                severity: Some("error".into()),
                kind: Some("type_mismatch".into()),
                count: 1,
            }],
        };
        let report = build(format!("prod{evil}"), None, &summary);
        let mut out = Vec::new();
        emit_html(&report, &mut out).unwrap();
        let page = String::from_utf8(out).unwrap();
        assert_eq!(page.matches("<script>").count(), 1, "{page}");
        assert!(
            page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{page}"
        );
        assert!(page.contains("a&amp;b"), "{page}");
        assert!(!page.contains("\" onmouseover"), "{page}");
        assert!(page.contains("<rect class=\"error\""), "{page}");
    }
}
