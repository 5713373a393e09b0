//! The experiment behind "What is left inside the library: the 1-ply
//! searches" (server/docs/benchmarks.md), not part of the build: probes the
//! root and every move of each request of a log, as the server does, with
//! shakmaty-syzygy 0.28.1 patched by shakmaty-syzygy-search-experiment.patch
//! (beside this file). Counts the probes that do a 1-ply search and their
//! share of the time, then alternates the unchanged library with the
//! decoded-value cache, each beside a memo that also answers the searches'
//! positions, and checks that every answer is the same.
//!
//!   cargo new sim && cp search-experiment.rs sim/src/main.rs
//!   (copy shakmaty-syzygy 0.28.1 to syzygy/, apply the patch, and depend on
//!   shakmaty 0.30.1 and shakmaty-syzygy = { path = "../syzygy" })
//!   cargo run --release -- ../shared/syzygy/standard ../shared/workloads/explore-345.txt 20000

use std::{cell::RefCell, collections::HashMap, time::Instant};
use shakmaty::{CastlingMode, Chess, Position, fen::Fen};
use shakmaty_syzygy::{Tablebase, MaybeRounded, Dtz, SyzygyError};
type SyzygyResult<T> = Result<T, SyzygyError>;

fn key(p: &Chess) -> u64 {
    use std::hash::{Hash, Hasher};
    let b = p.board();
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for x in [b.white(), b.pawns(), b.knights(), b.bishops(), b.rooks(), b.queens(), b.kings()] { x.0.hash(&mut h); }
    (p.turn() as u8).hash(&mut h);
    p.ep_square(shakmaty::EnPassantMode::Legal).hash(&mut h);
    h.finish()
}
static INNER_PROBES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn count_inner(_: u64) {
    INNER_PROBES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mut tb = Tablebase::<Chess>::new();
    tb.add_directory(&args[1]).unwrap();
    let log = std::fs::read_to_string(&args[2]).unwrap();
    let n: usize = args.get(3).map(|s| s.parse().unwrap()).unwrap_or(5000);
    let cap: usize = args.get(4).map(|s| s.parse().unwrap()).unwrap_or(350000);
    let mut reqs: Vec<Vec<Chess>> = Vec::new();
    for line in log.lines().take(n) {
        let Ok(fen) = line.parse::<Fen>() else { continue };
        let Ok(pos) = fen.into_position::<Chess>(CastlingMode::Standard) else { continue };
        let mut positions = vec![pos.clone()];
        for m in pos.legal_moves() { let mut a = pos.clone(); a.play_unchecked(m); positions.push(a); }
        reqs.push(positions);
    }
    // Which top-level probes search, and their share of the probing time.
    let (mut top, mut searching, mut t_search, mut t_all) = (0u64, 0u64, 0f64, 0f64);
    shakmaty_syzygy::hook::INNER.with(|c| c.set(Some(count_inner)));
    for r in &reqs {
        for p in r {
            let before = shakmaty_syzygy::hook::SEARCHES.with(|c| c.get());
            let t = Instant::now();
            let _ = tb.probe_dtz(p);
            let dt = t.elapsed().as_secs_f64();
            top += 1;
            t_all += dt;
            if shakmaty_syzygy::hook::SEARCHES.with(|c| c.get()) > before {
                searching += 1;
                t_search += dt;
            }
        }
    }
    let n_req = reqs.len() as f64;
    shakmaty_syzygy::hook::INNER.with(|c| c.set(None));
    println!(
        "{} requests: {:.1} top-level probes a request, {:.2} of them search, {:.0}% of the probing time; {:.1} positions a request probed inside the searches",
        reqs.len(), top as f64 / n_req, searching as f64 / n_req, 100.0 * t_search / t_all,
        INNER_PROBES.load(std::sync::atomic::Ordering::Relaxed) as f64 / n_req
    );
    for round in 0..4 {
        shakmaty_syzygy::hook::VCACHE.store(round % 2 == 1, std::sync::atomic::Ordering::Relaxed);
        let t = Instant::now();
        let mut plain = Vec::new();
        for r in &reqs { for p in r { plain.push(format!("{:?}", tb.probe_dtz(p).ok())); } }
        let t_plain = t.elapsed().as_secs_f64();
        let memo: RefCell<HashMap<u64, MaybeRounded<Dtz>>> = RefCell::new(HashMap::new());
        let (hits, misses) = (std::cell::Cell::new(0u64), std::cell::Cell::new(0u64));
        let lookup = |p: &Chess, f: &dyn Fn() -> SyzygyResult<MaybeRounded<Dtz>>| -> SyzygyResult<MaybeRounded<Dtz>> {
            let k = key(p);
            if let Some(v) = memo.borrow().get(&k) { hits.set(hits.get()+1); return Ok(*v); }
            misses.set(misses.get()+1);
            let v = f()?;
            let mut m = memo.borrow_mut();
            if m.len() >= cap { m.clear(); }
            m.insert(k, v);
            Ok(v)
        };
        let inner = |g: &Chess| lookup(g, &|| tb.probe_dtz(g));
        let t = Instant::now();
        let mut memoed = Vec::new();
        for r in &reqs { for p in r { memoed.push(format!("{:?}", lookup(p, &|| tb.probe_dtz_with(p, &inner)).ok())); } }
        let t_memo = t.elapsed().as_secs_f64();
        let same = plain == memoed;
        println!("round {round} vcache {}: plain {:.3} ms/req, memo all {:.3} ms/req ({:.0}%), hits {} misses {}, same answers: {same}", round % 2 == 1,
            1000.0*t_plain/reqs.len() as f64, 1000.0*t_memo/reqs.len() as f64, 100.0*t_memo/t_plain, hits.get(), misses.get());
    }
}
