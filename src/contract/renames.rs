//! Renames that break readers. `--overwrite` renames a declaration to its physical spelling
//! when the two differ only in case (a `name_conflict`). On an engine that compares names
//! exactly (Postgres), a model that still reads the old spelling unquoted no longer finds the
//! column: the warehouse's rename broke it, and writing the new spelling would hide that. Such
//! a rename is held back and reported with the models that read the old name. Pure: it works
//! on the plan and the compile's lineage.

use crate::compile::sql::ColumnRef;
use crate::compile::Analysis;
use crate::contract::plan::{Action, Plan, Skipped};
use crate::project::Project;

/// Moves each rename that a model still reads under its old name from the plan's proposals
/// (with the type change that followed it) to its skipped changes.
pub fn hold_breaking_renames(project: &Project, analysis: &Analysis, plan: &mut Plan) {
    let engine = project.engine();
    let mut held = Vec::new();
    for p in plan
        .proposals
        .iter()
        .filter(|p| p.action == Action::RenameColumn)
    {
        let (Some(old), Some(new)) = (&p.old, &p.new) else {
            continue;
        };
        let breaks = |r: &ColumnRef| {
            r.resource_type == p.resource_type
                && r.resource == p.resource
                && engine.same_name(&r.column, old)
                && !engine.same_name(&r.column, new)
        };
        let read_by = readers(project, analysis, breaks);
        if !read_by.is_empty() {
            held.push((p.resource.clone(), old.clone(), new.clone(), read_by));
        }
    }
    for (resource, old, new, read_by) in held {
        plan.proposals.retain(|p| {
            !(p.resource == resource
                && ((p.action == Action::RenameColumn && p.old.as_deref() == Some(&old))
                    || (p.action != Action::RenameColumn && p.column == new)))
        });
        plan.skipped.push(Skipped::BreakingRename {
            resource,
            column: old,
            new,
            read_by,
        });
    }
}

/// The models (with their SQL file) whose output columns or other uses read a column `breaks`
/// matches.
fn readers(
    project: &Project,
    analysis: &Analysis,
    breaks: impl Fn(&ColumnRef) -> bool,
) -> Vec<String> {
    project
        .models
        .iter()
        .filter(|m| {
            analysis.models.get(&m.name).is_some_and(|a| {
                let reads = a.shape.iter().flatten();
                reads.flat_map(|c| &c.lineage.columns).any(&breaks)
                    || a.uses.iter().any(|u| breaks(&u.column))
            })
        })
        .map(|m| {
            format!(
                "`{}` ({})",
                m.name,
                project.sources.get(m.sql_file).rel_path
            )
        })
        .collect()
}
