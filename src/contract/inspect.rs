//! Reading the selected resources' relations from the warehouse: the I/O half of the contract
//! commands, kept apart from the pure diff.
//!
//! A [`Session`] runs on its own thread so that connecting (and, when every resource is
//! selected, the catalog query itself) overlaps loading and compiling the project; the
//! selected resources are then matched to what it read ([`assemble`]).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use crate::engine::Engine;
use crate::project::{Config, Target};
use crate::select::Resource;
#[cfg(feature = "duckdb")]
use crate::warehouse::duckdb::DuckDbIntrospector;
use crate::warehouse::postgres::PgIntrospector;
use crate::warehouse::{
    quote_ident, Introspector, Namespace, PhysicalRelation, Timeouts, WarehouseError,
};

/// A selected resource with what the warehouse holds for it.
pub struct Inspected<'p> {
    pub resource: Resource<'p>,
    /// `database.schema.name`, quoted where needed.
    pub relation: String,
    pub physical: Option<PhysicalRelation>,
    /// A relation whose name differs only by case, where that is not the same relation.
    pub case_only: Option<String>,
}

/// The result of reading a target: its resolved database and the inspected resources.
pub struct Inspection<'p> {
    pub database: String,
    pub items: Vec<Inspected<'p>>,
}

/// The environment variable that overrides `connection.url`.
pub const DATABASE_URL_ENV: &str = "SQB_DATABASE_URL";

/// How to reach the project's warehouse: everything needed to connect, taken from the project's
/// configuration (and `SQB_DATABASE_URL`), owned so that a session can start on its own thread
/// before the rest of the project is loaded.
#[derive(Debug, Clone)]
pub struct Connect {
    engine: Engine,
    /// Postgres: the URL.
    url: Option<String>,
    /// DuckDB: the database file.
    path: PathBuf,
    timeouts: Timeouts,
}

impl Connect {
    pub fn new(config: &Config, root: &Path, timeouts: Timeouts) -> Result<Self, WarehouseError> {
        let engine = config.connection.engine;
        let url = std::env::var(DATABASE_URL_ENV)
            .ok()
            .filter(|u| !u.is_empty())
            .or_else(|| config.connection.url.as_ref().map(|u| u.value.clone()));
        if engine == Engine::Postgres && url.is_none() {
            return Err(WarehouseError::NoUrl);
        }
        let path = config
            .connection
            .path
            .as_ref()
            .map_or("", |p| p.value.as_str());
        Ok(Self {
            engine,
            url,
            path: root.join(Path::new(path)),
            timeouts,
        })
    }
}

/// Lists relation names to read ahead (on the session's thread).
pub type Names = Box<dyn FnOnce() -> Vec<String> + Send>;

/// Relation names to read, per namespace.
pub type Request = Vec<(Namespace, Vec<String>)>;

/// What the warehouse answered to a [`Request`].
pub struct Answer {
    pub relations: Vec<(Namespace, Vec<PhysicalRelation>)>,
    pub default_database: String,
}

/// A warehouse session on its own thread (with its own async runtime). It connects (and may
/// read ahead) while the caller loads and compiles the project, then answers one [`Request`].
/// A caller that stops early just drops it; the thread ends on its own.
pub struct Session {
    requests: Option<mpsc::Sender<Request>>,
    answers: mpsc::Receiver<Result<Answer, WarehouseError>>,
    /// The thread, joined when the session ends. A DuckDB session is always joined: the
    /// process must not exit while DuckDB's C++ code runs on another thread. A Postgres
    /// session that is dropped unused is left to end on its own (it may be waiting out a
    /// connect timeout).
    thread: Option<std::thread::JoinHandle<()>>,
    engine: Engine,
}

/// Relations read ahead: every relation of `namespace` whose name equals one of `names` up to
/// case, read before the selection is known.
struct ReadAhead {
    namespace: Namespace,
    folded: HashSet<String>,
    relations: Vec<PhysicalRelation>,
}

impl Session {
    /// Starts connecting; with `read_ahead`, also reads the names it lists (listed on the
    /// session's thread) in that namespace at once.
    pub fn start(connect: Connect, read_ahead: Option<(Namespace, Names)>) -> Self {
        let engine = connect.engine;
        let (request_tx, request_rx) = mpsc::channel::<Request>();
        let (answer_tx, answer_rx) = mpsc::channel();
        let spawned = std::thread::Builder::new()
            .name("warehouse".into())
            .spawn(move || {
                let answer = serve(connect, read_ahead, &request_rx);
                if let Some(answer) = answer {
                    let _ = answer_tx.send(answer);
                }
            });
        match spawned {
            Ok(thread) => Self {
                requests: Some(request_tx),
                answers: answer_rx,
                thread: Some(thread),
                engine,
            },
            Err(err) => {
                let (tx, rx) = mpsc::channel();
                let _ = tx.send(Err(WarehouseError::Query(format!(
                    "could not start the warehouse thread: {err}"
                ))));
                Self {
                    requests: None,
                    answers: rx,
                    thread: None,
                    engine,
                }
            }
        }
    }

    /// Sends the request and waits for the answer.
    pub fn read(mut self, request: Request) -> Result<Answer, WarehouseError> {
        self.send(request);
        self.answer()
    }

    /// Sends the request; the session reads it while the caller goes on.
    pub fn send(&mut self, request: Request) {
        // The thread may already have answered with an error and gone: the answer is kept.
        if let Some(requests) = self.requests.take() {
            let _ = requests.send(request);
        }
    }

    /// Waits for the answer to the request [`Session::send`] sent.
    pub fn answer(mut self) -> Result<Answer, WarehouseError> {
        let answer = self
            .answers
            .recv()
            .unwrap_or_else(|_| Err(WarehouseError::Query("the warehouse thread stopped".into())));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        answer
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // Closing the request channel tells the thread to stop once it is connected.
        self.requests.take();
        if self.engine == Engine::DuckDb {
            if let Some(thread) = self.thread.take() {
                let _ = thread.join();
            }
        }
    }
}

/// The session thread: connect, read ahead, wait for the request, answer it. `None` when the
/// caller went away.
fn serve(
    connect: Connect,
    read_ahead: Option<(Namespace, Names)>,
    requests: &mpsc::Receiver<Request>,
) -> Option<Result<Answer, WarehouseError>> {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(err) => {
            return Some(Err(WarehouseError::Query(format!(
                "could not start the async runtime: {err}"
            ))))
        }
    };
    runtime.block_on(async move {
        let mut warehouse = match Warehouse::open(&connect).await {
            Ok(w) => w,
            Err(err) => return Some(Err(err)),
        };
        let ahead = match read_ahead {
            Some((namespace, list)) => {
                let names = list();
                match warehouse.relations(&namespace, &names).await {
                    Ok(relations) => Some(ReadAhead {
                        namespace,
                        folded: names.iter().map(|n| n.to_lowercase()).collect(),
                        relations,
                    }),
                    Err(err) => return Some(Err(err)),
                }
            }
            None => None,
        };
        let request = requests.recv().ok()?;
        let answer = answer(&mut warehouse, ahead, request).await;
        warehouse.close();
        Some(answer)
    })
}

async fn answer(
    warehouse: &mut Warehouse,
    mut ahead: Option<ReadAhead>,
    request: Request,
) -> Result<Answer, WarehouseError> {
    let mut relations = Vec::with_capacity(request.len());
    for (namespace, names) in request {
        let found = match ahead.take_if(|a| a.namespace == namespace) {
            Some(ahead) => {
                let missing: Vec<String> = names
                    .into_iter()
                    .filter(|n| !ahead.folded.contains(&n.to_lowercase()))
                    .collect();
                let mut found = ahead.relations;
                if !missing.is_empty() {
                    found.extend(warehouse.relations(&namespace, &missing).await?);
                }
                found
            }
            None => warehouse.relations(&namespace, &names).await?,
        };
        relations.push((namespace, found));
    }
    Ok(Answer {
        relations,
        default_database: warehouse.default_database().to_string(),
    })
}

/// The project's one warehouse, either engine.
enum Warehouse {
    Postgres(Box<PgIntrospector>),
    #[cfg(feature = "duckdb")]
    DuckDb(DuckDbIntrospector),
}

impl Warehouse {
    async fn open(connect: &Connect) -> Result<Self, WarehouseError> {
        Ok(match connect.engine {
            Engine::Postgres => {
                let url = connect.url.as_deref().ok_or(WarehouseError::NoUrl)?;
                Warehouse::Postgres(Box::new(PgIntrospector::configure(url, connect.timeouts)?))
            }
            #[cfg(feature = "duckdb")]
            Engine::DuckDb => Warehouse::DuckDb(DuckDbIntrospector::open(&connect.path).await?),
            #[cfg(not(feature = "duckdb"))]
            Engine::DuckDb => return Err(WarehouseError::Unsupported("DuckDB")),
        })
    }

    async fn relations(
        &mut self,
        namespace: &Namespace,
        names: &[String],
    ) -> Result<Vec<PhysicalRelation>, WarehouseError> {
        match self {
            Warehouse::Postgres(w) => w.relations(namespace, names).await,
            #[cfg(feature = "duckdb")]
            Warehouse::DuckDb(w) => w.relations(namespace, names).await,
        }
    }

    fn default_database(&self) -> &str {
        match self {
            Warehouse::Postgres(w) => w.default_database(),
            #[cfg(feature = "duckdb")]
            Warehouse::DuckDb(w) => w.default_database(),
        }
    }

    /// Ends the session. A read-only DuckDB database is not torn down: freeing its catalog
    /// takes a while, writes nothing, and the process is about to exit.
    fn close(self) {
        match self {
            Warehouse::Postgres(w) => drop(w),
            #[cfg(feature = "duckdb")]
            Warehouse::DuckDb(w) => std::mem::forget(w),
        }
    }
}

/// The request for `resources`: their relation names, grouped by namespace.
pub fn request(resources: &[Resource<'_>], target: &Target) -> Request {
    let mut by_namespace: BTreeMap<Namespace, Vec<String>> = BTreeMap::new();
    for r in resources {
        by_namespace
            .entry(namespace_of(r, target))
            .or_default()
            .push(relation_name(r).to_string());
    }
    by_namespace.into_iter().collect()
}

fn namespace_of(resource: &Resource<'_>, target: &Target) -> Namespace {
    let target_db = target.database.as_ref().map(|d| d.value.clone());
    match resource {
        Resource::Model(_) => Namespace {
            database: target_db,
            schema: target
                .schema
                .as_ref()
                .map_or(String::new(), |s| s.value.clone()),
        },
        Resource::Source(s) => Namespace {
            database: s.database.as_ref().map(|d| d.value.clone()).or(target_db),
            schema: s.schema.as_ref().map_or(String::new(), |s| s.value.clone()),
        },
    }
}

/// The relation named `key`: moved out for the last resource that wants it, cloned before.
fn take(
    relations: &mut HashMap<String, PhysicalRelation>,
    wanted: &mut HashMap<&str, usize>,
    key: &str,
) -> Option<PhysicalRelation> {
    let left = wanted.get_mut(key)?;
    *left -= 1;
    match *left {
        0 => relations.remove(key),
        _ => relations.get(key).cloned(),
    }
}

fn relation_name<'p>(resource: &Resource<'p>) -> &'p str {
    match resource {
        Resource::Model(m) => m.relation_name(),
        Resource::Source(s) => s.relation_name(),
    }
}

/// Matches the answer to the selected resources.
pub fn assemble<'p>(
    engine: Engine,
    target: &Target,
    resources: Vec<Resource<'p>>,
    answer: Answer,
) -> Inspection<'p> {
    let mut found: Vec<(Option<PhysicalRelation>, Option<String>)> =
        vec![(None, None); resources.len()];
    let mut indexes_of: BTreeMap<Namespace, Vec<usize>> = BTreeMap::new();
    for (i, r) in resources.iter().enumerate() {
        indexes_of
            .entry(namespace_of(r, target))
            .or_default()
            .push(i);
    }
    for (namespace, relations) in answer.relations {
        let Some(indexes) = indexes_of.get(&namespace) else {
            continue;
        };
        let mut folded: HashMap<String, String> = HashMap::new();
        for r in &relations {
            folded
                .entry(r.name.to_lowercase())
                .or_insert_with(|| r.name.clone());
        }
        // Relations are moved to the resource that wants them, not copied (they are most of a
        // large diff's memory); only a relation wanted twice is cloned.
        let mut exact: HashMap<String, PhysicalRelation> =
            relations.into_iter().map(|r| (r.name.clone(), r)).collect();
        let mut wanted: HashMap<&str, usize> = HashMap::new();
        for &i in indexes {
            let name = relation_name(&resources[i]);
            let key = match exact.contains_key(name) {
                true => name,
                false => folded
                    .get(&name.to_lowercase())
                    .map_or(name, String::as_str),
            };
            *wanted.entry(key).or_default() += 1;
        }
        for &i in indexes {
            let name = relation_name(&resources[i]);
            found[i] = if exact.contains_key(name) {
                (take(&mut exact, &mut wanted, name), None)
            } else {
                match folded.get(&name.to_lowercase()) {
                    // DuckDB resolves identifiers case-insensitively: it is the same relation.
                    Some(actual) if engine == Engine::DuckDb => {
                        (take(&mut exact, &mut wanted, actual), None)
                    }
                    Some(actual) => (None, Some(actual.clone())),
                    None => (None, None),
                }
            };
        }
    }
    let default_db = answer.default_database;
    let database = target
        .database
        .as_ref()
        .map_or_else(|| default_db.clone(), |d| d.value.clone());
    let items = resources
        .into_iter()
        .zip(found)
        .map(|(resource, (physical, case_only))| {
            let ns = namespace_of(&resource, target);
            let db = ns.database.unwrap_or_else(|| default_db.clone());
            let relation = [db.as_str(), ns.schema.as_str(), relation_name(&resource)]
                .map(quote_ident)
                .join(".");
            Inspected {
                resource,
                relation,
                physical,
                case_only,
            }
        })
        .collect();
    Inspection { database, items }
}
