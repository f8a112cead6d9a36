//! Typed reading of parsed TOML tables that keeps every value's location.
//!
//! The loader reads each file through a [`Reader`]: it checks keys against the allowed set
//! (unknown keys get a did-you-mean hint), checks value types, and records a located diagnostic
//! for every problem instead of stopping at the first one.

use std::ops::Range;

use toml_edit::{Item, TableLike, Value};

use crate::diagnostics::{did_you_mean, Code, Diagnostic};
use crate::source::{FileId, Loc, Spanned};

/// Reads tables of one file and collects diagnostics about them.
pub struct Reader<'d> {
    pub file: FileId,
    pub diags: &'d mut Vec<Diagnostic>,
}

/// What TOML calls each kind of value, for messages.
fn kind_of(item: &Item) -> &'static str {
    match item {
        Item::None => "nothing",
        Item::Table(_) | Item::Value(Value::InlineTable(_)) => "a table",
        Item::ArrayOfTables(_) => "an array of tables",
        Item::Value(Value::String(_)) => "a string",
        Item::Value(Value::Integer(_)) => "an integer",
        Item::Value(Value::Float(_)) => "a float",
        Item::Value(Value::Boolean(_)) => "a boolean",
        Item::Value(Value::Datetime(_)) => "a datetime",
        Item::Value(Value::Array(_)) => "an array",
    }
}

fn value_kind(value: &Value) -> &'static str {
    kind_of(&Item::Value(value.clone()))
}

impl<'d> Reader<'d> {
    pub fn new(file: FileId, diags: &'d mut Vec<Diagnostic>) -> Self {
        Self { file, diags }
    }

    pub fn loc(&self, span: Option<Range<usize>>) -> Loc {
        Loc::new(self.file, span.unwrap_or(0..0))
    }

    /// The location of a key's name in a table.
    pub fn key_loc(&self, table: &dyn TableLike, key: &str) -> Loc {
        self.loc(table.key(key).and_then(|k| k.span()))
    }

    /// The location of a key's value, falling back to the key itself.
    pub fn value_loc(&self, table: &dyn TableLike, key: &str) -> Loc {
        let span = table.get(key).and_then(item_span);
        match span {
            Some(span) => self.loc(Some(span)),
            None => self.key_loc(table, key),
        }
    }

    /// Reports every key of `table` that is not in `allowed`.
    pub fn check_keys(&mut self, table: &dyn TableLike, allowed: &[&str], context: &str) {
        for (key, _) in table.iter() {
            if allowed.contains(&key) {
                continue;
            }
            let loc = self.key_loc(table, key);
            let mut diag = Diagnostic::error(
                Code::UnknownKey,
                format!("unknown key `{key}` in {context}"),
            )
            .at(loc, "unknown key");
            diag = match did_you_mean(key, allowed.iter().copied()) {
                Some(close) => diag.hint(format!("did you mean `{close}`?")),
                None => diag.hint(format!("allowed keys: {}", allowed.join(", "))),
            };
            self.diags.push(diag);
        }
    }

    pub fn push(&mut self, diag: Diagnostic) {
        self.diags.push(diag);
    }

    pub fn wrong_type(
        &mut self,
        table: &dyn TableLike,
        key: &str,
        expected: &str,
        hint: Option<String>,
    ) {
        let found = table.get(key).map_or("nothing", kind_of);
        let loc = self.value_loc(table, key);
        let mut diag = Diagnostic::error(
            Code::WrongValueType,
            format!("`{key}` must be {expected}, found {found}"),
        )
        .at(loc, format!("expected {expected}"));
        if let Some(hint) = hint {
            diag = diag.hint(hint);
        }
        self.diags.push(diag);
    }

    pub fn string(&mut self, table: &dyn TableLike, key: &str) -> Option<Spanned<String>> {
        let item = table.get(key)?;
        match item.as_str() {
            Some(s) => Some(Spanned::new(s.to_string(), self.value_loc(table, key))),
            None => {
                self.wrong_type(table, key, "a string", None);
                None
            }
        }
    }

    pub fn boolean(&mut self, table: &dyn TableLike, key: &str) -> Option<Spanned<bool>> {
        let item = table.get(key)?;
        match item.as_bool() {
            Some(b) => Some(Spanned::new(b, self.value_loc(table, key))),
            None => {
                let hint = Some(format!("write `{key} = true` or `{key} = false`"));
                self.wrong_type(table, key, "a boolean", hint);
                None
            }
        }
    }

    /// A calendar date, `YYYY-MM-DD`: a TOML date or a string.
    pub fn date(&mut self, table: &dyn TableLike, key: &str) -> Option<Spanned<String>> {
        let item = table.get(key)?;
        let text = match (item.as_str(), item.as_datetime()) {
            (Some(s), _) => s.to_string(),
            (None, Some(d)) if d.time.is_none() && d.offset.is_none() => d.to_string(),
            _ => {
                let hint = Some(format!("write `{key} = 2027-01-31`"));
                self.wrong_type(table, key, "a date", hint);
                return None;
            }
        };
        let loc = self.value_loc(table, key);
        if !is_date(&text) {
            self.diags.push(
                Diagnostic::error(
                    Code::InvalidValue,
                    format!("invalid date \"{text}\" for `{key}`"),
                )
                .at(loc, "expected YYYY-MM-DD")
                .hint(format!("write `{key} = 2027-01-31`")),
            );
            return None;
        }
        Some(Spanned::new(text, loc))
    }

    /// A string that must be one of `choices`.
    pub fn choice(
        &mut self,
        table: &dyn TableLike,
        key: &str,
        choices: &[&str],
    ) -> Option<Spanned<String>> {
        let value = self.string(table, key)?;
        if choices.contains(&value.value.as_str()) {
            return Some(value);
        }
        let list = choices
            .iter()
            .map(|c| format!("\"{c}\""))
            .collect::<Vec<_>>()
            .join(", ");
        let mut diag = Diagnostic::error(
            Code::InvalidValue,
            format!("invalid value \"{}\" for `{key}`", value.value),
        )
        .at(value.loc, format!("expected one of {list}"));
        diag = match did_you_mean(&value.value, choices.iter().copied()) {
            Some(close) => diag.hint(format!("did you mean \"{close}\"?")),
            None => diag.hint(format!("`{key}` takes one of {list}")),
        };
        self.diags.push(diag);
        None
    }

    /// An array of strings; with `allow_single`, a lone string is read as a one-element list.
    pub fn strings(
        &mut self,
        table: &dyn TableLike,
        key: &str,
        allow_single: bool,
    ) -> Option<Spanned<Vec<Spanned<String>>>> {
        let item = table.get(key)?;
        let loc = self.value_loc(table, key);
        if allow_single {
            if let Some(s) = item.as_str() {
                return Some(Spanned::new(
                    vec![Spanned::new(s.to_string(), loc.clone())],
                    loc,
                ));
            }
        }
        let expected = if allow_single {
            "a string or an array of strings"
        } else {
            "an array of strings"
        };
        let Some(array) = item.as_array() else {
            let hint = item.as_str().map(|s| format!("write `{key} = [\"{s}\"]`"));
            self.wrong_type(table, key, expected, hint);
            return None;
        };
        let mut out = Vec::new();
        for value in array.iter() {
            match value.as_str() {
                Some(s) => out.push(Spanned::new(s.to_string(), self.loc(value.span()))),
                None => {
                    let found = value_kind(value);
                    self.diags.push(
                        Diagnostic::error(
                            Code::WrongValueType,
                            format!("`{key}` must be {expected}, found an array element that is {found}"),
                        )
                        .at(self.loc(value.span()), "expected a string"),
                    );
                    return None;
                }
            }
        }
        Some(Spanned::new(out, loc))
    }

    /// An integer.
    pub fn integer(&mut self, table: &dyn TableLike, key: &str) -> Option<Spanned<i64>> {
        let item = table.get(key)?;
        match item.as_integer() {
            Some(i) => Some(Spanned::new(i, self.value_loc(table, key))),
            None => {
                self.wrong_type(table, key, "an integer", None);
                None
            }
        }
    }

    /// A number: an integer or a float.
    pub fn number(&mut self, table: &dyn TableLike, key: &str) -> Option<Spanned<f64>> {
        let item = table.get(key)?;
        let value = item
            .as_float()
            .or_else(|| item.as_integer().map(|i| i as f64));
        match value {
            Some(n) => Some(Spanned::new(n, self.value_loc(table, key))),
            None => {
                self.wrong_type(table, key, "a number", None);
                None
            }
        }
    }

    /// An array of tables: `[[key]]` tables, or an array of inline tables; each with its
    /// location.
    pub fn tables<'t>(
        &mut self,
        table: &'t dyn TableLike,
        key: &str,
        hint: &str,
    ) -> Vec<(&'t dyn TableLike, Loc)> {
        let Some(item) = table.get(key) else {
            return Vec::new();
        };
        if let Item::ArrayOfTables(array) = item {
            return array
                .iter()
                .map(|t| (t as &dyn TableLike, self.loc(t.span())))
                .collect();
        }
        match item.as_array() {
            Some(array) if array.iter().all(|v| v.as_inline_table().is_some()) => array
                .iter()
                .filter_map(|v| Some((v.as_inline_table()? as &dyn TableLike, self.loc(v.span()))))
                .collect(),
            _ => {
                self.wrong_type(table, key, "an array of tables", Some(hint.to_string()));
                Vec::new()
            }
        }
    }

    /// A table (standard or inline).
    pub fn table<'t>(&mut self, table: &'t dyn TableLike, key: &str) -> Option<&'t dyn TableLike> {
        let item = table.get(key)?;
        match item.as_table_like() {
            Some(t) => Some(t),
            None => {
                self.wrong_type(table, key, "a table", None);
                None
            }
        }
    }

    /// A table of string values, `{ local = "remote" }`: its pairs, each key where it is
    /// written (a wrong value is reported, and left out).
    pub fn string_pairs(
        &mut self,
        table: &dyn TableLike,
        key: &str,
    ) -> Option<Vec<(Spanned<String>, Spanned<String>)>> {
        let pairs = self.table(table, key)?;
        let mut out = Vec::new();
        for (local, _) in pairs.iter() {
            if let Some(remote) = self.string(pairs, local) {
                out.push((
                    Spanned::new(local.to_string(), self.key_loc(pairs, local)),
                    remote,
                ));
            }
        }
        Some(out)
    }

    /// A required key that is absent.
    pub fn missing(&mut self, loc: Loc, key: &str, context: &str, hint: impl Into<String>) {
        self.diags.push(
            Diagnostic::error(
                Code::MissingKey,
                format!("missing required key `{key}` in {context}"),
            )
            .at(loc, format!("`{key}` is required here"))
            .hint(hint),
        );
    }
}

/// The span of an item: a value's text, or a table's header.
pub fn item_span(item: &Item) -> Option<Range<usize>> {
    match item {
        Item::Value(v) => v.span(),
        Item::Table(t) => t.span(),
        _ => item.span(),
    }
}

/// Whether `text` is a `YYYY-MM-DD` date with a month and a day that exist.
fn is_date(text: &str) -> bool {
    let parts: Vec<&str> = text.split('-').collect();
    let [y, m, d] = parts.as_slice() else {
        return false;
    };
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    if !(digits(y, 4) && digits(m, 2) && digits(d, 2)) {
        return false;
    }
    let (y, m, d): (u32, u32, u32) = (y.parse().unwrap(), m.parse().unwrap(), d.parse().unwrap());
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&d)
}
