//! Process-wide memory settings, applied once at start-up.

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
