//! Under load the server sheds work with 503 instead of queueing without
//! bound, and identical requests in flight share one answer.

mod common;

use std::sync::Arc;

use futures::future::join_all;
use server::engine::{Engine, EngineConfig, EngineError};

/// Probes go to the blocking threads here: a probe answered inline on
/// the embedded tables finishes within its first poll, so requests joined
/// on one task would never be in progress at once and none would be shed.
fn engine(max_pending: usize) -> Engine {
    Engine::open(&EngineConfig {
        max_pending,
        inline_probes: false,
        ..EngineConfig::default()
    })
    .expect("embedded tables load")
}

fn kqk(square: &str) -> shakmaty::Chess {
    app::position::parse_fen(&format!("4k3/8/8/8/8/8/8/{square} w - - 0 1")).expect("legal")
}

#[tokio::test]
async fn requests_beyond_the_pending_limit_are_refused() {
    let engine = engine(1);
    let positions = ["3QK3", "2Q1K3", "1Q2K3", "Q3K3", "4K2Q"];
    let results = join_all(positions.iter().map(|p| engine.probe(kqk(p)))).await;
    let refused = results
        .iter()
        .filter(|r| matches!(r, Err(EngineError::Overloaded(1))))
        .count();
    assert!(results[0].is_ok(), "the first request is served");
    assert_eq!(refused, positions.len() - 1, "{results:?}");
    let message = results[1].as_ref().expect_err("refused").to_string();
    assert!(message.contains("busy"), "{message}");
    // Once the load is gone, requests are served again.
    assert!(engine.probe(kqk("2Q1K3")).await.is_ok());
}

#[tokio::test]
async fn overload_is_a_503_with_retry_after() {
    let router = common::router(engine(1));
    let uris: Vec<String> = ["3QK3", "2Q1K3", "1Q2K3"]
        .iter()
        .map(|p| format!("/standard?fen=4k3/8/8/8/8/8/8/{p}_w_-_-_0_1"))
        .collect();
    let answers = join_all(uris.iter().map(|uri| common::get(&router, uri, None))).await;
    let refused: Vec<_> = answers
        .iter()
        .filter(|(status, _, _)| status.as_u16() == 503)
        .collect();
    assert!(!refused.is_empty(), "no request was refused");
    let body: serde_json::Value = serde_json::from_slice(&refused[0].2).expect("JSON error");
    assert!(
        body["error"]
            .as_str()
            .expect("message")
            .contains("try again"),
        "{body}"
    );
}

#[tokio::test]
async fn identical_requests_in_flight_share_one_answer() {
    let engine = engine(512);
    let answers = join_all((0..20).map(|_| engine.probe(kqk("3QK3")))).await;
    let first = answers[0].as_ref().expect("answer");
    for answer in &answers {
        let answer = answer.as_ref().expect("answer");
        assert!(Arc::ptr_eq(first, answer), "a second computation happened");
    }
}
