use std::{ffi::OsString, process::ExitCode};

use clap::Parser;
use server::{
    cli::{Cli, Command, ProbeArgs},
    engine::Engine,
    serve::serve,
};

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "info,tower_http=warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse_from(with_default_command(std::env::args_os().collect()));
    let result = match cli.command {
        Command::Serve(args) => serve(args).await.map_err(|err| err.to_string()),
        Command::Probe(args) => probe(args).await,
        Command::Bench(args) => server::bench::run(args)
            .await
            .map_err(|err| err.to_string()),
        Command::Tier(command) => server::tier::run(command),
        Command::Verify(args) => server::verify::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("zugzwang: {message}");
            ExitCode::FAILURE
        }
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
