use std::{ffi::OsString, process::ExitCode, time::Duration};

use clap::Parser;
use server::{
    cli::{Cli, Command, ProbeArgs},
    engine::Engine,
    listener,
    serve::serve,
};

/// After `serve` returns, blocking threads still stuck on a dead disk get this
/// long before the process exits without them.
const EXIT_GRACE: Duration = Duration::from_secs(1);

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "info,tower_http=warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse_from(with_default_command(std::env::args_os().collect()));
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
    let result = runtime.block_on(run(cli.command, inherited));
    runtime.shutdown_timeout(EXIT_GRACE);
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => fail(&message),
    }
}

fn fail(message: &str) -> ExitCode {
    eprintln!("zugzwang: {message}");
    ExitCode::FAILURE
}

async fn run(command: Command, inherited: Option<std::net::TcpListener>) -> Result<(), String> {
    match command {
        Command::Serve(args) => serve(args, inherited).await.map_err(|err| err.to_string()),
        Command::Probe(args) => probe(args).await,
        Command::Bench(args) => server::bench::run(args)
            .await
            .map_err(|err| err.to_string()),
        Command::Tier(command) => server::tier::run(command),
        Command::Verify(args) => server::verify::run(args),
    }
}

async fn probe(args: ProbeArgs) -> Result<(), String> {
    let pos = app::position::parse_fen(&args.fen).map_err(|err| err.to_string())?;
    let engine = Engine::open(&args.tables.engine_config()).map_err(|err| err.to_string())?;
    let json = if args.mainline {
        let answer = engine.mainline(pos).await.map_err(|err| err.to_string())?;
        serde_json::to_string_pretty(answer.as_ref())
    } else {
        let answer = engine.probe(pos).await.map_err(|err| err.to_string())?;
        serde_json::to_string_pretty(answer.as_ref())
    };
    println!("{}", json.map_err(|err| err.to_string())?);
    Ok(())
}

/// `zugzwang` alone means `zugzwang serve`: cargo-leptos starts the binary
/// without arguments (`cargo leptos serve`, `cargo leptos end-to-end`).
fn with_default_command(mut args: Vec<OsString>) -> Vec<OsString> {
    if args.len() == 1 {
        args.push(OsString::from("serve"));
    }
    args
}
