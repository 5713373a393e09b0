//! `dtm` as `/standard` answers it on the embedded default:
//! Prophet's own longest mates, consistency with every move's `dtm` and
//! with the category, lila's conventions for mated and drawn roots, and
//! damaged or missing DTM files given with `--dtm`.

mod common;

use std::{fs, path::Path};

use axum::http::StatusCode;
use serde_json::Value;
use server::engine::{Engine, EngineConfig};

fn embedded_router() -> axum::Router {
    common::router(common::engine_with(Vec::new()))
}

fn uri(path: &str, fen: &str) -> String {
    format!("{path}?fen={}", fen.replace(' ', "_"))
}

async fn standard(router: &axum::Router, fen: &str) -> Value {
    let (status, body) = common::get_json(router, &uri("/standard", fen)).await;
    assert_eq!(status, StatusCode::OK, "{fen}: {body}");
    body
}

/// Every 2- to 4-piece longest mate Prophet publishes (fixture copied from
/// its `longest_mates.csv`): `/standard`'s `dtm` equals it.
#[tokio::test]
async fn prophets_longest_mates_on_the_embedded_default() {
    let router = embedded_router();
    let csv = fs::read_to_string(common::fixture("prophet_longest_mates.csv")).expect("fixture");
    let mut checked = 0;
    for line in csv.lines().filter(|l| !l.starts_with('#')).skip(1) {
        let fields: Vec<&str> = line.split(',').collect();
        let (Some(fen), Some(dtm)) = (fields.get(1), fields.get(2)) else {
            continue;
        };
        if fen.is_empty() {
            continue;
        }
        let expected: i64 = dtm.parse().expect("a number");
        let body = standard(&router, &format!("{fen} 0 1")).await;
        assert_eq!(body["dtm"], expected, "{fields:?}");
        checked += 1;
    }
    println!("{checked} longest mates checked");
    assert!(checked > 30, "{checked}");
}

/// On a walk through positions of several materials: the root's `dtm` is
/// 1 + the best of its moves' (a win: the shortest mate of a lost
/// opponent; a loss: the longest), its sign agrees with the category, and
/// the first move is a fastest mate.
#[tokio::test]
async fn dtm_is_consistent_with_the_moves_and_the_category() {
    let router = embedded_router();
    let starts = [
        "8/8/8/8/8/7B/8/Nk5K w - - 0 1",
        "7K/8/8/8/8/8/2k5/1R6 w - - 0 1",
        "8/8/8/1k6/8/8/K5P1/8 w - - 0 1",
        "8/8/4k3/8/8/3QK3/8/8 b - - 0 1",
        "8/8/3k4/8/3r4/8/3QK3/8 w - - 0 1",
        "8/2k5/8/8/1K6/5R2/5p2/8 b - - 3 45",
    ];
    let mut checked = 0;
    for start in starts {
        let mut fen = start.to_string();
        for _ in 0..12 {
            let body = standard(&router, &fen).await;
            let moves = body["moves"].as_array().expect("moves");
            let Some(dtm) = body["dtm"].as_i64() else {
                assert!(
                    body["checkmate"].as_bool().unwrap_or(false),
                    "{fen}: {body}"
                );
                break;
            };
            let category = body["category"].as_str().expect("category");
            match dtm {
                0 => assert!(
                    !category.contains("win") && !category.contains("loss"),
                    "{fen}"
                ),
                d if d > 0 => assert!(category.contains("win"), "{fen}: {category}"),
                _ => assert!(category.contains("loss"), "{fen}: {category}"),
            }
            // Each move's value for its mover, in plies from here:
            // positive = mates, negative = is mated, 0 = draw.
            let mover: Vec<i64> = moves
                .iter()
                .map(|m| match m["dtm"].as_i64() {
                    _ if m["checkmate"] == true => 1,
                    Some(0) => 0,
                    Some(d) if d < 0 => -d + 1,
                    Some(d) => -(d + 1),
                    None => panic!("{fen}: a move without dtm: {m}"),
                })
                .collect();
            if dtm > 0 {
                let fastest = mover.iter().filter(|v| **v > 0).min();
                assert_eq!(fastest, Some(&dtm), "{fen}: {mover:?}");
                assert_eq!(mover[0], dtm, "{fen}: the first move is not a fastest mate");
            } else if dtm < 0 {
                assert!(mover.iter().all(|v| *v < 0), "{fen}: {mover:?}");
                assert_eq!(mover.iter().min(), Some(&dtm), "{fen}: {mover:?}");
            } else {
                assert!(
                    mover.iter().all(|v| *v <= 0) && mover.contains(&0),
                    "{fen}: {mover:?}"
                );
            }
            checked += 1;
            let Some(next) = moves.first() else { break };
            let pos = app::position::parse_fen(&fen).expect("legal");
            let m = next["uci"]
                .as_str()
                .and_then(|u| u.parse::<shakmaty::uci::UciMove>().ok())
                .and_then(|u| u.to_move(&pos).ok())
                .expect("a legal first move");
            let mut after_pos = pos.clone();
            shakmaty::Position::play_unchecked(&mut after_pos, m);
            fen = app::position::to_fen(&after_pos);
        }
    }
    println!("{checked} positions checked move by move");
    assert!(checked > 30);
}

/// lila's conventions: a mated root has no `dtm` (0 is the draw), a drawn
/// root is 0, castling rights and more pieces than the tables have are null.
#[tokio::test]
async fn mated_drawn_castling_and_too_many_pieces() {
    let router = embedded_router();
    let mated = standard(&router, "k7/1Q6/1K6/8/8/8/8/8 b - - 0 1").await;
    assert_eq!(mated["dtm"], Value::Null);
    let stalemate = standard(&router, "k7/8/1QK5/8/8/8/8/8 b - - 0 1").await;
    assert_eq!(stalemate["dtm"], 0);
    let drawn = standard(&router, "8/8/8/8/8/2k5/8/K1B5 w - - 0 1").await;
    assert_eq!(drawn["dtm"], 0);
    let castling = standard(&router, "4k3/8/8/8/8/8/8/R3K3 w Q - 0 1").await;
    assert_eq!(castling["dtm"], Value::Null);
    let five = standard(&router, "4k3/8/8/8/8/8/2PP4/R3K3 w - - 0 1").await;
    assert_eq!(five["dtm"], Value::Null);
    // Atomic has no DTM tables.
    let (_, atomic) =
        common::get_json(&router, &uri("/atomic", "8/8/8/3k4/8/2K5/5Q2/8 w - - 0 1")).await;
    assert_eq!(atomic["dtm"], Value::Null);
}

fn router_with_dtm(dir: &Path) -> axum::Router {
    let engine = Engine::open(&EngineConfig {
        dtm: vec![dir.to_owned()],
        ..EngineConfig::default()
    })
    .expect("tables load");
    common::router(engine)
}

const KQK: &str = "7K/6Q1/8/8/8/3k4/8/8 w - - 0 1";

/// A damaged, truncated or emptied DTM file: the answer is still the 200
/// the Syzygy tables give, with `dtm: null` (never a wrong value, never a
/// crash), and says which file failed in `X-Dtm-Unavailable`;
/// a missing file: `dtm: null`.
#[tokio::test]
async fn damaged_and_missing_dtm_files() {
    let original = fs::read(common::fixture("prophet_KQK.egtb.bz")).expect("fixture");
    let mut flipped = original.clone();
    let at = original.len() - 40;
    flipped[at] ^= 0xff;
    let cases = [
        ("truncated", original[..original.len() - 7].to_vec()),
        ("empty", Vec::new()),
        ("a damaged block", flipped),
    ];
    for (what, bytes) in cases {
        let dir = tempfile::tempdir().expect("temporary directory");
        fs::write(dir.path().join("KQK.egtb.bz"), bytes).expect("written");
        let router = router_with_dtm(dir.path());
        for _ in 0..2 {
            let (status, headers, body) =
                common::get_with_headers(&router, &uri("/standard", KQK), None).await;
            let body: Value = serde_json::from_slice(&body).expect("JSON");
            assert_eq!(status, StatusCode::OK, "{what}: {body}");
            assert_eq!(body["dtm"], Value::Null, "{what}");
            assert_eq!(body["category"], "win", "{what}");
            assert!(body["dtz"].as_i64().is_some_and(|d| d > 0), "{what}");
            let named = headers
                .get("x-dtm-unavailable")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default();
            assert!(named.starts_with("KQK.egtb.bz;problem="), "{what}: {named}");
            assert!(named.ends_with(";root"), "{what}: {named}");
            common::assert_no_path(&body, dir.path());
        }
        // Positions that need no DTM table still answer.
        let (status, _) =
            common::get_json(&router, &uri("/standard", "4k3/8/8/8/8/8/8/4K2R w - - 0 1")).await;
        assert_eq!(status, StatusCode::OK, "{what}");
    }

    let empty = tempfile::tempdir().expect("temporary directory");
    let router = router_with_dtm(empty.path());
    let body = standard(&router, KQK).await;
    assert_eq!(body["dtm"], Value::Null);
    assert_eq!(body["category"], "win");

    // A whole file, listed in an MD5SUMS, its block checksums recorded
    // (`verify --init`).
    let good = tempfile::tempdir().expect("temporary directory");
    fs::write(good.path().join("KQK.egtb.bz"), &original).expect("written");
    let md5sums = Path::new(env!("CARGO_MANIFEST_DIR")).join("tables-prophet/MD5SUMS");
    let line = fs::read_to_string(md5sums)
        .expect("MD5SUMS")
        .lines()
        .find(|l| l.ends_with(" KQK.egtb.bz"))
        .expect("KQK listed")
        .to_string();
    fs::write(good.path().join("MD5SUMS"), format!("{line}\n")).expect("written");
    let summary = server::store::tier::build::build(
        &server::store::tier::build::BuildOptions {
            prefixes: false,
            per_directory: true,
            ..server::store::tier::build::BuildOptions::new(
                vec![good.path().to_owned()],
                good.path().join(".zugzwang"),
            )
        },
        &server::progress::Silent,
    );
    assert!(summary.failures.is_empty(), "{:?}", summary.failures);
    let body = standard(&router_with_dtm(good.path()), KQK).await;
    assert_eq!(body["dtm"], 19);
}

/// `/standard/fastest-mate`: KBNvK's mate in 33 to checkmate.
#[tokio::test]
async fn fastest_mate_route() {
    let router = embedded_router();
    let (status, body) = common::get_json(
        &router,
        &uri("/standard/fastest-mate", "8/8/8/8/8/7B/8/Nk5K w - - 0 1"),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["dtm"], 65);
    assert_eq!(body["winner"], "w");
    let line = body["mainline"].as_array().expect("mainline");
    assert_eq!(line.len(), 65);
    assert_eq!(line[0]["dtm"], -64);
    assert_eq!(line[64]["dtm"], Value::Null);
    let (status, body) = common::get_json(
        &router,
        &uri(
            "/standard/fastest-mate",
            "4k3/8/8/8/8/8/2PP4/R3K3 w - - 0 1",
        ),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap_or("")
            .contains("no DTM table"),
        "{body}"
    );
}
