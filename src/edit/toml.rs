//! Format-preserving edits of `[columns.*]` declarations with toml_edit.
//!
//! Everything not edited keeps its bytes: comments (leading, trailing, end-of-line), blank lines,
//! key order and quoting. New columns follow the file's own style: `[columns.x]` tables where the
//! file uses them (placed right after the resource's last table), inline tables otherwise.

use toml_edit::{value, DocumentMut, InlineTable, Item, Key, Table, TableLike, Value};

/// Where a resource's `columns` live in a file: the root of a sidecar, or a source's table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Home<'a> {
    Root,
    Source(&'a str),
}

/// A TOML document being edited.
pub struct Editor {
    doc: DocumentMut,
}

/// An edit that could not be applied because the file does not have the expected shape.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct EditError(pub String);

impl Editor {
    pub fn parse(text: &str) -> Result<Self, EditError> {
        text.parse::<DocumentMut>()
            .map(|doc| Self { doc })
            .map_err(|e| EditError(e.to_string()))
    }

    /// A new, empty document starting with `header` comment lines.
    pub fn new_file(header: &str) -> Self {
        let mut doc = DocumentMut::new();
        doc.decor_mut().set_prefix(header);
        Self { doc }
    }

    pub fn render(&self) -> String {
        self.doc.to_string()
    }

    fn home_mut(&mut self, home: Home<'_>) -> Result<&mut dyn TableLike, EditError> {
        match home {
            Home::Root => Ok(self.doc.as_table_mut()),
            Home::Source(name) => self
                .doc
                .get_mut(name)
                .and_then(Item::as_table_like_mut)
                .ok_or_else(|| EditError(format!("no table `{name}`"))),
        }
    }

    fn column_mut(
        &mut self,
        home: Home<'_>,
        column: &str,
    ) -> Result<&mut dyn TableLike, EditError> {
        self.home_mut(home)?
            .get_mut("columns")
            .and_then(Item::as_table_like_mut)
            .and_then(|cols| cols.get_mut(column))
            .and_then(Item::as_table_like_mut)
            .ok_or_else(|| EditError(format!("no column `{column}`")))
    }

    /// Sets (or replaces) a declared column's `type`, keeping the rest of its table.
    pub fn set_type(&mut self, home: Home<'_>, column: &str, ty: &str) -> Result<(), EditError> {
        let table = self.column_mut(home, column)?;
        match table.get_mut("type").and_then(Item::as_value_mut) {
            Some(existing) => {
                let decor = existing.decor().clone();
                *existing = ty.into();
                *existing.decor_mut() = decor;
            }
            None => {
                table.insert("type", value(ty));
            }
        }
        Ok(())
    }

    /// Appends a column declaration in the file's style.
    pub fn add_column(
        &mut self,
        home: Home<'_>,
        column: &str,
        ty: &str,
        not_null: bool,
    ) -> Result<(), EditError> {
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
                table.decor_mut().set_prefix("\n");
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
                columns.insert_formatted(&key, inline_column(ty, not_null).into());
            }
            _ => return Err(EditError("`columns` is not a table".into())),
        }
        Ok(())
    }

    /// Renames a declared column, keeping its place, keys and comments.
    pub fn rename_column(&mut self, home: Home<'_>, from: &str, to: &str) -> Result<(), EditError> {
        let columns = self
            .home_mut(home)?
            .get_mut("columns")
            .and_then(Item::as_table_like_mut)
            .ok_or_else(|| EditError("no `columns` table".into()))?;
        if !columns.contains_key(from) {
            return Err(EditError(format!("no column `{from}`")));
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
    pub fn remove_column(&mut self, home: Home<'_>, column: &str) -> Result<(), EditError> {
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

fn inline_column(ty: &str, not_null: bool) -> InlineTable {
    let mut inline = InlineTable::new();
    inline.insert("type", ty.into());
    if not_null {
        inline.insert("nullable", false.into());
    }
    inline.fmt();
    inline
}
