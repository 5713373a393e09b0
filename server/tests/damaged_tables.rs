//! A truncated table, or one replaced while the server runs, gives an error
//! answer naming the table (never a path of the server's disks), and the
//! server keeps answering other positions. The tables are checked first
//! (`verify --init`), as the default store serves no others; a truncated
//! table served with `--allow-unchecked` is an error naming it too.

mod common;
mod tier_support;

use std::{fs, io::Write, path::Path};

use axum::http::StatusCode;
use common::assert_no_path;
use server::engine::Engine;
use tier_support::init_checksums;

/// A copy of the embedded tables with their checksums recorded, as
/// `zugzwang verify --init` leaves it.
fn checked_copy() -> tempfile::TempDir {
    let dir = common::copy_of_embedded_tables();
    init_checksums(dir.path());
    dir
}

/// The default engine over `dir`.
fn engine(dir: &Path) -> Engine {
    common::engine_with(vec![dir.to_path_buf()])
}

const KQVK: &str = "/standard?fen=4k3/8/8/8/8/8/8/3QK3_w_-_-_0_1";
const KRVK: &str = "/standard?fen=4k3/8/8/8/8/8/8/4K2R_w_-_-_0_1";

/// Truncates KQvK.rtbz of `dir` to a size that still looks like a table,
/// so it is opened and read.
fn truncate_kqvk_dtz(dir: &Path) {
    let path = dir.join("KQvK.rtbz");
    let bytes = fs::read(&path).expect("read table");
    fs::write(&path, &bytes[..80]).expect("truncate");
}

/// KQvK fails naming KQvK.rtbz (and `because`), never `dir`; KRvK answers.
async fn kqvk_dtz_fails_and_krvk_answers(engine: Engine, dir: &Path, because: &str) {
    let router = common::router(engine);
    let (status, body) = common::get_json(&router, KQVK).await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{body}");
    let message = body["error"].as_str().expect("message");
    assert_no_path(&body, dir);
    assert!(
        message.contains("KQvK.rtbz") && message.contains(because),
        "{message}"
    );

    let (status, body) = common::get_json(&router, KRVK).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["category"], "win");
}

#[tokio::test]
async fn truncated_table_is_an_error_naming_it() {
    let dir = checked_copy();
    truncate_kqvk_dtz(dir.path());
    let engine = engine(dir.path());
    kqvk_dtz_fails_and_krvk_answers(engine, dir.path(), "its size changed").await;
}

/// Served unchecked, the table's own structure still gives it away.
#[tokio::test]
async fn truncated_table_served_with_allow_unchecked_is_an_error_naming_it() {
    let dir = common::copy_of_embedded_tables();
    truncate_kqvk_dtz(dir.path());
    let engine = common::engine_allowing_unchecked(vec![dir.path().to_path_buf()]);
    kqvk_dtz_fails_and_krvk_answers(engine, dir.path(), "truncated").await;
}

#[tokio::test]
async fn table_with_impossible_size_is_skipped_at_start_and_named_when_needed() {
    let dir = checked_copy();
    let path = dir.path().join("KQvK.rtbw");
    let bytes = fs::read(&path).expect("read table");
    fs::write(&path, &bytes[..bytes.len() / 2 + 3]).expect("truncate");
    let engine = engine(dir.path());
    assert_eq!(engine.directories()[0].rejected, 1);
    let router = common::router(engine);

    let (status, body) = common::get_json(&router, KQVK).await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{body}");
    let message = body["error"].as_str().expect("message");
    assert_no_path(&body, dir.path());
    assert!(
        message.contains("KQvK.rtbw") && message.contains("skipped at start"),
        "{message}"
    );

    let (status, _) = common::get_json(&router, KRVK).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn table_replaced_in_place_while_serving_is_an_error_naming_it() {
    let dir = checked_copy();
    let router = common::router(engine(dir.path()));
    // Opens the KQvK tables.
    let (status, _) = common::get_json(&router, KQVK).await;
    assert_eq!(status, StatusCode::OK);

    // Overwrite both files in place with a short, different content.
    for name in ["KQvK.rtbw", "KQvK.rtbz"] {
        let path = dir.path().join(name);
        let mut file = fs::File::create(&path).expect("truncate in place");
        file.write_all(&[0u8; 16]).expect("write");
    }

    // A different KQvK position (not cached) needs data blocks of the replaced files.
    let other = "/standard?fen=7k/8/8/8/8/8/2Q5/K7_w_-_-_0_1";
    let (status, body) = common::get_json(&router, other).await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{body}");
    let message = body["error"].as_str().expect("message");
    assert_no_path(&body, dir.path());
    assert!(message.contains("KQvK.rtb"), "{message}");
    assert!(
        message.contains("while the server was running"),
        "{message}"
    );

    let (status, body) = common::get_json(&router, KRVK).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}
