//! The page's bundle (`/pkg/`), compressed once at the best quality and
//! sent from memory. The WASM is most of what a first visit waits for on a
//! slow line, and brotli at quality 11 makes it about a quarter smaller than
//! gzip does (server/docs/benchmarks.md, "Brotli for the bundle"). That is
//! far too slow to do per request, but the hashed files never change, so
//! each is compressed once, on its first request (which the router's
//! on-the-fly gzip answers meanwhile). Not when `serve` starts: compressing
//! the whole bundle at quality 11 took about 60 MiB more peak memory than
//! the tablebase itself (server/docs/benchmarks.md, "Beside lila-tablebase,
//! and the bundle's share"), paid by servers that only answer the API.
//! `zugzwang bundle compress` writes the copies ahead (`.ci/serve`, the
//! container), and those are sent as they are.
//!
//! Only files whose names carry a content hash (`bundle_cache`) are kept,
//! and only files that exist, so the memory used is bounded by the site on
//! disk, whatever URLs are asked for.

use std::{
    collections::HashMap,
    io::Write,
    path::{Path, PathBuf},
    sync::{
        Arc, Mutex, Weak,
        mpsc::{self, Sender},
    },
};

use axum::{
    body::{Body, Bytes},
    extract::{Request, State},
    http::{
        HeaderValue, Method,
        header::{ACCEPT_ENCODING, CONTENT_ENCODING, CONTENT_LENGTH, CONTENT_TYPE, RANGE, VARY},
    },
    middleware::Next,
    response::Response,
};

use super::bundle_cache::is_hashed_bundle_file;
use crate::sync::lock;

/// The compressed bundle files, by URL path (`/pkg/zugzwang.<hash>.wasm`).
pub struct CompressedBundle {
    /// The directory `/pkg/` is served from.
    dir: PathBuf,
    files: Mutex<HashMap<String, Entry>>,
    /// The one thread that compresses, started when needed: one file at a
    /// time, so a starting server gives the bundle one core at most. It
    /// ends once idle, and the encoder's buffers go back to the system with
    /// it (a thread that stayed kept about 28 MiB of freed memory resident
    /// for good; server/docs/benchmarks.md, "One memory budget").
    worker: Mutex<Option<Sender<(String, PathBuf)>>>,
}

#[derive(Clone)]
enum Entry {
    /// Being compressed; requests meanwhile get the on-the-fly gzip.
    Pending,
    Ready(Arc<Compressed>),
    /// Could not be read or compressed (logged once); served as a plain file.
    Failed,
}

/// One file in both encodings a browser may take.
pub struct Compressed {
    content_type: &'static str,
    brotli: Bytes,
    gzip: Bytes,
}

/// An encoding the client accepts, best first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Brotli,
    Gzip,
}

impl CompressedBundle {
    /// For the bundle served from `dir` (the site's `pkg` directory).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        CompressedBundle {
            dir: dir.into(),
            files: Mutex::new(HashMap::new()),
            worker: Mutex::new(None),
        }
    }

    /// The file's compressed forms if they are ready; otherwise starts
    /// compressing it (once) and gives `None`.
    fn get(self: &Arc<Self>, path: &str) -> Option<Arc<Compressed>> {
        // Looked up first, so the lock is released before `start` takes it.
        let known = lock(&self.files).get(path).cloned();
        match known {
            Some(Entry::Ready(c)) => Some(c),
            Some(Entry::Pending | Entry::Failed) => None,
            None => {
                self.start(path);
                None
            }
        }
    }

    /// Queues `path` for the compressing thread unless it is already known
    /// or is not a file of the bundle.
    fn start(self: &Arc<Self>, path: &str) {
        let Some(file) = self.file_of(path) else {
            return;
        };
        {
            let mut files = lock(&self.files);
            if files.contains_key(path) {
                return;
            }
            files.insert(path.to_string(), Entry::Pending);
        }
        let mut worker = lock(&self.worker);
        let sender = worker.get_or_insert_with(|| spawn_worker(Arc::downgrade(self)));
        if sender.send((path.to_string(), file)).is_err() {
            // No thread to do it (logged when it failed to start): the file
            // is served as it is, on-the-fly compressed.
            lock(&self.files).insert(path.to_string(), Entry::Failed);
        }
    }

    /// The file on disk behind a hashed bundle path, if it exists.
    fn file_of(&self, path: &str) -> Option<PathBuf> {
        let name = path.strip_prefix("/pkg/")?;
        if !is_compressible(name) {
            return None;
        }
        let file = self.dir.join(name);
        file.is_file().then_some(file)
    }
}

/// Whether a file of the bundle directory is kept compressed: its name
/// carries a content hash and it is of a kind worth compressing.
fn is_compressible(name: &str) -> bool {
    Compressed::content_type_of(name).is_some() && is_hashed_bundle_file(&format!("/pkg/{name}"))
}

/// The names of the files in `dir` kept compressed, in name order: what
/// `serve` compresses when it starts and `zugzwang bundle compress` writes.
pub fn compressible_files(dir: &Path) -> std::io::Result<Vec<String>> {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        if let Ok(name) = entry?.file_name().into_string()
            && is_compressible(&name)
        {
            names.push(name);
        }
    }
    names.sort();
    Ok(names)
}

/// The compressing thread: takes files in the order asked, and ends with
/// the bundle or after a second without work.
fn spawn_worker(bundle: Weak<CompressedBundle>) -> Sender<(String, PathBuf)> {
    let (sender, files) = mpsc::channel::<(String, PathBuf)>();
    let spawned = std::thread::Builder::new()
        .name("bundle-compression".into())
        .spawn(move || {
            while let Some((path, file)) = next_file(&files, &bundle) {
                let entry = match Compressed::of_file(&file) {
                    Ok(c) => Entry::Ready(Arc::new(c)),
                    Err(err) => {
                        tracing::warn!(file = %file.display(), "bundle file not compressed, sent as it is: {err}");
                        Entry::Failed
                    }
                };
                let Some(bundle) = bundle.upgrade() else {
                    return;
                };
                lock(&bundle.files).insert(path, entry);
            }
        });
    if let Err(err) = spawned {
        tracing::warn!("bundle compression not started, the bundle is sent as it is: {err}");
    }
    sender
}

/// The next file to compress, or `None` when the thread should end: the
/// bundle is gone, or nothing came for a second. Ending is decided under the
/// lock `start` sends under, so a file is never sent to a thread that has
/// just ended: `start` finds no thread and starts one.
fn next_file(
    files: &mpsc::Receiver<(String, PathBuf)>,
    bundle: &Weak<CompressedBundle>,
) -> Option<(String, PathBuf)> {
    match files.recv_timeout(std::time::Duration::from_secs(1)) {
        Ok(next) => return Some(next),
        Err(mpsc::RecvTimeoutError::Disconnected) => return None,
        Err(mpsc::RecvTimeoutError::Timeout) => {}
    }
    let bundle = bundle.upgrade()?;
    let mut worker = lock(&bundle.worker);
    match files.try_recv() {
        Ok(next) => Some(next),
        Err(_) => {
            *worker = None;
            None
        }
    }
}

/// Sends a hashed bundle file from memory, compressed, when the client takes
/// brotli or gzip and the file is ready; anything else goes on to the file
/// server (and the router's on-the-fly compression).
pub async fn layer(
    State(bundle): State<Arc<CompressedBundle>>,
    request: Request,
    next: Next,
) -> Response {
    let plain = !matches!(*request.method(), Method::GET | Method::HEAD)
        || request.headers().contains_key(RANGE)
        || !is_hashed_bundle_file(request.uri().path());
    if plain {
        return next.run(request).await;
    }
    let accepted = request
        .headers()
        .get(ACCEPT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .and_then(preferred_encoding);
    let Some(encoding) = accepted else {
        return next.run(request).await;
    };
    let head = request.method() == Method::HEAD;
    match bundle.get(request.uri().path()) {
        Some(file) => compressed_response(&file, encoding, head),
        None => next.run(request).await,
    }
}

/// The file in `encoding`; for a HEAD request, only its headers.
fn compressed_response(file: &Compressed, encoding: Encoding, head: bool) -> Response {
    let (body, name) = match encoding {
        Encoding::Brotli => (file.brotli.clone(), "br"),
        Encoding::Gzip => (file.gzip.clone(), "gzip"),
    };
    let length = body.len();
    let body = if head {
        Body::empty()
    } else {
        Body::from(body)
    };
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(file.content_type));
    headers.insert(CONTENT_ENCODING, HeaderValue::from_static(name));
    headers.insert(CONTENT_LENGTH, HeaderValue::from(length));
    headers.insert(VARY, HeaderValue::from_static("accept-encoding"));
    response
}

/// The best encoding an `Accept-Encoding` header allows: brotli, then gzip
/// (`*` allows both; `;q=0` refuses one).
pub fn preferred_encoding(header: &str) -> Option<Encoding> {
    let mut brotli = None;
    let mut gzip = None;
    let mut any = None;
    for item in header.split(',') {
        let mut parts = item.split(';').map(str::trim);
        let name = parts.next().unwrap_or_default().to_ascii_lowercase();
        let accepted = parts
            .filter_map(|p| p.strip_prefix("q="))
            .filter_map(|q| q.trim().parse::<f32>().ok())
            .all(|q| q > 0.0);
        match name.as_str() {
            "br" => brotli = Some(accepted),
            "gzip" | "x-gzip" => gzip = Some(accepted),
            "*" => any = Some(accepted),
            _ => {}
        }
    }
    if brotli.or(any) == Some(true) {
        return Some(Encoding::Brotli);
    }
    if gzip.or(any) == Some(true) {
        return Some(Encoding::Gzip);
    }
    None
}

impl Compressed {
    /// One file's compressed forms: those `zugzwang bundle compress` wrote
    /// beside it, else compressed now at the best quality of each encoding
    /// (which costs a starting server about 45 MiB of peak RSS for the
    /// release bundle; server/docs/benchmarks.md, "One memory budget").
    /// A file's name carries its content's hash, so copies beside it with
    /// the same name are of the same content.
    pub fn of_file(file: &Path) -> std::io::Result<Compressed> {
        let name = file
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let content_type = Self::content_type_of(name).unwrap_or("application/octet-stream");
        let beside = (
            std::fs::read(with_suffix(file, "br")),
            std::fs::read(with_suffix(file, "gz")),
        );
        if let (Ok(brotli), Ok(gzip)) = beside {
            return Ok(Compressed {
                content_type,
                brotli: brotli.into(),
                gzip: gzip.into(),
            });
        }
        let raw = std::fs::read(file)?;
        Ok(Compressed {
            content_type,
            brotli: brotli(&raw)?.into(),
            gzip: gzip(&raw)?.into(),
        })
    }

    /// The bundle's kinds of file worth compressing; others (the TypeScript
    /// declarations, the compressed copies themselves) are left alone.
    pub fn content_type_of(name: &str) -> Option<&'static str> {
        match name.rsplit('.').next()? {
            "wasm" => Some("application/wasm"),
            "js" => Some("text/javascript"),
            "css" => Some("text/css"),
            "json" => Some("application/json"),
            _ => None,
        }
    }

    pub fn brotli(&self) -> &[u8] {
        &self.brotli
    }

    pub fn gzip(&self) -> &[u8] {
        &self.gzip
    }
}

fn brotli(raw: &[u8]) -> std::io::Result<Vec<u8>> {
    let params = brotli::enc::BrotliEncoderParams {
        quality: 11,
        lgwin: window_bits(raw.len()),
        size_hint: raw.len(),
        ..Default::default()
    };
    let mut out = Vec::new();
    brotli::BrotliCompress(&mut &raw[..], &mut out, &params)?;
    Ok(out)
}

/// `file.suffix`: where `zugzwang bundle compress` writes a compressed copy.
pub fn with_suffix(file: &Path, suffix: &str) -> PathBuf {
    let mut name = file.as_os_str().to_os_string();
    name.push(".");
    name.push(suffix);
    PathBuf::from(name)
}

/// The smallest brotli window that holds the whole file, at most 4 MiB: a
/// larger one compresses no better, and the encoder's tables grow with it
/// (at 4 MiB for every file, compressing the release bundle at start-up
/// raised the server's peak RSS by about 100 MiB; server/docs/benchmarks.md,
/// "One memory budget").
fn window_bits(len: usize) -> i32 {
    // A window of 2^bits holds 2^bits - 16 bytes.
    (10..22)
        .find(|bits| (1usize << bits) - 16 >= len)
        .unwrap_or(22)
}

fn gzip(raw: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(raw)?;
    encoder.finish()
}

#[cfg(test)]
mod tests {
    use super::{
        Compressed, CompressedBundle, Encoding, lock, preferred_encoding, window_bits, with_suffix,
    };
    use std::{
        sync::Arc,
        time::{Duration, Instant},
    };

    /// Waits until `path` is compressed, for a few seconds at most.
    fn compressed(bundle: &Arc<CompressedBundle>, path: &str) -> bool {
        let until = Instant::now() + Duration::from_secs(10);
        while Instant::now() < until {
            if bundle.get(path).is_some() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    #[test]
    fn copies_written_beside_a_file_are_taken_as_they_are() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("a.AAAAAAAAAAAAAAAAAAAAAA.wasm");
        std::fs::write(&file, b"raw").expect("write");
        let fresh = Compressed::of_file(&file).expect("compressed");
        assert_ne!(fresh.brotli(), b"written br");
        std::fs::write(with_suffix(&file, "br"), b"written br").expect("write");
        std::fs::write(with_suffix(&file, "gz"), b"written gz").expect("write");
        let beside = Compressed::of_file(&file).expect("read");
        assert_eq!(beside.brotli(), b"written br");
        assert_eq!(beside.gzip(), b"written gz");
        assert_eq!(beside.content_type, "application/wasm");
    }

    #[test]
    fn the_compressing_thread_ends_when_idle_and_comes_back_for_more() {
        let dir = tempfile::tempdir().expect("temp dir");
        for name in ["a.AAAAAAAAAAAAAAAAAAAAAA.js", "b.BBBBBBBBBBBBBBBBBBBBBB.js"] {
            std::fs::write(dir.path().join(name), "let x = 1;\n".repeat(100)).expect("write");
        }
        let bundle = Arc::new(CompressedBundle::new(dir.path()));
        assert!(compressed(&bundle, "/pkg/a.AAAAAAAAAAAAAAAAAAAAAA.js"));
        // Idle for a second: the thread has ended and left no sender.
        let until = Instant::now() + Duration::from_secs(10);
        while lock(&bundle.worker).is_some() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(lock(&bundle.worker).is_none(), "the idle thread ended");
        // A file asked for later starts a new one.
        assert!(compressed(&bundle, "/pkg/b.BBBBBBBBBBBBBBBBBBBBBB.js"));
    }

    #[test]
    fn the_window_fits_the_file() {
        assert_eq!(window_bits(0), 10);
        assert_eq!(window_bits(1008), 10);
        assert_eq!(window_bits(1009), 11);
        assert_eq!(window_bits(671_900), 20);
        assert_eq!(window_bits(100 << 20), 22);
    }

    #[test]
    fn brotli_first_then_gzip_as_the_client_allows() {
        assert_eq!(
            preferred_encoding("gzip, deflate, br, zstd"),
            Some(Encoding::Brotli)
        );
        assert_eq!(preferred_encoding("gzip, deflate"), Some(Encoding::Gzip));
        assert_eq!(
            preferred_encoding("br;q=0, gzip;q=0.5"),
            Some(Encoding::Gzip)
        );
        assert_eq!(preferred_encoding("BR;q=1.0"), Some(Encoding::Brotli));
        assert_eq!(preferred_encoding("*"), Some(Encoding::Brotli));
        assert_eq!(preferred_encoding("*;q=0, gzip"), Some(Encoding::Gzip));
        assert_eq!(preferred_encoding("identity"), None);
        assert_eq!(preferred_encoding("gzip;q=0"), None);
        assert_eq!(preferred_encoding(""), None);
    }
}
