//! `zugzwang-bench replay`: replays a request log against a running server
//! with parallel closed-loop clients, as players would (each sends its next
//! request once its previous one completes), and records every response time.

use std::{
    fs::File,
    io::{BufWriter, Write},
    path::{Path, PathBuf},
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use http_body_util::{BodyExt, Empty};
use hyper::{Request, Uri, body::Bytes, header};
use hyper_util::{
    client::legacy::{Client, connect::HttpConnector},
    rt::{TokioExecutor, TokioTimer},
};
use indicatif::{ProgressBar, ProgressStyle};
use tokio::sync::mpsc;

use super::{
    BenchError,
    result::{HEADER, NO_RESPONSE, Record},
    summary::Summary,
};

/// What to replay, against what, and when to stop.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    /// URL the FEN is appended to as `?fen=`, e.g. `http://127.0.0.1:3000/standard`.
    pub endpoint: String,
    pub log: PathBuf,
    pub clients: usize,
    /// The first this many requests of the log are sent but not measured.
    pub warmup: usize,
    /// Stop after this many requests (warm-up included); the log's length at most.
    pub max_requests: Option<usize>,
    /// Stop sending new requests after this long.
    pub duration: Duration,
    /// A request without an answer after this long counts as failed.
    pub timeout: Duration,
    pub out: PathBuf,
    pub progress: bool,
}

/// How a replay ended.
#[derive(Debug)]
pub struct ReplayReport {
    pub summary: Option<Summary>,
    /// Requests sent, warm-up included.
    pub sent: usize,
    /// Requests the log had to offer within `--max-requests`.
    pub planned: usize,
    /// True when `--duration` stopped the run before the log was done.
    pub timed_out: bool,
}

/// Reads a request log: one FEN per line; blank lines and `#` comments skipped.
pub fn read_log(path: &Path) -> Result<Vec<String>, BenchError> {
    let text = std::fs::read_to_string(path).map_err(|source| BenchError::ReadLog {
        path: path.to_path_buf(),
        source,
    })?;
    let fens: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect();
    if fens.is_empty() {
        return Err(BenchError::EmptyLog {
            path: path.to_path_buf(),
        });
    }
    Ok(fens)
}

/// The request URL for one FEN: spaces and the few other characters a FEN
/// could carry that are not safe in a query are percent-encoded.
pub fn request_uri(endpoint: &str, fen: &str) -> Result<Uri, BenchError> {
    let mut url = String::with_capacity(endpoint.len() + fen.len() + 16);
    url.push_str(endpoint);
    url.push_str(if endpoint.contains('?') {
        "&fen="
    } else {
        "?fen="
    });
    for c in fen.chars() {
        match c {
            'A'..='Z' | 'a'..='z' | '0'..='9' | '/' | '-' | '_' | '.' => url.push(c),
            other => {
                let mut buf = [0; 4];
                for b in other.encode_utf8(&mut buf).bytes() {
                    url.push_str(&format!("%{b:02X}"));
                }
            }
        }
    }
    url.parse().map_err(
        |err: hyper::http::uri::InvalidUri| BenchError::BadEndpoint {
            url: endpoint.to_string(),
            reason: err.to_string(),
        },
    )
}

fn check_endpoint(endpoint: &str) -> Result<(), BenchError> {
    let uri = request_uri(endpoint, "")?;
    let bad = |reason: &str| BenchError::BadEndpoint {
        url: endpoint.to_string(),
        reason: reason.to_string(),
    };
    match uri.scheme_str() {
        Some("http") => {}
        Some(_) => return Err(bad("the scheme must be http")),
        None => return Err(bad("no scheme")),
    }
    if uri.host().is_none() {
        return Err(bad("no host"));
    }
    Ok(())
}

type HttpClient = Client<HttpConnector, Empty<Bytes>>;

/// How long the replay keeps an idle connection for reuse.
const POOL_IDLE: Duration = Duration::from_secs(2);

/// Sends one request and reads the whole body; the status, or
/// [`NO_RESPONSE`] when the server could not be reached or did not finish in time.
async fn send(client: &HttpClient, uri: Uri, timeout: Duration) -> u16 {
    let Ok(request) = Request::get(uri)
        .header(header::ACCEPT, "application/json")
        .body(Empty::new())
    else {
        return NO_RESPONSE;
    };
    let exchange = async {
        let response = client.request(request).await.ok()?;
        let status = response.status().as_u16();
        response.into_body().collect().await.ok()?;
        Some(status)
    };
    match tokio::time::timeout(timeout, exchange).await {
        Ok(Some(status)) => status,
        _ => NO_RESPONSE,
    }
}

/// One answered (or failed) request: its index in the log, when it was sent
/// and ended, and its status.
type Answered = (usize, Instant, Instant, u16);

/// Starts `options.clients` clients, each sending the next request of
/// `uris` when its previous one ended, until they run out or
/// `options.duration` has passed; their answers arrive on the channel.
fn start_clients(options: &ReplayOptions, uris: Vec<Uri>) -> mpsc::UnboundedReceiver<Answered> {
    let client: HttpClient = Client::builder(TokioExecutor::new())
        .pool_max_idle_per_host(options.clients)
        // Below the server's idle timeout (`serve --idle-timeout`, 5 s):
        // a pooled connection the server is closing as the client reuses
        // it fails the request with no status, which the replay would
        // count against the server (one such failure after 258 ms in a run
        // with the page cache dropped every second).
        .pool_idle_timeout(POOL_IDLE)
        .pool_timer(TokioTimer::new())
        .build_http();
    let started = Instant::now();
    let deadline = started + options.duration;
    let next = Arc::new(AtomicUsize::new(0));
    let uris = Arc::new(uris);
    let (tx, rx) = mpsc::unbounded_channel::<Answered>();
    for _ in 0..options.clients {
        let (client, next, uris, tx) = (client.clone(), next.clone(), uris.clone(), tx.clone());
        let timeout = options.timeout;
        tokio::spawn(async move {
            loop {
                if Instant::now() >= deadline {
                    break;
                }
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(uri) = uris.get(i) else { break };
                let sent = Instant::now();
                let status = send(&client, uri.clone(), timeout).await;
                if tx.send((i, sent, Instant::now(), status)).is_err() {
                    break;
                }
            }
        });
    }
    rx
}

fn progress_bar(enabled: bool, planned: usize) -> ProgressBar {
    if !enabled {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(planned as u64);
    bar.set_style(
        ProgressStyle::with_template(
            "{elapsed_precise} [{wide_bar}] {pos}/{len} requests, {per_sec}, {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}

/// Replays the log; returns once the log, `max_requests` or `duration` is
/// exhausted and every request in flight has ended.
pub async fn replay(options: &ReplayOptions) -> Result<ReplayReport, BenchError> {
    if options.clients == 0 {
        return Err(BenchError::NoClients);
    }
    check_endpoint(&options.endpoint)?;
    let fens = read_log(&options.log)?;
    let planned = options.max_requests.unwrap_or(usize::MAX).min(fens.len());
    let uris = fens[..planned]
        .iter()
        .map(|fen| request_uri(&options.endpoint, fen))
        .collect::<Result<Vec<_>, _>>()?;
    let write_err = |source| BenchError::Write {
        path: options.out.clone(),
        source,
    };
    let mut out = BufWriter::new(File::create(&options.out).map_err(write_err)?);
    writeln!(out, "{HEADER}").map_err(write_err)?;

    let progress = progress_bar(options.progress, planned);
    let mut rx = start_clients(options, uris);
    let mut records = Vec::with_capacity(planned);
    let mut window: Option<(Instant, Instant)> = None;
    let mut errors = 0;
    while let Some((i, sent, done, status)) = rx.recv().await {
        let warmup = i < options.warmup;
        let record = Record {
            fen: fens[i].clone(),
            ms: (done - sent).as_secs_f64() * 1000.0,
            status,
            warmup,
        };
        writeln!(out, "{}", record.to_line()).map_err(write_err)?;
        if !warmup {
            window = Some(match window {
                None => (sent, done),
                Some((first, last)) => (first.min(sent), last.max(done)),
            });
        }
        if record.is_error() {
            errors += 1;
            progress.set_message(format!("{errors} errors"));
        }
        progress.inc(1);
        records.push(record);
    }
    out.flush().map_err(write_err)?;
    progress.finish_and_clear();

    let window = window.map_or(Duration::ZERO, |(first, last)| last - first);
    Ok(ReplayReport {
        summary: Summary::of(&records, window),
        sent: records.len(),
        planned,
        timed_out: records.len() < planned,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fens_are_encoded_into_the_query() {
        let uri = request_uri(
            "http://127.0.0.1:3000/standard",
            "8/8/8/8/8/8/8/K1k5 w - - 0 1",
        )
        .unwrap();
        assert_eq!(
            uri.to_string(),
            "http://127.0.0.1:3000/standard?fen=8/8/8/8/8/8/8/K1k5%20w%20-%20-%200%201"
        );
        assert!(check_endpoint("https://example.org/standard").is_err());
        assert!(check_endpoint("127.0.0.1:3000").is_err());
        assert!(check_endpoint("http://[::1]:3000/standard").is_ok());
    }

    #[test]
    fn logs_skip_blank_lines_and_comments() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.txt");
        std::fs::write(&path, "# recorded\n\n 8/8/8/8/8/8/8/K1k5 w - - 0 1 \n").unwrap();
        assert_eq!(
            read_log(&path).unwrap(),
            vec!["8/8/8/8/8/8/8/K1k5 w - - 0 1"]
        );
        std::fs::write(&path, "\n# nothing\n").unwrap();
        assert!(matches!(read_log(&path), Err(BenchError::EmptyLog { .. })));
    }

    /// A replay against a tiny in-process server: every log line is sent
    /// once, the first `warmup` are marked, and the run stops by itself.
    #[tokio::test]
    async fn replays_the_whole_log_once_and_marks_the_warmup() {
        use axum::{Router, extract::Query, routing::get};
        use std::collections::HashMap;

        let app = Router::new().route(
            "/standard",
            get(|Query(q): Query<HashMap<String, String>>| async move {
                if q.get("fen").is_some_and(|f| f.starts_with("bad")) {
                    (axum::http::StatusCode::BAD_REQUEST, "bad")
                } else {
                    (axum::http::StatusCode::OK, "{}")
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });

        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log.txt");
        let lines: Vec<String> = (0..50)
            .map(|i| {
                if i == 40 {
                    "bad fen".into()
                } else {
                    format!("fen {i}")
                }
            })
            .collect();
        std::fs::write(&log, lines.join("\n")).unwrap();
        let options = ReplayOptions {
            endpoint: format!("http://{addr}/standard"),
            log,
            clients: 4,
            warmup: 10,
            max_requests: None,
            duration: Duration::from_secs(60),
            timeout: Duration::from_secs(10),
            out: dir.path().join("out.tsv"),
            progress: false,
        };
        let report = replay(&options).await.unwrap();
        assert_eq!(
            (report.sent, report.planned, report.timed_out),
            (50, 50, false)
        );
        let summary = report.summary.unwrap();
        assert_eq!((summary.requests, summary.errors), (40, 1));

        let records = crate::result::read(&options.out).unwrap();
        let mut fens: Vec<&str> = records.iter().map(|r| r.fen.as_str()).collect();
        fens.sort_unstable();
        let mut expected: Vec<&str> = lines.iter().map(String::as_str).collect();
        expected.sort_unstable();
        assert_eq!(fens, expected);
        for r in &records {
            let i: usize = r.fen.trim_start_matches("fen ").parse().unwrap_or(40);
            assert_eq!(r.warmup, i < 10, "{}", r.fen);
        }

        let capped = ReplayOptions {
            max_requests: Some(5),
            ..options
        };
        let report = replay(&capped).await.unwrap();
        assert_eq!((report.sent, report.planned), (5, 5));
        assert!(report.summary.is_none(), "all five were warm-up");
    }
}
