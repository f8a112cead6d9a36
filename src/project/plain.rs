//! Sidecars in the plain shape, read without a TOML parser.
//!
//! Most sidecars are what `sqb contract generate` writes: a few model-level strings, then one
//! `[columns.NAME]` table per column holding a `type` string, a `nullable` boolean and perhaps a
//! `description`. Parsing those with `toml_edit` and reading the document was a quarter of a cold
//! compile's CPU (docs/performance.md), so [`read`] reads that shape line by line and gives what
//! the general reader gives for it, locations included. It declines (`None`) on anything else,
//! and on anything the general reader would report (an unknown key, a value of the wrong type, a
//! repeated key or column, an escape, a `\r`): the sidecar is then read the general way, which
//! finds the problem and says where. Tests hold the two to the same answer.

use super::{Column, ColumnDocs, ModelProps};
use crate::source::{FileId, Loc, Spanned};

/// The sidecar's model-level keys and columns, or `None` when it is not in the plain shape.
pub(super) fn read(text: &str, file: FileId) -> Option<(ModelProps, Vec<Column>)> {
    let mut props = ModelProps::default();
    // Sized as the general reader sizes it: a large project holds a quarter of a million.
    let mut columns: Vec<Column> = Vec::with_capacity(text.matches("[columns.").count());
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let body = line.strip_suffix('\n').unwrap_or(line);
        let indent = body.len() - body.trim_start_matches([' ', '\t']).len();
        let rest = &body[indent..];
        let at = start + indent;
        match rest.as_bytes().first() {
            None => {}
            Some(b'#') => plain_comment(rest)?,
            Some(b'[') => columns.push(header(rest, at, file, &columns)?),
            Some(_) => {
                let (key, value) = key_value(rest, at)?;
                match columns.last_mut() {
                    Some(column) => column_key(column, key, value, file)?,
                    None => model_key(&mut props, key, value, file)?,
                }
            }
        }
    }
    Some((props, columns))
}

/// A value of the plain shape: a string without escapes (its text), or a boolean.
enum Value<'t> {
    Str(&'t str),
    Bool(bool),
}

/// `[columns.NAME]` with a bare name not declared before, not even in another case.
fn header(rest: &str, at: usize, file: FileId, columns: &[Column]) -> Option<Column> {
    let inner = rest.strip_prefix("[columns.")?;
    let name_len = bare_key_len(inner);
    let name = &inner[..name_len];
    let after = inner[name_len..].strip_prefix(']')?;
    trailing(after)?;
    if name.is_empty()
        || columns
            .iter()
            .any(|c| c.name.value.eq_ignore_ascii_case(name))
    {
        return None;
    }
    let name_start = at + "[columns.".len();
    let loc = Loc::new(file, name_start..name_start + name.len());
    Some(Column {
        name: Spanned::new(name.to_string(), loc),
        file,
        type_text: None,
        ty: None,
        nullable: None,
        docs: None,
    })
}

/// `key = value`, with the value's location as a byte range.
fn key_value(rest: &str, at: usize) -> Option<(&str, (Value<'_>, std::ops::Range<usize>))> {
    let key_len = bare_key_len(rest);
    let key = &rest[..key_len];
    let after_key = &rest[key_len..];
    let eq = after_key
        .trim_start_matches([' ', '\t'])
        .strip_prefix('=')?;
    let value_text = eq.trim_start_matches([' ', '\t']);
    if key.is_empty() {
        return None;
    }
    let value_start = at + (rest.len() - value_text.len());
    let (value, len) = value(value_text)?;
    trailing(&value_text[len..])?;
    Some((key, (value, value_start..value_start + len)))
}

/// A string without escapes or a boolean at the start of `text`, and how long it is written.
fn value(text: &str) -> Option<(Value<'_>, usize)> {
    if let Some(inner) = text.strip_prefix('"') {
        let end = inner.find(['"', '\\'])?;
        let escaped = inner.as_bytes()[end] == b'\\';
        // `"""` opens a multi-line string.
        let multi_line = end == 0 && inner[1..].starts_with('"');
        if escaped || multi_line {
            return None;
        }
        let content = &inner[..end];
        if content.chars().any(|c| c != '\t' && c.is_control()) {
            return None;
        }
        return Some((Value::Str(content), end + 2));
    }
    for (word, b) in [("true", true), ("false", false)] {
        if text.starts_with(word) {
            return Some((Value::Bool(b), word.len()));
        }
    }
    None
}

/// What may follow a header or a value: blanks, then perhaps a comment.
fn trailing(after: &str) -> Option<()> {
    let rest = after.trim_start_matches([' ', '\t']);
    if rest.is_empty() {
        return Some(());
    }
    plain_comment(rest)
}

/// A comment (`#…`) without the control characters TOML forbids in one, nor a `\r`.
fn plain_comment(rest: &str) -> Option<()> {
    let ok = rest.starts_with('#') && !rest.chars().any(|c| c != '\t' && c.is_control());
    ok.then_some(())
}

/// The length of the bare key (letters, digits, `_`, `-`) at the start of `text`.
fn bare_key_len(text: &str) -> usize {
    text.bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-')
        .count()
}

type Located<'t> = (Value<'t>, std::ops::Range<usize>);

fn model_key(props: &mut ModelProps, key: &str, value: Located<'_>, file: FileId) -> Option<()> {
    let (Value::Str(text), span) = value else {
        return None;
    };
    let slot = match key {
        "description" => &mut props.description,
        "model_schema" => &mut props.model_schema,
        "alias" => &mut props.alias,
        _ => return None,
    };
    set_once(slot, Spanned::new(text.to_string(), Loc::new(file, span)))
}

fn column_key(column: &mut Column, key: &str, value: Located<'_>, file: FileId) -> Option<()> {
    let loc = Loc::new(file, value.1);
    match (key, value.0) {
        ("type", Value::Str(text)) => set_once(
            &mut column.type_text,
            Spanned::new(super::spelling::shared(text), loc),
        ),
        ("nullable", Value::Bool(b)) => set_once(&mut column.nullable, Spanned::new(b, loc)),
        ("description", Value::Str(text)) => {
            let docs = column
                .docs
                .get_or_insert_with(|| Box::new(ColumnDocs::default()));
            set_once(&mut docs.description, Spanned::new(text.to_string(), loc))
        }
        _ => None,
    }
}

/// Sets `slot`, or declines if the key was given before (TOML forbids it).
fn set_once<T>(slot: &mut Option<T>, value: T) -> Option<()> {
    if slot.is_some() {
        return None;
    }
    *slot = Some(value);
    Some(())
}

#[cfg(test)]
mod tests;
