//! Open table files, at most a budget of them at once.
//!
//! Tables and connections draw on the same open-files limit, and a full
//! 7-piece set is 1,500+ files (more with fast-tier prefixes and large
//! checksum lists). Holding each one open from its first probe on, as
//! shakmaty-syzygy's own filesystem does, leaves connections whatever the
//! tables did not take, and once the limit is reached nothing recovers.
//! So a table file keeps only its path and identity; its descriptor lives
//! here, the coldest are closed beyond the budget and opened again on their
//! next read, and an open that finds no descriptor left closes some of ours
//! and tries again instead of failing the probe.
//!
//! The pool is a quick_cache, as the server's other caches are. Its order is
//! not strictly least recently used: a file read once since it was opened
//! is closed before one read again (a scan of many tables does not close
//! the ones in steady use). It keeps one descriptor fewer than the budget,
//! since a file is opened before the pool can take it: the pool and the
//! open in progress stay within the budget. On running out of descriptors
//! it closes its coldest half by shrinking its capacity for a moment.

use std::{
    fs::{self, File},
    io,
    ops::Deref,
    os::unix::fs::{MetadataExt, OpenOptionsExt},
    path::{Path, PathBuf},
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering::Relaxed},
    },
};

use quick_cache::{OptionsBuilder, UnitWeighter, sync::Cache};

use super::table_error::{TableIoError, is_out_of_descriptors};

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// One open descriptor; counted in its pool's figure while it lives.
#[derive(Debug)]
pub struct Handle {
    file: File,
    alive: Arc<AtomicU64>,
}

impl Handle {
    fn new(file: File, alive: &Arc<AtomicU64>) -> Handle {
        alive.fetch_add(1, Relaxed);
        Handle {
            file,
            alive: Arc::clone(alive),
        }
    }
}

impl Deref for Handle {
    type Target = File;

    fn deref(&self) -> &File {
        &self.file
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        self.alive.fetch_sub(1, Relaxed);
    }
}

/// The descriptors of one filesystem's table files, the coldest first out.
#[derive(Debug)]
pub struct HandlePool {
    /// Keeps one fewer than the budget: the open in progress is the last.
    open: Cache<u64, Arc<Handle>>,
    budget: usize,
    /// Descriptors alive, including ones the pool closed that a read in
    /// progress still holds.
    alive: Arc<AtomicU64>,
}

impl HandlePool {
    pub fn new(budget: usize) -> Arc<HandlePool> {
        let budget = budget.max(1);
        let options = OptionsBuilder::new()
            // One shard: the budget is exact, and reads only share its lock.
            .shards(1)
            .estimated_items_capacity(budget - 1)
            .weight_capacity(kept(budget))
            .build()
            .expect("both sizes are set");
        Arc::new(HandlePool {
            open: Cache::with_options(
                options,
                UnitWeighter,
                Default::default(),
                Default::default(),
            ),
            budget,
            alive: Arc::default(),
        })
    }

    pub fn budget(&self) -> usize {
        self.budget
    }

    /// Table file descriptors open now (including ones closed by the pool
    /// that a read in progress still holds).
    pub fn open_handles(&self) -> u64 {
        self.alive.load(Relaxed)
    }

    /// Descriptors this pool keeps open.
    pub fn len(&self) -> usize {
        self.open.len()
    }

    pub fn is_empty(&self) -> bool {
        self.open.is_empty()
    }

    fn get(&self, id: u64) -> Option<Arc<Handle>> {
        self.open.get(&id)
    }

    /// Keeps a descriptor, closing the coldest one beyond the budget.
    fn keep(&self, id: u64, handle: Arc<Handle>) {
        self.open.insert(id, handle);
    }

    fn forget(&self, id: u64) {
        self.open.remove(&id);
    }

    /// Closes the coldest half of the pool (at least one); returns how
    /// many were closed.
    pub fn shed(&self) -> usize {
        let before = self.open.len();
        let keep = before / 2;
        if keep == 0 {
            self.open.clear();
        } else {
            // Evicts down to `keep` by the cache's own order, then lets
            // the pool fill up again.
            self.open.set_capacity(keep as u64);
            self.open.set_capacity(kept(self.budget));
        }
        let count = before.saturating_sub(self.open.len());
        if count > 0 {
            tracing::warn!(
                "out of file descriptors: closed {count} table files to make room (they reopen when needed)"
            );
        }
        count
    }

    /// Runs `op`; if it failed for want of a descriptor, closes some of
    /// ours and runs it once more.
    pub fn with_room<T>(&self, mut op: impl FnMut() -> io::Result<T>) -> io::Result<T> {
        match op() {
            Err(err) if is_out_of_descriptors(&err) && self.shed() > 0 => op(),
            result => result,
        }
    }
}

/// How many descriptors a pool of `budget` keeps: all but the one an open
/// takes before the pool can close another.
fn kept(budget: usize) -> u64 {
    budget.saturating_sub(1) as u64
}

/// A table file whose descriptor the pool may close and reopen.
#[derive(Debug)]
pub struct PooledFile {
    id: u64,
    path: PathBuf,
    /// Device, inode and size when first opened: a reopen must find the
    /// same file (the tablebase parsed its header already).
    identity: (u64, u64, u64),
    pool: Arc<HandlePool>,
}

impl PooledFile {
    /// Opens `path` now (so a missing or unreadable file fails here) and
    /// returns its metadata at that moment.
    pub fn open(pool: &Arc<HandlePool>, path: &Path) -> io::Result<(PooledFile, fs::Metadata)> {
        let file = open_file(pool, path)?;
        let meta = file
            .metadata()
            .map_err(|err| TableIoError::open(path, err))?;
        let pooled = PooledFile {
            id: NEXT_ID.fetch_add(1, Relaxed),
            path: path.to_path_buf(),
            identity: identity(&meta),
            pool: Arc::clone(pool),
        };
        pool.keep(pooled.id, Arc::new(file));
        Ok((pooled, meta))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Unique among the files opened by this process.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The descriptor if the pool still holds it open.
    pub fn open_handle(&self) -> Option<Arc<Handle>> {
        self.pool.get(self.id)
    }

    /// The descriptor, reopened if the pool closed it.
    pub fn handle(&self) -> io::Result<Arc<Handle>> {
        if let Some(handle) = self.open_handle() {
            return Ok(handle);
        }
        let file = open_file(&self.pool, &self.path)?;
        let meta = file
            .metadata()
            .map_err(|err| TableIoError::open(&self.path, err))?;
        if identity(&meta) != self.identity {
            return Err(TableIoError::logged(
                &self.path,
                io::ErrorKind::InvalidData,
                "a different file is at its path now (it was replaced while the server was running); restart the server to serve the new one".to_string(),
            ));
        }
        let handle = Arc::new(file);
        self.pool.keep(self.id, Arc::clone(&handle));
        Ok(handle)
    }
}

impl Drop for PooledFile {
    fn drop(&mut self) {
        self.pool.forget(self.id);
    }
}

/// What tells one file from another at the same path. The size guards
/// against an inode number reused by a new file.
fn identity(meta: &fs::Metadata) -> (u64, u64, u64) {
    (meta.dev(), meta.ino(), meta.len())
}

/// Opens within the budget, making room among our own descriptors when the
/// process has none left.
fn open_file(pool: &HandlePool, path: &Path) -> io::Result<Handle> {
    pool.with_room(|| open_without_atime(path))
        .map(|file| Handle::new(file, &pool.alive))
        .map_err(|err| TableIoError::open(path, err))
}

/// Opens for reading without access-time updates, which the kernel would
/// otherwise check on each of a request's hundreds of reads (4 % of the hot
/// CPU). Only the file's owner (or root) may ask that; others get a plain open.
fn open_without_atime(path: &Path) -> io::Result<File> {
    let noatime = rustix::fs::OFlags::NOATIME.bits() as i32;
    match fs::OpenOptions::new()
        .read(true)
        .custom_flags(noatime)
        .open(path)
    {
        Err(err) if err.kind() == io::ErrorKind::PermissionDenied => File::open(path),
        opened => opened,
    }
}

#[cfg(test)]
mod tests {
    use std::{io::Write, os::unix::fs::FileExt};

    use super::*;

    fn files(count: usize) -> (tempfile::TempDir, Vec<PathBuf>) {
        let dir = tempfile::tempdir().expect("temp dir");
        let paths = (0..count)
            .map(|i| {
                let path = dir.path().join(format!("t{i}"));
                let mut file = File::create(&path).expect("create");
                file.write_all(&[i as u8; 16]).expect("write");
                path
            })
            .collect();
        (dir, paths)
    }

    fn first_byte(file: &PooledFile) -> u8 {
        let mut byte = [0];
        file.handle()
            .expect("handle")
            .read_exact_at(&mut byte, 0)
            .expect("read");
        byte[0]
    }

    #[test]
    fn keeps_at_most_the_budget_open_and_reopens_the_rest() {
        let (_dir, paths) = files(10);
        let pool = HandlePool::new(3);
        let opened: Vec<_> = paths
            .iter()
            .map(|p| PooledFile::open(&pool, p).expect("open").0)
            .collect();
        // The budget less the descriptor that the next open takes.
        assert_eq!(pool.len(), 2);
        for round in 0..3 {
            for (i, file) in opened.iter().enumerate() {
                assert_eq!(first_byte(file), i as u8, "round {round}");
                assert!(pool.len() < 3);
            }
        }
        drop(opened);
        assert_eq!(pool.len(), 0);
    }

    #[test]
    fn a_file_replaced_under_its_path_is_refused_on_reopen() {
        let (_dir, paths) = files(2);
        let pool = HandlePool::new(1);
        let (first, _) = PooledFile::open(&pool, &paths[0]).expect("open");
        let (_second, _) = PooledFile::open(&pool, &paths[1]).expect("open");
        let new = paths[0].with_extension("new");
        fs::write(&new, [9u8; 16]).expect("write");
        fs::rename(&new, &paths[0]).expect("replace");
        let err = first.handle().expect_err("a different file");
        assert!(err.to_string().contains("replaced"), "{err}");
        assert!(!err.to_string().contains(&*paths[0].to_string_lossy()));
    }

    #[test]
    fn shedding_closes_the_coldest_half() {
        let (_dir, paths) = files(4);
        let pool = HandlePool::new(8);
        let opened: Vec<_> = paths
            .iter()
            .map(|p| PooledFile::open(&pool, p).expect("open").0)
            .collect();
        first_byte(&opened[0]);
        assert_eq!(pool.shed(), 2);
        assert_eq!(pool.len(), 2);
        // The one read again stayed open, and the newest.
        assert!(pool.get(opened[0].id).is_some());
        assert!(pool.get(opened[3].id).is_some());
    }
}
