use std::process::ExitCode;

use clap::Parser;
use server::cli::{self, Cli, Command, process};

/// A hot request allocates a few hundred small strings and vectors, and in
/// glibc's malloc and free they took a tenth of its CPU; mimalloc's
/// thread-local free lists take less (server/docs/benchmarks.md, "Probing
/// without a hand-off").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse_from(cli::with_default_command(std::env::args_os().collect()));
    let serves = matches!(cli.command, Command::Serve(_));
    process::run("zugzwang", serves, |inherited| {
        cli::run(cli.command, inherited)
    })
}
