//! Splitting CPU-bound work over the machine's cores, keeping the input order.
//!
//! Work runs on one rayon pool whose threads have large stacks: parsing and analysing deeply
//! nested SQL recurses far deeper than the 2 MiB default stack of a spawned thread allows.
//! [`Pending`] keeps the threads left to finish work while the command goes on.

use std::sync::OnceLock;

use rayon::prelude::*;

/// Stack size of the worker threads: as much as the main thread gets on Linux, and more.
pub const STACK_BYTES: usize = 16 * 1024 * 1024;

/// Threads left to finish their work while the command goes on (freeing, writing caches),
/// joined where their work must be done.
#[derive(Default)]
pub struct Pending(std::sync::Mutex<Vec<(&'static str, std::thread::JoinHandle<()>)>>);

impl Pending {
    pub const fn new() -> Self {
        Self(std::sync::Mutex::new(Vec::new()))
    }

    /// Starts `work` on a thread named `name`, by which [`Pending::join`] knows it; `Err` gives
    /// `work` back when no thread can be started.
    pub fn spawn<F: FnOnce() + Send + 'static>(
        &self,
        name: &'static str,
        work: F,
    ) -> Result<(), F> {
        let slot = std::sync::Arc::new(std::sync::Mutex::new(Some(work)));
        let theirs = std::sync::Arc::clone(&slot);
        let spawned = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || take(&theirs).map_or((), |work| work()));
        match spawned {
            Ok(handle) => {
                if let Ok(mut pending) = self.0.lock() {
                    pending.push((name, handle));
                }
                Ok(())
            }
            Err(_) => take(&slot).map_or(Ok(()), Err),
        }
    }

    /// Waits for every thread started so far.
    pub fn join_all(&self) {
        let handles = self
            .0
            .lock()
            .map(|mut p| std::mem::take(&mut *p))
            .unwrap_or_default();
        for (_, handle) in handles {
            let _ = handle.join();
        }
    }

    /// Waits for the threads started so far under `name`, and for no other.
    pub fn join(&self, name: &str) {
        let handles: Vec<_> = self
            .0
            .lock()
            .map(|mut p| {
                let (named, others) = std::mem::take(&mut *p)
                    .into_iter()
                    .partition(|(n, _)| *n == name);
                *p = others;
                named
            })
            .unwrap_or_default();
        for (_, handle) in handles {
            let _ = handle.join();
        }
    }
}

fn take<F>(slot: &std::sync::Mutex<Option<F>>) -> Option<F> {
    slot.lock().ok().and_then(|mut s| s.take())
}

fn pool() -> &'static rayon::ThreadPool {
    static POOL: OnceLock<rayon::ThreadPool> = OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .stack_size(STACK_BYTES)
            .thread_name(|i| format!("sqb-worker-{i}"))
            .build()
            .or_else(|_| rayon::ThreadPoolBuilder::new().build())
            .expect("a thread pool can be built")
    })
}

/// `f` over `items` on every available core, results in input order.
pub fn map<I: Sync, T: Send>(items: &[I], f: impl Fn(&I) -> T + Sync + Send) -> Vec<T> {
    pool().install(|| items.par_iter().map(f).collect())
}

/// `f` on each of `items`, in place, on every available core.
pub fn for_each_mut<I: Send>(items: &mut [I], f: impl Fn(&mut I) + Sync + Send) {
    pool().install(|| items.par_iter_mut().for_each(f))
}

#[cfg(test)]
mod tests {
    #[test]
    fn keeps_order() {
        let items: Vec<usize> = (0..1000).collect();
        assert_eq!(
            super::map(&items, |i| i * 2),
            items.iter().map(|i| i * 2).collect::<Vec<_>>()
        );
    }

    /// Joining one name leaves the others running: a thread that waits for the joiner to go on
    /// is told to go on only once `join` has returned.
    #[test]
    fn joining_a_name_waits_for_that_name_only() {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::{mpsc, Arc};
        use std::time::Duration;
        let pending = super::Pending::new();
        let (go_on, told) = mpsc::channel::<()>();
        let other_was_told = Arc::new(AtomicBool::new(false));
        let seen = Arc::clone(&other_was_told);
        let waiting = move || {
            let told = told.recv_timeout(Duration::from_secs(10)).is_ok();
            seen.store(told, Ordering::SeqCst);
        };
        assert!(pending.spawn("other", waiting).is_ok());
        let done = Arc::new(AtomicBool::new(false));
        let finished = Arc::clone(&done);
        let quick = move || finished.store(true, Ordering::SeqCst);
        assert!(pending.spawn("this", quick).is_ok());
        pending.join("this");
        assert!(done.load(Ordering::SeqCst));
        go_on.send(()).unwrap();
        pending.join_all();
        assert!(other_was_told.load(Ordering::SeqCst));
    }
}
