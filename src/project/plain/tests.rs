//! The plain reader against the general one: wherever it answers, the answer is the TOML
//! parser's and the readers', locations included, without a diagnostic.

use std::path::Path;

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

/// Pieces of lines: the plain shape, and what is just outside it.
const LINES: &[&str] = &[
    "[columns.a]",
    "[columns.b]",
    "[columns.B]",
    "[columns.col_1]",
    "[columns.x-y]",
    "[columns.9]",
    "  [columns.c]  # c",
    "[columns.d]#",
    "[columns]",
    "[columns.e.f]",
    "[[columns.g]]",
    "[ columns.h ]",
    "type = \"INTEGER\"",
    "type=\"VARCHAR(40)\"",
    "\ttype =\t\"TEXT[]\"  # arrays",
    "type = \"\"",
    "type = \"\"\"x\"\"\"",
    "type = 'x'",
    "type = \"a\\tb\"",
    "type = true",
    "nullable = false",
    "nullable = true # why",
    "nullable = truex",
    "nullable = False",
    "nullable = \"false\"",
    "description = \"Synthetic ünïcode, 'quotes' and # signs\"",
    "description = \"tab\there\"",
    "model_schema = \"keys\"",
    "alias = \"orders_v2\"",
    "materialized = \"table\"",
    "tags = [\"a\"]",
    "audits = [\"unique\"]",
    "a.b = \"x\"",
    "\"quoted\" = \"x\"",
    "# a comment",
    "   # an indented comment",
    "#",
    "",
    "   ",
    "type = \"unterminated",
    "= \"x\"",
    "nullable",
];

fn sidecar() -> impl Strategy<Value = String> {
    let line = prop::sample::select(LINES);
    let ending = prop::sample::select(&["\n", "\n", "\n", "\r\n", "", " \n", "\u{7f}\n"][..]);
    prop::collection::vec((line, ending), 0..14).prop_map(|lines| {
        let mut text = String::new();
        for (line, ending) in lines {
            text.push_str(line);
            text.push_str(ending);
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
fn generated_sidecars_are_mostly_read_plainly() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let plain_lines = |t: &str| {
        t.lines().all(|l| {
            let l = l.trim();
            l.is_empty()
                || l.starts_with("[columns.") && !l.contains(' ')
                || l.starts_with("type = \"")
        })
    };
    let (mut answered, mut tried) = (0, 0);
    for _ in 0..2000 {
        let text = sidecar().new_tree(&mut runner).unwrap().current();
        if plain_lines(&text) {
            tried += 1;
            answered += usize::from(agrees(&text).unwrap());
        }
    }
    assert!(tried > 20 && answered * 4 > tried, "{answered} of {tried}");
}

/// Every sidecar the repository holds: where the plain reader answers, it agrees.
#[test]
fn every_sidecar_of_the_repository_agrees() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut answered = 0;
    for dir in ["testdata", "examples"] {
        for entry in walkdir::WalkDir::new(root.join(dir)) {
            let entry = entry.unwrap();
            let path = entry.path();
            let in_models = path.components().any(|c| c.as_os_str() == "models");
            if !in_models || path.extension().is_none_or(|e| e != "toml") {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(path) else {
                continue;
            };
            answered += usize::from(agrees(&text).unwrap());
        }
    }
    assert!(answered > 20, "only {answered} sidecars were read plainly");
}
