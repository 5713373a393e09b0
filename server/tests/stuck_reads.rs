//! A read that hangs (a dying disk, a hung NFS mount) does not spread. With
//! every read of KQvKR hanging in the store's pread layer (the test hook
//! `store::stuck_reads::stall_reads_of`, which makes them behave as page-cache
//! misses on a disk that does not answer), requests for other tables still
//! answer in their usual time; requests that need KQvKR are answered 503
//! naming it, with Retry-After, once its read has been out longer than
//! `--stuck-read-secs`, instead of queueing behind it; `/metrics` says why;
//! and all recovers when the read returns, the probe thread of a request
//! that gave up included. A probe thread stuck past the limit does not keep
//! its place in the pool from the others either.
//!
//! The stall hook is process-wide: each test stalls a table of its own.

mod common;

use std::time::{Duration, Instant};

use axum::http::StatusCode;
use server::{
    engine::{Engine, EngineConfig},
    store::{StoreOptions, stuck_reads},
};

/// `--stuck-read-secs` here.
const LIMIT: Duration = Duration::from_millis(500);

/// Far below how long the stall lasts (until the test lifts it) and the
/// time a request blocked behind it would take (forever); far above an
/// answer from the page cache, even on a loaded machine.
const PROMPT: Duration = Duration::from_secs(1);

const KQKR: &str = "/standard?fen=4k3/8/8/8/8/8/3r4/KQ6_b_-_-_0_1";

/// Other KQvKR positions, each a computation of its own.
const OTHER_KQKR: [&str; 4] = [
    "/standard?fen=4k3/8/8/8/8/8/3r4/1Q5K_b_-_-_0_1",
    "/standard?fen=4k3/8/8/8/8/8/3r4/2Q4K_b_-_-_0_1",
    "/standard?fen=3k4/8/8/8/8/8/3r4/KQ6_b_-_-_0_1",
    "/standard?fen=5k2/8/8/8/8/8/3r4/KQ6_b_-_-_0_1",
];

/// KRvK positions: none can become KQvKR.
const KRK: [&str; 4] = [
    "/standard?fen=8/8/8/8/8/2k5/8/K2R4_w_-_-_0_1",
    "/standard?fen=8/8/8/8/8/2k5/8/K2R4_b_-_-_0_1",
    "/standard?fen=8/8/3k4/8/8/8/8/K6R_w_-_-_0_1",
    "/standard/mainline?fen=8/8/8/8/8/2k5/8/K2R4_w_-_-_0_1",
];

fn engine(dir: &std::path::Path, probe_threads: usize) -> Engine {
    Engine::open(&EngineConfig {
        tables: vec![dir.to_path_buf()],
        store: StoreOptions {
            stuck_read: LIMIT,
            ..common::store_allowing_unchecked()
        },
        probe_threads,
        // Every request probes its tables: nothing answers from memory
        // what the tables would have to.
        cache_bytes: 0,
        memo_bytes: 0,
        ..EngineConfig::default()
    })
    .expect("tables load")
}

async fn timed(router: &axum::Router, uri: &str) -> (StatusCode, Duration) {
    let asked = Instant::now();
    let (status, _, _) = common::get(router, uri, None).await;
    (status, asked.elapsed())
}

/// One figure of `/metrics`.
async fn figure(router: &axum::Router, line_start: &str) -> f64 {
    let (_, _, body) = common::get(router, "/metrics", None).await;
    let text = String::from_utf8(body).expect("text");
    text.lines()
        .find_map(|line| line.strip_prefix(line_start))
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {line_start} in /metrics:\n{text}"))
}

/// A request's status and body, if it was answered before its deadline,
/// and how long it took.
type Outcome = (Option<(StatusCode, Vec<u8>)>, Duration);

/// Asks for `uri` in a task of its own, giving up after three limits (its
/// deadline).
fn spawn_request(router: &axum::Router, uri: &'static str) -> tokio::task::JoinHandle<Outcome> {
    let router = router.clone();
    tokio::spawn(async move {
        let asked = Instant::now();
        let answer = tokio::time::timeout(3 * LIMIT, common::get(&router, uri, None)).await;
        (
            answer.ok().map(|(status, _, body)| (status, body)),
            asked.elapsed(),
        )
    })
}

/// Waits until a read is out on the disk (the stalled one has begun).
async fn until_a_read_is_out(router: &axum::Router) {
    let since = Instant::now();
    while figure(router, "zugzwang_table_reads_in_flight ").await < 1.0 {
        assert!(since.elapsed() < Duration::from_secs(10), "no read began");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hung_reads_of_one_table_leave_the_others_answering() {
    let dir = common::copy_of_embedded_tables();
    let router = common::router(engine(dir.path(), 4));
    for uri in KRK.iter().chain([&KQKR]) {
        let (status, took) = timed(&router, uri).await;
        assert_eq!(status, StatusCode::OK, "{uri} before the stall");
        eprintln!("{uri}: {took:?} before the stall");
    }

    let stall = stuck_reads::stall_reads_of("KQvKR");
    let stalled_at = Instant::now();
    // The tables opened above stay open: so that KQvKR's reads reach the
    // disk, a fresh engine (as after a restart) whose first read of it hangs.
    let router = common::router(engine(dir.path(), 4));
    // Requests that need KQvKR, each giving up after three limits (its
    // deadline). The first one opens the table, and its read hangs; the
    // others, asked while it hangs (the same position, and others), must
    // not follow it onto probe threads or async workers, nor wait for it
    // past the limit.
    let mut hung = vec![spawn_request(&router, KQKR)];
    until_a_read_is_out(&router).await;
    hung.push(spawn_request(&router, KQKR));
    hung.extend(OTHER_KQKR.map(|uri| spawn_request(&router, uri)));

    // Meanwhile, and past the limit, the other tables answer promptly.
    let mut slowest = Duration::ZERO;
    let mut answered = 0;
    while stalled_at.elapsed() < 2 * LIMIT {
        for uri in KRK {
            let answer = tokio::time::timeout(PROMPT, timed(&router, uri)).await;
            let (status, took) = answer
                .unwrap_or_else(|_| panic!("{uri} took over {PROMPT:?} while KQvKR's reads hang"));
            assert_eq!(status, StatusCode::OK, "{uri} while KQvKR's reads hang");
            // Whatever waits on the hung read waits the limit at least.
            assert!(took < LIMIT, "{uri}: {took:?}");
            slowest = slowest.max(took);
            answered += 1;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    eprintln!("{answered} KRvK requests while KQvKR's reads hang, the slowest in {slowest:?}");

    // Past the limit KQvKR is suspect: a request that needs it is refused at
    // once, naming it, with Retry-After; so is a line through it.
    for uri in [
        KQKR,
        "/standard/mainline?fen=4k3/8/8/8/8/8/3r4/KQ6_b_-_-_0_1",
    ] {
        let asked = Instant::now();
        let (status, headers, body) = common::get_with_headers(&router, uri, None).await;
        let took = asked.elapsed();
        let body = String::from_utf8_lossy(&body).into_owned();
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{uri}: {body}");
        assert!(took < PROMPT, "{uri} refused after {took:?}");
        assert!(body.contains("KQvKR.rtb"), "{uri}: {body}");
        assert_eq!(
            headers.get("retry-after").and_then(|v| v.to_str().ok()),
            Some("1"),
            "{uri}"
        );
    }
    let oldest = figure(&router, "zugzwang_oldest_read_in_flight_seconds ").await;
    assert!(oldest >= LIMIT.as_secs_f64(), "oldest read {oldest} s");
    assert_eq!(figure(&router, "zugzwang_tables_stuck ").await, 1.0);
    assert!(figure(&router, "zugzwang_stuck_read_refusals_total ").await >= 2.0);
    // One probe thread is held, by the hung read (busy, or stuck once other
    // probes wanted every place): the first request opens the table with
    // one probe before sending its others, and the requests that came
    // after hold none.
    let busy = figure(&router, "zugzwang_probe_threads_busy ").await;
    let stuck = figure(&router, "zugzwang_probe_threads_stuck ").await;
    assert_eq!(busy + stuck, 1.0, "busy {busy}, stuck {stuck}");

    // The requests that needed KQvKR: one gave up at its deadline (its read
    // is still out); the others were refused (503) once the table was
    // suspect, without waiting for their deadline.
    let mut gave_up = 0;
    for request in hung {
        let (answer, took) = request.await.expect("request task");
        match answer {
            Some((status, body)) => {
                assert_eq!(
                    status,
                    StatusCode::SERVICE_UNAVAILABLE,
                    "{}",
                    String::from_utf8_lossy(&body)
                );
                assert!(took < 2 * LIMIT, "refused after {took:?}");
            }
            None => gave_up += 1,
        }
    }
    assert_eq!(gave_up, 1, "only the request whose read hangs waits for it");

    // The read returns: the mark lifts, and the probe thread of the request
    // that gave up is free again.
    drop(stall);
    let lifted = Instant::now();
    while figure(&router, "zugzwang_probe_threads_busy ").await
        + figure(&router, "zugzwang_probe_threads_stuck ").await
        > 0.0
    {
        assert!(
            lifted.elapsed() < Duration::from_secs(10),
            "the gone request's probe thread was not given back"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(figure(&router, "zugzwang_tables_stuck ").await, 0.0);
    assert_eq!(
        figure(&router, "zugzwang_oldest_read_in_flight_seconds ").await,
        0.0
    );
    let (status, _) = timed(&router, KQKR).await;
    assert_eq!(status, StatusCode::OK, "KQvKR answers again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_probe_thread_stuck_past_the_limit_keeps_no_place_from_the_others() {
    const KQKB: &str = "/standard?fen=4k3/8/8/8/8/8/3b4/KQ6_b_-_-_0_1";
    let dir = common::copy_of_embedded_tables();
    let _stall = stuck_reads::stall_reads_of("KQvKB");
    // One probe thread, and no table opened yet: KRvK's first request must
    // open its tables on the pool, where KQvKB's stuck read holds the place.
    let router = common::router(engine(dir.path(), 1));
    let hung = spawn_request(&router, KQKB);
    until_a_read_is_out(&router).await;
    let asked = Instant::now();
    let answer = tokio::time::timeout(LIMIT + PROMPT, timed(&router, KRK[0])).await;
    let (status, _) = answer.unwrap_or_else(|_| {
        panic!("KRvK waited for the place of a stuck probe thread past the limit")
    });
    assert_eq!(status, StatusCode::OK);
    eprintln!("KRvK answered after {:?}", asked.elapsed());
    assert_eq!(figure(&router, "zugzwang_probe_threads_stuck ").await, 1.0);
    assert_eq!(figure(&router, "zugzwang_probe_threads_busy ").await, 0.0);
    let (answer, _) = hung.await.expect("request task");
    assert!(answer.is_none(), "KQvKB's request waits for its read");
}
