//! A truncated table, or one replaced while the server runs, gives an error
//! answer naming the table (never a path of the server's disks), and the
//! server keeps answering other positions.

mod common;

use std::{fs, io::Write};

use axum::http::StatusCode;
use common::assert_no_path;

const KQVK: &str = "/standard?fen=4k3/8/8/8/8/8/8/3QK3_w_-_-_0_1";
const KRVK: &str = "/standard?fen=4k3/8/8/8/8/8/8/4K2R_w_-_-_0_1";

#[tokio::test]
async fn truncated_table_is_an_error_naming_it() {
    let dir = common::copy_of_embedded_tables();
    let path = dir.path().join("KQvK.rtbz");
    let bytes = fs::read(&path).expect("read table");
    // Keep a size that still looks like a table, so it is opened and read.
    fs::write(&path, &bytes[..80]).expect("truncate");
    let router = common::router(common::engine_with(vec![dir.path().to_path_buf()]));

    let (status, body) = common::get_json(&router, KQVK).await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{body}");
    let message = body["error"].as_str().expect("message");
    assert_no_path(&body, dir.path());
    assert!(message.contains("KQvK.rtbz"), "{message}");

    let (status, body) = common::get_json(&router, KRVK).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["category"], "win");
}

#[tokio::test]
async fn table_with_impossible_size_is_skipped_at_start_and_named_when_needed() {
    let dir = common::copy_of_embedded_tables();
    let path = dir.path().join("KQvK.rtbw");
    let bytes = fs::read(&path).expect("read table");
    fs::write(&path, &bytes[..bytes.len() / 2 + 3]).expect("truncate");
    let engine = common::engine_with(vec![dir.path().to_path_buf()]);
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
    let dir = common::copy_of_embedded_tables();
    let router = common::router(common::engine_with(vec![dir.path().to_path_buf()]));
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
