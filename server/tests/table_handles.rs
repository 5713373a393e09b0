//! Table files open at once stay within a budget (tables and connections
//! share the open-files limit), and running out of descriptors does not
//! stop the server from answering. The tests of this binary change or count
//! the whole process's descriptors, so they take turns.

mod common;

use std::{fs, path::Path};

use axum::http::StatusCode;
use server::{
    engine::{Engine, EngineConfig},
    store::StoreOptions,
};
use shakmaty::{CastlingMode, Chess, fen::Fen};
use tokio::sync::Mutex;

static ONE_AT_A_TIME: Mutex<()> = Mutex::const_new(());

/// Positions over many different 3- and 4-piece tables.
const POSITIONS: [&str; 12] = [
    "4k3/8/8/8/8/8/8/3QK3 w - - 0 1",
    "4k3/8/8/8/8/8/8/4K2R w - - 0 1",
    "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1",
    "4k3/8/8/8/8/8/8/2B1KB2 w - - 0 1",
    "4k3/8/8/8/8/8/8/1N2K1B1 w - - 0 1",
    "4k3/8/8/8/8/8/3r4/KQ6 b - - 0 1",
    "4k3/4p3/8/8/8/8/4P3/4K3 w - - 0 1",
    "4k3/8/8/8/8/8/8/R3K2R w - - 0 1",
    "4k3/8/8/3n4/8/8/8/4K2R w - - 0 1",
    "4k3/8/8/8/8/8/2PP4/4K3 w - - 0 1",
    "4k3/8/8/8/8/8/8/2Q1K1Q1 w - - 0 1",
    "4k3/8/8/3b4/8/8/8/3QK3 w - - 0 1",
];

fn position(fen: &str) -> Chess {
    Fen::from_ascii(fen.as_bytes())
        .expect("FEN")
        .into_position(CastlingMode::Standard)
        .expect("legal")
}

/// Descriptors of this process open on files inside `dir`.
fn descriptors_into(dir: &Path) -> usize {
    let dir = fs::canonicalize(dir).expect("dir");
    fs::read_dir("/proc/self/fd")
        .expect("/proc/self/fd")
        .filter_map(|entry| fs::read_link(entry.ok()?.path()).ok())
        .filter(|target| target.starts_with(&dir))
        .count()
}

/// No checksums are recorded for the copies: served anyway, as this is
/// about descriptors, not integrity.
fn engine(dir: &Path, table_handles: Option<usize>) -> Engine {
    Engine::open(&EngineConfig {
        tables: vec![dir.to_path_buf()],
        store: StoreOptions {
            table_handles,
            ..common::store_allowing_unchecked()
        },
        ..EngineConfig::default()
    })
    .expect("tables load")
}

#[tokio::test]
async fn open_tables_stay_within_a_small_budget_and_answers_stay_right() {
    let _turn = ONE_AT_A_TIME.lock().await;
    let dir = common::copy_of_embedded_tables();
    let budget = 6;
    let bounded = engine(dir.path(), Some(budget));
    let reference = common::engine_allowing_unchecked(vec![common::embedded_tables_dir()]);
    let mut most = 0;
    for round in 0..2 {
        for fen in POSITIONS {
            let answer = bounded.probe(position(fen)).await.expect("answer");
            let expected = reference.probe(position(fen)).await.expect("answer");
            assert_eq!(
                serde_json::to_value(&*answer).expect("json"),
                serde_json::to_value(&*expected).expect("json"),
                "{fen} (round {round})"
            );
            let open = descriptors_into(dir.path());
            most = most.max(open);
            assert!(
                open <= budget,
                "{open} table files open after {fen}, budget {budget}"
            );
        }
    }
    println!("at most {most} table files open (budget {budget})");
    let mut metrics = server::exposition::Exposition::default();
    bounded.store_metrics().render(&mut metrics);
    let metrics = metrics.into_string();
    assert!(
        metrics.contains("zugzwang_table_handles_open ")
            && metrics.contains(&format!("zugzwang_table_handles_budget {budget}\n")),
        "{metrics}"
    );
}

/// With no descriptor left in the process (connections took them all),
/// a probe that needs a table not yet open closes table files of its own
/// to open it, instead of failing until something else gives one back.
#[tokio::test]
async fn out_of_descriptors_the_tables_make_room_and_answers_go_on() {
    let _turn = ONE_AT_A_TIME.lock().await;
    let dir = common::copy_of_embedded_tables();
    let router = common::router(engine(dir.path(), None));
    let uri = |fen: &str| format!("/standard?fen={}", fen.replace(' ', "_"));
    for fen in &POSITIONS[..5] {
        let (status, body) = common::get_json(&router, &uri(fen)).await;
        assert_eq!(status, StatusCode::OK, "{fen}: {body}");
    }
    let reference = common::router(common::engine_allowing_unchecked(vec![
        common::embedded_tables_dir(),
    ]));
    let (_, expected) = common::get_json(&reference, &uri(POSITIONS[5])).await;

    let exhausted = common::Exhaustion::start();
    // KQvKR: none of its tables is open yet.
    let (status, body) = common::get_json(&router, &uri(POSITIONS[5])).await;
    // Another new table, while still exhausted.
    let (status_too, body_too) = common::get_json(&router, &uri(POSITIONS[6])).await;
    drop(exhausted);

    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body, expected);
    assert_eq!(status_too, StatusCode::OK, "{body_too}");
    for fen in POSITIONS {
        let (status, body) = common::get_json(&router, &uri(fen)).await;
        assert_eq!(status, StatusCode::OK, "{fen}: {body}");
    }
}
