//! The reusable declarations: `schemas/` (column sets) and `enums/` (enum domains and their
//! members).

#[allow(clippy::wildcard_imports)]
use super::*;

pub(super) const SCHEMA_KEYS: &[&str] = &["description", "columns"];

pub(super) const ENUM_KEYS: &[&str] = &["description", "members"];

pub(super) fn load_schemas(loader: &mut Loader) -> BTreeMap<String, ColumnSet> {
    load_named(
        loader,
        "schemas",
        SCHEMA_KEYS,
        "schema",
        |r, root, found, id| ColumnSet {
            name: found.stem.clone(),
            file: id,
            description: r.string(root, "description"),
            columns: read_columns(r, root, &format!("schema `{}`", found.stem)),
        },
    )
}

pub(super) fn load_enums(loader: &mut Loader) -> BTreeMap<String, EnumDef> {
    load_named(loader, "enums", ENUM_KEYS, "enum", |r, root, found, id| {
        let description = r.string(root, "description");
        let (members, base) = read_members(r, root, &found.stem);
        EnumDef {
            name: found.stem.clone(),
            file: id,
            description,
            members,
            base,
        }
    })
}

pub(super) type Members = Vec<(Spanned<String>, Spanned<String>)>;

pub(super) fn read_members(
    r: &mut Reader<'_>,
    root: &dyn TableLike,
    name: &str,
) -> (Members, Option<EnumBase>) {
    let mut members = Vec::new();
    let mut strings: Option<Loc> = None;
    let mut integers: Option<Loc> = None;
    let Some(table) = r.table(root, "members") else {
        if !root.contains_key("members") {
            r.missing(
                Loc::file_start(r.file),
                "members",
                &format!("enum `{name}`"),
                "list the members: `[members]` then `DELIVERY = \"delivery\"`",
            );
        }
        return (members, None);
    };
    for (key, item) in table.iter() {
        let loc = r.value_loc(table, key);
        let value = match item {
            Item::Value(v) if v.as_str().is_some() => {
                strings.get_or_insert(loc.clone());
                v.as_str().unwrap_or_default().to_string()
            }
            Item::Value(v) if v.as_integer().is_some() => {
                integers.get_or_insert(loc.clone());
                v.as_integer().unwrap_or_default().to_string()
            }
            _ => {
                r.diags.push(
                    Diagnostic::error(
                        Code::WrongValueType,
                        format!("member `{key}` of enum `{name}` must be a string or an integer"),
                    )
                    .at(loc, "expected a string or an integer"),
                );
                continue;
            }
        };
        if let Some((first, _)) = members
            .iter()
            .find(|(_, v): &&(Spanned<String>, Spanned<String>)| v.value == value)
        {
            r.diags.push(
                Diagnostic::error(
                    Code::DuplicateEnumValue,
                    format!("enum `{name}` has the value `{value}` twice"),
                )
                .at(loc.clone(), "repeated value")
                .related(
                    first.loc.clone(),
                    format!("first used by `{}`", first.value),
                ),
            );
        }
        members.push((
            Spanned::new(key.to_string(), r.key_loc(table, key)),
            Spanned::new(value, loc),
        ));
    }
    let base = match (strings, integers) {
        (Some(s), Some(i)) => {
            r.diags.push(
                Diagnostic::error(Code::MixedEnumMembers, format!("enum `{name}` mixes string and integer members"))
                    .at(i, "an integer member")
                    .related(s, "a string member")
                    .hint("an enum resolves to VARCHAR or INTEGER: make every member a string, or every member an integer"),
            );
            None
        }
        (Some(_), None) => Some(EnumBase::Varchar),
        (None, Some(_)) => Some(EnumBase::Integer),
        (None, None) => {
            r.diags.push(
                Diagnostic::error(Code::EmptyEnum, format!("enum `{name}` has no members"))
                    .at(r.key_loc(root, "members"), "empty")
                    .hint("add members such as `DELIVERY = \"delivery\"`"),
            );
            None
        }
    };
    (members, base)
}
