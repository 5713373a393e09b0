//! The page's bundle as a browser gets it: hashed files compressed once at
//! the best quality (brotli, else gzip) and kept a year, and the stylesheet
//! written into the page's head.

mod common;
mod process;

use std::{io::Read, path::Path, time::Duration};

use axum::{
    body::Body,
    http::{HeaderMap, Request, StatusCode},
};
use http_body_util::BodyExt;
use leptos::prelude::LeptosOptions;
use tower::ServiceExt;

const WASM: &str = "zugzwang.AbCdEfGhIjKlMnOpQrSt-_.wasm";
const CSS_HASH: &str = "o0lsyJf-22cCJqzS4eRkHA";
const CSS: &str = ".explorer > .play { display: grid; }\n";

/// A built site: a hashed WASM file, the hash list and the stylesheet.
fn site() -> (tempfile::TempDir, Vec<u8>) {
    let dir = tempfile::tempdir().expect("temp dir");
    let pkg = dir.path().join("pkg");
    std::fs::create_dir_all(&pkg).expect("mkdir");
    // Compressible, as real WASM is, and larger than one buffer.
    let wasm: Vec<u8> = (0..200_000u32).map(|i| (i % 251 / 7) as u8).collect();
    std::fs::write(pkg.join(WASM), &wasm).expect("wasm");
    std::fs::write(pkg.join(format!("zugzwang.{CSS_HASH}.css")), CSS).expect("css");
    std::fs::write(
        dir.path().join("hash.txt"),
        format!("js: AAA\ncss: {CSS_HASH}\n"),
    )
    .expect("hashes");
    (dir, wasm)
}

fn router(site: &Path) -> axum::Router {
    let options = LeptosOptions::builder()
        .output_name("zugzwang")
        .site_root(site.display().to_string())
        // As `serve` does: Leptos insists on the list when told of it.
        .hash_files(site.join("hash.txt").is_file())
        .hash_file(site.join("hash.txt").display().to_string().into())
        .build();
    let engine = common::engine_with(vec![common::embedded_tables_dir()]);
    server::http::router(server::http::AppState::new(
        std::sync::Arc::new(engine),
        options,
    ))
}

async fn request(
    router: &axum::Router,
    method: &str,
    uri: &str,
    headers: &[(&str, &str)],
) -> (StatusCode, HeaderMap, Vec<u8>) {
    let mut request = Request::builder().method(method).uri(uri);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = router
        .clone()
        .oneshot(request.body(Body::empty()).expect("request"))
        .await
        .expect("router answers");
    let (parts, body) = response.into_parts();
    let body = body.collect().await.expect("body").to_bytes().to_vec();
    (parts.status, parts.headers, body)
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> &'a str {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
}

/// Asks until the compressed file is ready (the first request starts the
/// compression and is answered on the fly meanwhile).
async fn compressed(router: &axum::Router, uri: &str, accept: &str) -> (HeaderMap, Vec<u8>) {
    for _ in 0..200 {
        let (status, headers, body) =
            request(router, "GET", uri, &[("accept-encoding", accept)]).await;
        assert_eq!(status, StatusCode::OK, "{uri}");
        if !header(&headers, "content-length").is_empty()
            && !header(&headers, "content-encoding").is_empty()
        {
            return (headers, body);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{uri} was never sent from the compressed bundle");
}

#[tokio::test]
async fn hashed_files_come_compressed_at_the_best_quality() {
    let (site, wasm) = site();
    let router = router(site.path());
    let uri = format!("/pkg/{WASM}");

    let (headers, body) = compressed(&router, &uri, "gzip, deflate, br, zstd").await;
    assert_eq!(header(&headers, "content-encoding"), "br");
    assert_eq!(header(&headers, "content-type"), "application/wasm");
    assert_eq!(header(&headers, "vary"), "accept-encoding");
    assert_eq!(
        header(&headers, "cache-control"),
        "public, max-age=31536000, immutable"
    );
    assert_eq!(header(&headers, "content-length"), body.len().to_string());
    let mut unpacked = Vec::new();
    brotli::Decompressor::new(&body[..], 4096)
        .read_to_end(&mut unpacked)
        .expect("valid brotli");
    assert_eq!(unpacked, wasm);

    // A client without brotli gets gzip at level 9.
    let (headers, body) = compressed(&router, &uri, "gzip").await;
    assert_eq!(header(&headers, "content-encoding"), "gzip");
    let mut unpacked = Vec::new();
    flate2::read::GzDecoder::new(&body[..])
        .read_to_end(&mut unpacked)
        .expect("valid gzip");
    assert_eq!(unpacked, wasm);

    // One that takes neither, or asks for a range, gets the file as it is.
    for extra in [("accept-encoding", "identity"), ("range", "bytes=0-99")] {
        let headers = [extra];
        let (status, headers, body) = request(&router, "GET", &uri, &headers).await;
        assert!(status.is_success(), "{extra:?}: {status}");
        assert_eq!(header(&headers, "content-encoding"), "", "{extra:?}");
        assert!(wasm.starts_with(&body), "{extra:?}");
    }

    // HEAD says what GET would send.
    let (status, headers, body) =
        request(&router, "HEAD", &uri, &[("accept-encoding", "br")]).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(header(&headers, "content-encoding"), "br");
    assert!(body.is_empty());
}

#[tokio::test]
async fn unknown_bundle_files_are_not_found_and_not_kept() {
    let (site, _) = site();
    let router = router(site.path());
    for _ in 0..3 {
        let (status, headers, _) = request(
            &router,
            "GET",
            "/pkg/zugzwang.ZZZZZZZZZZZZZZZZZZZZZZ.wasm",
            &[("accept-encoding", "br")],
        )
        .await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert_eq!(header(&headers, "content-encoding"), "");
    }
}

#[tokio::test]
async fn the_stylesheet_is_written_into_the_page() {
    let (site, _) = site();
    let router = router(site.path());
    let (status, _, body) =
        request(&router, "GET", "/?fen=4k3/8/8/8/8/8/8/4K2R_w_-_-_0_1", &[]).await;
    assert_eq!(status, StatusCode::OK);
    let page = String::from_utf8(body).expect("utf-8 page");
    // In a `<style>` carrying the nonce of the page's Content-Security-Policy.
    let at = page
        .find(&format!(">{CSS}</style>"))
        .unwrap_or_else(|| panic!("no stylesheet in the page: {page}"));
    let tag = &page[page[..at].rfind("<style").expect("its tag")..=at];
    assert!(tag.starts_with("<style nonce=\""), "{tag}");
    assert!(!page.contains("rel=\"stylesheet\""), "{page}");
}

#[tokio::test]
async fn without_a_built_site_the_page_links_its_stylesheet() {
    let empty = tempfile::tempdir().expect("temp dir");
    let router = router(empty.path());
    let (status, _, body) = request(&router, "GET", "/", &[]).await;
    assert_eq!(status, StatusCode::OK);
    let page = String::from_utf8(body).expect("utf-8 page");
    let head = page.split("</head>").next().unwrap_or_default();
    assert!(head.contains("rel=\"stylesheet\""), "{page}");
    // No inline stylesheet (the no-script style comes after it).
    let before_noscript = head.split("<noscript>").next().unwrap_or_default();
    assert!(!before_noscript.contains("<style"), "{page}");
}

fn zugzwang(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_zugzwang"))
        .args(args)
        .output()
        .expect("run zugzwang")
}

#[test]
fn bundle_compress_writes_each_hashed_file_compressed_beside_it() {
    let (site, wasm) = site();
    let pkg = site.path().join("pkg");
    std::fs::write(pkg.join("zugzwang.wasm"), b"not hashed").expect("plain file");
    let dir = site.path().display().to_string();

    let first = zugzwang(&["bundle", "compress", "--site", &dir]);
    assert!(first.status.success(), "{first:?}");
    let said = String::from_utf8_lossy(&first.stdout);
    assert!(said.contains("2 of 2 bundle files compressed"), "{said}");

    let mut unpacked = Vec::new();
    let br = std::fs::read(pkg.join(format!("{WASM}.br"))).expect(".br written");
    brotli::Decompressor::new(&br[..], 4096)
        .read_to_end(&mut unpacked)
        .expect("valid brotli");
    assert_eq!(unpacked, wasm);
    let gz = std::fs::read(pkg.join(format!("{WASM}.gz"))).expect(".gz written");
    let mut css = String::new();
    let css_gz =
        std::fs::read(pkg.join(format!("zugzwang.{CSS_HASH}.css.gz"))).expect("css .gz written");
    flate2::read::GzDecoder::new(&css_gz[..])
        .read_to_string(&mut css)
        .expect("valid gzip");
    assert_eq!(css, CSS);
    assert!(gz.len() < wasm.len());
    assert!(!pkg.join("zugzwang.wasm.br").exists(), "only hashed files");

    // Again: nothing new to do.
    let again = zugzwang(&["bundle", "compress", "--site", &dir]);
    assert!(again.status.success(), "{again:?}");
    let said = String::from_utf8_lossy(&again.stdout);
    assert!(said.contains("0 of 2 bundle files compressed"), "{said}");
}

#[test]
fn bundle_compress_names_a_site_without_its_bundle() {
    let empty = tempfile::tempdir().expect("temp dir");
    let out = zugzwang(&[
        "bundle",
        "compress",
        "--site",
        &empty.path().display().to_string(),
    ]);
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("cannot read the bundle in") && said.contains("pkg"),
        "{said}"
    );
}

/// A server that only answers the API never pays for compressing the
/// bundle: nothing is compressed until a file of it is asked for.
#[test]
fn serve_compresses_the_bundle_only_when_asked() {
    let (site, _) = site();
    let mut command = process::binary();
    command
        .args(["serve", "--bind", "127.0.0.1:0"])
        .env("LEPTOS_SITE_ROOT", site.path());
    let server = process::Server::start(command);
    let (status, _) = process::get(server.addr, process::KQVK);
    assert_eq!(status, 200);
    // Time enough for a compression started with the server to finish.
    std::thread::sleep(Duration::from_secs(2));
    let first = raw_head(server.addr, &format!("/pkg/{WASM}"));
    assert!(
        !first.contains("content-encoding: br"),
        "the first request is answered before the file is compressed: {first}"
    );
    server.wait_until("the file compressed after its first request", |s| {
        raw_head(s.addr, &format!("/pkg/{WASM}")).contains("content-encoding: br")
    });
}

/// The lower-cased head of a `GET` that accepts brotli.
fn raw_head(addr: std::net::SocketAddr, path: &str) -> String {
    use std::io::Write;
    let mut stream = std::net::TcpStream::connect(addr).expect("connect");
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: test\r\nAccept-Encoding: br\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).expect("send");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("read");
    let text = String::from_utf8_lossy(&raw).to_lowercase();
    text.split("\r\n\r\n")
        .next()
        .unwrap_or_default()
        .to_string()
}
