//! Atomic and antichess (`/atomic`, `/antichess` and their mainlines), as
//! lila-tablebase answers them: atomic answers checked against python-chess's
//! own prober (`fixtures/atomic-34.csv`, from `fixtures/atomic_expected.py`),
//! antichess answers against the rules (compulsory captures; losing every
//! piece wins), status codes, missing tables, and a prober panic caught.

mod common;

use std::{collections::BTreeMap, io, path::Path, path::PathBuf, sync::Arc};

use app::{
    api::{Category, PositionInfo},
    variant::{Variant, parse_variant_fen},
};
use axum::http::StatusCode;
use serde_json::Value;
use server::{
    engine::{Engine, EngineConfig, TableDirs, TableDirsByVariant},
    store::embedded::{EMBEDDED_ATOMIC_DIR, EmbeddedFilesystem},
};
use shakmaty_syzygy::filesystem::{Filesystem, RandomAccessFile};

fn uri(path: &str, fen: &str) -> String {
    format!("{path}?fen={}", fen.replace(' ', "_"))
}

/// The embedded standard and atomic tables, and antichess from `antichess`
/// (`../shared`, where no checksums are recorded: served anyway, as these
/// tests are about the answers).
fn engine(antichess: Vec<PathBuf>) -> Engine {
    Engine::open(&EngineConfig {
        antichess,
        store: common::store_allowing_unchecked(),
        ..EngineConfig::default()
    })
    .expect("tables load")
}

/// The shared antichess tables, or `None` after [`common::missing`].
fn antichess_tables() -> Option<PathBuf> {
    common::shared_dir(
        "syzygy/antichess",
        "the part of this test that needs antichess tables",
    )
}

/// What python-chess's flags column says of a position.
fn flags(pos: &PositionInfo) -> String {
    let letters: String = [
        ('W', pos.variant_win),
        ('L', pos.variant_loss),
        ('M', pos.checkmate),
        ('S', pos.stalemate),
        ('I', pos.insufficient_material),
    ]
    .iter()
    .filter(|(_, on)| *on)
    .map(|(letter, _)| letter)
    .collect();
    if letters.is_empty() {
        "-".to_string()
    } else {
        letters
    }
}

#[tokio::test]
async fn atomic_answers_agree_with_python_chess() {
    let engine = engine(Vec::new());
    let mut reader = csv::Reader::from_path(common::fixture("atomic-34.csv")).expect("csv opens");
    let (mut checked, mut moves_checked, mut mismatches) = (0, 0, Vec::new());
    for record in reader.records() {
        let record = record.expect("csv record");
        let (fen, dtz, moves) = (&record[0], &record[1], &record[2]);
        let pos = parse_variant_fen(Variant::Atomic, fen).expect(fen);
        let answer = engine
            .probe(pos)
            .await
            .unwrap_or_else(|err| panic!("{fen}: {err}"));
        if dtz != "x" && answer.pos.dtz.map(|d| d.to_string()).as_deref() != Some(dtz) {
            mismatches.push(format!("{fen}: dtz {:?}, expected {dtz}", answer.pos.dtz));
        }
        let expected: BTreeMap<&str, (&str, &str)> = moves
            .split(' ')
            .map(|m| {
                let mut parts = m.split(':');
                let mut next = || parts.next().expect("uci:dtz:flags");
                (next(), (next(), next()))
            })
            .collect();
        let ours: BTreeMap<&str, &PositionInfo> = answer
            .moves
            .iter()
            .map(|m| (m.uci.as_str(), &m.pos))
            .collect();
        let (want, got): (Vec<_>, Vec<_>) = (expected.keys().collect(), ours.keys().collect());
        if want != got {
            mismatches.push(format!("{fen}: moves {got:?}, expected {want:?}"));
            continue;
        }
        for (uci, (dtz, want_flags)) in expected {
            let after = ours[uci];
            let got_dtz = after.dtz.map_or("null".to_string(), |d| d.to_string());
            if (dtz != "x" && got_dtz != dtz) || flags(after) != want_flags {
                mismatches.push(format!(
                    "{fen} {uci}: dtz {got_dtz} flags {}, expected {dtz} {want_flags}",
                    flags(after)
                ));
            }
            // An explosion ends the game as a mate does (lila's category).
            if after.variant_loss && after.category != Category::Loss {
                mismatches.push(format!(
                    "{fen} {uci}: {:?} after an explosion",
                    after.category
                ));
            }
            moves_checked += 1;
        }
        checked += 1;
    }
    assert!(
        mismatches.is_empty(),
        "{} disagreements:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
    assert!(
        checked >= 300 && moves_checked >= 3000,
        "{checked} positions, {moves_checked} moves"
    );
}

#[tokio::test]
async fn an_atomic_explosion_is_the_best_move_and_ends_the_mainline() {
    let router = common::router(engine(Vec::new()));
    let fen = "4k3/3n4/8/8/8/8/3Q4/K7 w - - 0 1";
    let (status, body) = common::get_json(&router, &uri("/atomic", fen)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["category"], "win");
    assert_eq!(body["dtz"], 1);
    let best = &body["moves"][0];
    assert_eq!(best["san"], "Qxd7#");
    assert_eq!(best["variant_loss"], true);
    assert_eq!(best["variant_win"], false);
    assert_eq!(best["checkmate"], false);
    assert_eq!(best["category"], "loss");
    // lila asks its DTW prober about antichess positions only.
    assert_eq!(best["dtw"], Value::Null);

    let (status, body) = common::get_json(&router, &uri("/atomic/mainline", fen)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["winner"], "w");
    assert_eq!(body["dtz"], 1);
    let line: Vec<&Value> = body["mainline"]
        .as_array()
        .expect("mainline")
        .iter()
        .collect();
    assert_eq!(line.len(), 1, "{body}");
    assert_eq!(line[0]["uci"], "d2d7");
}

#[tokio::test]
async fn positions_are_read_under_the_variants_rules() {
    let router = common::router(engine(Vec::new()));
    // Kings side by side: legal in atomic (neither can capture), not in standard.
    let touching = "8/8/8/8/8/8/2kK4/7R w - - 0 1";
    let (status, body) = common::get_json(&router, &uri("/atomic", touching)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, _) = common::get_json(&router, &uri("/standard", touching)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    // The side that just moved has no king: illegal in atomic.
    for path in ["/atomic", "/atomic/mainline"] {
        let (status, body) =
            common::get_json(&router, &uri(path, "8/8/8/8/8/8/4K3/7R w - - 0 1")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{path}: {body}");
        assert!(
            body["error"].as_str().expect("error").contains("king"),
            "{body}"
        );
    }
    for path in ["/antichess", "/antichess/mainline", "/atomic"] {
        let (status, _) = common::get_json(&router, path).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{path} without fen");
        let (status, _) = common::get_json(&router, &uri(path, "not a fen")).await;
        assert_eq!(
            status,
            StatusCode::BAD_REQUEST,
            "{path} with a malformed fen"
        );
    }
}

#[tokio::test]
async fn antichess_captures_are_compulsory_and_losing_every_piece_wins() {
    // No antichess tables at all: the rules alone decide these, as in lila.
    let router = common::router(engine(Vec::new()));
    let (status, body) =
        common::get_json(&router, &uri("/antichess", "8/8/8/8/8/8/1n6/B7 w - - 0 1")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let moves = body["moves"].as_array().expect("moves");
    assert_eq!(moves.len(), 1, "only the capture is legal: {body}");
    assert_eq!(moves[0]["uci"], "a1b2");
    // Black has nothing left, so black has won.
    assert_eq!(moves[0]["variant_win"], true);
    assert_eq!(moves[0]["variant_loss"], false);
    assert_eq!(moves[0]["category"], "win");
    // lila's DTW prober refuses a side without pieces (error -1): null.
    assert_eq!(moves[0]["dtw"], Value::Null);
    assert_eq!(body["category"], "loss");

    // A king, a bishop and two captures on offer: only the captures are listed.
    let (status, body) = common::get_json(
        &router,
        &uri("/antichess", "8/8/8/8/8/1p6/2B5/K2n4 w - - 0 1"),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let mut ucis: Vec<&str> = body["moves"]
        .as_array()
        .expect("moves")
        .iter()
        .map(|m| m["uci"].as_str().expect("uci"))
        .collect();
    ucis.sort();
    assert_eq!(ucis, ["c2b3", "c2d1"]);
}

/// `GET path`'s JSON, checked to be 200, and its bytes.
async fn ok_json(router: &axum::Router, path: &str, fen: &str) -> (Value, String) {
    let (status, _, bytes) = common::get(router, &uri(path, fen), None).await;
    let text = String::from_utf8(bytes).expect("UTF-8");
    assert_eq!(status, StatusCode::OK, "{fen}: {text}");
    (serde_json::from_str(&text).expect("JSON"), text)
}

/// The answer's move named `san`.
fn move_named<'a>(body: &'a Value, san: &str) -> &'a Value {
    body["moves"]
        .as_array()
        .expect("moves")
        .iter()
        .find(|m| m["san"] == san)
        .unwrap_or_else(|| panic!("no {san} in {body}"))
}

#[tokio::test]
async fn an_antichess_stalemate_of_at_most_4_pieces_has_dtw_0_as_in_lila() {
    // No tables at all: lila's DTW prober answers these without one.
    let router = common::router(engine(Vec::new()));

    // The root: white's pawn is blocked and has nothing to take, so white,
    // to move with no legal move, has won.
    let (body, text) = ok_json(&router, "/antichess", "8/8/8/8/8/p7/P7/8 w - - 0 1").await;
    assert_eq!(body["stalemate"], true, "{text}");
    assert_eq!(body["variant_win"], true, "{text}");
    assert_eq!(body["category"], "win", "{text}");
    assert_eq!(body["dtw"], 0, "{text}");
    assert!(
        text.contains(r#""dtm":null,"dtw":0,"dtc":null,"category":"win""#),
        "{text}"
    );
    assert_eq!(body["moves"].as_array().expect("moves").len(), 0, "{text}");

    // Moves: the bishop must take, the knight or the pawn. Taking the knight
    // leaves black a blocked pawn and no move: black has won (shakmaty's SAN
    // marks the game's end with `#`), dtw 0. Taking
    // the pawn leaves black a knight free to move: a table's question, null.
    let (body, text) = ok_json(&router, "/antichess", "8/8/3n4/8/1B6/p7/P7/8 w - - 0 1").await;
    let stalemating = move_named(&body, "Bxd6#");
    assert_eq!(stalemating["stalemate"], true, "{text}");
    assert_eq!(stalemating["variant_win"], true, "{text}");
    assert_eq!(stalemating["category"], "win", "{text}");
    assert_eq!(stalemating["dtw"], 0, "{text}");
    assert!(
        text.contains(r#""san":"Bxd6#","zeroing":true,"conversion":true,"checkmate":false,"stalemate":true,"variant_win":true"#),
        "{text}"
    );
    let other = move_named(&body, "Bxa3");
    assert_eq!(other["stalemate"], false, "{text}");
    assert_eq!(other["dtw"], Value::Null, "{text}");
    assert_eq!(other["category"], "unknown", "{text}");
    // The order is lila's: a dtw of 0 tightens nothing, the category decides.
    let sans: Vec<&str> = body["moves"]
        .as_array()
        .expect("moves")
        .iter()
        .map(|m| m["san"].as_str().expect("san"))
        .collect();
    assert_eq!(sans, ["Bxa3", "Bxd6#"], "{text}");
    assert_eq!(body["dtw"], Value::Null, "{text}");
}

#[tokio::test]
async fn dtw_stays_null_where_lilas_prober_is_not_asked_or_needs_a_table() {
    let router = common::router(engine(Vec::new()));
    // Five pieces: lila asks its DTW prober about at most 4. The root is a
    // stalemate of 5, and so is the position after Bxd6.
    let (body, text) = ok_json(&router, "/antichess", "8/8/8/8/7p/p2p4/P2P4/8 w - - 0 1").await;
    assert_eq!(body["stalemate"], true, "{text}");
    assert_eq!(body["variant_win"], true, "{text}");
    assert_eq!(body["dtw"], Value::Null, "{text}");
    let (body, text) = ok_json(&router, "/antichess", "8/8/3n4/8/1B6/p6p/P6P/8 w - - 0 1").await;
    let stalemating = move_named(&body, "Bxd6#");
    assert_eq!(stalemating["stalemate"], true, "{text}");
    assert_eq!(stalemating["dtw"], Value::Null, "{text}");
    // The root, after the last piece is taken: the side to move has no
    // pieces, which lila's prober refuses: null.
    let (body, text) = ok_json(&router, "/antichess", "8/8/8/8/8/8/8/B7 b - - 0 1").await;
    assert_eq!(body["variant_win"], true, "{text}");
    assert_eq!(body["dtw"], Value::Null, "{text}");
    // A standard stalemate: lila's DTW prober is for antichess only.
    let (body, text) = ok_json(&router, "/standard", "k7/8/1Q6/8/8/8/8/7K b - - 0 1").await;
    assert_eq!(body["stalemate"], true, "{text}");
    assert_eq!(body["dtw"], Value::Null, "{text}");
}

#[tokio::test]
async fn antichess_answers_and_mainline_from_the_tables() {
    let Some(dir) = antichess_tables() else {
        return;
    };
    let router = common::router(engine(vec![dir]));
    let fen = "8/8/8/8/8/2N5/8/6r1 w - - 0 1";
    let (status, body) = common::get_json(&router, &uri("/antichess", fen)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["category"], "win");
    assert_eq!(body["dtz"], 2);
    // Offering the knight to the rook, which must take it and is then alone.
    let mut best: Vec<&str> = body["moves"].as_array().expect("moves")[..2]
        .iter()
        .map(|m| m["san"].as_str().expect("san"))
        .collect();
    best.sort();
    assert_eq!(best, ["Nb1", "Nd1"], "{body}");

    let (status, body) = common::get_json(&router, &uri("/antichess/mainline", fen)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["winner"], "w");
    let sans: Vec<&str> = body["mainline"]
        .as_array()
        .expect("mainline")
        .iter()
        .map(|step| step["san"].as_str().expect("san"))
        .collect();
    assert_eq!(sans.len(), 2, "{body}");
    assert!(sans[1].starts_with("Rx"), "{sans:?}");
}

#[tokio::test]
async fn a_missing_antichess_table_answers_unknown_and_its_mainline_404() {
    let Some(dir) = antichess_tables() else {
        return;
    };
    let router = common::router(engine(vec![dir]));
    // Four pieces with pawns: those tables are not published here.
    let fen = "8/8/8/8/3p4/8/1P6/N5b1 w - - 0 1";
    let (status, body) = common::get_json(&router, &uri("/antichess", fen)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["category"], "unknown");
    assert_eq!(body["dtz"], Value::Null);
    let unknown = body["moves"]
        .as_array()
        .expect("moves")
        .iter()
        .filter(|m| m["category"] == "unknown" && m["dtz"].is_null())
        .count();
    assert_eq!(
        unknown, 2,
        "the two pawn moves need a missing table: {body}"
    );
    let (status, body) = common::get_json(&router, &uri("/antichess/mainline", fen)).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert!(
        body["error"].as_str().expect("error").contains(".gtb"),
        "{body}"
    );
}

#[tokio::test]
async fn without_antichess_tables_a_mainline_is_not_found() {
    let router = common::router(engine(Vec::new()));
    let (status, body) = common::get_json(
        &router,
        &uri("/antichess/mainline", "8/8/8/8/8/2N5/8/6r1 w - - 0 1"),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
}

/// The embedded atomic tables, except that opening KQvK.atbw panics, as a
/// prober bug on a bad table or an unexpected position would.
struct PanicsOnKqvk;

impl Filesystem for PanicsOnKqvk {
    fn regular_file_size(&self, path: &Path) -> io::Result<u64> {
        EmbeddedFilesystem.regular_file_size(path)
    }

    fn read_dir(&self, path: &Path) -> io::Result<Vec<PathBuf>> {
        EmbeddedFilesystem.read_dir(path)
    }

    fn open(&self, path: &Path) -> io::Result<Box<dyn RandomAccessFile>> {
        if path.ends_with("KQvK.atbw") {
            panic!("simulated prober panic on KQvK.atbw");
        }
        EmbeddedFilesystem.open(path)
    }
}

#[tokio::test]
async fn a_prober_panic_answers_500_naming_the_position_and_the_server_goes_on() {
    let sets = TableDirsByVariant {
        standard: TableDirs::none(),
        atomic: TableDirs {
            filesystem: Arc::new(PanicsOnKqvk),
            dirs: vec![PathBuf::from(EMBEDDED_ATOMIC_DIR)],
        },
        antichess: TableDirs::none(),
        dtm: TableDirs::none(),
        dtm_cache_bytes: 0,
        dtm_verification: server::dtm::Verification::default(),
    };
    let engine = Engine::with_table_sets(&EngineConfig::default(), &sets).expect("tables load");
    let router = common::router(engine);
    let fen = "8/8/8/3k4/8/2K5/5Q2/8 w - - 0 1";
    for path in ["/atomic", "/atomic/mainline", "/atomic"] {
        let (status, body) = common::get_json(&router, &uri(path, fen)).await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{path}: {body}");
        let error = body["error"].as_str().expect("error");
        assert!(error.contains("atomic position"), "{error}");
        assert!(error.contains("KQvK"), "{error}");
        assert!(error.contains("simulated prober panic"), "{error}");
    }
    // Other tables still answer.
    let (status, body) =
        common::get_json(&router, &uri("/atomic", "8/8/8/3k4/8/2K5/5R2/8 w - - 0 1")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}
