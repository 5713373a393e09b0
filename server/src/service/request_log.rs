//! `serve --request-log FILE`: one FEN per served `/standard` request, so
//! production traffic can be replayed with `zugzwang-bench replay`.
//!
//! Serving never waits for the disk: FENs go through a bounded queue to a
//! writer thread, and are dropped (and counted) if it falls behind. The file
//! is bounded too: past `max_bytes` it is renamed to `FILE.1` (replacing the
//! previous one) and a new file is started.

use std::{
    collections::HashMap,
    fs::{self, File, OpenOptions},
    io::{self, BufWriter, Write},
    path::{Path, PathBuf},
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
};

use axum::{
    extract::{Query, Request, State},
    middleware::Next,
    response::Response,
};
use tokio::sync::mpsc;

/// FENs waiting for the writer before new ones are dropped.
const QUEUE: usize = 16_384;

#[derive(Debug, thiserror::Error)]
pub enum RequestLogError {
    #[error("cannot open the request log {path}: {source} (is the directory there and writable?)")]
    Open { path: PathBuf, source: io::Error },
    #[error("--request-log-max-bytes must be at least 4096")]
    TooSmall,
}

/// A handle to the request log; cheap to clone.
#[derive(Clone)]
pub struct RequestLog {
    tx: mpsc::Sender<String>,
    dropped: Arc<AtomicU64>,
}

impl RequestLog {
    /// Opens (appends to) `path` and starts the writer thread.
    pub fn open(path: &Path, max_bytes: u64) -> Result<RequestLog, RequestLogError> {
        if max_bytes < 4096 {
            return Err(RequestLogError::TooSmall);
        }
        let writer = Writer::open(path.to_path_buf(), max_bytes)?;
        let (tx, rx) = mpsc::channel(QUEUE);
        std::thread::Builder::new()
            .name("request-log".into())
            .spawn(move || writer.run(rx))
            .map_err(|source| RequestLogError::Open {
                path: path.to_path_buf(),
                source,
            })?;
        Ok(RequestLog {
            tx,
            dropped: Arc::new(AtomicU64::new(0)),
        })
    }

    /// Queues one FEN; never blocks.
    pub fn record(&self, fen: String) {
        if self.tx.try_send(fen).is_err() {
            let before = self.dropped.fetch_add(1, Ordering::Relaxed);
            if before.is_power_of_two() || before == 0 {
                tracing::warn!("request log falling behind: {} FENs dropped", before + 1);
            }
        }
    }

    /// FENs not logged because the writer fell behind or failed.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

/// Middleware: logs the position of every successful `GET /standard`, in the
/// canonical FEN (the form the cache uses), so a replay asks for exactly what was served.
pub async fn middleware(State(log): State<RequestLog>, request: Request, next: Next) -> Response {
    let fen = (request.uri().path() == "/standard")
        .then(|| Query::<HashMap<String, String>>::try_from_uri(request.uri()).ok())
        .flatten()
        .and_then(|Query(q)| q.get("fen").cloned());
    let response = next.run(request).await;
    if response.status().is_success()
        && let Some(fen) = fen
        && let Ok(pos) = app::position::parse_fen(&fen)
    {
        log.record(app::position::to_fen(&pos));
    }
    response
}

/// The writer thread's state: the open file and its size.
struct Writer {
    path: PathBuf,
    max_bytes: u64,
    file: BufWriter<File>,
    size: u64,
}

impl Writer {
    fn open(path: PathBuf, max_bytes: u64) -> Result<Writer, RequestLogError> {
        let open_err = |source| RequestLogError::Open {
            path: path.clone(),
            source,
        };
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(open_err)?;
        let size = file.metadata().map_err(open_err)?.len();
        Ok(Writer {
            max_bytes,
            file: BufWriter::new(file),
            size,
            path,
        })
    }

    fn run(mut self, mut rx: mpsc::Receiver<String>) {
        while let Some(fen) = rx.blocking_recv() {
            let mut result = self.write(&fen);
            // Flush once the queue is drained, so the file is current without a write per line.
            while result.is_ok() {
                match rx.try_recv() {
                    Ok(fen) => result = self.write(&fen),
                    Err(_) => {
                        result = self.file.flush();
                        break;
                    }
                }
            }
            if let Err(err) = result {
                tracing::error!(
                    "request log {}: {err}; no more requests are logged",
                    self.path.display()
                );
                return;
            }
        }
        let _ = self.file.flush();
    }

    fn write(&mut self, fen: &str) -> io::Result<()> {
        let len = fen.len() as u64 + 1;
        if self.size > 0 && self.size + len > self.max_bytes {
            self.rotate()?;
        }
        writeln!(self.file, "{fen}")?;
        self.size += len;
        Ok(())
    }

    fn rotate(&mut self) -> io::Result<()> {
        self.file.flush()?;
        let mut old = self.path.clone().into_os_string();
        old.push(".1");
        fs::rename(&self.path, &old)?;
        self.file = BufWriter::new(File::create(&self.path)?);
        self.size = 0;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotates_past_the_size_bound_keeping_one_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("requests.log");
        let mut writer = Writer::open(path.clone(), 4096).unwrap();
        let line = "x".repeat(99); // 100 bytes with the newline
        for _ in 0..100 {
            writer.write(&line).unwrap();
        }
        writer.file.flush().unwrap();
        let current = fs::read_to_string(&path).unwrap();
        let old = fs::read_to_string(dir.path().join("requests.log.1")).unwrap();
        assert!(old.len() <= 4096 && current.len() <= 4096);
        assert_eq!(old.len(), 4000);
        assert_eq!(current.lines().count(), 100 % 40);
        assert!(current.lines().all(|l| l == line));
    }

    #[tokio::test]
    async fn logs_successful_standard_requests_in_canonical_form() {
        use axum::{Router, body::Body, http::StatusCode, routing::get};
        use tower::ServiceExt;

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("requests.log");
        let log = RequestLog::open(&path, 1 << 20).unwrap();
        let app = Router::new()
            .route("/standard", get(|| async { "{}" }))
            .route("/standard/mainline", get(|| async { "{}" }))
            .route("/fail", get(|| async { StatusCode::BAD_REQUEST }))
            .layer(axum::middleware::from_fn_with_state(
                log.clone(),
                middleware,
            ));
        for uri in [
            "/standard?fen=8/8/8/8/8/8/8/K1k5_w_-_-_0_1",
            "/standard?fen=not%20a%20fen",
            "/standard/mainline?fen=8/8/8/8/8/8/8/K1k5_w_-_-_0_1",
            "/fail?fen=8/8/8/8/8/8/8/K1k5_w_-_-_0_1",
            "/standard",
        ] {
            let request = Request::get(uri).body(Body::empty()).unwrap();
            app.clone().oneshot(request).await.unwrap();
        }
        drop(app);
        drop(log);
        // The writer thread flushes when the queue drains; give it a moment.
        for _ in 0..100 {
            if fs::read_to_string(&path).is_ok_and(|s| !s.is_empty()) {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            "8/8/8/8/8/8/8/K1k5 w - - 0 1\n"
        );
    }
}
