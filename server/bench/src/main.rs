use std::process::ExitCode;

use bench::cli::{self, Cli, Command};
use clap::Parser;
use server::cli::process;

/// The allocator `zugzwang` runs with: `serve` here must measure the same
/// server (server/docs/benchmarks.md, "Probing without a hand-off").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let serves = matches!(cli.command, Command::Serve(_));
    process::run("zugzwang-bench", serves, |inherited| {
        cli::run(cli.command, inherited)
    })
}
