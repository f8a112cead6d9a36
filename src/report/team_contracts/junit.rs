//! `imports diff` and the consumers' impact as JUnit XML: a suite per import or consumer.

#[allow(clippy::wildcard_imports)]
use super::*;

/// `imports diff` as JUnit XML: a test suite per import, a test case per change, a failure for
/// each change that breaks a model.
pub fn diff_junit(diffs: &[ImportDiff], out: &mut dyn Write) -> io::Result<()> {
    let suites: Vec<Suite> = diffs
        .iter()
        .map(|d| Suite {
            name: format!("import {}", d.name),
            class: format!("import.{}", d.name),
            at: Box::new(|_| Some(d.at.clone())),
            changes: &d.changes,
        })
        .collect();
    junit("sqb imports diff", &suites, out)
}

/// One test suite: its name, the class prefix of its cases, where each change points.
struct Suite<'a> {
    name: String,
    class: String,
    at: Locate<'a>,
    changes: &'a [Impact],
}

/// Changes as JUnit XML: a test case per change, a failure for each that breaks a model.
fn junit(title: &str, suites: &[Suite], out: &mut dyn Write) -> io::Result<()> {
    use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};
    let mut w = quick_xml::Writer::new_with_indent(&mut *out, b' ', 2);
    let breaking = |changes: &[Impact]| {
        changes
            .iter()
            .filter(|c| c.verdict == Verdict::Breaks)
            .count()
    };
    let tests = suites.iter().map(|s| s.changes.len()).sum::<usize>();
    let failures = suites.iter().map(|s| breaking(s.changes)).sum::<usize>();
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    w.write_event(Event::Start(BytesStart::new("testsuites").with_attributes(
        [
            ("name", title),
            ("tests", tests.to_string().as_str()),
            ("failures", failures.to_string().as_str()),
        ],
    )))?;
    for suite in suites {
        let tests = suite.changes.len().to_string();
        let failures = breaking(suite.changes).to_string();
        w.write_event(Event::Start(BytesStart::new("testsuite").with_attributes(
            [
                ("name", suite.name.as_str()),
                ("tests", tests.as_str()),
                ("failures", failures.as_str()),
                ("errors", "0"),
            ],
        )))?;
        for c in suite.changes {
            let describe = c.entry.describe();
            let classname = format!("{}.{}", suite.class, c.entry.model);
            let at = (suite.at)(c);
            let mut case = BytesStart::new("testcase").with_attributes([
                ("name", describe.as_str()),
                ("classname", classname.as_str()),
            ]);
            if let Some((file, ..)) = &at {
                case.push_attribute(("file", file.as_str()));
            }
            if c.verdict != Verdict::Breaks {
                w.write_event(Event::Empty(case))?;
                continue;
            }
            w.write_event(Event::Start(case))?;
            let readers: Vec<String> = c.readers.iter().map(describe_reader).collect();
            let message = format!("{describe}: breaks {}", readers.join(", "));
            w.write_event(Event::Start(BytesStart::new("failure").with_attributes([
                ("type", c.code.unwrap_or("")),
                ("message", message.as_str()),
            ])))?;
            let body = match &at {
                Some((file, line, col)) => format!("{message}\nat: {file}:{line}:{col}"),
                None => message.clone(),
            };
            w.write_event(Event::Text(BytesText::new(&body)))?;
            w.write_event(Event::End(BytesEnd::new("failure")))?;
            w.write_event(Event::End(BytesEnd::new("testcase")))?;
        }
        w.write_event(Event::End(BytesEnd::new("testsuite")))?;
    }
    w.write_event(Event::End(BytesEnd::new("testsuites")))?;
    out.write_all(b"\n")
}

/// `publish --consumers` as JUnit XML: a test suite per consumer, a failure per change that
/// breaks one of its models.
pub fn consumers_junit(
    report: &ConsumersReport,
    published: &Published,
    out: &mut dyn Write,
) -> io::Result<()> {
    let suites: Vec<Suite> = report
        .consumers
        .iter()
        .map(|c| Suite {
            name: format!("consumer {}", c.consumer),
            class: format!("consumer.{}", c.consumer),
            at: Box::new(|c: &Impact| {
                published
                    .at(&c.entry.model, c.entry.column.as_deref())
                    .cloned()
            }),
            changes: &c.changes,
        })
        .collect();
    junit("sqb publish --consumers", &suites, out)
}
