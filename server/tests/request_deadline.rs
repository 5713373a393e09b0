//! A request that does not finish in time (a probe stuck on a dead disk) is
//! answered 504 with a JSON error once the deadline passes.

mod common;

use std::{sync::Arc, time::Duration};

use axum::{body::Body, http::Request};
use http_body_util::BodyExt;
use server::http::request_metrics::RequestMetrics;
use tower::ServiceExt;

#[tokio::test]
async fn a_request_past_its_deadline_is_a_504_with_a_json_error() {
    let stuck = common::stuck_route();
    let metrics = Arc::new(RequestMetrics::default());
    let app = server::http::deadline::layer(stuck, Duration::from_millis(100), metrics.clone());
    let request = Request::get("/standard")
        .body(Body::empty())
        .expect("request");

    // Far above the deadline: only a missing deadline would hit it.
    let response = tokio::time::timeout(Duration::from_secs(60), app.oneshot(request))
        .await
        .expect("answered within the deadline")
        .expect("infallible");

    assert_eq!(response.status(), 504);
    let body = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes();
    let json: serde_json::Value = serde_json::from_slice(&body).expect("JSON body");
    let message = json["error"].as_str().expect("error message");
    assert!(message.contains("deadline"), "{message}");
    assert_eq!(
        metrics.past_deadline(),
        1,
        "the 504 is counted for /metrics"
    );
}
