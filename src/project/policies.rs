//! `contracts/policies/tenancy.toml` and `contracts/policies/roles.toml`: which relations are
//! scoped to a tenant and by which column, and what each role may see, with the columns it
//! masks (docs/semantic-contracts.md).
//!
//! Reading checks each file's shape; whether what they name exists is `crate::semantic`'s to
//! check.

use toml_edit::TableLike;

use super::reader::Reader;
use super::NameList;
use crate::diagnostics::{Code, Diagnostic};
use crate::source::{FileId, Loc, Spanned};

pub const TENANCY_SCHEMA: &str = "tenancy/v1";
pub const ROLES_SCHEMA: &str = "roles/v1";
pub const MASK_STRATEGIES: &[&str] = &["null", "hash", "partial"];

#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct Tenancy {
    pub file: FileId,
    pub claim: Option<Spanned<String>>,
    pub on_missing_principal: Option<Spanned<String>>,
    pub scoped: Vec<Scoped>,
    pub shared: Vec<Spanned<String>>,
    pub undeclared_source: Option<Spanned<String>>,
}

impl Tenancy {
    /// `undeclared_source = "warn"`; the default is to deny.
    pub fn warns_undeclared(&self) -> bool {
        self.undeclared_source
            .as_ref()
            .is_some_and(|u| u.value == "warn")
    }
}

/// A relation scoped to the tenant by one column.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct Scoped {
    pub loc: Loc,
    pub source: Option<Spanned<String>>,
    pub column: Option<Spanned<String>>,
}

#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct Roles {
    pub file: FileId,
    pub claim: Option<Spanned<String>>,
    pub default_role: Option<Spanned<String>>,
    pub roles: Vec<Role>,
}

/// One role as authored; [`crate::semantic::effective_role`] applies what it inherits.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Role {
    pub name: Spanned<String>,
    pub inherits: Option<Spanned<String>>,
    pub metrics: Access,
    pub dimensions: Access,
    pub allow_tags: Option<NameList>,
    pub run_sql: Option<Spanned<bool>>,
    pub tenancy_exempt: Option<Spanned<bool>>,
    pub masking: Option<Vec<Mask>>,
}

/// `allow` and `deny` of metrics or dimensions; each `None` where the role does not author it.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Access {
    pub allow: Option<Allow>,
    pub deny: Option<NameList>,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub enum Allow {
    /// `"*"`, alone or in the list.
    All(Loc),
    /// These names; `[]` allows nothing.
    Only(NameList),
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Mask {
    pub loc: Loc,
    /// `relation.column`.
    pub column: Option<Spanned<String>>,
    pub strategy: Option<Spanned<String>>,
}

/// Reads `contracts/policies/tenancy.toml`.
pub(super) fn read_tenancy(r: &mut Reader<'_>, root: &dyn TableLike, file: FileId) -> Tenancy {
    r.check_keys(
        root,
        &[
            "schema",
            "claim",
            "on_missing_principal",
            "scoped_sources",
            "shared_sources",
            "undeclared_source",
        ],
        "the tenancy policy",
    );
    schema(r, root, file, TENANCY_SCHEMA, "the tenancy policy");
    if !root.contains_key("claim") {
        let hint = "name the principal's claim that holds the tenant: `claim = \"tenant_id\"`";
        r.missing(Loc::file_start(file), "claim", "the tenancy policy", hint);
    }
    let hint = "write each as a `[[scoped_sources]]` table with `source` and `column`";
    let scoped = r
        .tables(root, "scoped_sources", hint)
        .into_iter()
        .map(|(t, loc)| {
            r.check_keys(t, &["source", "column"], "a scoped source");
            for key in ["source", "column"] {
                if !t.contains_key(key) {
                    let hint = "a scoped source names the relation and its tenant column";
                    r.missing(loc.clone(), key, "a scoped source", hint);
                }
            }
            Scoped {
                source: r.string(t, "source"),
                column: r.string(t, "column"),
                loc,
            }
        })
        .collect();
    Tenancy {
        file,
        claim: r.string(root, "claim"),
        on_missing_principal: r.choice(root, "on_missing_principal", &["deny", "allow_unscoped"]),
        shared: r
            .strings(root, "shared_sources", false)
            .map(|s| s.value)
            .unwrap_or_default(),
        undeclared_source: r.choice(root, "undeclared_source", &["deny", "warn"]),
        scoped,
    }
}

/// Reads `contracts/policies/roles.toml`.
pub(super) fn read_roles(r: &mut Reader<'_>, root: &dyn TableLike, file: FileId) -> Roles {
    r.check_keys(
        root,
        &["schema", "claim", "default_role", "roles"],
        "the roles policy",
    );
    schema(r, root, file, ROLES_SCHEMA, "the roles policy");
    let mut roles = Vec::new();
    if let Some(table) = r.table(root, "roles") {
        for (name, _) in table.iter() {
            let loc = r.key_loc(table, name);
            let Some(t) = r.table(table, name) else {
                continue;
            };
            roles.push(read_role(r, t, Spanned::new(name.to_string(), loc)));
        }
    }
    Roles {
        file,
        claim: r.string(root, "claim"),
        default_role: r.string(root, "default_role"),
        roles,
    }
}

fn read_role(r: &mut Reader<'_>, t: &dyn TableLike, name: Spanned<String>) -> Role {
    let context = format!("role `{}`", name.value);
    r.check_keys(
        t,
        &[
            "inherits",
            "metrics",
            "dimensions",
            "knowledge",
            "run_sql",
            "tenancy_exempt",
            "masking",
        ],
        &context,
    );
    let allow_tags = r.table(t, "knowledge").and_then(|k| {
        r.check_keys(k, &["allow_tags"], &format!("`knowledge` of {context}"));
        r.strings(k, "allow_tags", false)
    });
    let masking = t.contains_key("masking").then(|| {
        let hint = "write each mask as a `[[roles.NAME.masking]]` table with `column` and `strategy`";
        r.tables(t, "masking", hint)
            .into_iter()
            .map(|(m, loc)| {
                r.check_keys(m, &["column", "strategy"], "a mask");
                for key in ["column", "strategy"] {
                    if !m.contains_key(key) {
                        let hint = "a mask names `column = \"relation.column\"` and `strategy` (null, hash or partial)";
                        r.missing(loc.clone(), key, "a mask", hint);
                    }
                }
                Mask {
                    column: r.string(m, "column"),
                    strategy: r.choice(m, "strategy", MASK_STRATEGIES),
                    loc,
                }
            })
            .collect()
    });
    Role {
        inherits: r.string(t, "inherits"),
        metrics: access(r, t, "metrics", &context),
        dimensions: access(r, t, "dimensions", &context),
        run_sql: r.boolean(t, "run_sql"),
        tenancy_exempt: r.boolean(t, "tenancy_exempt"),
        allow_tags,
        masking,
        name,
    }
}

fn access(r: &mut Reader<'_>, t: &dyn TableLike, key: &str, context: &str) -> Access {
    let Some(table) = r.table(t, key) else {
        return Access::default();
    };
    r.check_keys(table, &["allow", "deny"], &format!("`{key}` of {context}"));
    let allow = match table.get("allow").and_then(|a| a.as_str()) {
        Some("*") => Some(Allow::All(r.value_loc(table, "allow"))),
        Some(_) => {
            let hint = "write `allow = \"*\"` for everything, or a list of names".to_string();
            r.wrong_type(table, "allow", "\"*\" or an array of strings", Some(hint));
            None
        }
        None => r.strings(table, "allow", false).map(|list| {
            match list.value.iter().find(|n| n.value == "*") {
                Some(star) => Allow::All(star.loc.clone()),
                None => Allow::Only(list),
            }
        }),
    };
    Access {
        allow,
        deny: r.strings(table, "deny", false),
    }
}

/// `schema = "<kind>/v1"`: required, and the one version sqb reads.
fn schema(r: &mut Reader<'_>, root: &dyn TableLike, file: FileId, expected: &str, what: &str) {
    let hint = format!("write `schema = \"{expected}\"`");
    match r.string(root, "schema") {
        None if !root.contains_key("schema") => {
            r.missing(Loc::file_start(file), "schema", what, hint);
        }
        Some(s) if s.value != expected => r.push(
            Diagnostic::error(
                Code::InvalidValue,
                format!("invalid value \"{}\" for `schema`", s.value),
            )
            .at(s.loc, format!("sqb reads \"{expected}\""))
            .hint(hint),
        ),
        _ => {}
    }
}
