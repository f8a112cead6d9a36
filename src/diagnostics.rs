//! Diagnostics: what `sqb compile` (and every command that loads a project) reports.
//!
//! A [`Diagnostic`] has a stable [`Code`], a severity, a message, the location it is about, related
//! locations and a `hint:`. This module renders them as annotated source snippets or as JSON; the
//! codes and the JSON shape are a documented wire format (docs/diagnostics.md).

use annotate_snippets::{AnnotationKind, Group, Level, Renderer, Snippet};
use serde::{Deserialize, Serialize};

use crate::source::{Loc, SourceMap};

/// How serious a diagnostic is. Errors make a project invalid; warnings and infos do not.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, strum::IntoStaticStr,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Info,
}

impl Severity {
    /// `error`, `warning`, `info`: as serialized and stored.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// `error`, `warning`, `note`: as a reader sees it, and as SARIF's `level` spells it.
    pub fn word(self) -> &'static str {
        match self {
            Severity::Info => "note",
            other => other.as_str(),
        }
    }
}

macro_rules! codes {
    ($($variant:ident => ($code:literal, $name:literal),)*) => {
        /// Stable diagnostic codes; never renumber one, only add.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum Code { $($variant,)* }

        impl Code {
            pub const ALL: &'static [Code] = &[$(Code::$variant,)*];

            /// The stable code, such as `E002`.
            pub fn as_str(self) -> &'static str {
                match self { $(Code::$variant => $code,)* }
            }

            /// A short kebab-case name, such as `unknown-key`.
            pub fn name(self) -> &'static str {
                match self { $(Code::$variant => $name,)* }
            }
        }
    };
}

codes! {
    TomlSyntax => ("E001", "toml-syntax"),
    UnknownKey => ("E002", "unknown-key"),
    WrongValueType => ("E003", "wrong-value-type"),
    InvalidValue => ("E004", "invalid-value"),
    MissingKey => ("E005", "missing-key"),
    UnreadableFile => ("E006", "unreadable-file"),
    SidecarWithoutSql => ("E010", "sidecar-without-sql"),
    DuplicateModel => ("E011", "duplicate-model"),
    DuplicateSource => ("E012", "duplicate-source"),
    DuplicateColumn => ("E013", "duplicate-column"),
    UnknownModelSchema => ("E014", "unknown-model-schema"),
    UnknownType => ("E015", "unknown-type"),
    MixedEnumMembers => ("E016", "mixed-enum-members"),
    ColumnInSchemaAndModel => ("E017", "column-in-schema-and-model"),
    UnknownTarget => ("E018", "unknown-target"),
    PathDefaultsNoFolder => ("E019", "path-defaults-no-folder"),
    EnforcedWithoutColumns => ("E020", "enforced-without-columns"),
    KeyColumnNotDeclared => ("E021", "key-column-not-declared"),
    AppendNewColumnsEnforced => ("E022", "append-new-columns-enforced"),
    ImmediatePromotionEnforced => ("E023", "immediate-promotion-enforced"),
    EmptyEnum => ("E024", "empty-enum"),
    DuplicateEnumValue => ("E025", "duplicate-enum-value"),
    IncrementalSchemaChange => ("E026", "incremental-schema-change"),
    ImportedColumnDropped => ("E030", "imported-column-dropped"),
    ImportedTypeNarrowed => ("E031", "imported-type-narrowed"),
    ImportedColumnNotNull => ("E032", "imported-column-not-null"),
    ImportPinMismatch => ("E033", "import-pin-mismatch"),
    ImportTooNew => ("E034", "import-too-new"),
    ImportUnreadable => ("E035", "import-unreadable"),
    ImportedModelRemoved => ("E036", "imported-model-removed"),
    ImportedColumnNullable => ("E037", "imported-column-nullable"),
    ImportedColumnPastDeprecation => ("E038", "imported-column-past-deprecation"),
    ImportedTypeWidened => ("W031", "imported-type-widened"),
    ImportedColumnAdded => ("W030", "imported-column-added"),
    ImportedColumnDeprecated => ("W032", "imported-column-deprecated"),
    ImportUnused => ("W033", "import-unused"),
    ImportWaiverExpired => ("W034", "import-waiver-expired"),
    ImportWaiverUnused => ("W035", "import-waiver-unused"),
    SqlSyntax => ("E056", "sql-syntax"),
    SqlNotSingleSelect => ("E057", "sql-not-single-select"),
    ModelSourceNameClash => ("E040", "model-source-name-clash"),
    DependencyCycle => ("E041", "dependency-cycle"),
    DeclaredColumnNotInOutput => ("E050", "declared-column-not-in-output"),
    OutputColumnNotDeclared => ("E051", "output-column-not-declared"),
    ProvenTypeMismatch => ("E052", "proven-type-mismatch"),
    ProvenNullable => ("E053", "proven-nullable"),
    UndeclaredUpstreamColumn => ("E054", "undeclared-upstream-column"),
    AmbiguousColumn => ("E055", "ambiguous-column"),
    SemanticUnknownColumn => ("E060", "semantic-unknown-column"),
    SemanticWrongType => ("E061", "semantic-wrong-type"),
    SemanticUnknownRelation => ("E062", "semantic-unknown-relation"),
    JoinKeyTypes => ("E063", "join-key-types"),
    MeasureShape => ("E064", "measure-shape"),
    MetricKindField => ("E065", "metric-kind-field"),
    MetricNameClash => ("E066", "metric-name-clash"),
    MetricCycle => ("E067", "metric-cycle"),
    MetricComponentInactive => ("E068", "metric-component-inactive"),
    PredicateInvalid => ("E069", "predicate-invalid"),
    SemanticUnknownMeasure => ("E070", "semantic-unknown-measure"),
    SemanticUnknownMetric => ("E071", "semantic-unknown-metric"),
    GuardrailShape => ("E072", "guardrail-shape"),
    UnknownContext => ("E073", "unknown-context"),
    DuplicateContractId => ("E074", "duplicate-contract-id"),
    RestrictSourceFinality => ("E075", "restrict-source-finality"),
    FinalityRealizations => ("E076", "finality-realizations"),
    InvalidTimezone => ("E077", "invalid-timezone"),
    QueryUnresolved => ("E078", "query-unresolved"),
    QueryAmbiguous => ("E079", "query-ambiguous"),
    QueryUnreachable => ("E080", "query-unreachable"),
    ExpectMismatch => ("E081", "expect-mismatch"),
    TenancyOverlap => ("E082", "tenancy-overlap"),
    TenancyColumn => ("E083", "tenancy-column"),
    TenancyUnclassified => ("E084", "tenancy-unclassified"),
    UnknownRole => ("E085", "unknown-role"),
    RoleCycle => ("E086", "role-cycle"),
    RoleUnknownEntry => ("E087", "role-unknown-entry"),
    MaskUnresolved => ("E088", "mask-unresolved"),
    UnknownAudit => ("E089", "unknown-audit"),
    AuditArgument => ("E090", "audit-argument"),
    AuditSql => ("E091", "audit-sql"),
    AggTimeDimension => ("E092", "agg-time-dimension"),
    TimeSpine => ("E093", "time-spine"),
    SavedQueryOrder => ("E094", "saved-query-order"),
    SemanticTypeUnknown => ("W060", "semantic-type-unknown"),
    ContractNotChecked => ("W061", "contract-not-checked"),
    AssertionWithoutTruth => ("W062", "assertion-without-source-of-truth"),
    TenancyColumnNullable => ("W063", "tenancy-column-nullable"),
    TenancyUnclassifiedWarn => ("W064", "tenancy-unclassified-source"),
    TypeNotProven => ("W003", "type-not-proven"),
    ShapeUnknown => ("I001", "shape-unknown"),
    NumericWithoutPrecision => ("W001", "numeric-without-precision"),
    EmptySql => ("W002", "empty-model"),
}

/// A location and what to say about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Label {
    pub loc: Loc,
    pub text: String,
}

/// One problem found in a project.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Diagnostic {
    pub code: Code,
    pub severity: Severity,
    pub message: String,
    pub primary: Option<Label>,
    pub related: Vec<Label>,
    pub hint: Option<String>,
}

impl Diagnostic {
    pub fn error(code: Code, message: impl Into<String>) -> Self {
        Self::new(code, Severity::Error, message)
    }

    pub fn warning(code: Code, message: impl Into<String>) -> Self {
        Self::new(code, Severity::Warning, message)
    }

    pub fn info(code: Code, message: impl Into<String>) -> Self {
        Self::new(code, Severity::Info, message)
    }

    fn new(code: Code, severity: Severity, message: impl Into<String>) -> Self {
        Self {
            code,
            severity,
            message: message.into(),
            primary: None,
            related: Vec::new(),
            hint: None,
        }
    }

    pub fn at(mut self, loc: Loc, label: impl Into<String>) -> Self {
        self.primary = Some(Label {
            loc,
            text: label.into(),
        });
        self
    }

    pub fn related(mut self, loc: Loc, label: impl Into<String>) -> Self {
        self.related.push(Label {
            loc,
            text: label.into(),
        });
        self
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// Sorts diagnostics by file, position and code so that output is stable.
pub fn sort(diagnostics: &mut [Diagnostic], sources: &SourceMap) {
    diagnostics.sort_by(|a, b| sort_key(a, sources).cmp(&sort_key(b, sources)));
}

fn sort_key<'a>(d: &Diagnostic, sources: &'a SourceMap) -> (&'a str, usize, &'static str, String) {
    let (path, offset) = d.primary.as_ref().map_or(("", 0), |l| {
        (
            sources.get(l.loc.file).rel_path.as_str(),
            l.loc.span().start,
        )
    });
    (path, offset, d.code.as_str(), d.message.clone())
}

/// Counts of errors and warnings.
#[derive(Debug, Default, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct Counts {
    pub errors: usize,
    pub warnings: usize,
    pub infos: usize,
}

/// The errors among `diagnostics`, each rendered as an annotated snippet.
pub fn render_errors(diagnostics: &[Diagnostic], sources: &SourceMap) -> Vec<String> {
    diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| render_text(d, sources))
        .collect()
}

pub fn count(diagnostics: &[Diagnostic]) -> Counts {
    let mut counts = Counts::default();
    for d in diagnostics {
        match d.severity {
            Severity::Error => counts.errors += 1,
            Severity::Warning => counts.warnings += 1,
            Severity::Info => counts.infos += 1,
        }
    }
    counts
}

/// Renders one diagnostic as an annotated snippet. ANSI styles are always emitted; the output
/// stream strips them when colour is off.
pub fn render_text(d: &Diagnostic, sources: &SourceMap) -> String {
    let level = match d.severity {
        Severity::Error => Level::ERROR,
        Severity::Warning => Level::WARNING,
        Severity::Info => Level::INFO,
    };
    use crate::redact::redact;
    // The texts are redacted before rendering, so that the snippet keeps its columns.
    let message = redact(&d.message);
    let title = level.primary_title(message.as_str()).id(d.code.as_str());
    let mut labels: Vec<(&Label, String, AnnotationKind)> = Vec::new();
    labels.extend(
        d.primary
            .iter()
            .map(|l| (l, redact(&l.text), AnnotationKind::Primary)),
    );
    labels.extend(
        d.related
            .iter()
            .map(|l| (l, redact(&l.text), AnnotationKind::Context)),
    );
    // One snippet per file, in order of first mention.
    let mut files: Vec<crate::source::FileId> = Vec::new();
    for (label, _, _) in &labels {
        if !files.contains(&label.loc.file) {
            files.push(label.loc.file);
        }
    }
    // What a snippet shows of a secret is masked byte for byte, so the spans still hold.
    let texts: Vec<_> = files
        .iter()
        .map(|&file| crate::redact::mask_source(sources.get(file).text()))
        .collect();
    let mut elements: Vec<Snippet<'_, annotate_snippets::Annotation<'_>>> = Vec::new();
    for (&file, text) in files.iter().zip(&texts) {
        let source = sources.get(file);
        let text = text.as_ref();
        let mut snippet = Snippet::source(text).path(source.rel_path.as_str());
        for (label, text_of, kind) in labels.iter().filter(|(l, _, _)| l.loc.file == file) {
            let span = clamp_span(&label.loc.span(), text);
            snippet = snippet.annotation((*kind).span(span).label(text_of.as_str()));
        }
        elements.push(snippet);
    }
    let mut report: Vec<Group<'_>> = vec![title.elements(elements)];
    let hint = d.hint.as_deref().map(redact);
    if let Some(hint) = &hint {
        report.push(Group::with_title(
            Level::HELP.with_name("hint").secondary_title(hint.as_str()),
        ));
    }
    Renderer::styled().render(&report)
}

fn clamp_span(span: &std::ops::Range<usize>, text: &str) -> std::ops::Range<usize> {
    let start = span.start.min(text.len());
    let end = span.end.clamp(start, text.len());
    start..end
}

/// A diagnostic as it appears in JSON output.
#[derive(Debug, Serialize)]
pub struct JsonDiagnostic {
    pub code: &'static str,
    pub name: &'static str,
    pub severity: Severity,
    pub message: String,
    pub location: Option<JsonLocation>,
    pub related: Vec<JsonLocation>,
    pub hint: Option<String>,
}

/// A file position in JSON output: path relative to the project root, 1-based line and column.
#[derive(Debug, Serialize, Clone, PartialEq)]
pub struct JsonLocation {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub end_line: usize,
    pub end_column: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

impl JsonLocation {
    pub fn from_loc(loc: &Loc, sources: &SourceMap, label: Option<String>) -> Self {
        let file = sources.get(loc.file);
        let (line, column) = file.line_col(loc.span().start);
        let (end_line, end_column) = file.line_col(loc.span().end);
        Self {
            file: file.rel_path.clone(),
            line,
            column,
            end_line,
            end_column,
            label,
        }
    }
}

pub fn to_json(d: &Diagnostic, sources: &SourceMap) -> JsonDiagnostic {
    let location =
        |l: &Label| JsonLocation::from_loc(&l.loc, sources, Some(crate::redact::redact(&l.text)));
    JsonDiagnostic {
        code: d.code.as_str(),
        name: d.code.name(),
        severity: d.severity,
        message: crate::redact::redact(&d.message),
        location: d.primary.as_ref().map(location),
        related: d.related.iter().map(location).collect(),
        hint: d.hint.as_deref().map(crate::redact::redact),
    }
}

/// The closest candidate to `name`, for did-you-mean hints.
pub fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let lower = name.to_lowercase();
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(&lower, &c.to_lowercase()), c))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for code in Code::ALL {
            assert!(seen.insert(code.as_str()), "{} twice", code.as_str());
            assert!(seen.insert(code.name()), "{} twice", code.name());
        }
    }

    #[test]
    fn did_you_mean_finds_close_names() {
        assert_eq!(
            did_you_mean("nulable", ["type", "nullable"]),
            Some("nullable")
        );
        assert_eq!(did_you_mean("zzz", ["type", "nullable"]), None);
    }
}
