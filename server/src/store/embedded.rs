//! The 3- and 4-piece tables compiled into the binary.
//!
//! About 4 MB: small enough to carry, and enough for a fresh clone to answer
//! every 3- and 4-piece position without any configuration.

use std::{
    io,
    path::{Path, PathBuf},
};

use include_dir::{Dir, include_dir};
use shakmaty_syzygy::filesystem::{Filesystem, RandomAccessFile, ReadHint};

static TABLES: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/tables");

/// The directory name under which the embedded tables appear.
pub const EMBEDDED_DIR: &str = "<embedded>";

#[derive(Debug, Default, Clone, Copy)]
pub struct EmbeddedFilesystem;

fn lookup(path: &Path) -> io::Result<&'static [u8]> {
    let name = path
        .strip_prefix(EMBEDDED_DIR)
        .map_err(|_| io::Error::from(io::ErrorKind::NotFound))?;
    TABLES
        .get_file(name)
        .map(|file| file.contents())
        .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))
}

impl Filesystem for EmbeddedFilesystem {
    fn regular_file_size(&self, path: &Path) -> io::Result<u64> {
        lookup(path).map(|bytes| bytes.len() as u64)
    }

    fn read_dir(&self, path: &Path) -> io::Result<Vec<PathBuf>> {
        if path != Path::new(EMBEDDED_DIR) {
            return Err(io::Error::from(io::ErrorKind::NotFound));
        }
        Ok(TABLES
            .files()
            .map(|file| Path::new(EMBEDDED_DIR).join(file.path()))
            .collect())
    }

    fn open(&self, path: &Path) -> io::Result<Box<dyn RandomAccessFile>> {
        Ok(Box::new(EmbeddedFile(lookup(path)?)))
    }
}

struct EmbeddedFile(&'static [u8]);

impl RandomAccessFile for EmbeddedFile {
    fn read_at(&self, buf: &mut [u8], offset: u64, _hint: ReadHint) -> io::Result<usize> {
        let Some(rest) = usize::try_from(offset).ok().and_then(|o| self.0.get(o..)) else {
            return Ok(0);
        };
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        Ok(n)
    }
}
