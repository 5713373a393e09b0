//! One table object of a remote source, read with ranged GETs: what the
//! tier's slow file is when the tables are in an object store.

use std::{
    io,
    path::{Path, PathBuf},
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use shakmaty_syzygy::filesystem::{RandomAccessFile, ReadHint};

use super::{
    SourceUnavailable,
    source::{GetError, Listed, RemoteSource},
};
use crate::store::{
    context,
    layout::{ReadAt, file_name},
    single_flight::Role,
    stuck_reads::{self, ReadsInFlight},
};

/// Ids of open remote files, for `single_flight`'s keys.
static NEXT_ID: AtomicU64 = AtomicU64::new(1 << 48);

/// One object, as listed at start.
pub struct RemoteFile {
    source: Arc<RemoteSource>,
    relative: String,
    /// Its URL, for the log.
    path: PathBuf,
    /// The table its reads count for.
    table: Arc<str>,
    listed: Listed,
    id: u64,
    in_flight: Arc<ReadsInFlight>,
}

impl RemoteFile {
    pub fn new(
        source: Arc<RemoteSource>,
        relative: String,
        path: PathBuf,
        listed: Listed,
        in_flight: Arc<ReadsInFlight>,
    ) -> RemoteFile {
        RemoteFile {
            table: stuck_reads::table_of(&file_name(&path)),
            source,
            relative,
            path,
            listed,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            in_flight,
        }
    }

    pub fn size(&self) -> u64 {
        self.listed.size
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A refusal naming the table if a GET of it has been out longer than
    /// `--stuck-read-secs` (see `store::stuck_reads`).
    fn refuse_if_suspect(&self) -> io::Result<()> {
        match self.in_flight.suspect(&self.table) {
            Some(suspect) => Err(self.in_flight.refusal(&suspect).into_io()),
            None => Ok(()),
        }
    }

    /// The error a failed GET becomes: logged with the URL, told to the
    /// client by table name only.
    fn failure(&self, err: GetError) -> io::Error {
        let (reason, retry_after) = match err {
            GetError::Refused(refused) => (
                format!(
                    "its remote source failed {} reads in a row and is not asked again for {:.1} s",
                    refused.failures,
                    refused.wait.as_secs_f64()
                ),
                refused.wait,
            ),
            GetError::Unavailable(detail) => {
                tracing::warn!(url = %self.path.display(), "GET failed: {detail}");
                (
                    "its remote source did not answer (timed out, or failed past the retries)"
                        .to_string(),
                    Duration::from_secs(1),
                )
            }
            GetError::Changed(detail) => {
                tracing::error!(url = %self.path.display(), "{detail}; restart the server to list the source again");
                (
                    format!(
                        "its object in the remote source changed since the server listed it at start ({detail}); not served until the server lists it again"
                    ),
                    Duration::from_secs(60),
                )
            }
        };
        SourceUnavailable {
            table: file_name(&self.path),
            reason,
            retry_after: retry_after.max(Duration::from_secs(1)),
        }
        .into_io()
    }

    /// `buf.len()` bytes at `offset` with one GET, or from a GET in flight
    /// whose range covers them (`single_flight`): two probes of a request
    /// often need one block at once.
    fn fetch(&self, buf: &mut [u8], offset: u64, hint: ReadHint) -> io::Result<()> {
        let range = offset..offset + buf.len() as u64;
        let mut failed = None;
        let patience = self.in_flight.limit();
        let (window, start, role) =
            self.source
                .flights
                .read_covering(self.id, range.clone(), patience, || {
                    let _reading = self.in_flight.begin(&self.table, hint);
                    stuck_reads::wait_while_stalled(&self.table);
                    context::count_get();
                    match self
                        .source
                        .get_range(&self.relative, &self.listed, range.clone())
                    {
                        Ok(bytes) => Some(Arc::new(bytes.to_vec())),
                        Err(err) => {
                            failed = Some(err);
                            None
                        }
                    }
                });
        match role {
            Role::GaveUp => return Err(self.in_flight.gave_up(&self.table, patience).into_io()),
            Role::Joined => self.source.metrics.record_joined(),
            Role::Read => {}
        }
        if let Some(err) = failed {
            return Err(self.failure(err));
        }
        let from = (offset - start) as usize;
        match window
            .as_deref()
            .and_then(|w| w.get(from..from + buf.len()))
        {
            Some(bytes) => {
                buf.copy_from_slice(bytes);
                Ok(())
            }
            // Joined a GET that failed: a GET of its own.
            None => {
                let _reading = self.in_flight.begin(&self.table, hint);
                context::count_get();
                let bytes = self
                    .source
                    .get_range(&self.relative, &self.listed, range)
                    .map_err(|err| self.failure(err))?;
                buf.copy_from_slice(&bytes);
                Ok(())
            }
        }
    }
}

impl RandomAccessFile for RemoteFile {
    fn read_at(&self, buf: &mut [u8], offset: u64, hint: ReadHint) -> io::Result<usize> {
        if offset >= self.listed.size {
            return Ok(0);
        }
        let len = buf.len().min((self.listed.size - offset) as usize);
        if context::refusing() {
            // Nothing of a remote table is in memory at this layer (the
            // chunk cache above keeps what is): every read is a GET, which
            // the async worker must not wait for. A table whose reads are
            // stuck fails here, and the probe with it (503).
            self.refuse_if_suspect()?;
            return Err(context::refuse());
        }
        self.refuse_if_suspect()?;
        self.fetch(&mut buf[..len], offset, hint)?;
        Ok(len)
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64, hint: ReadHint) -> io::Result<()> {
        let n = self.read_at(buf, offset, hint)?;
        if n < buf.len() {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "{}: the object ends at {} bytes (wanted {} bytes at offset {offset})",
                    file_name(&self.path),
                    self.listed.size,
                    buf.len()
                ),
            ));
        }
        Ok(())
    }
}

/// Positioned reads for the header parser (`store::layout::parse`), each
/// a GET of a whole aligned window kept for the next: a header's small
/// reads at neighbouring offsets cost a few GETs, not one each.
pub struct WindowedReader<'a> {
    file: &'a RemoteFile,
    window: u64,
    kept: std::sync::Mutex<Vec<(u64, Vec<u8>)>>,
}

impl<'a> WindowedReader<'a> {
    pub fn new(file: &'a RemoteFile) -> WindowedReader<'a> {
        WindowedReader {
            file,
            window: 256 << 10,
            kept: std::sync::Mutex::default(),
        }
    }
}

impl ReadAt for WindowedReader<'_> {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let mut done = 0;
        while done < buf.len() {
            let at = offset + done as u64;
            let start = at - at % self.window;
            let mut kept = crate::sync::lock(&self.kept);
            if !kept.iter().any(|(s, _)| *s == start) {
                let end = (start + self.window).min(self.file.size());
                if end <= at {
                    return Err(io::ErrorKind::UnexpectedEof.into());
                }
                let mut bytes = vec![0; (end - start) as usize];
                self.file
                    .read_exact_at(&mut bytes, start, ReadHint::Header)?;
                kept.push((start, bytes));
            }
            let (_, bytes) = kept.iter().find(|(s, _)| *s == start).expect("just kept");
            let from = (at - start) as usize;
            let take = (bytes.len() - from).min(buf.len() - done);
            if take == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            buf[done..done + take].copy_from_slice(&bytes[from..from + take]);
            done += take;
        }
        Ok(())
    }
}

/// A whole object read start to end (`tier build`, `verify` of a remote
/// source): one GET streamed through a small buffer, its size and ETag
/// checked against the listing.
pub struct ObjectReader {
    chunks: tokio::sync::mpsc::Receiver<Result<bytes::Bytes, String>>,
    current: bytes::Bytes,
    name: String,
}

impl ObjectReader {
    pub fn open(source: &Arc<RemoteSource>, relative: &str, listed: &Listed) -> ObjectReader {
        let (sender, chunks) = tokio::sync::mpsc::channel(8);
        let store = Arc::clone(source.store());
        let location = source.location(relative);
        let listed = listed.clone();
        source.bridge().handle().spawn(async move {
            use futures::StreamExt;
            use object_store::ObjectStoreExt;
            let result = match store.get(&location).await {
                Ok(result) => result,
                Err(err) => {
                    let _ = sender.send(Err(err.to_string())).await;
                    return;
                }
            };
            let e_tag = result.meta.e_tag.as_deref().map(super::source::bare_e_tag);
            let changed = result.meta.size != listed.size
                || matches!((&e_tag, &listed.e_tag), (Some(now), Some(then)) if now != then);
            if changed {
                let _ = sender
                    .send(Err(format!(
                        "the object changed since it was listed ({} bytes then, {} now)",
                        listed.size, result.meta.size
                    )))
                    .await;
                return;
            }
            let mut stream = result.into_stream();
            while let Some(chunk) = stream.next().await {
                let failed = chunk.is_err();
                if sender
                    .send(chunk.map_err(|err| err.to_string()))
                    .await
                    .is_err()
                    || failed
                {
                    return;
                }
            }
        });
        ObjectReader {
            chunks,
            current: bytes::Bytes::new(),
            name: relative.to_string(),
        }
    }
}

impl io::Read for ObjectReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.current.is_empty() {
            // Not `blocking_recv`: commands wait here inside the main
            // runtime's `block_on`, where tokio forbids it.
            match futures::executor::block_on(tokio::task::unconstrained(self.chunks.recv())) {
                Some(Ok(chunk)) => self.current = chunk,
                Some(Err(err)) => {
                    return Err(io::Error::other(format!("GET {}: {err}", self.name)));
                }
                None => return Ok(0),
            }
        }
        let n = buf.len().min(self.current.len());
        buf[..n].copy_from_slice(&self.current.split_to(n));
        Ok(n)
    }
}
