//! Running out of file descriptors is an error answer (503), not a crash, and
//! the server recovers once descriptors are free again. Alone in its test
//! binary because it lowers the whole process's open-files limit.

mod common;

use axum::http::StatusCode;

const KQVK: &str = "/standard?fen=4k3/8/8/8/8/8/8/3QK3_w_-_-_0_1";

#[tokio::test]
async fn out_of_descriptors_is_a_503_naming_the_table_then_recovers() {
    let dir = common::copy_of_embedded_tables();
    let router = common::router(common::engine_allowing_unchecked(vec![
        dir.path().to_path_buf(),
    ]));

    let exhausted = common::Exhaustion::start();
    let (status, body) = common::get_json(&router, KQVK).await;
    drop(exhausted);

    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    let message = body["error"].as_str().expect("message");
    assert!(message.contains("too many open files"), "{message}");
    assert!(message.contains("KQvK"), "{message}");

    let (status, body) = common::get_json(&router, KQVK).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["category"], "win");
}
