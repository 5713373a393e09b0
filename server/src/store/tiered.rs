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
    integrity::{BlockChecker, HASH_NAME, IntegrityError},
    manifest::{Manifest, prefix_path, sums_path},
    metrics::{self, Tier},
    pread::PreadFilesystem,
    verified_cache,
};

/// Where `zugzwang verify --init` keeps checksums for tables served without a
/// fast tier: a folder inside the table directory.
pub const INTEGRITY_SUBDIR: &str = ".zugzwang";

/// Reads tables from the slow directories, their prefixes from the fast one.
#[derive(Debug, Clone)]
pub struct TieredFilesystem {
    slow: PreadFilesystem,
    fast_dir: Option<PathBuf>,
    check_blocks: bool,
    cache_verified: bool,
}

impl TieredFilesystem {
    /// `fast_dir`: built by `zugzwang tier build`; without it, tables are read
    /// from the slow tier only, checked when `verify --init` recorded sums.
    /// `check_blocks: false` skips checksums (to measure what they cost).
    pub fn new(advise_random: bool, fast_dir: Option<PathBuf>, check_blocks: bool) -> Self {
        TieredFilesystem {
            slow: PreadFilesystem::new(advise_random),
            fast_dir,
            check_blocks,
            cache_verified: true,
        }
    }

    /// Whether blocks that passed their checksum are kept in memory (on by
    /// default; off only to measure what the cache buys).
    #[must_use]
    pub fn with_verified_cache(mut self, on: bool) -> Self {
        self.cache_verified = on;
        self
    }

    /// Bytes the kernel reads around a page-cache miss (see `store::pread`).
    #[must_use]
    pub fn with_read_around(mut self, bytes: u64) -> Self {
        self.slow = self.slow.with_read_around(bytes);
        self
    }

    /// What the fast tier (or the integrity folder) offers for one table.
    fn entry(&self, path: &Path, table: &str) -> Entry {
        let mut entry = Entry::default();
        let dirs = self
            .fast_dir
            .iter()
            .cloned()
            .chain(path.parent().map(|p| p.join(INTEGRITY_SUBDIR)));
        let mut found = None;
        for dir in dirs {
            match Manifest::load(&dir, table) {
                Ok(Some(manifest)) => {
                    found = Some((dir, manifest));
                    break;
                }
                Ok(None) => {}
                Err(err) => {
                    fallback(table, &err.to_string());
                    return entry;
                }
            }
        }
        let Some((dir, manifest)) = found else {
            if self.fast_dir.is_some() {
                fallback(
                    table,
                    "no prefix in the fast tier; run `zugzwang tier build`",
                );
            }
            return entry;
        };
        let meta = match fs::metadata(path) {
            Ok(meta) => meta,
            Err(err) => {
                fallback(table, &format!("cannot stat the table: {err}"));
                return entry;
            }
        };
        let stale = !manifest.matches_source(&meta);
        if stale {
            fallback(table, &manifest.staleness(&meta));
            // A table of a given name has one canonical content, so a copy
            // of the same size must still match the recorded checksums; one
            // that does not is damaged, and reads of it fail instead of
            // answering wrongly. A different size cannot be checked at all.
            if meta.len() != manifest.source_size {
                return entry;
            }
        }
        if self.check_blocks {
            if manifest.hash != HASH_NAME {
                fallback(
                    table,
                    &format!(
                        "checksums use {} (expected {HASH_NAME}); rebuild the tier",
                        manifest.hash
                    ),
                );
                return entry;
            }
            let sums = BlockChecker::open(
                &sums_path(&dir, table),
                manifest.block_size,
                manifest.source_size,
            );
            match sums {
                Some(sums) => entry.sums = Some(Arc::new(sums)),
                None => {
                    fallback(
                        table,
                        "the block checksums are missing or damaged; rebuild the tier",
                    );
                    return entry;
                }
            }
        }
        if stale || manifest.fast_len == 0 {
            return entry;
        }
        let prefix = prefix_path(&dir, table);
        let size = fs::metadata(&prefix).map(|m| m.len());
        match size {
            Ok(size) if size == manifest.fast_len => match self.slow.open(&prefix) {
                Ok(file) => {
                    entry.prefix = Some(file);
                    entry.fast_len = manifest.fast_len;
                }
                Err(err) => fallback(table, &format!("cannot open the prefix: {err}")),
            },
            Ok(size) => fallback(
                table,
                &format!(
                    "the prefix has {size} bytes, the manifest says {}; rebuild the tier",
                    manifest.fast_len
                ),
            ),
            Err(err) => fallback(table, &format!("cannot read the prefix: {err}")),
        }
        entry
    }
}

#[derive(Default)]
struct Entry {
    prefix: Option<Box<dyn RandomAccessFile>>,
    fast_len: u64,
    sums: Option<Arc<BlockChecker>>,
}

/// Counts and logs (once per table) a table served without its prefix.
fn fallback(table: &str, reason: &str) {
    if metrics::global().record_fallback(table, reason) {
        tracing::warn!("{table}: serving from the slow tier only: {reason}");
    }
}

impl Filesystem for TieredFilesystem {
    fn regular_file_size(&self, path: &Path) -> io::Result<u64> {
        self.slow.regular_file_size(path)
    }

    fn read_dir(&self, path: &Path) -> io::Result<Vec<PathBuf>> {
        self.slow.read_dir(path)
    }

    fn open(&self, path: &Path) -> io::Result<Box<dyn RandomAccessFile>> {
        let slow = self.slow.open(path)?;
        let file_size = fs::metadata(path)?.len();
        let table: Arc<str> = path
            .file_name()
            .map_or_else(
                || path.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            )
            .into();
        let entry = self.entry(path, &table);
        Ok(Box::new(TieredFile {
            path: path.to_path_buf(),
            table,
            file_size,
            slow,
            prefix_ok: AtomicBool::new(entry.prefix.is_some()),
            prefix: entry.prefix,
            fast_len: entry.fast_len,
            sums: entry.sums,
            cache_key: if self.cache_verified {
                verified_cache::file_key()
            } else {
                0
            },
        }))
    }
}

/// One open table.
struct TieredFile {
    path: PathBuf,
    table: Arc<str>,
    file_size: u64,
    slow: Box<dyn RandomAccessFile>,
    prefix: Option<Box<dyn RandomAccessFile>>,
    /// Bytes `0..fast_len` are in the prefix file.
    fast_len: u64,
    /// Cleared when the prefix turns out damaged or unreadable.
    prefix_ok: AtomicBool,
    sums: Option<Arc<BlockChecker>>,
    /// This open file's key in the verified-block cache; 0: not cached.
    cache_key: u64,
}

thread_local! {
    /// Reused buffer for reads widened to whole checksum blocks.
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

impl TieredFile {
    fn fast_end(&self) -> u64 {
        if self.prefix.is_some() && self.prefix_ok.load(Ordering::Relaxed) {
            self.fast_len
        } else {
            0
        }
    }

    fn read_tier(&self, tier: Tier, buf: &mut [u8], offset: u64, hint: ReadHint) -> io::Result<()> {
        let file = match (tier, &self.prefix) {
            (Tier::Fast, Some(prefix)) => prefix,
            _ => &self.slow,
        };
        let started = Instant::now();
        let result = file.read_exact_at(buf, offset, hint);
        metrics::global().record_read(
            &self.table,
            tier,
            hint,
            offset,
            buf.len(),
            started.elapsed(),
        );
        result
    }

    fn abandon_prefix(&self, reason: &str) {
        self.prefix_ok.store(false, Ordering::Relaxed);
        fallback(&self.table, reason);
    }

    fn integrity_error(&self, offset: u64, sums: &BlockChecker) -> io::Error {
        metrics::global().record_integrity_failure(&self.table);
        let err = IntegrityError {
            path: self.path.clone(),
            offset,
            block_size: sums.block_size(),
        };
        tracing::error!("{err}");
        err.into_io()
    }

    /// Reads `buf.len()` bytes at `offset` (within the file), from the fast
    /// tier below `fast_end` and the slow tier above, checking whole blocks
    /// when checksums are known.
    fn read_range(&self, buf: &mut [u8], offset: u64, hint: ReadHint) -> io::Result<()> {
        let split = self.fast_end().clamp(offset, offset + buf.len() as u64);
        let (fast, slow) = buf.split_at_mut((split - offset) as usize);
        if !fast.is_empty() {
            let outcome = self
                .read_tier(Tier::Fast, fast, offset, hint)
                .map_err(|e| e.to_string());
            let outcome = outcome.and_then(|()| match &self.sums {
                Some(sums) => sums.check(offset, fast).map_err(|bad| {
                    format!("the prefix block at offset {bad} does not match its checksum")
                }),
                None => Ok(()),
            });
            if let Err(reason) = outcome {
                self.abandon_prefix(&reason);
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
            sums.check(offset, buf)
                .map_err(|bad| self.integrity_error(bad, sums))?;
        }
        Ok(())
    }
}

impl RandomAccessFile for TieredFile {
    fn read_at(&self, buf: &mut [u8], offset: u64, hint: ReadHint) -> io::Result<usize> {
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
        let block_size = sums.block_size() as usize;
        let first_block = start / sums.block_size() as u64;
        SCRATCH.with(|scratch| {
            let mut scratch = scratch.borrow_mut();
            scratch.resize((end - start) as usize, 0);
            let cache = verified_cache::global();
            let cached = self.cache_key != 0
                && scratch
                    .chunks_mut(block_size)
                    .enumerate()
                    .all(|(i, block)| cache.get(self.cache_key, first_block + i as u64, block));
            if cached {
                metrics::global().record_read(
                    &self.table,
                    Tier::Cache,
                    hint,
                    start,
                    scratch.len(),
                    Duration::ZERO,
                );
            } else {
                self.read_range(&mut scratch, start, hint)?;
                if self.cache_key != 0 {
                    for (i, block) in scratch.chunks(block_size).enumerate() {
                        cache.put(self.cache_key, first_block + i as u64, block);
                    }
                }
            }
            let from = (offset - start) as usize;
            buf.copy_from_slice(&scratch[from..from + len]);
            Ok(len)
        })
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64, hint: ReadHint) -> io::Result<()> {
        let n = self.read_at(buf, offset, hint)?;
        if n < buf.len() {
            // Past the end: let the pread layer explain (truncated or replaced file).
            return self
                .slow
                .read_exact_at(&mut buf[n..], offset + n as u64, hint);
        }
        Ok(())
    }
}
