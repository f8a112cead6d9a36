//! Declared types resolved once every file is read: parsed in the project's engine, enum and
//! named types looked up, each error located inside its string.

#[allow(clippy::wildcard_imports)]
use super::*;

/// Parses every declared column type, reporting malformed and unknown types.
pub(super) fn resolve_types(project: &mut Project, engine: Engine) {
    let enum_names: Vec<String> = project.enums.keys().cloned().collect();
    let mut diags = Vec::new();
    // A large project spells a few dozen types hundreds of thousands of times: each spelling that
    // resolves cleanly is resolved once. One that does not is resolved at each use, to locate it.
    let mut resolved: foldhash::HashMap<Arc<str>, Arc<DataType>> = Default::default();
    let mut resolve = |col: &mut Column, sources: &SourceMap| {
        let Some(text) = &col.type_text else { return };
        if let Some(ty) = resolved.get(&*text.value) {
            col.ty = Some(ty.clone());
            return;
        }
        let before = diags.len();
        col.ty = resolve_one(text, engine, &enum_names, sources, &mut diags).map(Arc::new);
        if let (Some(ty), true) = (&col.ty, diags.len() == before) {
            resolved.insert(text.value.clone(), ty.clone());
        }
    };
    for model in &mut project.models {
        model
            .columns
            .iter_mut()
            .for_each(|c| resolve(c, &project.sources));
    }
    for set in project.schemas.values_mut() {
        set.columns
            .iter_mut()
            .for_each(|c| resolve(c, &project.sources));
    }
    for source in &mut project.source_tables {
        source
            .columns
            .iter_mut()
            .for_each(|c| resolve(c, &project.sources));
    }
    project.diagnostics.extend(diags);
}

pub(super) fn resolve_one(
    text: &Spanned<Arc<str>>,
    engine: Engine,
    enums: &[String],
    sources: &SourceMap,
    diags: &mut Vec<Diagnostic>,
) -> Option<DataType> {
    let ty = match types::parse(&text.value, engine) {
        Ok(ty) => ty,
        Err(err) => {
            let loc = offset_in_string(text, err.offset, sources);
            diags.push(
                Diagnostic::error(
                    Code::UnknownType,
                    format!("invalid type `{}`: {err}", text.value),
                )
                .at(loc, err.message.clone())
                .hint(
                    "write a type such as \"VARCHAR(255)\", \"NUMERIC(18,2)\" or \"TIMESTAMPTZ\"",
                ),
            );
            return None;
        }
    };
    for name in ty.named_types() {
        if types::is_recognized_named(name, engine)
            || enums.iter().any(|e| e.eq_ignore_ascii_case(name))
        {
            continue;
        }
        // A name that is a built-in but for case was quoted (Postgres's one-byte `"char"` is
        // not CHAR): offering the built-in would suggest another type.
        let candidates = BUILTIN_NAMES
            .iter()
            .copied()
            .chain(enums.iter().map(String::as_str))
            .filter(|c| !c.eq_ignore_ascii_case(name));
        let quoted = format!("\"{name}\"");
        let hint = match did_you_mean(name, candidates) {
            Some(close) => format!("did you mean `{close}`?"),
            None if text.value.contains(&quoted) => format!(
                "a quoted name is a type of its own, not the built-in of that name: qualify it with its schema, such as \"pg_catalog.{quoted}\""
            ),
            None => "declare the enum under enums/, or qualify a user-defined type with its schema, such as \"public.my_domain\"".to_string(),
        };
        let shown = if text.value.eq_ignore_ascii_case(name) || *text.value == *quoted {
            &*text.value
        } else {
            name
        };
        diags.push(
            Diagnostic::error(Code::UnknownType, format!("unknown type or enum `{shown}`"))
                .at(text.loc.clone(), "not a known type or enum")
                .hint(hint),
        );
        return None;
    }
    Some(ty)
}

/// The location of byte `offset` inside a TOML string value, skipping its opening quote.
pub(super) fn offset_in_string<T>(text: &Spanned<T>, offset: usize, sources: &SourceMap) -> Loc {
    let raw = sources.get(text.loc.file).text();
    let span = text.loc.span();
    let quote = raw.get(span.start..span.start + 3).map_or(1, |s| {
        if s == "\"\"\"" || s == "'''" {
            3
        } else {
            1
        }
    });
    let start = (span.start + quote + offset).min(span.end.saturating_sub(quote).max(span.start));
    Loc::new(text.loc.file, start..(start + 1).min(span.end))
}

/// Type names offered in did-you-mean hints.
pub(super) const BUILTIN_NAMES: &[&str] = &[
    "INTEGER",
    "BIGINT",
    "SMALLINT",
    "TINYINT",
    "HUGEINT",
    "NUMERIC",
    "DECIMAL",
    "REAL",
    "DOUBLE",
    "FLOAT",
    "VARCHAR",
    "CHAR",
    "TEXT",
    "STRING",
    "BOOLEAN",
    "DATE",
    "TIME",
    "TIMESTAMP",
    "TIMESTAMPTZ",
    "INTERVAL",
    "UUID",
    "JSON",
    "JSONB",
    "BYTEA",
    "BLOB",
    "STRUCT",
    "MAP",
    "LIST",
    "UNION",
    "ENUM",
];
