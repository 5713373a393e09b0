//! Integrity fails closed: a table whose checksum manifest could not be
//! read when it was first opened (here: no file descriptor left) is never
//! served unchecked afterwards. Alone in its test binary because it lowers
//! the whole process's open-files limit.

mod common;
mod tier_support;

use std::path::Path;

use axum::http::StatusCode;
use common::assert_no_path;
use server::{
    engine::{Engine, EngineConfig},
    store::layout,
    store::tier::build as tier,
};

/// Black to move in KQvKR, no captures: the root needs KQvKR.rtbw first.
const KQVKR: &str = "/standard?fen=4k3/8/8/8/8/8/3r4/KQ6_b_-_-_0_1";
/// Positions that open the tables KQvKR's moves lead to.
const WARM_UP: [&str; 2] = [
    "/standard?fen=4k3/8/8/8/8/8/8/KQ6_w_-_-_0_1",
    "/standard?fen=4k3/8/8/8/8/8/3r4/K7_b_-_-_0_1",
];

/// Flips one byte in every 4 KiB of the table's data blocks, as a failing disk would,
/// keeping the modification time (so the recorded checksums still apply).
fn damage_data_blocks(path: &Path) {
    let layout = layout::parse_file(path).expect("a table");
    let from = tier::fast_len(&layout, 4096) as usize;
    common::damage(path, |bytes| {
        for b in bytes[from..].iter_mut().step_by(4096) {
            *b ^= 0x10;
        }
    });
}

#[tokio::test]
async fn manifest_unreadable_for_want_of_descriptors_then_a_flipped_byte_is_an_error() {
    let dir = common::copy_of_embedded_tables();
    tier_support::init_checksums(dir.path());
    damage_data_blocks(&dir.path().join("KQvKR.rtbw"));
    // One probe thread, one position at a time: the tables open in a known order.
    let engine = Engine::open(&EngineConfig {
        tables: vec![dir.path().to_path_buf()],
        probe_threads: 1,
        sequential_probes: true,
        ..EngineConfig::default()
    })
    .expect("tables load");
    let router = common::router(engine);
    for uri in WARM_UP {
        let (status, body) = common::get_json(&router, uri).await;
        assert_eq!(status, StatusCode::OK, "{uri}: {body}");
    }

    // Leave exactly one descriptor: enough to open KQvKR.rtbw, none for its manifest.
    let mut exhausted = common::Exhaustion::start();
    exhausted.spare_one();
    let (starved_status, starved_body) = common::get_json(&router, KQVKR).await;
    drop(exhausted);

    assert_ne!(
        starved_status,
        StatusCode::OK,
        "answered from a damaged table: {starved_body}"
    );
    assert_no_path(&starved_body, dir.path());

    // Descriptors are back: the table is checked now, and the failed check
    // quarantines it (the request may already meet the verdict in a later
    // probe of the same table), so the next request is refused as damaged.
    let mut messages = Vec::new();
    for _ in 0..2 {
        let (status, body) = common::get_json(&router, KQVKR).await;
        assert_eq!(
            status,
            StatusCode::INTERNAL_SERVER_ERROR,
            "a damaged table was served unchecked: {body}"
        );
        let message = body["error"].as_str().expect("message").to_string();
        assert!(
            message.contains("KQvKR.rtbw") && message.contains("checksum"),
            "{message}"
        );
        assert_no_path(&body, dir.path());
        messages.push(message);
    }
    assert!(
        messages[1].contains("damaged (") && messages[1].contains("found by a block check on read"),
        "{}",
        messages[1]
    );
}
