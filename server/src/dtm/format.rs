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

use shakmaty_syzygy::filesystem::{Filesystem, OsFilesystem, RandomAccessFile, ReadHint};

use super::{
    ProphetError,
    block_cache::BlockCache,
    index::{Layout, ProphetMaterial},
};
use crate::store::layout::{TableKind, TableLayout, file_name};

const HEADER_BYTES: u64 = 24;

/// Positions per block, the generator's (every published file has it).
/// Besides [`EMBEDDED_BLOCK_POSITIONS`], no other size is accepted: it
/// would be a hostile or damaged header's: above 65,535 the block list
/// switches to u32 lengths, and one "block" could then be as large as the
/// file, read and decompressed whole on every lookup.
pub const BLOCK_POSITIONS: u64 = 32768;

/// Positions per block of the tables compiled into the binary: server/build.rs
/// re-blocks them, since a lookup decompresses its whole block and a
/// generator's block is 64 KiB of values.
pub const EMBEDDED_BLOCK_POSITIONS: u64 = 4096;

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
        let parsed = Header::parse(&header, expected_positions).map_err(corrupt)?;
        let Header {
            checksum,
            num_positions,
            block_positions,
            ..
        } = parsed;
        let list_bytes = parsed.list_bytes();
        if HEADER_BYTES + list_bytes > size {
            return Err(corrupt(format!(
                "{size} bytes, too short for its list of {} block sizes",
                parsed.blocks
            )));
        }
        let mut list = vec![0u8; list_bytes as usize];
        file.read_exact_at(&mut list, HEADER_BYTES, ReadHint::BlockLengths)
            .map_err(read_err)?;
        let mut offsets = Vec::with_capacity(parsed.blocks as usize + 1);
        let mut offset = HEADER_BYTES + list_bytes;
        offsets.push(offset);
        for length in parsed.block_lengths(&list).map_err(corrupt)? {
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

    /// Where the first block begins: the header and the block list before
    /// it are what the fast tier keeps (`tier build`).
    pub fn prefix_len(&self) -> u64 {
        self.offsets.first().copied().unwrap_or(HEADER_BYTES)
    }

    /// The file's length (checked at open to be exactly header, list and blocks).
    pub fn file_size(&self) -> u64 {
        self.offsets.last().copied().unwrap_or(HEADER_BYTES)
    }

    /// Number of blocks.
    pub fn blocks(&self) -> u64 {
        self.offsets.len().saturating_sub(1) as u64
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
                // The decompressed Vec itself is kept: into an `Arc<[u8]>`
                // it would be copied, 64 KiB per load.
                let values = Arc::new(self.load_block(block)?);
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
        decompress(decompressor, &compressed, positions, values)
            .map_err(|what| self.corrupt(format!("block {block} {what}")))
    }

    /// Decompresses every block and compares the values' checksum with the
    /// header's (Prophet's own integrity check: the XOR over all indexes of
    /// `index << 10 | |value|`). Damage inside a block that zstd still
    /// decodes is only found this way (the frames carry no checksum).
    pub fn verify(&self) -> Result<(), ProphetError> {
        let mut sum = 0u64;
        self.each_block(|first, values| sum ^= values_sum(first, values))?;
        compare_sums(sum, self.checksum).map_err(|what| self.corrupt(what))
    }

    /// Decompresses every block in order, handing `visit` the index of its
    /// first value and its values.
    pub(crate) fn each_block(&self, mut visit: impl FnMut(u64, &[u8])) -> Result<(), ProphetError> {
        let mut decompressor =
            zstd::bulk::Decompressor::new().map_err(|source| ProphetError::Read {
                path: self.path.clone(),
                source,
            })?;
        let mut values = Vec::new();
        for block in 0..self.blocks() {
            self.decompress_block(&mut decompressor, block, &mut values)?;
            visit(block * self.block_positions, &values);
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

/// The suffix of a Prophet table file (`KBNK.egtb.bz`).
pub const SUFFIX: &str = ".egtb.bz";

/// The name of the md5 lists the generator's users write beside tables
/// (read by `catalog`; a remote source lists them with the tables).
pub const MD5SUMS: &str = "MD5SUMS";

/// The material of a Prophet table file name (`KBNK.egtb.bz`), if the name
/// is one (the canonical spelling only, as the generator writes it).
pub fn material_of_name(file: &str) -> Option<ProphetMaterial> {
    ProphetMaterial::from_name(file.strip_suffix(SUFFIX)?)
}

/// Whether a file name is a Prophet table's.
pub fn is_table_name(file: &str) -> bool {
    material_of_name(file).is_some()
}

/// How deep below a table directory Prophet files are looked for: the
/// generator's `Nmen/Mpawns/` layout is two levels (the reader, like
/// Prophet's, goes one further).
pub const SEARCH_DEPTH: u32 = 3;

/// The Prophet table files in the directories and their subdirectories
/// (down to [`SEARCH_DEPTH`] levels: the generator writes
/// `4men/0pawns/KBNK.egtb.bz`, a flat directory works too), sorted by file
/// name. Directories that cannot be listed are reported in `failures`
/// (name, problem), as [`crate::store::layout::table_files`] does; hidden
/// directories (`.zugzwang`) are skipped.
pub fn table_files(dirs: &[PathBuf], failures: &mut Vec<(String, String)>) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in dirs {
        collect_files(dir, SEARCH_DEPTH, &mut files, failures);
    }
    files.sort_by(|a, b| a.file_name().cmp(&b.file_name()).then(a.cmp(b)));
    files
}

fn collect_files(
    dir: &Path,
    depth: u32,
    files: &mut Vec<PathBuf>,
    failures: &mut Vec<(String, String)>,
) {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(err) => {
            failures.push((
                dir.display().to_string(),
                format!("cannot list the directory: {err}"),
            ));
            return;
        }
    };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let kind = if kind.is_symlink() {
            match std::fs::metadata(&path) {
                Ok(meta) => meta.file_type(),
                Err(_) => continue,
            }
        } else {
            kind
        };
        if kind.is_file() && is_table_name(name) {
            files.push(path);
        } else if kind.is_dir() && depth > 0 && !name.starts_with('.') {
            collect_files(&path, depth - 1, files, failures);
        }
    }
}

/// Where the parts of a Prophet file lie, for the fast tier: the header
/// and the block list are the prefix, the blocks the data (checked as
/// [`TableFile::open`] checks them: the header against the material the
/// name says, the length against header, list and blocks).
pub fn layout(path: &Path) -> Result<TableLayout, ProphetError> {
    layout_in(&OsFilesystem::new(), path)
}

/// [`layout`] of a file `filesystem` reads (a remote source's object).
pub fn layout_in(filesystem: &dyn Filesystem, path: &Path) -> Result<TableLayout, ProphetError> {
    let name = file_name(path);
    let material = material_of_name(&name).ok_or_else(|| ProphetError::Corrupt {
        path: path.to_owned(),
        what: "not a Prophet table name (expected e.g. KBNK.egtb.bz)".to_owned(),
    })?;
    let positions = Layout::new(material).num_positions();
    let table = TableFile::open(filesystem, path, positions)?;
    let prefix_len = table.prefix_len();
    Ok(TableLayout {
        kind: TableKind::Dtm,
        file_size: table.file_size(),
        header_bytes: HEADER_BYTES,
        sparse_index_bytes: 0,
        block_length_bytes: prefix_len - HEADER_BYTES,
        prefix_len,
        subtables: Vec::new(),
    })
}

/// A file's header, checked against what its material implies.
struct Header {
    checksum: u64,
    num_positions: u64,
    block_positions: u64,
    blocks: u64,
    /// Bytes per entry of the block list: 2, or 4 for blocks of more than
    /// 65535 positions.
    width: u64,
}

impl Header {
    fn parse(
        bytes: &[u8; HEADER_BYTES as usize],
        expected_positions: u64,
    ) -> Result<Header, String> {
        let word = |i: usize| {
            let mut word = [0u8; 8];
            word.copy_from_slice(&bytes[i * 8..i * 8 + 8]);
            u64::from_le_bytes(word)
        };
        let (checksum, num_positions, block_positions) = (word(0), word(1), word(2));
        if num_positions != expected_positions {
            return Err(format!(
                "the header says {num_positions} positions, the material has {expected_positions}"
            ));
        }
        if block_positions != BLOCK_POSITIONS && block_positions != EMBEDDED_BLOCK_POSITIONS {
            return Err(format!(
                "the header says {block_positions} positions per block, not the \
                 generator's {BLOCK_POSITIONS} (nor the embedded tables' \
                 {EMBEDDED_BLOCK_POSITIONS})"
            ));
        }
        Ok(Header {
            checksum,
            num_positions,
            block_positions,
            blocks: num_positions.div_ceil(block_positions),
            width: if block_positions > u64::from(u16::MAX) {
                4
            } else {
                2
            },
        })
    }

    fn list_bytes(&self) -> u64 {
        self.blocks * self.width
    }

    /// The compressed length of every block, from the block list; each is
    /// at most zstd's bound for the block's values ([`max_block_bytes`]),
    /// so no lookup reads (or allocates) more than that.
    fn block_lengths(&self, list: &[u8]) -> Result<Vec<u64>, String> {
        list.chunks_exact(self.width as usize)
            .map(|entry| match *entry {
                [a, b] => u64::from(u16::from_le_bytes([a, b])),
                [a, b, c, d] => u64::from(u32::from_le_bytes([a, b, c, d])),
                _ => 0,
            })
            .zip(0..)
            .map(|(length, block)| {
                let bound = max_block_bytes(self.positions_in(block));
                match length {
                    0 => Err(format!("block {block} has length 0 in the block list")),
                    length if length > bound => Err(format!(
                        "block {block} is {length} bytes long in the block list, more than \
                         zstd's bound of {bound} for {} positions",
                        self.positions_in(block)
                    )),
                    length => Ok(length),
                }
            })
            .collect()
    }

    /// Positions in block `block` (the last one may be shorter).
    fn positions_in(&self, block: u64) -> u64 {
        self.block_positions
            .min(self.num_positions - block * self.block_positions)
    }
}

/// The most bytes a block of `positions` values can take compressed:
/// zstd's bound for its 2-byte values (a frame never needs more).
fn max_block_bytes(positions: u64) -> u64 {
    zstd::zstd_safe::compress_bound(positions as usize * 2) as u64
}

/// The most bytes a Prophet file named `file` can have and still open: the
/// header, a 2-byte length per block and every block at zstd's bound, for
/// the positions its material has. `None` for a name that is not a
/// Prophet table's. (`tables fetch` stops a transfer there: no size is
/// published for these files.)
pub fn max_file_size(file: &str) -> Option<u64> {
    let positions = Layout::new(material_of_name(file)?).num_positions();
    let blocks = positions.div_ceil(BLOCK_POSITIONS);
    Some(HEADER_BYTES + blocks * (2 + max_block_bytes(BLOCK_POSITIONS)))
}

/// Decompresses one block of `positions` values into `values`, which must
/// come out exactly that long; the error says what is wrong with the block.
fn decompress(
    decompressor: &mut zstd::bulk::Decompressor<'static>,
    compressed: &[u8],
    positions: u64,
    values: &mut Vec<u8>,
) -> Result<(), String> {
    let expected = positions as usize * 2;
    values.clear();
    // Exactly the block's size: the cache weighs a block by its capacity,
    // and one spare byte put each block in the allocator's next size class
    // (8,193 bytes take 10 KiB). A frame that decodes to more fails here;
    // zstd writes into the spare capacity, so nothing is zeroed first.
    values.reserve_exact(expected);
    let written = decompressor
        .decompress_to_buffer(compressed, values)
        .map_err(|e| format!("does not decompress to its {expected} bytes: {e}"))?;
    if written != expected {
        return Err(format!("decompresses to {written} bytes, not {expected}"));
    }
    Ok(())
}

/// Prophet's checksum of one block's values, the first at index `first`:
/// the XOR of `index << 10 | |value|`. While every `|value|` is below
/// 1024 (always, in a sound table) the two parts share no bit, so the sum
/// is the XOR of the indexes, which has a closed form, shifted, and the
/// XOR of the values, a loop the compiler vectorizes: a table's check on
/// first use then costs its decompression and little more.
fn values_sum(first: u64, values: &[u8]) -> u64 {
    let mut values_xor = 0u16;
    let mut widest = 0u16;
    for pair in values.chunks_exact(2) {
        let value = i16::from_le_bytes([pair[0], pair[1]]).unsigned_abs();
        values_xor ^= value;
        widest |= value;
    }
    let count = (values.len() / 2) as u64;
    if widest >= 1 << 10 || count == 0 {
        return values_sum_each(first, values);
    }
    let indexes = xor_up_to(first + count - 1) ^ first.checked_sub(1).map_or(0, xor_up_to);
    (indexes << 10) ^ u64::from(values_xor)
}

/// [`values_sum`] one value at a time, for values of 1024 or more.
fn values_sum_each(first: u64, values: &[u8]) -> u64 {
    values
        .chunks_exact(2)
        .enumerate()
        .fold(0, |sum, (i, pair)| {
            let value = i16::from_le_bytes([pair[0], pair[1]]);
            sum ^ (((first + i as u64) << 10) | u64::from(value.unsigned_abs()))
        })
}

/// The XOR of 0, 1, ..., `n`.
fn xor_up_to(n: u64) -> u64 {
    match n % 4 {
        0 => n,
        1 => 1,
        2 => n + 1,
        _ => 0,
    }
}

fn compare_sums(sum: u64, header: u64) -> Result<(), String> {
    if sum == header {
        Ok(())
    } else {
        Err(format!(
            "its values' checksum is {sum:#x}, the header says {header:#x}"
        ))
    }
}

/// Prophet's own check of a file (the header's checksum over all values,
/// the block list, the length), made on its bytes as they are read once,
/// start to end, beside other digests: `tier build`, `verify` and the scrub
/// read each file once for everything. Feed every byte in order with
/// [`StreamCheck::feed`], then call [`StreamCheck::finish`].
pub struct StreamCheck {
    path: PathBuf,
    expected_positions: u64,
    header: Option<Header>,
    lengths: Vec<u64>,
    /// The next block to complete (once the list is read).
    block: u64,
    /// Bytes of the part being read (header, list or a block).
    pending: Vec<u8>,
    decompressor: Option<zstd::bulk::Decompressor<'static>>,
    values: Vec<u8>,
    sum: u64,
    /// Bytes fed so far.
    read: u64,
    /// The first problem found; the rest of the file is then ignored.
    failed: Option<String>,
}

impl StreamCheck {
    /// A check of the file at `path` (its name says its material).
    pub fn new(path: &Path) -> Result<StreamCheck, ProphetError> {
        let material = material_of_name(&file_name(path)).ok_or_else(|| ProphetError::Corrupt {
            path: path.to_owned(),
            what: "not a Prophet table name (expected e.g. KBNK.egtb.bz)".to_owned(),
        })?;
        Ok(StreamCheck {
            path: path.to_owned(),
            expected_positions: Layout::new(material).num_positions(),
            header: None,
            lengths: Vec::new(),
            block: 0,
            pending: Vec::new(),
            decompressor: None,
            values: Vec::new(),
            sum: 0,
            read: 0,
            failed: None,
        })
    }

    /// The bytes the part being read still needs (0 once the file is complete).
    fn wanted(&self) -> u64 {
        match &self.header {
            None => HEADER_BYTES,
            Some(header) if self.lengths.is_empty() => header.list_bytes(),
            Some(_) => self.lengths.get(self.block as usize).copied().unwrap_or(0),
        }
    }

    /// The next bytes of the file.
    pub fn feed(&mut self, mut bytes: &[u8]) {
        self.read += bytes.len() as u64;
        while !bytes.is_empty() && self.failed.is_none() {
            let wanted = self.wanted();
            if wanted == 0 {
                self.failed = Some(format!(
                    "its header and block list describe {} bytes, but there are more \
                     (appended to)",
                    self.described()
                ));
                return;
            }
            let take = ((wanted - self.pending.len() as u64) as usize).min(bytes.len());
            self.pending.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            if self.pending.len() as u64 == wanted {
                if let Err(what) = self.complete_part() {
                    self.failed = Some(what);
                }
                self.pending.clear();
            }
        }
    }

    /// Bytes the header and the block list describe (so far).
    fn described(&self) -> u64 {
        HEADER_BYTES
            + self.header.as_ref().map_or(0, Header::list_bytes)
            + self.lengths.iter().sum::<u64>()
    }

    fn complete_part(&mut self) -> Result<(), String> {
        let Some(header) = &self.header else {
            let mut bytes = [0u8; HEADER_BYTES as usize];
            bytes.copy_from_slice(&self.pending);
            self.header = Some(Header::parse(&bytes, self.expected_positions)?);
            return Ok(());
        };
        if self.lengths.is_empty() {
            self.lengths = header.block_lengths(&self.pending)?;
            return Ok(());
        }
        if self.decompressor.is_none() {
            self.decompressor = Some(
                zstd::bulk::Decompressor::new()
                    .map_err(|e| format!("cannot start decompressing: {e}"))?,
            );
        }
        let Some(decompressor) = self.decompressor.as_mut() else {
            return Err("no decompression context".to_owned());
        };
        let block = self.block;
        decompress(
            decompressor,
            &self.pending,
            header.positions_in(block),
            &mut self.values,
        )
        .map_err(|what| format!("block {block} {what}"))?;
        self.sum ^= values_sum(block * header.block_positions, &self.values);
        self.block += 1;
        Ok(())
    }

    /// Whether the file was complete and its values' checksum is the
    /// header's; the error names the file and what is wrong.
    pub fn finish(self) -> Result<(), ProphetError> {
        let corrupt = |what: String| ProphetError::Corrupt {
            path: self.path.clone(),
            what,
        };
        if let Some(what) = self.failed.clone() {
            return Err(corrupt(what));
        }
        let read = self.read;
        let Some(header) = &self.header else {
            return Err(corrupt(format!(
                "{read} bytes, shorter than the 24-byte header"
            )));
        };
        if self.lengths.is_empty() || self.block < header.blocks {
            return Err(corrupt(format!(
                "{read} bytes, but its header and block list describe more (truncated)"
            )));
        }
        compare_sums(self.sum, header.checksum).map_err(corrupt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_checksum_of_a_block_is_the_same_summed_at_once_or_value_by_value() {
        let mut seed = 0x2545_f491_u32;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed
        };
        for (first, count, range) in [(0, 1, 1000), (32768 * 7, 32768, 2001), (5, 100, 2001)] {
            let values: Vec<u8> = (0..count)
                .flat_map(|_| ((next() % range) as i16 - (range / 2) as i16).to_le_bytes())
                .collect();
            assert_eq!(values_sum(first, &values), values_sum_each(first, &values));
        }
        // A value of 1024 or more takes the other road, to the same sum.
        let wide: Vec<u8> = [3i16, -1024, 999, i16::MIN]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        assert_eq!(values_sum(11, &wide), values_sum_each(11, &wide));
        assert_eq!(values_sum(11, &[]), 0);
    }

    /// A block comes out exactly its positions long, in a buffer of exactly
    /// that size (what the cache weighs); a frame holding more or fewer
    /// values is an error, never a block.
    #[test]
    fn a_block_decompresses_to_exactly_its_positions() {
        let mut decompressor = zstd::bulk::Decompressor::new().expect("a zstd context");
        let mut values = Vec::new();
        let frame = |bytes: usize| zstd::bulk::compress(&vec![7u8; bytes], 3).expect("compresses");

        decompress(&mut decompressor, &frame(8192), 4096, &mut values).expect("one block");
        assert_eq!((values.len(), values.capacity()), (8192, 8192));
        assert_eq!(
            EMBEDDED_BLOCK_POSITIONS * 2,
            crate::dtm::block_cache::SMALL_BLOCK_BYTES
        );

        let long = decompress(&mut decompressor, &frame(8194), 4096, &mut values);
        assert!(long.is_err_and(|e| e.contains("does not decompress to its 8192 bytes")));
        let short = decompress(&mut decompressor, &frame(8190), 4096, &mut values);
        assert!(short.is_err_and(|e| e.contains("decompresses to 8190 bytes, not 8192")));
    }
}
