//! Process-wide memory policy: transparent huge pages off, and the two deliberate ways large
//! values are let go of (freed on another thread, or left to the process's exit).
//!
//! A loaded 10,000-model project is a few hundred thousand allocations; freeing it piece by piece
//! takes longer than the work that follows it. Every such shortcut is taken here, by name.

/// Turns transparent huge pages off for this process (Linux).
///
/// The allocator asks for huge pages on its arenas; each one then counts 2 MiB of resident
/// memory however little of it is used, which put a 10,000-relation diff 40 MB over its memory
/// budget for a few percent of speed (docs/performance.md).
pub fn no_huge_pages() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE takes plain integer arguments and only sets a process flag.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

/// How long, in milliseconds, memory the allocator has freed may stay with the process before it
/// is returned to the system.
const PURGE_DELAY_MS: std::ffi::c_long = 3;

/// Has the allocator return freed memory to the system within a few milliseconds.
///
/// mimalloc 3 keeps freed pages for a second (ten for whole arenas) in case they are asked for
/// again: longer than most commands run, so everything a command ever freed counted in its peak
/// memory (a cold 10,000-model diff: 24 MiB; see docs/performance.md). A few milliseconds cost
/// no measurable time. `MIMALLOC_PURGE_DELAY`, when set, still decides.
pub fn return_freed_memory() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
        return;
    }
    // SAFETY: mi_option_set takes plain integers and only stores the value; the option number
    // is read from the header of the mimalloc that is linked (build.rs).
    unsafe { mi_option_set(PURGE_DELAY_OPTION, PURGE_DELAY_MS) }
}

/// mimalloc's `mi_option_purge_delay`.
const PURGE_DELAY_OPTION: std::ffi::c_int =
    match u8::from_str_radix(env!("SQB_MI_OPTION_PURGE_DELAY"), 10) {
        Ok(n) => n as std::ffi::c_int,
        Err(_) => panic!("SQB_MI_OPTION_PURGE_DELAY is a number"),
    };

extern "C" {
    fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
}

/// Frees `value` on a thread of its own, so that the caller goes on at once (e.g. writes files
/// while a project it no longer needs is freed). Freed on the caller's thread if no thread can be
/// started.
pub fn free_in_background<T: Send + 'static>(value: T) {
    // When no thread can be started, the value is dropped right here.
    let _ = FREEING.spawn("free", move || drop(value));
}

static FREEING: crate::parallel::Pending = crate::parallel::Pending::new();

/// Waits until what [`free_in_background`] was given is freed: before building something as
/// large, so that the two are not held at once, and before the process exits (a DuckDB
/// database may be among it).
pub fn wait_for_frees() {
    FREEING.join_all();
}

/// Leaves `value` for the process's exit to reclaim: for what is needed until the command ends
/// and would only cost time to free (a project just before exit, a read-only DuckDB database
/// whose catalog takes a while to tear down and writes nothing).
pub fn leave_to_exit<T>(value: T) {
    std::mem::forget(value);
}
