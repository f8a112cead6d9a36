//! The warehouse session: one thread that connects (and, when every resource is selected,
//! already reads the catalog) while the caller loads and compiles the project, then answers one
//! [`Request`].
//!
//! It owns the dispatch between the engines; the Postgres introspector runs on the thread's own
//! async runtime, DuckDB's blocking calls run directly on the thread.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::mpsc;

#[cfg(feature = "duckdb")]
use super::duckdb::DuckDbIntrospector;
use super::postgres::PgIntrospector;
use super::{Backend, Timeouts, WarehouseError};
use crate::catalog::{Answer, Namespace, PhysicalRelation, Request};
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
}

/// Lists relation names to read ahead (on the session's thread).
pub type Names = Box<dyn FnOnce() -> Vec<String> + Send>;

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
                let _ = tx.send(Err(WarehouseError::Runtime(format!(
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
    requests: &mpsc::Receiver<Request>,
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
        let mut warehouse = match open(&connect).await {
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

/// The project's one warehouse: the backend of its engine.
type Warehouse = Box<dyn Backend>;

/// Connects to the warehouse `connect` describes: the one place that chooses a backend by
/// engine.
async fn open(connect: &Connect) -> Result<Warehouse, WarehouseError> {
    Ok(match connect.engine {
        Engine::Postgres => {
            let url = connect.url.as_deref().ok_or(WarehouseError::NoUrl)?;
            Box::new(PgIntrospector::configure(url, connect.timeouts)?)
        }
        #[cfg(feature = "duckdb")]
        Engine::DuckDb => Box::new(DuckDbIntrospector::open(&connect.path)?),
        #[cfg(not(feature = "duckdb"))]
        Engine::DuckDb => return Err(WarehouseError::Unsupported("DuckDB")),
    })
}

/// Tears the DuckDB databases of ended sessions down on a thread of their own
/// ([`crate::memory::free_in_background`]): for a command that goes on to reload and recompile
/// the project, so that DuckDB's catalog is not held beside it. `wait_for_frees` joins it.
pub fn free_parked() {
    #[cfg(feature = "duckdb")]
    super::duckdb::free_parked();
}

/// Runs `statements` one after another on one read-only connection (to `database`, else the
/// connection's own), on a thread of its own: each its own result, so that one failing
/// statement does not hide the others' answers. Connecting failing fails them all.
pub fn run(
    connect: Connect,
    database: Option<String>,
    statements: Vec<Statement>,
) -> Result<Vec<Result<Rows, WarehouseError>>, WarehouseError> {
    let spawned = std::thread::Builder::new()
        .name("warehouse".into())
        .spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| {
                    WarehouseError::Runtime(format!("could not start the async runtime: {e}"))
                })?;
            runtime.block_on(async move {
                let mut warehouse = open(&connect).await?;
                let mut results = Vec::with_capacity(statements.len());
                for statement in &statements {
                    results.push(
                        warehouse
                            .run(database.as_deref(), statement, connect.timeouts)
                            .await,
                    );
                }
                warehouse.close();
                Ok(results)
            })
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
