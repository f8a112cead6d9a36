//! A metric's trust tier — caution < provisional < trusted — the worst of its signals: an
//! `inferred` provenance or a deprecated binding (caution), no passing assertion, or provisional
//! rows in the result (provisional). Shown with every result; `min_trust` guardrails read it.

use super::resolve::{self, Metrics};
use crate::project::contracts::Assertion;
use crate::project::metrics::MetricBinding;
use crate::project::Project;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tier {
    Caution,
    Provisional,
    Trusted,
}

impl Tier {
    pub fn parse(text: &str) -> Option<Tier> {
        match text {
            "caution" => Some(Tier::Caution),
            "provisional" => Some(Tier::Provisional),
            "trusted" => Some(Tier::Trusted),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Caution => "caution",
            Tier::Provisional => "provisional",
            Tier::Trusted => "trusted",
        }
    }
}

/// A tier and the signals that set it (empty when trusted).
#[derive(Debug, Clone, PartialEq)]
pub struct Trust {
    pub tier: Tier,
    pub reasons: Vec<String>,
}

impl Trust {
    /// What the binding itself says: its provenance and status.
    pub fn of_binding(binding: &MetricBinding) -> Trust {
        let mut trust = Trust {
            tier: Tier::Trusted,
            reasons: Vec::new(),
        };
        if binding
            .provenance
            .as_ref()
            .is_some_and(|p| p.value == "inferred")
        {
            trust.lower(Tier::Caution, "its provenance is inferred");
        }
        if !binding.is_active() {
            trust.lower(Tier::Caution, "its binding is deprecated");
        }
        trust
    }

    /// Adds a signal: the tier is the worst of them.
    pub fn lower(&mut self, tier: Tier, reason: &str) {
        self.tier = self.tier.min(tier);
        self.reasons.push(reason.to_string());
    }
}

/// Metric names resolved once for every question a query asks of them.
pub struct Index<'p> {
    project: &'p Project,
    metrics: Metrics<'p>,
}

impl<'p> Index<'p> {
    pub fn new(project: &'p Project) -> Self {
        Index {
            project,
            metrics: Metrics::new(project),
        }
    }

    /// The binding a metric name or alias resolves to.
    pub fn binding(&self, name: &str) -> Option<&'p MetricBinding> {
        resolve::metric(&self.metrics, &self.spanned(name)).ok()
    }

    fn spanned(&self, name: &str) -> crate::source::Spanned<String> {
        crate::source::Spanned::new(
            name.to_string(),
            crate::source::Loc::file_start(self.project.config.file),
        )
    }

    /// For each of `names`, the assertions whose query asks for the same metric (by any name).
    pub fn assertions_of(&self, names: &[String]) -> Vec<Vec<&'p Assertion>> {
        let wanted: Vec<Option<&MetricBinding>> = names.iter().map(|n| self.binding(n)).collect();
        let mut out = vec![Vec::new(); names.len()];
        for a in &self.project.contracts.assertions {
            let Some(q) = &a.query else { continue };
            let asked: Vec<&MetricBinding> = q
                .metrics
                .iter()
                .filter_map(|m| resolve::metric(&self.metrics, m).ok())
                .collect();
            for (i, w) in wanted.iter().enumerate() {
                if w.is_some_and(|w| asked.iter().any(|b| std::ptr::eq(*b, w))) {
                    out[i].push(a);
                }
            }
        }
        out
    }
}
