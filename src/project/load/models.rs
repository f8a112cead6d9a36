//! The models: each `.sql` file with its sidecar (read in parallel, or from the declarations
//! cache), the path defaults applied.

#[allow(clippy::wildcard_imports)]
use super::*;

pub(super) const SIDECAR_KEYS: &[&str] = &[
    "materialized",
    "contract",
    "tags",
    "description",
    "model_schema",
    "alias",
    "unique_key",
    "cursor",
    "updated_at",
    "check_columns",
    "snapshot_schema_change",
    "on_schema_change",
    "promotion",
    "sql_analysis",
    "access",
    "audits",
    "meta",
    "columns",
    "measures",
    "dimensions",
    "joins",
    "grain",
    "agg_time_dimension",
    "time_spine",
];

pub(super) fn load_models(
    loader: &mut Loader,
    defaults: &[(Spanned<String>, ModelProps)],
) -> Vec<Model> {
    let listing = std::sync::Arc::clone(&loader.model_files);
    let files = tracing::debug_span!("model files listed").in_scope(|| listing.get());
    // Sized once for the thousands of files a large project adds here.
    loader.sources.reserve(files.len());
    loader.stamped.reserve(files.len());
    let mut sql_by_dir_stem: HashMap<(String, String), &Found> = HashMap::new();
    for f in files.iter().filter(|f| f.ext == "sql") {
        sql_by_dir_stem.insert((parent(&f.rel), f.stem.clone()), f);
    }
    let mut sidecars: HashMap<(String, String), &Found> = HashMap::new();
    for f in files.iter().filter(|f| f.ext == "toml") {
        let key = (parent(&f.rel), f.stem.clone());
        if sql_by_dir_stem.contains_key(&key) {
            sidecars.insert(key, f);
        } else if let Some(id) = loader.read(&f.rel, &f.abs) {
            let sql_name = format!("{}.sql", f.stem);
            loader.diags.push(
                Diagnostic::error(
                    Code::SidecarWithoutSql,
                    format!("{} declares a model with no SQL file", f.rel),
                )
                .at(
                    Loc::file_start(id),
                    format!("no {sql_name} beside this file"),
                )
                .hint(format!(
                    "add {sql_name} next to it, or move the declarations into schemas/"
                )),
            );
        }
    }
    let mut models: Vec<Model> = Vec::with_capacity(sql_by_dir_stem.len());
    let mut pending: Vec<(usize, FileId)> = Vec::new();
    let mut first_file: HashMap<String, FileId> = HashMap::new();
    let pairs: Vec<(&Found, Option<&Found>)> = files
        .iter()
        .filter(|f| f.ext == "sql")
        .map(|f| (f, sidecars.get(&(parent(&f.rel), f.stem.clone())).copied()))
        .collect();
    // Reading thousands of small files is mostly waiting on the kernel: do it on every core.
    let texts = tracing::debug_span!("model files read")
        .in_scope(|| read_all(&loader.stamps, &pairs, |(sql, side)| [Some(*sql), *side]));
    for ((f, side), [sql_text, side_text]) in pairs.iter().zip(texts) {
        let Some(sql_file) = loader.add_found(f, sql_text.expect("always read")) else {
            continue;
        };
        if let Some(&other) = first_file.get(&f.stem) {
            loader.diags.push(
                Diagnostic::error(
                    Code::DuplicateModel,
                    format!("two models are named `{}`", f.stem),
                )
                .at(Loc::file_start(sql_file), "this model")
                .related(Loc::file_start(other), "has the same name as this one")
                .hint(
                    "model names are file stems and must be unique in the project; rename one file",
                ),
            );
            continue;
        }
        first_file.insert(f.stem.clone(), sql_file);
        // Sidecars are parsed below, on every core.
        let sidecar = side
            .zip(side_text)
            .and_then(|(side, text)| loader.add_found(side, text));
        if let Some(id) = sidecar {
            pending.push((models.len(), id));
        }
        models.push(Model {
            name: f.stem.clone(),
            sql_file,
            sidecar,
            props: ModelProps::default(),
            columns: Vec::new(),
            semantic: None,
            unreadable: false,
        });
    }
    let sources = &loader.sources;
    let sidecars: Vec<_> = pending
        .iter()
        .map(|&(i, file)| crate::project::cache::Sidecar {
            file,
            model: &models[i].name,
        })
        .collect();
    let parsed = tracing::debug_span!("sidecars parsed").in_scope(|| {
        let cache = crate::project::cache::DECLARATIONS;
        crate::project::cache::parse_all(
            cache,
            &loader.root,
            loader.use_cache,
            sources,
            &sidecars,
            |s| parse_sidecar(sources, s.file, s.model),
        )
    });
    drop(sidecars);
    for ((i, _), (sidecar, diags)) in pending.into_iter().zip(parsed) {
        loader.diags.extend(diags);
        match sidecar {
            Some((props, columns, semantic)) => {
                models[i].props = props;
                models[i].columns = columns;
                models[i].semantic = semantic;
            }
            None => {
                models[i].sidecar = None;
                models[i].unreadable = true;
            }
        }
    }
    for model in &mut models {
        let rel = &loader.sources.get(model.sql_file).rel_path;
        if let Some(d) = defaults_for(rel, defaults) {
            model.props = std::mem::take(&mut model.props).over(d);
        }
    }
    models
}

pub(super) type Sidecar = Option<(ModelProps, Vec<Column>, Option<Box<Semantic>>)>;

/// Parses one sidecar; `None` when it is not valid TOML (reported).
pub(super) fn parse_sidecar(
    sources: &SourceMap,
    id: FileId,
    name: &str,
) -> (Sidecar, Vec<Diagnostic>) {
    let text = sources.get(id).text();
    match crate::project::plain::read(text, id) {
        Some((props, columns)) => (Some((props, columns, None)), Vec::new()),
        None => parse_sidecar_toml(text, id, name),
    }
}

/// Parses one sidecar with the TOML parser and reads it with the general readers.
pub(in crate::project) fn parse_sidecar_toml(
    text: &str,
    id: FileId,
    name: &str,
) -> (Sidecar, Vec<Diagnostic>) {
    parse_toml(text, id, |r, root| {
        let owner = format!("model `{name}`");
        r.check_keys(root, SIDECAR_KEYS, &owner);
        let mut props = read_model_props(r, root);
        props.audits = root
            .contains_key("audits")
            .then(|| super::super::columns::read_audits(r, root));
        let columns = read_columns(r, root, &owner);
        let semantic = read_semantic(r, root, &owner);
        (props, columns, semantic)
    })
}
