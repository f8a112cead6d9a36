//! The fast lexer against sqlparser's tokenizer: wherever it answers, the answer is sqlparser's
//! less whitespace and comments, token for token and span for span, in both dialects; and the
//! parser makes the same statements, or the same error, of both.

use proptest::prelude::*;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer};

use super::tokens;
use crate::engine::Engine;

const ENGINES: [Engine; 2] = [Engine::Postgres, Engine::DuckDb];

/// sqlparser's tokens of `sql`, without whitespace and comments.
fn sqlparser_tokens(sql: &str, engine: Engine) -> Option<Vec<TokenWithSpan>> {
    let dialect = engine.dialect();
    let tokens = Tokenizer::new(dialect.as_ref(), sql)
        .with_unescape(true)
        .tokenize_with_location()
        .ok()?;
    let skipped = |t: &TokenWithSpan| matches!(t.token, Token::Whitespace(_));
    Some(tokens.into_iter().filter(|t| !skipped(t)).collect())
}

/// Fails unless the fast lexer either declines or gives sqlparser's tokens, and the parser makes
/// of them what it makes of the text; true if it answered.
fn agrees(sql: &str, engine: Engine) -> Result<bool, TestCaseError> {
    let Some(fast) = tokens(sql, engine) else {
        return Ok(false);
    };
    let slow = sqlparser_tokens(sql, engine);
    prop_assert_eq!(Some(&fast), slow.as_ref(), "{:?} on {:?}", sql, engine);
    let dialect = engine.dialect();
    let parsed = Parser::new(dialect.as_ref())
        .with_tokens_with_locations(fast)
        .parse_statements();
    let whole = Parser::parse_sql(dialect.as_ref(), sql);
    prop_assert_eq!(
        format!("{parsed:?}"),
        format!("{whole:?}"),
        "{:?} on {:?}",
        sql,
        engine
    );
    Ok(true)
}

/// Pieces of the lexer's subset.
const PLAIN: &[&str] = &[
    "SELECT",
    "select",
    "FROM",
    "AS",
    "a",
    "_x1",
    "Col_2",
    "e",
    "E",
    "x",
    "N",
    "U",
    "b",
    "1",
    "0",
    "42",
    "12.5",
    ".",
    ",",
    "(",
    ")",
    "[",
    "]",
    ";",
    "*",
    "+",
    "-",
    "-- note",
    "/",
    "=",
    "<",
    ">",
    "<=",
    ">=",
    "<>",
    "!=",
    "||",
    "::",
    "'abc'",
    "'it''s'",
    "'a\\b'",
    "'é'",
    "\"Q\"",
    "\"a\"\"b\"",
    " ",
    "\t",
    "\n",
    "\r\n",
    "->",
    "->>",
    "/* c */",
    "/* a /* n\n */ b */",
    "/**/",
    "/* é * / */",
];

/// Pieces at and beyond its border: each makes the text something else when it touches the
/// piece before or after it.
const BORDER: &[&str] = &[
    "COPY", "STDIN", "L", "q", "r", "1.", "0x1F", "0b1", "1e5", "1E-3", "1_000", ".5", "._", "..",
    "--", "//", "/*", "*/", "==", "=>", "<=>", "<->", "<@", "@>", "!", "!~", "|", "||/", "|/", ":",
    ":=", "'", "''", "\"", "\"\"", "\r", "é", "ß", "$", "$1", "$$", "?", "@", "#", "~", "^", "&",
    "{", "}", "`", "\\", "%", "->", "->>", "#>>", "--+", "/*+ x */", "--a1+", "/* a+ */",
];

/// Text mostly of the subset, with a border piece now and then.
fn sql() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        6 => prop::sample::select(PLAIN),
        1 => prop::sample::select(BORDER),
    ];
    prop::collection::vec(piece, 0..24).prop_map(|pieces| pieces.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    #[test]
    fn answers_only_what_sqlparser_would(sql in sql()) {
        for engine in ENGINES {
            agrees(&sql, engine)?;
        }
    }

    /// Text made only of the subset, spaced, is always answered.
    #[test]
    fn answers_the_plain_subset(pieces in prop::collection::vec(prop::sample::select(PLAIN), 0..40)) {
        let sql = pieces.join(" ");
        for engine in ENGINES {
            prop_assert!(agrees(&sql, engine)?, "declined {:?}", sql);
        }
    }
}

/// The generated text is answered often enough, and declined often enough, for the property
/// above to test both sides of the border.
#[test]
fn generated_text_falls_on_both_sides() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = sql();
    let answered = (0..1000)
        .filter(|_| {
            let sql = strategy.new_tree(&mut runner).unwrap().current();
            tokens(&sql, Engine::Postgres).is_some()
        })
        .count();
    assert!(
        (200..=800).contains(&answered),
        "{answered} of 1000 answered"
    );
}

/// Every model of the test projects and the example: answered alike, and most answered.
#[test]
fn agrees_on_the_projects_sql() {
    let files = crate::repository_files::with_extension("sql");
    let mut answered = 0;
    for path in &files {
        let sql = std::fs::read_to_string(path).unwrap();
        for engine in ENGINES {
            answered += usize::from(agrees(&sql, engine).unwrap());
        }
    }
    assert!(files.len() > 100, "{} files", files.len());
    assert!(
        answered * 2 > files.len() * 2,
        "{answered} of {}",
        files.len() * 2
    );
}

/// sqlparser reads a comment after `SELECT` as an optimizer hint in PostgreSQL's dialect when a
/// `+` opens it; the lexer leaves those to sqlparser, and the parse is the same.
#[test]
fn comments_that_read_as_hints_are_declined() {
    for sql in [
        "SELECT--+",
        "SELECT /*+ SeqScan(t) */ 1",
        "SELECT --abc+x\n1",
    ] {
        for engine in ENGINES {
            assert_eq!(tokens(sql, engine), None, "{sql:?}");
        }
    }
    for sql in ["SELECT -- a+b\n1", "SELECT /* 1 + 1 */ 1"] {
        for engine in ENGINES {
            assert!(agrees(sql, engine).unwrap(), "{sql:?}");
        }
    }
}

#[test]
fn a_bench_model_is_answered_with_its_spans() {
    let sql =
        "-- m\nSELECT CAST(s.c00 AS NUMERIC(12,2)) AS \"c 0\"\r\nFROM src AS s WHERE s.x <> 'a''b'";
    for engine in ENGINES {
        let fast = tokens(sql, engine).expect("answered");
        assert_eq!(Some(fast), sqlparser_tokens(sql, engine));
    }
}
