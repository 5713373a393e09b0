//! One memory budget holds: a server given `--memory-mb` splits it among
//! its caches (shown on `/metrics`), and under a replay of an explorer's
//! requests every cache stays within its share while the small budget is
//! filled and evicts. The tables are the repository's own 3-4 piece files
//! read from disk (so the index and data caches are in play), the DTM ones
//! the embedded Prophet tables.

mod common;
mod process;

use std::collections::BTreeMap;

use common::embedded_tables_dir;
use process::{Server, get};

/// An explorer's walk through 3-4 piece endings, 3,000 requests.
const WALK: &str = include_str!("fixtures/explore-34.txt");

/// Every sample on `/metrics` by its name and labels, e.g.
/// `zugzwang_memory_budget_bytes{cache="data"}`.
fn metrics(server: &Server) -> BTreeMap<String, f64> {
    let (status, text) = get(server.addr, "/metrics");
    assert_eq!(status, 200, "{text}");
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .filter_map(|line| {
            let (name, value) = line.rsplit_once(' ')?;
            Some((name.to_string(), value.parse().ok()?))
        })
        .collect()
}

fn value(metrics: &BTreeMap<String, f64>, name: &str) -> f64 {
    *metrics
        .get(name)
        .unwrap_or_else(|| panic!("{name} is not on /metrics"))
}

/// Serves the walk's first `requests` positions (`/standard`, with `dtm`)
/// with `--memory-mb mb`, then checks the split and what each cache holds.
/// Returns the figures for further checks.
fn replay_within(mb: u64, requests: usize) -> BTreeMap<String, f64> {
    let tables = embedded_tables_dir();
    let server = process::serve(&[
        "--memory-mb",
        &mb.to_string(),
        "--tables",
        tables.to_str().expect("a UTF-8 path"),
        "--allow-unchecked",
        // A DTM table is checked whole on first use: seconds in a debug
        // build on a busy machine, which is not what this test measures.
        "--request-timeout",
        "300",
    ]);
    for fen in WALK
        .lines()
        .filter(|line| !line.trim().is_empty())
        .take(requests)
    {
        let (status, body) = get(
            server.addr,
            &format!("/standard?fen={}", fen.replace(' ', "_")),
        );
        assert!(matches!(status, 200 | 400), "{fen}: {status} {body}");
    }
    let figures = metrics(&server);
    let budget = mb as f64 * f64::from(1 << 20);
    let share = |cache: &str| {
        value(
            &figures,
            &format!("zugzwang_memory_budget_bytes{{cache=\"{cache}\"}}"),
        )
    };
    let parts = ["responses", "data", "index", "dtm_blocks", "probe_memo"];
    let total: f64 = parts.iter().map(|cache| share(cache)).sum();
    assert!(
        total <= budget && total > budget * 0.99,
        "split {total} of {budget}"
    );

    // Each cache holds no more than its share.
    let held = [
        (
            "responses",
            value(&figures, "zugzwang_response_cache_bytes"),
        ),
        ("data", value(&figures, "zugzwang_data_cache_bytes")),
        ("index", value(&figures, "zugzwang_index_cache_bytes")),
        (
            "dtm_blocks",
            value(&figures, "zugzwang_dtm_block_cache_bytes"),
        ),
        (
            "probe_memo",
            value(&figures, "zugzwang_probe_memo_entries") * 96.0,
        ),
    ];
    for (cache, bytes) in held {
        assert!(
            bytes <= share(cache),
            "{cache}: {bytes} held of {}",
            share(cache)
        );
    }
    let all: f64 = held.iter().map(|(_, bytes)| bytes).sum();
    assert!(all <= budget, "{all} held of {budget}");
    figures
}

#[test]
fn the_caches_stay_within_the_budget_under_a_replay() {
    // The figure: 64 MB, which this walk does not fill.
    replay_within(64, 300);
    // A budget the walk fills: the caches evict and stay within it.
    let small = replay_within(2, 1_500);
    let full = value(&small, "zugzwang_response_cache_bytes")
        / value(&small, "zugzwang_response_cache_capacity_bytes");
    println!(
        "--memory-mb 2: the response cache {:.0} % full",
        full * 100.0
    );
    assert!(full > 0.5, "the walk fills the response cache ({full:.2})");
}
