//! The headers browsers expect, on every kind of answer the router gives:
//! the pages (`/`, `/practice`, the 404 page) carry a Content-Security-Policy
//! whose nonce every inline script and style of the page carries (and no
//! inline script goes without), `frame-ancestors 'none'`; every answer (API,
//! `/pkg/*`, `/metrics`, `/tables`, 404s, the deadline's 504) carries
//! `X-Content-Type-Options: nosniff` and `Referrer-Policy: same-origin`; the
//! API stays open to other origins.

mod common;

use std::{path::Path, sync::Arc, time::Duration};

use axum::{
    body::Body,
    http::{HeaderMap, Request, StatusCode},
};
use http_body_util::BodyExt;
use leptos::prelude::LeptosOptions;
use server::http::request_metrics::RequestMetrics;
use tower::ServiceExt;

const WASM: &str = "zugzwang.AbCdEfGhIjKlMnOpQrSt-_.wasm";
const CSS_HASH: &str = "o0lsyJf-22cCJqzS4eRkHA";

/// A built site: a hashed WASM file, the stylesheet (written into the
/// page's head, so its `<style>` must carry the nonce) and the hash list.
fn site() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let pkg = dir.path().join("pkg");
    std::fs::create_dir_all(&pkg).expect("mkdir");
    std::fs::write(pkg.join(WASM), b"\0asm\x01\0\0\0").expect("wasm");
    std::fs::write(
        pkg.join(format!("zugzwang.{CSS_HASH}.css")),
        ".explorer { display: grid; }\n",
    )
    .expect("css");
    std::fs::write(
        dir.path().join("hash.txt"),
        format!("js: AAA\nwasm: BBB\ncss: {CSS_HASH}\n"),
    )
    .expect("hashes");
    dir
}

fn router(site: &Path) -> axum::Router {
    let options = LeptosOptions::builder()
        .output_name("zugzwang")
        .site_root(site.display().to_string())
        .hash_files(true)
        .hash_file(site.join("hash.txt").display().to_string().into())
        .build();
    // The tables compiled in: served without a directory to check.
    let engine = common::engine_with(Vec::new());
    server::http::router(server::http::AppState::new(Arc::new(engine), options))
}

async fn get(router: &axum::Router, uri: &str) -> (StatusCode, HeaderMap, String) {
    let request = Request::get(uri)
        .header("origin", "https://elsewhere.example")
        .body(Body::empty())
        .expect("request");
    let response = router.clone().oneshot(request).await.expect("answers");
    let (parts, body) = response.into_parts();
    let body = body.collect().await.expect("body").to_bytes();
    (
        parts.status,
        parts.headers,
        String::from_utf8_lossy(&body).into_owned(),
    )
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// The headers every answer carries.
fn assert_everywhere(uri: &str, headers: &HeaderMap) {
    assert_eq!(
        header(headers, "x-content-type-options"),
        Some("nosniff"),
        "{uri}"
    );
    assert_eq!(
        header(headers, "referrer-policy"),
        Some("same-origin"),
        "{uri}"
    );
}

/// The nonce the policy allows scripts by; checks the policy's other parts.
fn policy_nonce(uri: &str, headers: &HeaderMap) -> String {
    let policy = header(headers, "content-security-policy")
        .unwrap_or_else(|| panic!("{uri}: no Content-Security-Policy"));
    let directive = |name: &str| -> String {
        policy
            .split(';')
            .map(str::trim)
            .find(|d| d.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("{uri}: no {name} in {policy}"))
            .to_string()
    };
    assert_eq!(directive("default-src"), "default-src 'none'", "{uri}");
    assert_eq!(
        directive("frame-ancestors"),
        "frame-ancestors 'none'",
        "{uri}"
    );
    assert_eq!(directive("connect-src"), "connect-src 'self'", "{uri}");
    assert_eq!(directive("img-src"), "img-src 'self' data:", "{uri}");
    assert!(!policy.contains("unsafe-inline"), "{uri}: {policy}");
    assert!(!policy.contains(" 'unsafe-eval'"), "{uri}: {policy}");
    let script = directive("script-src");
    let nonce = script
        .split_whitespace()
        .find_map(|source| source.strip_prefix("'nonce-")?.strip_suffix('\''))
        .unwrap_or_else(|| panic!("{uri}: no nonce in {script}"))
        .to_string();
    assert!(nonce.len() >= 16, "{uri}: a nonce of 128 bits: {nonce}");
    assert!(
        directive("style-src").contains(&format!("'nonce-{nonce}'")),
        "{uri}: {policy}"
    );
    assert_eq!(header(headers, "x-frame-options"), Some("DENY"), "{uri}");
    nonce
}

/// Every `<script` and `<style` tag of the page, as written.
fn inline_tags<'a>(html: &'a str, tag: &str) -> Vec<&'a str> {
    let open = format!("<{tag}");
    html.match_indices(&open)
        .filter(|(at, _)| {
            // `<style` and not `<styles…`: the tag name ends there.
            html[at + open.len()..].starts_with([' ', '>'])
        })
        .map(|(at, _)| {
            let end = html[at..].find('>').expect("tag ends");
            &html[at..=at + end]
        })
        .collect()
}

#[tokio::test]
async fn every_page_has_a_policy_whose_nonce_its_inline_scripts_and_styles_carry() {
    let site = site();
    let app = router(site.path());
    let pages = [
        ("/?fen=4k3/8/8/8/8/8/8/4K2R_w_-_-_0_1", StatusCode::OK),
        (
            "/practice?fen=4k3/8/8/8/8/8/8/4K2R_w_-_-_0_1",
            StatusCode::OK,
        ),
        ("/no-such-page", StatusCode::NOT_FOUND),
    ];
    let mut nonces = Vec::new();
    for (uri, status) in pages {
        let (got, headers, html) = get(&app, uri).await;
        assert_eq!(got, status, "{uri}: {html}");
        assert!(
            header(&headers, "content-type").is_some_and(|t| t.starts_with("text/html")),
            "{uri}"
        );
        assert_everywhere(uri, &headers);
        let nonce = policy_nonce(uri, &headers);
        let scripts = inline_tags(&html, "script");
        assert!(
            !scripts.is_empty(),
            "{uri}: the page has its hydration script"
        );
        let styles = inline_tags(&html, "style");
        assert!(
            styles.len() >= 2,
            "{uri}: the stylesheet and the no-script style are in the head: {styles:?}"
        );
        for tag in scripts.iter().chain(&styles) {
            assert!(
                tag.contains(&format!("nonce=\"{nonce}\"")),
                "{uri}: {tag} lacks the policy's nonce {nonce}"
            );
        }
        // No inline event handlers or style attributes, which a nonce
        // cannot allow.
        for attribute in [" onclick=", " onload=", " onerror=", " style=\""] {
            assert!(!html.contains(attribute), "{uri}: {attribute} in the page");
        }
        nonces.push(nonce);
    }
    nonces.sort();
    nonces.dedup();
    assert_eq!(nonces.len(), pages.len(), "a nonce per answer");
}

#[tokio::test]
async fn every_other_answer_has_nosniff_and_no_page_policy() {
    let site = site();
    let app = router(site.path());
    let wasm = format!("/pkg/{WASM}");
    let answers = [
        (
            "/standard?fen=4k3/8/8/8/8/8/8/4K2R_w_-_-_0_1",
            StatusCode::OK,
        ),
        ("/standard?fen=not-a-fen", StatusCode::BAD_REQUEST),
        (
            "/standard/mainline?fen=4k3/8/8/8/8/8/8/4K2R_w_-_-_0_1",
            StatusCode::OK,
        ),
        ("/tables", StatusCode::OK),
        ("/metrics", StatusCode::OK),
        (wasm.as_str(), StatusCode::OK),
        ("/pkg/missing.js", StatusCode::NOT_FOUND),
    ];
    for (uri, status) in answers {
        let (got, headers, body) = get(&app, uri).await;
        assert_eq!(got, status, "{uri}: {body}");
        assert_everywhere(uri, &headers);
        if !header(&headers, "content-type").is_some_and(|t| t.starts_with("text/html")) {
            assert_eq!(header(&headers, "content-security-policy"), None, "{uri}");
        }
        if uri.starts_with("/standard") {
            assert_eq!(
                header(&headers, "access-control-allow-origin"),
                Some("*"),
                "{uri}: the API stays open to other origins, as lichess's is"
            );
        }
    }
}

#[tokio::test]
async fn the_deadlines_504_has_nosniff_too() {
    let app = server::http::deadline::layer(
        common::stuck_route(),
        Duration::from_millis(50),
        Arc::new(RequestMetrics::default()),
    );
    let (status, headers, _) = get(&app, "/standard").await;
    assert_eq!(status, StatusCode::GATEWAY_TIMEOUT);
    assert_everywhere("/standard (504)", &headers);
}
