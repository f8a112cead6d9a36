//! Ctrl-C (SIGINT) and SIGTERM: every command stops at once with exit status 130 or 143 and
//! leaves no half-written file behind.
//!
//! [`install`] starts a thread that waits for either signal. Atomic writes register their temp
//! file while it exists ([`TempGuard`]); on a signal the thread removes those, says so on stderr
//! and exits. A `contract generate --write` transaction handles signals itself (it restores
//! every file first): while a [`Deferral`] is alive the thread leaves the signal to it, and the
//! transaction polls [`Deferral::received`]. This module is the only one that registers signal
//! handlers.
//!
//! [`fault`] is the fault injection the crash and signal tests use (`SQB_FAULT_AFTER`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use signal_hook::consts::{SIGINT, SIGTERM};

/// The environment variable naming a step at which to simulate a crash or a signal.
pub const FAULT_ENV: &str = "SQB_FAULT_AFTER";

/// Temp files in flight, by a number of their own: thousands may be in flight during a large
/// write, so unregistering one must not scan the others.
static TEMP_FILES: Mutex<TempFiles> = Mutex::new(TempFiles {
    next: 0,
    paths: std::collections::BTreeMap::new(),
});
static DEFERRALS: AtomicUsize = AtomicUsize::new(0);
/// Set once a deferring caller has seen a signal: it restores, reports and exits itself, so the
/// signal thread must not act on that signal once the deferral ends (it could otherwise exit
/// first, with its own message, while the caller was reporting).
static TAKEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
/// The number of the last SIGINT or SIGTERM, set by the signal handler itself (so that a
/// deferring caller sees it as soon as `raise` returns); 0 before any.
static RECEIVED: OnceLock<Arc<AtomicUsize>> = OnceLock::new();

fn received_flag() -> &'static Arc<AtomicUsize> {
    RECEIVED.get_or_init(|| Arc::new(AtomicUsize::new(0)))
}

struct TempFiles {
    next: u64,
    paths: std::collections::BTreeMap<u64, PathBuf>,
}

fn temp_files() -> MutexGuard<'static, TempFiles> {
    TEMP_FILES.lock().unwrap_or_else(|e| e.into_inner())
}

/// The exit status of a process stopped by `signal`, as shells report it (128 + number).
pub fn exit_code(signal: i32) -> u8 {
    u8::try_from(128 + signal).unwrap_or(130)
}

/// The signal's name for messages.
pub fn name(signal: i32) -> &'static str {
    match signal {
        SIGINT => "SIGINT",
        SIGTERM => "SIGTERM",
        _ => "a signal",
    }
}

/// Counts SIGHUPs from now on: for a long-running command (`sqb serve`) that reloads on one.
/// Registered only when asked for, so that every other command keeps SIGHUP's default.
pub fn hangups() -> Arc<AtomicUsize> {
    static HANGUPS: OnceLock<Arc<AtomicUsize>> = OnceLock::new();
    Arc::clone(HANGUPS.get_or_init(|| {
        let count = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&count);
        // SAFETY: the handler only increments an atomic, which is async-signal-safe.
        let registered = unsafe {
            signal_hook::low_level::register(signal_hook::consts::SIGHUP, move || {
                counted.fetch_add(1, Ordering::SeqCst);
            })
        };
        if let Err(err) = registered {
            tracing::debug!("SIGHUP not registered: {err}");
        }
        count
    }))
}

/// Starts the signal thread. Without it (e.g. when signals cannot be registered), the default
/// disposition applies: the process dies, and atomic writes still never leave a partial file
/// at the destination, only possibly a `.sqb-tmp-*` file beside it.
pub fn install() {
    for signal in [SIGINT, SIGTERM] {
        let number = usize::try_from(signal).expect("signal numbers are small");
        if let Err(err) =
            signal_hook::flag::register_usize(signal, Arc::clone(received_flag()), number)
        {
            tracing::debug!("signal flag not registered: {err}");
        }
    }
    let mut signals = match signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) {
        Ok(signals) => signals,
        Err(err) => {
            tracing::debug!("signal handling not installed: {err}");
            return;
        }
    };
    let spawned = std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            for signal in signals.forever() {
                if DEFERRALS.load(Ordering::SeqCst) > 0 || TAKEN.load(Ordering::SeqCst) {
                    continue;
                }
                stop(signal);
            }
        });
    if let Err(err) = spawned {
        tracing::debug!("signal thread not started: {err}");
    }
}

fn stop(signal: i32) -> ! {
    // Holding the lock until exit also keeps a writer from registering a new temp file.
    let files = temp_files();
    for path in files.paths.values() {
        // A staging directory (`sqb import dbt`) is registered like a temp file.
        if std::fs::remove_file(path).is_err() {
            let _ = std::fs::remove_dir_all(path);
        }
    }
    crate::message::eprint(
        crate::message::Level::Error,
        &format!(
            "interrupted by {}; no report or file was left half-written",
            name(signal)
        ),
    );
    let _ = std::io::Write::flush(&mut std::io::stderr());
    // `_exit`, not `exit`: other threads may be inside DuckDB's C++ code, whose static
    // destructors `exit` would run under them. Nothing is left to flush or finish.
    // SAFETY: `_exit` only ends the process; it is async-signal-safe and takes no pointers.
    unsafe { libc::_exit(i32::from(exit_code(signal))) }
}

/// A temp file registered for removal on a signal; unregistered when dropped.
pub struct TempGuard(u64);

/// Creates a temp file with `create` and registers its path (`path_of`) in one step, so that
/// a signal can never fall between the two.
pub fn create_tracked<T>(
    create: impl FnOnce() -> std::io::Result<T>,
    path_of: impl FnOnce(&T) -> &Path,
) -> std::io::Result<(T, TempGuard)> {
    let mut files = temp_files();
    let made = create()?;
    let id = files.next;
    files.next += 1;
    files.paths.insert(id, path_of(&made).to_path_buf());
    Ok((made, TempGuard(id)))
}

impl Drop for TempGuard {
    fn drop(&mut self) {
        temp_files().paths.remove(&self.0);
    }
}

/// While alive, signals are left to the code that holds it, which polls [`Deferral::received`]
/// and handles them itself.
pub struct Deferral(());

impl Deferral {
    /// The SIGINT or SIGTERM that arrived, if one did. Seeing it makes it the caller's to
    /// handle: it must stop and report the interruption itself.
    pub fn received(&self) -> Option<i32> {
        match received_flag().load(Ordering::SeqCst) {
            0 => None,
            n => {
                TAKEN.store(true, Ordering::SeqCst);
                i32::try_from(n).ok()
            }
        }
    }
}

pub fn defer() -> Deferral {
    DEFERRALS.fetch_add(1, Ordering::SeqCst);
    Deferral(())
}

impl Drop for Deferral {
    fn drop(&mut self) {
        DEFERRALS.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Fault injection for the crash and signal tests: `SQB_FAULT_AFTER=STEP` aborts the process at
/// STEP, as a SIGKILL or power loss would; `sigint:STEP` and `sigterm:STEP` send the process
/// that signal there, as Ctrl-C or a service manager would, and then give the handler time to
/// act, as a slow disk would.
pub fn fault(step: &str) {
    let Ok(wanted) = std::env::var(FAULT_ENV) else {
        return;
    };
    if wanted == step {
        std::process::abort();
    }
    let signal = match wanted.split_once(':') {
        Some(("sigint", at)) if at == step => SIGINT,
        Some(("sigterm", at)) if at == step => SIGTERM,
        _ => return,
    };
    let _ = signal_hook::low_level::raise(signal);
    if DEFERRALS.load(Ordering::SeqCst) == 0 {
        std::thread::sleep(std::time::Duration::from_secs(5));
    }
}
