//! `sqb assert`'s report: a listing, JSON, JUnit XML (a test case per assertion) or GitHub
//! Actions annotations (at the line that expects the value).

use std::io::{self, Write};

use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};
use serde_json::{json, Value};

use super::diff::github::{data, property};

/// How one assertion ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Passed,
    Failed(Vec<Failure>),
    /// It could not run: refused (with the refusal's code) or the warehouse failed.
    Error {
        code: String,
        message: String,
    },
}

/// One difference from the expectation, at the line that expects it.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub line: usize,
    pub message: String,
    pub expected: String,
    pub actual: String,
}

#[derive(Debug, Clone)]
pub struct AssertionOutcome {
    pub id: String,
    /// Where the assertion is: its file (relative to the root) and line.
    pub file: String,
    pub line: usize,
    pub sql: Option<String>,
    pub verdict: Verdict,
}

impl AssertionOutcome {
    pub fn passed(&self) -> bool {
        self.verdict == Verdict::Passed
    }
}

#[derive(Debug)]
pub struct AssertReport {
    pub target: String,
    pub outcomes: Vec<AssertionOutcome>,
}

impl AssertReport {
    /// The share of assertions that passed (1 with none).
    pub fn accuracy(&self) -> f64 {
        match self.outcomes.len() {
            0 => 1.0,
            n => self.outcomes.iter().filter(|o| o.passed()).count() as f64 / n as f64,
        }
    }

    pub fn errors(&self) -> usize {
        self.outcomes
            .iter()
            .filter(|o| matches!(o.verdict, Verdict::Error { .. }))
            .count()
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AssertFormat {
    Text,
    Json,
    Junit,
    Github { prefix: String },
}

pub fn emit(report: &AssertReport, format: &AssertFormat, w: &mut dyn Write) -> io::Result<()> {
    match format {
        AssertFormat::Text => text(report, w),
        AssertFormat::Json => {
            serde_json::to_writer_pretty(&mut *w, &json_of(report))?;
            writeln!(w)
        }
        AssertFormat::Junit => junit(report, w),
        AssertFormat::Github { prefix } => github(report, prefix, w),
    }
}

/// A difference as one line: what differs, and the expected and actual values when there are.
fn failure_text(f: &Failure) -> String {
    match f.expected.is_empty() && f.actual.is_empty() {
        true => f.message.clone(),
        false => format!("{}: expected {}, got {}", f.message, f.expected, f.actual),
    }
}

fn status(o: &AssertionOutcome) -> &'static str {
    match o.verdict {
        Verdict::Passed => "passed",
        Verdict::Failed(_) => "failed",
        Verdict::Error { .. } => "error",
    }
}

fn text(report: &AssertReport, w: &mut dyn Write) -> io::Result<()> {
    for o in &report.outcomes {
        let at = format!("{}:{}", o.file, o.line);
        match &o.verdict {
            Verdict::Passed => writeln!(w, "pass  {}", o.id)?,
            Verdict::Failed(failures) => {
                writeln!(w, "FAIL  {}  {at}", o.id)?;
                for f in failures {
                    writeln!(w, "      {}  ({}:{})", failure_text(f), o.file, f.line)?;
                }
                if let Some(sql) = &o.sql {
                    writeln!(w, "      sql:")?;
                    for line in sql.lines() {
                        writeln!(w, "        {line}")?;
                    }
                }
            }
            Verdict::Error { code, message } => {
                writeln!(w, "ERROR {}  {at}\n      [{code}] {message}", o.id)?
            }
        }
    }
    Ok(())
}

/// One assertion's outcome as JSON (also `sqb query --harness`'s entries).
pub fn outcome_json(o: &AssertionOutcome) -> Value {
    let mut doc = json!({
        "id": o.id,
        "file": o.file,
        "line": o.line,
        "status": status(o),
        "sql": o.sql,
    });
    match &o.verdict {
        Verdict::Failed(failures) => {
            doc["failures"] = failures
                .iter()
                .map(|f| {
                    json!({
                        "line": f.line,
                        "message": f.message,
                        "expected": f.expected,
                        "actual": f.actual,
                    })
                })
                .collect();
        }
        Verdict::Error { code, message } => {
            doc["error"] = json!({ "code": code, "message": message });
        }
        Verdict::Passed => {}
    }
    doc
}

fn json_of(report: &AssertReport) -> Value {
    let passed = report.outcomes.iter().filter(|o| o.passed()).count();
    json!({
        "target": report.target,
        "assertions": report.outcomes.iter().map(outcome_json).collect::<Vec<_>>(),
        "summary": {
            "total": report.outcomes.len(),
            "passed": passed,
            "failed": report.outcomes.len() - passed - report.errors(),
            "errors": report.errors(),
            "accuracy": report.accuracy(),
        },
    })
}

fn junit(report: &AssertReport, out: &mut dyn Write) -> io::Result<()> {
    let mut w = quick_xml::Writer::new_with_indent(&mut *out, b' ', 2);
    let tests = report.outcomes.len().to_string();
    let errors = report.errors();
    let failures = (report.outcomes.iter().filter(|o| !o.passed()).count() - errors).to_string();
    let errors = errors.to_string();
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    let name = format!("sqb assert {}", report.target);
    let attrs = [
        ("name", name.as_str()),
        ("tests", tests.as_str()),
        ("failures", failures.as_str()),
        ("errors", errors.as_str()),
    ];
    w.write_event(Event::Start(
        BytesStart::new("testsuites").with_attributes(attrs),
    ))?;
    w.write_event(Event::Start(
        BytesStart::new("testsuite").with_attributes(attrs),
    ))?;
    for o in &report.outcomes {
        let case = BytesStart::new("testcase").with_attributes([
            ("name", o.id.as_str()),
            ("classname", "assertion"),
            ("file", o.file.as_str()),
        ]);
        let (tag, kind, message, body) = match &o.verdict {
            Verdict::Passed => {
                w.write_event(Event::Empty(case))?;
                continue;
            }
            Verdict::Failed(failures) => {
                let body: Vec<String> = failures
                    .iter()
                    .map(|f| format!("{} ({}:{})", failure_text(f), o.file, f.line))
                    .collect();
                let first = failures
                    .first()
                    .map_or(String::new(), |f| f.message.clone());
                let mut body = body.join("\n");
                if let Some(sql) = &o.sql {
                    body.push_str("\nsql:\n");
                    body.push_str(sql);
                }
                ("failure", "mismatch".to_string(), first, body)
            }
            Verdict::Error { code, message } => {
                ("error", code.clone(), message.clone(), message.clone())
            }
        };
        w.write_event(Event::Start(case))?;
        w.write_event(Event::Start(BytesStart::new(tag).with_attributes([
            ("type", kind.as_str()),
            ("message", message.as_str()),
        ])))?;
        w.write_event(Event::Text(BytesText::new(&body)))?;
        w.write_event(Event::End(BytesEnd::new(tag)))?;
        w.write_event(Event::End(BytesEnd::new("testcase")))?;
    }
    w.write_event(Event::End(BytesEnd::new("testsuite")))?;
    w.write_event(Event::End(BytesEnd::new("testsuites")))?;
    out.write_all(b"\n")
}

fn github(report: &AssertReport, prefix: &str, w: &mut dyn Write) -> io::Result<()> {
    for o in &report.outcomes {
        let file = property(&format!("{prefix}{}", o.file));
        match &o.verdict {
            Verdict::Passed => {}
            Verdict::Failed(failures) => {
                for f in failures {
                    writeln!(
                        w,
                        "::error file={file},line={},title={}::{}",
                        f.line,
                        property(&format!("sqb assert {}", o.id)),
                        data(&format!(
                            "{}: expected {}, got {}",
                            f.message, f.expected, f.actual
                        ))
                    )?;
                }
            }
            Verdict::Error { code, message } => writeln!(
                w,
                "::error file={file},line={},title={}::{}",
                o.line,
                property(&format!("sqb assert {} could not run", o.id)),
                data(&format!("[{code}] {message}"))
            )?,
        }
    }
    Ok(())
}
