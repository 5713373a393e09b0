//! `zugzwang serve`: load the tables, then serve the page and the API until stopped.

use std::{
    net::SocketAddr,
    path::{Path, PathBuf},
    sync::Arc,
    time::Duration,
};

use clap::Args;
use leptos::prelude::LeptosOptions;

use super::{TableArgs, mb_or, process};
use crate::{
    engine::{Engine, EngineConfig, LoadError},
    http::{AppState, deadline, metrics_router, router},
    service::{
        connections::{ConnectionLimits, Connections},
        eviction::UNFINISHED_GRACE,
        listener::{self, ListenerError},
        open_files,
        request_log::{self, RequestLog, RequestLogError},
        shutdown::{ShutdownError, Signals},
    },
    store::{descriptors::DescriptorBudget, remote, scrub},
    upstream::{
        UpstreamConfig, Upstreams, client::UpstreamUrl, gaps::LocalCoverage, politeness::Limits,
    },
};

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:3000", env = "ZUGZWANG_BIND")]
    pub bind: SocketAddr,
    /// Serve /metrics on this address of its own (say 127.0.0.1:9300, for
    /// the scraper only). When given, /metrics is no longer served on the
    /// API's address (404 there). Default: /metrics beside the API.
    #[arg(long, value_name = "ADDR")]
    pub metrics_bind: Option<SocketAddr>,
    #[command(flatten)]
    pub tables: TableArgs,
    /// Megabytes of answers kept in the response cache, each weighed by its
    /// size (0: none kept; identical requests in flight are still computed
    /// once). Default: 15 % of --memory-mb.
    #[arg(long, value_name = "MB")]
    pub cache_mb: Option<u64>,
    /// Megabytes of recent positions' probe results kept for later requests
    /// (about 100 bytes a position; 0: none kept). An explorer's requests
    /// probe many positions an earlier request probed: its position was one
    /// of the moves of the request before. Default: 10 % of --memory-mb.
    #[arg(long, value_name = "MB")]
    pub probe_memo_mb: Option<u64>,
    /// Requests allowed in progress at once; more are refused with 503 and Retry-After.
    #[arg(long, default_value_t = 512)]
    pub max_pending: usize,
    /// Append the FEN of every served /standard request to this file, for
    /// `zugzwang-bench replay`.
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
    /// Connections served at once. At the cap, a new connection is accepted
    /// and one is closed to make room: the one that has gone longest without
    /// sending a whole request, else the idle keep-alive one quiet longest
    /// (for 0.5 s at least); if all are busy, new ones wait in the kernel's
    /// backlog. Default: half of the open-files limit left after a reserve
    /// of 64; the rest is kept for table files.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_connections: Option<u64>,
    /// An upstream tablebase server, asked for what the local tables cannot
    /// answer in full (a missing table at the root or behind a move, a
    /// `dtm` no local DTM table gives): any server of the lichess tablebase
    /// API (https://tablebase.lichess.ovh, a lila-tablebase, another
    /// Zugzwang). Repeat it for several, in order of preference. Its
    /// answers are checked, served as they came (`X-Source: upstream`) and
    /// kept in the state directory (`--state-dir`), so each is asked once;
    /// what the local tables know is never asked.
    #[arg(long = "upstream", value_name = "URL")]
    pub upstream: Vec<UpstreamUrl>,
    /// Requests a second each upstream server gets at most, on average
    /// (lichess asks its API's clients for about one); past the budget
    /// the local answer is given at once.
    #[arg(long, default_value = "1", value_name = "N", value_parser = positive_rate)]
    pub upstream_rate: f64,
    /// Requests that may go to an upstream server at once after a quiet spell.
    #[arg(long, default_value_t = 3, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub upstream_burst: u32,
    /// How long an upstream answer may take, the servers tried in turn
    /// included; past it the local answer is given.
    #[arg(long, default_value = "2", value_name = "SECS", value_parser = seconds)]
    pub upstream_timeout: Duration,
    /// Megabytes of upstream answers kept in the state directory; past it
    /// the answers learnt first are dropped.
    #[arg(long, default_value_t = 256, value_name = "MB")]
    pub upstream_store_mb: u64,
    /// On SIGTERM or SIGINT, wait this long for requests in progress; those
    /// still running then are answered 503 with Retry-After and
    /// Connection: close, and the exit status is 75 (0 when none was cut).
    #[arg(long, default_value = "10", value_name = "SECS", value_parser = seconds)]
    pub drain_timeout: Duration,
}

/// Switches that only make sense when measuring the server: `zugzwang serve`
/// runs with the defaults, and `zugzwang-bench serve` (crate `bench`) sets
/// them from its flags, so production has no flag that slows it down.
#[derive(Debug, Clone, Default)]
pub struct BenchKnobs {
    /// Probe a request's moves one after another: what the parallel probes buy.
    pub sequential_probes: bool,
    /// Send every probe to the blocking threads, even when its reads are all
    /// in memory: what probing on the async workers first buys.
    pub pool_only_probes: bool,
    /// Write every table read that waited for the disk to this file
    /// (`StoreOptions::read_trace`, see `store::disk_reads`), for `server/bench/read-trace.py`.
    pub read_trace: Option<PathBuf>,
    /// How old a connection that has not sent a whole request head must be
    /// before it may be closed to make room at the cap (default
    /// [`UNFINISHED_GRACE`]): what the grace costs under a flood of
    /// half-sent requests (figures in `server/docs/benchmarks.md`).
    pub unfinished_grace: Option<Duration>,
}

/// A positive number of requests a second, fractions allowed ("0.5").
fn positive_rate(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(rate) if rate > 0.0 && rate.is_finite() => Ok(rate),
        _ => Err(format!(
            "`{text}` is not a number of requests a second above 0"
        )),
    }
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

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error(transparent)]
    Listen(#[from] ListenerError),
    #[error(transparent)]
    RequestLog(#[from] RequestLogError),
    #[error(transparent)]
    Shutdown(#[from] ShutdownError),
    #[error("cannot set up the upstream client: {0}")]
    Upstream(#[from] reqwest::Error),
    /// The drain ran out of time: these requests were answered 503.
    #[error(
        "stopped with {0} requests unfinished: they were answered 503 with Retry-After (see --drain-timeout)"
    )]
    RequestsCut(usize),
}

impl process::Failure for ServeError {
    fn exit_status(&self) -> u8 {
        match self {
            ServeError::RequestsCut(_) => process::REQUESTS_CUT,
            _ => 1,
        }
    }
}

/// Serves until SIGTERM or SIGINT, then drains; requests the drain had to cut
/// make it an error ([`ServeError::RequestsCut`], exit status
/// [`process::REQUESTS_CUT`]). `inherited` is the listening socket systemd
/// passed, if any (see [`listener::take_inherited`]); without one the server
/// binds `--bind` itself.
pub async fn serve(
    args: ServeArgs,
    inherited: Option<std::net::TcpListener>,
) -> Result<(), ServeError> {
    serve_with(args, inherited, BenchKnobs::default()).await
}

/// [`serve`] with benchmark switches set: the one way in for `zugzwang-bench serve`.
pub async fn serve_with(
    args: ServeArgs,
    inherited: Option<std::net::TcpListener>,
    knobs: BenchKnobs,
) -> Result<(), ServeError> {
    let signals = Signals::listen()?;
    if knobs.read_trace.is_some() && args.tables.all_dirs().is_empty() {
        tracing::warn!(
            "--read-trace traces reads of table directories; the built-in tables are read from memory, so nothing will be traced (give --tables)"
        );
    }
    if knobs.read_trace.is_some() && (args.tables.read_around == 0 || args.tables.mmap) {
        tracing::warn!(
            "--read-trace sees nothing with --read-around 0 or --mmap: hits and misses cannot be told apart"
        );
    }
    let budget = descriptor_budget(&args);
    let engine = open_engine(&args, &knobs, &budget)?;
    let upstream = open_upstream(&args, &engine)?;
    let scrub = match args.scrub {
        true => scrub::start_for_serve(
            &scrubbed_dirs(&args.tables.all_dirs()),
            args.scrub_rate,
            Arc::clone(&engine.store_metrics().reads),
            Arc::clone(&engine.store_metrics().quarantine),
        ),
        false => None,
    };
    let log = match &args.request_log {
        Some(path) => {
            tracing::info!("logging served positions to {}", path.display());
            Some(RequestLog::open(path, args.request_log_max_bytes)?)
        }
        None => None,
    };
    let socket_activated = inherited.is_some();
    let metrics_listener = match args.metrics_bind {
        Some(addr) => {
            let listener = listener::open(None, addr)?;
            // Before "serving on": once that is logged, both answer.
            let addr = listener.local_addr().unwrap_or(addr);
            tracing::info!("/metrics on http://{addr}/metrics only (--metrics-bind)");
            Some(listener)
        }
        None => None,
    };
    let listener = listener::open(inherited, args.bind)?;
    let addr = listener.local_addr().unwrap_or(args.bind);
    if socket_activated {
        tracing::info!("using the listening socket passed by systemd (--bind is ignored)");
    }
    tracing::info!("serving on http://{addr}");
    crate::store::embedded::unmap_dtm_tables();
    let connections = Connections::new(ConnectionLimits {
        header_timeout: args.header_timeout,
        idle_timeout: args.idle_timeout,
        max_connections: saturating_usize(budget.connections),
        unfinished_grace: knobs.unfinished_grace.unwrap_or(UNFINISHED_GRACE),
    });
    let state = AppState {
        connections: Some(connections.stats()),
        request_log: log.clone(),
        scrub,
        metrics_apart: metrics_listener.is_some(),
        upstream,
        ..AppState::new(Arc::new(engine), leptos_options(addr))
    };
    if let Some(listener) = metrics_listener {
        serve_metrics(listener, &args, metrics_router(state.clone()), &signals);
    }
    let requests = Arc::clone(&state.requests);
    let mut app = router(state);
    if let Some(log) = log {
        app = app.layer(axum::middleware::from_fn_with_state(
            log,
            request_log::middleware,
        ));
    }
    let app = deadline::layer(app, args.request_timeout, requests);
    connections
        .accept_until(listener, app, signals.stop())
        .await;
    match signals.drain(&connections, args.drain_timeout).await {
        0 => Ok(()),
        cut => Err(ServeError::RequestsCut(cut)),
    }
}

/// The directories the scrub reads: not remote sources, whose every byte
/// it would download again and again; their reads are checked block by
/// block, and `zugzwang verify URL` checks them whole.
fn scrubbed_dirs(dirs: &[PathBuf]) -> Vec<PathBuf> {
    let (remote, local): (Vec<PathBuf>, Vec<PathBuf>) =
        dirs.iter().cloned().partition(|dir| remote::is_remote(dir));
    for url in remote {
        tracing::info!(
            "{}: not scrubbed (a remote source); its reads are checked against the block checksums, `zugzwang verify` checks it whole",
            url.display()
        );
    }
    local
}

/// Connections the `/metrics` address serves at once: scrapers, a few.
const METRICS_CONNECTIONS: usize = 8;

/// Serves `/metrics` alone on `--metrics-bind` (with the API's timeouts, and
/// a small cap of its own) until the server stops accepting.
fn serve_metrics(
    listener: tokio::net::TcpListener,
    args: &ServeArgs,
    app: axum::Router,
    signals: &Signals,
) {
    let connections = Connections::new(ConnectionLimits {
        header_timeout: args.header_timeout,
        idle_timeout: args.idle_timeout,
        max_connections: METRICS_CONNECTIONS,
        unfinished_grace: UNFINISHED_GRACE,
    });
    let stop = signals.stop().clone();
    tokio::spawn(async move { connections.accept_until(listener, app, &stop).await });
}

/// Raises the open-files limit and splits it between connections and tables.
fn descriptor_budget(args: &ServeArgs) -> DescriptorBudget {
    let limit = open_files::raise_open_files_limit();
    let budget = DescriptorBudget::split(limit, args.max_connections);
    tracing::info!(
        "open-files limit {}: up to {} connections, {} table files open at once",
        budget.limit,
        budget.connections,
        budget.table_handles
    );
    budget
}

fn open_engine(
    args: &ServeArgs,
    knobs: &BenchKnobs,
    budget: &DescriptorBudget,
) -> Result<Engine, LoadError> {
    let tables = args.tables.engine_config();
    let mut config = EngineConfig {
        cache_bytes: mb_or(args.cache_mb, tables.cache_bytes),
        memo_bytes: mb_or(args.probe_memo_mb, tables.memo_bytes),
        max_pending: args.max_pending,
        sequential_probes: knobs.sequential_probes,
        inline_probes: !knobs.pool_only_probes,
        ..tables
    };
    config.store.table_handles = Some(saturating_usize(budget.table_handles));
    config.store.read_trace = knobs.read_trace.clone();
    tracing::info!("memory budget: {}", config.memory_budget().describe());
    let engine = Engine::open(&config)?;
    for dir in engine.directories() {
        tracing::info!(
            "{} table files in {}: {}",
            dir.tables,
            dir.path.display(),
            dir.completeness()
        );
    }
    let set = engine.table_set();
    tracing::info!(
        "serving table set {} ({} files, {} bytes; X-Table-Set and zugzwang_table_set_info)",
        set.digest(),
        set.files(),
        set.bytes()
    );
    if engine.max_pieces() == 0 {
        tracing::warn!("no tables found: every position will be answered as unknown");
    }
    Ok(engine)
}

/// The upstream servers (`--upstream`) and the store of their answers,
/// when any is given.
fn open_upstream(args: &ServeArgs, engine: &Engine) -> Result<Option<Arc<Upstreams>>, ServeError> {
    if args.upstream.is_empty() {
        return Ok(None);
    }
    let limits = Limits {
        rate: args.upstream_rate,
        burst: args.upstream_burst,
        ..Limits::default()
    };
    let config = UpstreamConfig {
        servers: args.upstream.clone(),
        limits,
        timeout: args.upstream_timeout,
        store_bytes: args.upstream_store_mb.saturating_mul(1 << 20),
        state_dir: args.tables.state.resolve(),
        coverage: LocalCoverage {
            dtm: engine.dtm_materials(),
        },
    };
    if args.upstream_timeout >= args.request_timeout {
        tracing::warn!(
            "--upstream-timeout ({:.1} s) is not below --request-timeout ({:.1} s): a slow upstream answer will be cut by the request's own deadline (504) instead of leaving the local answer",
            args.upstream_timeout.as_secs_f64(),
            args.request_timeout.as_secs_f64()
        );
    }
    let names: Vec<String> = args.upstream.iter().map(ToString::to_string).collect();
    tracing::info!(
        "asking {} for what the local tables cannot answer in full ({} requests a second each, {} at once, {:.1} s to answer)",
        names.join(", then "),
        limits.rate,
        limits.burst,
        args.upstream_timeout.as_secs_f64()
    );
    Ok(Some(Arc::new(Upstreams::new(config)?)))
}

/// Leptos settings: from cargo-leptos's environment when run by it, else the
/// layout `cargo leptos build` leaves in `target/site`.
///
/// The bundle's file names carry content hashes, listed in the site's
/// `hash.txt` (`hash-file-name` in Cargo.toml); the page names the hashed
/// files when that list is there. Leptos looks for it relative to the
/// binary, so it gets an absolute path: the site may be installed anywhere.
fn leptos_options(bind: SocketAddr) -> LeptosOptions {
    let env = |key: &str, default: &str| std::env::var(key).unwrap_or_else(|_| default.to_string());
    let site_root = env("LEPTOS_SITE_ROOT", "target/site");
    let hash_file = std::path::absolute(Path::new(&site_root).join("hash.txt"))
        .unwrap_or_else(|_| Path::new(&site_root).join("hash.txt"));
    LeptosOptions::builder()
        .output_name(env("LEPTOS_OUTPUT_NAME", "zugzwang"))
        .site_root(site_root)
        .site_pkg_dir(env("LEPTOS_SITE_PKG_DIR", "pkg"))
        .site_addr(bind)
        .hash_files(hash_file.is_file())
        .hash_file(Arc::from(hash_file.to_string_lossy().as_ref()))
        .build()
}

fn saturating_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}
