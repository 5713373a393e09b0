//! One Prophet table file (`*.egtb.bz`): its header and block-size list,
//! read once at open, and its zstd blocks of 16-bit values, one read and
//! decompressed per lookup.
//!
//! Layout (server/docs/prophet.md, "File"): three little-endian u64s
//! (checksum, number of positions, positions per block), then the
//! compressed size of every block (u16 each, or u32 when a block holds
//! more than 65535 positions), then the blocks, each one zstd frame of
//! little-endian i16 values. The checksum covers the decompressed values,
//! so it is only checked by [`TableFile::verify`], which reads everything.

use std::{
    cell::RefCell,
    io,
    path::{Path, PathBuf},
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
};

use shakmaty_syzygy::filesystem::{Filesystem, RandomAccessFile, ReadHint};

use super::{ProphetError, block_cache::BlockCache};

const HEADER_BYTES: u64 = 24;

/// Largest block (in positions) we accept: the generator writes 32768;
/// the limit keeps a damaged header from asking for a huge buffer.
const MAX_BLOCK_POSITIONS: u64 = 1 << 24;

/// Tells tables apart in the block cache.
static NEXT_TABLE_ID: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// One zstd context per thread: creating one per lookup costs an
    /// allocation of its work space.
    static DECOMPRESSOR: RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { RefCell::new(None) };
}

/// An open table file with its block directory.
pub struct TableFile {
    id: u64,
    path: PathBuf,
    file: Box<dyn RandomAccessFile>,
    checksum: u64,
    num_positions: u64,
    block_positions: u64,
    /// File offset of each block, and one past the last: block `i` is
    /// `offsets[i]..offsets[i + 1]`.
    offsets: Vec<u64>,
}

impl std::fmt::Debug for TableFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableFile")
            .field("path", &self.path)
            .field("num_positions", &self.num_positions)
            .field("block_positions", &self.block_positions)
            .field("blocks", &(self.offsets.len().saturating_sub(1)))
            .finish()
    }
}

impl TableFile {
    /// Opens `path` and reads its header and block list. `expected_positions`
    /// is what the table's material implies ([`super::index::Layout`]); a
    /// header that says otherwise, a block list that does not fit, or a file
    /// whose length is not exactly header + list + blocks (truncated or with
    /// bytes appended) is refused here, before any lookup.
    pub fn open(
        filesystem: &dyn Filesystem,
        path: &Path,
        expected_positions: u64,
    ) -> Result<TableFile, ProphetError> {
        let read_err = |source: io::Error| ProphetError::Read {
            path: path.to_owned(),
            source,
        };
        let corrupt = |what: String| ProphetError::Corrupt {
            path: path.to_owned(),
            what,
        };
        let size = filesystem.regular_file_size(path).map_err(read_err)?;
        let file = filesystem.open(path).map_err(read_err)?;
        if size < HEADER_BYTES {
            return Err(corrupt(format!(
                "{size} bytes, shorter than the 24-byte header"
            )));
        }
        let mut header = [0u8; HEADER_BYTES as usize];
        file.read_exact_at(&mut header, 0, ReadHint::Header)
            .map_err(read_err)?;
        let word = |i: usize| {
            let mut bytes = [0u8; 8];
            bytes.copy_from_slice(&header[i * 8..i * 8 + 8]);
            u64::from_le_bytes(bytes)
        };
        let (checksum, num_positions, block_positions) = (word(0), word(1), word(2));
        if num_positions != expected_positions {
            return Err(corrupt(format!(
                "the header says {num_positions} positions, the material has {expected_positions}"
            )));
        }
        if block_positions == 0 || block_positions > MAX_BLOCK_POSITIONS {
            return Err(corrupt(format!(
                "the header says {block_positions} positions per block"
            )));
        }
        let blocks = num_positions.div_ceil(block_positions);
        let width: u64 = if block_positions > u64::from(u16::MAX) {
            4
        } else {
            2
        };
        let list_bytes = blocks * width;
        if HEADER_BYTES + list_bytes > size {
            return Err(corrupt(format!(
                "{size} bytes, too short for its list of {blocks} block sizes"
            )));
        }
        let mut list = vec![0u8; list_bytes as usize];
        file.read_exact_at(&mut list, HEADER_BYTES, ReadHint::BlockLengths)
            .map_err(read_err)?;
        let mut offsets = Vec::with_capacity(blocks as usize + 1);
        let mut offset = HEADER_BYTES + list_bytes;
        offsets.push(offset);
        for entry in list.chunks_exact(width as usize) {
            let length = match *entry {
                [a, b] => u64::from(u16::from_le_bytes([a, b])),
                [a, b, c, d] => u64::from(u32::from_le_bytes([a, b, c, d])),
                _ => 0,
            };
            if length == 0 {
                return Err(corrupt("a block of length 0 in the block list".to_owned()));
            }
            offset += length;
            offsets.push(offset);
        }
        if offset != size {
            return Err(corrupt(format!(
                "{size} bytes, but its header and block list describe {offset} \
                 (truncated or appended to)"
            )));
        }
        Ok(TableFile {
            id: NEXT_TABLE_ID.fetch_add(1, Ordering::Relaxed),
            path: path.to_owned(),
            file,
            checksum,
            num_positions,
            block_positions,
            offsets,
        })
    }

    /// The file this table was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's length in bytes (header, block list and blocks).
    pub fn size(&self) -> u64 {
        self.offsets.last().copied().unwrap_or(HEADER_BYTES)
    }

    /// The stored 16-bit value at `index`: from its block in `cache`, or
    /// read, decompressed and kept there.
    pub fn value(&self, index: u64, cache: &BlockCache) -> Result<i16, ProphetError> {
        if index >= self.num_positions {
            return Err(self.corrupt(format!(
                "index {index} is past its {} positions",
                self.num_positions
            )));
        }
        let block = index / self.block_positions;
        let within = (index % self.block_positions) as usize;
        let values = match cache.get((self.id, block)) {
            Some(values) => values,
            None => {
                let values: Arc<[u8]> = self.load_block(block)?.into();
                cache.insert((self.id, block), Arc::clone(&values));
                values
            }
        };
        let bytes = values
            .get(within * 2..within * 2 + 2)
            .ok_or_else(|| self.corrupt(format!("block {block} is short")))?;
        Ok(i16::from_le_bytes([bytes[0], bytes[1]]))
    }

    /// Reads and decompresses one block with this thread's zstd context.
    fn load_block(&self, block: u64) -> Result<Vec<u8>, ProphetError> {
        DECOMPRESSOR.with(|cell| {
            let mut slot = cell.borrow_mut();
            let decompressor = match slot.as_mut() {
                Some(decompressor) => decompressor,
                None => slot.insert(zstd::bulk::Decompressor::new().map_err(|source| {
                    ProphetError::Read {
                        path: self.path.clone(),
                        source,
                    }
                })?),
            };
            let mut values = Vec::new();
            self.decompress_block(decompressor, block, &mut values)?;
            Ok(values)
        })
    }

    /// Reads and decompresses block `block` into `values`, which must come
    /// out exactly as long as the block's positions.
    fn decompress_block(
        &self,
        decompressor: &mut zstd::bulk::Decompressor<'static>,
        block: u64,
        values: &mut Vec<u8>,
    ) -> Result<(), ProphetError> {
        let (Some(&start), Some(&end)) = (
            self.offsets.get(block as usize),
            self.offsets.get(block as usize + 1),
        ) else {
            return Err(self.corrupt(format!("no block {block}")));
        };
        let mut compressed = vec![0u8; (end - start) as usize];
        self.file
            .read_exact_at(&mut compressed, start, ReadHint::Data)
            .map_err(|source| ProphetError::Read {
                path: self.path.clone(),
                source,
            })?;
        let positions = self
            .block_positions
            .min(self.num_positions - block * self.block_positions);
        let expected = positions as usize * 2;
        values.clear();
        // One spare byte: a frame that decodes to more than the block's
        // positions is then caught as a wrong length, not a short buffer.
        values.resize(expected + 1, 0);
        let written = decompressor
            .decompress_to_buffer(&compressed, &mut values[..])
            .map_err(|e| self.corrupt(format!("block {block} does not decompress: {e}")))?;
        if written != expected {
            return Err(self.corrupt(format!(
                "block {block} decompresses to {written} bytes, not {expected}"
            )));
        }
        values.truncate(expected);
        Ok(())
    }

    /// Decompresses every block and compares the values' checksum with the
    /// header's (Prophet's own integrity check: the XOR over all indexes of
    /// `index << 10 | |value|`). Damage inside a block that zstd still
    /// decodes is only found this way (the frames carry no checksum).
    pub fn verify(&self) -> Result<(), ProphetError> {
        let mut decompressor =
            zstd::bulk::Decompressor::new().map_err(|source| ProphetError::Read {
                path: self.path.clone(),
                source,
            })?;
        let mut values = Vec::new();
        let mut sum = 0u64;
        for block in 0..self.offsets.len().saturating_sub(1) as u64 {
            self.decompress_block(&mut decompressor, block, &mut values)?;
            for (i, pair) in values.chunks_exact(2).enumerate() {
                let index = block * self.block_positions + i as u64;
                let value = i16::from_le_bytes([pair[0], pair[1]]);
                sum ^= (index << 10) | u64::from(value.unsigned_abs());
            }
        }
        if sum != self.checksum {
            return Err(self.corrupt(format!(
                "its values' checksum is {sum:#x}, the header says {:#x}",
                self.checksum
            )));
        }
        Ok(())
    }

    fn corrupt(&self, what: String) -> ProphetError {
        ProphetError::Corrupt {
            path: self.path.clone(),
            what,
        }
    }
}
