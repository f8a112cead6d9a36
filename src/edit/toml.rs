//! Format-preserving edits of `[columns.*]` declarations with toml_edit.
//!
//! Everything not edited keeps its bytes: comments (leading, trailing, end-of-line), blank lines,
//! key order and quoting. New columns follow the file's own style: `[columns.x]` tables where the
//! file uses them (placed right after the resource's last table), inline tables otherwise.

use std::collections::HashMap;
use std::ops::Range;

use toml_edit::{value, Document, DocumentMut, InlineTable, Item, Key, Table, TableLike, Value};

pub use crate::project::Home;

/// A TOML document being edited.
pub struct Editor {
    doc: DocumentMut,
    /// toml_edit writes `\n`; a file written with `\r\n` gets them back on render.
    crlf: bool,
    /// toml_edit drops a leading byte-order mark; a file that had one gets it back.
    bom: bool,
    /// toml_edit keeps one key per array of tables, so every `[[x]]` header would render with
    /// the first one's spelling (`[[x ]]`, `[["x"]]`): each header's own text, by position.
    aot_headers: HashMap<HeaderAt, String>,
}

/// One `[[..]]` header: its key path, each step with the table's index where the step is an
/// array of tables (nested arrays restart their count under each parent).
type HeaderAt = Vec<(String, Option<usize>)>;

/// An edit that could not be applied because the file does not have the expected shape.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct EditError(pub String);

impl Editor {
    pub fn parse(text: &str) -> Result<Self, EditError> {
        let crlf = text.contains("\r\n");
        let bom = text.starts_with('\u{feff}');
        let doc = text
            .parse::<DocumentMut>()
            .map_err(|e| EditError(e.to_string()))?;
        let aot_headers = header_spans(text)
            .into_iter()
            .filter_map(|(at, span)| Some((at, text.get(span)?.to_string())))
            .collect();
        Ok(Self {
            doc,
            crlf,
            bom,
            aot_headers,
        })
    }

    /// A new, empty document starting with `header` comment lines.
    pub fn new_file(header: &str) -> Self {
        let mut doc = DocumentMut::new();
        doc.decor_mut().set_prefix(header);
        Self {
            doc,
            crlf: false,
            bom: false,
            aot_headers: HashMap::new(),
        }
    }

    pub fn render(&self) -> String {
        let mut text = self.restore_aot_headers(self.doc.to_string());
        if self.crlf {
            text = text.replace("\r\n", "\n").replace('\n', "\r\n");
        }
        if self.bom && !text.starts_with('\u{feff}') {
            text.insert(0, '\u{feff}');
        }
        text
    }

    /// Puts each `[[..]]` header's own spelling back (edits never add or remove one).
    fn restore_aot_headers(&self, mut text: String) -> String {
        if self.aot_headers.is_empty() {
            return text;
        }
        let mut spans: Vec<(Range<usize>, &str)> = header_spans(&text)
            .into_iter()
            .filter_map(|(at, span)| Some((span, self.aot_headers.get(&at)?.as_str())))
            .collect();
        spans.sort_by_key(|(span, _)| std::cmp::Reverse(span.start));
        for (span, original) in spans {
            text.replace_range(span, original);
        }
        text
    }

    fn home_mut(&mut self, home: &Home) -> Result<&mut dyn TableLike, EditError> {
        match home {
            Home::Root => Ok(self.doc.as_table_mut()),
            Home::Source(name) => self
                .doc
                .get_mut(name.as_str())
                .and_then(Item::as_table_like_mut)
                .ok_or_else(|| EditError(format!("no table `{name}`"))),
        }
    }

    /// Sets (or replaces) a declared column's `type`, keeping the rest of its table.
    pub fn set_type(&mut self, home: &Home, column: &str, ty: &str) -> Result<(), EditError> {
        let item = self
            .home_mut(home)?
            .get_mut("columns")
            .and_then(Item::as_table_like_mut)
            .and_then(|cols| cols.get_mut(column))
            .ok_or_else(|| EditError(format!("no column `{column}`")))?;
        if let Item::Value(Value::InlineTable(inline)) = item {
            append_inline(inline, "type", ty.into());
            return Ok(());
        }
        let table = item
            .as_table_like_mut()
            .ok_or_else(|| EditError(format!("column `{column}` is not a table")))?;
        match table.get_mut("type").and_then(Item::as_value_mut) {
            Some(existing) => replace_keeping_decor(existing, ty.into()),
            None => {
                table.insert("type", value(ty));
            }
        }
        Ok(())
    }

    /// Appends a column declaration in the file's style.
    pub fn add_column(
        &mut self,
        home: &Home,
        column: &str,
        ty: &str,
        not_null: bool,
    ) -> Result<(), EditError> {
        // A file of only comments holds them as the document's trailing text, which toml_edit
        // prints after a new table: move them to the front of what is added instead.
        let leading = match (home, self.doc.as_table().is_empty()) {
            (Home::Root, true) => self
                .doc
                .trailing()
                .as_str()
                .filter(|t| !t.is_empty())
                // A comment at the end of the file may lack its newline.
                .map(|t| match t.ends_with('\n') {
                    true => t.to_string(),
                    false => format!("{t}\n"),
                }),
            _ => None,
        };
        if leading.is_some() {
            self.doc.set_trailing("");
        }
        let home_table = self.home_mut(home)?;
        let key = Key::new(column);
        if home_table.get("columns").is_none() {
            let mut columns = Table::new();
            columns.set_implicit(true);
            home_table.insert("columns", Item::Table(columns));
        }
        let container = home_table.get_mut("columns").expect("inserted above");
        if container
            .as_table_like()
            .is_some_and(|c| c.contains_key(column))
        {
            return Err(EditError(format!("column `{column}` is already declared")));
        }
        match container {
            // `[columns.x]` headers (or an empty implicit table): a new header table, which
            // toml_edit places right after the previous table of the same resource.
            Item::Table(columns)
                if columns.is_empty() || columns.iter().any(|(_, i)| i.is_table()) =>
            {
                let mut table = Table::new();
                table
                    .decor_mut()
                    .set_prefix(leading.as_deref().unwrap_or("\n"));
                table.insert("type", value(ty));
                if not_null {
                    table.insert("nullable", value(false));
                }
                columns.insert_formatted(&key, Item::Table(table));
            }
            Item::Table(columns) => {
                columns.insert_formatted(&key, value(inline_column(ty, not_null)));
            }
            Item::Value(Value::InlineTable(columns)) => {
                append_inline_keyed(columns, &key, inline_column(ty, not_null).into());
            }
            _ => return Err(EditError("`columns` is not a table".into())),
        }
        Ok(())
    }

    /// Appends a new source table `[name]` with its `schema`, its `table` when given, and
    /// `complete = true`; its columns are added after.
    pub fn add_source(
        &mut self,
        name: &str,
        schema: &str,
        table: Option<&str>,
    ) -> Result<(), EditError> {
        if self.doc.contains_key(name) {
            return Err(EditError(format!("source `{name}` is already declared")));
        }
        let mut source = Table::new();
        source.decor_mut().set_prefix("\n");
        source.insert("schema", value(schema));
        if let Some(table) = table {
            source.insert("table", value(table));
        }
        source.insert("complete", value(true));
        self.doc
            .as_table_mut()
            .insert_formatted(&Key::new(name), Item::Table(source));
        Ok(())
    }

    /// Renames a declared column, keeping its place, keys and comments.
    pub fn rename_column(&mut self, home: &Home, from: &str, to: &str) -> Result<(), EditError> {
        let columns = self
            .home_mut(home)?
            .get_mut("columns")
            .and_then(Item::as_table_like_mut)
            .ok_or_else(|| EditError("no `columns` table".into()))?;
        if !columns.contains_key(from) {
            return Err(EditError(format!("no column `{from}`")));
        }
        if from != to && columns.contains_key(to) {
            return Err(EditError(format!("column `{to}` is already declared")));
        }
        let keys: Vec<Key> = columns
            .iter()
            .map(|(k, _)| columns.key(k).cloned().unwrap_or_else(|| Key::new(k)))
            .collect();
        let mut entries = Vec::with_capacity(keys.len());
        for key in keys {
            let item = columns.remove(key.get()).expect("listed above");
            let key = if key.get() == from {
                Key::new(to)
                    .with_leaf_decor(key.leaf_decor().clone())
                    .with_dotted_decor(key.dotted_decor().clone())
            } else {
                key
            };
            entries.push((key, item));
        }
        for (key, item) in entries {
            columns.entry_format(&key).or_insert(item);
        }
        Ok(())
    }

    /// Removes a declared column with its comments.
    pub fn remove_column(&mut self, home: &Home, column: &str) -> Result<(), EditError> {
        let columns = self
            .home_mut(home)?
            .get_mut("columns")
            .and_then(Item::as_table_like_mut)
            .ok_or_else(|| EditError("no `columns` table".into()))?;
        columns
            .remove(column)
            .map(|_| ())
            .ok_or_else(|| EditError(format!("no column `{column}`")))
    }
}

/// Where each `[[..]]` header of `text` is, by array key path and index; none if it does not
/// parse or has no array of tables.
fn header_spans(text: &str) -> Vec<(HeaderAt, Range<usize>)> {
    let mut out = Vec::new();
    if text.contains("[[") {
        if let Ok(doc) = Document::parse(text) {
            collect_headers(doc.as_table(), &mut Vec::new(), &mut out);
        }
    }
    out
}

fn collect_headers(table: &Table, path: &mut HeaderAt, out: &mut Vec<(HeaderAt, Range<usize>)>) {
    for (key, item) in table.iter() {
        match item {
            Item::Table(t) => {
                path.push((key.to_string(), None));
                collect_headers(t, path, out);
                path.pop();
            }
            Item::ArrayOfTables(array) => {
                for (i, t) in array.iter().enumerate() {
                    path.push((key.to_string(), Some(i)));
                    if let Some(span) = t.span() {
                        out.push((path.clone(), span));
                    }
                    collect_headers(t, path, out);
                    path.pop();
                }
            }
            _ => {}
        }
    }
}

/// A new sidecar of `header` and one `[columns.NAME]` table per column (name, type, NOT NULL),
/// rendered without building a document: the bytes [`Editor::new_file`] and
/// [`Editor::add_column`] give for it, with toml_edit's own spelling of each key and string.
/// `None` when two columns share a name: the editor refuses that.
pub fn new_columns_file(header: &str, columns: &[(&str, &str, bool)]) -> Option<String> {
    let mut seen = std::collections::HashSet::with_capacity(columns.len());
    let mut text = String::with_capacity(header.len() + columns.len() * 48);
    text.push_str(header);
    for &(name, ty, not_null) in columns {
        if !seen.insert(name) {
            return None;
        }
        text.push_str("\n[columns.");
        push_key(&mut text, name);
        text.push_str("]\ntype = ");
        push_string(&mut text, ty);
        text.push('\n');
        if not_null {
            text.push_str("nullable = false\n");
        }
    }
    Some(text)
}

/// A key as toml_edit spells it: bare when it can be, which most column names are.
fn push_key(text: &mut String, key: &str) {
    let bare = !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    match bare {
        true => text.push_str(key),
        false => text.push_str(&Key::new(key).display_repr()),
    }
}

/// A string value as toml_edit spells it: a basic string without escapes when it needs none,
/// which most type names do.
fn push_string(text: &mut String, value: &str) {
    let plain = value
        .bytes()
        .all(|b| (b' '..=b'~').contains(&b) && b != b'"' && b != b'\\');
    match plain {
        true => {
            text.push('"');
            text.push_str(value);
            text.push('"');
        }
        false => text.push_str(&toml_edit::Formatted::new(value.to_string()).display_repr()),
    }
}

fn inline_column(ty: &str, not_null: bool) -> InlineTable {
    let mut inline = InlineTable::new();
    inline.insert("type", ty.into());
    if not_null {
        inline.insert("nullable", false.into());
    }
    inline.fmt();
    inline
}

fn replace_keeping_decor(existing: &mut Value, new: Value) {
    let decor = existing.decor().clone();
    *existing = new;
    *existing.decor_mut() = decor;
}

/// Sets `key` in an inline table: in place if present, else appended after the last entry,
/// taking over the spacing before the closing brace (`{ a = 1 }` becomes `{ a = 1, b = 2 }`).
fn append_inline(table: &mut InlineTable, key: &str, new: Value) {
    match table.get_mut(key) {
        Some(existing) => replace_keeping_decor(existing, new),
        None => append_inline_keyed(table, &Key::new(key), new),
    }
}

fn append_inline_keyed(table: &mut InlineTable, key: &Key, mut new: Value) {
    let closing = table.iter_mut().last().and_then(|(_, last)| {
        let suffix = last.decor().suffix().cloned();
        last.decor_mut().set_suffix("");
        suffix
    });
    new.decor_mut().set_prefix(" ");
    new.decor_mut()
        .set_suffix(closing.unwrap_or_else(|| " ".into()));
    let key = key.clone().with_leaf_decor(toml_edit::Decor::new(" ", " "));
    table.insert_formatted(&key, new);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(text: &str, f: impl FnOnce(&mut Editor)) -> String {
        let mut editor = Editor::parse(text).unwrap();
        f(&mut editor);
        editor.render()
    }

    #[test]
    fn crlf_files_keep_their_line_endings() {
        let out = edit("# keep\r\n[columns.a]\r\ndescription = \"x\"\r\n", |e| {
            e.set_type(&Home::Root, "a", "INTEGER").unwrap()
        });
        assert_eq!(
            out,
            "# keep\r\n[columns.a]\r\ndescription = \"x\"\r\ntype = \"INTEGER\"\r\n"
        );
    }

    #[test]
    fn inline_tables_keep_their_spacing() {
        let out = edit(
            "[columns]\na = {type=\"X\"}\nb = { description = \"d\" } # c\n",
            |e| {
                e.set_type(&Home::Root, "b", "INTEGER").unwrap();
                e.add_column(&Home::Root, "c", "TEXT", true).unwrap();
            },
        );
        assert_eq!(out, "[columns]\na = {type=\"X\"}\nb = { description = \"d\", type = \"INTEGER\" } # c\nc = { type = \"TEXT\", nullable = false }\n");
    }

    #[test]
    fn rename_keeps_position_and_comments_in_inline_style() {
        let out = edit("columns = { A = { type = \"X\" }, b = {} }\n", |e| {
            e.rename_column(&Home::Root, "A", "a").unwrap()
        });
        assert_eq!(out, "columns = { a = { type = \"X\" }, b = {} }\n");
        let out = edit("[columns.A] # eol\ntype = \"X\"\n\n[columns.b]\n", |e| {
            e.rename_column(&Home::Root, "A", "a").unwrap()
        });
        assert_eq!(out, "[columns.a] # eol\ntype = \"X\"\n\n[columns.b]\n");
    }

    #[test]
    fn new_columns_of_a_source_stay_in_its_block() {
        let text =
            "[s1]\nschema = \"raw\"\n\n[s1.columns.a]\ntype = \"X\"\n\n[s2]\nschema = \"raw\"\n";
        let out = edit(text, |e| {
            e.add_column(&Home::Source("s1".into()), "b c", "DATE", false)
                .unwrap()
        });
        assert_eq!(out, "[s1]\nschema = \"raw\"\n\n[s1.columns.a]\ntype = \"X\"\n\n[s1.columns.\"b c\"]\ntype = \"DATE\"\n\n[s2]\nschema = \"raw\"\n");
    }

    #[test]
    fn keys_that_need_quoting_read_back_to_the_same_names() {
        let names = [
            "a b",
            "a.b",
            "quote\"d",
            "näme",
            "1st",
            "",
            "tab\there",
            "'single'",
        ];
        let mut editor = Editor::new_file("");
        for name in names {
            editor
                .add_column(&Home::Root, name, "INTEGER", false)
                .unwrap();
        }
        let doc: toml_edit::DocumentMut = editor.render().parse().unwrap();
        let read: Vec<&str> = doc["columns"]
            .as_table()
            .unwrap()
            .iter()
            .map(|(k, _)| k)
            .collect();
        assert_eq!(read, names);
    }

    #[test]
    fn every_array_of_tables_header_keeps_its_own_spelling() {
        let text =
            "[[c]]\n[[c.d ]]\n[[c ]] # two\n[[c. d]]\n[[ \"c\" ]]\n[columns.x]\ntype = \"X\"\n";
        assert_eq!(Editor::parse(text).unwrap().render(), text);
        let out = edit(text, |e| e.set_type(&Home::Root, "x", "Y").unwrap());
        assert_eq!(out, text.replace("\"X\"", "\"Y\""));
    }

    #[test]
    fn removing_a_column_takes_its_comments_and_keeps_the_next_ones() {
        let text = "# a\n[columns.a]\ntype = \"X\"\n\n# b\n[columns.b] # eol\ntype = \"Y\"\n\n# c\n[columns.c]\n";
        let out = edit(text, |e| e.remove_column(&Home::Root, "b").unwrap());
        assert_eq!(out, "# a\n[columns.a]\ntype = \"X\"\n\n# c\n[columns.c]\n");
    }
}
