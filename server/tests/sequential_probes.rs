//! `--sequential-probes` changes only when the probes of a request run, never the answer.

mod common;

use server::engine::{Engine, EngineConfig};

#[tokio::test]
async fn sequential_and_parallel_probes_give_the_same_answers() {
    let config = |sequential_probes| EngineConfig {
        tables: vec![common::embedded_tables_dir()],
        cache_entries: 0,
        sequential_probes,
        ..EngineConfig::default()
    };
    let parallel = Engine::open(&config(false)).expect("tables load");
    let sequential = Engine::open(&config(true)).expect("tables load");
    assert!(sequential.sequential_probes() && !parallel.sequential_probes());
    for fen in [
        "8/8/8/8/8/2k5/8/K2R4 w - - 0 1",
        "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1",
        "8/8/8/8/4k3/8/2K1P3/8 b - - 7 40",
        "6k1/8/8/8/8/8/8/5q1K w - - 0 1",
    ] {
        let pos = app::position::parse_fen(fen).unwrap_or_else(|err| panic!("{fen}: {err}"));
        let a = parallel.probe(pos.clone()).await.expect("parallel probe");
        let b = sequential.probe(pos).await.expect("sequential probe");
        assert_eq!(
            serde_json::to_value(a.as_ref()).unwrap(),
            serde_json::to_value(b.as_ref()).unwrap(),
            "{fen}"
        );
        assert!(!a.moves.is_empty(), "{fen}");
    }
}
