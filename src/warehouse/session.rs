//! The warehouse session: one thread that connects (and, when every resource is selected,
//! already reads the catalog) while the caller loads and compiles the project, then answers one
//! [`Request`].
//!
//! It owns the dispatch between the engines; the Postgres introspector runs on the thread's own
//! async runtime, DuckDB's blocking calls run directly on the thread.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};

#[cfg(feature = "duckdb")]
use super::duckdb::DuckDbIntrospector;
use super::postgres::PgIntrospector;
use super::publish::{PublishError, Transaction, Writer};
use super::waiting::{Held, Waiting};
use super::{Backend, SchemaListing, Timeouts, WarehouseError};
use crate::catalog::{Answer, Described, Namespace, PhysicalRelation, Request};
use crate::engine::Engine;
use crate::rows::{Rows, Statement};

/// How to reach the project's warehouse: everything needed to connect, a plain description the
/// caller builds (`ops::connection` reads it from the project's configuration and
/// `SQB_DATABASE_URL`), owned so that a session can start on its own thread before the rest of
/// the project is loaded.
#[derive(Debug, Clone)]
pub struct Connect {
    engine: Engine,
    /// Postgres: the URL.
    url: Option<String>,
    /// DuckDB: the database file.
    #[cfg_attr(not(feature = "duckdb"), allow(dead_code))]
    path: PathBuf,
    timeouts: Timeouts,
}

impl Connect {
    /// `url` is Postgres's connection URL, `path` DuckDB's database file; Postgres without a
    /// URL is refused.
    pub fn new(
        engine: Engine,
        url: Option<String>,
        path: PathBuf,
        timeouts: Timeouts,
    ) -> Result<Self, WarehouseError> {
        if !engine.in_process() && url.is_none() {
            return Err(WarehouseError::NoUrl);
        }
        Ok(Self {
            engine,
            url,
            path,
            timeouts,
        })
    }

    pub fn engine(&self) -> Engine {
        self.engine
    }

    pub fn timeouts(&self) -> Timeouts {
        self.timeouts
    }
}

/// Lists relation names to read ahead (on the session's thread).
pub type Names = Box<dyn FnOnce() -> Vec<String> + Send>;

/// A warehouse session on its own thread (with its own async runtime). It connects (and may
/// read ahead) while the caller loads and compiles the project, then answers one [`Request`].
/// A caller that stops early just drops it; the thread ends on its own.
pub struct Session {
    requests: Option<mpsc::Sender<(Request, Vec<String>)>>,
    /// Adopted schemas: the answer also lists the schemas of the connection's database
    /// ([`Answer::schemas`]) and reads the relations of these that were not requested
    /// ([`Answer::unrequested`]).
    survey: Vec<String>,
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
    /// The names read ahead, as listed.
    names: foldhash::HashSet<String>,
    relations: Vec<PhysicalRelation>,
}

impl ReadAhead {
    /// The names of `wanted` that were not read ahead (up to case: the read matched names up to
    /// case), each lowered only when it was not read ahead as it is spelled.
    fn missing(&self, wanted: Vec<String>) -> Vec<String> {
        let folded = std::cell::OnceCell::new();
        let folded = || -> &foldhash::HashSet<String> {
            folded.get_or_init(|| self.names.iter().map(|n| n.to_lowercase()).collect())
        };
        wanted
            .into_iter()
            .filter(|n| !self.names.contains(n) && !folded().contains(&n.to_lowercase()))
            .collect()
    }
}

impl Session {
    /// Starts connecting; with `read_ahead`, also reads the names it lists (listed on the
    /// session's thread) in that namespace at once.
    pub fn start(connect: Connect, read_ahead: Option<(Namespace, Names)>) -> Self {
        let engine = connect.engine;
        let (request_tx, request_rx) = mpsc::channel::<(Request, Vec<String>)>();
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
                survey: Vec::new(),
                answers: answer_rx,
                thread: Some(thread),
                engine,
            },
            Err(err) => {
                let (tx, rx) = mpsc::channel();
                let _ = tx.send(Err(WarehouseError::Runtime(format!(
                    "could not start the warehouse thread: {err}"
                ))));
                Self {
                    requests: None,
                    survey: Vec::new(),
                    answers: rx,
                    thread: None,
                    engine,
                }
            }
        }
    }

    /// Has the answer also list every user schema of the connection's database with its
    /// relations' names (one more catalog query), and read the relations of `adopted` schemas
    /// that the request did not name (one more per schema that has any). None when empty.
    pub fn with_survey(mut self, adopted: Vec<String>) -> Self {
        self.survey = adopted;
        self
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
            let _ = requests.send((request, std::mem::take(&mut self.survey)));
        }
    }

    /// Waits for the answer to the request [`Session::send`] sent.
    pub fn answer(mut self) -> Result<Answer, WarehouseError> {
        let answer = self.answers.recv().unwrap_or_else(|_| {
            Err(WarehouseError::Runtime(
                "the warehouse thread stopped".into(),
            ))
        });
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        answer
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // Closing the request channel tells the thread to stop once it is connected. The
        // process must not end while an in-process engine's code runs on that thread.
        self.requests.take();
        if self.engine.in_process() {
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
    requests: &mpsc::Receiver<(Request, Vec<String>)>,
) -> Option<Result<Answer, WarehouseError>> {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(err) => {
            return Some(Err(WarehouseError::Runtime(format!(
                "could not start the async runtime: {err}"
            ))))
        }
    };
    runtime.block_on(async move {
        // The names to read ahead are listed on a thread of their own while the session
        // connects: the read waits for both.
        let listing = read_ahead.map(|(namespace, list)| (namespace, Listing::start(list)));
        let mut warehouse = match open(&connect).await {
            Ok(w) => w,
            Err(err) => return Some(Err(err)),
        };
        if listing.is_some() {
            if let Err(err) = warehouse.connect().await {
                return Some(Err(err));
            }
        }
        let ahead = match listing {
            Some((namespace, listing)) => {
                let names = listing.names();
                match warehouse.relations(&namespace, &names).await {
                    Ok(relations) => Some(ReadAhead {
                        namespace,
                        names: names.into_iter().collect(),
                        relations,
                    }),
                    Err(err) => return Some(Err(err)),
                }
            }
            None => None,
        };
        let (request, survey) = requests.recv().ok()?;
        let answer = answer(&mut warehouse, ahead, request, survey).await;
        warehouse.close();
        Some(answer)
    })
}

/// The read-ahead's names, being listed on a thread of their own (or, when no thread can be
/// started, to be listed when asked for).
enum Listing {
    Started(std::thread::JoinHandle<Vec<String>>),
    Deferred(Names),
}

impl Listing {
    fn start(list: Names) -> Self {
        // Given back when the thread cannot be started: listed when asked for, on this one.
        let slot = std::sync::Arc::new(std::sync::Mutex::new(Some(list)));
        let theirs = std::sync::Arc::clone(&slot);
        let spawned = std::thread::Builder::new()
            .name("list".into())
            .spawn(move || take_names(&theirs).map_or_else(Vec::new, |list| list()));
        match spawned {
            Ok(thread) => Self::Started(thread),
            Err(_) => Self::Deferred(take_names(&slot).unwrap_or_else(|| Box::new(Vec::new))),
        }
    }

    /// The names; none if the listing thread panicked (the request's names are then read
    /// when it comes, as names not read ahead).
    fn names(self) -> Vec<String> {
        match self {
            Self::Started(thread) => thread.join().unwrap_or_default(),
            Self::Deferred(list) => list(),
        }
    }
}

fn take_names(slot: &std::sync::Mutex<Option<Names>>) -> Option<Names> {
    slot.lock().ok().and_then(|mut s| s.take())
}

async fn answer(
    warehouse: &mut Warehouse,
    mut ahead: Option<ReadAhead>,
    request: Request,
    adopted: Vec<String>,
) -> Result<Answer, WarehouseError> {
    let mut relations = Vec::with_capacity(request.len());
    // Only with adopted schemas: a large request's names are not copied for nothing.
    let requested: HashSet<(String, String)> = request
        .iter()
        .filter(|_| !adopted.is_empty())
        .filter(|(namespace, _)| namespace.database.is_none())
        .flat_map(|(namespace, names)| {
            names
                .iter()
                .map(|n| (namespace.schema.clone(), n.to_lowercase()))
        })
        .collect();
    for (namespace, names) in request {
        let found = match ahead.take_if(|a| a.namespace == namespace) {
            Some(ahead) => {
                let missing = ahead.missing(names);
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
    let (schemas, unrequested) = match adopted.is_empty() {
        true => (Vec::new(), Vec::new()),
        false => {
            let schemas = warehouse.survey().await?;
            let unrequested = read_unrequested(warehouse, &schemas, &adopted, &requested).await?;
            (schemas, unrequested)
        }
    };
    Ok(Answer {
        relations,
        schemas,
        unrequested,
        default_database: warehouse.default_database().to_string(),
    })
}

/// The relations of the `adopted` schemas that the request did not name, with their columns.
async fn read_unrequested(
    warehouse: &mut Warehouse,
    schemas: &[SchemaListing],
    adopted: &[String],
    requested: &HashSet<(String, String)>,
) -> Result<Vec<(String, Vec<PhysicalRelation>)>, WarehouseError> {
    let mut out = Vec::new();
    for listing in schemas.iter().filter(|l| adopted.contains(&l.schema)) {
        let names: Vec<String> = listing
            .relations
            .iter()
            .filter(|r| !requested.contains(&(listing.schema.clone(), r.to_lowercase())))
            .cloned()
            .collect();
        if names.is_empty() {
            continue;
        }
        let namespace = Namespace {
            database: None,
            schema: listing.schema.clone(),
        };
        let mut relations = warehouse.relations(&namespace, &names).await?;
        relations.retain(|r| names.contains(&r.name));
        out.push((listing.schema.clone(), relations));
    }
    Ok(out)
}

/// The project's one warehouse: the backend of its engine.
pub(super) type Warehouse = Box<dyn Backend + Send>;

/// Connects to the warehouse `connect` describes: the one place that chooses a backend by
/// engine.
pub(super) async fn open(connect: &Connect) -> Result<Warehouse, WarehouseError> {
    Ok(match connect.engine {
        Engine::Postgres => {
            let url = connect.url.as_deref().ok_or(WarehouseError::NoUrl)?;
            Box::new(PgIntrospector::configure(url, connect.timeouts)?)
        }
        #[cfg(feature = "duckdb")]
        Engine::DuckDb => Box::new(DuckDbIntrospector::open(
            &connect.path,
            connect.timeouts.connect,
            Waiting::default(),
        )?),
        #[cfg(not(feature = "duckdb"))]
        Engine::DuckDb => return Err(WarehouseError::Unsupported("DuckDB")),
    })
}

/// An in-process engine's database being opened on a thread of its own while the caller loads
/// the project, which can take as long as the rest of a short command (DuckDB builds its
/// catalog of functions and its parser's grammar). [`run_opened`] takes it in place of opening
/// the same database again. Dropped untaken, it stops waiting for a lock and closes what it
/// opened: the process never exits while DuckDB's code runs on another thread.
pub struct Opening {
    connect: Connect,
    stop: Arc<AtomicBool>,
    held: Arc<Held>,
    thread: Option<std::thread::JoinHandle<Result<Warehouse, WarehouseError>>>,
}

impl Opening {
    /// Starts opening `connect`'s database; `None` for an engine with a server, whose
    /// session connects when asked, or when no thread can be started.
    pub fn start(connect: &Connect) -> Option<Opening> {
        if !connect.engine.in_process() {
            return None;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let held = Arc::new(Held::default());
        let thread = std::thread::Builder::new()
            .name("sqb-open".into())
            .spawn({
                let (connect, stop, held) = (connect.clone(), stop.clone(), held.clone());
                move || {
                    let waiting = Waiting {
                        stop: Some(&stop),
                        held: Some(&held),
                    };
                    open_in_process(&connect, waiting)
                }
            })
            .ok()?;
        Some(Opening {
            connect: connect.clone(),
            stop,
            held,
            thread: Some(thread),
        })
    }

    /// Whether it opens what `connect` describes.
    fn opens(&self, connect: &Connect) -> bool {
        self.connect.engine == connect.engine && self.connect.path == connect.path
    }

    /// Waits for the database: what opening it here would have given.
    fn finish(mut self) -> Result<Warehouse, WarehouseError> {
        self.held.release();
        match self.thread.take().map(std::thread::JoinHandle::join) {
            Some(Ok(opened)) => opened,
            _ => Err(WarehouseError::Runtime(
                "the thread opening the database stopped".into(),
            )),
        }
    }
}

impl Drop for Opening {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(Ok(Ok(warehouse))) = self.thread.take().map(std::thread::JoinHandle::join) {
            warehouse.close();
        }
    }
}

/// Opens an in-process engine's database, waiting for a lock as `waiting` says.
fn open_in_process(connect: &Connect, waiting: Waiting) -> Result<Warehouse, WarehouseError> {
    match connect.engine {
        #[cfg(feature = "duckdb")]
        Engine::DuckDb => Ok(Box::new(DuckDbIntrospector::open(
            &connect.path,
            connect.timeouts.connect,
            waiting,
        )?)),
        #[cfg(not(feature = "duckdb"))]
        Engine::DuckDb => {
            let _ = waiting;
            Err(WarehouseError::Unsupported("DuckDB"))
        }
        Engine::Postgres => Err(WarehouseError::Runtime(
            "Postgres is not opened in process".into(),
        )),
    }
}

/// `sqb promote`'s writer: a transaction begun on the warehouse `connect` describes (read-only
/// for a dry run; Postgres waits at most `lock_timeout` for each lock, DuckDB holds the whole
/// file while the writer lives). The one place that chooses a writer by engine.
pub fn writer(
    connect: &Connect,
    lock_timeout: std::time::Duration,
    dry_run: bool,
) -> Result<Writer, PublishError> {
    let tx: Box<dyn Transaction> = match connect.engine {
        Engine::Postgres => Box::new(super::publish::postgres::PgTransaction::begin(
            connect.url.as_deref().ok_or(WarehouseError::NoUrl)?,
            connect.timeouts,
            lock_timeout,
            dry_run,
        )?),
        #[cfg(feature = "duckdb")]
        Engine::DuckDb => Box::new(super::publish::duckdb::DuckTransaction::begin(
            &connect.path,
            connect.timeouts,
            dry_run,
        )?),
        #[cfg(not(feature = "duckdb"))]
        Engine::DuckDb => return Err(WarehouseError::Unsupported("DuckDB").into()),
    };
    Ok(Writer::new(tx, connect.engine))
}

/// Tears the DuckDB databases of ended sessions down on a thread of their own
/// ([`crate::memory::free_in_background`]): for a command that goes on to reload and recompile
/// the project, so that DuckDB's catalog is not held beside it. `wait_for_frees` joins it.
pub fn free_parked() {
    #[cfg(feature = "duckdb")]
    super::duckdb::free_parked();
}

/// What [`survey`] found: every user schema with its relations' names, and the relations (with
/// their columns) of the schemas it was asked to read.
#[derive(Debug)]
pub struct Survey {
    pub schemas: Vec<SchemaListing>,
    pub read: Vec<(String, Vec<PhysicalRelation>)>,
}

/// Lists the user schemas of the connection's database and reads every relation of those that
/// `wanted` names (all of them when it is `None`; a wanted schema that does not exist is left
/// for the caller to report), one catalog query per schema, on one read-only connection.
pub fn survey(connect: Connect, wanted: Option<Vec<String>>) -> Result<Survey, WarehouseError> {
    on_own_thread(move || async move {
        let mut warehouse = open(&connect).await?;
        let schemas = warehouse.survey().await?;
        let mut read = Vec::new();
        for listing in &schemas {
            let chosen = wanted.as_ref().is_none_or(|w| w.contains(&listing.schema));
            if !chosen || listing.relations.is_empty() {
                continue;
            }
            let namespace = Namespace {
                database: None,
                schema: listing.schema.clone(),
            };
            let mut relations = warehouse.relations(&namespace, &listing.relations).await?;
            // Names match up to case: a relation is kept only under its exact name.
            relations.retain(|r| listing.relations.contains(&r.name));
            relations.sort_by(|a, b| a.name.cmp(&b.name));
            read.push((listing.schema.clone(), relations));
        }
        warehouse.close();
        Ok(Survey { schemas, read })
    })
}

/// Describes `queries` without running them, in order, on up to `workers` read-only
/// connections at once (an in-process engine: one database, bound on `workers` threads). A query the engine
/// rejects gets its refusal; a connection that fails fails the call. With the connection's
/// own database.
pub fn describe(
    connect: Connect,
    database: Option<String>,
    queries: Vec<String>,
    workers: usize,
) -> Result<(String, Vec<Described>), WarehouseError> {
    on_own_thread(move || async move {
        // An in-process engine gets one connection that binds on threads of its own.
        let (sessions, threads) = match connect.engine.in_process() {
            true => (1, workers),
            false => (workers.clamp(1, queries.len().max(1)), 1),
        };
        let size = queries.len().div_ceil(sessions).max(1);
        let jobs = queries.chunks(size).map(|part| {
            let (connect, database) = (&connect, database.as_deref());
            async move {
                let mut warehouse = open(connect).await?;
                let described = warehouse
                    .describe(database, part, connect.timeouts, threads)
                    .await;
                let default = warehouse.default_database().to_string();
                warehouse.close();
                described.map(|d| (default, d))
            }
        });
        let mut out = Vec::with_capacity(queries.len());
        let mut default = String::new();
        for answer in futures_util::future::join_all(jobs).await {
            let (database, described) = answer?;
            default = database;
            out.extend(described);
        }
        Ok((default, out))
    })
}

/// Runs `work` on a thread of its own with a current-thread async runtime, and waits for it.
fn on_own_thread<T, F, Fut>(work: F) -> Result<T, WarehouseError>
where
    T: Send + 'static,
    F: FnOnce() -> Fut + Send + 'static,
    Fut: std::future::Future<Output = Result<T, WarehouseError>>,
{
    let spawned = std::thread::Builder::new()
        .name("warehouse".into())
        .spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| {
                    WarehouseError::Runtime(format!("could not start the async runtime: {e}"))
                })?;
            runtime.block_on(work())
        });
    match spawned {
        Ok(thread) => thread.join().unwrap_or_else(|_| {
            Err(WarehouseError::Runtime(
                "the warehouse thread stopped".into(),
            ))
        }),
        Err(e) => Err(WarehouseError::Runtime(format!(
            "could not start the warehouse thread: {e}"
        ))),
    }
}

/// Each statement's own answer, and the connection's own database.
pub struct Ran {
    pub default_database: String,
    pub answers: Vec<Result<Rows, WarehouseError>>,
}

/// Runs `statements` on read-only connections (to `database`, else the connection's own), on up
/// to `workers` at once (Postgres: sessions; DuckDB: connections to the one open file, each on
/// a thread of its own), on a thread of its own: each its own result in order, so that one
/// failing statement does not hide the others' answers. Connecting failing fails them all.
pub fn run(
    connect: Connect,
    database: Option<String>,
    statements: Vec<Statement>,
    workers: usize,
) -> Result<Ran, WarehouseError> {
    run_opened(connect, None, database, statements, workers)
}

/// [`run`], whose first connection is `opening`'s database when it opened the same one.
pub fn run_opened(
    connect: Connect,
    opening: Option<Opening>,
    database: Option<String>,
    statements: Vec<Statement>,
    workers: usize,
) -> Result<Ran, WarehouseError> {
    let opening = Mutex::new(opening.filter(|o| o.opens(&connect)));
    on_own_thread(move || async move {
        let connect_to = |connect| {
            let taken = opening.lock().ok().and_then(|mut o| o.take());
            async move {
                match taken {
                    Some(opening) => opening.finish(),
                    None => open(connect).await,
                }
            }
        };
        // As `describe`: an in-process engine gets one database that runs on threads of its
        // own; a server gets sessions of its own, each running a contiguous part in order.
        let (sessions, threads) = match connect.engine.in_process() {
            true => (1, workers),
            false => (workers.clamp(1, statements.len().div_ceil(8).max(1)), 1),
        };
        let size = statements.len().div_ceil(sessions).max(1);
        let jobs = statements.chunks(size).map(|part| {
            let (connect, database) = (&connect, database.as_deref());
            let connect_to = &connect_to;
            async move {
                let mut warehouse = connect_to(connect).await?;
                let answers = warehouse
                    .run_all(database, part, connect.timeouts, threads)
                    .await;
                let default = warehouse.default_database().to_string();
                warehouse.close();
                answers.map(|a| (default, a))
            }
        });
        let mut ran = Ran {
            default_database: String::new(),
            answers: Vec::with_capacity(statements.len()),
        };
        if statements.is_empty() {
            // Still connect: a caller with nothing to run learns the connection's database,
            // and that the warehouse answers.
            let warehouse = connect_to(&connect).await?;
            ran.default_database = warehouse.default_database().to_string();
            warehouse.close();
        }
        for answer in futures_util::future::join_all(jobs).await {
            let (database, answers) = answer?;
            ran.default_database = database;
            ran.answers.extend(answers);
        }
        Ok(ran)
    })
}
