//! `GET /metrics` shows what an operator watches (requests by route and
//! status, their latency, the response cache, load, connections, process
//! health) in a form Prometheus accepts, and no path of the server's disks.

mod common;

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use axum::{Router, http::StatusCode};
use leptos::prelude::LeptosOptions;
use server::{
    exposition::Exposition,
    http::{AppState, request_metrics::RequestMetrics},
    service::{
        connections::{ConnectionLimits, Connections},
        request_log::RequestLog,
    },
};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
};
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

const ROOK_ENDING: &str = "/standard?fen=4k3/8/8/8/8/8/8/4K2R_w_-_-_0_1";

/// One sample line: `name{labels} value`.
#[derive(Debug)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

/// Parses the text format strictly: every line is a HELP, a TYPE or a
/// sample; every sample belongs to a family whose TYPE came before it; a
/// family is declared once. Panics naming the first line that breaks a rule.
fn parse(text: &str) -> Vec<Sample> {
    let mut types: BTreeMap<String, String> = BTreeMap::new();
    let mut samples = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').expect("TYPE name kind");
            assert!(
                ["counter", "gauge", "histogram", "summary", "untyped"].contains(&kind),
                "unknown type: {line}"
            );
            assert!(
                types.insert(name.to_string(), kind.to_string()).is_none(),
                "family declared twice: {line}"
            );
            continue;
        }
        if line.starts_with("# HELP ") {
            continue;
        }
        assert!(!line.starts_with('#'), "unknown comment: {line}");
        let sample = parse_sample(line);
        let family = family_of(&sample.name, &types)
            .unwrap_or_else(|| panic!("sample without a TYPE before it: {line}"));
        if types[&family] == "counter" {
            assert!(
                family.ends_with("_total"),
                "counter not named _total: {line}"
            );
        }
        samples.push(sample);
    }
    samples
}

fn family_of(name: &str, types: &BTreeMap<String, String>) -> Option<String> {
    if types.contains_key(name) {
        return Some(name.to_string());
    }
    ["_bucket", "_sum", "_count"].iter().find_map(|suffix| {
        let base = name.strip_suffix(suffix)?;
        (types.get(base).map(String::as_str) == Some("histogram")).then(|| base.to_string())
    })
}

fn parse_sample(line: &str) -> Sample {
    let (series, value) = line
        .rsplit_once(' ')
        .unwrap_or_else(|| panic!("no value: {line}"));
    let value = match value {
        "+Inf" => f64::INFINITY,
        "-Inf" => f64::NEG_INFINITY,
        v => v
            .parse()
            .unwrap_or_else(|_| panic!("bad value {v:?}: {line}")),
    };
    let (name, labels) = match series.split_once('{') {
        Some((name, labels)) => {
            let labels = labels
                .strip_suffix('}')
                .unwrap_or_else(|| panic!("unclosed labels: {line}"));
            (name, parse_labels(labels, line))
        }
        None => (series, BTreeMap::new()),
    };
    assert!(
        !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
            && !name.starts_with(|c: char| c.is_ascii_digit()),
        "bad metric name: {line}"
    );
    Sample {
        name: name.to_string(),
        labels,
        value,
    }
}

/// `a="x",b="y"`, with `\\`, `\"` and `\n` escapes in values.
fn parse_labels(mut text: &str, line: &str) -> BTreeMap<String, String> {
    let mut labels = BTreeMap::new();
    while !text.is_empty() {
        let (name, rest) = text
            .split_once("=\"")
            .unwrap_or_else(|| panic!("bad label: {line}"));
        assert!(
            name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
            "bad label name {name:?}: {line}"
        );
        let mut value = String::new();
        let mut chars = rest.char_indices();
        let end = loop {
            match chars.next() {
                Some((_, '\\')) => match chars.next() {
                    Some((_, 'n')) => value.push('\n'),
                    Some((_, c @ ('\\' | '"'))) => value.push(c),
                    _ => panic!("bad escape: {line}"),
                },
                Some((i, '"')) => break i,
                Some((_, c)) => value.push(c),
                None => panic!("unterminated label value: {line}"),
            }
        };
        labels.insert(name.to_string(), value);
        text = &rest[end + 1..];
        text = text.strip_prefix(',').unwrap_or(text);
    }
    labels
}

/// The value of the one sample with this name and these labels.
fn value(samples: &[Sample], name: &str, labels: &[(&str, &str)]) -> f64 {
    let matching: Vec<&Sample> = samples
        .iter()
        .filter(|s| {
            s.name == name
                && s.labels.len() == labels.len()
                && labels
                    .iter()
                    .all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v))
        })
        .collect();
    assert_eq!(matching.len(), 1, "{name} {labels:?}: {matching:?}");
    matching[0].value
}

async fn scrape(router: &Router) -> (String, Vec<Sample>) {
    let (status, content_type, body) = common::get(router, "/metrics", None).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        content_type.starts_with("text/plain; version=0.0.4"),
        "{content_type}"
    );
    let text = String::from_utf8(body).expect("UTF-8");
    let samples = parse(&text);
    (text, samples)
}

#[tokio::test]
async fn requests_are_counted_by_route_and_status_with_their_latency() {
    let router = common::router(common::engine_with(Vec::new()));
    for _ in 0..2 {
        assert_eq!(
            common::get(&router, ROOK_ENDING, None).await.0,
            StatusCode::OK
        );
    }
    let bad = common::get(&router, "/standard?fen=not-a-fen", None).await;
    assert_eq!(bad.0, StatusCode::BAD_REQUEST);
    let mainline = ROOK_ENDING.replace("/standard", "/standard/mainline");
    assert_eq!(
        common::get(&router, &mainline, None).await.0,
        StatusCode::OK
    );
    let missing = common::get(&router, "/pkg/no-such-file.wasm", None).await;
    assert_eq!(missing.0, StatusCode::NOT_FOUND);
    let scanner = common::get(&router, "/wp-admin/setup.php", None).await;
    assert_eq!(scanner.0, StatusCode::NOT_FOUND);

    let (_, samples) = scrape(&router).await;

    let requests = |route, status| {
        value(
            &samples,
            "zugzwang_http_requests_total",
            &[("route", route), ("status", status)],
        )
    };
    assert_eq!(requests("/standard", "200"), 2.0);
    assert_eq!(requests("/standard", "400"), 1.0);
    assert_eq!(requests("/standard/mainline", "200"), 1.0);
    // Unmatched paths share one label, whatever clients send.
    assert_eq!(requests("other", "404"), 2.0);
    let routes: std::collections::BTreeSet<&str> = samples
        .iter()
        .filter_map(|s| s.labels.get("route").map(String::as_str))
        .collect();
    assert!(
        routes
            .iter()
            .all(|r| ["/standard", "/standard/mainline", "other"].contains(r)),
        "{routes:?}"
    );

    let histogram = "zugzwang_http_request_duration_seconds";
    let count = value(
        &samples,
        &format!("{histogram}_count"),
        &[("route", "/standard")],
    );
    assert_eq!(count, 3.0);
    let inf = value(
        &samples,
        &format!("{histogram}_bucket"),
        &[("route", "/standard"), ("le", "+Inf")],
    );
    assert_eq!(inf, count);
    let sum = value(
        &samples,
        &format!("{histogram}_sum"),
        &[("route", "/standard")],
    );
    assert!(sum > 0.0 && sum < 60.0, "{sum}");
    let buckets: Vec<f64> = samples
        .iter()
        .filter(|s| {
            s.name == format!("{histogram}_bucket")
                && s.labels.get("route").map(String::as_str) == Some("/standard")
        })
        .map(|s| s.value)
        .collect();
    assert!(
        buckets.windows(2).all(|w| w[0] <= w[1]),
        "not cumulative: {buckets:?}"
    );
}

#[tokio::test]
async fn metrics_scrapes_and_the_page_are_routes_of_their_own() {
    let router = common::router(common::engine_with(Vec::new()));
    let fen = "4k3/8/8/8/8/8/8/4K2R_w_-_-_0_1";
    assert_eq!(
        common::get(&router, &format!("/?fen={fen}"), None).await.0,
        StatusCode::OK
    );
    scrape(&router).await;
    let (_, samples) = scrape(&router).await;
    let requests = |route| {
        value(
            &samples,
            "zugzwang_http_requests_total",
            &[("route", route), ("status", "200")],
        )
    };
    assert_eq!(requests("/"), 1.0);
    // The scrape being answered is not counted yet: only the one before it.
    assert_eq!(requests("/metrics"), 1.0);
}

#[tokio::test]
async fn the_response_cache_shows_hits_misses_and_its_size() {
    let router = common::router(common::engine_with(Vec::new()));
    for _ in 0..3 {
        assert_eq!(
            common::get(&router, ROOK_ENDING, None).await.0,
            StatusCode::OK
        );
    }
    let (_, samples) = scrape(&router).await;
    let one = |name| value(&samples, name, &[]);
    assert!(one("zugzwang_response_cache_hits_total") >= 2.0);
    assert!(one("zugzwang_response_cache_misses_total") >= 1.0);
    assert!(one("zugzwang_response_cache_coalesced_total") >= 0.0);
    assert!(one("zugzwang_response_cache_entries") >= 1.0);
    let bytes = one("zugzwang_response_cache_bytes");
    assert!(bytes > 0.0, "{bytes}");
    assert!(bytes <= one("zugzwang_response_cache_capacity_bytes"));
    assert_eq!(one("zugzwang_requests_shed_total"), 0.0);
    assert_eq!(one("zugzwang_http_requests_past_deadline_total"), 0.0);
}

#[tokio::test]
async fn process_health_shows_memory_and_descriptors() {
    let router = common::router(common::engine_with(Vec::new()));
    let (_, samples) = scrape(&router).await;
    let one = |name| value(&samples, name, &[]);
    let rss = one("zugzwang_process_resident_memory_bytes");
    assert!(rss > f64::from(1 << 20), "RSS {rss}");
    let available = one("zugzwang_system_memory_available_bytes");
    assert!(available > f64::from(1 << 20), "MemAvailable {available}");
    let fds = one("zugzwang_process_open_fds");
    assert!(fds >= 3.0, "open fds {fds}");
    assert!(fds <= one("zugzwang_process_max_fds"));
    // Kept from the store's metrics, not repeated.
    assert!(one("zugzwang_table_handles_open") >= 0.0);
}

#[tokio::test]
async fn no_path_of_the_servers_disks_is_shown() {
    let tables = common::copy_of_embedded_tables();
    let router = common::router(common::engine_allowing_unchecked(vec![
        tables.path().to_path_buf(),
    ]));
    assert_eq!(
        common::get(&router, ROOK_ENDING, None).await.0,
        StatusCode::OK
    );
    let missing = common::get(&router, "/pkg/no-such-file.wasm", None).await;
    assert_eq!(missing.0, StatusCode::NOT_FOUND);
    let (text, samples) = scrape(&router).await;
    let dir = tables.path().to_string_lossy();
    assert!(!text.contains(dir.as_ref()), "{dir} shown in /metrics");
    for sample in &samples {
        for (label, value) in &sample.labels {
            assert!(
                label == "route" || !value.starts_with('/'),
                "a path in {}: {label}={value}",
                sample.name
            );
        }
    }
}

#[tokio::test]
async fn a_request_past_its_deadline_is_counted_by_route() {
    let stuck = common::stuck_route();
    let metrics = Arc::new(RequestMetrics::default());
    let inner = server::http::request_metrics::layer(stuck, Arc::clone(&metrics));
    let app = server::http::deadline::layer(inner, Duration::from_millis(50), Arc::clone(&metrics));
    let request = axum::http::Request::get("/standard?fen=x")
        .body(axum::body::Body::empty())
        .expect("request");
    let response = app.oneshot(request).await.expect("infallible");
    assert_eq!(response.status(), StatusCode::GATEWAY_TIMEOUT);

    let mut out = Exposition::default();
    metrics.render(&mut out);
    let samples = parse(&out.into_string());
    let labels = [("route", "/standard"), ("status", "504")];
    // Once, though both layers saw it: the inner one was dropped with the request.
    assert_eq!(
        value(&samples, "zugzwang_http_requests_total", &labels),
        1.0
    );
    assert_eq!(
        value(&samples, "zugzwang_http_requests_past_deadline_total", &[]),
        1.0
    );
}

/// Over real sockets, as `serve` runs it: an idle connection and the one
/// asking for `/metrics` are both counted, against the cap; nothing was
/// evicted or refused.
#[tokio::test]
async fn open_connections_are_counted() {
    let connections = Arc::new(Connections::new(ConnectionLimits {
        header_timeout: Duration::from_secs(30),
        idle_timeout: Duration::from_secs(30),
        max_connections: 16,
        unfinished_grace: Duration::from_millis(20),
    }));
    let options = LeptosOptions::builder()
        .output_name("zugzwang")
        .site_root("target/site")
        .build();
    let state = AppState {
        connections: Some(connections.stats()),
        ..AppState::new(Arc::new(common::engine_with(Vec::new())), options)
    };
    let app = server::http::router(state);
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("address");
    let stop = CancellationToken::new();
    let serving = tokio::spawn({
        let (connections, stop) = (Arc::clone(&connections), stop.clone());
        async move { connections.accept_until(listener, app, &stop).await }
    });

    let _idle = TcpStream::connect(addr).await.expect("connect");
    let mut client = TcpStream::connect(addr).await.expect("connect");
    client
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
        .await
        .expect("send");
    let mut answer = String::new();
    tokio::time::timeout(Duration::from_secs(30), client.read_to_string(&mut answer))
        .await
        .expect("answered in time")
        .expect("read");

    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let body = answer.split_once("\r\n\r\n").expect("head and body").1;
    let samples = parse(body);
    assert_eq!(value(&samples, "zugzwang_http_connections_open", &[]), 2.0);
    assert_eq!(
        value(&samples, "zugzwang_http_requests_in_progress", &[]),
        1.0
    );
    assert_eq!(value(&samples, "zugzwang_http_connections_max", &[]), 16.0);
    for state in ["unfinished", "idle"] {
        let labels = [("state", state)];
        let evicted = value(&samples, "zugzwang_http_connections_evicted_total", &labels);
        assert_eq!(evicted, 0.0, "{state}");
    }
    for reason in ["header_timeout", "idle_timeout", "malformed"] {
        let labels = [("reason", reason)];
        let refused = value(&samples, "zugzwang_http_connections_refused_total", &labels);
        assert_eq!(refused, 0.0, "{reason}");
    }
    stop.cancel();
    serving.await.expect("accept loop ends");
}

/// With `--request-log`, the positions it had to leave out are on /metrics
/// (none here: its writer keeps up); without it, the counter is not shown.
#[tokio::test]
async fn the_request_logs_dropped_count_is_shown_when_there_is_a_log() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let log = RequestLog::open(&dir.path().join("requests.log"), 1 << 20).expect("log opens");
    let options = LeptosOptions::builder()
        .output_name("zugzwang")
        .site_root("target/site")
        .build();
    let engine = Arc::new(common::engine_with(Vec::new()));
    let with_log = server::http::router(AppState {
        request_log: Some(log),
        ..AppState::new(Arc::clone(&engine), options.clone())
    });
    let (_, samples) = scrape(&with_log).await;
    assert_eq!(
        value(&samples, "zugzwang_request_log_dropped_total", &[]),
        0.0
    );
    let without = server::http::router(AppState::new(engine, options));
    let (text, _) = scrape(&without).await;
    assert!(
        !text.contains("zugzwang_request_log_dropped_total"),
        "{text}"
    );
}
