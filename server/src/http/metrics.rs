//! `GET /metrics`, in the Prometheus text format: table reads per tier and
//! kind, lookups, prefix fallbacks, integrity findings and scrub progress
//! (from the store), then what an operator watches to see the service
//! itself: requests, load, the response cache and the process's health.

use app::variant::Variant;
use axum::{
    extract::State,
    http::{HeaderValue, header},
    response::{IntoResponse, Response},
};

use super::{AppState, request_metrics::RequestMetrics};
use crate::{
    engine::{CacheStats, MemoStats},
    exposition::{Exposition, Kind},
    service::{
        activity::{ConnectionStats, Evicted, Refusal},
        process_health::ProcessHealth,
    },
    store::context::RequestReads,
};

pub async fn metrics(State(state): State<AppState>) -> Response {
    let mut out = Exposition::default();
    state.engine.store_metrics().render(&mut out);
    out.counter(
        "zugzwang_unchecked_answers_total",
        "Answers that may come from tables never checked against their published digest (--allow-unchecked), marked X-Integrity: unchecked.",
        state.engine.unchecked_tables().answers(),
    );
    state.engine.dtm_block_cache().render(&mut out);
    state.engine.dtm_unavailable().render(&mut out);
    if let Some(scrub) = &state.scrub {
        scrub.render(&mut out);
    }
    render_table_set(&mut out, &state);
    state.requests.render(&mut out);
    render_load(&mut out, &state);
    render_cache(&mut out, state.engine.cache_stats().await);
    render_memo(&mut out, state.engine.memo_stats());
    state.engine.memory_budget().render(&mut out);
    render_process(&mut out, ProcessHealth::sample());
    if let Some(upstream) = &state.upstream {
        crate::upstream::metrics::render(upstream, &mut out);
    }
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
        )],
        out.into_string(),
    )
        .into_response()
}

/// Which tables this replica answers from: the digest as a label (an
/// "info" gauge of 1, so a mixed fleet shows as several digests) and how
/// many tables are installed, which tells the complete replicas apart.
fn render_table_set(out: &mut Exposition, state: &AppState) {
    let set = state.engine.table_set();
    let name = "zugzwang_table_set_info";
    out.family(
        name,
        "The table set answers come from: digest of the loaded table files' names and sizes, as in X-Table-Set.",
        Kind::Gauge,
    );
    out.sample(name, &[("digest", set.digest())], 1);
    out.gauge(
        "zugzwang_table_set_files",
        "Table files loaded (.rtbw and .rtbz).",
        to_u64(set.files()),
    );
    out.gauge(
        "zugzwang_table_set_bytes",
        "Total size of the loaded table files.",
        set.bytes(),
    );
    out.family(
        "zugzwang_tables_installed",
        "Tables with both files loaded, per variant (as GET /tables?variant= lists them).",
        Kind::Gauge,
    );
    for variant in Variant::ALL {
        out.sample(
            "zugzwang_tables_installed",
            &[("variant", variant.as_str())],
            state.engine.installed_tables(variant).len(),
        );
    }
}

/// Whether the server keeps up: requests refused, connections held and
/// positions the request log could not keep up with.
fn render_load(out: &mut Exposition, state: &AppState) {
    out.counter(
        "zugzwang_requests_shed_total",
        "Requests refused with 503 because --max-pending were already in progress.",
        state.engine.requests_shed(),
    );
    out.gauge(
        "zugzwang_probe_threads_busy",
        "Probe threads (of --probe-threads) busy now.",
        state.engine.probe_threads_busy() as u64,
    );
    out.gauge(
        "zugzwang_probe_threads_stuck",
        "Probe threads whose work ran longer than --stuck-read-secs while probes waited for a place (most likely blocked in a read of a failing disk, see zugzwang_oldest_read_in_flight_seconds): their places were given to others; not returned yet.",
        state.engine.probe_threads_stuck() as u64,
    );
    let probes = state.engine.probes_by_place();
    out.family(
        "zugzwang_probes_total",
        "Positions probed: on the async workers (every read in memory) or on the blocking threads (a read had to wait for the disk, or --pool-only-probes).",
        Kind::Counter,
    );
    out.sample(
        "zugzwang_probes_total",
        &[("place", "inline")],
        probes.inline,
    );
    out.sample("zugzwang_probes_total", &[("place", "pool")], probes.pooled);
    if let Some(connections) = &state.connections {
        render_connections(out, connections);
    }
    if let Some(log) = &state.request_log {
        out.counter(
            "zugzwang_request_log_dropped_total",
            "Served positions left out of --request-log because its writer fell behind or failed.",
            log.dropped(),
        );
    }
}

/// Connections: how many are open against the cap, and those the server
/// closed without serving a request (evicted at the cap to make room, or
/// refused), which show a flood of idle or half-sent sockets.
fn render_connections(out: &mut Exposition, connections: &ConnectionStats) {
    out.gauge(
        "zugzwang_http_connections_open",
        "Client connections open now (at most zugzwang_http_connections_max).",
        to_u64(connections.open()),
    );
    out.gauge(
        "zugzwang_http_connections_max",
        "Client connections served at once at most (--max-connections, or its share of the open-files limit).",
        to_u64(connections.cap()),
    );
    out.gauge(
        "zugzwang_http_requests_in_progress",
        "Requests being answered now.",
        to_u64(connections.requests_in_progress()),
    );
    let name = "zugzwang_http_connections_evicted_total";
    out.family(
        name,
        "Connections closed at the cap to make room for a new one: by state, unfinished (no whole request head yet) or idle (keep-alive between requests).",
        Kind::Counter,
    );
    for state in Evicted::ALL {
        out.sample(
            name,
            &[("state", state.as_str())],
            connections.evicted(state),
        );
    }
    let name = "zugzwang_http_connections_refused_total";
    out.family(
        name,
        "Connections closed before a whole request head arrived: by reason, header_timeout (--header-timeout), idle_timeout (--idle-timeout) or malformed (not an HTTP/1 head).",
        Kind::Counter,
    );
    for reason in Refusal::ALL {
        out.sample(
            name,
            &[("reason", reason.as_str())],
            connections.refused(reason),
        );
    }
}

/// How often the response cache spares a probe, and what it holds.
fn render_cache(out: &mut Exposition, stats: CacheStats) {
    let counters = [
        (
            "zugzwang_response_cache_hits_total",
            "Requests answered from the response cache.",
            stats.hits,
        ),
        (
            "zugzwang_response_cache_misses_total",
            "Requests computed (the first of identical requests in flight).",
            stats.misses,
        ),
        (
            "zugzwang_response_cache_coalesced_total",
            "Requests that waited for an identical request in flight instead of computing.",
            stats.coalesced,
        ),
    ];
    for (name, help, value) in counters {
        out.counter(name, help, value);
    }
    out.gauge(
        "zugzwang_response_cache_entries",
        "Answers held in the response cache.",
        stats.entries,
    );
    out.gauge(
        "zugzwang_response_cache_bytes",
        "Approximate bytes the held answers take.",
        stats.bytes,
    );
    out.gauge(
        "zugzwang_response_cache_capacity_bytes",
        "The response cache's bound in bytes (--cache-mb).",
        stats.capacity_bytes,
    );
}

/// How a request's probes met the memo of positions earlier requests
/// probed (`--probe-memo-mb`).
fn render_memo(out: &mut Exposition, stats: MemoStats) {
    out.counter(
        "zugzwang_probe_memo_hits_total",
        "Positions answered from what an earlier request's probe found.",
        stats.hits,
    );
    out.counter(
        "zugzwang_probe_memo_misses_total",
        "Positions probed in the tables (not in the memo).",
        stats.misses,
    );
    out.gauge(
        "zugzwang_probe_memo_entries",
        "Positions held in the probe memo.",
        stats.entries,
    );
    out.gauge(
        "zugzwang_probe_memo_capacity_entries",
        "The most positions the probe memo holds (--probe-memo-mb).",
        stats.capacity_entries,
    );
}

/// Memory and descriptors: the two things a tablebase server runs out of.
fn render_process(out: &mut Exposition, health: ProcessHealth) {
    out.gauge_if_known(
        "zugzwang_process_resident_memory_bytes",
        "Resident memory of the server process (VmRSS).",
        health.resident_bytes,
    );
    out.gauge_if_known(
        "zugzwang_system_memory_available_bytes",
        "The machine's MemAvailable: memory to be had without swapping, page cache included.",
        health.memory_available_bytes,
    );
    out.gauge_if_known(
        "zugzwang_process_open_fds",
        "File descriptors the process has open (connections, table files and its own).",
        health.open_fds,
    );
    out.gauge_if_known(
        "zugzwang_process_max_fds",
        "The process's open-files limit (left out when unlimited).",
        health.max_fds,
    );
}

fn to_u64(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

/// The `X-Probe-Reads` value: the request's own table reads by tier, and
/// those served from memory without a read (the chunk caches); all zero
/// for an answer from the response cache or one computed for an identical
/// request that was in flight. Where the slow tier is a remote source, the
/// GETs the reads took follow (`gets=`), when there were any.
pub fn probe_reads_header(reads: &RequestReads) -> HeaderValue {
    let tally = reads.tally();
    let gets = match tally.gets {
        0 => String::new(),
        n => format!(" gets={n}"),
    };
    HeaderValue::from_str(&format!(
        "fast={} slow={} cached={}{gets}",
        tally.fast, tally.slow, tally.cached
    ))
    .unwrap_or_else(|_| HeaderValue::from_static("unknown"))
}

/// The response header carrying a request's own table reads.
pub const PROBE_READS: axum::http::HeaderName =
    axum::http::HeaderName::from_static("x-probe-reads");

/// Runs an engine call for a request of `route` counting the table reads
/// it makes, wherever they run (the `X-Probe-Reads` value), and the
/// positions it probes (`zugzwang_http_probes_total`).
pub async fn counting_reads<T>(
    requests: &RequestMetrics,
    route: &'static str,
    work: impl Future<Output = T>,
) -> (T, HeaderValue) {
    let (result, reads) = crate::store::context::counting(work).await;
    requests.record_probes(route, reads.probes());
    (result, probe_reads_header(&reads))
}

/// Runs an engine call for a request of `route` counting the positions it
/// probes (a page's answers, which send no `X-Probe-Reads`).
pub async fn counting_probes<T>(
    requests: &RequestMetrics,
    route: &'static str,
    work: impl Future<Output = T>,
) -> T {
    let (result, reads) = crate::store::context::counting(work).await;
    requests.record_probes(route, reads.probes());
    result
}
