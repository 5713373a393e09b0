//! Helpers shared by the integration tests.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use server::engine::{Engine, EngineConfig};

/// The 3- and 4-piece tables the repo carries (the same files the binary embeds).
pub fn embedded_tables_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tables")
}

/// The shared 5-piece tables beside the checkout, if present. Tests that need
/// them say so loudly when they are missing instead of passing silently.
pub fn shared_tables_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/syzygy/standard");
    if dir.is_dir() {
        return Some(dir);
    }
    eprintln!(
        "SKIPPED: {} is missing; the 5-piece part of this test did not run",
        dir.display()
    );
    None
}

pub fn shared_file(relative: &str) -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared")
        .join(relative);
    if path.is_file() {
        return Some(path);
    }
    eprintln!("SKIPPED: {} is missing", path.display());
    None
}

pub fn engine_with(dirs: Vec<PathBuf>) -> Engine {
    Engine::open(&EngineConfig {
        tables: dirs,
        ..EngineConfig::default()
    })
    .expect("tables load")
}

/// Copies the embedded tables into a fresh temporary directory the test may damage.
pub fn copy_of_embedded_tables() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for entry in std::fs::read_dir(embedded_tables_dir()).expect("tables dir") {
        let path = entry.expect("entry").path();
        std::fs::copy(&path, dir.path().join(path.file_name().expect("file name"))).expect("copy");
    }
    dir
}

/// The full HTTP router over an engine, as `serve` builds it.
pub fn router(engine: Engine) -> axum::Router {
    use leptos::prelude::LeptosOptions;
    let leptos_options = LeptosOptions::builder()
        .output_name("zugzwang")
        .site_root("target/site")
        .build();
    server::http::router(server::http::AppState::new(
        std::sync::Arc::new(engine),
        leptos_options,
    ))
}

/// A GET request's status, content type and body.
pub async fn get(
    router: &axum::Router,
    uri: &str,
    accept: Option<&str>,
) -> (axum::http::StatusCode, String, Vec<u8>) {
    use http_body_util::BodyExt;
    use tower::ServiceExt;
    let mut request = axum::http::Request::get(uri);
    if let Some(accept) = accept {
        request = request.header("accept", accept);
    }
    let response = router
        .clone()
        .oneshot(request.body(axum::body::Body::empty()).expect("request"))
        .await
        .expect("router answers");
    let status = response.status();
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let body = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes()
        .to_vec();
    (status, content_type, body)
}

/// A GET that must answer with JSON; returns status and the parsed body.
pub async fn get_json(
    router: &axum::Router,
    uri: &str,
) -> (axum::http::StatusCode, serde_json::Value) {
    let (status, content_type, body) = get(router, uri, None).await;
    assert!(
        content_type.starts_with("application/json"),
        "{uri}: content type {content_type}"
    );
    (status, serde_json::from_slice(&body).expect("JSON body"))
}
