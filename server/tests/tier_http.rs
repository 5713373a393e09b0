//! The tier over HTTP: `X-Probe-Reads` on answers, `/metrics`, and a damaged
//! block answered with 500 naming the table and offset.

mod common;
mod tier_support;

use std::path::Path;

use axum::http::StatusCode;
use server::{
    engine::{Engine, EngineConfig},
    store::tier::build as tier,
    store::{StoreOptions, layout},
};
use tier_support::build_tier;

fn router(slow: &Path, fast: &Path) -> axum::Router {
    common::router(
        Engine::open(&EngineConfig {
            tables: vec![slow.to_path_buf()],
            store: StoreOptions {
                fast: Some(fast.to_path_buf()),
                ..StoreOptions::default()
            },
            ..EngineConfig::default()
        })
        .unwrap(),
    )
}

/// A GET's status, `X-Probe-Reads` header and body.
async fn get(router: &axum::Router, uri: &str) -> (StatusCode, Option<String>, String) {
    let (status, headers, body) = common::get_with_headers(router, uri, None).await;
    let reads = headers
        .get("x-probe-reads")
        .map(|v| v.to_str().unwrap().to_string());
    (status, reads, String::from_utf8_lossy(&body).into_owned())
}

fn tally(header: &str) -> (u64, u64) {
    let fields: Vec<&str> = header.split(' ').collect();
    assert_eq!(fields.len(), 3, "{header}");
    (
        fields[0].strip_prefix("fast=").unwrap().parse().unwrap(),
        fields[1].strip_prefix("slow=").unwrap().parse().unwrap(),
    )
}

#[tokio::test]
async fn answers_carry_their_reads_and_metrics_count_them() {
    let fast = tempfile::tempdir().unwrap();
    build_tier(&common::embedded_tables_dir(), fast.path());
    let router = router(&common::embedded_tables_dir(), fast.path());
    let uri = "/standard?fen=4k3/8/8/8/8/8/3r4/KQ6_w_-_-_0_1";
    let (status, reads, _) = get(&router, uri).await;
    assert_eq!(status, StatusCode::OK);
    let (fast_reads, slow_reads) = tally(&reads.unwrap());
    assert!(
        fast_reads > 0 && slow_reads > 0,
        "fast={fast_reads} slow={slow_reads}"
    );
    // The same request again comes from the cache: no reads of its own.
    let (_, reads, _) = get(&router, uri).await;
    assert_eq!(reads.as_deref(), Some("fast=0 slow=0 cached=0"));

    let (status, _, text) = get(&router, "/metrics").await;
    assert_eq!(status, StatusCode::OK);
    let value = |line: &str| -> u64 {
        text.lines()
            .find_map(|l| l.strip_prefix(line))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {line} in\n{text}"))
    };
    // Opening tables reads their headers from the fast tier; the sparse
    // index usually shares their first block, then comes from the cache.
    assert!(value("zugzwang_table_reads_total{tier=\"fast\",kind=\"header\"}") > 0);
    assert!(value("zugzwang_table_reads_total{tier=\"slow\",kind=\"data\"}") > 0);
    assert!(value("zugzwang_table_lookups_total") > 0);
    assert!(
        text.contains(
            "zugzwang_table_read_seconds_bucket{tier=\"slow\",kind=\"data\",le=\"+Inf\"}"
        )
    );
}

#[tokio::test]
async fn damaged_block_is_a_500_naming_table_and_offset() {
    let slow = common::copy_of_embedded_tables();
    let fast = tempfile::tempdir().unwrap();
    build_tier(slow.path(), fast.path());
    let table = slow.path().join("KQvKR.rtbz");
    let layout = layout::parse_file(&table).unwrap();
    common::damage(&table, |bytes| {
        for b in &mut bytes[tier::fast_len(&layout, 4096) as usize..] {
            *b ^= 0x01;
        }
    });

    let router = router(slow.path(), fast.path());
    let (status, _, body) = get(&router, "/standard?fen=4k3/8/8/8/8/8/3r4/KQ6_b_-_-_0_1").await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{body}");
    // The block check's own error, or the quarantine it left for the
    // request's later probes of the table: both name the block.
    assert!(
        body.contains("KQvKR.rtbz") && body.contains("checksum") && body.contains("at offset"),
        "{body}"
    );
    assert!(!body.contains(&*slow.path().to_string_lossy()), "{body}");
    // Other tables keep answering.
    let (status, _, _) = get(&router, "/standard?fen=4k3/8/8/8/8/8/8/4K2R_w_-_-_0_1").await;
    assert_eq!(status, StatusCode::OK);
    let (_, _, text) = get(&router, "/metrics").await;
    assert!(
        text.contains("zugzwang_table_suspect{table=\"KQvKR.rtbz\"}"),
        "{text}"
    );
}
