//! Who may see what: the principal's roles (metric and dimension allow/deny, masks,
//! `tenancy_exempt`) and the tenant its claim scopes every scoped relation to. Fails closed:
//! a policy that cannot be applied refuses the query.

use serde_json::{Map, Value};

use super::Refusal;
use crate::engine::Engine;
use crate::project::metrics::MetricBinding;
use crate::project::policies::{Allow, Role, Tenancy};
use crate::project::Project;
use crate::semantic::effective_role;
use crate::semantic::resolve::Reached;
use crate::types::DataType;

type Claims = Map<String, Value>;

/// How the query's relations are scoped to a tenant.
pub(super) enum Scoping<'p> {
    /// No tenancy policy.
    Unpolicied,
    /// Exempt by role, or no principal under `on_missing_principal = "allow_unscoped"`.
    Unscoped,
    /// Each scoped relation filtered to the tenant, bound as `$1`.
    Scoped { policy: &'p Tenancy, tenant: String },
}

impl Scoping<'_> {
    pub fn params(&self) -> Vec<String> {
        match self {
            Scoping::Scoped { tenant, .. } => vec![tenant.clone()],
            _ => Vec::new(),
        }
    }
}

/// The principal's effective roles under the roles policy; `None` without a policy.
pub(super) fn roles(
    project: &Project,
    principal: Option<&Claims>,
) -> Result<Option<Vec<Role>>, Refusal> {
    let Some(policy) = &project.contracts.roles else {
        return Ok(None);
    };
    let claim = policy.claim.as_ref().map_or("roles", |c| c.value.as_str());
    let mut names: Vec<String> = match principal.and_then(|p| p.get(claim)) {
        None => Vec::new(),
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(items)) if items.iter().all(Value::is_string) => items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        // A malformed claim is never a missing one: no default role stands in for it.
        Some(other) => {
            let found = match other {
                Value::Array(_) => "a list holding other than strings",
                other => shape(other),
            };
            return Err(malformed(claim, found, "a role's name or a list of them"));
        }
    };
    if names.is_empty() {
        names.extend(policy.default_role.as_ref().map(|d| d.value.clone()));
    }
    if names.is_empty() {
        return Err(Refusal {
            code: "forbidden",
            message: format!("the principal has no role (claim `{claim}`) and the roles policy names no `default_role`"),
            hint: Some("give the principal a role, or declare `default_role` in contracts/policies/roles.toml".into()),
        });
    }
    names
        .iter()
        .map(|name| {
            effective_role(policy, name).ok_or_else(|| Refusal {
                code: "forbidden",
                message: format!("the principal's role `{name}` is not declared"),
                hint: Some("declare it in contracts/policies/roles.toml".into()),
            })
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// Whether the principal reads every tenant's rows: a tenancy policy exists and one of its
/// roles is `tenancy_exempt` (what `sqb serve` asks before it runs assertions, which read whole
/// relations). Fails closed: a principal whose roles cannot be resolved is refused.
pub fn tenancy_exempt(project: &Project, principal: &Claims) -> Result<bool, Refusal> {
    let roles = roles(project, Some(principal))?;
    Ok(roles
        .iter()
        .flatten()
        .any(|r| r.tenancy_exempt.as_ref().is_some_and(|t| t.value)))
}

/// The tenant scoping: the claim's value, or what `on_missing_principal` says without one.
pub(super) fn scoping<'p>(
    project: &'p Project,
    principal: Option<&Claims>,
    roles: &Option<Vec<Role>>,
    warnings: &mut Vec<String>,
) -> Result<Scoping<'p>, Refusal> {
    let Some(policy) = &project.contracts.tenancy else {
        return Ok(Scoping::Unpolicied);
    };
    let exempt = roles
        .iter()
        .flatten()
        .any(|r| r.tenancy_exempt.as_ref().is_some_and(|t| t.value));
    if exempt {
        return Ok(Scoping::Unscoped);
    }
    let claim = policy.claim.as_ref().map_or("", |c| c.value.as_str());
    let tenant = match principal.and_then(|p| p.get(claim)) {
        None => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(v @ (Value::Number(_) | Value::Bool(_))) => Some(v.to_string()),
        // A malformed claim is never a missing one: it never falls to `on_missing_principal`.
        Some(other) => return Err(malformed(claim, shape(other), "one tenant's value")),
    };
    match tenant {
        Some(tenant) => Ok(Scoping::Scoped { policy, tenant }),
        None if policy
            .on_missing_principal
            .as_ref()
            .is_some_and(|o| o.value == "allow_unscoped") =>
        {
            warnings.push(format!("no tenant claim `{claim}`: served unscoped (`on_missing_principal = \"allow_unscoped\"`)"));
            Ok(Scoping::Unscoped)
        }
        None => Err(Refusal {
            code: "no_principal",
            message: format!(
                "the tenancy policy scopes by claim `{claim}`, and the principal has none"
            ),
            hint: Some("ask as a principal with the tenant claim".into()),
        }),
    }
}

/// A claim that is present but not of the shape its policy reads.
fn malformed(claim: &str, found: &str, expected: &str) -> Refusal {
    Refusal {
        code: "invalid_claims",
        message: format!("the claim `{claim}` is {found}; the policy reads {expected} from it"),
        hint: Some("send the claim with the right shape, or leave it out".into()),
    }
}

/// What a JSON value is, in a message.
fn shape(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// How a scoped relation's tenant column meets the claim, bound as `$1` (text): cast to the
/// column's declared type, so that an index or a partition on the column serves the filter;
/// or, where sqb cannot check that the claim converts exactly, the column as text. `None`: the
/// claim does not convert to the column's type (an `invalid_claims` refusal).
pub(super) fn tenant_predicate(
    column: &str,
    ty: Option<&DataType>,
    tenant: &str,
    engine: Engine,
) -> Option<String> {
    use DataType::*;
    let integer = |bits: u32| {
        tenant.parse::<i128>().is_ok_and(|v| {
            let limit = 1u128 << (bits - 1);
            bits == 128 || v.unsigned_abs() < limit || (v < 0 && v.unsigned_abs() == limit)
        })
    };
    let cast = |to: &str, converts: bool| converts.then(|| format!("{column} = CAST($1 AS {to})"));
    match ty {
        Some(TinyInt) => cast("TINYINT", integer(8)),
        Some(SmallInt) => cast("SMALLINT", integer(16)),
        Some(Integer) => cast("INTEGER", integer(32)),
        Some(BigInt) => cast("BIGINT", integer(64)),
        Some(HugeInt) => cast("HUGEINT", integer(128)),
        // Without its precision: a cast to NUMERIC(p, s) would round the claim onto another
        // tenant's value.
        Some(Numeric(_)) => cast("NUMERIC", is_decimal(tenant)),
        // Without a length, which would truncate the claim onto another tenant's value.
        Some(Text | Varchar(_)) => cast("VARCHAR", true),
        Some(Boolean) => cast("BOOLEAN", matches!(tenant, "true" | "false")),
        Some(Uuid) => cast("UUID", is_uuid(tenant)),
        Some(Date) => cast(
            "DATE",
            chrono::NaiveDate::parse_from_str(tenant, "%Y-%m-%d").is_ok(),
        ),
        _ => Some(format!("CAST({column} AS {}) = $1", engine.text_type())),
    }
}

/// `0b8e5c4e-6a3f-4c8a-9f1e-2d3c4b5a6978`: a UUID in its standard form.
fn is_uuid(text: &str) -> bool {
    let groups: Vec<&str> = text.split('-').collect();
    groups.iter().map(|g| g.len()).eq([8, 4, 4, 4, 12])
        && groups
            .iter()
            .all(|g| g.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// `-12`, `3.50`: an exact decimal, as both engines read one.
fn is_decimal(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, "0"));
    !whole.is_empty()
        && !fraction.is_empty()
        && whole
            .bytes()
            .chain(fraction.bytes())
            .all(|b| b.is_ascii_digit())
}

/// Whether an allow/deny pair lets `names` through: deny always wins; no `allow` means all.
fn lets(allow: &Option<Allow>, deny: &Option<crate::project::NameList>, names: &[String]) -> bool {
    let hit = |list: &[crate::source::Spanned<String>]| {
        list.iter()
            .any(|e| names.iter().any(|n| n.eq_ignore_ascii_case(&e.value)))
    };
    if deny.as_ref().is_some_and(|d| hit(&d.value)) {
        return false;
    }
    match allow {
        None | Some(Allow::All(_)) => true,
        Some(Allow::Only(list)) => hit(&list.value),
    }
}

/// Some role of the principal allows the metric (by its name or any alias).
pub(super) fn metric_allowed(
    roles: Option<&[Role]>,
    binding: &MetricBinding,
    asked: &str,
) -> Result<(), Refusal> {
    let Some(roles) = roles else { return Ok(()) };
    let names: Vec<String> = binding
        .name()
        .into_iter()
        .chain(&binding.aliases)
        .map(|n| n.value.clone())
        .collect();
    if roles
        .iter()
        .any(|r| lets(&r.metrics.allow, &r.metrics.deny, &names))
    {
        return Ok(());
    }
    Err(Refusal {
        code: "forbidden",
        message: format!("no role of the principal may see metric `{asked}`"),
        hint: None,
    })
}

/// Some role of the principal allows the dimension (by its name or `relation.name`).
pub(super) fn dimension_allowed(
    roles: Option<&[Role]>,
    reached: &Reached<'_, '_>,
    asked: &str,
) -> Result<(), Refusal> {
    let Some(roles) = roles else { return Ok(()) };
    let name = &reached.dimension.name.value;
    let names = [name.clone(), format!("{}.{name}", reached.relation.name)];
    if roles
        .iter()
        .any(|r| lets(&r.dimensions.allow, &r.dimensions.deny, &names))
    {
        return Ok(());
    }
    Err(Refusal {
        code: "forbidden",
        message: format!("no role of the principal may see dimension `{asked}`"),
        hint: None,
    })
}

/// The columns a reached dimension reads: its column, or those its expression names.
pub(super) fn columns_read(project: &Project, reached: &Reached<'_, '_>) -> Vec<String> {
    let Some(expr) = &reached.dimension.expr else {
        return vec![reached.dimension.column().value.clone()];
    };
    match crate::semantic::predicate::parse(project, &expr.value) {
        Ok(parsed) => crate::semantic::predicate::column_refs(&parsed)
            .into_iter()
            .filter_map(|parts| parts.last().cloned())
            .collect(),
        // Checked by `sqb compile`; never read unchecked.
        Err(_) => vec![reached.dimension.column().value.clone()],
    }
}

/// A dimension whose expression reads a column the principal sees masked is refused: its
/// value would reveal what the mask hides.
pub(super) fn expression_unmasked(
    project: &Project,
    roles: Option<&[Role]>,
    reached: &Reached<'_, '_>,
    asked: &str,
) -> Result<(), Refusal> {
    if reached.dimension.expr.is_none() {
        return Ok(());
    }
    for column in columns_read(project, reached) {
        if let Some(strategy) = mask_of(roles, reached.relation.name, &column) {
            return Err(Refusal {
                code: "forbidden",
                message: format!(
                    "dimension `{asked}` is an expression over `{}.{column}`, which the principal sees masked (`{strategy}`)",
                    reached.relation.name
                ),
                hint: Some("group by another dimension, or ask as a role that sees the column".into()),
            });
        }
    }
    Ok(())
}

/// The strategy masking `relation.column` for the principal: a mask of any of its roles
/// applies (the strictest reading: a role that masks is never overruled by one that does not).
pub(super) fn mask_of(roles: Option<&[Role]>, relation: &str, column: &str) -> Option<String> {
    let target = format!("{relation}.{column}");
    roles?
        .iter()
        .flat_map(|r| r.masking.iter().flatten())
        .find(|m| {
            m.column
                .as_ref()
                .is_some_and(|c| c.value.eq_ignore_ascii_case(&target))
        })
        .and_then(|m| m.strategy.as_ref().map(|s| s.value.clone()))
}

/// `value` as a mask shows it.
pub(super) fn masked(engine: Engine, strategy: &str, value: &str) -> String {
    let text = format!("CAST({value} AS {})", engine.text_type());
    match strategy {
        "hash" => format!("md5({text})"),
        "partial" => format!("(left({text}, 2) || '***')"),
        _ => "NULL".to_string(),
    }
}
