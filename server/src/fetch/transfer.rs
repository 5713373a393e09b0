//! One table file from a mirror onto disk, never visible under its real name
//! before it matches its expected digest: the published one (sha256; md5 for
//! atomic and antichess tables), or for Prophet DTM files the md5 the
//! mirror's `MD5SUMS` lists. The file may be a path below the target
//! directory (`4men/0pawns/KBNK.egtb.bz`): its directories are created.
//!
//! The bytes go to `NAME.part`, which survives a cut transfer: the next
//! attempt (or the next run) asks for the rest with an HTTP Range request.
//! A complete `.part` is fsynced and read once (`checksums::read`: the
//! digest, and the block checksums of the same bytes), renamed to `NAME`,
//! the directory fsynced, and the checksums recorded in `.zugzwang/` beside
//! it (`checksums::record`), so the file is checked from its first read. A
//! file already there is read the same way, and its checksums recorded if
//! they are not. A digest mismatch starts over once from an empty
//! `.part`; a second one is reported. A mirror that ignores Range (answers
//! 200 with the whole file) is followed from byte 0. Where no size is
//! published, the mirror's (Content-Length, Content-Range) says when the
//! file is complete, and the digest whether it is the published one; what
//! a mirror may send is bounded all the same (`limits`): a file stops at
//! the most its kind can be, the free space is looked at again while it is
//! written, a `Content-Range` that does not add up is refused, and a
//! redirect from https to http is not followed.

use std::{
    fs::{self, File},
    io,
    path::{Path, PathBuf},
    time::Duration,
};

use futures::StreamExt;
use indicatif::HumanBytes;
use reqwest::{Client, StatusCode, Url, header};
use tokio::io::AsyncWriteExt;

use super::{
    checksums::{self, Pass},
    mirror_limits::{self, RedirectRefused, SPACE_CHECK_EVERY, size_bound, space_runs_out},
};
use crate::{
    catalog::{Published, whole_file::PublishedDigest},
    dtm::format as prophet_format,
    progress::Progress,
    store::layout::file_name,
};

/// Failed attempts in a row (none adding a byte) before a file is given up.
pub const ATTEMPTS: u32 = 5;

/// Why one table file could not be fetched; each names the file and says
/// what to do.
#[derive(Debug, thiserror::Error)]
pub enum TransferError {
    #[error(
        "{file}: not on the mirror ({url} answered 404); {}",
        not_found_hint(file)
    )]
    NotFound { file: String, url: Url },
    #[error(
        "{file}: the mirror answered {status} for {url}; try again later or use another mirror"
    )]
    Status {
        file: String,
        url: Url,
        status: StatusCode,
    },
    #[error(
        "{file}: the transfer failed {ATTEMPTS} times in a row (last: {}); run the same command again to resume from the bytes kept in {file}.part",
        mirror_limits::describe(.source)
    )]
    Connection {
        file: String,
        #[source]
        source: reqwest::Error,
    },
    #[error(
        "{file}: the mirror's file has {got} bytes, {expected} expected ({why}): the mirror holds another file or answers wrongly; use another mirror"
    )]
    WrongSize {
        file: String,
        got: u64,
        expected: u64,
        /// Where the expected size comes from.
        why: &'static str,
    },
    #[error(
        "{file}: {} bytes, more than {bound} ({why}): the mirror serves something other than this table, or a body that does not end; {file}.part was removed; use another mirror",
        .got.describe()
    )]
    TooLarge {
        file: String,
        got: Got,
        /// The most a file of its kind can be (`mirror_limits::size_bound`).
        bound: u64,
        why: String,
    },
    #[error(
        "{file}: {url} answered a request for bytes {have}- with Content-Range `{value}`, which {problem}: the mirror does not serve byte ranges correctly; use another mirror"
    )]
    BadRange {
        file: String,
        url: String,
        have: u64,
        value: String,
        problem: String,
    },
    #[error(
        "{file}: {} is free in {}, {}; stopped before the disk is full (the bytes received are kept in {file}.part): free some space, then run the same command again",
        HumanBytes(*.free), .dir.display(), needs(*.needed, *.size_known)
    )]
    NoSpace {
        file: String,
        dir: PathBuf,
        free: u64,
        /// What the file still needs (its size known), or the margin kept
        /// while it arrives (its size not known).
        needed: u64,
        size_known: bool,
    },
    #[error(
        "{file}: {source}; give as --from an https address that serves the files itself (or the mirror's http:// address, if plain http is acceptable to you)"
    )]
    Redirect {
        file: String,
        #[source]
        source: RedirectRefused,
    },
    #[error(
        "{file}: {algorithm} {got} differs from {} twice, the second time fetched from scratch: the mirror serves a damaged file; use another mirror",
        .origin.describe(expected)
    )]
    Digest {
        file: String,
        algorithm: &'static str,
        got: String,
        expected: String,
        origin: Origin,
    },
    #[error(
        "{file}: its {algorithm} is the expected one, but the file fails its own check ({problem}): the mirror serves a damaged file; use another mirror"
    )]
    OwnCheck {
        file: String,
        algorithm: &'static str,
        problem: String,
    },
    #[error(
        "{file}: verified, but its block checksums could not be recorded in {}: {source}; until they are, its reads are not checked: fix that (permissions, free space), then run the same command again (it checks the file and records them)",
        .dir.display()
    )]
    Checksums {
        file: String,
        dir: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{file}: cannot write {}: {source}; check the directory's permissions and free space, then run the same command again (it resumes from what {file}.part holds)", .path.display())]
    Io {
        file: String,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// What happened to a file that ended well.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Done {
    /// Downloaded (this many bytes over the network) and verified.
    Fetched(u64),
    /// Already there under its real name, complete and verified;
    /// `recorded`: its block checksums were not (or not for these bytes)
    /// and have been recorded now.
    AlreadyComplete { recorded: bool },
}

/// What a fetched file must be before it appears under its real name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expected {
    /// The published size; `None` where none is (the mirror's then counts).
    pub size: Option<u64>,
    pub digest: PublishedDigest<String>,
    pub origin: Origin,
}

/// Where an expected digest comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Shipped with the program (the published lists).
    Published,
    /// The mirror's `MD5SUMS` (Prophet files).
    MirrorList,
}

impl Origin {
    /// The digest as messages name it.
    fn describe(self, hex: &str) -> String {
        match self {
            Origin::Published => format!("the published {hex}"),
            Origin::MirrorList => format!("{hex} (the mirror's MD5SUMS)"),
        }
    }
}

impl Expected {
    /// An md5 a list gives (Prophet files: no size known).
    pub fn listed_md5(md5: &str) -> Expected {
        Expected {
            size: None,
            digest: PublishedDigest::Md5(md5.to_ascii_lowercase()),
            origin: Origin::MirrorList,
        }
    }

    /// Whether the digest is an md5 (the pass over the file then computes
    /// one: `checksums::read` with md5).
    fn wants_md5(&self) -> bool {
        matches!(self.digest, PublishedDigest::Md5(_))
    }

    /// The digest a pass over a file found by the expected algorithm.
    fn found_in<'a>(&self, pass: &'a Pass) -> Option<&'a str> {
        match self.digest {
            PublishedDigest::Sha256(_) => Some(&pass.sha256),
            PublishedDigest::Md5(_) => pass.md5.as_deref(),
        }
    }
}

impl From<Published> for Expected {
    fn from(published: Published) -> Expected {
        let digest = match published.digest {
            PublishedDigest::Sha256(hex) => PublishedDigest::Sha256(hex.to_string()),
            PublishedDigest::Md5(hex) => PublishedDigest::Md5(hex.to_string()),
        };
        Expected {
            size: published.size,
            digest,
            origin: Origin::Published,
        }
    }
}

/// One file to fetch: where from, where to, what it must be.
pub struct Transfer<'a> {
    pub client: &'a Client,
    pub url: Url,
    pub dir: &'a Path,
    /// The file's path below `dir` (a name, or `4men/0pawns/KBNK.egtb.bz`).
    pub file: &'a str,
    /// Its pieces, kings included (what bounds its size where none is
    /// published: `mirror_limits::size_bound`).
    pub pieces: usize,
    pub expected: &'a Expected,
    /// Counts bytes received; retracted when bytes are thrown away.
    pub progress: &'a dyn Progress,
}

/// How one request went, for the retry loop.
enum Attempt {
    /// Worth another request (connection trouble, 5xx, a range to redo).
    Retry(TransferError),
    Fatal(TransferError),
}

impl Transfer<'_> {
    fn target(&self) -> PathBuf {
        self.dir.join(self.file)
    }

    /// The temporary name of the file while it is incomplete or unverified.
    pub fn part(&self) -> PathBuf {
        part_path(self.dir, self.file)
    }

    fn io(&self, path: &Path) -> impl FnOnce(io::Error) -> TransferError {
        let (file, path) = (self.file.to_string(), path.to_path_buf());
        move |source| TransferError::Io { file, path, source }
    }

    /// Fetches the file unless it is already complete and verified; either
    /// way its block checksums are recorded from the bytes verified.
    pub async fn run(&self) -> Result<Done, TransferError> {
        if let Some(pass) = self.already_complete().await {
            let recorded = self.record(pass).await?;
            return Ok(Done::AlreadyComplete { recorded });
        }
        let mut received = 0;
        let mut last_digest = String::new();
        for round in 0..2 {
            if round > 0 {
                self.discard_part()?;
            }
            received += self.download().await?;
            match self.read_part().await? {
                pass if self.matches(&pass) => {
                    if let Some(Err(problem)) = pass.own_check {
                        // The same bytes again would fail the same way.
                        self.discard_part()?;
                        return Err(TransferError::OwnCheck {
                            file: self.file.to_string(),
                            algorithm: self.expected.digest.algorithm(),
                            problem,
                        });
                    }
                    self.publish().await?;
                    self.record(pass).await?;
                    return Ok(Done::Fetched(received));
                }
                pass => {
                    tracing::warn!(
                        "{}: {} differs from {}; fetching it again from scratch",
                        self.file,
                        self.expected.digest.algorithm(),
                        self.expected.origin.describe(self.expected.digest.hex())
                    );
                    last_digest = self
                        .expected
                        .found_in(&pass)
                        .unwrap_or_default()
                        .to_string();
                }
            }
        }
        self.discard_part()?;
        Err(TransferError::Digest {
            file: self.file.to_string(),
            algorithm: self.expected.digest.algorithm(),
            got: last_digest,
            expected: self.expected.digest.hex().to_string(),
            origin: self.expected.origin,
        })
    }

    /// The pass over the file under its real name, if it has the published
    /// size (if one is published), the expected digest and passes its own
    /// check (a Prophet file); checked every time: nothing is remembered
    /// between runs.
    async fn already_complete(&self) -> Option<Pass> {
        let target = self.target();
        let meta = fs::metadata(&target).ok()?;
        if self.expected.size.is_some_and(|size| size != meta.len()) {
            return None;
        }
        let with_md5 = self.expected.wants_md5();
        let pass = tokio::task::spawn_blocking(move || checksums::read(&target, &target, with_md5))
            .await
            .ok()?
            .ok()?;
        if !self.matches(&pass) {
            return None;
        }
        if let Some(Err(problem)) = &pass.own_check {
            tracing::warn!("{}: fails its own check ({problem})", self.file);
            return None;
        }
        Some(pass)
    }

    /// Whether a pass over the file found the expected digest.
    fn matches(&self, pass: &Pass) -> bool {
        self.expected.found_in(pass) == Some(self.expected.digest.hex())
    }

    /// Records the block checksums of the file under its real name from
    /// the pass that verified it; says whether they were written (rather
    /// than found already there).
    async fn record(&self, pass: Pass) -> Result<bool, TransferError> {
        let target = self.target();
        let recorded = tokio::task::spawn_blocking(move || {
            let recorded = checksums::record(&target, &pass)?;
            checksums::now_whole(&target);
            Ok(recorded)
        })
        .await
        .unwrap_or_else(|join| Err(io::Error::other(join)));
        recorded.map_err(|source| TransferError::Checksums {
            file: self.file.to_string(),
            dir: checksums::integrity_dir(&self.target()),
            source,
        })
    }

    /// Brings `.part` to the file's size, resuming where it stops: the
    /// published size, or else the one the mirror gives, never past the
    /// most a file of its kind can be. Returns the bytes received over the
    /// network.
    async fn download(&self) -> Result<u64, TransferError> {
        let part = self.part();
        let published = self.expected.size.is_some();
        let mut size = Size {
            bytes: self.expected.size,
            published,
            bound: (!published).then(|| size_bound(self.file, self.pieces).bytes),
        };
        let mut received = 0;
        let mut failures = 0;
        loop {
            let have = fs::metadata(&part).map_or(0, |m| m.len());
            if size.bytes == Some(have) {
                return Ok(received);
            }
            if size.bytes.or(size.bound).is_some_and(|bytes| have > bytes) {
                self.discard_part()?;
                continue;
            }
            let mut got = 0;
            let result = self.request(have, &mut size, &mut got).await;
            received += got;
            if got > 0 {
                failures = 0;
            }
            match result {
                // A body of no announced length ended cleanly: the digest judges it.
                Ok(()) if size.bytes.is_none() => return Ok(received),
                Ok(()) => {}
                Err(Attempt::Fatal(err @ TransferError::TooLarge { .. })) => {
                    // Nothing of it is worth resuming from.
                    self.discard_part()?;
                    return Err(err);
                }
                Err(Attempt::Fatal(err)) => return Err(err),
                Err(Attempt::Retry(err)) => {
                    failures += 1;
                    if failures >= ATTEMPTS {
                        return Err(err);
                    }
                    tracing::debug!("{err}; retrying");
                    tokio::time::sleep(Duration::from_millis(250) * failures).await;
                }
            }
        }
    }

    /// One GET, asking for the bytes from `have` on, appended to `.part`;
    /// learns the file's size from the answer where none is published.
    async fn request(&self, have: u64, size: &mut Size, got: &mut u64) -> Result<(), Attempt> {
        let mut request = self.client.get(self.url.clone());
        if have > 0 {
            request = request.header(header::RANGE, format!("bytes={have}-"));
        }
        let response = request.send().await.map_err(|e| self.send_error(e))?;
        let status = response.status();
        // A 206 stands on its Content-Range; a 416's only says whether
        // `.part` is whole; anything else's is not looked at.
        let range = match status {
            StatusCode::PARTIAL_CONTENT => content_range(response.headers())
                .map_err(|problem| Attempt::Fatal(self.bad_range(have, &response, problem)))?,
            StatusCode::RANGE_NOT_SATISFIABLE => content_range(response.headers()).ok().flatten(),
            _ => None,
        };
        let start = match status {
            StatusCode::PARTIAL_CONTENT => match range.and_then(|r| r.bytes) {
                Some((first, _)) => first,
                None => {
                    let problem = "names no bytes".to_string();
                    return Err(Attempt::Fatal(self.bad_range(have, &response, problem)));
                }
            },
            StatusCode::OK => 0,
            // `.part` already holds the whole file (a run stopped before hashing it).
            StatusCode::RANGE_NOT_SATISFIABLE
                if have > 0
                    && range.is_some_and(|r| r.bytes.is_none() && r.total == Some(have)) =>
            {
                size.bytes = Some(have);
                return Ok(());
            }
            StatusCode::RANGE_NOT_SATISFIABLE => {
                // Not the whole file after all: start over.
                self.discard_part().map_err(Attempt::Fatal)?;
                return Err(Attempt::Retry(self.status(status)));
            }
            StatusCode::NOT_FOUND | StatusCode::GONE => {
                return Err(Attempt::Fatal(TransferError::NotFound {
                    file: self.file.to_string(),
                    url: self.url.clone(),
                }));
            }
            status => {
                let err = self.status(status);
                return Err(if status.is_server_error() {
                    Attempt::Retry(err)
                } else {
                    Attempt::Fatal(err)
                });
            }
        };
        // A range other than the one asked for: start over.
        if start != have && start != 0 {
            self.discard_part().map_err(Attempt::Fatal)?;
            return Err(Attempt::Retry(self.status(status)));
        }
        let total = self
            .total(status, range, &response, start)
            .map_err(|problem| Attempt::Fatal(self.bad_range(have, &response, problem)))?;
        if let Some(total) = total {
            self.learn_size(size, total)?;
        }
        if start < have {
            // The mirror ignored Range: what we have is sent again.
            tracing::debug!(
                "{}: the mirror ignored Range; receiving from byte 0",
                self.file
            );
            self.discard_part().map_err(Attempt::Fatal)?;
        }
        self.append(response, start, *size, got).await
    }

    /// The file's size as an answer gives it: a 206's `Content-Range`
    /// total, else the first byte sent plus `Content-Length`; the error
    /// says how the two disagree, or that they go past 2^64 bytes.
    fn total(
        &self,
        status: StatusCode,
        range: Option<ContentRange>,
        response: &reqwest::Response,
        start: u64,
    ) -> Result<Option<u64>, String> {
        let length = response.content_length();
        if status == StatusCode::PARTIAL_CONTENT
            && let Some(ContentRange {
                bytes: Some((first, last)),
                total,
            }) = range
        {
            // `first <= last` (checked when read), so this cannot overflow
            // but at u64::MAX itself.
            let span = (last - first).checked_add(1);
            if let Some(length) = length
                && span != Some(length)
            {
                return Err(format!(
                    "spans {} bytes, but the Content-Length is {length}",
                    span.map_or("2^64".to_string(), |span| span.to_string())
                ));
            }
            if total.is_some() {
                return Ok(total);
            }
        }
        match length {
            Some(length) => start
                .checked_add(length)
                .map(Some)
                .ok_or_else(|| format!("with a Content-Length of {length}, goes past 2^64 bytes")),
            None => Ok(None),
        }
    }

    /// Checks the mirror's size of the file against the published one, or
    /// takes it where none is published (if it is within the bound of the
    /// file's kind).
    fn learn_size(&self, size: &mut Size, total: u64) -> Result<(), Attempt> {
        if let Some(bound) = size.bound.filter(|&bound| total > bound) {
            return Err(Attempt::Fatal(self.too_large(Got::Announced(total), bound)));
        }
        match size.bytes {
            Some(bytes) if bytes == total => Ok(()),
            Some(bytes) if size.published => Err(Attempt::Fatal(TransferError::WrongSize {
                file: self.file.to_string(),
                got: total,
                expected: bytes,
                why: size.source(),
            })),
            // The mirror's file changed size between two requests: start over.
            Some(_) => {
                size.bytes = None;
                self.discard_part().map_err(Attempt::Fatal)?;
                Err(Attempt::Retry(self.status(StatusCode::PARTIAL_CONTENT)))
            }
            None => {
                size.bytes = Some(total);
                Ok(())
            }
        }
    }

    /// Appends the body to `.part`, which holds `start` bytes, refusing
    /// bytes past `size` (or past its bound), and looking at the free space
    /// again every [`SPACE_CHECK_EVERY`] bytes.
    async fn append(
        &self,
        response: reqwest::Response,
        start: u64,
        size: Size,
        got: &mut u64,
    ) -> Result<(), Attempt> {
        let part = self.part();
        let fatal = |e| Attempt::Fatal(self.io(&part)(e));
        let dir = part.parent().unwrap_or(self.dir).to_path_buf();
        let create = dir.clone();
        tokio::task::spawn_blocking(move || mirror_limits::create_dirs(&create))
            .await
            .unwrap_or_else(|join| Err(io::Error::other(join)))
            .map_err(fatal)?;
        let mut out = tokio::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&part)
            .await
            .map_err(fatal)?;
        let mut body = response.bytes_stream();
        let mut result = Ok(());
        let mut next_space_check = 0;
        while let Some(chunk) = body.next().await {
            let chunk = match chunk {
                Ok(chunk) => chunk,
                Err(err) => {
                    result = Err(Attempt::Retry(self.connection(err)));
                    break;
                }
            };
            let written = start.saturating_add(*got);
            let end = written.saturating_add(chunk.len() as u64);
            if let Some(expected) = size.bytes.filter(|&bytes| end > bytes) {
                result = Err(Attempt::Fatal(TransferError::WrongSize {
                    file: self.file.to_string(),
                    got: end,
                    expected,
                    why: size.source(),
                }));
                break;
            }
            if let Some(bound) = size.bound.filter(|&bound| end > bound) {
                result = Err(Attempt::Fatal(self.too_large(Got::Sent(end), bound)));
                break;
            }
            if *got >= next_space_check {
                next_space_check = *got + SPACE_CHECK_EVERY;
                if let Err(err) = self.check_space(&dir, written, size) {
                    result = Err(err);
                    break;
                }
            }
            if let Err(err) = out.write_all(&chunk).await {
                result = Err(fatal(err));
                break;
            }
            *got += chunk.len() as u64;
            self.progress.advance(chunk.len() as u64);
        }
        // Keep what arrived, even after an error: the next attempt resumes there.
        out.flush().await.map_err(fatal)?;
        result
    }

    /// Refuses to write on when the disk would fill: what the file still
    /// needs past `written` bytes (its size known), or a margin
    /// ([`mirror_limits::KEEP_FREE`], at most what its bound leaves) when not.
    fn check_space(&self, dir: &Path, written: u64, size: Size) -> Result<(), Attempt> {
        let free = mirror_limits::free_space(dir).map_err(|e| Attempt::Fatal(self.io(dir)(e)))?;
        let remaining = size.bytes.map(|bytes| bytes.saturating_sub(written));
        let needed = remaining.or_else(|| {
            size.bound
                .map(|bound| bound.saturating_sub(written).min(mirror_limits::KEEP_FREE))
        });
        if space_runs_out(free, needed) {
            return Err(Attempt::Fatal(TransferError::NoSpace {
                file: self.file.to_string(),
                dir: dir.to_path_buf(),
                free,
                needed: needed.unwrap_or(mirror_limits::KEEP_FREE),
                size_known: remaining.is_some(),
            }));
        }
        Ok(())
    }

    /// A request that got no answer: a redirect refused ends the
    /// transfer, anything else is worth another try.
    fn send_error(&self, err: reqwest::Error) -> Attempt {
        match mirror_limits::redirect_refused(&err) {
            Some(refused) => Attempt::Fatal(TransferError::Redirect {
                file: self.file.to_string(),
                source: refused.clone(),
            }),
            None => Attempt::Retry(self.connection(err)),
        }
    }

    fn status(&self, status: StatusCode) -> TransferError {
        TransferError::Status {
            file: self.file.to_string(),
            url: self.url.clone(),
            status,
        }
    }

    fn bad_range(&self, have: u64, response: &reqwest::Response, problem: String) -> TransferError {
        let value = response
            .headers()
            .get(header::CONTENT_RANGE)
            .map_or("(none)".to_string(), |value| {
                String::from_utf8_lossy(value.as_bytes()).into_owned()
            });
        TransferError::BadRange {
            file: self.file.to_string(),
            url: self.url.to_string(),
            have,
            value,
            problem,
        }
    }

    fn too_large(&self, got: Got, bound: u64) -> TransferError {
        TransferError::TooLarge {
            file: self.file.to_string(),
            got,
            bound,
            why: size_bound(self.file, self.pieces).why,
        }
    }

    fn connection(&self, source: reqwest::Error) -> TransferError {
        TransferError::Connection {
            file: self.file.to_string(),
            source,
        }
    }

    /// Removes `.part`, taking its bytes back off the progress bar.
    fn discard_part(&self) -> Result<(), TransferError> {
        let part = self.part();
        match fs::metadata(&part) {
            Ok(meta) => self.progress.retract(meta.len()),
            Err(_) => return Ok(()),
        }
        fs::remove_file(&part).map_err(self.io(&part))
    }

    /// fsync, then one pass over the complete `.part`: its digest by the
    /// expected digest's algorithm, and its block checksums.
    async fn read_part(&self) -> Result<Pass, TransferError> {
        let part = self.part();
        let (path, target) = (part.clone(), self.target());
        let with_md5 = self.expected.wants_md5();
        let result = tokio::task::spawn_blocking(move || {
            File::open(&path)?.sync_all()?;
            checksums::read(&path, &target, with_md5)
        })
        .await
        .unwrap_or_else(|join| Err(io::Error::other(join)));
        result.map_err(self.io(&part))
    }

    /// Renames the verified `.part` to the real name and makes the rename
    /// durable (fsync of the directory the file is in).
    async fn publish(&self) -> Result<(), TransferError> {
        let (part, target) = (self.part(), self.target());
        let dir = target.parent().unwrap_or(self.dir).to_path_buf();
        let result = tokio::task::spawn_blocking(move || {
            fs::rename(&part, &target)?;
            File::open(&dir)?.sync_all()
        })
        .await
        .unwrap_or_else(|join| Err(io::Error::other(join)));
        result.map_err(self.io(&self.target()))
    }
}

/// Where a file is kept while it is incomplete or unverified.
pub fn part_path(dir: &Path, file: &str) -> PathBuf {
    dir.join(format!("{file}.part"))
}

/// Bytes already in `.part` (0 when there is none).
pub fn part_len(dir: &Path, file: &str) -> u64 {
    fs::metadata(part_path(dir, file)).map_or(0, |m| m.len())
}

/// A file's size while it is fetched.
#[derive(Debug, Clone, Copy)]
struct Size {
    /// Published, or learned from the mirror's answers; `None` until known.
    bytes: Option<u64>,
    /// Whether `bytes` is the published size (a mirror's other size is then
    /// another file, not a change to follow).
    published: bool,
    /// Where no size is published, the most a file of its kind can be
    /// (`mirror_limits::size_bound`): neither an announced size nor the bytes
    /// received may go past it.
    bound: Option<u64>,
}

impl Size {
    /// Where `bytes` comes from, as messages say it.
    fn source(self) -> &'static str {
        if self.published {
            "the published size"
        } else {
            "the size the mirror announced"
        }
    }
}

/// How a mirror showed a file to be larger than its kind can be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Got {
    /// Its `Content-Length` or `Content-Range` announced this many bytes.
    Announced(u64),
    /// Its body went on to this many bytes (with what `.part` held).
    Sent(u64),
}

impl Got {
    fn describe(self) -> String {
        match self {
            Got::Announced(bytes) => format!("the mirror announces {bytes}"),
            Got::Sent(bytes) => format!("the mirror sent {bytes}"),
        }
    }
}

/// What a file still needs, as [`TransferError::NoSpace`] says it.
fn needs(needed: u64, size_known: bool) -> String {
    if size_known {
        format!("and the file needs {} more", HumanBytes(needed))
    } else {
        format!(
            "less than the {} kept free while a file of unknown size arrives",
            HumanBytes(needed)
        )
    }
}

/// A `Content-Range` header: `bytes FIRST-LAST/TOTAL` (a 206's),
/// `bytes */TOTAL` (a 416's: no bytes), the total `*` when not known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ContentRange {
    /// The first and last byte sent (both included).
    bytes: Option<(u64, u64)>,
    total: Option<u64>,
}

/// The answer's `Content-Range`: `None` without one, an error (what is
/// wrong with it, worded to follow "which") when it is not one or does
/// not add up: a number that is none (or past 2^64), the last byte before
/// the first, or past the total.
fn content_range(headers: &header::HeaderMap) -> Result<Option<ContentRange>, String> {
    let Some(value) = headers.get(header::CONTENT_RANGE) else {
        return Ok(None);
    };
    let malformed = || "is not `bytes FIRST-LAST/TOTAL` (numbers below 2^64)".to_string();
    let value = value.to_str().map_err(|_| malformed())?;
    let (range, total) = value
        .strip_prefix("bytes ")
        .and_then(|rest| rest.split_once('/'))
        .ok_or_else(malformed)?;
    let number = |text: &str| text.trim().parse::<u64>().map_err(|_| malformed());
    let total = match total.trim() {
        "*" => None,
        total => Some(number(total)?),
    };
    let bytes = match range.trim() {
        "*" => None,
        range => {
            let (first, last) = range.split_once('-').ok_or_else(malformed)?;
            Some((number(first)?, number(last)?))
        }
    };
    match (bytes, total) {
        (Some((first, last)), _) if last < first => Err(format!(
            "ends (byte {last}) before it starts (byte {first})"
        )),
        (Some((_, last)), Some(total)) if last >= total => Err(format!(
            "ends at byte {last}, past the file's {total} bytes"
        )),
        _ => Ok(Some(ContentRange { bytes, total })),
    }
}

/// What to do about a file the mirror answers 404 for.
fn not_found_hint(file: &str) -> String {
    if prophet_format::is_table_name(&file_name(Path::new(file))) {
        return "the mirror's MD5SUMS lists it, so the mirror is incomplete; repeat --from with another mirror of the same layout that has it, or use another mirror".to_string();
    }
    let suffix = file.rsplit_once('.').map_or(file, |(_, ext)| ext);
    format!(
        "check that --from is the directory holding the mirror's .{suffix} files (repeat --from where WDL and DTZ, or antichess tables with and without pawns, are kept apart), or use another mirror"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(value: &str) -> Result<Option<ContentRange>, String> {
        let mut headers = header::HeaderMap::new();
        headers.insert(header::CONTENT_RANGE, value.parse().unwrap());
        content_range(&headers)
    }

    fn ok(bytes: Option<(u64, u64)>, total: Option<u64>) -> Result<Option<ContentRange>, String> {
        Ok(Some(ContentRange { bytes, total }))
    }

    #[test]
    fn reads_the_bytes_and_total_of_a_content_range() {
        assert_eq!(range("bytes 100-199/200"), ok(Some((100, 199)), Some(200)));
        assert_eq!(range("bytes 100-199/*"), ok(Some((100, 199)), None));
        // A 416's: the whole file is 200 bytes.
        assert_eq!(range("bytes */200"), ok(None, Some(200)));
        assert_eq!(content_range(&header::HeaderMap::new()), Ok(None));
    }

    #[test]
    fn refuses_a_content_range_that_does_not_add_up() {
        for (value, problem) in [
            ("items 1-2/3", "is not"),
            ("bytes 1-2", "is not"),
            ("bytes 100-99999999999999999999999/*", "is not"),
            ("bytes 100-199/-1", "is not"),
            ("bytes 200-100/*", "before it starts"),
            ("bytes 100-200/200", "past the file's 200 bytes"),
            (
                "bytes 0-18446744073709551615/18446744073709551615",
                "past the file's",
            ),
        ] {
            let err = range(value).unwrap_err();
            assert!(err.contains(problem), "{value}: {err}");
        }
    }
}
