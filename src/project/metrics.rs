//! `contracts/metrics/*.toml`: one metric binding per file, which names the metric, who owns
//! it, and its canonical definition: a kind and, per kind, the measure, columns or component
//! metrics it is computed from (docs/semantic-contracts.md).
//!
//! Reading checks each file's shape: unknown keys, wrong types, values outside the allowed
//! sets, the fields each kind requires and those foreign to it. Whether what they name exists
//! is `crate::semantic`'s to check.

use toml_edit::TableLike;

use super::reader::Reader;
use super::NameList;
use crate::diagnostics::{Code, Diagnostic};
use crate::source::{FileId, Loc, Spanned};

const BINDING_KEYS: &[&str] = &[
    "metric",
    "owner",
    "label",
    "aliases",
    "provenance",
    "status",
    "time_granularity",
    "canonical",
    "deprecated_alternatives",
    "examples",
];
pub const KINDS: &[&str] = &[
    "single",
    "ratio",
    "weighted_avg",
    "semi_additive",
    "distinct_count",
    "percentile",
    "opaque",
    "derived",
    "cumulative",
    "conversion",
];
const PROVENANCE: &[&str] = &["board_approved", "human_curated", "inferred"];
const STATUS: &[&str] = &["active", "deprecated"];
const COLLAPSE_AGG: &[&str] = &["last", "first", "avg", "min", "max"];
const PERIOD_AGG: &[&str] = &["first", "last", "average"];
/// The grains of a binding's windows, offsets and `time_granularity`.
pub const GRAINS: &[&str] = &["day", "week", "month", "quarter", "year"];
const ON_ZERO: &[&str] = &["null", "zero", "error"];
const CALCULATIONS: &[&str] = &["conversion_rate", "conversions"];
/// Keys every kind may have.
const COMMON: &[&str] = &["kind", "population_filter", "on_zero_denominator"];

/// The fields each kind requires (and the only ones it takes, with [`COMMON`]).
pub fn kind_fields(kind: &str) -> &'static [&'static str] {
    match kind {
        "single" => &["source", "measure"],
        "ratio" => &["numerator", "denominator"],
        "weighted_avg" => &["weighted_sum", "weight"],
        "semi_additive" => &["source", "measure", "collapse_dimension", "collapse_agg"],
        "distinct_count" => &["source", "distinct_on"],
        "percentile" => &["source", "column", "quantile"],
        "opaque" => &["source", "measure", "native_grain"],
        "derived" => &["expr", "metrics"],
        "cumulative" => &["source", "measure"],
        "conversion" => &[
            "source",
            "measure",
            "conversion_source",
            "conversion_measure",
            "on",
        ],
        _ => &[],
    }
}

/// The fields a kind may have beyond those it requires and [`COMMON`].
pub fn kind_options(kind: &str) -> &'static [&'static str] {
    match kind {
        "percentile" => &[
            "discrete",
            "approximate",
            "join_to_timespine",
            "fill_nulls_with",
            "offset_window",
            "offset_to_grain",
            "filter",
            "filter_given",
        ],
        "semi_additive" => &[
            "collapse_groupings",
            "join_to_timespine",
            "fill_nulls_with",
            "filter",
            "filter_given",
        ],
        "single" | "distinct_count" => &[
            "join_to_timespine",
            "fill_nulls_with",
            "offset_window",
            "offset_to_grain",
            "filter",
            "filter_given",
        ],
        "cumulative" => &[
            "window",
            "grain_to_date",
            "period_agg",
            "join_to_timespine",
            "fill_nulls_with",
            "filter",
            "filter_given",
        ],
        "conversion" => &["window", "calculation", "filter"],
        "opaque" => &["filter"],
        _ => &[],
    }
}

/// `local = "remote"` column pairs, where they are written.
pub type ColumnPairs = Spanned<Vec<(Spanned<String>, Spanned<String>)>>;

/// A metric binding.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct MetricBinding {
    pub file: FileId,
    pub metric: Option<Spanned<String>>,
    pub owner: Option<Spanned<String>>,
    pub label: Option<Spanned<String>>,
    pub aliases: Vec<Spanned<String>>,
    pub provenance: Option<Spanned<String>>,
    pub status: Option<Spanned<String>>,
    /// The grain of `metric_time` asked without one (MetricFlow's metric `time_granularity`).
    #[serde(default)]
    pub time_granularity: Option<Spanned<String>>,
    pub canonical: Option<Canonical>,
}

impl MetricBinding {
    /// `status = "deprecated"` bindings never compete for names.
    pub fn is_active(&self) -> bool {
        self.status.as_ref().is_none_or(|s| s.value == "active")
    }

    /// The metric's name, or the file's stem where it has none (reported).
    pub fn name(&self) -> Option<&Spanned<String>> {
        self.metric.as_ref()
    }
}

/// `[canonical]`: the kind and its fields, each where it is written.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct Canonical {
    pub kind: Option<Spanned<String>>,
    pub loc: Loc,
    pub source: Option<Spanned<String>>,
    pub measure: Option<Spanned<String>>,
    pub numerator: Option<Spanned<String>>,
    pub denominator: Option<Spanned<String>>,
    pub weighted_sum: Option<Spanned<String>>,
    pub weight: Option<Spanned<String>>,
    pub collapse_dimension: Option<Spanned<String>>,
    pub collapse_agg: Option<Spanned<String>>,
    /// MetricFlow's rule for a non-additive measure: the first or last point is chosen among
    /// all the rows within each value of these columns (and of the time grain asked), not
    /// within each requested group; `[]` for all the rows.
    #[serde(default)]
    pub collapse_groupings: Option<NameList>,
    /// Grouped by its time, every point of the project's time spine is a row (MetricFlow's
    /// `join_to_timespine`).
    #[serde(default)]
    pub join_to_timespine: Option<Spanned<bool>>,
    /// The value of a group where the metric has none (MetricFlow's `fill_nulls_with`).
    #[serde(default)]
    pub fill_nulls_with: Option<Spanned<i64>>,
    /// A cumulative metric's window, `"7 days"`: the points it adds up before each one.
    #[serde(default)]
    pub window: Option<Spanned<String>>,
    /// A cumulative metric from the start of each period of this grain.
    #[serde(default)]
    pub grain_to_date: Option<Spanned<String>>,
    /// A cumulative metric at a coarser grain than the spine's: the `first` (default), `last`
    /// or `average` of its points in each period.
    #[serde(default)]
    pub period_agg: Option<Spanned<String>>,
    /// Each point's value is the metric's at the point this far before it (`"1 month"`).
    #[serde(default)]
    pub offset_window: Option<Spanned<String>>,
    /// Each point's value is the metric's at the start of its period of this grain.
    #[serde(default)]
    pub offset_to_grain: Option<Spanned<String>>,
    /// A conversion metric's conversion events: the relation, and the measure aggregated over
    /// the events that follow a base event (MetricFlow's `conversion_measure`).
    #[serde(default)]
    pub conversion_source: Option<Spanned<String>>,
    #[serde(default)]
    pub conversion_measure: Option<Spanned<String>>,
    /// A conversion metric's `source_column = "conversion_column"` pairs: a conversion event
    /// follows a base event with the same values (MetricFlow's entity, and its constant
    /// properties).
    #[serde(default)]
    pub on: Option<ColumnPairs>,
    /// `conversion_rate` (the default: conversions over base events) or `conversions`.
    #[serde(default)]
    pub calculation: Option<Spanned<String>>,
    pub distinct_on: Option<Spanned<String>>,
    pub column: Option<Spanned<String>>,
    pub quantile: Option<Spanned<f64>>,
    /// A percentile that is one of the column's values (`percentile_disc`), not interpolated.
    pub discrete: Option<Spanned<bool>>,
    /// An approximate continuous percentile (DuckDB's `approx_quantile`), as MetricFlow's
    /// `use_approximate_percentile` computes it.
    #[serde(default)]
    pub approximate: Option<Spanned<bool>>,
    pub native_grain: Option<NameList>,
    /// A derived metric's arithmetic over the metrics it lists.
    pub expr: Option<Spanned<String>>,
    pub metrics: Option<NameList>,
    pub population_filter: Option<Spanned<String>>,
    /// A filter over dimensions, as a query's `--filter` names them (`customer.segment =
    /// 'enterprise'`, over joins too), applied to the metric's rows as a query's filter is
    /// (MetricFlow's metric `filter`).
    #[serde(default)]
    pub filter: Option<Spanned<String>>,
    /// The `filter` is one a ratio or derived metric gives this metric (MetricFlow's input
    /// filter), not its own: joined to the time spine, it is applied again to the spine's rows
    /// where the query groups by what it reads, as a query's filter is.
    #[serde(default)]
    pub filter_given: Option<Spanned<bool>>,
    pub on_zero_denominator: Option<Spanned<String>>,
}

impl Canonical {
    /// The component metrics of a composite kind (ratio, weighted average, derived).
    pub fn components(&self) -> Vec<&Spanned<String>> {
        [
            &self.numerator,
            &self.denominator,
            &self.weighted_sum,
            &self.weight,
        ]
        .into_iter()
        .flatten()
        .chain(self.metrics.iter().flat_map(|m| m.value.iter()))
        .collect()
    }
}

/// Reads one binding file's root table.
pub(super) fn read_binding(
    r: &mut Reader<'_>,
    root: &dyn TableLike,
    file: FileId,
    rel: &str,
) -> MetricBinding {
    r.check_keys(root, BINDING_KEYS, rel);
    let metric = r.string(root, "metric");
    if metric.is_none() && !root.contains_key("metric") {
        r.missing(
            Loc::file_start(file),
            "metric",
            rel,
            "name the metric: `metric = \"revenue\"`",
        );
    }
    let canonical = match r.table(root, "canonical") {
        Some(t) => Some(read_canonical(r, t, r.key_loc(root, "canonical"))),
        None if !root.contains_key("canonical") => {
            r.missing(
                Loc::file_start(file),
                "canonical",
                rel,
                "define it: `[canonical]` with `kind = \"single\"`, `source` and `measure`",
            );
            None
        }
        None => None,
    };
    for (key, fields) in [
        ("deprecated_alternatives", &["source", "ref", "reason"][..]),
        ("examples", &["query", "origin", "frequency"][..]),
    ] {
        let Some(item) = root.get(key) else { continue };
        match item.as_array_of_tables() {
            Some(tables) => {
                for table in tables.iter() {
                    r.check_keys(table, fields, &format!("[[{key}]]"));
                    for field in fields {
                        r.string(table, field);
                    }
                }
            }
            None => r.wrong_type(
                root,
                key,
                "an array of tables",
                Some(format!("write `[[{key}]]` tables")),
            ),
        }
    }
    MetricBinding {
        file,
        owner: r.string(root, "owner"),
        label: r.string(root, "label"),
        aliases: r
            .strings(root, "aliases", false)
            .map(|a| a.value)
            .unwrap_or_default(),
        provenance: r.choice(root, "provenance", PROVENANCE),
        status: r.choice(root, "status", STATUS),
        time_granularity: r.choice(root, "time_granularity", GRAINS),
        metric,
        canonical,
    }
}

fn read_canonical(r: &mut Reader<'_>, t: &dyn TableLike, loc: Loc) -> Canonical {
    let kind = r.choice(t, "kind", KINDS);
    if kind.is_none() && !t.contains_key("kind") {
        r.missing(
            loc.clone(),
            "kind",
            "[canonical]",
            format!("say what kind of metric it is: one of {}", KINDS.join(", ")),
        );
    }
    match &kind {
        Some(kind) => check_kind_fields(r, t, kind, &loc),
        None => {
            let mut all: Vec<&str> = COMMON.to_vec();
            for k in KINDS {
                all.extend(
                    kind_fields(k)
                        .iter()
                        .chain(kind_options(k))
                        .filter(|f| !all.contains(f))
                        .collect::<Vec<_>>(),
                );
            }
            r.check_keys(t, &all, "[canonical]");
        }
    }
    let quantile = read_quantile(r, t);
    Canonical {
        source: r.string(t, "source"),
        measure: r.string(t, "measure"),
        numerator: r.string(t, "numerator"),
        denominator: r.string(t, "denominator"),
        weighted_sum: r.string(t, "weighted_sum"),
        weight: r.string(t, "weight"),
        collapse_dimension: r.string(t, "collapse_dimension"),
        collapse_agg: r.choice(t, "collapse_agg", COLLAPSE_AGG),
        collapse_groupings: r.strings(t, "collapse_groupings", false),
        join_to_timespine: r.boolean(t, "join_to_timespine"),
        fill_nulls_with: r.integer(t, "fill_nulls_with"),
        window: read_window(r, t, "window"),
        offset_window: read_window(r, t, "offset_window"),
        offset_to_grain: r.choice(t, "offset_to_grain", GRAINS),
        grain_to_date: r.choice(t, "grain_to_date", GRAINS),
        period_agg: r.choice(t, "period_agg", PERIOD_AGG),
        conversion_source: r.string(t, "conversion_source"),
        conversion_measure: r.string(t, "conversion_measure"),
        on: read_on(r, t),
        calculation: r.choice(t, "calculation", CALCULATIONS),
        distinct_on: r.string(t, "distinct_on"),
        column: r.string(t, "column"),
        native_grain: r.strings(t, "native_grain", false),
        expr: r.string(t, "expr"),
        metrics: r.strings(t, "metrics", false),
        population_filter: r.string(t, "population_filter"),
        filter: r.string(t, "filter"),
        filter_given: r.boolean(t, "filter_given"),
        on_zero_denominator: r.choice(t, "on_zero_denominator", ON_ZERO),
        quantile,
        discrete: r.boolean(t, "discrete"),
        approximate: r.boolean(t, "approximate"),
        kind,
        loc,
    }
}

/// Every field the kind requires is there, and none foreign to it.
fn check_kind_fields(r: &mut Reader<'_>, t: &dyn TableLike, kind: &Spanned<String>, loc: &Loc) {
    let fields = kind_fields(&kind.value);
    let options = kind_options(&kind.value);
    for (key, _) in t.iter() {
        if COMMON.contains(&key) || fields.contains(&key) || options.contains(&key) {
            continue;
        }
        let known = KINDS
            .iter()
            .any(|k| kind_fields(k).contains(&key) || kind_options(k).contains(&key));
        let diag = match known {
            true => Diagnostic::error(
                Code::MetricKindField,
                format!("`{key}` does not belong to a `{}` metric", kind.value),
            )
            .at(
                r.key_loc(t, key),
                format!("not a field of `{}`", kind.value),
            )
            .related(kind.loc.clone(), "the kind is set here")
            .hint(format!(
                "a `{}` metric takes {}",
                kind.value,
                fields.join(", ")
            )),
            false => Diagnostic::error(
                Code::UnknownKey,
                format!("unknown key `{key}` in [canonical]"),
            )
            .at(r.key_loc(t, key), "unknown key")
            .hint(format!(
                "a `{}` metric takes {}, and {}",
                kind.value,
                fields.join(", "),
                COMMON[1..].join(", ")
            )),
        };
        r.push(diag);
    }
    for field in fields {
        if !t.contains_key(field) {
            r.missing(
                loc.clone(),
                field,
                &format!("a `{}` metric's [canonical]", kind.value),
                format!("a `{}` metric takes {}", kind.value, fields.join(", ")),
            );
        }
    }
}

/// A conversion metric's `on`: at least one column pair.
fn read_on(r: &mut Reader<'_>, t: &dyn TableLike) -> Option<ColumnPairs> {
    let loc = r.value_loc(t, "on");
    let pairs = r.string_pairs(t, "on")?;
    let written = t
        .get("on")
        .and_then(|o| o.as_table_like())
        .is_some_and(|o| !o.is_empty());
    if pairs.is_empty() && !written {
        r.push(
            Diagnostic::error(Code::InvalidValue, "a conversion metric matches on no column")
                .at(loc.clone(), "no column pair")
                .hint("write `on = { customer_id = \"customer_id\" }`: the base events' column = the conversion events'"),
        );
    }
    Some(Spanned::new(pairs, loc))
}

/// A window, `"<count> <grain>"` (`"7 days"`, `"1 month"`).
fn read_window(r: &mut Reader<'_>, t: &dyn TableLike, key: &str) -> Option<Spanned<String>> {
    let window = r.string(t, key)?;
    if window_parts(&window.value).is_some() {
        return Some(window);
    }
    r.push(
        Diagnostic::error(
            Code::InvalidValue,
            format!("invalid value `{}` for `{key}`", window.value),
        )
        .at(window.loc.clone(), "expected a count and a grain")
        .hint(format!(
            "write how far back: `{key} = \"7 days\"` (day, week, month, quarter or year)"
        )),
    );
    None
}

/// A window's count and grain: `"7 days"` is (7, "day").
pub fn window_parts(window: &str) -> Option<(u32, &'static str)> {
    let mut words = window.split_whitespace();
    let count: u32 = words.next()?.parse().ok().filter(|n| *n > 0)?;
    let unit = words.next()?.to_ascii_lowercase();
    if words.next().is_some() {
        return None;
    }
    let unit = unit.strip_suffix('s').unwrap_or(&unit);
    GRAINS
        .iter()
        .copied()
        .find(|g| *g == unit)
        .map(|g| (count, g))
}

/// `quantile`: a number strictly between 0 and 1.
fn read_quantile(r: &mut Reader<'_>, t: &dyn TableLike) -> Option<Spanned<f64>> {
    let item = t.get("quantile")?;
    let value = item
        .as_float()
        .or_else(|| item.as_integer().map(|i| i as f64));
    let loc = r.value_loc(t, "quantile");
    match value {
        Some(q) if q > 0.0 && q < 1.0 => Some(Spanned::new(q, loc)),
        Some(q) => {
            r.push(
                Diagnostic::error(
                    Code::InvalidValue,
                    format!("invalid value {q} for `quantile`"),
                )
                .at(loc, "expected a number strictly between 0 and 1")
                .hint(
                    "write the quantile as a fraction: `quantile = 0.95` for the 95th percentile",
                ),
            );
            None
        }
        None => {
            r.wrong_type(
                t,
                "quantile",
                "a number",
                Some("write `quantile = 0.5`".into()),
            );
            None
        }
    }
}
