//! Per-block checksums of table files, checked on every read.
//!
//! A flipped bit on a disk must never become a wrong DTZ shown to a player,
//! and a whole-file digest cannot be checked on each probe. So every block of
//! every table file has its own checksum, recorded when the file was known
//! good, and each read is widened to whole blocks and checked before its
//! bytes are used (as dm-integrity does below the file system).
//!
//! Block size and hash were chosen by measuring (`integrity_cost_on_hot_cache`
//! in `tests/integrity.rs`: release mode, the 3-5 piece log, hot page cache,
//! thread CPU time): xxh3 hashes 4 KiB in about 190 ns where sha256 needs
//! 2.7 µs. Checking without a cache cost +10-13% per probe with 1 KiB
//! blocks, +29-32% with 4 KiB and about +100% with 16 KiB, because every
//! small metadata read is widened to a whole block and hashed again. The
//! chunk cache above the tier (`store::chunk_cache`) keeps the checked index
//! parts and recent data blocks, so few reads reach the check at all, and
//! the block size is set by the checksum list's size instead: 4 KiB (the
//! page cache's unit) keeps it at 0.2% of the tables, where 1 KiB would need
//! 0.8%. (A cache of verified blocks below the chunk cache was measured to
//! earn nothing beside it and removed, server/docs/benchmarks.md.)

use std::{
    fmt, io,
    os::unix::fs::FileExt,
    path::{Path, PathBuf},
    sync::Arc,
};

use xxhash_rust::xxh3::xxh3_64;

use crate::store::{
    handles::{HandlePool, PooledFile},
    layout::file_name,
    table_error::TableIoError,
};

/// Bytes covered by one checksum.
pub const DEFAULT_BLOCK_SIZE: u32 = 4096;

/// The hash named in manifests, so a future change is detected, not misread.
pub const HASH_NAME: &str = "xxh3-64";

/// The checksum of one block.
pub fn block_sum(bytes: &[u8]) -> u64 {
    xxh3_64(bytes)
}

/// The checksums of every block of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockSums {
    pub block_size: u32,
    pub file_size: u64,
    pub sums: Vec<u64>,
}

impl BlockSums {
    /// Computes the sums of a whole file held in memory (tests, small files).
    pub fn of(bytes: &[u8], block_size: u32) -> BlockSums {
        BlockSums {
            block_size,
            file_size: bytes.len() as u64,
            sums: bytes.chunks(block_size as usize).map(block_sum).collect(),
        }
    }

    /// Blocks a file of this size has.
    pub fn blocks_for(file_size: u64, block_size: u32) -> u64 {
        file_size.div_ceil(u64::from(block_size))
    }

    /// The sums as stored on disk: little-endian u64s, one per block.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.sums.iter().flat_map(|s| s.to_le_bytes()).collect()
    }

    pub fn from_bytes(bytes: &[u8], block_size: u32, file_size: u64) -> Option<BlockSums> {
        let blocks = usize::try_from(Self::blocks_for(file_size, block_size)).ok()?;
        if bytes.len() != blocks.checked_mul(8)? || block_size == 0 {
            return None;
        }
        let sums = bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
            .collect();
        Some(BlockSums {
            block_size,
            file_size,
            sums,
        })
    }
}

/// Checksum lists up to this size are held in memory; longer ones (a large
/// 7-piece table has tens of millions of blocks) are read from the fast tier
/// as each read needs them.
pub const IN_MEMORY_MAX: u64 = 4 << 20;

/// The checksums of a table being served.
#[derive(Debug)]
pub struct BlockChecker {
    block_size: u32,
    file_size: u64,
    source: SumSource,
}

#[derive(Debug)]
enum SumSource {
    Memory(Vec<u64>),
    File(PooledFile),
}

/// Why a table's checksum list cannot be used. Its manifest says it
/// exists, so each of these means the table cannot be checked: the probe
/// fails rather than answering from unchecked bytes.
#[derive(Debug, thiserror::Error)]
pub enum SumsError {
    #[error("cannot read the block checksums: {0}")]
    Io(#[source] io::Error),
    #[error(
        "the block checksum list has {found} bytes where {expected} were recorded; rebuild it with `zugzwang tier build` or `zugzwang verify --init`"
    )]
    WrongLength { found: u64, expected: u64 },
    #[error("the manifest gives a block size of 0; rebuild it")]
    NoBlockSize,
}

impl SumsError {
    pub fn out_of_descriptors(&self) -> bool {
        matches!(self, SumsError::Io(err) if crate::store::table_error::is_out_of_descriptors(err))
    }
}

impl BlockChecker {
    /// Opens the checksum list of a file of `file_size` bytes; short lists
    /// are read into memory, long ones read as checks need them.
    pub fn open(
        handles: &Arc<HandlePool>,
        path: &Path,
        block_size: u32,
        file_size: u64,
    ) -> Result<BlockChecker, SumsError> {
        if block_size == 0 {
            return Err(SumsError::NoBlockSize);
        }
        let expected = BlockSums::blocks_for(file_size, block_size) * 8;
        let (file, meta) = PooledFile::open(handles, path).map_err(SumsError::Io)?;
        if meta.len() != expected {
            return Err(SumsError::WrongLength {
                found: meta.len(),
                expected,
            });
        }
        let source = if expected <= IN_MEMORY_MAX {
            let mut bytes = vec![0; expected as usize];
            file.handle()
                .and_then(|h| h.read_exact_at(&mut bytes, 0))
                .map_err(SumsError::Io)?;
            let sums = BlockSums::from_bytes(&bytes, block_size, file_size).ok_or(
                SumsError::WrongLength {
                    found: meta.len(),
                    expected,
                },
            )?;
            SumSource::Memory(sums.sums)
        } else {
            SumSource::File(file)
        };
        Ok(BlockChecker {
            block_size,
            file_size,
            source,
        })
    }

    pub fn from_sums(sums: BlockSums) -> BlockChecker {
        BlockChecker {
            block_size: sums.block_size,
            file_size: sums.file_size,
            source: SumSource::Memory(sums.sums),
        }
    }

    pub fn block_size(&self) -> u32 {
        self.block_size
    }

    /// The block-aligned range covering `offset..offset + len`, clipped to the file.
    pub fn widen(&self, offset: u64, len: usize) -> (u64, u64) {
        let bs = u64::from(self.block_size);
        let start = offset / bs * bs;
        let end = (offset + len as u64).div_ceil(bs) * bs;
        (start.min(self.file_size), end.min(self.file_size))
    }

    /// Checks whole blocks read from `start` (block aligned). The inner
    /// error is the offset of the first block that does not match (or has
    /// no checksum: failing closed); the outer one a checksum list that
    /// could not be read, which is no finding about the table.
    pub fn check(&self, start: u64, bytes: &[u8]) -> io::Result<Result<(), u64>> {
        let bs = u64::from(self.block_size);
        let first = start / bs;
        let count = (bytes.len() as u64).div_ceil(bs) as usize;
        let mut loaded = [0u64; 4];
        let mut spilled = Vec::new();
        let expected: &[u64] = match &self.source {
            SumSource::Memory(sums) => {
                let Some(sums) = usize::try_from(first)
                    .ok()
                    .and_then(|f| sums.get(f..f.checked_add(count)?))
                else {
                    return Ok(Err(start));
                };
                sums
            }
            SumSource::File(file) => {
                let mut raw = vec![0u8; count * 8];
                file.handle()?
                    .read_exact_at(&mut raw, first * 8)
                    .map_err(|err| TableIoError::because(file.path(), "cannot read", err))?;
                let sums = raw
                    .chunks_exact(8)
                    .map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]));
                if count <= loaded.len() {
                    for (slot, sum) in loaded.iter_mut().zip(sums) {
                        *slot = sum;
                    }
                    &loaded[..count]
                } else {
                    spilled.extend(sums);
                    &spilled
                }
            }
        };
        for (i, (block, expected)) in bytes.chunks(bs as usize).zip(expected).enumerate() {
            if block_sum(block) != *expected {
                return Ok(Err(start + i as u64 * bs));
            }
        }
        if expected.len() < count {
            return Ok(Err(start + expected.len() as u64 * bs));
        }
        Ok(Ok(()))
    }
}

/// A block whose checksum does not match: the bytes on disk are not the
/// bytes the table had when its checksums were recorded. Shows the table's
/// name only (answers and `/metrics` carry it); the path goes to the log.
#[derive(Debug)]
pub struct IntegrityError {
    pub path: PathBuf,
    /// Offset of the bad block.
    pub offset: u64,
    pub block_size: u32,
}

impl IntegrityError {
    pub fn table(&self) -> String {
        file_name(&self.path)
    }

    pub fn into_io(self) -> io::Error {
        io::Error::new(io::ErrorKind::InvalidData, self)
    }
}

impl IntegrityError {
    /// What is wrong, without the table's name.
    pub fn problem(&self) -> String {
        format!(
            "checksum mismatch in the {}-byte block at offset {}: the file is damaged; run `zugzwang verify` on it and replace it from a good copy",
            self.block_size, self.offset
        )
    }
}

impl fmt::Display for IntegrityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.table(), self.problem())
    }
}

impl std::error::Error for IntegrityError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_flipped_block() {
        let mut bytes: Vec<u8> = (0..10_000u32).map(|i| i as u8).collect();
        let sums = BlockSums::of(&bytes, 4096);
        assert_eq!(sums.sums.len(), 3);
        let round = BlockSums::from_bytes(&sums.to_bytes(), 4096, 10_000).unwrap();
        assert_eq!(round, sums);
        let checker = BlockChecker::from_sums(sums);
        assert_eq!(checker.check(0, &bytes).unwrap(), Ok(()));
        bytes[5000] ^= 1;
        assert_eq!(checker.check(0, &bytes).unwrap(), Err(4096));
        assert_eq!(checker.check(8192, &bytes[8192..]).unwrap(), Ok(()));
    }

    #[test]
    fn checks_from_a_file_as_from_memory() {
        let mut bytes: Vec<u8> = (0..20_000u32).map(|i| (i * 7) as u8).collect();
        let sums = BlockSums::of(&bytes, 4096);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.sums");
        std::fs::write(&path, sums.to_bytes()).unwrap();
        let handles = HandlePool::new(4);
        let memory = BlockChecker::open(&handles, &path, 4096, 20_000).unwrap();
        let file = BlockChecker {
            source: SumSource::File(PooledFile::open(&handles, &path).unwrap().0),
            ..BlockChecker::open(&handles, &path, 4096, 20_000).unwrap()
        };
        bytes[9000] ^= 4;
        for checker in [memory, file] {
            assert_eq!(checker.check(0, &bytes[..4096]).unwrap(), Ok(()));
            assert_eq!(checker.check(4096, &bytes[4096..16384]).unwrap(), Err(8192));
            assert_eq!(checker.check(16384, &bytes[16384..]).unwrap(), Ok(()));
        }
        assert!(matches!(
            BlockChecker::open(&handles, &path, 4096, 30_000),
            Err(SumsError::WrongLength { .. })
        ));
        let missing = BlockChecker::open(&handles, &dir.path().join("none"), 4096, 20_000);
        assert!(matches!(missing, Err(SumsError::Io(_))));
    }

    #[test]
    fn widens_to_blocks_within_the_file() {
        let sums = BlockChecker::from_sums(BlockSums::of(&[0; 10_000], 4096));
        assert_eq!(sums.widen(10, 6), (0, 4096));
        assert_eq!(sums.widen(4000, 200), (0, 8192));
        assert_eq!(sums.widen(9000, 1028), (8192, 10_000));
    }
}
