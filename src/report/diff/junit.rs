//! JUnit XML for CI dashboards: one test case per resource, one failure per finding.

use std::io::{self, Write};

use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};
use quick_xml::Writer;

use super::DiffReport;

pub fn emit(report: &DiffReport, out: &mut dyn Write) -> io::Result<()> {
    let mut writer = Writer::new_with_indent(&mut *out, b' ', 2);
    write(&mut writer, report)?;
    out.write_all(b"\n")
}

fn write<W: Write>(w: &mut Writer<W>, report: &DiffReport) -> io::Result<()> {
    let failures: usize = report
        .resources
        .iter()
        .map(|r| r.findings.iter().filter(|f| f.is_difference()).count())
        .sum();
    let tests = report.resources.len().to_string();
    let failures = failures.to_string();
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    let suites = BytesStart::new("testsuites").with_attributes([
        ("name", "sqb contract diff"),
        ("tests", tests.as_str()),
        ("failures", failures.as_str()),
    ]);
    w.write_event(Event::Start(suites))?;
    let suite_name = format!("contract diff {}", report.describe_target());
    let suite = BytesStart::new("testsuite").with_attributes([
        ("name", suite_name.as_str()),
        ("tests", tests.as_str()),
        ("failures", failures.as_str()),
        ("errors", "0"),
    ]);
    w.write_event(Event::Start(suite))?;
    for r in &report.resources {
        let classname = format!("{}.{}", r.resource_type, r.resource_name);
        let case = BytesStart::new("testcase").with_attributes([
            ("name", r.relation.as_str()),
            ("classname", classname.as_str()),
            ("file", r.file.as_str()),
        ]);
        let failing: Vec<_> = r.findings.iter().filter(|f| f.is_difference()).collect();
        if failing.is_empty() {
            w.write_event(Event::Empty(case))?;
            continue;
        }
        w.write_event(Event::Start(case))?;
        for f in failing {
            let message = match f.is_new() {
                true => format!("new: {}", f.message),
                false => f.message.clone(),
            };
            let failure = BytesStart::new("failure")
                .with_attributes([("type", f.kind.as_str()), ("message", message.as_str())]);
            w.write_event(Event::Start(failure))?;
            let location = f.location.as_ref().map_or(r.file.clone(), |l| {
                format!("{}:{}:{}", l.file, l.line, l.column)
            });
            let mut body = format!(
                "{}\ncolumn: {}\ndeclared: {}\nphysical: {}\nat: {location}\nfingerprint: {}",
                f.message,
                f.column.as_deref().unwrap_or("-"),
                f.declared_type.as_deref().unwrap_or("-"),
                f.physical_type.as_deref().unwrap_or("-"),
                f.fingerprint
            );
            if let Some(mark) = f.baseline {
                body.push_str(match mark {
                    super::baseline::Mark::New => "\nbaseline: new",
                    super::baseline::Mark::Known => "\nbaseline: known",
                });
            }
            w.write_event(Event::Text(BytesText::new(&body)))?;
            w.write_event(Event::End(BytesEnd::new("failure")))?;
        }
        w.write_event(Event::End(BytesEnd::new("testcase")))?;
    }
    w.write_event(Event::End(BytesEnd::new("testsuite")))?;
    w.write_event(Event::End(BytesEnd::new("testsuites")))?;
    Ok(())
}
