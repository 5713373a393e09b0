//! The tables compiled into the binary: the 3- and 4-piece Syzygy tables of
//! standard (`tables/`) and atomic (`tables-atomic/`) chess, and the 2- to
//! 4-piece Prophet DTM tables (`tables-prophet/`).
//!
//! About 4 MB for each Syzygy set and 39 MB of DTM (25 MB as published,
//! re-blocked by build.rs for cheaper lookups): small enough to carry,
//! and enough for a fresh clone to answer every 3- and 4-piece standard and
//! atomic position, with depth to mate, without any configuration.
//! Antichess has no embedded tables: its smallest useful set (2-4 pieces)
//! is over 100 MB.

use std::{
    io,
    path::{Path, PathBuf},
};

use include_dir::{Dir, include_dir};
use shakmaty_syzygy::filesystem::{Filesystem, RandomAccessFile, ReadHint};

use super::executable::StaticBytes;

static TABLES: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/tables");
static ATOMIC_TABLES: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/tables-atomic");
/// Re-blocked by server/build.rs from `tables-prophet/` (same values, smaller
/// zstd frames: `dtm::format::EMBEDDED_BLOCK_POSITIONS`).
static PROPHET_TABLES: Dir<'static> = include_dir!("$OUT_DIR/tables-prophet");

/// The directory name under which the embedded standard tables appear.
pub const EMBEDDED_DIR: &str = "<embedded>";
/// The directory name under which the embedded atomic tables appear.
pub const EMBEDDED_ATOMIC_DIR: &str = "<embedded>/atomic";
/// The directory name under which the embedded Prophet DTM tables appear.
pub const EMBEDDED_PROPHET_DIR: &str = "<embedded>/prophet";

/// The embedded directory a path names, and the file name within it.
fn directory_of(path: &Path) -> Option<(&'static Dir<'static>, &Path)> {
    if let Ok(name) = path.strip_prefix(EMBEDDED_ATOMIC_DIR) {
        return Some((&ATOMIC_TABLES, name));
    }
    if let Ok(name) = path.strip_prefix(EMBEDDED_PROPHET_DIR) {
        return Some((&PROPHET_TABLES, name));
    }
    let name = path.strip_prefix(EMBEDDED_DIR).ok()?;
    Some((&TABLES, name))
}

/// Gives back the pages of the embedded DTM tables that are mapped now:
/// their reads go to the executable's file (`executable`), but the kernel
/// maps large parts of them around other data the binary reads at start.
pub fn unmap_dtm_tables() {
    for file in PROPHET_TABLES.files() {
        super::executable::unmap(file.contents());
    }
}

#[derive(Debug, Default, Clone, Copy)]
pub struct EmbeddedFilesystem;

fn lookup(path: &Path) -> io::Result<&'static [u8]> {
    let (dir, name) = directory_of(path).ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
    dir.get_file(name)
        .map(|file| file.contents())
        .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))
}

impl Filesystem for EmbeddedFilesystem {
    fn regular_file_size(&self, path: &Path) -> io::Result<u64> {
        lookup(path).map(|bytes| bytes.len() as u64)
    }

    fn read_dir(&self, path: &Path) -> io::Result<Vec<PathBuf>> {
        let dir = match directory_of(path) {
            Some((dir, rest)) if rest.as_os_str().is_empty() => dir,
            _ => return Err(io::Error::from(io::ErrorKind::NotFound)),
        };
        Ok(dir.files().map(|file| path.join(file.path())).collect())
    }

    fn open(&self, path: &Path) -> io::Result<Box<dyn RandomAccessFile>> {
        let bytes = lookup(path)?;
        // A DTM table is read a block at a time (a few KiB), one pread each,
        // and those reads stay out of the process's memory (the
        // `executable` module says why). A Syzygy probe makes many reads of
        // a few bytes, which stay copies from memory: each would be a
        // system call, for at most 4 MB a set.
        let bytes = match path.starts_with(EMBEDDED_PROPHET_DIR) {
            true => StaticBytes::new(bytes),
            false => StaticBytes::in_memory(bytes),
        };
        Ok(Box::new(EmbeddedFile(bytes)))
    }
}

struct EmbeddedFile(StaticBytes);

impl RandomAccessFile for EmbeddedFile {
    fn read_at(&self, buf: &mut [u8], offset: u64, _hint: ReadHint) -> io::Result<usize> {
        self.0.read_at(buf, offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_dtm_tables_read_from_the_executable_are_their_bytes() {
        let dir = Path::new(EMBEDDED_PROPHET_DIR);
        let files = EmbeddedFilesystem
            .read_dir(dir)
            .expect("embedded DTM tables");
        assert!(!files.is_empty());
        for path in files {
            let expected = lookup(&path).expect("listed");
            let file = EmbeddedFilesystem.open(&path).expect("open");
            let mut read = vec![0u8; expected.len()];
            file.read_exact_at(&mut read, 0, ReadHint::Data)
                .expect("read whole");
            assert!(read == expected, "{} differs", path.display());
            let located = StaticBytes::new(expected);
            assert!(
                located.read_from_file(),
                "{} is in the binary's file",
                path.display()
            );
        }
    }

    /// server/build.rs re-blocks the DTM tables it embeds; every value must
    /// be the generator's, and the header (with its checksum) the same but
    /// for the block size.
    #[test]
    fn embedded_dtm_tables_hold_the_generators_values_in_smaller_blocks() {
        use crate::dtm::format::{EMBEDDED_BLOCK_POSITIONS, TableFile};
        use shakmaty_syzygy::filesystem::OsFilesystem;

        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tables-prophet");
        let values = |filesystem: &dyn Filesystem, path: &Path, positions: u64| {
            let table = TableFile::open(filesystem, path, positions).expect("opens");
            let mut values = Vec::new();
            table
                .each_block(|_, block| values.extend_from_slice(block))
                .expect("decompresses");
            (table.blocks(), values)
        };
        let files = EmbeddedFilesystem
            .read_dir(Path::new(EMBEDDED_PROPHET_DIR))
            .expect("embedded DTM tables");
        assert_eq!(files.len(), 66, "the 2-4 piece set");
        for path in files {
            let name = path.file_name().expect("a file name");
            let material = crate::dtm::format::material_of_name(&name.to_string_lossy())
                .expect("a table name");
            let positions = crate::dtm::index::Layout::new(material).num_positions();
            let (blocks, embedded) = values(&EmbeddedFilesystem, &path, positions);
            let original = source.join(name);
            let (original_blocks, generators) = values(&OsFilesystem::new(), &original, positions);
            assert_eq!(blocks, positions.div_ceil(EMBEDDED_BLOCK_POSITIONS));
            assert!(blocks > original_blocks || positions <= EMBEDDED_BLOCK_POSITIONS);
            assert!(embedded == generators, "{} differs", path.display());
            // Checksum and positions, the first 16 bytes, are the generator's.
            let original_bytes = std::fs::read(&original).expect("the source table");
            let embedded_bytes = lookup(&path).expect("listed");
            assert_eq!(embedded_bytes[..16], original_bytes[..16]);
        }
    }

    #[test]
    fn unmapping_the_dtm_tables_keeps_their_bytes() {
        let before: Vec<Vec<u8>> = PROPHET_TABLES
            .files()
            .map(|file| file.contents().to_vec())
            .collect();
        unmap_dtm_tables();
        for (file, bytes) in PROPHET_TABLES.files().zip(&before) {
            assert!(
                file.contents() == bytes.as_slice(),
                "{}",
                file.path().display()
            );
        }
    }
}
