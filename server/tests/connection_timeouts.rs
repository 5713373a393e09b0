//! Idle and half-sent connections are closed after their timeouts, so they
//! cannot hold the server's descriptors: under a low open-files limit, a
//! flood of them only delays a normal request, it does not lock it out.

mod process;

use std::{io::Write, net::TcpStream, os::unix::process::CommandExt};

use process::{KQVK, closed_by_server, get, read_response, send_get};
use rustix::process::{Resource, Rlimit, setrlimit};

/// Low enough that the flood below would exhaust it without timeouts.
const FD_LIMIT: u64 = 256;
const HALF_SENT: usize = 400;

#[test]
fn half_sent_requests_are_closed_and_a_normal_request_answers_under_a_low_fd_limit() {
    let mut command = process::binary();
    command.args([
        "serve",
        "--bind",
        "127.0.0.1:0",
        "--header-timeout",
        "1",
        "--idle-timeout",
        "1",
    ]);
    let limit = Rlimit {
        current: Some(FD_LIMIT),
        maximum: Some(FD_LIMIT),
    };
    // SAFETY: setrlimit is async-signal-safe and touches no memory of the parent.
    unsafe {
        command.pre_exec(move || setrlimit(Resource::Nofile, limit).map_err(Into::into));
    }
    let server = process::Server::start(command);

    let mut half_sent: Vec<TcpStream> = (0..HALF_SENT)
        .map(|_| {
            let mut stream = TcpStream::connect(server.addr).expect("connect");
            stream
                .write_all(b"GET / HTTP/1.1\r\nHost: test\r\n")
                .expect("send half a request");
            stream
        })
        .collect();

    let (status, body) = get(server.addr, KQVK);
    assert_eq!(status, 200, "{body}\n{}", server.log());
    assert!(body.contains("\"category\":\"win\""), "{body}");

    for (i, stream) in half_sent.iter_mut().enumerate() {
        assert!(
            closed_by_server(stream),
            "half-sent connection {i} still open\n{}",
            server.log()
        );
    }
    assert!(
        server.open_sockets() < FD_LIMIT as usize,
        "{} sockets open",
        server.open_sockets()
    );
}

#[test]
fn an_idle_keep_alive_connection_is_closed_after_the_idle_timeout() {
    let server = process::serve(&["--idle-timeout", "1", "--header-timeout", "30"]);
    // Keep-alive: only the server's idle timeout ends this connection.
    let (status, body) = read_response(send_get(server.addr, KQVK, false));
    assert_eq!(status, 200, "{body}");
}
