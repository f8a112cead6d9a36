//! `contracts/`: the metric bindings, guardrails, finality rules, assertions, saved queries and
//! the tenancy and roles policies, each file by the kind its folder names.

#[allow(clippy::wildcard_imports)]
use super::*;

/// What `contracts/` holds: metric bindings, guardrails, finality rules, assertions and the
/// tenancy and roles policies, each kind by where it is. A file anywhere else under
/// `contracts/` is no contract sqb knows: said, never silently passed.
pub(super) fn load_contracts(loader: &mut Loader) -> (Vec<MetricBinding>, Contracts) {
    let found = list(&loader.root, "contracts", &["toml"]);
    let texts = read_all(&loader.stamps, &found, |f| [Some(f)]);
    let mut files: Vec<(FileId, ContractKind, &str)> = Vec::new();
    for (found, [text]) in found.iter().zip(texts) {
        let Some(id) = text.and_then(|t| loader.add_found(found, t)) else {
            continue;
        };
        match contract_kind(&found.rel) {
            Some(kind) => files.push((id, kind, &found.rel)),
            None => loader.diags.push(
                Diagnostic::warning(
                    Code::ContractNotChecked,
                    format!("{} is no kind of contract sqb knows", found.rel),
                )
                .at(Loc::file_start(id), "not read")
                .hint("contracts/ holds metrics/*.toml, guardrails/*.toml (finality rules as guardrails/finality-*.toml), assertions/*.toml, queries/*.toml, policies/tenancy.toml and policies/roles.toml; nothing enforces this file"),
            ),
        }
    }
    // Parsed on every core (a large project has thousands of contract files), except those
    // the contracts cache holds unchanged.
    let sources = &loader.sources;
    let pending: Vec<crate::project::cache::Sidecar<'_>> = files
        .iter()
        .map(|&(file, kind, _)| crate::project::cache::Sidecar {
            file,
            model: kind.label(),
        })
        .collect();
    let parsed = tracing::debug_span!("contract files parsed").in_scope(|| {
        let cache = crate::project::cache::CONTRACTS;
        let by_file: HashMap<FileId, (ContractKind, &str)> = files
            .iter()
            .map(|&(id, kind, rel)| (id, (kind, rel)))
            .collect();
        crate::project::cache::parse_all(
            cache,
            &loader.root,
            loader.use_cache,
            sources,
            &pending,
            |s| {
                let (kind, rel) = by_file[&s.file];
                parse_contract(sources, s.file, kind, rel)
            },
        )
    });
    let mut metrics = Vec::new();
    let mut contracts = Contracts::default();
    for (contract, diags) in parsed {
        loader.diags.extend(diags);
        match contract {
            Some(Contract::Metric(m)) => metrics.push(*m),
            Some(Contract::Guardrail(g)) => contracts.guardrails.push(*g),
            Some(Contract::Finality(f)) => contracts.finality.push(*f),
            Some(Contract::Assertion(a)) => contracts.assertions.push(*a),
            Some(Contract::SavedQuery(q)) => contracts.saved_queries.push(*q),
            Some(Contract::Tenancy(t)) => contracts.tenancy = Some(*t),
            Some(Contract::Roles(r)) => contracts.roles = Some(*r),
            None => {}
        }
    }
    (metrics, contracts)
}

#[derive(serde::Serialize, serde::Deserialize)]
pub(super) enum Contract {
    Metric(Box<MetricBinding>),
    Guardrail(Box<crate::project::contracts::Guardrail>),
    Finality(Box<crate::project::contracts::Finality>),
    Assertion(Box<crate::project::contracts::Assertion>),
    SavedQuery(Box<crate::project::contracts::SavedQuery>),
    Tenancy(Box<crate::project::policies::Tenancy>),
    Roles(Box<crate::project::policies::Roles>),
}

/// Parses one contract file; `None` when it is not valid TOML (reported).
pub(super) fn parse_contract(
    sources: &SourceMap,
    id: FileId,
    kind: ContractKind,
    rel: &str,
) -> (Option<Contract>, Vec<Diagnostic>) {
    parse_file(sources, id, |r, root| match kind {
        ContractKind::Metric => Contract::Metric(Box::new(read_binding(r, root, id, rel))),
        ContractKind::Guardrail => Contract::Guardrail(Box::new(read_guardrail(r, root, id))),
        ContractKind::Finality => Contract::Finality(Box::new(read_finality(r, root, id))),
        ContractKind::Assertion => Contract::Assertion(Box::new(read_assertion(r, root, id))),
        ContractKind::SavedQuery => Contract::SavedQuery(Box::new(read_saved_query(r, root, id))),
        ContractKind::Tenancy => Contract::Tenancy(Box::new(read_tenancy(r, root, id))),
        ContractKind::Roles => Contract::Roles(Box::new(read_roles(r, root, id))),
    })
}

#[derive(Clone, Copy)]
pub(super) enum ContractKind {
    Metric,
    Guardrail,
    Finality,
    Assertion,
    SavedQuery,
    Tenancy,
    Roles,
}

impl ContractKind {
    /// Its name, which the contracts cache keys an entry by beside the path.
    fn label(self) -> &'static str {
        match self {
            ContractKind::Metric => "metric",
            ContractKind::Guardrail => "guardrail",
            ContractKind::Finality => "finality",
            ContractKind::Assertion => "assertion",
            ContractKind::SavedQuery => "saved_query",
            ContractKind::Tenancy => "tenancy",
            ContractKind::Roles => "roles",
        }
    }
}

/// What kind of contract a file under `contracts/` is, by its path.
pub(super) fn contract_kind(rel: &str) -> Option<ContractKind> {
    let rest = rel.strip_prefix("contracts/")?;
    let (dir, file) = rest.split_once('/')?;
    let nested = file.contains('/');
    Some(match (dir, file) {
        ("metrics", _) => ContractKind::Metric,
        ("guardrails", f) if !nested && f.starts_with("finality-") => ContractKind::Finality,
        ("guardrails", _) => ContractKind::Guardrail,
        ("assertions", _) => ContractKind::Assertion,
        ("queries", _) => ContractKind::SavedQuery,
        ("policies", "tenancy.toml") => ContractKind::Tenancy,
        ("policies", "roles.toml") => ContractKind::Roles,
        _ => return None,
    })
}
