//! Whether a range of a file is in the page cache, asked without starting
//! any I/O.
//!
//! Read-around (`store::pread`) must tell a hit from a miss before it reads.
//! A read that refuses to wait (`RWF_NOWAIT`) tells, but on current kernels
//! (measured on 6.18) a refused read has already started the I/O for the
//! pages it asked for; the window read that follows then finds those pages
//! in flight and reads the rest of the window around them, so one miss costs
//! the disk three reads instead of one (server/docs/benchmarks.md, "Tables
//! larger than RAM: where the disk reads go"). `cachestat(2)` (Linux 6.5) only counts pages, so
//! it is asked first; where it is missing, the caller falls back to
//! `RWF_NOWAIT`.

use std::{
    fs::File,
    os::fd::AsRawFd,
    sync::atomic::{AtomicBool, Ordering::Relaxed},
};

/// `cachestat`'s number in the generic system call table, the same on
/// every architecture (the libc crate does not name it on x86-64 yet).
const SYS_CACHESTAT: libc::c_long = 451;

const PAGE: u64 = 4096;

/// Cleared once the kernel says it has no `cachestat`.
static WORKS: AtomicBool = AtomicBool::new(true);

/// What the page cache holds of a range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Residency {
    /// Every page of it (some may still be arriving from the disk).
    Cached,
    /// Not every page.
    Missing,
    /// The kernel cannot tell without a read.
    Unknown,
}

#[repr(C)]
struct CachestatRange {
    off: u64,
    len: u64,
}

#[repr(C)]
#[derive(Default)]
struct Cachestat {
    nr_cache: u64,
    nr_dirty: u64,
    nr_writeback: u64,
    nr_evicted: u64,
    nr_recently_evicted: u64,
}

/// Whether bytes `offset..offset + len` of `file` are all in the page cache.
pub fn of(file: &File, offset: u64, len: usize) -> Residency {
    if len == 0 || !WORKS.load(Relaxed) {
        return Residency::Unknown;
    }
    let first = offset / PAGE;
    let pages = (offset + len as u64 - 1) / PAGE - first + 1;
    let range = CachestatRange {
        off: first * PAGE,
        len: pages * PAGE,
    };
    let mut stat = Cachestat::default();
    // Safety: both structs are #[repr(C)] as the kernel defines them and
    // live across the call; the descriptor is open while `file` is borrowed.
    let status = unsafe {
        libc::syscall(
            SYS_CACHESTAT,
            file.as_raw_fd(),
            &range as *const CachestatRange,
            &mut stat as *mut Cachestat,
            0u32,
        )
    };
    if status != 0 {
        let errno = std::io::Error::last_os_error().raw_os_error();
        if matches!(errno, Some(libc::ENOSYS | libc::EOPNOTSUPP | libc::EPERM)) {
            WORKS.store(false, Relaxed);
        }
        return Residency::Unknown;
    }
    // Pages past the end of the file cannot be cached; a range reaching
    // there is not "all cached", and the read that follows explains.
    if stat.nr_cache >= pages {
        Residency::Cached
    } else {
        Residency::Missing
    }
}

#[cfg(test)]
mod tests {
    use std::{io::Write, os::unix::fs::FileExt};

    use super::*;

    #[test]
    fn tells_read_pages_from_dropped_ones() {
        let mut file = tempfile::NamedTempFile::new().expect("temp file");
        file.write_all(&vec![1u8; 1 << 20]).expect("write");
        file.as_file().sync_all().expect("sync");
        let _ = rustix::fs::fadvise(file.as_file(), 0, None, rustix::fs::Advice::DontNeed);
        let first = of(file.as_file(), 100_000, 10);
        if first == Residency::Unknown {
            eprintln!("SKIPPED: this kernel has no cachestat (Linux 6.5+)");
            return;
        }
        let mut buf = vec![0u8; 8192];
        file.as_file().read_exact_at(&mut buf, 8192).expect("read");
        assert_eq!(of(file.as_file(), 8192, 8192), Residency::Cached);
        assert_eq!(of(file.as_file(), 9000, 10), Residency::Cached);
        // Not asserting `first`: the kernel may keep clean pages anyway.
        assert_eq!(
            of(file.as_file(), (1 << 20) - 10, 20),
            Residency::Missing,
            "past the end"
        );
        assert_eq!(of(file.as_file(), 0, 0), Residency::Unknown);
    }
}
