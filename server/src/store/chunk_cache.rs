//! Table files kept in process memory, in chunks: the small, hot parts of
//! every table (headers, DTZ maps, sparse indexes and block-length lists)
//! in the index cache, and recently read data blocks in the data cache.
//!
//! A lookup reads the table's sparse index, then its block-length list,
//! then one data block. The first two are a few percent of a table's bytes
//! (2.2 % of the 3-4-5 piece set) but most of its reads; when tables are
//! larger than RAM the page cache keeps them no better than the data, and
//! each one it lost costs a seek. Kept here, a lookup costs at most its data
//! block (measured in server/docs/benchmarks.md, "Tables larger than RAM: where
//! the disk reads go").
//!
//! This is the fast tier's idea (`store::tier`) with RAM as the fast
//! storage, and needs no build step: the index is learnt as it is read, in
//! chunks of [`CHUNK`] bytes, the coldest dropped beyond a byte
//! budget (`serve --index-cache-mb`, by default a share of the memory
//! budget, `engine::memory_budget`).
//!
//! Data blocks are the bulk of a table, so they are not kept beside the
//! index: they go to a second, small cache of their own (`serve
//! --data-cache-mb`), which the index never competes with. On a hot page
//! cache every data read that reaches the store costs two system calls
//! (`cachestat` and an `RWF_NOWAIT` read, see `store::pread`), a fifth of a
//! request's CPU (server/docs/benchmarks.md, "Probing without a hand-off");
//! an explorer's requests revisit the same blocks, and a hit here costs a
//! lock and a copy.
//!
//! It sits above the tiered store, so a chunk enters only after the tier's
//! checksums passed, and errors (a truncated table, no descriptor left)
//! come from the layers below unchanged, naming their table.

use std::{
    io,
    path::{Path, PathBuf},
    sync::{
        Arc, RwLock, RwLockReadGuard, RwLockWriteGuard,
        atomic::{AtomicU64, Ordering::Relaxed},
    },
    time::Duration,
};

use quick_cache::{Weighter, unsync};
use shakmaty_syzygy::filesystem::{Filesystem, RandomAccessFile, ReadHint};

use super::{
    context,
    layout::file_name,
    quarantine::{Quarantine, Watch},
    read_counters::{ReadMetrics, Tier},
};
use crate::{exposition::Exposition, sync};

/// Bytes kept per entry: a checksum block of the tier and a page of the
/// page cache, and enough for a lookup's 6-byte index entry and 32 bytes of
/// block lengths with their neighbours.
pub const CHUNK: u64 = 4096;

/// Locks are per shard, so probing threads rarely wait for each other.
const SHARDS: usize = 16;

/// What an entry costs besides its bytes (key, the cache's links, allocation),
/// counted against the budget so that the budget bounds memory.
const ENTRY_OVERHEAD: usize = 96;

/// The chunk of one open table file.
type Key = (u64, u64);

static NEXT_FILE: AtomicU64 = AtomicU64::new(1);

/// One cache's figures for `/metrics`, and the words `/metrics` names them with.
struct Figures {
    /// `zugzwang_{kind}_cache_*`.
    kind: &'static str,
    /// What the cache holds, for the help texts.
    holds: &'static str,
    /// The flag that bounds it.
    flag: &'static str,
    hits: AtomicU64,
    loads: AtomicU64,
    /// The budget asked for.
    capacity: u64,
}

impl Figures {
    fn new(kind: &'static str, holds: &'static str, flag: &'static str, capacity: u64) -> Figures {
        Figures {
            kind,
            holds,
            flag,
            hits: AtomicU64::new(0),
            loads: AtomicU64::new(0),
            capacity,
        }
    }
}

/// A chunk weighs its bytes and what keeping it costs besides.
#[derive(Clone)]
struct ChunkBytes;

impl Weighter<Key, Box<[u8]>> for ChunkBytes {
    fn weight(&self, _key: &Key, bytes: &Box<[u8]>) -> u64 {
        (bytes.len() + ENTRY_OVERHEAD) as u64
    }
}

/// One shard: quick_cache's map and eviction order, behind our lock.
type Shard = unsync::Cache<Key, Box<[u8]>, ChunkBytes>;

/// Chunks of table files, within a byte budget.
///
/// Each shard is a quick_cache (its non-concurrent one) behind a
/// read-write lock. Hits take the read lock, mark the chunk and copy from
/// it in place; only inserts write. Most lookups hit (the index cache
/// almost never evicts, and ~200 index and ~85 data lookups make one
/// request): a least-recently-used list reordered on every hit, under an
/// exclusive lock, was 4 % of a hot request's CPU (server/docs/benchmarks.md,
/// "Probing without a hand-off"). quick_cache's order keeps what is read
/// again as LRU would, and lets a chunk read once go first.
///
/// Why not quick_cache's concurrent cache, as the server's other caches
/// are: its `get` hands out a clone of the value, here a reference-counted
/// chunk, so every hit writes a counter that all cores share. Measured
/// with perf on hot requests, this cache's code took 10.6-11.1 % of the
/// server's CPU that way, against 4.5-7.6 % for the hand-written clock
/// lists it replaced and 5.1-6.6 % as it is here (server/docs/benchmarks.md,
/// "One cache library"). Behind our own lock a hit reads the
/// chunk where it lies.
pub struct ChunkCache {
    shards: Box<[RwLock<Shard>]>,
    shard_capacity: u64,
    figures: Figures,
}

impl ChunkCache {
    /// An index cache of at most `capacity` bytes (0: keeps nothing).
    pub fn for_index(capacity: usize) -> ChunkCache {
        ChunkCache::counted_in(
            capacity,
            Figures::new(
                "index",
                "table indexes (chunks of headers, sparse indexes and block lengths)",
                "--index-cache-mb",
                capacity as u64,
            ),
        )
    }

    /// A data-block cache of at most `capacity` bytes (0: keeps nothing).
    pub fn for_data(capacity: usize) -> ChunkCache {
        ChunkCache::counted_in(
            capacity,
            Figures::new(
                "data",
                "table data blocks",
                "--data-cache-mb",
                capacity as u64,
            ),
        )
    }

    fn counted_in(capacity: usize, figures: Figures) -> ChunkCache {
        let shard_capacity = (capacity / SHARDS) as u64;
        let chunks = (shard_capacity / (CHUNK + ENTRY_OVERHEAD as u64)).max(1);
        let shard = || {
            RwLock::new(Shard::with_weighter(
                usize::try_from(chunks).unwrap_or(usize::MAX),
                shard_capacity,
                ChunkBytes,
            ))
        };
        ChunkCache {
            shards: (0..SHARDS).map(|_| shard()).collect(),
            shard_capacity,
            figures,
        }
    }

    pub fn capacity(&self) -> usize {
        usize::try_from(self.shard_capacity).unwrap_or(usize::MAX) * SHARDS
    }

    /// This cache's figures, for `/metrics`.
    pub fn render(&self, out: &mut Exposition) {
        let f = &self.figures;
        let (kind, holds, flag) = (f.kind, f.holds, f.flag);
        let name = |figure: &str| format!("zugzwang_{kind}_cache_{figure}");
        out.gauge(
            &name("capacity_bytes"),
            &format!("Memory the cache of {holds} may take ({flag})."),
            f.capacity,
        );
        out.gauge(
            &name("bytes"),
            &format!("Memory the cache of {holds} takes now."),
            self.bytes() as u64,
        );
        out.counter(
            &name("hits_total"),
            &format!("Reads of {holds} served from their cache."),
            f.hits.load(Relaxed),
        );
        out.counter(
            &name("loads_total"),
            &format!("Reads of {holds} that had to load their chunks from the table."),
            f.loads.load(Relaxed),
        );
    }

    /// Bytes held now, overhead included.
    pub fn bytes(&self) -> usize {
        let held: u64 = (0..SHARDS).map(|i| self.read(i).weight()).sum();
        usize::try_from(held).unwrap_or(usize::MAX)
    }

    /// Whether a shard has room for two chunks: quick_cache refuses an
    /// entry that would take nearly all of it.
    fn keeps_anything(&self) -> bool {
        self.shard_capacity >= 2 * (CHUNK + ENTRY_OVERHEAD as u64)
    }

    fn read(&self, shard: usize) -> RwLockReadGuard<'_, Shard> {
        sync::read(&self.shards[shard])
    }

    fn write(&self, shard: usize) -> RwLockWriteGuard<'_, Shard> {
        sync::write(&self.shards[shard])
    }

    fn shard_of((file, chunk): Key) -> usize {
        // Fibonacci hashing spreads neighbouring chunks and files apart.
        let h =
            (file.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ chunk).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (h >> 32) as usize % SHARDS
    }

    /// Copies `out.len()` bytes at `offset` of `file` into `out` if every
    /// chunk they lie in is held; false otherwise (`out` is then garbage).
    pub fn copy(&self, file: u64, offset: u64, out: &mut [u8]) -> bool {
        let mut at = offset;
        let mut out = out;
        while !out.is_empty() {
            let key = (file, at / CHUNK);
            let shard = self.read(Self::shard_of(key));
            let Some(kept) = shard.get(&key) else {
                return false;
            };
            let Some(held) = kept.get((at % CHUNK) as usize..) else {
                return false;
            };
            let n = held.len().min(out.len());
            if n == 0 {
                return false;
            }
            let (now, rest) = out.split_at_mut(n);
            now.copy_from_slice(&held[..n]);
            out = rest;
            at += n as u64;
        }
        true
    }

    /// Keeps chunk `chunk` of `file` (shorter than [`CHUNK`] only at the
    /// end of the file), dropping the coldest chunks beyond the budget.
    pub fn insert(&self, file: u64, chunk: u64, bytes: &[u8]) {
        let key = (file, chunk);
        let mut shard = self.write(Self::shard_of(key));
        shard.insert(key, bytes.into());
    }
}

/// A filesystem whose table files keep their index parts in `cache`, and
/// their data blocks in `data` (a cache of no bytes keeps none).
pub struct ChunkCachedFilesystem {
    inner: Arc<dyn Filesystem>,
    cache: Arc<ChunkCache>,
    data: Arc<ChunkCache>,
    /// The store's read counters, where hits count as reads from memory.
    reads: Arc<ReadMetrics>,
    /// Tables found damaged: their kept chunks are not served either.
    quarantine: Option<Arc<Quarantine>>,
}

impl ChunkCachedFilesystem {
    pub fn new(
        inner: Arc<dyn Filesystem>,
        cache: Arc<ChunkCache>,
        data: Arc<ChunkCache>,
        reads: Arc<ReadMetrics>,
    ) -> ChunkCachedFilesystem {
        ChunkCachedFilesystem {
            inner,
            cache,
            data,
            reads,
            quarantine: None,
        }
    }

    /// Refuses the kept chunks of a table once it is quarantined, as the
    /// layer below refuses its reads: a verdict holds for every read.
    #[must_use]
    pub fn with_quarantine(mut self, quarantine: Arc<Quarantine>) -> Self {
        self.quarantine = Some(quarantine);
        self
    }

    pub fn cache(&self) -> &Arc<ChunkCache> {
        &self.cache
    }

    pub fn data_cache(&self) -> &Arc<ChunkCache> {
        &self.data
    }
}

impl Filesystem for ChunkCachedFilesystem {
    fn regular_file_size(&self, path: &Path) -> io::Result<u64> {
        self.inner.regular_file_size(path)
    }

    fn read_dir(&self, path: &Path) -> io::Result<Vec<PathBuf>> {
        self.inner.read_dir(path)
    }

    fn open(&self, path: &Path) -> io::Result<Box<dyn RandomAccessFile>> {
        let inner = self.inner.open(path)?;
        Ok(Box::new(ChunkCachedFile {
            inner,
            // A fresh key per open: a reopened or replaced file never sees
            // the chunks of an earlier one.
            key: NEXT_FILE.fetch_add(1, Relaxed),
            table: file_name(path).into(),
            cache: Arc::clone(&self.cache),
            data: Arc::clone(&self.data),
            reads: Arc::clone(&self.reads),
            watch: self
                .quarantine
                .as_ref()
                .map(|quarantine| Watch::new(Arc::clone(quarantine), path)),
        }))
    }
}

struct ChunkCachedFile {
    inner: Box<dyn RandomAccessFile>,
    key: u64,
    table: Arc<str>,
    cache: Arc<ChunkCache>,
    data: Arc<ChunkCache>,
    reads: Arc<ReadMetrics>,
    watch: Option<Watch>,
}

impl ChunkCachedFile {
    /// Serves a read from the cache that keeps its kind, if that cache
    /// keeps anything; false leaves the read to the layer below.
    fn read_cached(&self, buf: &mut [u8], offset: u64, hint: ReadHint) -> io::Result<bool> {
        if let Some(watch) = &self.watch {
            watch.check()?;
        }
        if hint == ReadHint::SparseIndex {
            context::begin_lookup();
        }
        let cache = if hint == ReadHint::Data {
            &self.data
        } else {
            &self.cache
        };
        if buf.is_empty() || !cache.keeps_anything() {
            return Ok(false);
        }
        self.read_kept(cache, buf, offset, hint)
    }

    /// Serves a read from `cache`, loading the chunks it lies in with one
    /// read when some are missing. False when the file ends before the
    /// bytes asked for: the layer below then explains.
    fn read_kept(
        &self,
        cache: &ChunkCache,
        buf: &mut [u8],
        offset: u64,
        hint: ReadHint,
    ) -> io::Result<bool> {
        if cache.copy(self.key, offset, buf) {
            cache.figures.hits.fetch_add(1, Relaxed);
            self.reads.record_read(
                &self.table,
                Tier::Cache,
                hint,
                offset,
                buf.len(),
                Duration::ZERO,
            );
            return Ok(true);
        }
        let first = offset / CHUNK;
        let last = (offset + buf.len() as u64 - 1) / CHUNK;
        let start = first * CHUNK;
        let mut span = vec![0; ((last - first + 1) * CHUNK) as usize];
        // Counted once read: a read refused inline (`store::context`) is made again.
        let got = read_up_to(&*self.inner, &mut span, start, hint)?;
        cache.figures.loads.fetch_add(1, Relaxed);
        for (i, chunk) in span[..got].chunks(CHUNK as usize).enumerate() {
            cache.insert(self.key, first + i as u64, chunk);
        }
        let from = (offset - start) as usize;
        match span[..got].get(from..from + buf.len()) {
            Some(wanted) => {
                buf.copy_from_slice(wanted);
                Ok(true)
            }
            None => Ok(false),
        }
    }
}

/// Reads into `buf` until it is full or the file ends; returns the bytes read.
fn read_up_to(
    file: &dyn RandomAccessFile,
    buf: &mut [u8],
    offset: u64,
    hint: ReadHint,
) -> io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match file.read_at(&mut buf[done..], offset + done as u64, hint) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
    Ok(done)
}

impl RandomAccessFile for ChunkCachedFile {
    fn read_at(&self, buf: &mut [u8], offset: u64, hint: ReadHint) -> io::Result<usize> {
        if self.read_cached(buf, offset, hint)? {
            return Ok(buf.len());
        }
        self.inner.read_at(buf, offset, hint)
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64, hint: ReadHint) -> io::Result<()> {
        if self.read_cached(buf, offset, hint)? {
            return Ok(());
        }
        self.inner.read_exact_at(buf, offset, hint)
    }
}

#[cfg(test)]
mod tests {
    use std::{
        io::Write,
        sync::atomic::{AtomicBool, AtomicUsize, Ordering},
    };

    use super::*;
    use crate::store::pread::PreadFilesystem;

    /// A table file in memory that counts the reads reaching it and can be
    /// made to fail.
    struct FakeFile {
        bytes: Vec<u8>,
        reads: AtomicUsize,
        fail: AtomicBool,
    }

    struct FakeFs(Arc<FakeFile>);

    struct Opened(Arc<FakeFile>);

    impl FakeFile {
        fn new(len: usize) -> Arc<FakeFile> {
            Arc::new(FakeFile {
                bytes: (0..len).map(|i| (i % 251) as u8).collect(),
                reads: AtomicUsize::new(0),
                fail: AtomicBool::new(false),
            })
        }

        fn reads(&self) -> usize {
            self.reads.load(Ordering::Relaxed)
        }
    }

    impl Filesystem for FakeFs {
        fn regular_file_size(&self, _: &Path) -> io::Result<u64> {
            Ok(self.0.bytes.len() as u64)
        }

        fn read_dir(&self, _: &Path) -> io::Result<Vec<PathBuf>> {
            Ok(Vec::new())
        }

        fn open(&self, _: &Path) -> io::Result<Box<dyn RandomAccessFile>> {
            Ok(Box::new(Opened(Arc::clone(&self.0))))
        }
    }

    impl RandomAccessFile for Opened {
        fn read_at(&self, buf: &mut [u8], offset: u64, _: ReadHint) -> io::Result<usize> {
            self.0.reads.fetch_add(1, Ordering::Relaxed);
            if self.0.fail.load(Ordering::Relaxed) {
                return Err(io::Error::other("KQvK.rtbw: the disk said no"));
            }
            let from = (offset as usize).min(self.0.bytes.len());
            let n = buf.len().min(self.0.bytes.len() - from);
            buf[..n].copy_from_slice(&self.0.bytes[from..from + n]);
            Ok(n)
        }
    }

    /// `capacity` bytes of index cache and `data` bytes of data cache.
    fn cached_with_data(
        file: &Arc<FakeFile>,
        capacity: usize,
        data: usize,
    ) -> ChunkCachedFilesystem {
        ChunkCachedFilesystem::new(
            Arc::new(FakeFs(Arc::clone(file))),
            Arc::new(ChunkCache::for_index(capacity)),
            Arc::new(ChunkCache::for_data(data)),
            Arc::default(),
        )
    }

    /// `capacity` bytes of index cache and no data cache.
    fn cached(file: &Arc<FakeFile>, capacity: usize) -> ChunkCachedFilesystem {
        cached_with_data(file, capacity, 0)
    }

    fn expected(offset: u64, len: usize) -> Vec<u8> {
        (offset..offset + len as u64)
            .map(|i| (i % 251) as u8)
            .collect()
    }

    fn read(file: &dyn RandomAccessFile, offset: u64, len: usize, hint: ReadHint) -> Vec<u8> {
        let mut buf = vec![0; len];
        file.read_exact_at(&mut buf, offset, hint).expect("read");
        buf
    }

    #[test]
    fn index_reads_return_the_files_bytes_and_reach_it_once() {
        let size = 3 * CHUNK as usize + 100;
        let fake = FakeFile::new(size);
        let fs = cached(&fake, 1 << 20);
        let file = fs.open(Path::new("KQvK.rtbw")).expect("open");
        let reads = [
            (0, 5, ReadHint::Header),
            (CHUNK - 3, 6, ReadHint::SparseIndex),
            (2 * CHUNK + 17, 32, ReadHint::BlockLengths),
            (size as u64 - 6, 6, ReadHint::DtzMap),
            (10, 2 * CHUNK as usize + 50, ReadHint::Header),
        ];
        for (offset, len, hint) in reads {
            assert_eq!(
                read(&*file, offset, len, hint),
                expected(offset, len),
                "{offset}"
            );
        }
        // Four chunks, and one more read to find where the file ends.
        let after_first_pass = fake.reads();
        assert!(
            after_first_pass <= 5,
            "{after_first_pass} reads for 4 chunks"
        );
        for (offset, len, hint) in reads {
            assert_eq!(
                read(&*file, offset, len, hint),
                expected(offset, len),
                "{offset}"
            );
        }
        assert_eq!(
            fake.reads(),
            after_first_pass,
            "the second pass read the file"
        );
        assert!(fs.cache().bytes() >= size);
    }

    #[test]
    fn data_blocks_are_kept_only_in_a_data_cache() {
        let fake = FakeFile::new(4 * CHUNK as usize);
        let fs = cached(&fake, 1 << 20);
        let file = fs.open(Path::new("KQvK.rtbw")).expect("open");
        for _ in 0..2 {
            assert_eq!(read(&*file, 5000, 64, ReadHint::Data), expected(5000, 64));
        }
        assert_eq!(fake.reads(), 2, "no data cache, yet data was kept");
        assert_eq!(fs.cache().bytes(), 0);

        let fake = FakeFile::new(4 * CHUNK as usize);
        let fs = cached_with_data(&fake, 1 << 20, 1 << 20);
        let file = fs.open(Path::new("KQvK.rtbw")).expect("open");
        // A block and its 4 extra bytes across a chunk boundary, then one inside.
        for (offset, len) in [
            (2 * CHUNK - 20, 36),
            (CHUNK + 100, 36),
            (2 * CHUNK - 20, 36),
        ] {
            assert_eq!(
                read(&*file, offset, len, ReadHint::Data),
                expected(offset, len),
                "{offset}"
            );
        }
        assert_eq!(fake.reads(), 1, "the data chunks were read again");
        assert_eq!(fs.cache().bytes(), 0, "data went to the index cache");
        assert!(fs.data_cache().bytes() >= 2 * CHUNK as usize);
    }

    #[test]
    fn a_zero_budget_keeps_nothing() {
        let fake = FakeFile::new(4 * CHUNK as usize);
        let fs = cached(&fake, 0);
        let file = fs.open(Path::new("KQvK.rtbw")).expect("open");
        for _ in 0..2 {
            assert_eq!(
                read(&*file, 100, 6, ReadHint::SparseIndex),
                expected(100, 6)
            );
        }
        assert_eq!(fake.reads(), 2);
        assert_eq!(fs.cache().bytes(), 0);
    }

    /// What `chunks` chunks in each shard take in a cache.
    fn room_for(chunks: usize) -> usize {
        SHARDS * chunks * (CHUNK as usize + ENTRY_OVERHEAD)
    }

    #[test]
    fn memory_stays_within_the_budget_and_chunks_in_use_stay() {
        // Two chunks per shard.
        let capacity = room_for(2);
        let cache = ChunkCache::for_index(capacity);
        let chunk = vec![7u8; CHUNK as usize];
        let mut out = [0u8; 8];
        cache.insert(1, 0, &chunk);
        for i in 0..1000 {
            cache.insert(3, i, &chunk);
            assert!(
                cache.copy(1, 100, &mut out),
                "the chunk used all along was dropped at {i}"
            );
            assert!(cache.bytes() <= capacity);
        }
        assert_eq!(out, [7; 8]);
        assert!(cache.bytes() > capacity / 2, "the cache holds too little");
    }

    #[test]
    fn chunks_never_read_again_give_way_to_chunks_in_use() {
        let room = 32 * SHARDS as u64;
        let capacity = room_for(32);
        let cache = ChunkCache::for_data(capacity);
        let chunk = vec![7u8; CHUNK as usize];
        let mut out = [0u8; 8];
        // Filled with chunks nobody reads again...
        for i in 0..room {
            cache.insert(2, i, &chunk);
        }
        // ... then a working set of half the room, read over and over.
        let working = room / 2;
        for _ in 0..20 {
            for i in 0..working {
                if !cache.copy(3, i * CHUNK, &mut out) {
                    cache.insert(3, i, &chunk);
                }
                assert!(cache.bytes() <= capacity);
            }
        }
        let in_use = (0..working)
            .filter(|&i| cache.copy(3, i * CHUNK, &mut out))
            .count() as u64;
        assert_eq!(in_use, working, "the chunks in use were not all kept");
    }

    #[test]
    fn a_cache_whose_every_chunk_is_in_use_still_makes_room() {
        // Two chunks per shard, every chunk read before the next comes: the
        // cache must still drop one for each new one.
        let capacity = room_for(2);
        let cache = ChunkCache::for_data(capacity);
        let mut out = [0u8; 8];
        for i in 0..500u64 {
            cache.insert(9, i, &vec![(i % 251) as u8; CHUNK as usize]);
            assert!(cache.copy(9, i * CHUNK, &mut out), "{i} was not kept");
            assert_eq!(out, [(i % 251) as u8; 8]);
            assert!(cache.bytes() <= capacity, "over budget at {i}");
        }
        let kept = (0..500)
            .filter(|&i| cache.copy(9, i * CHUNK, &mut out))
            .count();
        assert!(
            kept <= 2 * SHARDS,
            "{kept} chunks kept in room for {}",
            2 * SHARDS
        );
        assert!(kept > 0, "nothing kept");
    }

    #[test]
    fn a_reopened_file_does_not_see_the_chunks_of_an_earlier_open() {
        let fake = FakeFile::new(2 * CHUNK as usize);
        let fs = cached(&fake, 1 << 20);
        for _ in 0..2 {
            let file = fs.open(Path::new("KQvK.rtbw")).expect("open");
            read(&*file, 10, 6, ReadHint::SparseIndex);
        }
        assert_eq!(fake.reads(), 2);
    }

    #[test]
    fn errors_from_below_come_back_unchanged_and_are_not_kept() {
        let fake = FakeFile::new(2 * CHUNK as usize);
        let fs = cached(&fake, 1 << 20);
        let file = fs.open(Path::new("KQvK.rtbw")).expect("open");
        fake.fail.store(true, Ordering::Relaxed);
        let mut buf = [0u8; 6];
        let err = file
            .read_exact_at(&mut buf, 10, ReadHint::SparseIndex)
            .expect_err("the disk failed");
        assert_eq!(err.to_string(), "KQvK.rtbw: the disk said no");
        fake.fail.store(false, Ordering::Relaxed);
        assert_eq!(read(&*file, 10, 6, ReadHint::SparseIndex), expected(10, 6));
    }

    #[test]
    fn a_read_past_the_end_is_explained_by_the_store_naming_the_table() {
        let mut tmp = tempfile::NamedTempFile::new().expect("temp file");
        tmp.write_all(&expected(0, 5000)).expect("write");
        let fs = ChunkCachedFilesystem::new(
            Arc::new(PreadFilesystem::new()),
            Arc::new(ChunkCache::for_index(1 << 20)),
            Arc::new(ChunkCache::for_data(0)),
            Arc::default(),
        );
        let file = fs.open(tmp.path()).expect("open");
        assert_eq!(
            read(&*file, 4990, 10, ReadHint::BlockLengths),
            expected(4990, 10)
        );
        let mut buf = [0u8; 20];
        let err = file
            .read_exact_at(&mut buf, 4990, ReadHint::BlockLengths)
            .expect_err("past the end");
        let name = file_name(tmp.path());
        assert!(
            err.to_string().contains(&name) && err.to_string().contains("truncated"),
            "{err}"
        );
    }
}
