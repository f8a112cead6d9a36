//! Model dependencies: what each model's SQL reads, and the project's DAG.
//!
//! A table reference resolves, in this order, to a model of that name (`FROM orders`), a source
//! by `schema.table` (`FROM raw.orders`) or by source name, else an external relation (opaque).
//! References to a CTE of the same statement are not dependencies. Cycles are errors.

use std::collections::{HashMap, HashSet};
use std::ops::ControlFlow;

use sqlparser::ast::{Ident, ObjectName, Query, Spanned as _, Statement, Visit, Visitor};

use crate::diagnostics::{Code, Diagnostic};
use crate::project::{all_resources, Resource};
use crate::project::{Model, Project};
use crate::source::Loc;

/// The project's resources (in [`all_resources`] order) and the edges between them.
#[derive(Debug, Default, Clone)]
pub struct Graph {
    /// For each resource, the resources it reads.
    pub parents: Vec<Vec<usize>>,
    /// For each resource, the resources that read it.
    pub children: Vec<Vec<usize>>,
}

impl Graph {
    /// The graph with these parent lists (children derived).
    pub fn from_parents(parents: Vec<Vec<usize>>) -> Self {
        let mut children = vec![Vec::new(); parents.len()];
        for (i, list) in parents.iter().enumerate() {
            for &p in list {
                children[p].push(i);
            }
        }
        Self { parents, children }
    }
}

/// A reference found in a model's SQL: the name as written, and where.
#[derive(Debug, Clone)]
pub struct Reference {
    pub parts: Vec<Ident>,
    pub loc: Loc,
}

/// The relations a statement reads that are not CTEs in scope where they are read.
///
/// A CTE is in scope in the body of its query and in the CTEs defined after it; in its own
/// definition only under `WITH RECURSIVE`. So `WITH orders AS (SELECT * FROM orders)` reads the
/// model or source `orders`.
#[derive(Default)]
struct Collector {
    /// One frame per query being visited, innermost last.
    frames: Vec<Frame>,
    relations: Vec<ObjectName>,
}

struct Frame {
    /// Its CTE names, in order of definition.
    ctes: Vec<String>,
    recursive: bool,
    /// How many of its CTE definitions have been visited (its body comes after all of them).
    defined: usize,
}

impl Frame {
    fn visible(&self) -> &[String] {
        let end = match self.recursive && self.defined < self.ctes.len() {
            true => self.defined + 1,
            false => self.defined,
        };
        &self.ctes[..end]
    }
}

impl Collector {
    fn is_cte(&self, name: &str) -> bool {
        self.frames
            .iter()
            .any(|f| f.visible().iter().any(|c| c == name))
    }
}

impl Visitor for Collector {
    type Break = ();

    fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<()> {
        let (ctes, recursive) = match &query.with {
            Some(with) => (
                with.cte_tables
                    .iter()
                    .map(|c| c.alias.name.value.to_lowercase())
                    .collect(),
                with.recursive,
            ),
            None => (Vec::new(), false),
        };
        self.frames.push(Frame {
            ctes,
            recursive,
            defined: 0,
        });
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _: &Query) -> ControlFlow<()> {
        self.frames.pop();
        // A query that ends while its parent is still visiting CTE definitions was the next one.
        if let Some(parent) = self.frames.last_mut() {
            if parent.defined < parent.ctes.len() {
                parent.defined += 1;
            }
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_relation(&mut self, relation: &ObjectName) -> ControlFlow<()> {
        let cte = match relation.0.as_slice() {
            [single] => single
                .as_ident()
                .filter(|i| i.quote_style.is_none())
                .is_some_and(|i| self.is_cte(&i.value.to_lowercase())),
            _ => false,
        };
        if !cte {
            self.relations.push(relation.clone());
        }
        ControlFlow::Continue(())
    }
}

/// The relations a model's statement reads, as written, in order.
pub fn references(model: &Model, project: &Project, statement: &Statement) -> Vec<Reference> {
    let mut collector = Collector::default();
    let _ = statement.visit(&mut collector);
    let file = project.sources.get(model.sql_file);
    collector
        .relations
        .into_iter()
        .map(|name| {
            let parts: Vec<Ident> = name
                .0
                .iter()
                .filter_map(|p| p.as_ident().cloned())
                .collect();
            let span = name.span();
            let loc = if span.start.line == 0 {
                Loc::file_start(model.sql_file)
            } else {
                let start = file.offset_of(span.start.line as usize, span.start.column as usize);
                let end = file
                    .offset_of(span.end.line as usize, span.end.column as usize)
                    .max(start);
                Loc::new(model.sql_file, start..end)
            };
            Reference { parts, loc }
        })
        .collect()
}

fn same(ident: &Ident, name: &str) -> bool {
    if ident.quote_style.is_some() {
        ident.value == name
    } else {
        ident.value.eq_ignore_ascii_case(name)
    }
}

/// Resources by the names a reference can use, so that resolving is a lookup.
struct Index {
    models: HashMap<String, usize>,
    models_folded: HashMap<String, usize>,
    sources: HashMap<String, usize>,
    sources_folded: HashMap<String, usize>,
    /// (schema, table) folded to lower case → sources, for `schema.table` references.
    tables: HashMap<(String, String), Vec<usize>>,
}

impl Index {
    fn new(all: &[Resource<'_>]) -> Self {
        let mut index = Index {
            models: HashMap::new(),
            models_folded: HashMap::new(),
            sources: HashMap::new(),
            sources_folded: HashMap::new(),
            tables: HashMap::new(),
        };
        for (i, r) in all.iter().enumerate() {
            match r {
                Resource::Model(m) => {
                    index.models.entry(m.name.clone()).or_insert(i);
                    index
                        .models_folded
                        .entry(m.name.to_lowercase())
                        .or_insert(i);
                }
                Resource::Source(s) => {
                    index.sources.entry(s.name.value.clone()).or_insert(i);
                    index
                        .sources_folded
                        .entry(s.name.value.to_lowercase())
                        .or_insert(i);
                    if let Some(schema) = &s.schema {
                        let key = (
                            schema.value.to_lowercase(),
                            s.relation_name().to_lowercase(),
                        );
                        index.tables.entry(key).or_default().push(i);
                    }
                }
            }
        }
        index
    }

    fn by_name(
        exact: &HashMap<String, usize>,
        folded: &HashMap<String, usize>,
        name: &Ident,
    ) -> Option<usize> {
        exact
            .get(&name.value)
            .copied()
            .or_else(|| match name.quote_style {
                None => folded.get(&name.value.to_lowercase()).copied(),
                Some(_) => None,
            })
    }

    /// The resource a reference resolves to, if any (else it is external).
    fn resolve(&self, parts: &[Ident], all: &[Resource<'_>]) -> Option<usize> {
        let table = |database: Option<&Ident>, schema: &Ident, table: &Ident| {
            let key = (schema.value.to_lowercase(), table.value.to_lowercase());
            self.tables.get(&key)?.iter().copied().find(|&i| {
                let Resource::Source(s) = all[i] else {
                    return false;
                };
                s.schema.as_ref().is_some_and(|x| same(schema, &x.value))
                    && same(table, s.relation_name())
                    && database
                        .is_none_or(|d| s.database.as_ref().is_none_or(|x| same(d, &x.value)))
            })
        };
        match parts {
            [name] => Self::by_name(&self.models, &self.models_folded, name)
                .or_else(|| Self::by_name(&self.sources, &self.sources_folded, name)),
            [schema, name] => table(None, schema, name),
            [database, schema, name] => table(Some(database), schema, name),
            _ => None,
        }
    }
}

/// Builds the DAG from each model's parsed statement (`None` where it did not parse), reporting
/// names that are both a model and a source, and cycles.
/// Resolves references to resources, once per project.
pub struct Resolver<'p> {
    all: Vec<Resource<'p>>,
    index: Index,
}

impl<'p> Resolver<'p> {
    pub fn new(project: &'p Project) -> Self {
        let all = all_resources(project);
        let index = Index::new(&all);
        Self { all, index }
    }

    /// The project's resource a reference names, if any (else it is an import or external).
    pub fn resource(&self, parts: &[Ident]) -> Option<Resource<'p>> {
        self.index.resolve(parts, &self.all).map(|i| self.all[i])
    }

    /// The resources a model's statement reads (its parents), each with where it is read; an
    /// imported model is the node after the resources at its position in `imports`.
    pub fn parents(
        &self,
        project: &Project,
        model: &Model,
        statement: &Statement,
        imports: &super::team_models::Imports,
    ) -> Vec<(usize, Loc)> {
        self.resolve(project, &references(model, project, statement), imports)
    }

    /// The resources these references name, each once, with where it is first read.
    pub fn resolve(
        &self,
        project: &Project,
        references: &[Reference],
        imports: &super::team_models::Imports,
    ) -> Vec<(usize, Loc)> {
        let mut out: Vec<(usize, Loc)> = Vec::new();
        for reference in references {
            let parent = self.index.resolve(&reference.parts, &self.all).or_else(|| {
                imports
                    .position(&reference.parts, project.engine())
                    .map(|k| self.all.len() + k)
            });
            let Some(parent) = parent else {
                continue;
            };
            if !out.iter().any(|(p, _)| *p == parent) {
                out.push((parent, reference.loc.clone()));
            }
        }
        out
    }
}

/// Builds the DAG from each model's parents (`None` where its SQL did not parse), reporting
/// names that are both a model and a source, and cycles.
pub fn build(
    project: &Project,
    parents: Vec<Option<Vec<(usize, Loc)>>>,
    imported: usize,
    diags: &mut Vec<Diagnostic>,
) -> Graph {
    let count = project.models.len() + project.source_tables.len() + imported;
    check_name_clashes(project, diags);
    let mut graph = Graph {
        parents: vec![Vec::new(); count],
        children: vec![Vec::new(); count],
    };
    let mut edge_locs: Vec<Vec<(usize, Loc)>> = vec![Vec::new(); count];
    for (i, list) in parents.into_iter().enumerate() {
        for (parent, loc) in list.unwrap_or_default() {
            graph.parents[i].push(parent);
            graph.children[parent].push(i);
            edge_locs[i].push((parent, loc));
        }
    }
    report_cycles(project, &graph, &edge_locs, diags);
    graph
}

fn check_name_clashes(project: &Project, diags: &mut Vec<Diagnostic>) {
    let models: HashMap<&str, &Model> = project
        .models
        .iter()
        .map(|m| (m.name.as_str(), m))
        .collect();
    for source in &project.source_tables {
        let Some(model) = models.get(source.name.value.as_str()) else {
            continue;
        };
        diags.push(
            Diagnostic::error(
                Code::ModelSourceNameClash,
                format!("`{}` is both a model and a source", model.name),
            )
            .at(source.name.loc.clone(), "this source")
            .related(
                Loc::file_start(model.sql_file),
                "has the name of this model",
            )
            .hint("a reference to the name would be ambiguous; rename the model or the source"),
        );
    }
}

/// Reports each cycle among models once, at the reference that closes it.
fn report_cycles(
    project: &Project,
    graph: &Graph,
    edge_locs: &[Vec<(usize, Loc)>],
    diags: &mut Vec<Diagnostic>,
) {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Active,
        Done,
    }
    let models = project.models.len();
    let mut mark = vec![Mark::New; models];
    let mut stack: Vec<usize> = Vec::new();
    for start in 0..models {
        if mark[start] != Mark::New {
            continue;
        }
        // Iterative DFS: (node, next parent index).
        let mut work: Vec<(usize, usize)> = vec![(start, 0)];
        mark[start] = Mark::Active;
        stack.push(start);
        while let Some(&mut (node, ref mut next)) = work.last_mut() {
            let parents = &graph.parents[node];
            if *next == parents.len() {
                mark[node] = Mark::Done;
                stack.pop();
                work.pop();
                continue;
            }
            let parent = parents[*next];
            *next += 1;
            if parent >= models {
                continue;
            }
            match mark[parent] {
                Mark::New => {
                    mark[parent] = Mark::Active;
                    stack.push(parent);
                    work.push((parent, 0));
                }
                Mark::Active => {
                    let from = stack.iter().position(|&n| n == parent).unwrap_or(0);
                    let mut cycle: Vec<&str> = stack[from..]
                        .iter()
                        .map(|&n| project.models[n].name.as_str())
                        .collect();
                    cycle.push(&project.models[parent].name);
                    let loc = edge_locs[node]
                        .iter()
                        .find(|(p, _)| *p == parent)
                        .map(|(_, l)| l.clone());
                    let mut diag = Diagnostic::error(
                        Code::DependencyCycle,
                        format!(
                            "models depend on each other in a cycle: {}",
                            cycle.join(" → ")
                        ),
                    );
                    if let Some(loc) = loc {
                        diag = diag.at(
                            loc,
                            format!(
                                "`{}` reads `{}` here",
                                project.models[node].name, project.models[parent].name
                            ),
                        );
                    }
                    diags.push(diag.hint("a model cannot read itself, directly or through other models; break the cycle"));
                }
                Mark::Done => {}
            }
        }
    }
}

/// The resources within `depth` steps along `edges` of the `start` set (the set included).
pub fn expand(start: &[usize], edges: &[Vec<usize>], depth: Option<usize>) -> Vec<usize> {
    let mut seen: HashSet<usize> = start.iter().copied().collect();
    let mut frontier: Vec<usize> = start.to_vec();
    let mut level = 0;
    while !frontier.is_empty() && depth.is_none_or(|d| level < d) {
        let mut next = Vec::new();
        for node in frontier {
            for &n in &edges[node] {
                if seen.insert(n) {
                    next.push(n);
                }
            }
        }
        frontier = next;
        level += 1;
    }
    let mut out: Vec<usize> = seen.into_iter().collect();
    out.sort_unstable();
    out
}
