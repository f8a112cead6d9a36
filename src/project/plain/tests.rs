//! The plain reader against the general one: wherever it answers, the answer is the TOML
//! parser's and the readers', locations included, without a diagnostic.

use proptest::prelude::*;

use super::read;
use crate::project::load::parse_sidecar_toml;
use crate::source::FileId;

const FILE: FileId = FileId(7);

/// What the general reader makes of `text`, when it reads it without a diagnostic.
fn general(text: &str) -> Option<String> {
    let (sidecar, diags) = parse_sidecar_toml(text, FILE, "m");
    let (props, columns, semantic) = sidecar?;
    (diags.is_empty() && semantic.is_none()).then(|| format!("{props:?} {columns:?}"))
}

/// Fails unless the plain reader declines or answers as the general one; true if it answered.
fn agrees(text: &str) -> Result<bool, TestCaseError> {
    let Some((props, columns)) = read(text, FILE) else {
        return Ok(false);
    };
    let plain = format!("{props:?} {columns:?}");
    prop_assert_eq!(Some(plain), general(text), "{:?}", text);
    Ok(true)
}

#[test]
fn the_shapes_generate_and_the_bench_write_are_read_plainly() {
    let written = "# generated\nmodel_schema = \"order_keys\"\n\n[columns.item_id]\ntype = \"INTEGER\"\nnullable = false\n\n[columns.sku]\ntype = \"VARCHAR\"\n";
    let bench = "description = \"Synthetic relation rel_00000.\"\n\n[columns.c00]\ntype = \"NUMERIC(12,2)\"\nnullable = false\n\n[columns.c01]\ntype = \"TEXT[]\"\ndescription = \"é, \t and ' are plain\"\n";
    for text in [written, bench, "", "\n", "# only a comment"] {
        assert!(agrees(text).unwrap(), "declined {text:?}");
    }
}

#[test]
fn what_the_general_reader_reports_is_left_to_it() {
    for text in [
        "[columns.a]\ntype = 1\n",
        "[columns.a]\nnullable = \"no\"\n",
        "[columns.a]\n[columns.A]\n",
        "[columns.a]\n[columns.a]\n",
        "[columns.a]\ntype = \"x\"\ntype = \"y\"\n",
        "description = \"a\"\ndescription = \"b\"\n",
        "materialized = \"table\"\n",
        "[columns.a]\naudits = [\"unique\"]\n",
        "[columns.a]\ntype = \"a\\\"b\"\n",
        "[columns.a]\r\ntype = \"x\"\r\n",
        "[columns.a]\ntype = \"\"\"x\"\"\"\n",
        "[columns.\"a b\"]\n",
        "columns.a.type = \"x\"\n",
        "[other]\n",
        "\u{feff}description = \"x\"\n",
    ] {
        assert!(read(text, FILE).is_none(), "answered {text:?}");
    }
}

/// Values of the plain shape's keys, as lines.
const TYPES: &[&str] = &[
    "type = \"INTEGER\"",
    "type=\"VARCHAR(40)\"",
    "\ttype =\t\"TEXT[]\"  # arrays",
    "type = \"\"",
];
const NULLABLES: &[&str] = &[
    "nullable = false",
    "nullable = true # why",
    "nullable = false#tight",
];
const DESCRIPTIONS: &[&str] = &[
    "description = \"Synthetic ünïcode, 'quotes' and # signs\"",
    "description = \"tab\there\"",
];
const MODEL: &[&str] = &["model_schema = \"keys\"", "alias = \"orders_v2\""];
const FILLER: &[&str] = &["# a comment", "   # an indented comment", "#", "", "   "];

/// Lines just outside the plain shape, or that the general reader reports.
const OTHER: &[&str] = &[
    "[columns]",
    "[columns.e.f]",
    "[[columns.g]]",
    "[ columns.h ]",
    "  [columns.c]  # c",
    "[columns.d]#",
    "[columns.a]",
    "type = \"\"\"x\"\"\"",
    "type = 'x'",
    "type = \"a\\tb\"",
    "type = true",
    "type = \"INTEGER\"",
    "nullable = truex",
    "nullable = False",
    "nullable = \"false\"",
    "nullable = true",
    "description = \"nul \u{0} and c1 \u{85}\"",
    "description = \"again\"",
    "# c1 \u{85} in a comment",
    "materialized = \"table\"",
    "model_schema = \"keys\"",
    "tags = [\"a\"]",
    "audits = [\"unique\"]",
    "a.b = \"x\"",
    "\"quoted\" = \"x\"",
    "type = \"unterminated",
    "= \"x\"",
    "nullable",
];

fn pick(lines: &'static [&'static str]) -> impl Strategy<Value = &'static str> {
    prop::sample::select(lines)
}

/// A column header with a short bare name (names collide, also up to case, now and then).
fn header() -> impl Strategy<Value = String> {
    let char = pick_char();
    prop::collection::vec(char, 1..5)
        .prop_map(|name| format!("[columns.{}]", name.into_iter().collect::<String>()))
}

fn pick_char() -> impl Strategy<Value = char> {
    prop::sample::select(&['a', 'b', 'c', 'd', 'B', 'x', 'y', '_', '-', '1', '2'][..])
}

/// A column's lines: its header, each key at most once, comments and blank lines.
fn column() -> impl Strategy<Value = Vec<String>> {
    let keys = (
        prop::option::of(pick(TYPES)),
        prop::option::of(pick(NULLABLES)),
        prop::option::weighted(0.2, pick(DESCRIPTIONS)),
        prop::option::weighted(0.2, pick(FILLER)),
    );
    (header(), keys).prop_map(|(header, (ty, nullable, description, filler))| {
        let body = [ty, nullable, description, filler].into_iter().flatten();
        std::iter::once(header)
            .chain(body.map(String::from))
            .collect()
    })
}

/// A sidecar of the plain shape, perhaps with one line from outside it put in, or one line
/// ended otherwise.
fn sidecar() -> impl Strategy<Value = String> {
    let model = (
        prop::option::of(pick(DESCRIPTIONS)),
        prop::option::weighted(0.3, pick(MODEL)),
        prop::option::weighted(0.3, pick(FILLER)),
    );
    let other = prop::option::weighted(0.3, (any::<prop::sample::Index>(), pick(OTHER)));
    let ending = prop::option::weighted(
        0.15,
        (
            any::<prop::sample::Index>(),
            pick(&["\r\n", "", " \n", "\u{7f}\n"]),
        ),
    );
    let columns = prop::collection::vec(column(), 0..8);
    (model, columns, other, ending).prop_map(|((d, m, f), columns, other, ending)| {
        let mut lines: Vec<String> = [d, m, f].into_iter().flatten().map(String::from).collect();
        lines.extend(columns.into_iter().flatten());
        if let Some((at, line)) = other {
            lines.insert(at.index(lines.len() + 1), line.to_string());
        }
        let odd = ending.map(|(at, e)| (at.index(lines.len().max(1)), e));
        let mut text = String::new();
        for (i, line) in lines.iter().enumerate() {
            text.push_str(line);
            text.push_str(odd.filter(|(at, _)| *at == i).map_or("\n", |(_, e)| e));
        }
        text
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn plain_reading_is_the_general_reading(text in sidecar()) {
        agrees(&text)?;
    }
}

#[test]
fn generated_sidecars_are_often_read_plainly() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let mut answered = 0;
    for _ in 0..1000 {
        let text = sidecar().new_tree(&mut runner).unwrap().current();
        answered += usize::from(agrees(&text).unwrap());
    }
    // The property above tests nothing where the plain reader declines.
    assert!(answered > 400, "only {answered} of 1000 were read plainly");
}

/// Every sidecar the repository holds: where the plain reader answers, it agrees.
#[test]
fn every_sidecar_of_the_repository_agrees() {
    let mut answered = 0;
    for path in crate::repository_files::with_extension("toml") {
        if !path.components().any(|c| c.as_os_str() == "models") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        answered += usize::from(agrees(&text).unwrap());
    }
    assert!(answered > 20, "only {answered} sidecars were read plainly");
}
