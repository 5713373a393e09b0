//! A request's future is moved by memcpy several times on its way through
//! the router (each layer that boxes or wraps it), cached answer or not.
//! A future that takes another and awaits it holds it twice, so nested
//! computations double at each level: unboxed, the probe handler's future
//! was 74 KB and its copies a tenth of a hot request's instructions
//! (server/docs/benchmarks.md, "Hot CPU beside lila-tablebase, in
//! instructions"). The computations behind the response cache are boxed
//! (`Engine::probe`, `Engine::mainline`); these bounds keep them so.

use server::{
    engine::{Engine, EngineConfig},
    http::api,
};

/// Well above what the handlers need now (about 3.6 KB), far below the
/// 74 KB they took unboxed.
const HANDLER_BOUND: usize = 8 << 10;

/// The size of the future a function of four arguments returns.
fn future_size<A, B, C, D, F>(_: &impl FnOnce(A, B, C, D) -> F) -> usize {
    size_of::<F>()
}

#[test]
fn the_handlers_futures_stay_small() {
    let probe = future_size(&api::probe);
    assert!(
        probe <= HANDLER_BOUND,
        "the probe handler's future: {probe} bytes"
    );
    let mainline = future_size(&api::mainline);
    assert!(
        mainline <= HANDLER_BOUND,
        "the mainline handler's future: {mainline} bytes"
    );
}

#[test]
fn the_engines_futures_stay_small() {
    let engine = Engine::open(&EngineConfig::default()).expect("embedded tables load");
    let pos = app::position::parse_fen("4k3/8/8/8/8/8/8/4K2R w - - 0 1").expect("position");
    let probe = size_of_val(&engine.probe(pos.clone()));
    assert!(probe <= 2 << 10, "Engine::probe's future: {probe} bytes");
    let mainline = size_of_val(&engine.mainline(pos));
    assert!(
        mainline <= 2 << 10,
        "Engine::mainline's future: {mainline} bytes"
    );
}
