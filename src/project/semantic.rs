//! The semantic declarations of a model sidecar or a source: `[measures.NAME]`,
//! `[dimensions.NAME]`, `[joins.ALIAS]` and `grain` (docs/semantic-contracts.md).
//!
//! This module only reads them, with their locations; `crate::semantic` checks that what they
//! name exists and has the right types.

use serde::{Deserialize, Serialize};
use toml_edit::TableLike;

use super::reader::Reader;
use super::NameList;
use crate::source::{Loc, Spanned};

/// The semantic keys a sidecar or a source may have.
pub(super) const SEMANTIC_KEYS: &[&str] = &[
    "measures",
    "dimensions",
    "joins",
    "grain",
    "agg_time_dimension",
    "time_spine",
];

/// A measure's aggregation.
pub const AGGREGATIONS: &[&str] = &[
    "sum",
    "count",
    "count_distinct",
    "avg",
    "min",
    "max",
    "sum_boolean",
];
/// A time dimension's granularity.
pub const GRANULARITIES: &[&str] = &["hour", "day", "week", "month", "quarter", "year"];
/// How many rows of the joined relation match one row of this one.
pub const RELATIONSHIPS: &[&str] = &["many_to_one", "one_to_one", "one_to_many"];

const MEASURE_KEYS: &[&str] = &["agg", "column", "expr", "agg_time_dimension", "description"];
const DIMENSION_KEYS: &[&str] = &["column", "expr", "granularity", "description"];
const JOIN_KEYS: &[&str] = &["to", "on", "relationship", "entity"];
const TIME_SPINE_KEYS: &[&str] = &["column", "granularity", "custom_granularities"];

/// A relation's semantic declarations; `None` on a model or source that has none.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Semantic {
    pub measures: Vec<Measure>,
    pub dimensions: Vec<Dimension>,
    pub joins: Vec<Join>,
    /// The columns one row is unique by; default: `unique_key`, else the columns audited
    /// `unique`.
    pub grain: Option<NameList>,
    /// The time dimension that `metric_time` is for the relation's measures (MetricFlow's
    /// `defaults.agg_time_dimension`); a measure may name its own.
    #[serde(default)]
    pub agg_time_dimension: Option<Spanned<String>>,
    /// The relation is the project's time spine: one row per point of time, which a metric
    /// with `join_to_timespine` is joined to, so that points without data are rows.
    #[serde(default)]
    pub time_spine: Option<TimeSpine>,
}

/// `[time_spine]`: the column that holds one row per point, and its grain.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TimeSpine {
    pub column: Option<Spanned<String>>,
    /// Default `day`.
    pub granularity: Option<Spanned<String>>,
    /// Grains of its own (MetricFlow's custom granularities): a name, and the column of the
    /// spine that holds each point's period (`fiscal_quarter = "fiscal_quarter"`).
    #[serde(default)]
    pub custom_granularities: Vec<(Spanned<String>, Spanned<String>)>,
    pub loc: Loc,
}

impl TimeSpine {
    pub fn granularity(&self) -> &str {
        self.granularity
            .as_ref()
            .map_or("day", |g| g.value.as_str())
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Measure {
    pub name: Spanned<String>,
    pub agg: Option<Spanned<String>>,
    pub column: Option<Spanned<String>>,
    pub expr: Option<Spanned<String>>,
    /// The time dimension `metric_time` is for this measure, when not the relation's.
    #[serde(default)]
    pub agg_time_dimension: Option<Spanned<String>>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Dimension {
    pub name: Spanned<String>,
    /// Default: the dimension's name.
    pub column: Option<Spanned<String>>,
    /// A SQL expression over the relation's columns it reads instead of a column
    /// (`cast(ordered_at as date)`).
    #[serde(default)]
    pub expr: Option<Spanned<String>>,
    pub granularity: Option<Spanned<String>>,
}

impl Dimension {
    /// The column it reads, and where that is said.
    pub fn column(&self) -> &Spanned<String> {
        self.column.as_ref().unwrap_or(&self.name)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Join {
    pub alias: Spanned<String>,
    pub to: Option<Spanned<String>>,
    /// `local = "remote"` column pairs.
    pub on: Vec<(Spanned<String>, Spanned<String>)>,
    pub relationship: Option<Spanned<String>>,
    /// The entity the join reaches (MetricFlow's), when it is not the alias: several joins of
    /// one entity, to relations that each hold some of its dimensions, are resolved by the
    /// dimension asked for (`customer.region` reaches the one that has `region`).
    pub entity: Option<Spanned<String>>,
    /// The `[joins.ALIAS]` table itself, for what is missing from it.
    pub loc: Loc,
}

impl Join {
    /// The entity the join reaches: `entity`, else its alias.
    pub fn entity(&self) -> &str {
        self.entity.as_ref().unwrap_or(&self.alias).value.as_str()
    }
}

/// Reads the semantic keys of `t`; `None` when it has none.
pub(super) fn read_semantic(
    r: &mut Reader<'_>,
    t: &dyn TableLike,
    owner: &str,
) -> Option<Box<Semantic>> {
    if !SEMANTIC_KEYS.iter().any(|k| t.contains_key(k)) {
        return None;
    }
    let mut semantic = Semantic {
        grain: r.strings(t, "grain", true),
        agg_time_dimension: r.string(t, "agg_time_dimension"),
        ..Semantic::default()
    };
    if let Some(spine) = r.table(t, "time_spine") {
        let context = format!("[time_spine] of {owner}");
        r.check_keys(spine, TIME_SPINE_KEYS, &context);
        let loc = r.key_loc(t, "time_spine");
        let column = r.string(spine, "column");
        if column.is_none() && !spine.contains_key("column") {
            r.missing(
                loc.clone(),
                "column",
                &context,
                "name the column with one row per day: `column = \"date_day\"`",
            );
        }
        semantic.time_spine = Some(TimeSpine {
            column,
            granularity: r.choice(spine, "granularity", GRANULARITIES),
            custom_granularities: r
                .string_pairs(spine, "custom_granularities")
                .unwrap_or_default(),
            loc,
        });
    }
    for (name, table, loc) in entries(r, t, "measures") {
        r.check_keys(table, MEASURE_KEYS, &format!("measure `{name}` of {owner}"));
        let agg = r.choice(table, "agg", AGGREGATIONS);
        if agg.is_none() && !table.contains_key("agg") {
            r.missing(
                loc.clone(),
                "agg",
                &format!("measure `{name}` of {owner}"),
                format!(
                    "say how it aggregates: `agg = \"sum\"` (one of {})",
                    AGGREGATIONS.join(", ")
                ),
            );
        }
        semantic.measures.push(Measure {
            agg,
            column: r.string(table, "column"),
            expr: r.string(table, "expr"),
            agg_time_dimension: r.string(table, "agg_time_dimension"),
            name: Spanned::new(name, loc),
        });
    }
    for (name, table, loc) in entries(r, t, "dimensions") {
        r.check_keys(
            table,
            DIMENSION_KEYS,
            &format!("dimension `{name}` of {owner}"),
        );
        semantic.dimensions.push(Dimension {
            column: r.string(table, "column"),
            expr: r.string(table, "expr"),
            granularity: r.choice(table, "granularity", GRANULARITIES),
            name: Spanned::new(name, loc),
        });
    }
    for (alias, table, loc) in entries(r, t, "joins") {
        let context = format!("join `{alias}` of {owner}");
        r.check_keys(table, JOIN_KEYS, &context);
        let to = r.string(table, "to");
        if to.is_none() && !table.contains_key("to") {
            r.missing(
                loc.clone(),
                "to",
                &context,
                "name the model or source it joins: `to = \"dim_customers\"`",
            );
        }
        let relationship = r.choice(table, "relationship", RELATIONSHIPS);
        if relationship.is_none() && !table.contains_key("relationship") {
            r.missing(
                loc.clone(),
                "relationship",
                &context,
                format!(
                    "say how rows match: `relationship = \"many_to_one\"` (one of {})",
                    RELATIONSHIPS.join(", ")
                ),
            );
        }
        let mut on = Vec::new();
        match r.string_pairs(table, "on") {
            Some(pairs) => {
                let written = table
                    .get("on")
                    .and_then(|o| o.as_table_like())
                    .is_some_and(|t| !t.is_empty());
                on = pairs;
                if on.is_empty() && !written {
                    r.push(
                        crate::diagnostics::Diagnostic::error(
                            crate::diagnostics::Code::InvalidValue,
                            format!("{context} joins on no column"),
                        )
                        .at(r.value_loc(table, "on"), "no column pair")
                        .hint("write `on = { customer_id = \"customer_id\" }`: this relation's column = the joined one's"),
                    );
                }
            }
            None if !table.contains_key("on") => r.missing(
                loc.clone(),
                "on",
                &context,
                "write `on = { customer_id = \"customer_id\" }`: this relation's column = the joined one's",
            ),
            None => {}
        }
        semantic.joins.push(Join {
            to,
            on,
            relationship,
            entity: r.string(table, "entity"),
            alias: Spanned::new(alias, loc.clone()),
            loc,
        });
    }
    Some(Box::new(semantic))
}

/// The named tables under `key` (`[measures.NAME]`), each with its name and location.
fn entries<'t>(
    r: &mut Reader<'_>,
    t: &'t dyn TableLike,
    key: &str,
) -> Vec<(String, &'t dyn TableLike, Loc)> {
    let Some(section) = r.table(t, key) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (name, _) in section.iter() {
        let loc = r.key_loc(section, name);
        if let Some(table) = r.table(section, name) {
            out.push((name.to_string(), table, loc));
        }
    }
    out
}
