//! A model's SQL as a target runs it: each reference to a model or source of the project
//! rewritten to the relation it names in that target, everything else byte for byte (imports
//! and external relations are already named as the warehouse names them), with a way back
//! from an offset in the rewritten text to the model's file.

use super::deps::{Reference, Resolver};
use crate::project::{Model, Project, Resource};

/// The rewritten SQL, ready to be described.
#[derive(Debug, Clone)]
pub struct TargetSql {
    pub text: String,
    /// The replaced references, in order.
    edits: Vec<Edit>,
}

#[derive(Debug, Clone)]
struct Edit {
    /// Where the replacement is in the rewritten text.
    new: std::ops::Range<usize>,
    /// Where the reference is in the model's file.
    old: std::ops::Range<usize>,
}

impl TargetSql {
    /// `text` as it is, a final semicolon dropped.
    pub fn verbatim(text: &str) -> Self {
        let kept = text.trim_end().trim_end_matches(';');
        Self {
            text: kept.to_string(),
            edits: Vec::new(),
        }
    }

    /// The offset in the model's file of `offset` in the rewritten text; inside a replaced
    /// reference, the reference's start.
    pub fn file_offset(&self, offset: usize) -> usize {
        let mut shift: isize = 0;
        for edit in &self.edits {
            if offset < edit.new.start {
                break;
            }
            if offset < edit.new.end {
                return edit.old.start;
            }
            shift = edit.old.end as isize - edit.new.end as isize;
        }
        offset.saturating_add_signed(shift)
    }
}

/// `model`'s SQL with every one of its `references` to a project resource replaced by
/// `relation` of it (the quoted relation the target holds), and a final semicolon dropped.
pub fn rewrite(
    project: &Project,
    resolver: &Resolver<'_>,
    model: &Model,
    mut found: Vec<Reference>,
    relation: impl Fn(Resource<'_>) -> String,
) -> TargetSql {
    let text = project.sources.get(model.sql_file).text();
    found.sort_by_key(|r| r.loc.span().start);
    let mut out = String::with_capacity(text.len() + 64);
    let mut edits = Vec::new();
    let mut at = 0;
    for reference in found {
        let span = reference.loc.span();
        // A reference without a location (an empty span) is left as written.
        if span.start < at || span.is_empty() || span.end > text.len() {
            continue;
        }
        let Some(resource) = resolver.resource(&reference.parts) else {
            continue;
        };
        out.push_str(&text[at..span.start]);
        let start = out.len();
        out.push_str(&relation(resource));
        edits.push(Edit {
            new: start..out.len(),
            old: span.clone(),
        });
        at = span.end;
    }
    out.push_str(&text[at..]);
    let kept = out.trim_end().trim_end_matches(';').len();
    out.truncate(kept);
    TargetSql { text: out, edits }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_map_back_across_replacements() {
        // `FROM a JOIN b`: `a` (5..6) became `"s"."a"` (5..12), `b` (12..13) `"s"."b"` (18..25).
        let sql = TargetSql {
            text: r#"FROM "s"."a" JOIN "s"."b" x"#.into(),
            edits: vec![
                Edit {
                    new: 5..12,
                    old: 5..6,
                },
                Edit {
                    new: 18..25,
                    old: 12..13,
                },
            ],
        };
        assert_eq!(sql.file_offset(0), 0);
        assert_eq!(sql.file_offset(7), 5);
        assert_eq!(sql.file_offset(13), 7);
        assert_eq!(sql.file_offset(20), 12);
        assert_eq!(sql.file_offset(26), 14);
    }
}
