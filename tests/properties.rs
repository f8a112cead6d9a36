//! Property tests: type normalization is idempotent and canonical spellings round-trip; TOML
//! edits keep every untouched line; any identifier survives generate → compile → diff.

mod common;

use proptest::prelude::*;
use sqb::edit::toml::{Editor, Home};
use sqb::engine::Engine;
use sqb::types;

// ---------------------------------------------------------------------------------------------
// Types

fn base_type() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("integer".to_string()),
        Just("INT8".to_string()),
        Just("smallint".to_string()),
        Just("bigint".to_string()),
        Just("text".to_string()),
        Just("boolean".to_string()),
        Just("date".to_string()),
        Just("uuid".to_string()),
        Just("double precision".to_string()),
        Just("real".to_string()),
        Just("timestamptz".to_string()),
        Just("timestamp with time zone".to_string()),
        Just("time without time zone".to_string()),
        Just("interval".to_string()),
        Just("jsonb".to_string()),
        Just("json".to_string()),
        Just("bytea".to_string()),
        Just("blob".to_string()),
        Just("hugeint".to_string()),
        Just("_int4".to_string()),
        (1u32..=10_000).prop_map(|n| format!("varchar({n})")),
        (1u32..=10_000).prop_map(|n| format!("character varying({n})")),
        (1u32..=255).prop_map(|n| format!("char({n})")),
        (1u32..=38, 0u32..=10).prop_map(|(p, s)| format!("numeric({p},{})", s.min(p))),
        (1u32..=38).prop_map(|p| format!("decimal({p})")),
        (0u32..=6).prop_map(|p| format!("timestamp({p})")),
    ]
}

fn type_text() -> impl Strategy<Value = String> {
    base_type().prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            inner.clone().prop_map(|t| format!("{t}[]")),
            inner.clone().prop_map(|t| format!("{t}[3]")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("STRUCT(a {a}, \"b c\" {b})")),
            (inner.clone(), inner).prop_map(|(k, v)| format!("MAP({k}, {v})")),
        ]
    })
}

fn engine() -> impl Strategy<Value = Engine> {
    prop_oneof![Just(Engine::Postgres), Just(Engine::DuckDb)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn canonical_spellings_round_trip(text in type_text(), engine in engine()) {
        // Not every generated spelling exists on every engine; those are errors, never panics.
        let Ok(ty) = types::parse(&text, engine) else { return Ok(()) };
        let canonical = ty.to_string();
        let again = types::parse(&canonical, engine)
            .map_err(|e| TestCaseError::fail(format!("{canonical} does not parse: {e}")))?;
        prop_assert_eq!(&again, &ty, "{} -> {}", text, canonical);
        prop_assert_eq!(again.to_string(), canonical);
        // The canonical spelling is equivalent, both ways, to what was written.
        prop_assert!(types::equivalent(&ty, &again, engine));
        prop_assert!(types::equivalent(&again, &ty, engine));
    }

    #[test]
    fn normalization_is_idempotent(text in type_text(), engine in engine()) {
        let Ok(ty) = types::parse(&text, engine) else { return Ok(()) };
        let once = types::normalize(&ty, engine);
        prop_assert_eq!(types::normalize(&once, engine), once.clone());
        // A type is always equivalent to itself and to its normal form.
        prop_assert!(types::equivalent(&ty, &ty, engine));
        prop_assert!(types::equivalent(&ty, &once, engine));
    }

    #[test]
    fn any_text_is_a_type_or_an_error(text in "\\PC{0,40}", engine in engine()) {
        let _ = types::parse(&text, engine);
    }
}

// ---------------------------------------------------------------------------------------------
// TOML edits

/// Identifiers as warehouses store them: unicode, quotes, dots, spaces, leading digits, case.
fn identifier() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z_][a-z0-9_]{0,12}",
        "[A-Za-z][A-Za-z0-9]{0,8}",
        "[0-9][a-z]{0,4}",
        "[a-z]{1,4}[ .\"'#=\\[\\]\\\\][a-z]{1,4}",
        "[éüßñøå日本語👍]{1,4}",
        " {1,2}[a-z]{1,3}",
    ]
}

/// A sidecar in one of the styles people write, with comments everywhere.
fn sidecar() -> impl Strategy<Value = (String, Vec<String>)> {
    (
        prop::collection::btree_set("[a-z]{1,6}", 0..5),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(names, tables, crlf)| {
            let names: Vec<String> = names.into_iter().collect();
            let mut text = String::from("# Owned by the data team.\ncontract = \"enforced\" # keep\n\n");
            if tables {
                for n in &names {
                    text.push_str(&format!(
                        "# about {n}\n[columns.{n}]\ntype = \"TEXT\"   # as is\ndescription = \"{n}\"\n\n"
                    ));
                }
            } else {
                text.push_str("[columns]\n");
                for n in &names {
                    text.push_str(&format!("{n} = {{ type = \"TEXT\" }} # inline\n"));
                }
            }
            text.push_str("# trailing comment\n");
            if crlf {
                text = text.replace('\n', "\r\n");
            }
            (text, names)
        })
}

/// Whether `small`'s lines appear in `big` in the same order.
fn is_subsequence(small: &[&str], big: &[&str]) -> bool {
    let mut it = big.iter();
    small.iter().all(|line| it.any(|b| b == line))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn adding_columns_keeps_every_line_and_reads_back(
        (text, existing) in sidecar(),
        new in prop::collection::vec((identifier(), any::<bool>()), 1..6),
    ) {
        let mut editor = Editor::parse(&text).unwrap();
        let mut added = Vec::new();
        for (name, not_null) in &new {
            if existing.contains(name) || added.iter().any(|(n, _)| n == name) {
                continue;
            }
            editor.add_column(&Home::Root, name, "VARCHAR(20)", *not_null).unwrap();
            added.push((name.clone(), *not_null));
        }
        let out = editor.render();
        let before: Vec<&str> = text.lines().collect();
        let after: Vec<&str> = out.lines().collect();
        prop_assert!(is_subsequence(&before, &after), "lines lost:\n{}\n---\n{}", text, out);
        prop_assert_eq!(text.contains("\r\n"), out.contains("\r\n"));
        // The result reads back with every name exactly as given.
        let doc: toml_edit::DocumentMut = out.parse().unwrap();
        let columns = doc["columns"].as_table_like().unwrap();
        for (name, not_null) in &added {
            let column = columns.get(name).and_then(|c| c.as_table_like());
            prop_assert!(column.is_some(), "{:?} missing in\n{}", name, out);
            let column = column.unwrap();
            prop_assert_eq!(column.get("type").and_then(|t| t.as_str()), Some("VARCHAR(20)"));
            prop_assert_eq!(column.get("nullable").and_then(|t| t.as_bool()), (*not_null).then_some(false));
        }
        for name in &existing {
            prop_assert!(columns.contains_key(name));
        }
    }

    #[test]
    fn setting_a_type_changes_one_value_only((text, existing) in sidecar(), pick in any::<prop::sample::Index>()) {
        prop_assume!(!existing.is_empty());
        let name = &existing[pick.index(existing.len())];
        let mut editor = Editor::parse(&text).unwrap();
        editor.set_type(&Home::Root, name, "BIGINT").unwrap();
        let out = editor.render();
        let before: Vec<&str> = text.lines().collect();
        let after: Vec<&str> = out.lines().collect();
        prop_assert_eq!(before.len(), after.len());
        let changed: Vec<_> = before.iter().zip(&after).filter(|(a, b)| a != b).collect();
        prop_assert_eq!(changed.len(), 1, "{}\n---\n{}", text, out);
        prop_assert!(changed[0].1.contains("BIGINT"));
    }
}

// ---------------------------------------------------------------------------------------------
// Identifiers end to end

const DUCK_HEADER: &str = "name = \"ids\"\ndefault_target = \"prod\"\n\n[connection]\nengine = \"duckdb\"\npath = \"w.duckdb\"\n\n[targets.prod]\nschema = \"main\"\n";

fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

proptest! {
    // Each case runs sqb three times; a few dozen cases cover the identifier classes.
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn any_identifier_survives_generate_compile_and_diff(
        names in prop::collection::btree_set(identifier(), 1..5),
    ) {
        // Names equal up to case are one column to sqb (a declaration may not repeat them).
        let mut seen = std::collections::HashSet::new();
        let names: Vec<String> = names.into_iter().filter(|n| seen.insert(n.to_lowercase())).collect();
        let tmp = tempfile::tempdir().unwrap();
        let cols = names.iter().map(|n| format!("{} VARCHAR", quote(n))).collect::<Vec<_>>().join(", ");
        common::duckdb_file(&tmp.path().join("w.duckdb"), &format!("CREATE TABLE odd ({cols});"));
        let select = names.iter().map(|n| quote(n)).collect::<Vec<_>>().join(", ");
        common::write_files(tmp.path(), &[
            ("sqb.toml", DUCK_HEADER),
            ("models/odd.sql", &format!("SELECT {select}\nFROM raw.odd\n")),
        ]);
        let sqb = |args: &[&str]| common::run(common::sqb().arg("--project-dir").arg(tmp.path()).args(args));
        let generate = sqb(&["contract", "generate", "--from", "prod", "--write"]);
        prop_assert_eq!(generate.status.code(), Some(0), "{}", common::transcript(&generate, tmp.path()));
        let compile = sqb(&["compile"]);
        prop_assert_eq!(compile.status.code(), Some(0), "{}", common::transcript(&compile, tmp.path()));
        let diff = sqb(&["contract", "diff", "--from", "prod", "--json"]);
        prop_assert_eq!(diff.status.code(), Some(0), "{}", common::transcript(&diff, tmp.path()));
        // The sidecar names every column exactly as stored.
        let sidecar = std::fs::read_to_string(tmp.path().join("models/odd.toml")).unwrap();
        let doc: toml_edit::DocumentMut = sidecar.parse().unwrap();
        let declared: Vec<String> = doc["columns"].as_table_like().unwrap().iter().map(|(k, _)| k.to_string()).collect();
        prop_assert_eq!(declared, names);
    }
}
