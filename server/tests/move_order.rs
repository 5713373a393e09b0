//! Moves come out in lila-tablebase's order, byte for byte: clients play
//! `moves[0]`, so even equally good moves must be listed the same way.
//!
//! The expected orders are written from the rule (lila-tablebase's
//! `MoveInfo::sort_key`), not taken from the server: hand-written for the
//! examples, and for the shared fixtures by sorting shakmaty's legal-move
//! list with a comparator written here, independently of `engine::order`.

mod common;

use std::{cmp::Ordering, path::PathBuf};

use app::api::{Category, MoveInfo, TablebaseAnswer};
use server::engine::Engine;
use shakmaty::{CastlingMode, Chess, Move, Position};

fn answer(engine: &Engine, fen: &str, runtime: &tokio::runtime::Runtime) -> TablebaseAnswer {
    let pos = app::position::parse_fen(fen).unwrap_or_else(|err| panic!("{fen}: {err}"));
    let answer = runtime
        .block_on(engine.probe(pos))
        .unwrap_or_else(|err| panic!("{fen}: {err}"));
    answer.as_ref().clone()
}

fn sans(answer: &TablebaseAnswer) -> Vec<&str> {
    answer.moves.iter().map(|m| m.san.as_str()).collect()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

fn embedded() -> Engine {
    common::engine_with(Vec::new())
}

/// The embedded Syzygy tables without DTM, as lila-tablebase runs without
/// `--prophet` (the issue's examples were written for that).
fn embedded_without_dtm() -> Engine {
    let empty = tempfile::tempdir().expect("temporary directory");
    Engine::open(&server::engine::EngineConfig {
        dtm: vec![empty.path().to_owned()],
        ..server::engine::EngineConfig::default()
    })
    .expect("tables load")
}

#[test]
fn issue_examples_in_lilas_order() {
    let rt = runtime();
    let engine = embedded_without_dtm();
    // A winning conversion ranks before DTZ, and the queen before the rook.
    let got = answer(&engine, "2k5/5P2/8/8/1P6/8/5K2/8 w - - 1 68", &rt);
    assert_eq!(
        sans(&got)[..6],
        ["f8=Q+", "f8=R+", "f8=N", "f8=B", "b5", "Ke1"],
        "{:?}",
        dtzs(&got)
    );
    assert_eq!(
        dtzs(&got)[..5],
        [Some(-2), Some(-2), Some(-6), Some(-10), Some(-2)]
    );

    // With DTM, the fastest mate ranks before conversions and DTZ: here
    // the promotions to a queen or rook mate soonest, the king steps next.
    let got = answer(&embedded(), "2k5/5P2/8/8/1P6/8/5K2/8 w - - 1 68", &rt);
    let dtms: Vec<Option<i32>> = got.moves.iter().map(|m| m.pos.dtm).collect();
    assert!(
        dtms.iter()
            .take_while(|d| d.is_some_and(|d| d < 0))
            .is_sorted_by_key(|d| d.map(|d| -d)),
        "{dtms:?}"
    );
    assert_eq!(sans(&got)[0], "f8=Q+", "{:?} {dtms:?}", sans(&got));

    let Some(dir) = common::shared_tables_dir() else {
        return;
    };
    let engine = common::engine_allowing_unchecked(vec![dir]);
    // Ties under the whole key: the order an unstable sort leaves them in.
    let got = answer(&engine, "1B3B2/8/8/2Q5/6k1/K7/8/8 w - - 2 45", &rt);
    assert_eq!(
        sans(&got)[..5],
        ["Qc6", "Bh6", "Qf2", "Qc4+", "Qd5"],
        "{:?}",
        sans(&got)
    );
    let got = answer(&engine, "8/5Q2/8/2k5/6Q1/6KQ/8/8 w - - 0 45", &rt);
    assert_eq!(sans(&got)[..2], ["Qc7+", "Qhh5+"], "{:?}", sans(&got));
}

fn dtzs(answer: &TablebaseAnswer) -> Vec<Option<i32>> {
    answer.moves.iter().map(|m| m.pos.dtz).collect()
}

/// lila-tablebase's rule as a chain of comparisons ("less" is better).
fn by_rule(a: &MoveInfo, b: &MoveInfo, a_move: &Move, b_move: &Move) -> Ordering {
    let (x, y) = (&a.pos, &b.pos);
    // Converting or zeroing is good unless the opponent wins after the move.
    let good = |flag: bool, m: &MoveInfo| flag != m.pos.category.is_win();
    rank(x.category)
        .cmp(&rank(y.category))
        .then(y.checkmate.cmp(&x.checkmate))
        .then(y.variant_loss.cmp(&x.variant_loss))
        .then(x.variant_win.cmp(&y.variant_win))
        .then(y.stalemate.cmp(&x.stalemate))
        .then(y.insufficient_material.cmp(&x.insufficient_material))
        .then(mate_rank(x.dtm.or(x.dtw)).cmp(&mate_rank(y.dtm.or(y.dtw))))
        .then(good(b.conversion, b).cmp(&good(a.conversion, a)))
        .then(good(b.zeroing, b).cmp(&good(a.zeroing, a)))
        .then(dtz_rank(x.dtz).cmp(&dtz_rank(y.dtz)))
        .then(b_move.capture().cmp(&a_move.capture()))
        .then(b_move.promotion().cmp(&a_move.promotion()))
}

/// Best first for the mover: the opponent's loss, then unknown, ...
fn rank(category: Category) -> u8 {
    match category {
        Category::Loss => 0,
        Category::Unknown => 1,
        Category::SyzygyLoss => 2,
        Category::MaybeLoss => 3,
        Category::BlessedLoss => 4,
        Category::Draw => 5,
        Category::CursedWin => 6,
        Category::MaybeWin => 7,
        Category::SyzygyWin => 8,
        Category::Win => 9,
    }
}

/// The opponent mated soonest first (DTM -1, -2, ...), then no DTM and
/// draws alike, then the opponent mating latest first (..., 2, 1).
fn mate_rank(dtm: Option<i32>) -> (u8, i64) {
    match dtm {
        Some(d) if d < 0 => (0, -i64::from(d)),
        Some(d) if d > 0 => (2, -i64::from(d)),
        _ => (1, 0),
    }
}

/// Unknown DTZ first, then from the largest DTZ down.
fn dtz_rank(dtz: Option<i32>) -> (bool, i64) {
    match dtz {
        None => (false, 0),
        Some(d) => (true, -i64::from(d)),
    }
}

/// Stands in for lila-tablebase's move record in the sort: Rust's unstable
/// sort places equal elements by the element's size class and `Copy`-ness
/// too, and lila's record is 64 bytes and not `Copy`.
struct LilaSized<'a> {
    m: Move,
    info: &'a MoveInfo,
    _rest_of_the_record: [u8; 48],
}

/// The order the rule gives: shakmaty's legal moves, sorted unstably.
fn expected_order(pos: &Chess, answer: &TablebaseAnswer) -> Vec<String> {
    assert_eq!(std::mem::size_of::<LilaSized>(), 64);
    let mut moves: Vec<LilaSized> = pos
        .legal_moves()
        .into_iter()
        .map(|m| {
            let uci = m.to_uci(CastlingMode::Standard).to_string();
            let info = answer
                .moves
                .iter()
                .find(|info| info.uci == uci)
                .unwrap_or_else(|| panic!("legal move {uci} missing from the answer"));
            LilaSized {
                m,
                info,
                _rest_of_the_record: [0; 48],
            }
        })
        .collect();
    moves.sort_unstable_by(|a, b| by_rule(a.info, b.info, &a.m, &b.m));
    moves.into_iter().map(|x| x.info.san.clone()).collect()
}

/// Checks every position of a fixture file; returns how many were checked.
fn check_fixture(csv: PathBuf, engine: &Engine, rt: &tokio::runtime::Runtime) -> usize {
    let mut reader = csv::Reader::from_path(&csv).expect("csv opens");
    let mut wrong = Vec::new();
    let mut checked = 0;
    for record in reader.records() {
        let record = record.expect("csv record");
        let fen = &record[0];
        let pos = app::position::parse_fen(fen).expect("fixture FEN");
        let got = answer(engine, fen, rt);
        let expected = expected_order(&pos, &got);
        let got: Vec<String> = got.moves.iter().map(|m| m.san.clone()).collect();
        if got != expected {
            wrong.push(format!(
                "{fen}\n  expected {expected:?}\n  got      {got:?}"
            ));
        }
        checked += 1;
    }
    assert!(
        wrong.is_empty(),
        "{} of {checked} positions out of order:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    checked
}

#[test]
fn three_and_four_piece_fixtures_follow_the_rule() {
    let csv = common::fixture("positions-34.csv");
    let checked = check_fixture(csv, &embedded(), &runtime());
    assert!(checked >= 2000, "only {checked} positions");
}

#[test]
fn five_piece_fixtures_follow_the_rule() {
    let Some((dir, csv)) = common::shared_tables_and("testdata/positions-345.csv") else {
        return;
    };
    let engine = common::engine_allowing_unchecked(vec![dir]);
    let checked = check_fixture(csv, &engine, &runtime());
    assert!(checked >= 3000, "only {checked} positions");
}

/// Tie-heavy positions in the embedded tables: several queens, promotions
/// at equal DTZ, captures of different pieces.
const TIE_HEAVY: [&str; 8] = [
    "8/8/8/3k4/8/8/1QQ5/K7 w - - 0 1",
    "7k/8/8/8/8/8/Q1Q5/K7 w - - 10 40",
    "1n6/P7/8/8/8/8/6k1/K7 w - - 0 1",
    "r7/1P6/8/8/8/6k1/8/4K3 w - - 0 1",
    "7k/8/8/8/8/2b1n3/3K4/8 w - - 0 1",
    "8/8/8/3k4/8/2r1b3/3K4/8 w - - 0 1",
    "k7/8/1K6/8/8/8/7Q/8 w - - 0 1",
    "4k3/8/8/8/8/8/8/4K2R w - - 0 1",
];

#[test]
fn tie_heavy_positions_follow_the_rule() {
    let rt = runtime();
    let engine = embedded();
    for fen in TIE_HEAVY {
        let pos = app::position::parse_fen(fen).expect("legal");
        let got = answer(&engine, fen, &rt);
        let got_sans: Vec<String> = got.moves.iter().map(|m| m.san.clone()).collect();
        assert_eq!(got_sans, expected_order(&pos, &got), "{fen}");
    }
}

#[test]
fn equal_captures_rank_by_the_captured_role() {
    let rt = runtime();
    let engine = embedded();
    // Either capture leaves a bare minor piece: both insufficient material,
    // DTZ 0, both zeroing conversions. Only the captured role tells them
    // apart, and the bishop ranks above the knight.
    let got = answer(&engine, "7k/8/8/8/8/2b1n3/3K4/8 w - - 0 1", &rt);
    assert_eq!(sans(&got)[..2], ["Kxc3", "Kxe3"], "{:?}", sans(&got));
    assert!(got.moves[..2].iter().all(|m| m.pos.insufficient_material));
}

#[test]
fn a_promotion_that_captures_the_rook_comes_first() {
    let rt = runtime();
    let engine = embedded();
    // KPvKR: bxa8=Q and bxa8=R both win the rook (conversions); the queen
    // mates faster. b8=Q is a conversion too but loses the queen to Rxb8.
    let got = answer(&engine, "r7/1P6/8/8/8/6k1/8/4K3 w - - 0 1", &rt);
    assert_eq!(sans(&got)[..2], ["bxa8=Q", "bxa8=R"], "{:?}", sans(&got));
}
