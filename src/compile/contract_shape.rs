//! Checking each model's inferred output against its declaration, in dependency order so that
//! upstream shapes are known before the models that read them.

use std::collections::HashMap;

use sqlparser::ast::{Ident, Statement};

use super::deps::Graph;
use super::shape::{infer, same_column, OutColumn, Shape, Upstream};
use crate::diagnostics::{did_you_mean, Code, Diagnostic};
use crate::engine::Engine;
use crate::project::{Model, Policy, Project};
use crate::source::Loc;

struct Known<'a> {
    project: &'a Project,
    shapes: HashMap<&'a str, Vec<OutColumn>>,
    by_name: HashMap<&'a str, &'a Model>,
    by_folded: HashMap<String, &'a Model>,
}

impl Upstream for Known<'_> {
    /// A model's inferred shape, else its enforced declaration; sources and external relations
    /// are opaque.
    fn shape(&self, parts: &[Ident]) -> Shape {
        let [name] = parts else { return None };
        let model = *self
            .by_name
            .get(name.value.as_str())
            .or_else(|| match name.quote_style {
                None => self.by_folded.get(&name.value.to_lowercase()),
                Some(_) => None,
            })?;
        if let Some(shape) = self.shapes.get(model.name.as_str()) {
            return Some(shape.clone());
        }
        (self.project.policy(model) == Policy::Enforced).then(|| {
            self.project
                .effective_columns(model)
                .iter()
                .map(|c| OutColumn {
                    name: c.name.value.clone(),
                    position: None,
                })
                .collect()
        })
    }
}

/// Models in an order where every model comes after the models it reads (cycles left out).
fn dependency_order(project: &Project, graph: &Graph) -> Vec<usize> {
    let n = project.models.len();
    let mut pending: Vec<usize> = (0..n)
        .map(|i| graph.parents[i].iter().filter(|&&p| p < n).count())
        .collect();
    let mut ready: Vec<usize> = (0..n).filter(|&i| pending[i] == 0).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(i) = ready.pop() {
        order.push(i);
        for &child in &graph.children[i] {
            if child < n {
                pending[child] -= 1;
                if pending[child] == 0 {
                    ready.push(child);
                }
            }
        }
    }
    order
}

fn analysis_enabled(project: &Project, model: &Model) -> bool {
    model
        .props
        .sql_analysis
        .as_ref()
        .or(project.config.settings.sql_analysis.as_ref())
        .is_none_or(|s| s.value)
}

/// Infers every model's output and checks it against the declaration where shape validation is
/// active (implicit mode, or an enforced contract).
pub fn check(
    project: &Project,
    statements: &[Option<Statement>],
    graph: &Graph,
    diags: &mut Vec<Diagnostic>,
) {
    let mut known = Known {
        project,
        shapes: HashMap::new(),
        by_name: project
            .models
            .iter()
            .map(|m| (m.name.as_str(), m))
            .collect(),
        by_folded: project
            .models
            .iter()
            .map(|m| (m.name.to_lowercase(), m))
            .collect(),
    };
    for i in dependency_order(project, graph) {
        let model = &project.models[i];
        let Some(statement) = &statements[i] else {
            continue;
        };
        if !analysis_enabled(project, model) {
            continue;
        }
        let shape = infer(statement, project.engine(), &known);
        let policy = project.policy(model);
        if matches!(policy, Policy::Enforced | Policy::Implicit) {
            match &shape {
                Some(columns) => compare(project, model, policy, columns, diags),
                None => diags.push(
                    Diagnostic::info(Code::ShapeUnknown, format!("the output of model `{}` cannot be inferred; its shape checks were skipped", model.name))
                        .at(Loc::file_start(model.sql_file), "shape not proven")
                        .hint("name computed columns with AS, and read `*` only from models whose shape is known"),
                ),
            }
        }
        if let Some(columns) = shape {
            known.shapes.insert(&model.name, columns);
        }
    }
}

fn compare(
    project: &Project,
    model: &Model,
    policy: Policy,
    output: &[OutColumn],
    diags: &mut Vec<Diagnostic>,
) {
    let engine = project.engine();
    let declared = project.effective_columns(model);
    if declared.is_empty() && policy == Policy::Enforced {
        return; // E020 already says the enforced contract declares nothing.
    }
    for column in &declared {
        if output
            .iter()
            .any(|o| same_column(&o.name, &column.name.value, engine))
        {
            continue;
        }
        let names: Vec<&str> = output.iter().map(|o| o.name.as_str()).collect();
        let mut diag = Diagnostic::error(
            Code::DeclaredColumnNotInOutput,
            format!(
                "column `{}` is declared, but the SQL of model `{}` does not output it",
                column.name.value, model.name
            ),
        )
        .at(column.name.loc.clone(), "declared here")
        .related(Loc::file_start(model.sql_file), "the model's SQL");
        diag = match did_you_mean(&column.name.value, names.iter().copied()) {
            Some(close) if engine == Engine::Postgres && close.eq_ignore_ascii_case(&column.name.value) => diag.hint(format!(
                "the SQL outputs `{close}`: Postgres folds unquoted names to lower case; quote the alias or rename the declaration"
            )),
            Some(close) => diag.hint(format!("did you mean `{close}`? the SQL outputs: {}", names.join(", "))),
            None => diag.hint(format!("the SQL outputs: {}", names.join(", "))),
        };
        diags.push(diag);
    }
    if policy != Policy::Enforced {
        return;
    }
    let file = project.sources.get(model.sql_file);
    for out in output {
        if declared
            .iter()
            .any(|c| same_column(&out.name, &c.name.value, engine))
        {
            continue;
        }
        let loc = match out.position {
            Some((line, col)) => {
                let start = file.offset_of(line, col);
                Loc::new(model.sql_file, start..start)
            }
            None => Loc::file_start(model.sql_file),
        };
        diags.push(
            Diagnostic::error(
                Code::OutputColumnNotDeclared,
                format!(
                    "model `{}` outputs `{}`, which its enforced contract does not declare",
                    model.name, out.name
                ),
            )
            .at(loc, "not declared")
            .related(
                Loc::file_start(model.sidecar.unwrap_or(model.sql_file)),
                "the enforced declaration",
            )
            .hint(format!(
                "declare [columns.{}], or leave it out of the SELECT",
                out.name
            )),
        );
    }
}
