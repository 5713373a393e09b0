//! Requests by route and status, how long they took to answer, and the
//! positions probed for them.
//!
//! The route is the template the request matched (`/standard`, `/metrics`,
//! the page `/`), never the path sent: paths are chosen by clients, and a
//! label per path would let any scanner grow `/metrics` without bound.
//! Everything unmatched (static files, typos, probes for `/wp-admin`) is
//! `other`.

use std::{
    collections::BTreeMap,
    sync::{
        Arc, Mutex,
        atomic::{AtomicU64, Ordering::Relaxed},
    },
    time::{Duration, Instant},
};

use axum::{
    Router,
    extract::{MatchedPath, Request, State},
    http::StatusCode,
    middleware::{self, Next},
    response::Response,
};

use crate::{
    exposition::{Exposition, Kind},
    sync::lock,
};

/// The route label of requests that matched no route.
pub const OTHER_ROUTE: &str = "other";

/// Upper bounds of the latency buckets, in seconds: from an answer out of
/// the response cache (well under a millisecond) to the request deadline
/// (10 s by default).
const BUCKETS: [f64; 14] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

const REQUESTS: &str = "zugzwang_http_requests_total";
const DURATION: &str = "zugzwang_http_request_duration_seconds";
const PAST_DEADLINE: &str = "zugzwang_http_requests_past_deadline_total";
const PROBES: &str = "zugzwang_http_probes_total";

/// Counts of answered requests, shared by the layer that records them and
/// the `/metrics` handler that shows them.
#[derive(Debug, Default)]
pub struct RequestMetrics {
    routes: Mutex<BTreeMap<String, RouteStats>>,
    past_deadline: AtomicU64,
    /// Positions probed in the tables, by route: what each kind of request
    /// costs the tables, whichever layer answers it.
    probes: Mutex<BTreeMap<&'static str, u64>>,
}

#[derive(Debug, Default)]
struct RouteStats {
    by_status: BTreeMap<u16, u64>,
    latency: Histogram,
}

#[derive(Debug, Default)]
struct Histogram {
    /// Per bucket, not cumulative: made cumulative when rendered.
    buckets: [u64; BUCKETS.len()],
    count: u64,
    sum_seconds: f64,
}

impl Histogram {
    fn observe(&mut self, took: Duration) {
        let seconds = took.as_secs_f64();
        if let Some(bucket) = BUCKETS.iter().position(|&bound| seconds <= bound) {
            self.buckets[bucket] += 1;
        }
        self.count += 1;
        self.sum_seconds += seconds;
    }

    fn render(&self, out: &mut Exposition, route: &str) {
        let bucket = format!("{DURATION}_bucket");
        let mut cumulative = 0;
        for (bound, count) in BUCKETS.iter().zip(&self.buckets) {
            cumulative += count;
            let le = bound.to_string();
            out.sample(&bucket, &[("route", route), ("le", &le)], cumulative);
        }
        out.sample(&bucket, &[("route", route), ("le", "+Inf")], self.count);
        let labels = [("route", route)];
        out.sample(&format!("{DURATION}_sum"), &labels, self.sum_seconds);
        out.sample(&format!("{DURATION}_count"), &labels, self.count);
    }
}

impl RequestMetrics {
    /// Records one answered request.
    pub fn record(&self, route: &str, status: StatusCode, took: Duration) {
        let mut routes = lock(&self.routes);
        // Looked up before inserting so that the common case allocates nothing.
        let stats = match routes.get_mut(route) {
            Some(stats) => stats,
            None => routes.entry(route.to_string()).or_default(),
        };
        *stats.by_status.entry(status.as_u16()).or_default() += 1;
        stats.latency.observe(took);
    }

    /// Records a request answered 504 because its deadline passed: counted
    /// with the others by route and status, and apart, since a rise there
    /// points at a failing disk rather than at clients.
    pub fn record_past_deadline(&self, route: &str, took: Duration) {
        self.past_deadline.fetch_add(1, Relaxed);
        self.record(route, StatusCode::GATEWAY_TIMEOUT, took);
    }

    pub fn past_deadline(&self) -> u64 {
        self.past_deadline.load(Relaxed)
    }

    /// Counts `positions` probed for a request of `route` (a route
    /// template, as the other figures are labelled).
    pub fn record_probes(&self, route: &'static str, positions: u64) {
        if positions > 0 {
            *lock(&self.probes).entry(route).or_default() += positions;
        }
    }

    /// Positions probed for requests of `route` since start.
    pub fn probes(&self, route: &str) -> u64 {
        lock(&self.probes).get(route).copied().unwrap_or(0)
    }

    pub fn render(&self, out: &mut Exposition) {
        let routes = lock(&self.routes);
        out.family(
            REQUESTS,
            "HTTP requests answered, by matched route and status.",
            Kind::Counter,
        );
        for (route, stats) in routes.iter() {
            for (status, count) in &stats.by_status {
                let status = status.to_string();
                out.sample(REQUESTS, &[("route", route), ("status", &status)], count);
            }
        }
        out.family(
            DURATION,
            "Time from a request's arrival to its response head, by matched route.",
            Kind::Histogram,
        );
        for (route, stats) in routes.iter() {
            stats.latency.render(out, route);
        }
        drop(routes);
        out.counter(
            PAST_DEADLINE,
            "Requests answered 504 because they were not done within --request-timeout.",
            self.past_deadline(),
        );
        out.family(
            PROBES,
            "Positions probed in the tables (the probe memo's and the response cache's answers not counted) for requests, by matched route: the API's answers and lines, and the pages' answers.",
            Kind::Counter,
        );
        for (route, probes) in lock(&self.probes).iter() {
            out.sample(PROBES, &[("route", route)], probes);
        }
    }
}

/// The route label of a request: its matched route template, or [`OTHER_ROUTE`].
/// Only known inside a router's per-route layers (see [`layer`]).
pub fn route_of(request: &Request) -> String {
    request
        .extensions()
        .get::<MatchedPath>()
        .map_or(OTHER_ROUTE, MatchedPath::as_str)
        .to_string()
}

/// Records every request `router` answers. `Router::layer` wraps each route
/// (and the fallback) on its own, after routing, so the matched route is known.
pub fn layer(router: Router, metrics: Arc<RequestMetrics>) -> Router {
    router.layer(middleware::from_fn_with_state(metrics, observe))
}

/// A request dropped before its answer (the client left, or the deadline
/// layer outside gave up on it) is not recorded here; the deadline layer
/// records its own 504s.
async fn observe(
    State(metrics): State<Arc<RequestMetrics>>,
    request: Request,
    next: Next,
) -> Response {
    let started = Instant::now();
    let route = route_of(&request);
    let response = next.run(request).await;
    metrics.record(&route, response.status(), started.elapsed());
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rendered(metrics: &RequestMetrics) -> String {
        let mut out = Exposition::default();
        metrics.render(&mut out);
        out.into_string()
    }

    #[test]
    fn counts_by_route_and_status() {
        let metrics = RequestMetrics::default();
        metrics.record("/standard", StatusCode::OK, Duration::from_millis(3));
        metrics.record("/standard", StatusCode::OK, Duration::from_millis(30));
        metrics.record("/standard", StatusCode::BAD_REQUEST, Duration::ZERO);
        let text = rendered(&metrics);
        assert!(
            text.contains("zugzwang_http_requests_total{route=\"/standard\",status=\"200\"} 2\n")
        );
        assert!(
            text.contains("zugzwang_http_requests_total{route=\"/standard\",status=\"400\"} 1\n")
        );
    }

    #[test]
    fn histogram_buckets_are_cumulative() {
        let metrics = RequestMetrics::default();
        metrics.record("/", StatusCode::OK, Duration::from_millis(3));
        metrics.record("/", StatusCode::OK, Duration::from_secs(60));
        let text = rendered(&metrics);
        let bucket = |le: &str| {
            format!("zugzwang_http_request_duration_seconds_bucket{{route=\"/\",le=\"{le}\"}}")
        };
        assert!(text.contains(&format!("{} 0\n", bucket("0.0025"))));
        assert!(text.contains(&format!("{} 1\n", bucket("0.005"))));
        assert!(text.contains(&format!("{} 1\n", bucket("10"))));
        assert!(text.contains(&format!("{} 2\n", bucket("+Inf"))));
        assert!(text.contains("zugzwang_http_request_duration_seconds_count{route=\"/\"} 2\n"));
    }

    #[test]
    fn probes_by_route() {
        let metrics = RequestMetrics::default();
        metrics.record_probes("/practice", 40);
        metrics.record_probes("/practice", 2);
        metrics.record_probes("/standard", 0);
        let text = rendered(&metrics);
        assert!(text.contains("zugzwang_http_probes_total{route=\"/practice\"} 42\n"));
        assert!(!text.contains("route=\"/standard\"}"));
        assert_eq!(metrics.probes("/practice"), 42);
    }

    #[test]
    fn past_deadline_is_a_504_too() {
        let metrics = RequestMetrics::default();
        metrics.record_past_deadline("/standard", Duration::from_secs(10));
        let text = rendered(&metrics);
        assert!(text.contains("zugzwang_http_requests_past_deadline_total 1\n"));
        assert!(
            text.contains("zugzwang_http_requests_total{route=\"/standard\",status=\"504\"} 1\n")
        );
    }
}
