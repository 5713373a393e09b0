//! The `zugzwang-bench` command line: `replay` (tail latency from a real
//! request log with parallel clients), `plot` (ECDFs of its results) and
//! `serve` (`zugzwang serve` with the switches only benchmarks want). The
//! work is in the library's modules and in `server`; the arguments and
//! printing here.

use std::{
    fs::OpenOptions,
    io::{IsTerminal, Write},
    path::PathBuf,
    time::Duration,
};

use clap::{Args, Parser, Subcommand};
use server::cli::{
    process::Failure,
    serve::{self, BenchKnobs, ServeError},
};

use crate::{BenchError, plot, replay, summary};

#[derive(Debug, Parser)]
#[command(
    name = "zugzwang-bench",
    version,
    about = "Benchmarks of the Zugzwang server: replay request logs, plot response times, serve with benchmark switches"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Replay a request log against a running server and summarise the response times.
    Replay(ReplayArgs),
    /// Draw response-time ECDFs (log time axis, client ping added) of replay results.
    Plot(PlotArgs),
    /// `zugzwang serve`, every flag of it, plus switches for measuring it.
    // Boxed: every flag of `zugzwang serve` makes it far larger than the others.
    Serve(Box<BenchServeArgs>),
    /// Forward TCP connections to a server, holding its answers back by a
    /// fixed time: a store on loopback that answers like one across a network.
    DelayProxy(DelayProxyArgs),
}

#[derive(Debug, Args)]
pub struct DelayProxyArgs {
    /// Address to accept connections on.
    #[arg(long)]
    pub listen: std::net::SocketAddr,
    /// The server to forward them to.
    #[arg(long)]
    pub to: std::net::SocketAddr,
    /// Milliseconds each chunk of the server's answer is held back.
    #[arg(long, default_value_t = 20)]
    pub delay_ms: u64,
}

#[derive(Debug, Args)]
/// Named apart from `serve::ServeArgs`: clap names each flattened group after
/// its struct, and two groups called `ServeArgs` in one command are refused.
pub struct BenchServeArgs {
    #[command(flatten)]
    pub serve: serve::ServeArgs,
    /// Probe the moves of a request one after another instead of together:
    /// shows what the parallel probes buy.
    #[arg(long)]
    pub sequential_probes: bool,
    /// Send every probe to the blocking threads, even when its reads are
    /// all in memory: shows what probing on the async workers first buys.
    #[arg(long)]
    pub pool_only_probes: bool,
    /// Write every table read that waited for the disk to this file, one
    /// line each (time, request, lookup, table, kind of read, bytes), for
    /// `server/bench/read-trace.py`. Needs --read-around above 0.
    #[arg(long, value_name = "FILE")]
    pub read_trace: Option<PathBuf>,
    /// Milliseconds a connection that has not sent a whole request head is
    /// kept at the connection cap before it may be closed for a new one
    /// (the server's default is 20): what the grace costs under a flood of
    /// half-sent requests (`server/bench/flood.py`).
    #[arg(long, value_name = "MS")]
    pub unfinished_grace_ms: Option<u64>,
}

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// URL the FEN is appended to as `?fen=`.
    #[arg(long, default_value = "http://127.0.0.1:3000/standard")]
    pub endpoint: String,
    /// Request log: one FEN per line (as written by `serve --request-log`).
    #[arg(long)]
    pub log: PathBuf,
    /// Parallel clients; each sends its next request when its previous one completes.
    #[arg(long, default_value_t = 12)]
    pub clients: usize,
    /// Requests at the start of the log that are sent but not measured
    /// (tables opening, caches filling).
    #[arg(long, default_value_t = 0)]
    pub warmup: usize,
    /// Send at most this many requests, warm-up included (default: the whole log).
    #[arg(long)]
    pub max_requests: Option<usize>,
    /// Stop sending new requests after this many seconds.
    #[arg(long, default_value_t = 600.0)]
    pub duration: f64,
    /// Seconds after which a request without an answer counts as failed.
    #[arg(long, default_value_t = 60.0)]
    pub timeout: f64,
    /// Result file: one tab-separated line per request (fen, ms, status, phase).
    #[arg(long, default_value = "replay.tsv")]
    pub out: PathBuf,
    /// Name of the run in the summary row (default: the result file's name).
    #[arg(long)]
    pub label: Option<String>,
    /// Also append the summary as a Markdown table row to this file.
    #[arg(long)]
    pub summary: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct PlotArgs {
    /// Result files of `zugzwang-bench replay`; one curve each.
    #[arg(required = true)]
    pub results: Vec<PathBuf>,
    /// Image to write, .svg or .png; repeat for both.
    #[arg(long, required = true)]
    pub out: Vec<PathBuf>,
    /// Client ping in ms added to every response time.
    #[arg(long, default_value_t = 30.0)]
    pub ping: f64,
    /// Legend names, in the order of the result files (default: file names).
    #[arg(long)]
    pub label: Vec<String>,
    #[arg(long, default_value = "Response time ECDF")]
    pub title: String,
}

fn seconds(secs: f64) -> Duration {
    Duration::try_from_secs_f64(secs).unwrap_or(Duration::MAX)
}

/// Why a command failed; printed after `zugzwang-bench: ` with a failing exit status.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error(transparent)]
    Bench(#[from] BenchError),
    #[error(transparent)]
    Serve(#[from] ServeError),
    #[error("delay-proxy on {listen}: {source} (is the address free and one of this machine's?)")]
    DelayProxy {
        listen: std::net::SocketAddr,
        source: std::io::Error,
    },
}

/// `serve`'s own exit statuses (requests cut by the drain) carry through.
impl Failure for CliError {
    fn exit_status(&self) -> u8 {
        match self {
            CliError::Serve(err) => err.exit_status(),
            CliError::Bench(_) | CliError::DelayProxy { .. } => 1,
        }
    }
}

/// Runs a parsed command. `inherited` is the listening socket systemd passed
/// to `serve`, taken before the runtime started (see
/// `server::service::listener`).
pub async fn run(
    command: Command,
    inherited: Option<std::net::TcpListener>,
) -> Result<(), CliError> {
    match command {
        Command::Replay(args) => run_replay(args).await?,
        Command::Plot(args) => {
            let curves = plot::curves(&args.results, &args.label, args.ping)?;
            plot::plot(&curves, &args.title, args.ping, &args.out)?;
            eprintln!("wrote {}", plot::describe(&args.out));
        }
        Command::Serve(args) => {
            let args = *args;
            let knobs = BenchKnobs {
                sequential_probes: args.sequential_probes,
                pool_only_probes: args.pool_only_probes,
                read_trace: args.read_trace,
                unfinished_grace: args.unfinished_grace_ms.map(Duration::from_millis),
            };
            serve::serve_with(args.serve, inherited, knobs).await?;
        }
        Command::DelayProxy(args) => {
            let delay = Duration::from_millis(args.delay_ms);
            crate::delay::run(args.listen, args.to, delay)
                .await
                .map_err(|source| CliError::DelayProxy {
                    listen: args.listen,
                    source,
                })?;
        }
    }
    Ok(())
}

async fn run_replay(args: ReplayArgs) -> Result<(), BenchError> {
    let options = replay::ReplayOptions {
        endpoint: args.endpoint,
        log: args.log,
        clients: args.clients,
        warmup: args.warmup,
        max_requests: args.max_requests,
        duration: seconds(args.duration),
        timeout: seconds(args.timeout),
        out: args.out,
        progress: std::io::stderr().is_terminal(),
    };
    let report = replay::replay(&options).await?;
    eprintln!(
        "sent {} of {} requests{} ({} warm-up); results in {}",
        report.sent,
        report.planned,
        if report.timed_out {
            format!(", stopped by --duration {}s", args.duration)
        } else {
            String::new()
        },
        options.warmup.min(report.sent),
        options.out.display()
    );
    let Some(summary) = report.summary else {
        eprintln!("no measured requests: every request sent was warm-up");
        return Ok(());
    };
    let label = args.label.unwrap_or_else(|| {
        options
            .out
            .file_stem()
            .map_or_else(String::new, |s| s.to_string_lossy().into_owned())
    });
    println!("{summary}");
    println!("{}", summary::Summary::header());
    println!("{}", summary.row(&label));
    if let Some(path) = args.summary {
        let write_err = |source| BenchError::Write {
            path: path.clone(),
            source,
        };
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(write_err)?;
        writeln!(file, "{}", summary.row(&label)).map_err(write_err)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::Cli;

    /// clap checks a command's definition only when it is built: a clash
    /// between the flattened server flags and these would otherwise show
    /// first as a panic of `zugzwang-bench serve`.
    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }
}
