//! Table sources that are not directories: an S3-compatible object store
//! (`s3://BUCKET/PREFIX`: Garage, Ceph RGW, MinIO, a cloud bucket) or a
//! plain HTTP(S) mirror that honours Range requests (`https://host/path/`),
//! read through the `object_store` crate.
//!
//! A remote source is the slow tier of `store::tier`: the fast tier on
//! local disk holds each table's prefix and block checksums, so a lookup's
//! one slow read, its data block, is one ranged GET here, and the bytes it
//! brings are checked against the block checksums like a local disk's. So
//! any number of replicas, each with only the prefixes, share one copy of
//! the tables.
//!
//! A table's path is its URL (`s3://bucket/tables/KQvK.rtbw`), so the
//! layers above (shakmaty-syzygy, the engine, the tier) name it as they
//! name a file. What the source holds is listed once, at start
//! ([`RemoteSources::connect`]): every object under an S3 prefix; for an
//! HTTP mirror, the tables its directory page links to, each sized by a
//! HEAD. Sizes and names are checked against the published catalogue above
//! the store (`engine::tablebases`), and every GET's answer against the
//! listing (the object's size and ETag), so a table replaced in the store
//! while served is an error, never a mix of two tables.
//!
//! Each GET has a timeout and retries with backoff on 5xx, 429 and dropped
//! connections (`object_store`'s retry), within `--remote-timeout-secs`;
//! a source that fails several GETs in a row opens its circuit breaker
//! (`crate::circuit_breaker`) and reads that need it fail at once until a trial GET
//! succeeds. A failed read is an error naming the table ([`SourceUnavailable`],
//! a 503 with Retry-After), never a wrong answer. Probes are synchronous
//! (shakmaty-syzygy's `read_at` on a blocking thread), the client is
//! async: a read waits for its GET on the source's own small runtime
//! (`source::Bridge`), and inside the no-wait pass (`store::context`) a
//! read that would need a GET is refused at once, as the pread layer
//! refuses a page-cache miss, so the async workers never wait for the
//! network. GETs are counted per source (`metrics`, `/metrics`) and per
//! request (`X-Probe-Reads`' `gets=`).

pub mod file;
pub mod metrics;
pub mod source;

use std::{
    fmt, io,
    path::{Path, PathBuf},
    sync::Arc,
    time::Duration,
};

use object_store::path::Path as ObjectPath;
use shakmaty_syzygy::filesystem::{Filesystem, RandomAccessFile};

use crate::exposition::Exposition;
use file::RemoteFile;
use source::{Bridge, Listed, RemoteSource};

use super::stuck_reads::ReadsInFlight;

/// How remote sources are reached (`--s3-endpoint`, `--remote-timeout-secs`...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteOptions {
    /// The S3 endpoint of a self-hosted store (`http://127.0.0.1:3900`);
    /// else `AWS_ENDPOINT_URL`, else AWS's own for the region.
    pub s3_endpoint: Option<String>,
    /// The S3 region; else `AWS_REGION` (or `AWS_DEFAULT_REGION`).
    pub s3_region: Option<String>,
    /// Virtual-hosted-style addressing (`BUCKET.host`) instead of
    /// path-style (`host/BUCKET`), which self-hosted stores expect.
    pub s3_virtual_hosted: bool,
    /// A GET's whole time, retries included.
    pub timeout: Duration,
    /// Retries of a GET after a 5xx, 429 or dropped connection.
    pub retries: usize,
    /// Connections kept open per source: the probes of a request run in
    /// parallel, each with its GET.
    pub connections: usize,
    /// Connections are kept open between GETs. Off, each GET connects
    /// afresh: for a store that leaves Nagle's algorithm on (Garage 2.5
    /// does), where a kept connection makes each small answer wait for the
    /// client's delayed ACK, about 40 ms on Linux.
    pub keep_alive: bool,
    /// Whole objects are streamed (`tier build`, `verify`): `timeout` then
    /// bounds each wait for more bytes rather than the whole request,
    /// which for a table of tens of GiB takes minutes.
    pub streams: bool,
}

impl Default for RemoteOptions {
    fn default() -> Self {
        RemoteOptions {
            s3_endpoint: None,
            s3_region: None,
            s3_virtual_hosted: false,
            timeout: Duration::from_secs(5),
            retries: 3,
            connections: 16,
            keep_alive: true,
            streams: false,
        }
    }
}

impl RemoteOptions {
    /// How long connecting may take: a store on the network answers a
    /// connect in milliseconds; one that does not within two seconds is down.
    pub fn connect_timeout(&self) -> Duration {
        self.timeout.min(Duration::from_secs(2))
    }
}

/// Why remote sources could not be used.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    #[error("{url}: not a table source URL ({detail})")]
    Url { url: String, detail: String },
    #[error("{url}: cannot set up the client: {detail}")]
    Client { url: String, detail: String },
    #[error("cannot list the tables at {url}: {detail}")]
    Listing { url: String, detail: String },
    #[error("cannot start the remote sources' runtime: {0}")]
    Runtime(io::Error),
}

/// What kind of source a URL names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scheme {
    /// `s3://BUCKET/PREFIX`.
    S3 { bucket: String, prefix: String },
    /// `http(s)://host/path`, without the trailing slash.
    Http { base: String },
}

/// A remote source's URL, as tables under it are named:
/// `s3://bucket/prefix` and `https://host/path`, without a trailing slash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteUrl {
    pub scheme: Scheme,
    base: String,
}

impl RemoteUrl {
    /// `None` when `text` is not a URL (a directory); else the URL or why
    /// it cannot be one.
    pub fn parse(text: &str) -> Option<Result<RemoteUrl, RemoteError>> {
        let bad = |detail: &str| {
            Some(Err(RemoteError::Url {
                url: text.to_string(),
                detail: detail.to_string(),
            }))
        };
        if let Some(rest) = text.strip_prefix("s3://") {
            let rest = rest.trim_end_matches('/');
            let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
            if bucket.is_empty() {
                return bad("no bucket; write s3://BUCKET/PREFIX");
            }
            let prefix = prefix.trim_matches('/');
            let base = match prefix.is_empty() {
                true => format!("s3://{bucket}"),
                false => format!("s3://{bucket}/{prefix}"),
            };
            return Some(Ok(RemoteUrl {
                scheme: Scheme::S3 {
                    bucket: bucket.to_string(),
                    prefix: prefix.to_string(),
                },
                base,
            }));
        }
        if text.starts_with("https://") || text.starts_with("http://") {
            let base = text.trim_end_matches('/').to_string();
            let host = base.split_once("://").map_or("", |(_, rest)| rest);
            if host.is_empty() || host.starts_with('/') {
                return bad("no host");
            }
            if host.split('/').next().is_some_and(|h| h.contains('@')) {
                return bad("credentials do not belong in the URL");
            }
            return Some(Ok(RemoteUrl {
                scheme: Scheme::Http { base: base.clone() },
                base,
            }));
        }
        None
    }

    /// The URL a table path or directory argument names, if it is one.
    pub fn of_path(path: &Path) -> Option<Result<RemoteUrl, RemoteError>> {
        RemoteUrl::parse(path.to_str()?)
    }

    /// The path tables under it are named by: `BASE/relative`.
    pub fn path_of(&self, relative: &str) -> PathBuf {
        PathBuf::from(format!("{}/{relative}", self.base))
    }

    /// Where `path` lies under this source (`""` for the source itself),
    /// if it does.
    pub fn relative<'a>(&self, path: &'a str) -> Option<&'a str> {
        let rest = path.strip_prefix(self.base.as_str())?;
        match rest {
            "" | "/" => Some(""),
            _ => rest.strip_prefix('/').map(|r| r.trim_end_matches('/')),
        }
    }

    /// An object's location in the store.
    pub fn location(&self, relative: &str) -> ObjectPath {
        match &self.scheme {
            Scheme::S3 { prefix, .. } if !prefix.is_empty() => {
                ObjectPath::from(format!("{prefix}/{relative}"))
            }
            _ => ObjectPath::from(relative),
        }
    }
}

impl fmt::Display for RemoteUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.base)
    }
}

/// The Syzygy table files of `dirs`: in local directories
/// (`layout::table_files`), then the objects under those that are remote
/// sources, listed by `remote` (without it, each is a failure).
pub fn table_files(
    dirs: &[PathBuf],
    remote: Option<&RemoteSources>,
    failures: &mut Vec<(String, String)>,
) -> Vec<PathBuf> {
    let (urls, local): (Vec<PathBuf>, Vec<PathBuf>) =
        dirs.iter().cloned().partition(|dir| is_remote(dir));
    let mut files = super::layout::table_files(&local, failures);
    match remote {
        Some(remote) => files.extend(remote.table_files(&urls, failures)),
        None => failures.extend(urls.iter().map(|url| {
            (
                url.display().to_string(),
                "not connected to the remote source".to_string(),
            )
        })),
    }
    files
}

/// Whether a table path or directory names a remote source.
pub fn is_remote(path: &Path) -> bool {
    RemoteUrl::of_path(path).is_some()
}

/// A read refused because the table's remote source failed, or its object
/// changed since the listing: a 503 naming the table, with when to retry.
/// It names no URL: it reaches clients (the log has the URL and the
/// source's own words).
#[derive(Debug, Clone)]
pub struct SourceUnavailable {
    /// The file name, e.g. `KQvKR.rtbz`.
    pub table: String,
    pub reason: String,
    pub retry_after: Duration,
}

impl SourceUnavailable {
    pub fn into_io(self) -> io::Error {
        io::Error::other(self)
    }
}

impl fmt::Display for SourceUnavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.table, self.reason)
    }
}

impl std::error::Error for SourceUnavailable {}

/// The refusal inside `err`, if a remote source's failure made it.
pub fn unavailable(err: &io::Error) -> Option<&SourceUnavailable> {
    err.get_ref()
        .and_then(|e| e.downcast_ref::<SourceUnavailable>())
}

/// The remote sources of a store, and the runtime their requests run on.
pub struct RemoteSources {
    sources: Vec<Arc<RemoteSource>>,
}

impl fmt::Debug for RemoteSources {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.sources.iter().map(|s| s.url().to_string()))
            .finish()
    }
}

impl RemoteSources {
    /// Connects to every URL among `dirs` (directories are left alone) and
    /// lists it; `None` when there is none.
    pub fn connect(
        dirs: &[PathBuf],
        options: &RemoteOptions,
    ) -> Result<Option<Arc<RemoteSources>>, RemoteError> {
        let mut urls: Vec<RemoteUrl> = Vec::new();
        for dir in dirs {
            if let Some(url) = RemoteUrl::of_path(dir) {
                let url = url?;
                if !urls.contains(&url) {
                    urls.push(url);
                }
            }
        }
        if urls.is_empty() {
            return Ok(None);
        }
        let bridge = Arc::new(Bridge::new().map_err(RemoteError::Runtime)?);
        let mut sources = Vec::new();
        for url in urls {
            let source = RemoteSource::connect(url, options, Arc::clone(&bridge))?;
            tracing::info!(
                "{}: {} objects listed ({} table files)",
                source.url(),
                source.objects().len(),
                source.objects().keys().filter(|k| is_table_file(k)).count()
            );
            sources.push(Arc::new(source));
        }
        Ok(Some(Arc::new(RemoteSources { sources })))
    }

    pub fn sources(&self) -> &[Arc<RemoteSource>] {
        &self.sources
    }

    /// The source `path` lies under, and where under it.
    pub fn find(&self, path: &Path) -> Option<(&Arc<RemoteSource>, String)> {
        let text = path.to_str()?;
        self.sources
            .iter()
            .filter_map(|s| Some((s, s.url().relative(text)?.to_string())))
            .max_by_key(|(s, _)| s.url().to_string().len())
    }

    /// The listing's entry for the object at `path`.
    pub fn stat(&self, path: &Path) -> io::Result<Listed> {
        let (source, relative) = self.find(path).ok_or_else(|| not_listed(path))?;
        source
            .objects()
            .get(&relative)
            .cloned()
            .ok_or_else(|| not_listed(path))
    }

    /// The objects and "subdirectories" directly under `dir`, as paths.
    pub fn read_dir(&self, dir: &Path) -> io::Result<Vec<PathBuf>> {
        let (source, relative) = self.find(dir).ok_or_else(|| not_listed(dir))?;
        let under = match relative.is_empty() {
            true => String::new(),
            false => format!("{relative}/"),
        };
        let mut entries: Vec<PathBuf> = Vec::new();
        for key in source.objects().keys() {
            let Some(rest) = key.strip_prefix(under.as_str()) else {
                continue;
            };
            let child = match rest.split_once('/') {
                Some((sub, _)) => format!("{under}{sub}"),
                None => key.clone(),
            };
            let child = source.url().path_of(&child);
            if entries.last() != Some(&child) {
                entries.push(child);
            }
        }
        if entries.is_empty() && !relative.is_empty() {
            return Err(not_listed(dir));
        }
        entries.dedup();
        Ok(entries)
    }

    /// Whether `path` names a "directory" of a source (a prefix of some
    /// objects) rather than an object.
    pub fn is_dir(&self, path: &Path) -> bool {
        self.stat(path).is_err() && self.read_dir(path).is_ok()
    }

    /// A table object for ranged reads; no request is made.
    pub fn open(&self, path: &Path, in_flight: &Arc<ReadsInFlight>) -> io::Result<RemoteFile> {
        let (source, relative) = self.find(path).ok_or_else(|| not_listed(path))?;
        let listed = source
            .objects()
            .get(&relative)
            .cloned()
            .ok_or_else(|| not_listed(path))?;
        Ok(RemoteFile::new(
            Arc::clone(source),
            relative,
            path.to_path_buf(),
            listed,
            Arc::clone(in_flight),
        ))
    }

    /// The whole object at `path`, streamed by one GET, checked against
    /// its listing (`tier build`, `verify` and `tables status --verify`
    /// read remote tables so).
    pub fn reader(&self, path: &Path) -> io::Result<file::ObjectReader> {
        let (source, relative) = self.find(path).ok_or_else(|| not_listed(path))?;
        let listed = self.stat(path)?;
        Ok(file::ObjectReader::open(source, &relative, &listed))
    }

    /// The Syzygy table objects directly under the sources' "directories"
    /// `dirs`, sorted by name; a directory that cannot be listed is a
    /// failure.
    pub fn table_files(
        &self,
        dirs: &[PathBuf],
        failures: &mut Vec<(String, String)>,
    ) -> Vec<PathBuf> {
        let mut files = Vec::new();
        for dir in dirs {
            match self.read_dir(dir) {
                Ok(paths) => files.extend(
                    paths
                        .into_iter()
                        .filter(|p| super::layout::is_table_name(&super::layout::file_name(p))),
                ),
                Err(err) => failures.push((
                    dir.display().to_string(),
                    format!("cannot list the remote source: {err}"),
                )),
            }
        }
        files.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
        files
    }

    /// The objects under `dir`, down to `depth` "subdirectories" (0: those
    /// directly under it), as paths.
    pub fn files_under(&self, dir: &Path, depth: usize) -> io::Result<Vec<PathBuf>> {
        let (source, relative) = self.find(dir).ok_or_else(|| not_listed(dir))?;
        let under = match relative.is_empty() {
            true => String::new(),
            false => format!("{relative}/"),
        };
        Ok(source
            .objects()
            .keys()
            .filter(|key| {
                key.strip_prefix(under.as_str())
                    .is_some_and(|rest| rest.matches('/').count() <= depth)
            })
            .map(|key| source.url().path_of(key))
            .collect())
    }

    /// A whole (small) object, with one GET: an `MD5SUMS` list.
    pub fn read_whole(&self, path: &Path) -> io::Result<Vec<u8>> {
        let mut bytes = Vec::new();
        io::Read::read_to_end(&mut self.reader(path)?, &mut bytes)?;
        Ok(bytes)
    }

    /// GETs sent by every source since start.
    pub fn gets(&self) -> u64 {
        self.sources.iter().map(|s| s.metrics().gets()).sum()
    }

    /// Every source's figures for `/metrics`.
    pub fn render(&self, out: &mut Exposition) {
        render_sources(out, &self.sources);
    }
}

/// The sources as a filesystem of their own, without the tiers above:
/// what `tier build` reads a remote table's header through.
impl Filesystem for RemoteSources {
    fn regular_file_size(&self, path: &Path) -> io::Result<u64> {
        Ok(self.stat(path)?.size)
    }

    fn read_dir(&self, path: &Path) -> io::Result<Vec<PathBuf>> {
        RemoteSources::read_dir(self, path)
    }

    fn open(&self, path: &Path) -> io::Result<Box<dyn RandomAccessFile>> {
        Ok(Box::new(RemoteSources::open(self, path, &Arc::default())?))
    }
}

/// Whether an object's key names a table file: a Syzygy table of any
/// variant, or a Prophet DTM table (also in a "subdirectory").
fn is_table_file(key: &str) -> bool {
    let name = key.rsplit('/').next().unwrap_or(key);
    super::layout::is_table_name(name) || crate::dtm::format::is_table_name(name)
}

/// The remote figures of `sources` (none: the families with no series).
pub fn render_sources(out: &mut Exposition, sources: &[Arc<RemoteSource>]) {
    let names: Vec<String> = sources.iter().map(|s| s.url().to_string()).collect();
    let figures: Vec<(&str, &metrics::RemoteMetrics)> = names
        .iter()
        .zip(sources)
        .map(|(name, s)| (name.as_str(), s.metrics()))
        .collect();
    let breakers: Vec<(&str, u64, u64)> = names
        .iter()
        .zip(sources)
        .map(|(name, s)| {
            let (state, opened) = s.breaker_figures();
            (name.as_str(), state, opened)
        })
        .collect();
    metrics::render(out, &figures, &breakers);
}

fn not_listed(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        format!(
            "{} is not among the objects listed at start",
            path.display()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_name_their_tables_as_paths() {
        let url = RemoteUrl::parse("s3://tables/standard/345/")
            .unwrap()
            .unwrap();
        assert_eq!(url.to_string(), "s3://tables/standard/345");
        assert_eq!(
            url.path_of("KQvK.rtbw"),
            PathBuf::from("s3://tables/standard/345/KQvK.rtbw")
        );
        assert_eq!(
            url.relative("s3://tables/standard/345/KQvK.rtbw"),
            Some("KQvK.rtbw")
        );
        assert_eq!(url.relative("s3://tables/standard/345"), Some(""));
        assert_eq!(url.relative("s3://tables/standard/3456/KQvK.rtbw"), None);
        assert_eq!(url.location("KQvK.rtbw").as_ref(), "standard/345/KQvK.rtbw");
        let bare = RemoteUrl::parse("s3://tables").unwrap().unwrap();
        assert_eq!(bare.location("KQvK.rtbw").as_ref(), "KQvK.rtbw");
        let http = RemoteUrl::parse("https://mirror.example/syzygy/")
            .unwrap()
            .unwrap();
        assert_eq!(http.to_string(), "https://mirror.example/syzygy");
        assert_eq!(http.location("KQvK.rtbw").as_ref(), "KQvK.rtbw");
        assert!(RemoteUrl::parse("/srv/tables").is_none());
        assert!(RemoteUrl::parse("s3:///x").unwrap().is_err());
        assert!(RemoteUrl::parse("https://user:pw@host/x").unwrap().is_err());
        assert!(is_remote(Path::new("s3://b/KQvK.rtbw")));
        assert!(!is_remote(Path::new("tables/KQvK.rtbw")));
    }
}
