//! Every API answer names the table set it came from (`X-Table-Set`, and
//! the same digest on `/metrics`), and answers carry an ETag built on it:
//! a client that holds the answer gets 304 without a probe, and other
//! tables give other ETags, so a table update invalidates cached answers.

mod common;

use axum::http::{HeaderMap, Request, StatusCode, header};
use http_body_util::BodyExt;
use tower::ServiceExt;

const ROOK_ENDING: &str = "/standard?fen=4k3/8/8/8/8/8/8/4K2R_w_-_-_0_1";

fn header_of(headers: &HeaderMap, name: &str) -> String {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string()
}

async fn get_if_none_match(
    router: &axum::Router,
    uri: &str,
    etag: &str,
) -> (StatusCode, HeaderMap, Vec<u8>) {
    let request = Request::get(uri)
        .header(header::IF_NONE_MATCH, etag)
        .body(axum::body::Body::empty())
        .expect("request");
    let response = router
        .clone()
        .oneshot(request)
        .await
        .expect("router answers");
    let (parts, body) = response.into_parts();
    let body = body.collect().await.expect("body").to_bytes().to_vec();
    (parts.status, parts.headers, body)
}

#[tokio::test]
async fn answers_errors_and_metrics_name_the_same_table_set() {
    let router = common::router(common::engine_with(vec![]));
    let (status, headers, _) = common::get_with_headers(&router, ROOK_ENDING, None).await;
    assert_eq!(status, StatusCode::OK);
    let digest = header_of(&headers, "x-table-set");
    assert_eq!(digest.len(), 16, "{headers:?}");
    for uri in [
        "/standard?fen=nonsense",
        "/standard/mainline?fen=4k3/8/8/8/8/8/8/4K2R_w_-_-_0_1",
        "/tables",
    ] {
        let (_, headers, _) = common::get_with_headers(&router, uri, None).await;
        assert_eq!(header_of(&headers, "x-table-set"), digest, "{uri}");
    }
    let (_, _, metrics) = common::get_with_headers(&router, "/metrics", None).await;
    let metrics = String::from_utf8(metrics).expect("utf-8");
    assert!(
        metrics.contains(&format!(
            "zugzwang_table_set_info{{digest=\"{digest}\"}} 1\n"
        )),
        "{metrics}"
    );
    assert!(
        metrics.contains("\nzugzwang_tables_installed{variant=\"standard\"} 35\n"),
        "{metrics}"
    );
}

#[tokio::test]
async fn a_held_answer_is_not_sent_again_and_other_tables_change_the_etag() {
    let router = common::router(common::engine_with(vec![]));
    let (_, headers, _) = common::get_with_headers(&router, ROOK_ENDING, None).await;
    let etag = header_of(&headers, "etag");
    let digest = header_of(&headers, "x-table-set");
    assert!(etag.starts_with(&format!("W/\"{digest}-")), "{etag}");
    assert_eq!(header_of(&headers, "cache-control"), "public, max-age=3600");

    // The same position at another move number is the same answer.
    let later = ROOK_ENDING.replace("_0_1", "_0_57");
    let (status, headers, body) = get_if_none_match(&router, &later, &etag).await;
    assert_eq!(status, StatusCode::NOT_MODIFIED);
    assert!(body.is_empty());
    assert_eq!(header_of(&headers, "etag"), etag);
    let (status, _, _) = get_if_none_match(&router, ROOK_ENDING, "W/\"other\"").await;
    assert_eq!(status, StatusCode::OK);

    // Fewer tables (the 3-piece ones only): another set, another ETag.
    let dir = common::copy_of_embedded_tables();
    for entry in std::fs::read_dir(dir.path()).expect("dir") {
        let path = entry.expect("entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if name.starts_with('K') && name.chars().filter(char::is_ascii_uppercase).count() > 3 {
            std::fs::remove_file(&path).expect("remove");
        }
    }
    let fewer = common::router(common::engine_allowing_unchecked(vec![
        dir.path().to_path_buf(),
    ]));
    let (status, headers, _) = get_if_none_match(&fewer, ROOK_ENDING, &etag).await;
    assert_eq!(status, StatusCode::OK);
    assert_ne!(header_of(&headers, "x-table-set"), digest);
    assert_ne!(header_of(&headers, "etag"), etag);
}
