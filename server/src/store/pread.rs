//! Table files read with pread(2).
//!
//! Not mmap: an I/O error or a file truncated under us must come back as an
//! error value (and a clean HTTP error), never as a SIGBUS. Every error names
//! the file, so an operator knows which table to replace.
//!
//! A page-cache miss costs a disk seek whatever its size, and the probes of
//! one position and its moves touch neighbouring parts of a table. So a
//! miss reads the aligned window around it in one read (`--read-around`), as
//! an mmap fault reads around itself, and the neighbours then find their
//! bytes in the page cache. Hits cost little extra: they are recognised by
//! asking the page cache (`residency`), or where the kernel cannot be asked,
//! by a read that refuses to wait for the disk (`RWF_NOWAIT`). No fadvise
//! hint is involved, only reads.
//!
//! Every read that goes to the disk is registered while it is out
//! (`stuck_reads`): one out longer than `--stuck-read-secs` makes its table
//! suspect, and the next misses on that table are refused at once instead
//! of queueing behind it on a disk that does not answer.

use std::{
    fs::{self, File},
    io::{self, IoSliceMut},
    os::unix::fs::FileExt,
    path::{Path, PathBuf},
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

use rustix::io::{Errno, ReadWriteFlags};
use shakmaty_syzygy::filesystem::{Filesystem, RandomAccessFile, ReadHint};

use super::{
    context,
    descriptors::DescriptorBudget,
    disk_reads::{DiskRead, DiskReads},
    handles::{Handle, HandlePool, PooledFile},
    layout::file_name,
    residency::{self, Residency},
    single_flight::{Flights, Role},
    stuck_reads::{self, ReadsInFlight},
    table_error::TableIoError,
};

/// Reads tables with positioned reads, optionally hinting random access.
#[derive(Clone)]
pub struct PreadFilesystem {
    advise_random: bool,
    read_around: u64,
    handles: Arc<HandlePool>,
    /// Window reads in progress, shared by the files opened here.
    flights: Arc<Flights>,
    /// Reads that waited for the disk, counted for the store's `/metrics`.
    disk_reads: Arc<DiskReads>,
    /// Reads out on the disk now, and the tables suspect of a stuck one.
    in_flight: Arc<ReadsInFlight>,
}

impl Default for PreadFilesystem {
    fn default() -> Self {
        PreadFilesystem::new()
    }
}

impl PreadFilesystem {
    /// Keeps as many tables open as the open-files limit leaves after
    /// connections (see [`DescriptorBudget`]).
    pub fn new() -> Self {
        let budget = DescriptorBudget::current(None).table_handles;
        PreadFilesystem {
            advise_random: false,
            read_around: 0,
            handles: HandlePool::new(usize::try_from(budget).unwrap_or(usize::MAX)),
            flights: Arc::default(),
            disk_reads: Arc::default(),
            in_flight: Arc::default(),
        }
    }

    /// A table with a read out this long is suspect (`--stuck-read-secs`;
    /// see `store::stuck_reads`).
    #[must_use]
    pub fn with_stuck_read(mut self, limit: Duration) -> Self {
        self.in_flight = Arc::new(ReadsInFlight::new(limit));
        self
    }

    /// Hint random access to the kernel (POSIX_FADV_RANDOM) for files opened.
    #[must_use]
    pub fn with_advise_random(mut self, on: bool) -> Self {
        self.advise_random = on;
        self
    }

    /// On a page-cache miss, read this many bytes around it (an aligned
    /// window; rounded down to a power of two; 0 turns it off).
    #[must_use]
    pub fn with_read_around(mut self, bytes: u64) -> Self {
        self.read_around = match bytes {
            0 => 0,
            b => 1 << b.ilog2(),
        };
        self
    }

    /// Shares a pool of descriptors (and its budget) with other readers.
    #[must_use]
    pub fn with_handles(mut self, handles: Arc<HandlePool>) -> Self {
        self.handles = handles;
        self
    }

    pub fn handles(&self) -> &Arc<HandlePool> {
        &self.handles
    }

    /// The reads that waited for the disk, for `/metrics` and the trace.
    pub fn disk_reads(&self) -> &Arc<DiskReads> {
        &self.disk_reads
    }

    /// The reads out on the disk now, for `/metrics` and the engine.
    pub fn in_flight(&self) -> &Arc<ReadsInFlight> {
        &self.in_flight
    }
}

impl Filesystem for PreadFilesystem {
    fn regular_file_size(&self, path: &Path) -> io::Result<u64> {
        let meta = fs::metadata(path)?;
        if !meta.is_file() {
            return Err(io::Error::from(io::ErrorKind::InvalidInput));
        }
        Ok(meta.len())
    }

    fn read_dir(&self, path: &Path) -> io::Result<Vec<PathBuf>> {
        fs::read_dir(path)?
            .map(|entry| entry.map(|e| e.path()))
            .collect()
    }

    fn open(&self, path: &Path) -> io::Result<Box<dyn RandomAccessFile>> {
        if context::refusing() {
            return Err(context::refuse_open());
        }
        self.open_pread(path)
            .map(|file| Box::new(file) as Box<dyn RandomAccessFile>)
    }
}

impl PreadFilesystem {
    /// Opens a table file (or a prefix) for positioned reads.
    pub fn open_pread(&self, path: &Path) -> io::Result<PreadFile> {
        let (file, meta) = PooledFile::open(&self.handles, path)?;
        if self.advise_random {
            // Advisory only: a kernel that ignores the hint still reads correctly.
            let handle = file.handle()?;
            let _ = rustix::fs::fadvise(&**handle, 0, None, rustix::fs::Advice::Random);
        }
        Ok(PreadFile {
            table: stuck_reads::table_of(&file_name(path)),
            file,
            size_at_open: meta.len(),
            read_around: self.read_around,
            nowait_works: AtomicBool::new(true),
            flights: Arc::clone(&self.flights),
            disk_reads: Arc::clone(&self.disk_reads),
            in_flight: Arc::clone(&self.in_flight),
        })
    }
}

/// Whether the file system holding `path` tells page-cache hits from misses
/// (`RWF_NOWAIT`): reads its first bytes, then asks for them again without
/// waiting. Where it cannot, every probe goes to the blocking threads.
pub fn reads_without_waiting(path: &Path) -> io::Result<bool> {
    let file = File::open(path)?;
    let mut buf = [0; 64];
    let got = file.read_at(&mut buf, 0)?;
    let mut slices = [IoSliceMut::new(&mut buf[..got])];
    Ok(rustix::io::preadv2(&file, &mut slices, 0, ReadWriteFlags::NOWAIT) == Ok(got))
}

/// One table file, its descriptor held by the pool.
pub struct PreadFile {
    /// The table its reads count for (a prefix's is its table's).
    table: Arc<str>,
    file: PooledFile,
    size_at_open: u64,
    read_around: u64,
    /// Cleared when the kernel or file system cannot do `RWF_NOWAIT` reads.
    nowait_works: AtomicBool,
    flights: Arc<Flights>,
    disk_reads: Arc<DiskReads>,
    in_flight: Arc<ReadsInFlight>,
}

impl PreadFile {
    /// Size of the file when it was opened.
    pub fn size_at_open(&self) -> u64 {
        self.size_at_open
    }

    /// Whether the bytes are all in the page cache; if so they are in `buf`.
    /// Asked without starting I/O where the kernel can (`residency`); else
    /// with a read that refuses to wait. Where the kernel cannot tell, says
    /// no (and read-around stops).
    fn read_cached(&self, file: &File, buf: &mut [u8], offset: u64) -> bool {
        if stuck_reads::stalled(&self.table) {
            return false;
        }
        match residency::of(file, offset, buf.len()) {
            // Any error shows again in the plain read.
            Residency::Cached => file.read_exact_at(buf, offset).is_ok(),
            Residency::Missing => false,
            Residency::Unknown => self.read_nowait(file, buf, offset),
        }
    }

    /// Reads the bytes if the page cache has them all, never waiting; a
    /// refusal may start the I/O for them (see `residency`).
    fn read_nowait(&self, file: &File, buf: &mut [u8], offset: u64) -> bool {
        let mut slices = [IoSliceMut::new(buf)];
        let wanted = slices[0].len();
        match rustix::io::preadv2(file, &mut slices, offset, ReadWriteFlags::NOWAIT) {
            Ok(n) => n == wanted,
            Err(Errno::OPNOTSUPP | Errno::INVAL | Errno::NOSYS) => {
                self.nowait_works.store(false, Ordering::Relaxed);
                false
            }
            // EAGAIN: not all cached. Any real error shows again in the plain read.
            Err(_) => false,
        }
    }

    /// Inside [`context::without_waiting`]: the bytes if the page cache has
    /// them all and the descriptor is open, else a refusal
    /// (reopening a closed descriptor may wait on the disk too).
    /// The page cache is asked first, so that a refusal never starts I/O:
    /// the pool's retry must find the bytes missing, to read the window
    /// around them in one read. A miss on a suspect table is not sent to
    /// the pool: it fails here, and the probe with it (503).
    fn read_from_memory(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let cached = self.nowait_works.load(Ordering::Relaxed)
            && !stuck_reads::stalled(&self.table)
            && self.file.open_handle().is_some_and(|file| {
                !matches!(residency::of(&file, offset, buf.len()), Residency::Missing)
                    && self.read_nowait(&file, buf, offset)
            });
        if cached {
            Ok(buf.len())
        } else {
            self.refuse_if_suspect()?;
            Err(context::refuse())
        }
    }

    /// A refusal naming the table if it is suspect (a read of it has been
    /// out longer than the limit): a read that would go to the disk then
    /// fails at once instead of joining the stuck one.
    fn refuse_if_suspect(&self) -> io::Result<()> {
        match self.in_flight.suspect(&self.table) {
            Some(suspect) => Err(self.in_flight.refusal(&suspect).into_io()),
            None => Ok(()),
        }
    }

    /// The descriptor; reopening a closed one is a disk access (and on a
    /// hung mount, one that hangs), registered as a read in flight.
    fn handle(&self, hint: ReadHint) -> io::Result<Arc<Handle>> {
        if let Some(handle) = self.file.open_handle() {
            return Ok(handle);
        }
        self.refuse_if_suspect()?;
        let _reading = self.in_flight.begin(&self.table, hint);
        self.file.handle()
    }

    /// Reads the aligned window around a miss in one read and copies out
    /// what was asked; a window another probe is reading already is waited
    /// for instead (`single_flight`), until that read has been out for the
    /// stuck-read limit: then an error naming the table. Says no when the
    /// window came back short or failed; the plain read then reports the
    /// error or the short file properly.
    fn read_window(
        &self,
        file: &File,
        buf: &mut [u8],
        offset: u64,
        hint: ReadHint,
    ) -> io::Result<bool> {
        let start = offset & !(self.read_around - 1);
        let end = (offset + buf.len() as u64).max(start + self.read_around);
        let Ok(window_len) = usize::try_from(end - start) else {
            return Ok(false);
        };
        let started = Instant::now();
        let patience = self.in_flight.limit();
        let (window, role) = self.flights.read((self.file.id(), start), patience, || {
            let mut window = vec![0; window_len];
            let _reading = self.in_flight.begin(&self.table, hint);
            stuck_reads::wait_while_stalled(&self.table);
            let got = file.read_at(&mut window, start).ok()?;
            window.truncate(got);
            Some(Arc::new(window))
        });
        if role == Role::GaveUp {
            return Err(self.in_flight.gave_up(&self.table, patience).into_io());
        }
        let from = (offset - start) as usize;
        let Some(wanted) = window
            .as_deref()
            .and_then(|w| w.get(from..from + buf.len()))
        else {
            return Ok(false);
        };
        buf.copy_from_slice(wanted);
        self.disk_reads.record(&DiskRead {
            path: self.file.path(),
            hint,
            offset,
            len: buf.len(),
            window: start..end,
            joined: role == Role::Joined,
            started,
            took: started.elapsed(),
        });
        Ok(true)
    }

    /// Explains a read that ended early: usually the file was truncated or
    /// replaced in place while the server had it open.
    fn short_read(&self, offset: u64, wanted: usize) -> io::Error {
        let now = fs::metadata(self.file.path()).map(|m| m.len()).ok();
        let detail = match now {
            Some(now) if now != self.size_at_open => format!(
                "file ended at offset {offset} (wanted {wanted} bytes): it was {} bytes when opened and is {now} bytes now; it was truncated or replaced while the server was running",
                self.size_at_open
            ),
            _ => format!(
                "file ended at offset {offset} (wanted {wanted} bytes, file is {} bytes): truncated or not a complete table",
                self.size_at_open
            ),
        };
        TableIoError::logged(self.file.path(), io::ErrorKind::InvalidData, detail)
    }
}

impl RandomAccessFile for PreadFile {
    fn read_at(&self, buf: &mut [u8], offset: u64, hint: ReadHint) -> io::Result<usize> {
        if context::refusing() {
            return self.read_from_memory(buf, offset);
        }
        let file = self.handle(hint)?;
        // Read-around needs to tell hits from misses; without that, plain reads only.
        let around = self.read_around > 0 && self.nowait_works.load(Ordering::Relaxed);
        if around && self.read_cached(&file, buf, offset) {
            return Ok(buf.len());
        }
        // To the disk (or, without read-around, perhaps the page cache).
        self.refuse_if_suspect()?;
        if around && self.read_window(&file, buf, offset, hint)? {
            return Ok(buf.len());
        }
        let _reading = self.in_flight.begin(&self.table, hint);
        stuck_reads::wait_while_stalled(&self.table);
        file.read_at(buf, offset).map_err(|err| {
            TableIoError::logged(
                self.file.path(),
                err.kind(),
                format!(
                    "read of {} bytes at offset {offset} failed: {err}",
                    buf.len()
                ),
            )
        })
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64, hint: ReadHint) -> io::Result<()> {
        let mut done = 0;
        while done < buf.len() {
            match self.read_at(&mut buf[done..], offset + done as u64, hint) {
                Ok(0) => return Err(self.short_read(offset, buf.len())),
                Ok(n) => done += n,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => return Err(err),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    /// A 1 MiB file whose every byte says where it is, out of the page cache.
    fn uncached_file() -> tempfile::NamedTempFile {
        let mut file = tempfile::NamedTempFile::new().expect("temp file");
        let bytes: Vec<u8> = (0..1u32 << 20).map(|i| (i % 251) as u8).collect();
        file.write_all(&bytes).expect("write");
        file.as_file().sync_all().expect("sync");
        // Clean pages can be dropped; if the kernel keeps some, the reads are only hits.
        let _ = rustix::fs::fadvise(file.as_file(), 0, None, rustix::fs::Advice::DontNeed);
        file
    }

    fn read(fs: &PreadFilesystem, path: &Path, offset: u64, len: usize) -> Vec<u8> {
        let file = fs.open(path).expect("open");
        let mut buf = vec![0; len];
        file.read_exact_at(&mut buf, offset, ReadHint::Data)
            .expect("read");
        buf
    }

    #[test]
    fn reads_around_misses_return_exactly_the_bytes_asked_for() {
        let file = uncached_file();
        let around = PreadFilesystem::new().with_read_around(128 * 1024);
        for (offset, len) in [
            (0, 64),
            (131_000, 5_000),
            ((1 << 20) - 100, 100),
            (700_001, 1),
        ] {
            let expected: Vec<u8> = (offset..offset + len as u64)
                .map(|i| (i % 251) as u8)
                .collect();
            assert_eq!(
                read(&around, file.path(), offset, len),
                expected,
                "{offset}"
            );
        }
    }

    #[test]
    fn cached_bytes_come_from_the_read_that_does_not_wait() {
        let file = uncached_file();
        let fs = PreadFilesystem::new().with_read_around(128 * 1024);
        let opened = fs.open_pread(file.path()).expect("open");
        let handle = opened.file.handle().expect("handle");
        let mut buf = vec![0; 4096];
        handle.read_exact_at(&mut buf, 8192).expect("plain read");
        let mut again = vec![0; 4096];
        let hit = opened.read_cached(&handle, &mut again, 8192);
        if !opened.nowait_works.load(Ordering::Relaxed) {
            eprintln!("SKIPPED: this file system cannot do RWF_NOWAIT reads");
            return;
        }
        assert!(hit, "bytes just read should be in the page cache");
        assert_eq!(again, buf);
    }

    #[test]
    fn windows_are_powers_of_two() {
        assert_eq!(PreadFilesystem::new().with_read_around(0).read_around, 0);
        assert_eq!(
            PreadFilesystem::new()
                .with_read_around(100 * 1024)
                .read_around,
            64 * 1024
        );
    }
}
