//! The `zugzwang` command line: one file per subcommand, each holding its
//! arguments, what it runs and what it prints. They sit on top of the
//! library's layers (`http`, `engine`, `store`, `service`); nothing below
//! imports them.

pub mod bundle;
pub mod health;
pub mod output;
pub mod probe;
pub mod process;
pub mod serve;
pub mod tables;
pub mod tier;
pub mod verify;

use std::{ffi::OsString, path::PathBuf};

use clap::{Args, Parser, Subcommand};

use crate::{
    engine::{EngineConfig, MemoryBudget},
    service::memory_limit,
    store::{StoreOptions, remote::RemoteOptions},
};

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
    // Boxed: its many flags make it far larger than the other commands.
    Serve(Box<serve::ServeArgs>),
    /// Print the API's answer for one position as JSON (for scripts).
    Probe(probe::ProbeArgs),
    /// Manage the fast tier (table prefixes on fast storage).
    #[command(subcommand)]
    Tier(tier::TierCommand),
    /// Check table files against the published digests (sha256; md5 for atomic and antichess).
    Verify(verify::VerifyArgs),
    /// See which tables are installed; fetch missing ones from a mirror.
    #[command(subcommand)]
    Tables(tables::TablesCommand),
    /// Write the page's bundle compressed beside itself, for nginx in front.
    #[command(subcommand)]
    Bundle(bundle::BundleCommand),
    /// Ask a running server for one cheap answer: exit 0 on a 200, 1
    /// otherwise (a container's HEALTHCHECK, where there is no curl).
    Health(health::HealthArgs),
}

/// Where the tables are and how they are read.
#[derive(Debug, Args)]
pub struct TableArgs {
    /// Directory of Syzygy tables (.rtbw/.rtbz); repeat for several. Without
    /// it, the 3- and 4-piece tables built into the binary are used. Also an
    /// object store, `s3://BUCKET/PREFIX` (credentials and region from
    /// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION; see
    /// --s3-endpoint), or an HTTP(S) mirror that lists its directory and
    /// honours Range, `https://host/path/`: each lookup is then one ranged
    /// GET, with the prefixes on local disk (--fast, built by `zugzwang tier
    /// build --from URL`).
    #[arg(long = "tables", value_name = "DIR|URL")]
    pub dirs: Vec<PathBuf>,
    /// Directory (or s3:// or https:// source) of atomic Syzygy tables
    /// (.atbw/.atbz); repeat for several (lila-tablebase's flag). Without
    /// it, the 3- and 4-piece atomic tables built into the binary are used.
    #[arg(long = "atomic", value_name = "DIR|URL")]
    pub atomic: Vec<PathBuf>,
    /// Directory (or s3:// or https:// source) of antichess Syzygy tables
    /// (.gtbw/.gtbz, and .stbw/.stbz for pawnless ones); repeat for several
    /// (lila-tablebase's flag). None are built in: without it antichess
    /// moves are "unknown" except where the rules alone decide.
    #[arg(long = "antichess", value_name = "DIR|URL")]
    pub antichess: Vec<PathBuf>,
    /// Directory of Prophet DTM tables (*.egtb.bz, also in the generator's
    /// `4men/0pawns/` subdirectories); repeat for several (lila-tablebase's
    /// `--prophet`). Without it, the 2- to 4-piece DTM tables built into the
    /// binary answer `dtm`.
    #[arg(long = "dtm", value_name = "DIR")]
    pub dtm: Vec<PathBuf>,
    /// Megabytes all the caches together may hold (answers, data blocks,
    /// table indexes, DTM blocks, the probe memo), split among them by one
    /// rule; a cache's own flag overrides its share. Default: a sixteenth
    /// of MemAvailable or of the container's memory limit, whichever is
    /// smaller, at least 24 and at most 32.
    #[arg(long, value_name = "MB")]
    pub memory_mb: Option<u64>,
    /// Megabytes of decompressed DTM blocks kept in memory: a DTM lookup
    /// otherwise decompresses its block (8 KiB for the embedded tables,
    /// 64 KiB for the generator's files). 0 keeps none. Default: 40 % of
    /// --memory-mb.
    #[arg(long, value_name = "MB")]
    pub dtm_cache_mb: Option<u64>,
    /// Blocking threads probing tables at once (the probes of one request run in parallel on them).
    #[arg(long, default_value_t = 16)]
    pub probe_threads: usize,
    /// A table with a read out on the disk this long (a failing disk, a
    /// hung NFS mount) is suspect: probes that need it are answered 503
    /// naming it, with Retry-After, instead of taking more probe threads,
    /// until the read returns. /metrics shows the oldest read's age and the
    /// suspect tables.
    #[arg(long, value_name = "SECS", default_value = "3", value_parser = positive_seconds)]
    pub stuck_read_secs: std::time::Duration,
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
    /// Fast tier built by `zugzwang tier build`: table prefixes are read from
    /// there, data blocks from --tables (at most one slow read per lookup).
    #[arg(long, value_name = "FAST_DIR")]
    pub fast: Option<PathBuf>,
    /// Skip the per-block checksum check on read (only to measure its cost).
    #[arg(long, hide = true)]
    pub no_block_checks: bool,
    /// Also serve tables whose bytes were never checked against their
    /// published digest (no block checksums recorded by `zugzwang verify
    /// --init`, `tier build` or `tables fetch`). Off by default: such tables
    /// are refused, since a flipped bit on the disk would become a wrong
    /// answer. Answers that depend on one carry `X-Integrity: unchecked`.
    #[arg(long, conflicts_with = "mmap")]
    pub allow_unchecked: bool,
    #[command(flatten)]
    pub state: StateDirArg,
    #[command(flatten)]
    pub remote: RemoteArgs,
    /// Megabytes of table indexes (headers, sparse indexes, block lengths)
    /// kept in process memory, so a lookup costs at most its data block
    /// even when the page cache cannot hold the tables. 0 keeps none.
    /// Default: 10 % of --memory-mb.
    #[arg(long, value_name = "MB")]
    pub index_cache_mb: Option<u64>,
    /// Megabytes of table data blocks kept in process memory, so that the
    /// blocks requests revisit cost no system call. 0 keeps none. Default:
    /// 25 % of --memory-mb.
    #[arg(long, value_name = "MB")]
    pub data_cache_mb: Option<u64>,
}

/// How table sources given as URLs (`s3://`, `https://`) are reached.
#[derive(Debug, Clone, clap::Args)]
pub struct RemoteArgs {
    /// The S3 endpoint of a self-hosted object store (Garage, MinIO, Ceph
    /// RGW), e.g. `http://10.0.0.5:3900`, for `s3://` sources; requests
    /// then use path-style addressing (`host/BUCKET/KEY`). Default: AWS's
    /// endpoint for the region.
    #[arg(long, value_name = "URL", env = "AWS_ENDPOINT_URL")]
    pub s3_endpoint: Option<String>,
    /// The S3 region (Garage's default is `garage`). Default: AWS_REGION.
    #[arg(long, value_name = "REGION")]
    pub s3_region: Option<String>,
    /// Address buckets virtual-hosted style (`BUCKET.host`) instead of
    /// path-style.
    #[arg(long)]
    pub s3_virtual_hosted: bool,
    /// A GET to a remote source may take this long, retries included
    /// (retries with backoff after a 5xx, a 429 or a dropped connection);
    /// past it the read fails: a 503 naming the table. For `tier build`,
    /// `verify` and `tables status --verify`, which stream whole tables:
    /// the longest wait for more bytes.
    #[arg(long, value_name = "SECS", default_value = "5", value_parser = positive_seconds)]
    pub remote_timeout_secs: std::time::Duration,
    /// Retries of a GET after a 5xx, a 429 or a dropped connection.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub remote_retries: usize,
    /// Connect afresh for every GET instead of keeping connections open:
    /// for a store that leaves Nagle's algorithm on, such as Garage 2.5,
    /// where each GET on a kept connection waits about 40 ms for a delayed
    /// ACK (or put nginx in front of it). Costs a TCP handshake per GET.
    #[arg(long)]
    pub remote_no_keep_alive: bool,
}

impl RemoteArgs {
    /// The options, with `connections` kept open per source (one per
    /// probe thread: a request's probes send their GETs together).
    pub fn options(&self, connections: usize) -> RemoteOptions {
        RemoteOptions {
            s3_endpoint: self.s3_endpoint.clone(),
            s3_region: self.s3_region.clone(),
            s3_virtual_hosted: self.s3_virtual_hosted,
            timeout: self.remote_timeout_secs,
            retries: self.remote_retries,
            connections,
            keep_alive: !self.remote_no_keep_alive,
            streams: false,
        }
    }

    /// The options of a command that streams whole objects (`tier
    /// build`, `verify`, `tables status --verify`): the timeout bounds
    /// each wait for bytes, not a table's whole transfer.
    pub fn streaming_options(&self) -> RemoteOptions {
        RemoteOptions {
            streams: true,
            ..self.options(4)
        }
    }
}

/// Where what is learnt about tables is kept when their directories cannot
/// be written: block checksums and quarantine records.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct StateDirArg {
    /// Where checksums and quarantine records of tables in read-only
    /// directories are kept (beside the tables, in `DIR/.zugzwang`, where
    /// that can be written). Default: $STATE_DIRECTORY (systemd's
    /// StateDirectory=), else $XDG_STATE_HOME/zugzwang, else
    /// ~/.local/state/zugzwang.
    #[arg(long, value_name = "DIR", env = "ZUGZWANG_STATE_DIR")]
    pub state_dir: Option<PathBuf>,
}

impl StateDirArg {
    /// The state directory: the flag, else the environment's convention;
    /// `None` when nothing names one (no home directory).
    pub fn resolve(&self) -> Option<PathBuf> {
        if let Some(dir) = &self.state_dir {
            return Some(dir.clone());
        }
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        if let Some(dirs) = var("STATE_DIRECTORY") {
            // systemd may list several, separated by colons: the first.
            let first = dirs.to_string_lossy().split(':').next().map(PathBuf::from);
            return first;
        }
        if let Some(state) = var("XDG_STATE_HOME") {
            return Some(PathBuf::from(state).join("zugzwang"));
        }
        var("HOME").map(|home| PathBuf::from(home).join(".local/state/zugzwang"))
    }
}

/// A positive number of seconds, fractions allowed ("0.5").
fn positive_seconds(text: &str) -> Result<std::time::Duration, String> {
    let secs: f64 = text
        .parse()
        .map_err(|_| format!("`{text}` is not a number of seconds"))?;
    if secs <= 0.0 {
        return Err(format!("{text} s: must be more than 0"));
    }
    std::time::Duration::try_from_secs_f64(secs).map_err(|err| format!("{text} s: {err}"))
}

impl TableArgs {
    /// The table directories of every variant and of the DTM tables
    /// (`--tables`, `--atomic`, `--antichess`, `--dtm`): what the scrub reads.
    pub fn all_dirs(&self) -> Vec<PathBuf> {
        [&self.dirs, &self.atomic, &self.antichess, &self.dtm]
            .into_iter()
            .flatten()
            .cloned()
            .collect()
    }

    /// The caches' budget: `--memory-mb` (or its default) split by the
    /// rule, with the caches given their own flag taken at their word.
    pub fn memory_budget(&self) -> MemoryBudget {
        let split = MemoryBudget::split(memory_limit::budget_bytes(self.memory_mb));
        MemoryBudget {
            index: mb_or(self.index_cache_mb, split.index),
            data: mb_or(self.data_cache_mb, split.data),
            dtm_blocks: mb_or(self.dtm_cache_mb, split.dtm_blocks),
            ..split
        }
    }

    pub fn engine_config(&self) -> EngineConfig {
        EngineConfig {
            tables: self.dirs.clone(),
            atomic: self.atomic.clone(),
            antichess: self.antichess.clone(),
            dtm: self.dtm.clone(),
            store: StoreOptions {
                mmap: self.mmap,
                advise_random: self.advise_random,
                read_around_kib: self.read_around,
                fast: self.fast.clone(),
                check_blocks: !self.no_block_checks,
                allow_unchecked: self.allow_unchecked,
                state_dir: self.state.resolve(),
                table_handles: None,
                index_cache_bytes: 0,
                data_cache_bytes: 0,
                read_trace: None,
                stuck_read: self.stuck_read_secs,
                remote: self.remote.options(self.probe_threads),
            },
            probe_threads: self.probe_threads,
            ..EngineConfig::default()
        }
        .budgeted(self.memory_budget())
    }
}

/// `mb` megabytes when given, else `otherwise` bytes.
pub fn mb_or(mb: Option<u64>, otherwise: u64) -> u64 {
    mb.map_or(otherwise, |mb| mb.saturating_mul(1 << 20))
}

/// Why a command failed; printed after `zugzwang: ` with a failing exit status.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error(transparent)]
    Serve(#[from] serve::ServeError),
    #[error(transparent)]
    Probe(#[from] probe::ProbeError),
    #[error(transparent)]
    Tier(#[from] tier::TierError),
    #[error(transparent)]
    Verify(#[from] verify::VerifyError),
    #[error(transparent)]
    Tables(#[from] tables::TablesError),
    #[error(transparent)]
    Bundle(#[from] bundle::BundleError),
    #[error(transparent)]
    Health(#[from] health::HealthError),
}

/// `serve`'s own exit statuses (requests cut by the drain) carry through;
/// every other failure exits 1.
impl process::Failure for CliError {
    fn exit_status(&self) -> u8 {
        match self {
            CliError::Serve(err) => process::Failure::exit_status(err),
            _ => 1,
        }
    }
}

/// Runs a parsed command. `inherited` is the listening socket systemd passed
/// to `serve`, taken before the runtime started (see `service::listener`).
pub async fn run(
    command: Command,
    inherited: Option<std::net::TcpListener>,
) -> Result<(), CliError> {
    match command {
        Command::Serve(args) => serve::serve(*args, inherited).await?,
        Command::Probe(args) => probe::run(args).await?,
        Command::Tier(command) => tier::run(command)?,
        Command::Verify(args) => verify::run(args)?,
        Command::Tables(command) => tables::run(command).await?,
        Command::Bundle(command) => bundle::run(command)?,
        Command::Health(args) => health::run(args)?,
    }
    Ok(())
}

/// `zugzwang` alone means `zugzwang serve`: cargo-leptos starts the binary
/// without arguments (`cargo leptos serve`, `cargo leptos end-to-end`).
pub fn with_default_command(mut args: Vec<OsString>) -> Vec<OsString> {
    if args.len() == 1 {
        args.push(OsString::from("serve"));
    }
    args
}
