//! The selector grammar shared by every command's `--select` and `--exclude`.
//!
//! `stg_*` and `model:x` match model names (globs allowed), `tag:x` tags, `path:models/commerce`
//! (or any selector containing `/`) files under a path, `source:raw_*` source names,
//! `import:shop` / `import:shop.fct_*` imported models (nodes of the DAG that commands never
//! act on themselves: `import:shop+` selects the models that read it). Selectors
//! given separately union; a comma inside one intersects; `--exclude` subtracts. Graph operators
//! take a selector's ancestors (`+x`, `2+x`) or descendants (`x+`, `x+1`) in the model DAG.

use std::collections::HashMap;

use globset::{Glob, GlobMatcher};

use crate::compile::deps::{expand, Graph};

use crate::diagnostics::did_you_mean;
use crate::error::UserError;
use crate::project::{all_resources, resource_at, Project, Resource};

#[derive(Debug)]
enum Method {
    Model(Pattern),
    Tag(Pattern),
    Path(String, Pattern),
    Source(Pattern),
    /// `import:NAME` or `import:NAME.MODEL`.
    Import(Pattern, Option<Pattern>),
}

/// A selector's value: a name, or a glob. Names are compared, not compiled into a matcher: a
/// `--select-file` may list thousands of them.
#[derive(Debug)]
enum Pattern {
    Exact(String),
    Glob(GlobMatcher),
}

impl Pattern {
    fn new(value: &str, selector: &str) -> Result<Self, UserError> {
        Ok(match exact(value) {
            Some(name) => Pattern::Exact(name),
            None => Pattern::Glob(glob(value, selector)?),
        })
    }

    fn is_match(&self, text: &str) -> bool {
        match self {
            Pattern::Exact(name) => name == text,
            Pattern::Glob(g) => g.is_match(text),
        }
    }
}

/// How far a graph operator reaches: `None` is all the way.
type Depth = Option<usize>;

/// One comma-separated part of a selector: a method, with optional graph operators
/// (`+x` ancestors, `x+` descendants, `2+x` ancestors within two steps).
#[derive(Debug)]
struct Atom {
    method: Method,
    ancestors: Option<Depth>,
    descendants: Option<Depth>,
}

fn exact(value: &str) -> Option<String> {
    (!value.contains(['*', '?', '[', ']', '{', '}', '\\'])).then(|| value.to_string())
}

/// One selector: atoms that must all match.
#[derive(Debug)]
struct Selector {
    text: String,
    atoms: Vec<Atom>,
}

fn glob(pattern: &str, selector: &str) -> Result<GlobMatcher, UserError> {
    Glob::new(pattern)
        .map(|g| g.compile_matcher())
        .map_err(|e| UserError::new(format!("invalid selector `{selector}`: {e}")))
}

/// Splits `2+name+3` into (Some(Some(2)), "name", Some(Some(3))).
fn graph_operators<'a>(
    atom: &'a str,
    selector: &str,
) -> Result<(Option<Depth>, &'a str, Option<Depth>), UserError> {
    let depth = |digits: &str| -> Result<Depth, UserError> {
        if digits.is_empty() {
            return Ok(None);
        }
        digits
            .parse()
            .map(Some)
            .map_err(|_| UserError::new(format!("invalid graph depth `{digits}` in `{selector}`")))
    };
    let (ancestors, rest) = match atom.find('+') {
        Some(i) if atom[..i].chars().all(|c| c.is_ascii_digit()) => {
            (Some(depth(&atom[..i])?), &atom[i + 1..])
        }
        _ => (None, atom),
    };
    let (rest, descendants) = match rest.rfind('+') {
        Some(i) if rest[i + 1..].chars().all(|c| c.is_ascii_digit()) => {
            (&rest[..i], Some(depth(&rest[i + 1..])?))
        }
        _ => (rest, None),
    };
    Ok((ancestors, rest, descendants))
}

fn parse_atom(atom: &str, selector: &str) -> Result<Atom, UserError> {
    let (ancestors, atom, descendants) = graph_operators(atom, selector)?;
    if atom.is_empty() {
        return Err(UserError::new(format!("empty selector in `{selector}`"))
            .with_hint("separate selectors with spaces; a comma intersects two selectors"));
    }
    let (method, value) = match atom.split_once(':') {
        Some((method, value)) => (method, value),
        None if atom.contains('/') => ("path", atom),
        None => ("model", atom),
    };
    if value.is_empty() {
        return Err(UserError::new(format!(
            "selector `{selector}` has no value after `{method}:`"
        )));
    }
    let method = match method {
        "model" => Method::Model(Pattern::new(value, selector)?),
        "tag" => Method::Tag(Pattern::new(value, selector)?),
        "source" => Method::Source(Pattern::new(value, selector)?),
        "import" => {
            let (import, model) = match value.split_once('.') {
                Some((i, m)) => (i, Some(Pattern::new(m, selector)?)),
                None => (value, None),
            };
            Method::Import(Pattern::new(import, selector)?, model)
        }
        "path" => {
            let clean = value
                .trim_start_matches("./")
                .trim_end_matches('/')
                .to_string();
            let matcher = Pattern::new(&clean, selector)?;
            Method::Path(clean, matcher)
        }
        other => {
            return Err(UserError::new(format!(
                "unknown selector method `{other}:` in `{selector}`"
            ))
            .with_hint("use model:, tag:, path:, source: or import:, or a bare model name"))
        }
    };
    Ok(Atom {
        method,
        ancestors,
        descendants,
    })
}

impl Method {
    fn matches(&self, resource: &Resource<'_>, project: &Project) -> bool {
        match (self, resource) {
            (Method::Model(g), Resource::Model(m)) => g.is_match(&m.name),
            (Method::Source(g), Resource::Source(s)) => g.is_match(&s.name.value),
            (Method::Tag(g), r) => r.tags().iter().any(|t| g.is_match(t)),
            (Method::Path(prefix, g), r) => r.paths(project).iter().any(|p| {
                g.is_match(p)
                    || (p.starts_with(prefix.as_str()) && p[prefix.len()..].starts_with('/'))
            }),
            _ => false,
        }
    }
}

impl Selector {
    fn parse(text: &str) -> Result<Self, UserError> {
        let atoms = text
            .split(',')
            .map(|a| parse_atom(a.trim(), text))
            .collect::<Result<_, _>>()?;
        Ok(Self {
            text: text.to_string(),
            atoms,
        })
    }
}

/// What the user asked for: `--select`, `--exclude` and `--select-file` lines.
#[derive(Debug, Default, Clone)]
pub struct Selection {
    pub select: Vec<String>,
    pub exclude: Vec<String>,
}

impl Selection {
    /// Adds the selectors of a file: one per line, blank lines and `#` comments skipped.
    pub fn add_file_lines(&mut self, text: &str) {
        self.select.extend(
            text.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .map(String::from),
        );
    }

    /// Whether resolving needs the project's DAG: some selector has a graph operator. A
    /// selector that does not parse counts as needing it, so that its error is reported where
    /// resolving normally happens, after the project compiled.
    pub fn needs_graph(&self) -> bool {
        self.select.iter().chain(&self.exclude).any(|s| {
            Selector::parse(s).map_or(true, |sel| {
                sel.atoms.iter().any(|a| {
                    a.ancestors.is_some()
                        || a.descendants.is_some()
                        || matches!(a.method, Method::Import(..))
                })
            })
        })
    }

    /// The selected resources, in project order. A selector that matches nothing is an error.
    /// `graph` is the project's DAG, for graph operators.
    pub fn resolve<'p>(
        &self,
        project: &'p Project,
        graph: &Graph,
    ) -> Result<Vec<Resource<'p>>, UserError> {
        Ok(self.resolve_indices(project, graph)?.resources(project))
    }

    /// The selection as positions in the project, which borrow nothing: kept across a change
    /// to the project that leaves its resources where they are (its texts released, say).
    pub fn resolve_indices(&self, project: &Project, graph: &Graph) -> Result<Selected, UserError> {
        let all = all_resources(project);
        let imported = crate::compile::import_nodes(project);
        let ctx = Context {
            index: NameIndex::new(&all),
            all: &all,
            imported: &imported,
            project,
            graph,
        };
        let select = parse_all(&self.select)?;
        let exclude = parse_all(&self.exclude)?;
        let selected = if select.is_empty() {
            vec![true; all.len()]
        } else {
            ctx.union(&select)?
        };
        let excluded = ctx.union(&exclude)?;
        Ok(Selected(
            (0..all.len())
                .filter(|&i| selected[i] && !excluded[i])
                .collect(),
        ))
    }
}

fn parse_all(selectors: &[String]) -> Result<Vec<Selector>, UserError> {
    selectors.iter().map(|s| Selector::parse(s)).collect()
}

/// Selected resources by their position in [`all_resources`] order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selected(Vec<usize>);

impl Selected {
    /// The resources of `project`, the one the selection was resolved against.
    pub fn resources<'p>(&self, project: &'p Project) -> Vec<Resource<'p>> {
        self.0
            .iter()
            .filter_map(|&i| resource_at(project, i))
            .collect()
    }
}

/// Resources by name, so that selectors naming one resource exactly (the thousands of lines of
/// a `--select-file`) are looked up instead of matched against every resource.
struct NameIndex {
    models: HashMap<String, usize>,
    sources: HashMap<String, usize>,
}

impl NameIndex {
    fn new(all: &[Resource<'_>]) -> Self {
        let mut index = NameIndex {
            models: HashMap::new(),
            sources: HashMap::new(),
        };
        for (i, r) in all.iter().enumerate() {
            let map = match r {
                Resource::Model(_) => &mut index.models,
                Resource::Source(_) => &mut index.sources,
            };
            map.entry(r.name().to_string()).or_insert(i);
        }
        index
    }
}

struct Context<'a, 'p> {
    index: NameIndex,
    all: &'a [Resource<'p>],
    /// The DAG's nodes after the resources: `(import, model)`.
    imported: &'a [(String, String)],
    project: &'p Project,
    graph: &'a Graph,
}

impl Context<'_, '_> {
    /// The resources one atom matches, graph operators applied, sorted.
    fn atom(&self, atom: &Atom) -> Vec<usize> {
        let base: Vec<usize> = match &atom.method {
            Method::Model(Pattern::Exact(name)) => {
                self.index.models.get(name).copied().into_iter().collect()
            }
            Method::Source(Pattern::Exact(name)) => {
                self.index.sources.get(name).copied().into_iter().collect()
            }
            Method::Import(import, model) => self
                .imported
                .iter()
                .enumerate()
                .filter(|(_, (i, m))| {
                    import.is_match(i) && model.as_ref().is_none_or(|p| p.is_match(m))
                })
                .map(|(k, _)| self.all.len() + k)
                .filter(|&node| node < self.graph.parents.len())
                .collect(),
            method => (0..self.all.len())
                .filter(|&i| method.matches(&self.all[i], self.project))
                .collect(),
        };
        if atom.ancestors.is_none() && atom.descendants.is_none() {
            return base;
        }
        let mut out = base.clone();
        if let Some(depth) = atom.ancestors {
            out.extend(expand(&base, &self.graph.parents, depth));
        }
        if let Some(depth) = atom.descendants {
            out.extend(expand(&base, &self.graph.children, depth));
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Which resources any of `selectors` matches; a selector matching none is an error.
    fn union(&self, selectors: &[Selector]) -> Result<Vec<bool>, UserError> {
        let mut hit = vec![false; self.all.len()];
        for selector in selectors {
            let mut atoms = selector.atoms.iter().map(|a| self.atom(a));
            let mut matched = atoms.next().unwrap_or_default();
            for other in atoms {
                let other: std::collections::HashSet<usize> = other.into_iter().collect();
                matched.retain(|i| other.contains(i));
            }
            if matched.is_empty() {
                return Err(no_match(selector, self.all, self.imported));
            }
            // Imported models are nodes of the DAG, not resources a command acts on.
            if matched.iter().all(|&i| i >= self.all.len()) {
                return Err(UserError::new(format!(
                    "selector `{}` matches imported models only, which no command acts on",
                    selector.text
                ))
                .with_hint(format!(
                    "`{}+` selects the models that read them",
                    selector.text
                )));
            }
            for i in matched.into_iter().filter(|&i| i < self.all.len()) {
                hit[i] = true;
            }
        }
        Ok(hit)
    }
}

fn no_match(selector: &Selector, all: &[Resource<'_>], imported: &[(String, String)]) -> UserError {
    let mut candidates: Vec<String> = Vec::new();
    for (import, model) in imported {
        candidates.push(format!("import:{import}"));
        candidates.push(format!("import:{import}.{model}"));
    }
    for r in all {
        candidates.push(match r {
            Resource::Model(m) => m.name.clone(),
            Resource::Source(s) => format!("source:{}", s.name.value),
        });
        candidates.extend(r.tags().iter().map(|t| format!("tag:{t}")));
    }
    candidates.sort();
    candidates.dedup();
    let error = UserError::new(format!(
        "selector `{}` matches no model or source",
        selector.text
    ));
    let wanted = selector.text.split(',').next().unwrap_or("").trim();
    // A bare name that is a source's: the selector for it is `source:NAME`.
    let bare = wanted.trim_matches(|c: char| c == '+' || c.is_ascii_digit());
    let source = all
        .iter()
        .any(|r| matches!(r, Resource::Source(s) if s.name.value == bare));
    if !bare.is_empty() && !bare.contains(':') && source {
        let spelled = wanted.replacen(bare, &format!("source:{bare}"), 1);
        return error.with_hint(format!(
            "`{bare}` is a source, and a bare name selects models: did you mean `{spelled}`?"
        ));
    }
    match did_you_mean(wanted, candidates.iter().map(String::as_str)) {
        Some(close) => error.with_hint(format!("did you mean `{close}`?")),
        None => error.with_hint(
            "selectors: NAME or glob, model:NAME, tag:TAG, path:DIR, source:NAME, import:NAME",
        ),
    }
}
