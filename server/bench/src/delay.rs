//! `zugzwang-bench delay-proxy`: a TCP proxy that holds every byte the
//! server sends back for a fixed time before passing it on, so a store on
//! loopback answers each request that much later, as one across a network
//! would. It stands in for `tc qdisc ... netem delay` where the kernel has
//! no netem (the remote slow tier's benchmark, `remote-tier.sh`).
//!
//! It works below HTTP: the client's bytes go to the server at once, and
//! each chunk of the answer is written `delay` after it arrived, in order,
//! so each GET's answer comes `delay` later whatever its size, and a kept
//! connection keeps its connection to the server.

use std::{
    io,
    net::SocketAddr,
    time::{Duration, Instant},
};

use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{
        TcpListener, TcpStream,
        tcp::{OwnedReadHalf, OwnedWriteHalf},
    },
    sync::mpsc,
};

/// Chunks read from the server that wait for their time; a full queue
/// stops reading, so a slow client slows the server as without the proxy.
const QUEUED_CHUNKS: usize = 64;

/// Accepts connections on `listen` until the process ends, each forwarded
/// to `to` with the answers held back by `delay`.
pub async fn run(listen: SocketAddr, to: SocketAddr, delay: Duration) -> io::Result<()> {
    let listener = TcpListener::bind(listen).await?;
    eprintln!(
        "delay-proxy: {listen} -> {to}, answers {} ms later",
        delay.as_millis()
    );
    loop {
        let (client, _) = listener.accept().await?;
        tokio::spawn(async move {
            if let Err(err) = forward(client, to, delay).await {
                eprintln!("delay-proxy: a connection ended with {err}");
            }
        });
    }
}

async fn forward(client: TcpStream, to: SocketAddr, delay: Duration) -> io::Result<()> {
    let server = TcpStream::connect(to).await?;
    client.set_nodelay(true)?;
    server.set_nodelay(true)?;
    let (mut client_read, mut client_write) = client.into_split();
    let (mut server_read, mut server_write) = server.into_split();
    let requests = async {
        tokio::io::copy(&mut client_read, &mut server_write).await?;
        server_write.shutdown().await
    };
    let answers = held_back(&mut server_read, &mut client_write, delay);
    tokio::try_join!(requests, answers)?;
    Ok(())
}

/// Copies `from` to `to`, each chunk written `delay` after it was read.
async fn held_back(
    from: &mut OwnedReadHalf,
    to: &mut OwnedWriteHalf,
    delay: Duration,
) -> io::Result<()> {
    let (queue, mut due) = mpsc::channel::<(Instant, Vec<u8>)>(QUEUED_CHUNKS);
    let reader = async move {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = from.read(&mut buf).await?;
            if n == 0 {
                return Ok::<_, io::Error>(());
            }
            let chunk = (Instant::now() + delay, buf[..n].to_vec());
            if queue.send(chunk).await.is_err() {
                return Ok(());
            }
        }
    };
    let writer = async move {
        while let Some((at, chunk)) = due.recv().await {
            tokio::time::sleep_until(at.into()).await;
            to.write_all(&chunk).await?;
        }
        to.shutdown().await
    };
    tokio::try_join!(reader, writer)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An echo server behind the proxy answers no sooner than the delay,
    /// and byte for byte.
    #[tokio::test]
    async fn answers_come_the_delay_later_and_whole() {
        let echo = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let echo_addr = echo.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut s, _) = echo.accept().await.unwrap();
            let (mut r, mut w) = s.split();
            tokio::io::copy(&mut r, &mut w).await.unwrap();
        });
        let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let listen = probe.local_addr().unwrap();
        drop(probe);
        let delay = Duration::from_millis(50);
        tokio::spawn(run(listen, echo_addr, delay));
        let mut client = loop {
            match TcpStream::connect(listen).await {
                Ok(c) => break c,
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            }
        };
        for round in 0..3u8 {
            let sent = vec![round; 100_000];
            let start = Instant::now();
            client.write_all(&sent).await.unwrap();
            let mut got = vec![0u8; sent.len()];
            client.read_exact(&mut got).await.unwrap();
            assert!(start.elapsed() >= delay, "{:?}", start.elapsed());
            assert_eq!(got, sent);
        }
    }
}
