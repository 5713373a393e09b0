use std::{process::ExitCode, time::Duration};

use bench::cli::{self, Cli, Command};
use clap::Parser;
use server::service::listener;

/// After a command returns, blocking threads still stuck on a dead disk get
/// this long before the process exits without them (as in `zugzwang`).
const EXIT_GRACE: Duration = Duration::from_secs(1);

/// The allocator `zugzwang` runs with: `serve` here must measure the same
/// server (server/docs/benchmarks.md, "Probing without a hand-off").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "info,tower_http=warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    // Before the runtime starts threads: taking the socket edits the environment.
    let inherited = match &cli.command {
        Command::Serve(_) => match listener::take_inherited() {
            Ok(inherited) => inherited,
            Err(err) => return fail(&err.to_string()),
        },
        _ => None,
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => return fail(&format!("cannot start the async runtime: {err}")),
    };
    let result = runtime.block_on(cli::run(cli.command, inherited));
    runtime.shutdown_timeout(EXIT_GRACE);
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => fail(&err.to_string()),
    }
}

fn fail(message: &str) -> ExitCode {
    eprintln!("zugzwang-bench: {message}");
    ExitCode::FAILURE
}
