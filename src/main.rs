//! The `sqb` binary: parse arguments, dispatch to a command, exit with its status.

use std::process::ExitCode;

use clap::Parser;
use sqb::cli::Cli;

// Compiling a project allocates many small strings (SQL tokens, TOML keys) from two threads;
// mimalloc is markedly faster at that than the system allocator (docs/performance.md). With
// libmimalloc-sys's `override` feature the embedded DuckDB allocates from it too.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    sqb::memory::no_huge_pages();
    sqb::memory::return_freed_memory();
    sqb::redact::register_environment();
    let cli = Cli::parse();
    sqb::commands::set_color(cli.global.color);
    sqb::logging::init(cli.global.verbose, sqb::commands::stderr_color());
    sqb::interrupt::install();
    let status = sqb::commands::run(&cli);
    // Caches the command left to be written while it went on, and what it left to be freed
    // (a DuckDB database among them: the process must not exit while DuckDB's code runs).
    sqb::cache_dir::wait_for_writes();
    sqb::memory::wait_for_frees();
    status.into()
}
