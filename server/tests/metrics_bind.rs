//! `serve --metrics-bind ADDR` serves `/metrics` on an address of its own
//! and no longer beside the API; without it `/metrics` stays where it was.

mod process;

use std::net::SocketAddr;

use process::{KQVK, get};

/// The address in the "/metrics on http://ADDR/metrics" line of the log.
fn metrics_addr(log: &str) -> SocketAddr {
    let line = log
        .lines()
        .find(|line| line.contains("/metrics on http://"))
        .unwrap_or_else(|| panic!("no /metrics address in the log:\n{log}"));
    let rest =
        &line[line.find("/metrics on http://").expect("found") + "/metrics on http://".len()..];
    let end = rest.find('/').expect("the address ends at the path");
    rest[..end]
        .parse()
        .unwrap_or_else(|err| panic!("{line}: {err}"))
}

#[test]
fn with_metrics_bind_metrics_answers_there_and_not_on_the_api_address() {
    let server = process::serve(&["--metrics-bind", "127.0.0.1:0"]);
    let metrics = metrics_addr(&server.log());
    assert_ne!(metrics, server.addr);

    let (status, body) = get(server.addr, KQVK);
    assert_eq!(status, 200, "the API answers on its address: {body}");
    let (status, _) = get(server.addr, "/metrics");
    assert_eq!(status, 404, "/metrics is not on the API's address");

    let (status, body) = get(metrics, "/metrics");
    assert_eq!(status, 200, "{body}");
    // The API's request is counted in the figures served apart.
    assert!(
        body.lines()
            .any(|line| line.starts_with("zugzwang_http_requests_total{")
                && line.contains("route=\"/standard\"")),
        "{body}"
    );
    let (status, _) = get(metrics, KQVK);
    assert_eq!(status, 404, "only /metrics on the metrics address");
    let (status, _) = get(metrics, "/");
    assert_eq!(status, 404, "no page on the metrics address");
}

#[test]
fn without_metrics_bind_metrics_stays_beside_the_api() {
    let server = process::serve(&[]);
    assert!(!server.log().contains("/metrics on http://"));
    let (status, body) = get(server.addr, "/metrics");
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("zugzwang_http_requests_total"), "{body}");
}
