//! SIGTERM (what systemd, Docker and Kubernetes send) stops the server
//! cleanly: requests it has accepted are all answered, idle and half-sent
//! connections do not hold it up, and it exits 0.

mod process;

use std::{io::Write, net::TcpStream, time::Duration};

use process::{closed_by_server, read_response, send_get};
use rustix::process::Signal;
use shakmaty::{Board, Color, Square};

/// Requests in flight when the signal comes: mainlines of distinct positions,
/// so neither the cache nor coalescing answers them at once.
fn mainline_requests() -> Vec<String> {
    let squares = [
        "a1", "b1", "c1", "a2", "b2", "c2", "a3", "b3", "c3", "d3", "e3", "f3",
    ];
    let mut paths = Vec::new();
    for (rank, rook) in ["h1", "h2", "h3"].iter().enumerate() {
        for king in squares.iter().skip(rank) {
            let fen = kings_and_rook(king, rook);
            paths.push(format!("/standard/mainline?fen={fen}"));
            paths.push(format!("/standard?fen={fen}"));
        }
    }
    paths
}

/// White king on `king`, rook on `rook`, black king on e8, white to move,
/// as the query carries it.
fn kings_and_rook(king: &str, rook: &str) -> String {
    let square = |name: &str| name.parse::<Square>().expect("square name");
    let mut board = Board::empty();
    board.set_piece_at(Square::E8, Color::Black.king());
    board.set_piece_at(square(king), Color::White.king());
    board.set_piece_at(square(rook), Color::White.rook());
    format!("{}_w_-_-_0_1", board.board_fen())
}

/// API requests the server has answered or is answering, from `/metrics`
/// (less the `/metrics` request asking).
fn requests_read(addr: std::net::SocketAddr) -> usize {
    let (_, metrics) = process::get(addr, "/metrics");
    let sample = |line: &str| -> usize {
        line.rsplit(' ')
            .next()
            .and_then(|value| value.parse::<f64>().ok())
            .map_or(0, |value| value as usize)
    };
    let answered: usize = metrics
        .lines()
        .filter(|line| line.starts_with("zugzwang_http_requests_total{"))
        .filter(|line| line.contains("route=\"/standard"))
        .map(sample)
        .sum();
    let in_progress = metrics
        .lines()
        .find(|line| line.starts_with("zugzwang_http_requests_in_progress "))
        .map_or(0, sample);
    answered + in_progress.saturating_sub(1)
}

#[test]
fn sigterm_answers_the_requests_in_flight_and_exits_0() {
    // Long timeouts: only the shutdown itself may close these connections.
    let mut server = process::serve(&[
        "--probe-threads",
        "1",
        "--header-timeout",
        "300",
        "--idle-timeout",
        "300",
        "--drain-timeout",
        "120",
    ]);
    let mut half_sent = TcpStream::connect(server.addr).expect("connect");
    half_sent
        .write_all(b"GET / HTTP/1.1\r\nHost: test\r\n")
        .expect("send half a request");
    let mut idle = TcpStream::connect(server.addr).expect("connect");
    let paths = mainline_requests();
    // Keep-alive: every connection stays open after its answer until the
    // shutdown closes it, so counting the server's sockets tells when it has
    // accepted them all.
    let in_flight: Vec<TcpStream> = paths
        .iter()
        .map(|path| send_get(server.addr, path, false))
        .collect();
    let expected = in_flight.len() + 3; // + listener, half-sent, idle
    server.wait_until("every connection to be accepted", |server| {
        server.open_sockets() >= expected
    });
    // Accepted is not yet read: a request still in the socket's buffer when
    // the signal comes is on a connection the server sees as idle, and
    // closing idle connections is what a shutdown does (clients retry those).
    // Wait until the server has read every one: answered or in progress.
    server.wait_until("every request to be read", |server| {
        requests_read(server.addr) >= in_flight.len()
    });

    server.signal(Signal::TERM);

    for (path, stream) in paths.iter().zip(in_flight) {
        let (status, body) = read_response(stream);
        assert_eq!(status, 200, "{path}: {body}\n{}", server.log());
        assert!(body.starts_with('{'), "{path}: {body}");
    }
    assert!(closed_by_server(&mut half_sent), "{}", server.log());
    assert!(closed_by_server(&mut idle), "{}", server.log());
    // Far below the timeouts above: idle and half-sent connections were
    // closed by the shutdown, not waited out.
    let status = server.wait_exit(Duration::from_secs(60));
    assert!(status.success(), "{status}\n{}", server.log());
    let log = server.log();
    assert!(log.contains("SIGTERM"), "{log}");
    assert!(log.contains("drained"), "{log}");
    eprintln!("{log}");
}

/// Requests that take a while: the fastest mates of distinct KQvKR positions
/// (white king here and there, queen d1; black king a8, rook h7), each a
/// fraction of a second in a debug build with the DTM block cache off (every
/// lookup decompresses its block). Each position is checked legal.
fn slow_requests() -> Vec<String> {
    let kings = [
        "a1", "b1", "c1", "e1", "f1", "g1", "a2", "b2", "c2", "d2", "e2", "f2", "g2", "a3", "b3",
        "c3",
    ];
    kings
        .iter()
        .map(|king| {
            let square = |name: &str| name.parse::<Square>().expect("square name");
            let mut board = Board::empty();
            board.set_piece_at(Square::A8, Color::Black.king());
            board.set_piece_at(Square::H7, Color::Black.rook());
            board.set_piece_at(square(king), Color::White.king());
            board.set_piece_at(Square::D1, Color::White.queen());
            let fen = format!("{} w - - 0 1", board.board_fen());
            let setup: shakmaty::fen::Fen = fen.parse().expect("FEN");
            setup
                .into_position::<shakmaty::Chess>(shakmaty::CastlingMode::Standard)
                .unwrap_or_else(|err| panic!("{fen}: {err}"));
            format!("/standard/fastest-mate?fen={}", fen.replace(' ', "_"))
        })
        .collect()
}

/// A whole answer as sent: status line, headers (lower-cased names), body.
/// Panics if the server closes the connection without one.
fn read_whole(mut stream: TcpStream) -> (u16, Vec<(String, String)>, String) {
    use std::io::Read;
    let mut raw = Vec::new();
    if let Err(err) = stream.read_to_end(&mut raw) {
        panic!(
            "no complete answer ({err}); got {:?}",
            String::from_utf8_lossy(&raw)
        );
    }
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("no answer at all, the connection was dropped: {text:?}"));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|line| line.split(' ').nth(1))
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status in {head:?}"));
    let headers = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_string()))
        .collect();
    (status, headers, body.to_string())
}

#[test]
fn requests_still_running_at_the_drain_deadline_get_503_and_the_exit_status_says_so() {
    let mut server = process::serve(&[
        "--drain-timeout",
        "0.05",
        "--dtm-cache-mb",
        "0",
        "--cache-mb",
        "0",
        "--probe-memo-mb",
        "0",
        "--header-timeout",
        "300",
        "--idle-timeout",
        "300",
    ]);
    let paths = slow_requests();
    let in_flight: Vec<TcpStream> = paths
        .iter()
        .map(|path| send_get(server.addr, path, false))
        .collect();
    // Every request read (see the test above): an unread one is on a
    // connection the server sees as idle, closed without an answer.
    server.wait_until("every request to be read", |server| {
        requests_read(server.addr) >= in_flight.len()
    });

    server.signal(Signal::TERM);

    let mut cut = 0;
    for (path, stream) in paths.iter().zip(in_flight) {
        let (status, headers, body) = read_whole(stream);
        let header = |name: &str| {
            headers
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.as_str())
        };
        match status {
            200 => assert!(body.contains("\"moves\""), "{path}: {body}"),
            503 => {
                cut += 1;
                assert_eq!(header("connection"), Some("close"), "{path}: {headers:?}");
                assert_eq!(header("retry-after"), Some("1"), "{path}: {headers:?}");
                assert_eq!(
                    header("x-content-type-options"),
                    Some("nosniff"),
                    "{path}: {headers:?}"
                );
                let json: serde_json::Value = serde_json::from_str(&body)
                    .unwrap_or_else(|err| panic!("{path}: {err}: {body}"));
                assert!(
                    json["error"]
                        .as_str()
                        .is_some_and(|e| e.contains("stopping")),
                    "{path}: {body}"
                );
            }
            _ => panic!("{path}: {status} {body}\n{}", server.log()),
        }
    }
    assert!(
        cut > 0,
        "no request was still running 50 ms after SIGTERM: the test's requests are too fast\n{}",
        server.log()
    );
    let status = server.wait_exit(Duration::from_secs(60));
    let log = server.log();
    assert_eq!(
        status.code(),
        Some(i32::from(server::cli::process::REQUESTS_CUT)),
        "{status}\n{log}"
    );
    assert!(
        log.contains(&format!("stopped with {cut} requests unfinished")),
        "the exit message counts the 503s ({cut}):\n{log}"
    );
    eprintln!("{cut} of {} requests cut\n{log}", paths.len());
}
