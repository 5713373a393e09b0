//! Bytes compiled into the binary, read from the executable's file with
//! `pread(2)` instead of through its mapping.
//!
//! A page of the binary read through its mapping stays mapped, and counts
//! in the process's resident memory (and in its peak, `VmHWM`) until the
//! process ends; the kernel also maps the pages around it (fault-around,
//! 64 KiB). The embedded DTM tables were 25 MB (39 MB since build.rs
//! re-blocks them): after an explorer's walk 31 MiB of the binary's
//! read-only data was resident, a quarter of the
//! server's peak (server/docs/benchmarks.md, "One memory budget"). Read
//! with `pread` the same bytes are page cache, as the tables of a
//! directory are: shared, and given back when memory is short.
//!
//! Where the bytes cannot be found in the file (no `/proc`, a binary not
//! mapped from one file), they are copied from memory as before.

use std::{fs::File, io, os::unix::fs::FileExt, sync::OnceLock};

/// The running executable, opened once, and where its file is mapped.
struct Executable {
    file: File,
    mappings: Vec<Mapping>,
}

/// One mapping of the executable's file: addresses `start..end` hold the
/// file's bytes from `offset` on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Mapping {
    start: usize,
    end: usize,
    offset: u64,
}

static EXECUTABLE: OnceLock<Option<Executable>> = OnceLock::new();

/// Bytes of the binary (a `'static` slice of its read-only data) and, when
/// found, where they lie in the executable's file.
#[derive(Clone, Copy)]
pub struct StaticBytes {
    bytes: &'static [u8],
    in_file: Option<(&'static File, u64)>,
}

impl StaticBytes {
    /// `bytes`, to be read from the executable's file where they can be
    /// found there.
    pub fn new(bytes: &'static [u8]) -> StaticBytes {
        let in_file = executable().and_then(|exe| {
            let offset = file_offset(&exe.mappings, bytes.as_ptr() as usize, bytes.len())?;
            Some((&exe.file, offset))
        });
        StaticBytes { bytes, in_file }
    }

    /// `bytes`, always copied from memory.
    pub fn in_memory(bytes: &'static [u8]) -> StaticBytes {
        StaticBytes {
            bytes,
            in_file: None,
        }
    }

    /// Their length.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Whether reads go to the executable's file (else to memory).
    pub fn read_from_file(&self) -> bool {
        self.in_file.is_some()
    }

    /// Reads from `offset` into `buf`: as many bytes as are there, 0 past
    /// the end.
    pub fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let Some(rest) = usize::try_from(offset)
            .ok()
            .and_then(|o| self.bytes.get(o..))
        else {
            return Ok(0);
        };
        let n = rest.len().min(buf.len());
        match self.in_file {
            Some((file, start)) => file.read_at(&mut buf[..n], start + offset),
            None => {
                buf[..n].copy_from_slice(&rest[..n]);
                Ok(n)
            }
        }
    }
}

/// Drops the process's mappings of the whole pages within `bytes` (they
/// stay in the page cache): pages the kernel mapped around other reads of
/// the binary's data at start (it maps whole large folios, not just the
/// page asked for), which [`StaticBytes::read_at`] will never touch.
pub fn unmap(bytes: &'static [u8]) {
    let page = 4096;
    let start = (bytes.as_ptr() as usize).next_multiple_of(page);
    let end = (bytes.as_ptr() as usize + bytes.len()) / page * page;
    if end <= start {
        return;
    }
    // SAFETY: the range lies within `bytes`, read-only data of the binary
    // that is never written: dropping its pages only means that a later
    // access maps them again from the page cache, with the same bytes.
    // A failure changes nothing, so it is ignored.
    unsafe {
        libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED);
    }
}

fn executable() -> Option<&'static Executable> {
    EXECUTABLE.get_or_init(open_executable).as_ref()
}

/// Opens `/proc/self/exe` (the running binary's inode, even when its path
/// was replaced since) and finds its mappings in `/proc/self/maps`.
fn open_executable() -> Option<Executable> {
    let file = File::open("/proc/self/exe").ok()?;
    let path = std::fs::read_link("/proc/self/exe").ok()?;
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    let mappings = mappings_of(&maps, &path);
    (!mappings.is_empty()).then_some(Executable { file, mappings })
}

/// The mappings of the file at `path` in a `/proc/self/maps` text
/// (`start-end perms offset dev inode path`).
fn mappings_of(maps: &str, path: &std::path::Path) -> Vec<Mapping> {
    maps.lines()
        .filter_map(|line| {
            let mut fields = line.splitn(6, ' ');
            let range = fields.next()?;
            let offset = fields.nth(1)?;
            let named = fields.nth(2)?.trim_start();
            if std::path::Path::new(named) != path {
                return None;
            }
            let (start, end) = range.split_once('-')?;
            Some(Mapping {
                start: usize::from_str_radix(start, 16).ok()?,
                end: usize::from_str_radix(end, 16).ok()?,
                offset: u64::from_str_radix(offset, 16).ok()?,
            })
        })
        .collect()
}

/// Where the `len` bytes at address `start` begin in the file, when one
/// mapping holds all of them.
fn file_offset(mappings: &[Mapping], start: usize, len: usize) -> Option<u64> {
    let end = start.checked_add(len)?;
    let mapping = mappings.iter().find(|m| m.start <= start && end <= m.end)?;
    Some(mapping.offset + (start - mapping.start) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    static SAMPLE: &[u8] = b"bytes compiled into the test binary, read back from its file";

    #[test]
    fn static_bytes_read_from_the_file_are_the_bytes() {
        let sample = StaticBytes::new(SAMPLE);
        assert!(sample.read_from_file(), "found in /proc/self/maps");
        let mut buf = vec![0u8; SAMPLE.len() + 10];
        let n = sample.read_at(&mut buf, 6).expect("pread");
        assert_eq!(&buf[..n], &SAMPLE[6..]);
        assert_eq!(sample.read_at(&mut buf, SAMPLE.len() as u64).unwrap(), 0);
        assert_eq!(sample.read_at(&mut buf, u64::MAX).unwrap(), 0);
    }

    #[test]
    fn maps_lines_name_the_file_and_where_it_is_mapped() {
        let maps = "\
55fe00000000-55fe00001000 r--p 00000000 fd:01 42 /usr/bin/zugzwang
55fe00001000-55fe00005000 r-xp 00001000 fd:01 42 /usr/bin/zugzwang
55fe00005000-55fe00006000 rw-p 00000000 00:00 0 
7fe1d5801000-7fe1d5957000 r-xp 00028000 fd:01 7 /usr/lib/libc.so.6
55fe10000000-55fe10001000 r--p 00009000 fd:01 43 /usr/bin/zugzwang (deleted)
";
        let found = mappings_of(maps, std::path::Path::new("/usr/bin/zugzwang"));
        assert_eq!(
            found,
            [
                Mapping {
                    start: 0x55fe00000000,
                    end: 0x55fe00001000,
                    offset: 0
                },
                Mapping {
                    start: 0x55fe00001000,
                    end: 0x55fe00005000,
                    offset: 0x1000
                },
            ]
        );
        assert_eq!(file_offset(&found, 0x55fe00002010, 16), Some(0x2010));
        // Across the end of the mapped part of the file.
        assert_eq!(file_offset(&found, 0x55fe00004ff0, 32), None);
        assert_eq!(file_offset(&found, 0x55fe00005010, 16), None);
    }
}
