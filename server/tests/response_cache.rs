//! The response cache is bounded in bytes and keys answers without the
//! move number, so neither many move numbers of one position nor many big
//! answers make memory grow without limit.

mod common;

use server::engine::{Engine, EngineConfig};
use shakmaty::{Board, CastlingMode, Chess, Color, FromSetup, Setup, Square};

fn engine(cache_bytes: u64) -> Engine {
    Engine::open(&EngineConfig {
        cache_bytes,
        ..EngineConfig::default()
    })
    .expect("embedded tables load")
}

fn pos(fen: &str) -> Chess {
    app::position::parse_fen(fen).unwrap_or_else(|err| panic!("{fen}: {err}"))
}

#[tokio::test]
async fn move_numbers_share_one_entry() {
    let engine = engine(64 << 20);
    // Four queens and the kings: many moves, each answer a few kilobytes.
    for fullmoves in 1..=2_000 {
        let fen = format!("8/8/8/3k4/8/8/1QQ5/K7 w - - 0 {fullmoves}");
        let answer = engine.probe(pos(&fen)).await.expect("answer");
        assert!(!answer.moves.is_empty());
    }
    let stats = engine.cache_stats().await;
    assert_eq!(stats.entries, 1, "{stats:?}");
    assert_eq!(stats.misses, 1, "{stats:?}");
    assert_eq!(stats.hits + stats.coalesced, 1_999, "{stats:?}");
}

#[tokio::test]
async fn the_halfmove_clock_still_counts() {
    let engine = engine(64 << 20);
    let fresh = engine
        .probe(pos("4k3/8/8/8/8/8/8/4K2R w - - 0 1"))
        .await
        .expect("answer");
    let late = engine
        .probe(pos("4k3/8/8/8/8/8/8/4K2R w - - 90 60"))
        .await
        .expect("answer");
    assert_ne!(fresh.pos.category, late.pos.category);
}

#[tokio::test]
async fn held_bytes_stay_within_the_bound() {
    let capacity = 64 << 10;
    let engine = engine(capacity);
    // The white king on each free square: distinct answers of a few
    // kilobytes each, far more than 64 KiB in all.
    let mut asked = 0;
    for square in Square::ALL {
        let Some(pos) = kqq_with_king_on(square) else {
            continue;
        };
        engine.probe(pos).await.expect("answer");
        asked += 1;
    }
    assert!(asked > 40, "only {asked} positions");
    let stats = engine.cache_stats().await;
    assert!(stats.bytes <= capacity, "{stats:?}");
    assert!(stats.bytes > 0, "{stats:?}");
    assert!(stats.entries < asked, "nothing was evicted: {stats:?}");
}

/// Queens on b2 and c2 against a king on a8, the white king on `square`
/// (None where that is not a legal position).
fn kqq_with_king_on(square: Square) -> Option<Chess> {
    let mut board = Board::empty();
    board.set_piece_at(Square::B2, Color::White.queen());
    board.set_piece_at(Square::C2, Color::White.queen());
    board.set_piece_at(Square::A8, Color::Black.king());
    if board.piece_at(square).is_some() {
        return None;
    }
    board.set_piece_at(square, Color::White.king());
    let setup = Setup {
        board,
        ..Setup::empty()
    };
    Chess::from_setup(setup, CastlingMode::Standard).ok()
}
