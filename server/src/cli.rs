//! The `zugzwang` command line.

use std::{net::SocketAddr, path::PathBuf, time::Duration};

use clap::{Args, Parser, Subcommand};

use crate::engine::EngineConfig;

#[derive(Debug, Parser)]
#[command(
    name = "zugzwang",
    version,
    about = "Syzygy endgame explorer and tablebase server",
    after_help = "Without a command, `zugzwang` runs `serve` with its defaults."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the explorer page and the lichess-compatible tablebase API.
    Serve(ServeArgs),
    /// Print the API's answer for one position as JSON (for scripts).
    Probe(ProbeArgs),
    /// Replay request logs against a server and plot response-time ECDFs.
    Bench(crate::bench::BenchArgs),
    /// Manage the fast tier (table prefixes on fast storage).
    #[command(subcommand)]
    Tier(crate::tier::TierCommand),
    /// Check table files against the published sha256 digests.
    Verify(crate::verify::VerifyArgs),
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:3000", env = "ZUGZWANG_BIND")]
    pub bind: SocketAddr,
    #[command(flatten)]
    pub tables: TableArgs,
    /// Megabytes of answers kept in the response cache, each weighed by its
    /// size (0: none kept; identical requests in flight are still computed once).
    #[arg(long, default_value_t = 64, value_name = "MB")]
    pub cache_mb: u64,
    /// Requests allowed in progress at once; more are refused with 503 and Retry-After.
    #[arg(long, default_value_t = 512)]
    pub max_pending: usize,
    /// Append the FEN of every served /standard request to this file, for
    /// `zugzwang bench replay`.
    #[arg(long, value_name = "FILE")]
    pub request_log: Option<PathBuf>,
    /// Past this size the request log is renamed to FILE.1 and started anew.
    #[arg(long, default_value_t = 64 << 20, value_name = "BYTES")]
    pub request_log_max_bytes: u64,
    /// Check every table against the published digests in the background,
    /// yielding to requests; progress and findings are on /metrics.
    #[arg(long)]
    pub scrub: bool,
    /// Scrub read rate limit in MB/s.
    #[arg(long, default_value_t = 50.0, value_name = "MB_PER_S")]
    pub scrub_rate: f64,
    /// Close a connection whose request head has not fully arrived this long
    /// after the server began waiting for it (slow or half-sent requests).
    /// The wait starts after each answer, so it also bounds keep-alive.
    #[arg(long, default_value = "10", value_name = "SECS", value_parser = seconds)]
    pub header_timeout: Duration,
    /// Close a connection that moved no bytes for this long while none of
    /// its requests was being answered (idle keep-alive, stalled clients).
    #[arg(long, default_value = "5", value_name = "SECS", value_parser = seconds)]
    pub idle_timeout: Duration,
    /// Answer 504 to a request not answered within this time (a table on a
    /// failing disk), instead of holding the client for as long as the disk takes.
    #[arg(long, default_value = "10", value_name = "SECS", value_parser = seconds)]
    pub request_timeout: Duration,
    /// Connections served at once. At the cap, the connection quiet longest
    /// (idle or half-sent) is closed to make room; if all are busy, new ones
    /// wait in the kernel's backlog. Default: half of the open-files limit
    /// left after a reserve of 64; the rest is kept for table files.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_connections: Option<u64>,
    /// On SIGTERM or SIGINT, wait this long for requests in progress before
    /// exiting anyway (and logging what was cut).
    #[arg(long, default_value = "10", value_name = "SECS", value_parser = seconds)]
    pub drain_timeout: Duration,
}

/// A positive number of seconds, fractions allowed ("0.5").
fn seconds(text: &str) -> Result<Duration, String> {
    let secs: f64 = text
        .parse()
        .map_err(|_| format!("`{text}` is not a number of seconds"))?;
    if secs <= 0.0 {
        return Err(format!("{text} s: must be more than 0"));
    }
    Duration::try_from_secs_f64(secs).map_err(|err| format!("{text} s: {err}"))
}

#[derive(Debug, Args)]
pub struct ProbeArgs {
    /// The position, as a FEN (underscores may stand for spaces).
    pub fen: String,
    /// Print the DTZ mainline instead of the move list.
    #[arg(long)]
    pub mainline: bool,
    #[command(flatten)]
    pub tables: TableArgs,
}

/// Where the tables are and how they are read.
#[derive(Debug, Args)]
pub struct TableArgs {
    /// Directory of Syzygy tables (.rtbw/.rtbz); repeat for several. Without
    /// it, the 3- and 4-piece tables built into the binary are used.
    #[arg(long = "tables", value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// Blocking threads probing tables at once (the probes of one request run in parallel on them).
    #[arg(long, default_value_t = 16)]
    pub probe_threads: usize,
    /// Read tables through mmap instead of pread. Faster when all tables sit
    /// in RAM, but a read error or a table changed on disk kills the server
    /// with SIGBUS instead of answering with an error. For benchmarks. The
    /// fast tier is a pread store, so the two do not combine.
    #[arg(long, conflicts_with = "fast")]
    pub mmap: bool,
    /// Tell the kernel table reads are random (POSIX_FADV_RANDOM), which
    /// disables read-ahead. Off by default: explorers' reads are less random than they look.
    #[arg(long)]
    pub advise_random: bool,
    /// On a page-cache miss, have the kernel read this many KiB around it (an
    /// aligned window), as an mmap fault reads around itself: a seek costs
    /// the same for 4 KiB as for 128, and neighbouring probes then hit. 0 turns it off.
    #[arg(long, value_name = "KIB", default_value_t = 128)]
    pub read_around: u64,
    /// Probe the moves of a request one after another instead of together.
    /// For benchmarks: shows what the parallel probes buy.
    #[arg(long)]
    pub sequential_probes: bool,
    /// Fast tier built by `zugzwang tier build`: table prefixes are read from
    /// there, data blocks from --tables (at most one slow read per lookup).
    #[arg(long, value_name = "FAST_DIR")]
    pub fast: Option<PathBuf>,
    /// Skip the per-block checksum check on read (only to measure its cost).
    #[arg(long, hide = true)]
    pub no_block_checks: bool,
    /// Refuse to serve tables without recorded block checksums: the server
    /// does not start while any table in --tables lacks them (recorded by
    /// `zugzwang verify --init` or `zugzwang tier build`), and a table whose
    /// checksums disappear later answers 500 instead of unchecked bytes.
    #[arg(long, conflicts_with_all = ["mmap", "no_block_checks"])]
    pub require_checksums: bool,
}

impl TableArgs {
    pub fn engine_config(&self) -> EngineConfig {
        EngineConfig {
            tables: self.dirs.clone(),
            probe_threads: self.probe_threads,
            mmap: self.mmap,
            advise_random: self.advise_random,
            read_around_kib: self.read_around,
            sequential_probes: self.sequential_probes,
            fast: self.fast.clone(),
            check_blocks: !self.no_block_checks,
            require_checksums: self.require_checksums,
            ..EngineConfig::default()
        }
    }
}
