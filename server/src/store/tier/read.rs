//! Table files split over two tiers, with every read checked.
//!
//! A lookup walks a table's sparse index, then its block-length list, then
//! reads one compressed data block. The first two sit in the table's prefix,
//! kept on fast storage by `zugzwang tier build`; the data block stays on the
//! slow disks. So a lookup costs at most one slow read, hot or cold.
//!
//! Nothing in the fast tier is trusted: a prefix is used only while its
//! manifest matches the source file (size and modification time), and every
//! block read from either tier is checked against the checksums recorded when
//! the tier was built. A prefix that is missing, stale or damaged is
//! abandoned for its table (logged once, counted) and the slow tier answers;
//! a damaged block on the slow tier is an error for that read, never a wrong
//! value.

use std::{
    cell::RefCell,
    fs, io,
    path::{Path, PathBuf},
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

use shakmaty_syzygy::filesystem::{Filesystem, RandomAccessFile, ReadHint};

use super::{
    integrity::{BlockChecker, HASH_NAME, IntegrityError, SumsError},
    manifest::{
        INTEGRITY_SUBDIR, Manifest, ManifestError, STATE_CHECKSUMS_SUBDIR, Stamp, prefix_path,
        sums_path,
    },
};
use crate::store::{
    context,
    disk_reads::DiskReads,
    handles::HandlePool,
    layout::file_name,
    pread::{PreadFile, PreadFilesystem},
    quarantine::{Identity, Quarantine, Watch},
    read_counters::{ReadMetrics, Tier},
    remote::{self, RemoteSources, file::RemoteFile},
    stuck_reads::{self, ReadsInFlight},
    table_error::{self, TableIoError},
};

/// Where a tiered store reads from and whether it checks; the rest is set
/// with the `with_*` methods.
#[derive(Debug, Clone)]
pub struct TierOptions {
    /// Built by `zugzwang tier build`; without it, tables are read from the
    /// slow tier only, checked where `verify --init` recorded sums.
    pub fast_dir: Option<PathBuf>,
    /// Hint random access to the kernel (POSIX_FADV_RANDOM).
    pub advise_random: bool,
    /// Check reads against recorded checksums (off only to measure their cost).
    pub check_blocks: bool,
}

impl Default for TierOptions {
    /// Slow tier only, checked, no access hint.
    fn default() -> Self {
        TierOptions {
            fast_dir: None,
            advise_random: false,
            check_blocks: true,
        }
    }
}

/// Reads tables from the slow directories (or remote sources), their
/// prefixes from the fast one.
#[derive(Clone)]
pub struct TieredFilesystem {
    /// Local files: the slow tier's tables on disk, and the fast tier's.
    slow: PreadFilesystem,
    /// The slow tier's tables that are in an object store or on an HTTP
    /// mirror (`store::remote`), named by URL.
    remote: Option<Arc<RemoteSources>>,
    fast_dir: Option<PathBuf>,
    check_blocks: bool,
    allow_unchecked: bool,
    /// Checksums recorded for tables of read-only directories
    /// (`--state-dir`), searched after the fast tier and `DIR/.zugzwang`.
    state_dir: Option<PathBuf>,
    quarantine: Arc<Quarantine>,
    /// This store's read counters, shared with the files opened here.
    metrics: Arc<ReadMetrics>,
}

impl TieredFilesystem {
    pub fn new(options: TierOptions) -> Self {
        TieredFilesystem {
            slow: PreadFilesystem::new().with_advise_random(options.advise_random),
            remote: None,
            fast_dir: options.fast_dir,
            check_blocks: options.check_blocks,
            allow_unchecked: false,
            state_dir: None,
            quarantine: Arc::default(),
            metrics: Arc::default(),
        }
    }

    /// Bytes the kernel reads around a page-cache miss (see `store::pread`).
    #[must_use]
    pub fn with_read_around(mut self, bytes: u64) -> Self {
        self.slow = self.slow.with_read_around(bytes);
        self
    }

    /// Serve tables whose bytes were never checked against a published
    /// digest (`--allow-unchecked`) instead of refusing them.
    #[must_use]
    pub fn with_allow_unchecked(mut self, on: bool) -> Self {
        self.allow_unchecked = on;
        self
    }

    /// Where checksums and quarantine records of tables in read-only
    /// directories are kept (`--state-dir`).
    #[must_use]
    pub fn with_state_dir(mut self, dir: Option<PathBuf>) -> Self {
        self.quarantine = Arc::new(Quarantine::new(dir.clone()).with_remote(self.remote.clone()));
        self.state_dir = dir;
        self
    }

    /// Tables named by URL are read from these remote sources.
    #[must_use]
    pub fn with_remote(mut self, remote: Option<Arc<RemoteSources>>) -> Self {
        self.quarantine =
            Arc::new(Quarantine::new(self.state_dir.clone()).with_remote(remote.clone()));
        self.remote = remote;
        self
    }

    /// The remote sources, if any.
    pub fn remote(&self) -> Option<&Arc<RemoteSources>> {
        self.remote.as_ref()
    }

    /// Table files kept open at most (see `store::handles`).
    #[must_use]
    pub fn with_handle_budget(mut self, handles: usize) -> Self {
        self.slow = self.slow.with_handles(HandlePool::new(handles));
        self
    }

    pub fn handles(&self) -> &Arc<HandlePool> {
        self.slow.handles()
    }

    /// This store's read counters, for `/metrics` and the layers above.
    pub fn metrics(&self) -> &Arc<ReadMetrics> {
        &self.metrics
    }

    /// The reads that waited for the disk (see `store::disk_reads`).
    pub fn disk_reads(&self) -> &Arc<DiskReads> {
        self.slow.disk_reads()
    }

    /// A table with a read out this long is suspect (see `store::stuck_reads`).
    #[must_use]
    pub fn with_stuck_read(mut self, limit: Duration) -> Self {
        self.slow = self.slow.with_stuck_read(limit);
        self
    }

    /// The reads out on the disk now, of both tiers.
    pub fn in_flight(&self) -> &Arc<ReadsInFlight> {
        self.slow.in_flight()
    }

    pub fn fast_dir(&self) -> Option<&Path> {
        self.fast_dir.as_deref()
    }

    /// Whether reads are checked against recorded checksums at all.
    pub fn checks_blocks(&self) -> bool {
        self.check_blocks
    }

    pub fn allows_unchecked(&self) -> bool {
        self.allow_unchecked || !self.check_blocks
    }

    /// The tables found damaged, shared with the scrub and `/metrics`.
    pub fn quarantine(&self) -> &Arc<Quarantine> {
        &self.quarantine
    }

    /// The directories searched for a table's manifest, in order (for a
    /// remote source's table, the local ones only).
    pub fn checksum_dirs(&self, table_dir: &Path) -> Vec<PathBuf> {
        let beside = (!remote::is_remote(table_dir)).then(|| table_dir.join(INTEGRITY_SUBDIR));
        self.fast_dir
            .iter()
            .cloned()
            .chain(beside)
            .chain(
                self.state_dir
                    .iter()
                    .map(|dir| dir.join(STATE_CHECKSUMS_SUBDIR)),
            )
            .collect()
    }

    /// The first manifest recorded for the table, with its directory. Only
    /// "none recorded" is `Ok(None)`; a manifest that cannot be read (no
    /// descriptor left, no permission, garbage) is an error, so a passing
    /// problem never leaves a table unchecked.
    fn find_manifest(&self, path: &Path, table: &str) -> io::Result<Option<(PathBuf, Manifest)>> {
        let table_dir = path.parent().unwrap_or(Path::new("."));
        for dir in self.checksum_dirs(table_dir) {
            match Manifest::load(&dir, table) {
                Ok(Some(manifest)) => return Ok(Some((dir, manifest))),
                Ok(None) => {}
                Err(ManifestError::Io { source, .. }) => {
                    return Err(TableIoError::because(
                        path,
                        "cannot read its checksum manifest, so it cannot be checked",
                        source,
                    ));
                }
                Err(ManifestError::Invalid { detail, .. }) => {
                    return Err(TableIoError::logged(
                        path,
                        io::ErrorKind::InvalidData,
                        format!(
                            "its checksum manifest is not valid ({detail}); rebuild it with `zugzwang tier build` or `zugzwang verify --init`"
                        ),
                    ));
                }
            }
        }
        Ok(None)
    }

    /// What the fast tier (or the integrity folder) offers for one table;
    /// an error when checksums were recorded but cannot be used.
    fn entry(&self, path: &Path, table: &str, meta: &Stamp) -> io::Result<Entry> {
        let mut entry = Entry::default();
        let Some((dir, manifest)) = self.find_manifest(path, table)? else {
            return self.unchecked(path, table).map(|()| entry);
        };
        let stale = !manifest.matches_source(meta);
        if stale {
            // A table of a given name has one canonical content, so a copy
            // of the same size must still match the recorded checksums; one
            // that does not is damaged, and reads of it fail instead of
            // answering wrongly. A different size is not that table.
            if meta.size != manifest.source_size {
                return Err(TableIoError::logged(
                    path,
                    io::ErrorKind::InvalidData,
                    format!(
                        "its size changed since its checksums were recorded ({} → {} bytes), so it is not the table they vouch for; replace it with a good copy, or record its checksums again",
                        manifest.source_size, meta.size
                    ),
                ));
            }
            // Checksums alone (no prefix) stay good for any copy of the
            // table; only a prefix is lost.
            if manifest.fast_len > 0 {
                self.fallback(table, &manifest.staleness(meta));
            }
        }
        if self.check_blocks {
            entry.sums = Some(Arc::new(self.open_sums(path, &dir, table, &manifest)?));
        }
        if stale || manifest.fast_len == 0 {
            return Ok(entry);
        }
        let prefix = prefix_path(&dir, table);
        match self.slow.open_pread(&prefix) {
            Ok(file) if file.size_at_open() == manifest.fast_len => {
                entry.prefix = Some(file);
                entry.fast_len = manifest.fast_len;
            }
            Ok(file) => self.fallback(
                table,
                &format!(
                    "the prefix has {} bytes, the manifest says {}; rebuild the tier",
                    file.size_at_open(),
                    manifest.fast_len
                ),
            ),
            // A passing shortage: fail this open and try again later rather
            // than lose the prefix until a restart.
            Err(err) if table_error::is_out_of_descriptors(&err) => return Err(err),
            Err(err) => self.fallback(table, &format!("cannot open the prefix: {err}")),
        }
        Ok(entry)
    }

    /// A table with no checksums recorded: its bytes were never checked
    /// against a published digest, so it is refused unless the operator
    /// chose `--allow-unchecked` (the start-up survey said what to run).
    fn unchecked(&self, path: &Path, table: &str) -> io::Result<()> {
        if !self.allows_unchecked() {
            return Err(TableIoError::never_checked(path));
        }
        if self.fast_dir.is_some() {
            self.fallback(
                table,
                "no prefix in the fast tier; run `zugzwang tier build`",
            );
        }
        Ok(())
    }

    fn open_sums(
        &self,
        path: &Path,
        dir: &Path,
        table: &str,
        manifest: &Manifest,
    ) -> io::Result<BlockChecker> {
        if manifest.hash != HASH_NAME {
            return Err(TableIoError::logged(
                path,
                io::ErrorKind::InvalidData,
                format!(
                    "its checksums use {} (expected {HASH_NAME}); record them again with `zugzwang tier build` or `zugzwang verify --init`",
                    manifest.hash
                ),
            ));
        }
        let sums = BlockChecker::open(
            self.handles(),
            &sums_path(dir, table),
            manifest.block_size,
            manifest.source_size,
        );
        sums.map_err(|err| match err {
            SumsError::Io(io) => TableIoError::because(path, "cannot read its block checksums", io),
            other => TableIoError::logged(path, io::ErrorKind::InvalidData, other.to_string()),
        })
    }

    /// Opens a table with whatever checks and prefix it has.
    fn open_table(&self, path: &Path, meta: &Stamp) -> io::Result<TieredFile> {
        let slow = match &self.remote {
            Some(remote) if remote::is_remote(path) => {
                SlowFile::Remote(remote.open(path, self.in_flight())?)
            }
            _ => SlowFile::Local(self.slow.open_pread(path)?),
        };
        let table: Arc<str> = file_name(path).into();
        let entry = self.entry(path, &table, meta)?;
        Ok(TieredFile {
            path: path.to_path_buf(),
            table,
            file_size: meta.size,
            slow,
            prefix_ok: AtomicBool::new(entry.prefix.is_some()),
            prefix: entry.prefix,
            fast_len: entry.fast_len,
            sums: entry.sums,
            quarantine: Arc::clone(&self.quarantine),
            watch: Watch::new(Arc::clone(&self.quarantine), path),
            metrics: Arc::clone(&self.metrics),
        })
    }

    /// Counts and logs (once per table) a table served without its prefix.
    fn fallback(&self, table: &str, reason: &str) {
        log_fallback(&self.metrics, table, reason);
    }
}

#[derive(Default)]
struct Entry {
    prefix: Option<PreadFile>,
    fast_len: u64,
    sums: Option<Arc<BlockChecker>>,
}

fn log_fallback(metrics: &ReadMetrics, table: &str, reason: &str) {
    if metrics.record_fallback(table, reason) {
        tracing::warn!("{table}: serving from the slow tier only: {reason}");
    }
}

impl TieredFilesystem {
    /// The remote sources, if `path` names a table or directory of one.
    fn remote_for(&self, path: &Path) -> Option<&RemoteSources> {
        self.remote.as_deref().filter(|_| remote::is_remote(path))
    }

    /// The version of the table at `path` and its identity for the
    /// quarantine: from the disk, or from its source's listing.
    fn stat(&self, path: &Path) -> io::Result<(Stamp, Identity)> {
        if let Some(remote) = self.remote_for(path) {
            let stamp = remote
                .stat(path)
                .map_err(|err| TableIoError::because(path, "not in its remote source", err))?
                .stamp();
            return Ok((stamp, Identity::of_remote(path, stamp)));
        }
        let meta =
            fs::metadata(path).map_err(|err| TableIoError::because(path, "cannot stat", err))?;
        Ok((Stamp::of(&meta), Identity::of(&meta)))
    }
}

impl Filesystem for TieredFilesystem {
    fn regular_file_size(&self, path: &Path) -> io::Result<u64> {
        match self.remote_for(path) {
            Some(remote) => remote.stat(path).map(|listed| listed.size),
            None => self.slow.regular_file_size(path),
        }
    }

    fn read_dir(&self, path: &Path) -> io::Result<Vec<PathBuf>> {
        match self.remote_for(path) {
            Some(remote) => remote.read_dir(path),
            None => self.slow.read_dir(path),
        }
    }

    /// Fails (and shakmaty-syzygy asks again on the next probe) whenever
    /// the table cannot be opened with the checks recorded for it.
    fn open(&self, path: &Path) -> io::Result<Box<dyn RandomAccessFile>> {
        if context::refusing() {
            return Err(context::refuse_open());
        }
        // A stat and an open reach the disk (and hang on a hung mount): the
        // table is being opened, as its header reads say after them.
        let _opening = self
            .in_flight()
            .begin(&stuck_reads::table_of(&file_name(path)), ReadHint::Header);
        let (stamp, identity) = self.stat(path)?;
        if let Some(refused) = self.quarantine.refusal(path, &identity) {
            return Err(refused);
        }
        let file = self.handles().with_room(|| self.open_table(path, &stamp))?;
        Ok(Box::new(file))
    }
}

/// Where a table's data blocks are: a file on disk or an object of a
/// remote source.
enum SlowFile {
    Local(PreadFile),
    Remote(RemoteFile),
}

impl SlowFile {
    fn as_file(&self) -> &dyn RandomAccessFile {
        match self {
            SlowFile::Local(file) => file,
            SlowFile::Remote(file) => file,
        }
    }
}

/// One open table.
struct TieredFile {
    path: PathBuf,
    table: Arc<str>,
    file_size: u64,
    slow: SlowFile,
    prefix: Option<PreadFile>,
    /// Bytes `0..fast_len` are in the prefix file.
    fast_len: u64,
    /// Cleared when the prefix turns out damaged or unreadable.
    prefix_ok: AtomicBool,
    sums: Option<Arc<BlockChecker>>,
    /// Where a block that fails its checksum is recorded.
    quarantine: Arc<Quarantine>,
    /// Refuses reads once the table is quarantined (also by the scrub).
    watch: Watch,
    metrics: Arc<ReadMetrics>,
}

thread_local! {
    /// Reused buffer for reads widened to whole checksum blocks.
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// The most [`SCRATCH`] keeps between reads: more than a DTM block or a
/// Syzygy data block widened, so the common reads reuse it; a rarer larger
/// read (an index part) gives its buffer back rather than keeping it on
/// every thread that made one.
const SCRATCH_KEPT: usize = 1 << 20;

impl TieredFile {
    fn fast_end(&self) -> u64 {
        if self.prefix.is_some() && self.prefix_ok.load(Ordering::Relaxed) {
            self.fast_len
        } else {
            0
        }
    }

    fn read_tier(&self, tier: Tier, buf: &mut [u8], offset: u64, hint: ReadHint) -> io::Result<()> {
        let file: &dyn RandomAccessFile = match (tier, &self.prefix) {
            (Tier::Fast, Some(prefix)) => prefix,
            _ => self.slow.as_file(),
        };
        // A read that refuses to wait is a page-cache copy of a microsecond:
        // timing it would cost about as much as the read (recorded as 0).
        let started = (!context::refusing()).then(Instant::now);
        let result = file.read_exact_at(buf, offset, hint);
        if result.is_err() && context::refused() {
            // Not a read: the probe makes it again on the blocking pool.
            return result;
        }
        let took = started.map_or(Duration::ZERO, |started| started.elapsed());
        self.metrics
            .record_read(&self.table, tier, hint, offset, buf.len(), took);
        result
    }

    fn abandon_prefix(&self, reason: &str) {
        self.prefix_ok.store(false, Ordering::Relaxed);
        log_fallback(&self.metrics, &self.table, reason);
    }

    /// A damaged block: counted, logged with the path, and the table
    /// quarantined (durably): no later read of it is trusted until it is
    /// replaced or verifies clean.
    fn integrity_error(&self, offset: u64, sums: &BlockChecker) -> io::Error {
        self.metrics.record_integrity_failure(&self.table);
        let err = IntegrityError {
            path: self.path.clone(),
            offset,
            block_size: sums.block_size(),
        };
        tracing::error!(path = %self.path.display(), "{err}");
        // A record that cannot be written still holds for this process
        // (and the failure is logged there).
        let reason = format!(
            "the {}-byte block at offset {offset} does not match its checksum",
            sums.block_size()
        );
        let _ = self
            .quarantine
            .record(&self.path, "a block check on read", &reason);
        err.into_io()
    }

    /// Reads `buf.len()` bytes at `offset` (within the file), from the fast
    /// tier below `fast_end` and the slow tier above, checking whole blocks
    /// when checksums are known.
    fn read_range(&self, buf: &mut [u8], offset: u64, hint: ReadHint) -> io::Result<()> {
        let split = self.fast_end().clamp(offset, offset + buf.len() as u64);
        let (fast, slow) = buf.split_at_mut((split - offset) as usize);
        if !fast.is_empty() {
            let outcome = match self.read_tier(Tier::Fast, fast, offset, hint) {
                Err(err) if context::refused() => return Err(err),
                // The table is suspect (a read of it is stuck): so is its
                // prefix, and the slow tier is not asked either.
                Err(err) if stuck_reads::stuck_read(&err).is_some() => return Err(err),
                // No descriptor to reopen the prefix with: a passing shortage,
                // not a reason to give the prefix up.
                Err(err) if table_error::is_out_of_descriptors(&err) => Err(None),
                Err(err) => Err(Some(err.to_string())),
                Ok(()) => match &self.sums {
                    Some(sums) => sums.check(offset, fast)?.map_err(|bad| {
                        Some(format!(
                            "the prefix block at offset {bad} does not match its checksum"
                        ))
                    }),
                    None => Ok(()),
                },
            };
            if let Err(reason) = outcome {
                if let Some(reason) = reason {
                    self.abandon_prefix(&reason);
                }
                self.read_slow(fast, offset, hint)?;
            }
        }
        if !slow.is_empty() {
            self.read_slow(slow, split, hint)?;
        }
        Ok(())
    }

    fn read_slow(&self, buf: &mut [u8], offset: u64, hint: ReadHint) -> io::Result<()> {
        self.read_tier(Tier::Slow, buf, offset, hint)?;
        if let Some(sums) = &self.sums {
            sums.check(offset, buf)?
                .map_err(|bad| self.integrity_error(bad, sums))?;
        }
        Ok(())
    }
}

impl RandomAccessFile for TieredFile {
    fn read_at(&self, buf: &mut [u8], offset: u64, hint: ReadHint) -> io::Result<usize> {
        self.watch.check()?;
        if offset >= self.file_size {
            return Ok(0);
        }
        let len = buf.len().min((self.file_size - offset) as usize);
        let buf = &mut buf[..len];
        let Some(sums) = &self.sums else {
            self.read_range(buf, offset, hint)?;
            return Ok(len);
        };
        let (start, end) = sums.widen(offset, len);
        SCRATCH.with(|scratch| {
            let mut scratch = scratch.borrow_mut();
            scratch.resize((end - start) as usize, 0);
            let read = self.read_range(&mut scratch, start, hint);
            if read.is_ok() {
                let from = (offset - start) as usize;
                buf.copy_from_slice(&scratch[from..from + len]);
            }
            if scratch.capacity() > SCRATCH_KEPT {
                *scratch = Vec::new();
            }
            read.map(|()| len)
        })
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64, hint: ReadHint) -> io::Result<()> {
        let n = self.read_at(buf, offset, hint)?;
        if n < buf.len() {
            // Past the end: let the pread layer explain (truncated or replaced file).
            return self
                .slow
                .as_file()
                .read_exact_at(&mut buf[n..], offset + n as u64, hint);
        }
        Ok(())
    }
}
