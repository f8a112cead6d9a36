//! A bounded pool of read-only warehouse sessions for a process that lives on: `sqb serve`.
//! A command opens a session, runs, and ends; a server keeps up to `size` sessions open
//! (Postgres: connections, read-only with the statement timeout; DuckDB: connections to one
//! database opened read-only) and hands each statement batch to an idle one.
//!
//! A session whose statements failed is dropped, never handed out again. An idle session that
//! died (a restarted server, a terminated backend) is found out when its next run fails and it
//! does not answer a ping: the read-only statements then run again, once, on a fresh session,
//! so that no request pays for it.

use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Instant;

use super::session::{open, Connect, Warehouse};
use super::WarehouseError;
use crate::rows::{Rows, Statement};

pub struct Pool {
    connect: Connect,
    size: usize,
    /// The runtime whose I/O driver the sessions' sockets are registered with.
    handle: tokio::runtime::Handle,
    members: Mutex<Members>,
    freed: Condvar,
    /// The first session opened: an in-process engine's database, which the others are forks
    /// of. Held apart so that it is opened once.
    origin: Mutex<Option<Warehouse>>,
}

#[derive(Default)]
struct Members {
    idle: Vec<Warehouse>,
    busy: usize,
    /// Sessions opened since the pool began: more than its size means some were replaced.
    opened: u64,
    /// Statement batches run, and the time they took in the warehouse.
    runs: u64,
    run_seconds: f64,
}

/// How the pool is used right now, for the server's metrics.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Usage {
    pub size: usize,
    pub busy: usize,
    pub idle: usize,
    pub opened: u64,
    pub runs: u64,
    /// Time spent in the warehouse, all runs together.
    pub run_seconds: f64,
}

impl Pool {
    /// A pool of up to `size` sessions (at least one) on the warehouse `connect` describes;
    /// nothing connects until the first statement. `handle` is the runtime the sessions'
    /// I/O runs on; [`Pool::run`] is called from that runtime's blocking threads.
    pub fn new(connect: Connect, size: usize, handle: tokio::runtime::Handle) -> Self {
        Self {
            connect,
            size: size.max(1),
            handle,
            members: Mutex::default(),
            freed: Condvar::new(),
            origin: Mutex::default(),
        }
    }

    pub fn usage(&self) -> Usage {
        let members = self.lock();
        Usage {
            size: self.size,
            busy: members.busy,
            idle: members.idle.len(),
            opened: members.opened,
            runs: members.runs,
            run_seconds: members.run_seconds,
        }
    }

    /// Runs `statements` in order on one session (to `database`, else the connection's own),
    /// each its own answer. Waits up to the connect timeout for a session to be free; a
    /// session that cannot be opened fails the call.
    pub fn run(
        &self,
        database: Option<&str>,
        statements: &[Statement],
    ) -> Result<Vec<Result<Rows, WarehouseError>>, WarehouseError> {
        let mut lease = self.lease()?;
        let reused = lease.reused.take();
        let was_idle = reused.is_some();
        let mut warehouse = match reused {
            Some(warehouse) => warehouse,
            None => self.fresh()?,
        };
        let mut answers = self.run_on(&mut warehouse, database, statements);
        // A session that died while idle (the server restarted, the backend was terminated)
        // fails its next statement: the statements are read-only, so they run again, once, on
        // a fresh session.
        if was_idle && !succeeded(&answers) && !self.alive(&mut warehouse) {
            warehouse = self.fresh()?;
            answers = self.run_on(&mut warehouse, database, statements);
        }
        if succeeded(&answers) {
            self.lock().idle.push(warehouse);
        }
        drop(lease);
        answers
    }

    fn run_on(
        &self,
        warehouse: &mut Warehouse,
        database: Option<&str>,
        statements: &[Statement],
    ) -> Result<Vec<Result<Rows, WarehouseError>>, WarehouseError> {
        let started = Instant::now();
        let timeouts = self.connect.timeouts();
        let answers = self
            .handle
            .block_on(warehouse.run_all(database, statements, timeouts, 1));
        let mut members = self.lock();
        members.runs += 1;
        members.run_seconds += started.elapsed().as_secs_f64();
        answers
    }

    fn alive(&self, warehouse: &mut Warehouse) -> bool {
        self.handle.block_on(warehouse.alive()).unwrap_or(false)
    }

    fn lock(&self) -> MutexGuard<'_, Members> {
        self.members.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A place in the pool: an idle session, or room for a new one.
    fn lease(&self) -> Result<Lease<'_>, WarehouseError> {
        let wait = self.connect.timeouts().connect;
        let deadline = Instant::now() + wait;
        let mut members = self.lock();
        loop {
            if let Some(idle) = members.idle.pop() {
                members.busy += 1;
                return Ok(Lease {
                    pool: self,
                    reused: Some(idle),
                });
            }
            if members.busy < self.size {
                members.busy += 1;
                return Ok(Lease {
                    pool: self,
                    reused: None,
                });
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(WarehouseError::Runtime(format!(
                    "all {} connections of the pool stayed busy for {}s",
                    self.size,
                    wait.as_secs().max(1)
                )));
            }
            members = self
                .freed
                .wait_timeout(members, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// A new session: a fork of the origin where the engine has one, else a session of its own.
    fn fresh(&self) -> Result<Warehouse, WarehouseError> {
        self.lock().opened += 1;
        let mut origin = self.origin.lock().unwrap_or_else(|p| p.into_inner());
        if origin.is_none() {
            *origin = Some(self.handle.block_on(open(&self.connect))?);
        }
        match origin.as_ref().and_then(|o| o.fork()) {
            Some(fork) => fork,
            None => {
                drop(origin);
                self.handle.block_on(open(&self.connect))
            }
        }
    }
}

impl Drop for Pool {
    /// An in-process database takes a while to tear down: on a thread of its own.
    fn drop(&mut self) {
        let idle = std::mem::take(&mut self.lock().idle);
        let origin = self.origin.lock().unwrap_or_else(|p| p.into_inner()).take();
        crate::memory::free_in_background((idle, origin));
    }
}

/// A session's place, given back (and a waiter woken) when the run ends, however it ends.
struct Lease<'p> {
    pool: &'p Pool,
    reused: Option<Warehouse>,
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        self.pool.lock().busy -= 1;
        self.pool.freed.notify_one();
    }
}

fn succeeded(answers: &Result<Vec<Result<Rows, WarehouseError>>, WarehouseError>) -> bool {
    matches!(answers, Ok(all) if all.iter().all(Result::is_ok))
}
