//! The probe memo: a position an earlier request probed is not probed
//! again, whatever its clocks, and answers are the same as without it.

use server::engine::{Engine, EngineConfig};

fn engine(memo_bytes: u64) -> Engine {
    Engine::open(&EngineConfig {
        cache_bytes: 0,
        memo_bytes,
        ..EngineConfig::default()
    })
    .expect("embedded tables load")
}

async fn answer(engine: &Engine, fen: &str) -> serde_json::Value {
    let pos = app::position::parse_fen(fen).unwrap_or_else(|err| panic!("{fen}: {err}"));
    let answer = engine.probe(pos).await.expect("probe");
    serde_json::to_value(answer.as_ref()).expect("answer as JSON")
}

fn probes(engine: &Engine) -> u64 {
    let counts = engine.probes_by_place();
    counts.inline + counts.pooled
}

#[tokio::test]
async fn positions_probed_before_are_answered_from_the_memo_alike() {
    let with = engine(1 << 20);
    let without = engine(0);
    // KRvK, then a move later, then the same positions with clocks that
    // change their 50-move outcome (the memo keeps no clock).
    let line = [
        "4k3/8/8/8/8/8/8/4K2R w - - 0 1",
        "4k3/8/8/8/8/8/8/4KR2 b - - 1 1",
        "4k3/8/8/8/8/8/8/4K2R w - - 95 80",
        "4k3/8/8/8/8/8/8/4KR2 b - - 99 80",
    ];
    let mut probed = Vec::new();
    for fen in line {
        assert_eq!(
            answer(&with, fen).await,
            answer(&without, fen).await,
            "{fen}"
        );
        probed.push(probes(&with));
    }
    // The first request probes the root and its 14 moves; the second's
    // root was one of those moves; the last two probe nothing at all.
    // Without the memo: the root and 14 moves, the root and 3 moves, twice.
    assert_eq!(probes(&without), 2 * (15 + 4));
    assert_eq!(probed[0], 15);
    assert_eq!(probed[1], 15 + 3);
    assert_eq!(
        probed[1], probed[3],
        "positions asked again were probed again"
    );
    let stats = with.memo_stats();
    assert_eq!(stats.misses, probes(&with), "{stats:?}");
    assert_eq!(stats.hits, probes(&without) - probes(&with), "{stats:?}");
}
