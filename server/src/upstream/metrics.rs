//! What asking upstream servers cost and brought, for `/metrics`: requests
//! per server by outcome, requests not sent (and why), the breaker, the
//! store's hits and size, and the askers that waited for a request already out.

use std::{
    sync::atomic::{AtomicU64, Ordering},
    time::Instant,
};

use super::{Upstreams, politeness::Refusal};
use crate::{
    exposition::{Exposition, Kind},
    sync::lock,
};

fn add(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

fn get(counter: &AtomicU64) -> u64 {
    counter.load(Ordering::Relaxed)
}

/// One server's counts.
#[derive(Debug, Default)]
pub struct ServerCounts {
    sent: AtomicU64,
    answered: AtomicU64,
    not_known: AtomicU64,
    rate_limited: AtomicU64,
    failed: AtomicU64,
    refused: AtomicU64,
    skipped_budget: AtomicU64,
    skipped_paused: AtomicU64,
    skipped_breaker: AtomicU64,
}

impl ServerCounts {
    pub fn sent(&self) {
        add(&self.sent);
    }
    pub fn answered(&self) {
        add(&self.answered);
    }
    pub fn not_known(&self) {
        add(&self.not_known);
    }
    pub fn rate_limited(&self) {
        add(&self.rate_limited);
    }
    pub fn failed(&self) {
        add(&self.failed);
    }
    pub fn refused(&self) {
        add(&self.refused);
    }
    pub fn skipped(&self, refusal: Refusal) {
        add(match refusal {
            Refusal::Budget { .. } => &self.skipped_budget,
            Refusal::Paused { .. } => &self.skipped_paused,
            Refusal::BreakerOpen { .. } | Refusal::TrialOut => &self.skipped_breaker,
        });
    }
}

/// Counts across servers.
#[derive(Debug, Default)]
pub struct Counts {
    store_hits: AtomicU64,
    stored: AtomicU64,
    store_failed: AtomicU64,
    coalesced: AtomicU64,
}

impl Counts {
    pub fn store_hit(&self) {
        add(&self.store_hits);
    }
    pub fn stored(&self) {
        add(&self.stored);
    }
    pub fn store_failed(&self) {
        add(&self.store_failed);
    }
    pub fn coalesced(&self) {
        add(&self.coalesced);
    }
}

/// Writes the upstream families.
pub fn render(upstreams: &Upstreams, out: &mut Exposition) {
    let servers = upstreams.servers();
    server_counters(
        out,
        servers,
        "zugzwang_upstream_requests_total",
        "Requests sent to upstream servers (--upstream), by outcome: answered (checked and served), not_known (a 4xx: the server does not answer it), rate_limited (429), failed (no answer in time, the connection, a 5xx), refused (an answer not taken: malformed, wrong moves, too large, redirected to another host).",
        |c| {
            vec![
                (Some(("outcome", "answered")), &c.answered),
                (Some(("outcome", "not_known")), &c.not_known),
                (Some(("outcome", "rate_limited")), &c.rate_limited),
                (Some(("outcome", "failed")), &c.failed),
                (Some(("outcome", "refused")), &c.refused),
            ]
        },
    );
    server_counters(
        out,
        servers,
        "zugzwang_upstream_requests_sent_total",
        "Requests sent to each upstream server (counted as they go out).",
        |c| vec![(None, &c.sent)],
    );
    server_counters(
        out,
        servers,
        "zugzwang_upstream_skipped_total",
        "Upstream requests not sent, the local answer given at once instead: budget (the token bucket was empty), paused (after a 429 or Retry-After), breaker (the server failed repeatedly).",
        |c| {
            vec![
                (Some(("reason", "budget")), &c.skipped_budget),
                (Some(("reason", "paused")), &c.skipped_paused),
                (Some(("reason", "breaker")), &c.skipped_breaker),
            ]
        },
    );
    let breaker = "zugzwang_upstream_breaker_state";
    out.family(
        breaker,
        "Each upstream server's circuit breaker: 0 closed (asked), 1 open (failed repeatedly: not asked), 2 half-open (one trial request allowed).",
        Kind::Gauge,
    );
    let now = Instant::now();
    for server in servers {
        let state = lock(&server.politeness).breaker(now);
        out.sample(breaker, &[("upstream", server.host())], state.gauge());
    }
    let counts = &upstreams.counts;
    out.counter(
        "zugzwang_upstream_store_hits_total",
        "Answers served from the store of upstream answers, without asking upstream.",
        get(&counts.store_hits),
    );
    out.counter(
        "zugzwang_upstream_stored_total",
        "Upstream answers checked and kept in the store.",
        get(&counts.stored),
    );
    out.counter(
        "zugzwang_upstream_store_errors_total",
        "Upstream answers that could not be written to the store (see the log).",
        get(&counts.store_failed),
    );
    out.counter(
        "zugzwang_upstream_coalesced_total",
        "Requests that waited for an upstream request already out for the same answer instead of sending their own.",
        get(&counts.coalesced),
    );
    let store = upstreams.store();
    let size = store.size();
    out.gauge(
        "zugzwang_upstream_store_answers",
        "Answers in the store of upstream answers.",
        size.answers,
    );
    out.gauge(
        "zugzwang_upstream_store_bytes",
        "Bytes of keys and answers in the store (bounded by --upstream-store-mb).",
        size.bytes,
    );
    out.gauge(
        "zugzwang_upstream_store_file_bytes",
        "Size of the store's file in the state directory (0: kept in memory).",
        size.file_bytes,
    );
    out.counter(
        "zugzwang_upstream_store_evicted_total",
        "Answers dropped from the store, the first learnt first, to stay within --upstream-store-mb.",
        store.evicted(),
    );
}

/// A counter family with a sample per server and per value of its one
/// other label (none for `None`).
fn server_counters(
    out: &mut Exposition,
    servers: &[super::Server],
    name: &str,
    help: &str,
    counters: impl Fn(&ServerCounts) -> Vec<(Option<(&'static str, &'static str)>, &AtomicU64)>,
) {
    out.family(name, help, Kind::Counter);
    for server in servers {
        for (label, counter) in counters(&server.counts) {
            let mut labels = vec![("upstream", server.host())];
            labels.extend(label);
            out.sample(name, &labels, get(counter));
        }
    }
}
