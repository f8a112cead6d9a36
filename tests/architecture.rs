//! The seams of docs/architecture.md, checked in the code. The rooms and their kinds are read from
//! that page's tables (the one source of truth: a room the page does not list fails here, and so
//! does a listed room that does not exist); every file under `src/` is parsed with `syn`, and each
//! `crate::`, `super::` (and, in `main.rs`, `sqb::`) path in it, in `use` items, code and macro
//! arguments alike, is an import of the module it names. A broken rule prints each offending path
//! with its file and line.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;

/// Where a path names another module: the file, the line and the path as written.
#[derive(Debug, Clone)]
struct Site {
    file: PathBuf,
    line: usize,
    path: String,
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file.display(), self.line, self.path)
    }
}

/// Every file module (`compile::sql::shape`; `lib.rs` is `crate`, `main.rs` is `main`) → the
/// modules it names, each with the first place it does.
type Graph = BTreeMap<String, BTreeMap<String, Site>>;

/// What a module under `src/` uses: its imports, and the external crates it names.
struct Tree {
    imports: Graph,
    crates: BTreeMap<String, BTreeMap<String, Site>>,
    /// The modules that name a variant of `Engine` (`Engine::DuckDb`), each with the first place.
    engine_variants: BTreeMap<String, Site>,
}

/// The kinds of room docs/architecture.md's tables name, and what each may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Parses arguments: the only rooms that know clap and the only ones that call `ops`.
    Edge,
    /// The work of each command: may use every room below the edge.
    Ops,
    /// The only room that talks to a database.
    Warehouse,
    /// Never reaches the warehouse, the ops or the edge, and does no I/O of its own.
    Pure,
    /// Never reaches the warehouse, the ops or the edge; may read and write files.
    Files,
    /// Imports only other base modules.
    Base,
}

impl Kind {
    fn parse(text: &str) -> Option<Kind> {
        Some(match text {
            "edge" => Kind::Edge,
            "ops" => Kind::Ops,
            "warehouse" => Kind::Warehouse,
            "pure" => Kind::Pure,
            "files" => Kind::Files,
            "base" => Kind::Base,
            _ => return None,
        })
    }

    /// Below the ops: may not reach the warehouse, the ops or the edge.
    fn below_ops(self) -> bool {
        matches!(self, Kind::Pure | Kind::Files | Kind::Base)
    }
}

/// The room a module lives in: its first segment (`compile` for `compile::sql::shape`).
fn room_of(module: &str) -> &str {
    module.split("::").next().unwrap_or(module)
}

/// The module of a file under `src/`.
fn module_of(rel: &Path) -> String {
    let mut parts: Vec<String> = rel
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    match parts.as_slice() {
        [only] if only == "lib" => "crate".to_string(),
        _ => parts.join("::"),
    }
}

/// The rooms of docs/architecture.md: every table whose header is `| room | kind | job |`, each
/// row's first backticked name (`compile/`, `clock.rs`) and its kind.
fn documented_rooms(doc: &str) -> Result<BTreeMap<String, Kind>, String> {
    let mut rooms = BTreeMap::new();
    let mut in_table = false;
    for (n, line) in doc.lines().enumerate() {
        let cells: Vec<&str> = line.trim().split('|').map(str::trim).collect();
        if cells.len() < 4 {
            in_table = false;
            continue;
        }
        if cells[1..3] == ["room", "kind"] {
            in_table = true;
            continue;
        }
        // `(in compile)`: a part of a room described on its own row.
        if !in_table || cells[1].starts_with("---") || cells[2].starts_with("(in ") {
            continue;
        }
        let name = cells[1]
            .split('`')
            .nth(1)
            .ok_or_else(|| format!("docs/architecture.md:{}: no `room` in {line}", n + 1))?;
        let name = name.trim_end_matches('/').trim_end_matches(".rs");
        let kind = Kind::parse(cells[2])
            .ok_or_else(|| format!("docs/architecture.md:{}: unknown kind {}", n + 1, cells[2]))?;
        if rooms.insert(name.to_string(), kind).is_some() {
            return Err(format!(
                "docs/architecture.md:{}: {name} listed twice",
                n + 1
            ));
        }
    }
    Ok(rooms)
}

/// Reads and parses every `.rs` file under `src`.
fn tree(src: &Path) -> Tree {
    let mut files = BTreeMap::new();
    for entry in walkdir::WalkDir::new(src).sort_by_file_name() {
        let entry = entry.unwrap();
        if entry.path().extension().is_some_and(|e| e == "rs") {
            let rel = entry.path().strip_prefix(src).unwrap().to_path_buf();
            let text = std::fs::read_to_string(entry.path()).unwrap();
            let file = syn::parse_file(&text)
                .unwrap_or_else(|e| panic!("{}: does not parse: {e}", entry.path().display()));
            files.insert(module_of(&rel), (rel, file));
        }
    }
    let modules: BTreeSet<String> = files.keys().cloned().collect();
    let mut tree = Tree {
        imports: Graph::new(),
        crates: BTreeMap::new(),
        engine_variants: BTreeMap::new(),
    };
    let mut tests = Vec::new();
    for (module, (rel, file)) in &files {
        let mut paths = Paths {
            file: Path::new("src").join(rel),
            scope: module.split("::").map(String::from).collect(),
            depth: 0,
            found: Vec::new(),
            test_modules: Vec::new(),
        };
        if module == "crate" {
            paths.scope.clear();
        }
        paths.visit_file(file);
        tests.extend(paths.test_modules);
        let imports = tree.imports.entry(module.clone()).or_default();
        let crates = tree.crates.entry(module.clone()).or_default();
        for (segments, site) in paths.found {
            if names_an_engine(&segments) && !tree.engine_variants.contains_key(module) {
                tree.engine_variants.insert(module.clone(), site.clone());
            }
            let target = match segments.first().map(String::as_str) {
                Some("crate") => resolve(&segments[1..], &modules),
                Some("sqb") if module == "main" => resolve(&segments[1..], &modules),
                Some("super") => {
                    let mut scope = paths.scope.clone();
                    let mut rest = &segments[..];
                    while rest.first().is_some_and(|s| s == "super") {
                        scope.pop();
                        rest = &rest[1..];
                    }
                    let full: Vec<String> = scope.iter().chain(rest).cloned().collect();
                    resolve(&full, &modules).or_else(|| Some(module_name(&scope)))
                }
                // A child module declared here: never an import (and not the crate of its name).
                Some(name) if modules.contains(&child(module, name)) => continue,
                Some(name) => {
                    crates.entry(name.to_string()).or_insert(site);
                    continue;
                }
                None => None,
            };
            if let Some(target) = target.filter(|t| t != module) {
                imports.entry(target).or_insert(site);
            }
        }
    }
    // Test-only files are no room's: their imports, and imports of them, are left out.
    let is_test = |m: &str| {
        tests
            .iter()
            .any(|t| m == t || m.starts_with(&format!("{t}::")))
    };
    tree.imports.retain(|m, _| !is_test(m));
    tree.crates.retain(|m, _| !is_test(m));
    tree.engine_variants.retain(|m, _| !is_test(m));
    for named in tree.imports.values_mut() {
        named.retain(|m, _| !is_test(m));
    }
    tree
}

/// `Engine::Postgres`, `crate::engine::Engine::DuckDb`…
fn names_an_engine(segments: &[String]) -> bool {
    let n = segments.len();
    n >= 2 && segments[n - 2] == "Engine" && ["Postgres", "DuckDb"].contains(&&*segments[n - 1])
}

/// The module `name` declared inside `module`.
fn child(module: &str, name: &str) -> String {
    match module {
        "crate" => name.to_string(),
        _ => format!("{module}::{name}"),
    }
}

fn module_name(scope: &[String]) -> String {
    match scope.is_empty() {
        true => "crate".to_string(),
        false => scope.join("::"),
    }
}

/// The longest prefix of `path` that is a module (a path to the crate root's items is `crate`).
fn resolve(path: &[String], modules: &BTreeSet<String>) -> Option<String> {
    (1..=path.len())
        .rev()
        .map(|n| path[..n].join("::"))
        .find(|m| modules.contains(m))
        .or_else(|| Some("crate".to_string()))
}

/// Collects the paths of one file: each as its segments, with where it is written.
struct Paths {
    file: PathBuf,
    /// The module `super::` is taken from: the file's module.
    scope: Vec<String>,
    /// How deep in inline `mod` blocks the visitor is (their `super::` is the file's module).
    depth: usize,
    found: Vec<(Vec<String>, Site)>,
    /// Modules in files of their own declared `#[cfg(test)] mod x;`: tests, not rooms.
    test_modules: Vec<String>,
}

impl Paths {
    fn add(&mut self, segments: Vec<String>, line: usize) {
        let mut segments = segments;
        // `super::` inside an inline module names its parent: the file's own module.
        if self.depth > 0 && segments.first().is_some_and(|s| s == "super") {
            segments.remove(0);
            segments.insert(0, "self".to_string());
        }
        if segments.first().is_some_and(|s| s == "self") {
            return;
        }
        let site = Site {
            file: self.file.clone(),
            line,
            path: segments.join("::"),
        };
        self.found.push((segments, site));
    }

    /// `a::b::{c, d::e}` as `a::b::c` and `a::b::d::e`; a leading `::` is dropped.
    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree, line: usize) {
        match tree {
            syn::UseTree::Path(p) => {
                let line = if prefix.is_empty() {
                    p.ident.span().start().line
                } else {
                    line
                };
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree, line);
                prefix.pop();
            }
            syn::UseTree::Name(n) => self.use_leaf(prefix, &n.ident, line),
            syn::UseTree::Rename(r) => self.use_leaf(prefix, &r.ident, line),
            syn::UseTree::Glob(_) => self.add(prefix.clone(), line),
            syn::UseTree::Group(g) => {
                for item in &g.items {
                    self.use_tree(prefix, item, line);
                }
            }
        }
    }

    fn use_leaf(&mut self, prefix: &[String], ident: &syn::Ident, line: usize) {
        let line = if prefix.is_empty() {
            ident.span().start().line
        } else {
            line
        };
        let mut path = prefix.to_vec();
        if ident != "self" {
            path.push(ident.to_string());
        }
        // `use clap;`, `use std::fmt;`: a crate named alone.
        self.add(path, line);
    }

    /// Paths inside a macro's tokens (`format!("{}", crate::x::y())`): each `crate`, `super`
    /// or `sqb` identifier followed by `::` and names.
    fn tokens(&mut self, tokens: TokenStream) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < trees.len() {
            match &trees[i] {
                TokenTree::Group(g) => self.tokens(g.stream()),
                TokenTree::Ident(id) if ["crate", "super", "sqb"].contains(&&*id.to_string()) => {
                    let mut segments = vec![id.to_string()];
                    let mut j = i + 1;
                    while let (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b))) =
                        (trees.get(j), trees.get(j + 1))
                    {
                        match (a.as_char(), b.as_char(), trees.get(j + 2)) {
                            (':', ':', Some(TokenTree::Ident(next))) => {
                                segments.push(next.to_string());
                                j += 3;
                            }
                            _ => break,
                        }
                    }
                    if segments.len() > 1 {
                        self.add(segments, id.span().start().line);
                    }
                    i = j;
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
    }
}

/// `#[cfg(test)]`: unit tests, whose `super::` is their file's own module.
fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Meta>()
                .is_ok_and(|m| m.path().is_ident("test"))
    })
}

impl<'ast> Visit<'ast> for Paths {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs = match item {
            syn::Item::Mod(m) => &m.attrs,
            syn::Item::Fn(f) => &f.attrs,
            syn::Item::Impl(i) => &i.attrs,
            syn::Item::Use(u) => &u.attrs,
            _ => return syn::visit::visit_item(self, item),
        };
        if !is_test(attrs) {
            syn::visit::visit_item(self, item);
        } else if let syn::Item::Mod(m) = item {
            if m.content.is_none() && self.depth == 0 {
                let mut module = self.scope.clone();
                module.push(m.ident.to_string());
                self.test_modules.push(module.join("::"));
            }
        }
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        self.depth += usize::from(m.content.is_some());
        syn::visit::visit_item_mod(self, m);
        self.depth -= usize::from(m.content.is_some());
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        let line = u.use_token.span.start().line;
        self.use_tree(&mut Vec::new(), &u.tree, line);
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        if segments.len() > 1 {
            let line = path.segments[0].ident.span().start().line;
            self.add(segments, line);
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.visit_path(&mac.path);
        self.tokens(mac.tokens.clone());
    }
}

/// Room → room, with the first file-level import that makes the edge.
fn rooms_graph(imports: &Graph) -> Graph {
    let mut rooms = Graph::new();
    for (module, named) in imports {
        let from = room_of(module);
        let entry = rooms.entry(from.to_string()).or_default();
        for (target, site) in named {
            let to = room_of(target);
            // `crate` is lib.rs: naming the crate root is not naming another room.
            if to != from && to != "crate" {
                entry.entry(to.to_string()).or_insert_with(|| site.clone());
            }
        }
    }
    rooms
}

/// Every cycle of `graph`, as the strongly connected components of more than one node (Tarjan),
/// each shown as one cycle through it with the import that makes each step.
fn cycles(graph: &Graph) -> Vec<Vec<(String, Site)>> {
    let nodes: Vec<&String> = graph.keys().collect();
    let index_of: BTreeMap<&String, usize> =
        nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let mut state = Tarjan {
        index: vec![None; nodes.len()],
        low: vec![0; nodes.len()],
        on_stack: vec![false; nodes.len()],
        stack: Vec::new(),
        next: 0,
        components: Vec::new(),
    };
    let edges = |v: usize| -> Vec<usize> {
        graph[nodes[v]]
            .keys()
            .filter_map(|t| index_of.get(t).copied())
            .collect()
    };
    for v in 0..nodes.len() {
        if state.index[v].is_none() {
            state.connect(v, &edges);
        }
    }
    state
        .components
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|component| {
            let members: BTreeSet<usize> = component.into_iter().collect();
            one_cycle(&members, &edges)
                .windows(2)
                .map(|w| {
                    let (from, to) = (nodes[w[0]], nodes[w[1]]);
                    (from.clone(), graph[from][to].clone())
                })
                .collect()
        })
        .collect()
}

/// A cycle through the smallest member of a strongly connected component: a shortest path
/// from it back to itself, by breadth-first search inside the component.
fn one_cycle(members: &BTreeSet<usize>, edges: &dyn Fn(usize) -> Vec<usize>) -> Vec<usize> {
    let start = *members.iter().next().unwrap();
    let mut parent: BTreeMap<usize, usize> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(v) = queue.pop_front() {
        for w in edges(v).into_iter().filter(|w| members.contains(w)) {
            if w == start {
                let mut path = vec![start, v];
                let mut at = v;
                while at != start {
                    at = parent[&at];
                    path.push(at);
                }
                path.reverse();
                return path;
            }
            if let std::collections::btree_map::Entry::Vacant(e) = parent.entry(w) {
                e.insert(v);
                queue.push_back(w);
            }
        }
    }
    unreachable!("a strongly connected component has a cycle through each member")
}

struct Tarjan {
    index: Vec<Option<usize>>,
    low: Vec<usize>,
    on_stack: Vec<bool>,
    stack: Vec<usize>,
    next: usize,
    components: Vec<Vec<usize>>,
}

impl Tarjan {
    fn connect(&mut self, v: usize, edges: &dyn Fn(usize) -> Vec<usize>) {
        self.index[v] = Some(self.next);
        self.low[v] = self.next;
        self.next += 1;
        self.stack.push(v);
        self.on_stack[v] = true;
        for w in edges(v) {
            match self.index[w] {
                None => {
                    self.connect(w, edges);
                    self.low[v] = self.low[v].min(self.low[w]);
                }
                Some(i) if self.on_stack[w] => self.low[v] = self.low[v].min(i),
                Some(_) => {}
            }
        }
        if Some(self.low[v]) == self.index[v] {
            let mut component = Vec::new();
            while let Some(w) = self.stack.pop() {
                self.on_stack[w] = false;
                component.push(w);
                if w == v {
                    break;
                }
            }
            self.components.push(component);
        }
    }
}

fn show_cycles(cycles: &[Vec<(String, Site)>]) -> String {
    cycles
        .iter()
        .map(|cycle| {
            let names: Vec<&str> = cycle.iter().map(|(from, _)| from.as_str()).collect();
            let steps: Vec<String> = cycle
                .iter()
                .map(|(from, site)| format!("  {from}: {site}"))
                .collect();
            format!(
                "{} -> {}\n{}",
                names.join(" -> "),
                names[0],
                steps.join("\n")
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every module `from` reaches through its imports, with the first step towards each.
fn reach<'g>(graph: &'g Graph, from: &str) -> BTreeMap<&'g str, &'g Site> {
    let mut seen: BTreeMap<&str, &Site> = BTreeMap::new();
    let mut todo: Vec<(&str, Option<&Site>)> = vec![(from, None)];
    while let Some((m, first)) = todo.pop() {
        for (next, site) in graph.get(m).into_iter().flatten() {
            let step = first.unwrap_or(site);
            if next != from && !seen.contains_key(next.as_str()) {
                seen.insert(next, step);
                todo.push((next, Some(step)));
            }
        }
    }
    seen
}

/// The repository root, where `cargo test` says it is at run time (see tests/common/mod.rs).
fn root() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from)
}

struct Repo {
    rooms: BTreeMap<String, Kind>,
    tree: Tree,
}

fn repo() -> &'static Repo {
    static REPO: std::sync::OnceLock<Repo> = std::sync::OnceLock::new();
    REPO.get_or_init(|| {
        let root = root();
        let doc = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
        Repo {
            rooms: documented_rooms(&doc).unwrap_or_else(|e| panic!("{e}")),
            tree: tree(&root.join("src")),
        }
    })
}

fn kind_of(module: &str) -> Kind {
    repo().rooms[room_of(module)]
}

fn assert_none(offenders: Vec<String>) {
    assert!(offenders.is_empty(), "\n{}\n", offenders.join("\n"));
}

#[test]
fn docs_architecture_lists_every_room_and_only_those() {
    let repo = repo();
    let rooms: BTreeSet<&str> = repo
        .tree
        .imports
        .keys()
        .map(|m| room_of(m))
        .filter(|r| *r != "crate")
        .collect();
    let mut offenders: Vec<String> = rooms
        .iter()
        .filter(|r| !repo.rooms.contains_key(**r))
        .map(|r| format!("src/{r}: not in docs/architecture.md's room tables"))
        .collect();
    offenders.extend(
        repo.rooms
            .keys()
            .filter(|r| !rooms.contains(r.as_str()))
            .map(|r| format!("docs/architecture.md lists {r}, which src/ does not have")),
    );
    assert_none(offenders);
}

#[test]
fn no_cycle_between_rooms() {
    let found = cycles(&rooms_graph(&repo().tree.imports));
    assert!(found.is_empty(), "\n{}\n", show_cycles(&found));
}

#[test]
fn no_cycle_between_modules() {
    let found = cycles(&repo().tree.imports);
    assert!(found.is_empty(), "\n{}\n", show_cycles(&found));
}

#[test]
fn rooms_below_the_ops_never_reach_the_warehouse_the_ops_or_the_edge() {
    let repo = repo();
    let mut offenders = Vec::new();
    for module in repo.tree.imports.keys().filter(|m| *m != "crate") {
        if !kind_of(module).below_ops() {
            continue;
        }
        for (reached, site) in reach(&repo.tree.imports, module) {
            if reached != "crate" && !kind_of(reached).below_ops() {
                offenders.push(format!("{module} reaches {reached}, first through {site}"));
            }
        }
    }
    assert_none(offenders);
}

#[test]
fn only_the_edge_knows_clap_and_calls_the_ops() {
    let repo = repo();
    let mut offenders = Vec::new();
    for (module, named) in &repo.tree.imports {
        if module == "crate" || kind_of(module) == Kind::Edge {
            continue;
        }
        if let Some(site) = repo.tree.crates[module].get("clap") {
            offenders.push(format!("{module} uses clap: {site}"));
        }
        for (target, site) in named {
            let kind = (target != "crate").then(|| kind_of(target));
            let allowed = kind != Some(Kind::Edge)
                && (kind != Some(Kind::Ops) || kind_of(module) == Kind::Ops);
            if !allowed {
                offenders.push(format!("{module} imports {target}: {site}"));
            }
        }
    }
    assert_none(offenders);
}

#[test]
fn only_the_warehouse_talks_to_a_database() {
    let repo = repo();
    let mut offenders = Vec::new();
    for (module, crates) in &repo.tree.crates {
        if module == "crate" || kind_of(module) == Kind::Warehouse {
            continue;
        }
        for db in ["sqlx", "duckdb"] {
            if let Some(site) = crates.get(db) {
                offenders.push(format!("{module} uses {db}: {site}"));
            }
        }
    }
    assert_none(offenders);
}

/// docs/architecture.md, "Adding an engine": the homes of what differs between engines, and the
/// few other places that name an engine for reasons that are not an engine's rules. A new
/// branch on the engine belongs in a home.
#[test]
fn only_the_engine_homes_branch_on_the_engine() {
    let homes = ["engine", "engine_rules", "warehouse::session"];
    let not_rules = [
        "project::config",
        "ops::publish",
        "team_contracts::changes",
        "commands",
    ];
    let offenders = repo()
        .tree
        .engine_variants
        .iter()
        .filter(|(module, _)| {
            !homes
                .iter()
                .any(|h| *module == h || module.starts_with(&format!("{h}::")))
                && !not_rules.contains(&module.as_str())
        })
        .map(|(module, site)| format!("{module} names an engine: {site}"))
        .collect();
    assert_none(offenders);
}

#[test]
fn pure_rooms_do_no_io() {
    let repo = repo();
    let io = [
        "std::fs",
        "std::net",
        "std::process",
        "std::env",
        "walkdir",
        "tempfile",
    ];
    let mut offenders = Vec::new();
    for (module, crates) in &repo.tree.crates {
        if module == "crate" || kind_of(module) != Kind::Pure {
            continue;
        }
        for site in crates.values() {
            if io
                .iter()
                .any(|p| site.path == *p || site.path.starts_with(&format!("{p}::")))
            {
                offenders.push(format!("{module} does I/O: {site}"));
            }
        }
    }
    assert_none(offenders);
}

/// Each import by a module of a room of `kind` of a module whose room is not of the `allowed`
/// kinds (the crate root is allowed).
fn imports_outside(kind: Kind, allowed: &[Kind]) -> Vec<String> {
    let repo = repo();
    let mut offenders = Vec::new();
    for (module, named) in &repo.tree.imports {
        if module == "crate" || kind_of(module) != kind {
            continue;
        }
        for (target, site) in named {
            if target != "crate" && !allowed.contains(&kind_of(target)) {
                offenders.push(format!("{module} imports {target}: {site}"));
            }
        }
    }
    offenders
}

#[test]
fn base_modules_import_only_base_modules() {
    assert_none(imports_outside(Kind::Base, &[Kind::Base]));
}

/// The warehouse owns its inputs: it is handed plain descriptions (a connection, a catalog
/// request, a statement, the drift history's records) from base modules, never a room's types.
#[test]
fn the_warehouse_imports_only_base_modules() {
    assert_none(imports_outside(
        Kind::Warehouse,
        &[Kind::Base, Kind::Warehouse],
    ));
}

/// The checks themselves, on a planted tree whose three rooms import each other in a circle
/// (`a` → `b` → `c` → `a`), each through a different kind of path.
#[test]
fn a_planted_three_room_cycle_is_found_with_its_imports() {
    let src = root().join("testdata/architecture/three_room_cycle/src");
    let tree = tree(&src);
    let found = cycles(&rooms_graph(&tree.imports));
    let shown = show_cycles(&found);
    assert_eq!(found.len(), 1, "{shown}");
    assert_eq!(
        shown,
        "a -> b -> c -> a\n  \
         a: src/a.rs:3: crate::b::Thing\n  \
         b: src/b/mod.rs:5: crate::c::helper\n  \
         c: src/c.rs:8: crate::a::inner::value"
    );
    // Two of the three rooms alone make no cycle.
    let mut two = rooms_graph(&tree.imports);
    two.get_mut("c").unwrap().clear();
    assert!(cycles(&two).is_empty());
}

/// The graph is not vacuous: imports known to be there are seen, in `use` items, in paths in
/// code and through `sqb::` in main.rs, and so are the crates a room names.
#[test]
fn known_imports_are_seen() {
    let tree = &repo().tree;
    let sees = |from: &str, to: &str| tree.imports[from].contains_key(to);
    assert!(sees("ops::inspect", "warehouse::session"));
    assert!(sees("main", "commands"));
    assert!(sees("warehouse::history::file", "drift"));
    assert!(tree.crates["cli"].contains_key("clap"));
    assert!(tree.crates["warehouse::postgres"].contains_key("sqlx"));
    let rooms = rooms_graph(&tree.imports);
    assert!(rooms["ops"].contains_key("warehouse"));
    assert!(!rooms["warehouse"].contains_key("report"));
}

#[test]
fn the_room_tables_are_read_with_their_kinds() {
    let doc = "| room | kind | job |\n|---|---|---|\n| `a/` | pure | x |\n| `b.rs`, `b/c.rs` | base | y |\n\n| x | y | z |\n| `c` | nope | z |\n";
    let rooms = documented_rooms(doc).unwrap();
    assert_eq!(rooms.len(), 2);
    assert_eq!(rooms["a"], Kind::Pure);
    assert_eq!(rooms["b"], Kind::Base);
    let bad = "| room | kind | job |\n|---|---|---|\n| `a/` | nope | x |\n";
    assert_eq!(
        documented_rooms(bad).unwrap_err(),
        "docs/architecture.md:3: unknown kind nope"
    );
}
