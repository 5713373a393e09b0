//! Table files read with pread(2).
//!
//! Not mmap: an I/O error or a file truncated under us must come back as an
//! error value (and a clean HTTP error), never as a SIGBUS. Every error names
//! the file, so an operator knows which table to replace.

use std::{
    fmt,
    fs::{self, File},
    io,
    os::unix::fs::FileExt,
    path::{Path, PathBuf},
};

use shakmaty_syzygy::filesystem::{Filesystem, RandomAccessFile, ReadHint};

/// Reads tables with positioned reads, optionally hinting random access.
#[derive(Debug, Default, Clone)]
pub struct PreadFilesystem {
    advise_random: bool,
}

impl PreadFilesystem {
    pub fn new(advise_random: bool) -> Self {
        PreadFilesystem { advise_random }
    }
}

/// An I/O error that knows which table file it concerns.
#[derive(Debug)]
pub struct TableIoError {
    pub path: PathBuf,
    pub detail: String,
    /// The process or system ran out of file descriptors.
    pub out_of_descriptors: bool,
}

impl fmt::Display for TableIoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.detail)
    }
}

impl std::error::Error for TableIoError {}

fn table_error(path: &Path, kind: io::ErrorKind, detail: String) -> io::Error {
    io::Error::new(
        kind,
        TableIoError {
            path: path.to_path_buf(),
            detail,
            out_of_descriptors: false,
        },
    )
}

fn wrap_open_error(path: &Path, err: io::Error) -> io::Error {
    let out_of_descriptors = matches!(
        err.raw_os_error(),
        Some(code) if code == rustix::io::Errno::MFILE.raw_os_error()
            || code == rustix::io::Errno::NFILE.raw_os_error()
    );
    let detail = if out_of_descriptors {
        format!("cannot open: too many open files ({err}); raise the open-files limit (ulimit -n)")
    } else {
        format!("cannot open: {err}")
    };
    io::Error::new(
        err.kind(),
        TableIoError {
            path: path.to_path_buf(),
            detail,
            out_of_descriptors,
        },
    )
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
        let file = File::open(path).map_err(|err| wrap_open_error(path, err))?;
        let meta = file.metadata().map_err(|err| wrap_open_error(path, err))?;
        if self.advise_random {
            // Advisory only: a kernel that ignores the hint still reads correctly.
            let _ = rustix::fs::fadvise(&file, 0, None, rustix::fs::Advice::Random);
        }
        Ok(Box::new(PreadFile {
            file,
            path: path.to_path_buf(),
            size_at_open: meta.len(),
        }))
    }
}

/// One open table file.
struct PreadFile {
    file: File,
    path: PathBuf,
    size_at_open: u64,
}

impl PreadFile {
    /// Explains a read that ended early: usually the file was truncated or
    /// replaced in place while the server had it open.
    fn short_read(&self, offset: u64, wanted: usize) -> io::Error {
        let now = fs::metadata(&self.path).map(|m| m.len()).ok();
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
        table_error(&self.path, io::ErrorKind::InvalidData, detail)
    }
}

impl RandomAccessFile for PreadFile {
    fn read_at(&self, buf: &mut [u8], offset: u64, _hint: ReadHint) -> io::Result<usize> {
        self.file.read_at(buf, offset).map_err(|err| {
            table_error(
                &self.path,
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
