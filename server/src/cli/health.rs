//! `zugzwang health`: asks a running server for one cheap answer and exits
//! 0 when it comes back 200, 1 otherwise. It is the container image's
//! HEALTHCHECK (server/container/), where there is no shell and no curl to
//! ask with: the binary asks itself.

use std::{
    io::{Read, Write},
    net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpStream},
    time::Duration,
};

use super::positive_seconds;

/// King against king: answered from the rules alone, no table read, so a
/// server busy with slow disks still answers it in microseconds.
pub const DEFAULT_PATH: &str = "/standard?fen=4k3/8/8/8/8/8/8/4K3_w_-_-_0_1";

#[derive(Debug, clap::Args)]
pub struct HealthArgs {
    /// The server's address, as `serve --bind` took it (the same
    /// ZUGZWANG_BIND); an unspecified address (0.0.0.0, [::]) is asked on
    /// loopback.
    #[arg(long, default_value = "127.0.0.1:3000", env = "ZUGZWANG_BIND")]
    pub addr: SocketAddr,
    /// The route asked.
    #[arg(long, default_value = DEFAULT_PATH)]
    pub path: String,
    /// Give up after this long: connecting, sending and the answer's first
    /// line each get this much.
    #[arg(long, value_name = "SECS", default_value = "3", value_parser = positive_seconds)]
    pub timeout: Duration,
}

/// Why the server was found unhealthy.
#[derive(Debug, thiserror::Error)]
pub enum HealthError {
    #[error("no answer from {addr}: {source}")]
    Unreachable {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("{addr}{path} answered {status_line:?}, not 200")]
    Status {
        addr: SocketAddr,
        path: String,
        status_line: String,
    },
}

pub fn run(args: HealthArgs) -> Result<(), HealthError> {
    let addr = reachable(args.addr);
    let status_line = status_line(addr, &args.path, args.timeout)
        .map_err(|source| HealthError::Unreachable { addr, source })?;
    if status_line.split(' ').nth(1) != Some("200") {
        return Err(HealthError::Status {
            addr,
            path: args.path,
            status_line,
        });
    }
    println!("{addr}{}: {status_line}", args.path);
    Ok(())
}

/// Where a server bound to `addr` can be reached from this host: an
/// unspecified address listens on loopback too.
fn reachable(addr: SocketAddr) -> SocketAddr {
    match addr.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => {
            SocketAddr::new(Ipv4Addr::LOCALHOST.into(), addr.port())
        }
        IpAddr::V6(ip) if ip.is_unspecified() => {
            SocketAddr::new(Ipv6Addr::LOCALHOST.into(), addr.port())
        }
        _ => addr,
    }
}

/// `GET path` and the first line of the answer, without its line end.
fn status_line(addr: SocketAddr, path: &str, timeout: Duration) -> std::io::Result<String> {
    let mut stream = TcpStream::connect_timeout(&addr, timeout)?;
    stream.set_read_timeout(Some(timeout))?;
    stream.set_write_timeout(Some(timeout))?;
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes())?;
    let mut head = Vec::new();
    let mut buf = [0u8; 512];
    while !head.contains(&b'\n') && head.len() < 4096 {
        let n = stream.read(&mut buf)?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&head);
    Ok(text
        .lines()
        .next()
        .unwrap_or_default()
        .trim_end()
        .to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unspecified_address_is_asked_on_loopback() {
        let any: SocketAddr = "0.0.0.0:3000".parse().expect("address");
        assert_eq!(reachable(any), "127.0.0.1:3000".parse().expect("address"));
        let any6: SocketAddr = "[::]:3000".parse().expect("address");
        assert_eq!(reachable(any6), "[::1]:3000".parse().expect("address"));
        let one: SocketAddr = "10.0.0.2:3001".parse().expect("address");
        assert_eq!(reachable(one), one);
    }

    #[test]
    fn a_server_that_answers_200_is_healthy_and_one_that_does_not_is_not() {
        use std::net::TcpListener;
        let answer = |reply: &'static str| {
            let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
            let addr = listener.local_addr().expect("address");
            std::thread::spawn(move || {
                let (mut stream, _) = listener.accept().expect("accept");
                let mut request = [0u8; 1024];
                let _ = stream.read(&mut request);
                let _ = stream.write_all(reply.as_bytes());
            });
            HealthArgs {
                addr,
                path: DEFAULT_PATH.to_string(),
                timeout: Duration::from_secs(5),
            }
        };
        assert!(run(answer("HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")).is_ok());
        let err = run(answer("HTTP/1.1 503 Service Unavailable\r\n\r\n")).expect_err("503");
        assert!(err.to_string().contains("503"), "{err}");
        let closed = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = closed.local_addr().expect("address");
        drop(closed);
        let err = run(HealthArgs {
            addr,
            path: DEFAULT_PATH.to_string(),
            timeout: Duration::from_secs(5),
        })
        .expect_err("nothing listens");
        assert!(matches!(err, HealthError::Unreachable { .. }), "{err}");
    }
}
