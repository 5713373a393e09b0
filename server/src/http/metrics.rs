//! `GET /metrics`: table reads per tier and kind, lookups, prefix fallbacks,
//! integrity findings and scrub progress, in the Prometheus text format.

use axum::{
    http::{HeaderValue, header},
    response::{IntoResponse, Response},
};

use crate::store::metrics;

pub async fn metrics() -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
        )],
        metrics::global().render(),
    )
        .into_response()
}

/// The `X-Probe-Reads` value: the request's own table reads by tier, and
/// the blocks served from the verified-block cache without a read (all zero
/// for an answer from the response cache or one computed for an identical
/// request that was in flight).
pub fn probe_reads_header(reads: &metrics::RequestReads) -> HeaderValue {
    let tally = reads.tally();
    HeaderValue::from_str(&format!(
        "fast={} slow={} cached={}",
        tally.fast, tally.slow, tally.cached
    ))
    .unwrap_or_else(|_| HeaderValue::from_static("unknown"))
}

/// The response header carrying a request's own table reads.
pub const PROBE_READS: axum::http::HeaderName =
    axum::http::HeaderName::from_static("x-probe-reads");

/// Runs an engine call counting the table reads it makes, wherever they run.
pub async fn counting_reads<T>(work: impl Future<Output = T>) -> (T, HeaderValue) {
    let reads = std::sync::Arc::new(metrics::RequestReads::default());
    let result = metrics::REQUEST_READS
        .scope(std::sync::Arc::clone(&reads), work)
        .await;
    (result, probe_reads_header(&reads))
}
