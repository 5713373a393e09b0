//! Under a flood of stalled half-requests that fills the connection cap, a
//! client that sends its request promptly is still answered within a second
//! (the connection cap evicts stalled sockets first), and the server closes every stalled socket in the end. The
//! server runs as a real process under an open-files limit of 512, so its
//! cap is 224 connections; the default timeouts apply.

mod common;
mod process;

use std::{
    io::Write,
    net::{SocketAddr, TcpStream},
    os::unix::process::CommandExt,
    sync::Mutex,
    thread,
    time::{Duration, Instant},
};

use process::{KQVK, Server, closed_within};
use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};

const FD_LIMIT: u64 = 512;
/// Each normal request must be answered within this; generous for a busy
/// 2-core machine (a request answers in milliseconds when nothing is in
/// its way).
const PROMPT: Duration = Duration::from_secs(1);
/// Every stalled socket must be closed by the server within this.
const ALL_CLOSED: Duration = Duration::from_secs(75);
const NORMAL_REQUESTS: usize = 20;

/// One flood at a time: the figures printed are of one flood, not two
/// competing for the machine's two cores.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

#[test]
fn normal_requests_answer_within_a_second_behind_700_stalled_half_requests() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if !room_for_sockets(700 + 100) {
        return;
    }
    let server = start_server();
    let flood_began = Instant::now();
    let stalled: Vec<TcpStream> = (0..700).map(|_| half_request(server.addr)).collect();
    let times: Vec<Duration> = (0..NORMAL_REQUESTS).map(|_| timed_get(&server)).collect();
    report("700 stalled half-requests, then 20 requests", &times);
    assert_prompt(&times, &server);
    assert_all_closed(stalled, flood_began + ALL_CLOSED, &server);
    assert_flood_counted(&server, 700);
}

#[test]
fn normal_requests_answer_within_a_second_while_2000_stalled_sockets_open_over_10_s() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if !room_for_sockets(2_000 + 100) {
        return;
    }
    let server = start_server();
    let addr = server.addr;
    let flood = thread::spawn(move || {
        // 2,000 over 10 s: 20 every 100 ms, on time whatever connecting costs.
        let began = Instant::now();
        let mut stalled = Vec::with_capacity(2_000);
        for round in 0..100u32 {
            sleep_until(began + Duration::from_millis(100) * round);
            stalled.extend((0..20).map(|_| half_request(addr)));
        }
        stalled
    });
    // One request every 0.5 s while the flood goes on, the first after 0.25 s.
    let began = Instant::now();
    let times: Vec<Duration> = (0..NORMAL_REQUESTS as u32)
        .map(|i| {
            sleep_until(began + Duration::from_millis(250) + Duration::from_millis(500) * i);
            timed_get(&server)
        })
        .collect();
    let stalled = flood.join().expect("the flood thread");
    let flood_ended = Instant::now();
    report(
        "2000 stalled sockets over 10 s, 20 requests meanwhile",
        &times,
    );
    assert_eq!(stalled.len(), 2_000);
    assert_prompt(&times, &server);
    assert_all_closed(stalled, flood_ended + ALL_CLOSED, &server);
    assert_flood_counted(&server, 2_000);
}

/// `zugzwang serve` with the embedded tables, default timeouts and cap,
/// under an open-files limit of [`FD_LIMIT`].
fn start_server() -> Server {
    let mut command = process::binary();
    command.args(["serve", "--bind", "127.0.0.1:0"]);
    let limit = Rlimit {
        current: Some(FD_LIMIT),
        maximum: Some(FD_LIMIT),
    };
    // SAFETY: setrlimit is async-signal-safe and touches no memory of the parent.
    unsafe {
        command.pre_exec(move || setrlimit(Resource::Nofile, limit).map_err(Into::into));
    }
    Server::start(command)
}

/// Raises this test process's own open-files limit for the flood's sockets;
/// false (and one `SKIPPED:` line) where the hard limit leaves no room.
fn room_for_sockets(needed: u64) -> bool {
    let limit = getrlimit(Resource::Nofile);
    let raised = Rlimit {
        current: limit.maximum,
        maximum: limit.maximum,
    };
    if limit.maximum.is_some_and(|max| max < needed) || setrlimit(Resource::Nofile, raised).is_err()
    {
        common::unsupported(&format!(
            "the open-files hard limit ({:?}) leaves no room for {needed} sockets",
            limit.maximum
        ));
        return false;
    }
    true
}

/// A connection that sends half a request head and then nothing.
fn half_request(addr: SocketAddr) -> TcpStream {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .write_all(b"GET /standard HTTP/1.1\r\nHost: test\r\n")
        .expect("send half a request");
    stream
}

/// A whole request on a fresh connection, timed from `connect` to the end
/// of the answer; it must be a 200 with the position's answer.
fn timed_get(server: &Server) -> Duration {
    let started = Instant::now();
    let (status, body) = process::get(server.addr, KQVK);
    let took = started.elapsed();
    assert_eq!(status, 200, "{body}\n{}", server.log());
    assert!(body.contains("\"category\":\"win\""), "{body}");
    took
}

/// Prints the figures: the test harness shows them with `--nocapture`,
/// and a failing run's output keeps them.
fn report(what: &str, times: &[Duration]) {
    let mut sorted = times.to_vec();
    sorted.sort();
    let ms = |d: &Duration| format!("{:.1}", d.as_secs_f64() * 1000.0);
    println!(
        "{what}: median {} ms, max {} ms; each, in order (ms): {}",
        ms(&sorted[sorted.len() / 2]),
        ms(sorted.last().expect("some requests")),
        times.iter().map(ms).collect::<Vec<_>>().join(" ")
    );
}

fn assert_prompt(times: &[Duration], server: &Server) {
    for (i, took) in times.iter().enumerate() {
        assert!(
            *took < PROMPT,
            "request {i} took {took:?} (all: {times:?})\n{}",
            server.log()
        );
    }
}

/// Every stalled socket sees the server close it (EOF or reset) before `deadline`.
fn assert_all_closed(stalled: Vec<TcpStream>, deadline: Instant, server: &Server) {
    let total = stalled.len();
    for (i, mut stream) in stalled.into_iter().enumerate() {
        let left = deadline.saturating_duration_since(Instant::now());
        assert!(
            closed_within(&mut stream, left),
            "stalled socket {i} of {total} still open at the deadline\n{}",
            server.log()
        );
    }
}

/// `/metrics` shows the cap of the 512 limit and every stalled connection
/// once: evicted at the cap, or refused by a timeout.
fn assert_flood_counted(server: &Server, stalled: usize) {
    let (status, text) = process::get(server.addr, "/metrics");
    assert_eq!(status, 200, "{text}");
    let value = |series: &str| -> f64 {
        text.lines()
            .find_map(|line| line.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
            .unwrap_or_else(|| panic!("no {series} in\n{text}"))
    };
    assert_eq!(value("zugzwang_http_connections_max"), 224.0);
    let evicted = value("zugzwang_http_connections_evicted_total{state=\"unfinished\"}");
    let timed_out = value("zugzwang_http_connections_refused_total{reason=\"idle_timeout\"}")
        + value("zugzwang_http_connections_refused_total{reason=\"header_timeout\"}");
    println!("of {stalled} stalled: evicted at the cap {evicted}, closed by a timeout {timed_out}");
    assert!(evicted > 0.0, "{text}");
    assert_eq!(evicted + timed_out, stalled as f64, "{text}");
}

fn sleep_until(when: Instant) {
    thread::sleep(when.saturating_duration_since(Instant::now()));
}
