//! Where the parts of a Syzygy table file lie, read from its header.
//!
//! The tiered store needs one number per table: where the compressed data
//! blocks begin. Everything before it (header, sparse block-length index,
//! block-length list) is touched on every lookup and belongs on fast storage;
//! everything after it is the bulk, touched once per lookup. Finding that
//! number means walking the whole header, including the size of each sparse
//! index, which depends on the number of positions the subtable encodes.
//!
//! The file layout: magic (4 bytes), layout flags (1), per pawn file the piece
//! orders and the piece list, padding to even, per subtable a compression
//! header (flags, block size, span, padding, block count, Huffman symbol
//! lengths and tree), for DTZ the value maps, padding to even, then all sparse
//! indexes (6 bytes per entry), all block-length lists (2 bytes per block),
//! and finally each subtable's data blocks, each run aligned to 64 bytes.

use std::{
    fs::{self, File},
    io,
    ops::Range,
    os::unix::fs::FileExt,
    path::{Path, PathBuf},
};

use app::{material::Material, variant::Variant};
use shakmaty::Role;
use shakmaty_syzygy::Metric;

/// Which of the two table kinds a file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TableKind {
    /// Win/draw/loss (`.?tbw`).
    Wdl,
    /// Distance to zeroing (`.?tbz`).
    Dtz,
    /// Depth to mate, a Prophet table (`.egtb.bz`, laid out by
    /// `dtm::format::layout`).
    Dtm,
}

impl TableKind {
    pub fn label(self) -> &'static str {
        match self {
            TableKind::Wdl => "WDL",
            TableKind::Dtz => "DTZ",
            TableKind::Dtm => "DTM",
        }
    }
}

/// The variant families and how their table files are named and marked.
struct Family {
    ext: &'static str,
    kind: TableKind,
    magic: [u8; 4],
    /// Kings may stand next to each other (atomic, antichess): changes the
    /// number of king placements encoded.
    connected_kings: bool,
}

const FAMILIES: [Family; 8] = [
    Family {
        ext: "rtbw",
        kind: TableKind::Wdl,
        magic: [0x71, 0xe8, 0x23, 0x5d],
        connected_kings: false,
    },
    Family {
        ext: "rtbz",
        kind: TableKind::Dtz,
        magic: [0xd7, 0x66, 0x0c, 0xa5],
        connected_kings: false,
    },
    Family {
        ext: "atbw",
        kind: TableKind::Wdl,
        magic: [0x55, 0x8d, 0xa4, 0x49],
        connected_kings: true,
    },
    Family {
        ext: "atbz",
        kind: TableKind::Dtz,
        magic: [0x91, 0xa9, 0x5e, 0xeb],
        connected_kings: true,
    },
    Family {
        ext: "gtbw",
        kind: TableKind::Wdl,
        magic: [0xbc, 0x55, 0xbc, 0x21],
        connected_kings: true,
    },
    Family {
        ext: "gtbz",
        kind: TableKind::Dtz,
        magic: [0xd6, 0xf5, 0x1b, 0x50],
        connected_kings: true,
    },
    Family {
        ext: "stbw",
        kind: TableKind::Wdl,
        magic: [0x7b, 0xf6, 0x93, 0x15],
        connected_kings: true,
    },
    Family {
        ext: "stbz",
        kind: TableKind::Dtz,
        magic: [0xe4, 0xcf, 0xe7, 0x23],
        connected_kings: true,
    },
];

/// Whether a file name looks like a Syzygy table of any variant (by suffix).
pub fn is_table_name(name: &str) -> bool {
    name.rsplit_once('.')
        .is_some_and(|(stem, ext)| FAMILIES.iter().any(|f| f.ext == ext) && stem.contains('v'))
}

/// The extension of a standard table of the metric.
pub fn extension(metric: Metric) -> &'static str {
    match metric {
        Metric::Wdl => "rtbw",
        Metric::Dtz => "rtbz",
    }
}

/// The file name of a standard table, e.g. `KQvK.rtbz`.
pub fn table_name(material: impl std::fmt::Display, metric: Metric) -> String {
    format!("{material}.{}", extension(metric))
}

/// The extension of a variant's table of the metric; antichess tables
/// without pawns use the suicide suffixes (`.stbw`), as published.
pub fn variant_extension(variant: Variant, metric: Metric, has_pawns: bool) -> &'static str {
    match (variant, metric) {
        (Variant::Standard, _) => extension(metric),
        (Variant::Atomic, Metric::Wdl) => "atbw",
        (Variant::Atomic, Metric::Dtz) => "atbz",
        (Variant::Antichess, Metric::Wdl) if has_pawns => "gtbw",
        (Variant::Antichess, Metric::Dtz) if has_pawns => "gtbz",
        (Variant::Antichess, Metric::Wdl) => "stbw",
        (Variant::Antichess, Metric::Dtz) => "stbz",
    }
}

/// The file name of a variant's table, e.g. `KQvK.atbz` or `BBvK.stbw`.
pub fn variant_table_name(
    variant: Variant,
    material: impl std::fmt::Display,
    metric: Metric,
) -> String {
    let material = material.to_string();
    let has_pawns = material.contains('P');
    format!(
        "{material}.{}",
        variant_extension(variant, metric, has_pawns)
    )
}

/// Which variant's tables a file name is for, by its suffix.
pub fn variant_of_name(name: &str) -> Option<Variant> {
    let (_, ext) = name.rsplit_once('.')?;
    match ext {
        "rtbw" | "rtbz" => Some(Variant::Standard),
        "atbw" | "atbz" => Some(Variant::Atomic),
        "gtbw" | "gtbz" | "stbw" | "stbz" => Some(Variant::Antichess),
        _ => None,
    }
}

/// A table file's name, as errors and metrics name it.
pub fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || "(unnamed table)".to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// Table files of the directories, sorted by name; unreadable directories
/// are reported as failures.
pub fn table_files(dirs: &[PathBuf], failures: &mut Vec<(String, String)>) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in dirs {
        match fs::read_dir(dir) {
            Ok(entries) => files.extend(entries.filter_map(Result::ok).map(|e| e.path()).filter(
                |p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(is_table_name)
                },
            )),
            Err(err) => failures.push((
                dir.display().to_string(),
                format!("cannot list the directory: {err}"),
            )),
        }
    }
    files.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
    files
}

/// One subtable's regions (one side to move of one leading-pawn file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subtable {
    pub sparse_index: Range<u64>,
    pub block_lengths: Range<u64>,
    pub data: Range<u64>,
    pub block_size: u32,
    pub blocks: u32,
}

/// The regions of one table file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableLayout {
    pub kind: TableKind,
    pub file_size: u64,
    /// Bytes before the first sparse index: magic, piece lists, compression
    /// headers, DTZ maps.
    pub header_bytes: u64,
    pub sparse_index_bytes: u64,
    /// Block-length lists plus the alignment padding before the data.
    pub block_length_bytes: u64,
    /// Where the first data block begins: the length of the prefix.
    pub prefix_len: u64,
    pub subtables: Vec<Subtable>,
}

impl TableLayout {
    /// Bytes from the first data block to the end of the file.
    pub fn data_bytes(&self) -> u64 {
        self.file_size - self.prefix_len
    }
}

#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    #[error("{name}: not a Syzygy table name (expected e.g. KQvKR.rtbw)")]
    Name { name: String },
    #[error("{name}: cannot read the header: {source}")]
    Io { name: String, source: io::Error },
    #[error("{name}: not a {ext} table (starts with bytes {magic:02x?}); replace the file")]
    Magic {
        name: String,
        ext: &'static str,
        magic: [u8; 4],
    },
    #[error("{name}: corrupted header: {detail}; check the file against the published checksums")]
    Corrupt { name: String, detail: String },
    #[error(
        "{name}: truncated: the data blocks end at byte {needed} but the file has {size} bytes"
    )]
    Truncated {
        name: String,
        needed: u64,
        size: u64,
    },
}

/// Positioned reads, so the parser works on files and on bytes in memory.
pub trait ReadAt {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()>;
}

impl ReadAt for File {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        FileExt::read_exact_at(self, buf, offset)
    }
}

impl ReadAt for [u8] {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let start = usize::try_from(offset).map_err(|_| io::ErrorKind::UnexpectedEof)?;
        let src = start
            .checked_add(buf.len())
            .and_then(|end| self.get(start..end))
            .ok_or(io::ErrorKind::UnexpectedEof)?;
        buf.copy_from_slice(src);
        Ok(())
    }
}

/// Pieces of one colour and role, as the header's nibbles encode them
/// (low three bits the role, bit 3 black).
type Nibble = u8;

/// The material of a file's name counted as the header writes pieces, by
/// nibble (1..=6 white, 9..=14 black), so the header's piece lists compare
/// with it directly.
struct NibbleCounts {
    counts: [u8; 16],
}

impl NibbleCounts {
    /// From a name such as `KRPvKP`, its first side white as in the file.
    fn parse(stem: &str) -> Option<NibbleCounts> {
        let material = Material::parse(stem)?;
        let mut counts = [0u8; 16];
        for (side, colour_bit) in [(material.first, 0), (material.second, 8)] {
            for role in Role::ALL {
                counts[role as usize | colour_bit] = side.count(role);
            }
        }
        Some(NibbleCounts { counts })
    }

    fn count(&self) -> usize {
        self.counts.iter().map(|&c| usize::from(c)).sum()
    }

    fn has_pawns(&self) -> bool {
        self.counts[1] + self.counts[9] > 0
    }

    fn both_have_pawns(&self) -> bool {
        self.counts[1] > 0 && self.counts[9] > 0
    }

    fn symmetric(&self) -> bool {
        self.counts[1..7] == self.counts[9..15]
    }

    fn unique_pieces(&self) -> usize {
        self.counts.iter().filter(|&&c| c == 1).count()
    }

    fn min_like_man(&self) -> usize {
        self.counts
            .iter()
            .filter(|&&c| c >= 2)
            .min()
            .map_or(0, |&c| usize::from(c))
    }

    /// Same pieces, whichever colour leads.
    fn matches(&self, nibbles: &[Nibble]) -> bool {
        let mut counts = [0u8; 16];
        for &n in nibbles {
            counts[usize::from(n & 0xf)] += 1;
        }
        let mut swapped = [0u8; 16];
        for (n, &c) in counts.iter().enumerate() {
            swapped[n ^ 8] = c;
        }
        counts == self.counts || swapped == self.counts
    }
}

fn binomial(n: u64, k: u64) -> u64 {
    if k > n {
        return 0;
    }
    let k = k.min(n - k);
    (0..k).fold(1u64, |acc, i| acc * (n - i) / (i + 1))
}

/// Number of encodings of `count` leading pawns when the most advanced of
/// them stands on `file` (a..d). Pawn squares of ranks 2 to 7 are numbered
/// 47 down to 0, file pairs a/h, b/g, c/f, d/e in turn, two per rank; the
/// other leading pawns take squares numbered below the first one.
fn lead_pawn_placements(count: usize, file: usize) -> u64 {
    (0..6u64)
        .map(|rank| binomial(47 - 12 * file as u64 - 2 * rank, count as u64 - 1))
        .sum()
}

/// Placements of `count` identical leading pieces when no piece is unique
/// (antichess): squares of the a1-d1-d4 triangle, each counted by the
/// placements of the others on squares ranked below it.
fn like_man_placements(count: usize) -> u64 {
    const BELOW: [u64; 10] = [63, 55, 47, 39, 31, 23, 15, 11, 7, 3];
    if count == 1 {
        return 10;
    }
    BELOW.iter().map(|&n| binomial(n, count as u64 - 1)).sum()
}

/// How many positions one subtable encodes: the product of the placements of
/// each group of pieces (the header's piece list, grouped as the generator
/// groups them).
fn positions(
    pieces: &[Nibble],
    material: &NibbleCounts,
    file: usize,
    connected_kings: bool,
) -> Option<u64> {
    let groups: Vec<usize> = {
        let first = if material.has_pawns() {
            0
        } else if material.unique_pieces() >= 3 {
            3
        } else if material.unique_pieces() == 2 {
            2
        } else {
            material.min_like_man()
        };
        let mut groups = Vec::new();
        if first > 0 {
            groups.push(first);
        }
        let rest = pieces.get(first..)?;
        groups.extend(rest.chunk_by(|a, b| a == b).map(<[u8]>::len));
        groups
    };
    let lead = *groups.first()?;
    let mut total = if material.has_pawns() {
        lead_pawn_placements(lead, file)
    } else if material.unique_pieces() >= 3 {
        31_332
    } else if material.unique_pieces() == 2 {
        if connected_kings { 518 } else { 462 }
    } else if lead == 2 {
        278
    } else {
        like_man_placements(lead)
    };
    let mut free = 64 - lead as u64;
    let mut rest = &groups[1..];
    if material.both_have_pawns() {
        let other = *rest.first()? as u64;
        total = total.checked_mul(binomial(48 - lead as u64, other))?;
        free -= other;
        rest = &rest[1..];
    }
    for &len in rest {
        total = total.checked_mul(binomial(free, len as u64))?;
        free = free.checked_sub(len as u64)?;
    }
    Some(total)
}

const FLAG_MAPPED: u8 = 2;
const FLAG_WIDE_DTZ: u8 = 16;
const FLAG_SINGLE_VALUE: u8 = 128;

/// What a subtable's compression header says about its sizes.
struct Compression {
    flags: u8,
    block_size: u32,
    sparse_entries: u64,
    block_length_entries: u64,
    blocks: u32,
}

/// Reads a table's header and locates its regions. `name` is the file name
/// (material and suffix decide how the header is read); `file_size` checks
/// that the data blocks fit.
pub fn parse(
    name: &str,
    file_size: u64,
    file: &(impl ReadAt + ?Sized),
) -> Result<TableLayout, FormatError> {
    let bad_name = || FormatError::Name {
        name: name.to_string(),
    };
    let (stem, ext) = name.rsplit_once('.').ok_or_else(bad_name)?;
    let family = FAMILIES
        .iter()
        .find(|f| f.ext == ext)
        .ok_or_else(bad_name)?;
    let material = NibbleCounts::parse(stem).ok_or_else(bad_name)?;
    let header = Header { name, file };

    let mut magic = [0u8; 4];
    header.read(0, &mut magic)?;
    if magic != family.magic {
        return Err(FormatError::Magic {
            name: name.to_string(),
            ext: family.ext,
            magic,
        });
    }
    let layout = header.byte(4)?;
    let split = layout & 1 != 0;
    let has_pawns = layout & 2 != 0;
    if has_pawns != material.has_pawns() {
        return Err(header.corrupt("the pawn flag does not match the material in the name"));
    }
    if split == material.symmetric() {
        return Err(header.corrupt("the split flag does not match the material in the name"));
    }
    let shape = Shape {
        files: if has_pawns { 4 } else { 1 },
        sides: if family.kind == TableKind::Wdl && split {
            2
        } else {
            1
        },
    };
    let mut ptr = 5u64;
    let pieces_by_subtable = header.piece_lists(&material, shape, &mut ptr)?;
    let compressions = header.compressions(&pieces_by_subtable, &material, family, &mut ptr)?;
    if family.kind == TableKind::Dtz {
        header.skip_value_maps(&compressions, shape, &mut ptr)?;
    }
    locate_regions(name, file_size, family.kind, ptr, &compressions)
}

/// Files (1, or 4 with pawns) and sides (2 for a split WDL table) of a table:
/// one subtable each.
#[derive(Debug, Clone, Copy)]
struct Shape {
    files: usize,
    sides: usize,
}

/// A table's header being read, named in every error.
struct Header<'a, F: ReadAt + ?Sized> {
    name: &'a str,
    file: &'a F,
}

impl<F: ReadAt + ?Sized> Header<'_, F> {
    fn corrupt(&self, detail: &str) -> FormatError {
        FormatError::Corrupt {
            name: self.name.to_string(),
            detail: detail.to_string(),
        }
    }

    fn read(&self, offset: u64, buf: &mut [u8]) -> Result<(), FormatError> {
        self.file.read_exact_at(buf, offset).map_err(|source| {
            if source.kind() == io::ErrorKind::UnexpectedEof {
                FormatError::Corrupt {
                    name: self.name.to_string(),
                    detail: format!("the header runs past the end of the file (at byte {offset})"),
                }
            } else {
                FormatError::Io {
                    name: self.name.to_string(),
                    source,
                }
            }
        })
    }

    fn byte(&self, offset: u64) -> Result<u8, FormatError> {
        let mut b = [0u8];
        self.read(offset, &mut b).map(|()| b[0])
    }

    fn word(&self, offset: u64) -> Result<u16, FormatError> {
        let mut b = [0u8; 2];
        self.read(offset, &mut b).map(|()| u16::from_le_bytes(b))
    }

    /// Piece lists: per file one (or with pawns on both sides two) order
    /// bytes, then one byte per piece holding both sides' nibbles.
    fn piece_lists(
        &self,
        material: &NibbleCounts,
        shape: Shape,
        ptr: &mut u64,
    ) -> Result<Vec<(usize, Vec<Nibble>)>, FormatError> {
        let both_pawns = material.both_have_pawns();
        let count = material.count();
        let mut pieces_by_subtable = Vec::new();
        for file_index in 0..shape.files {
            *ptr += 1 + u64::from(both_pawns);
            let mut raw = vec![0u8; count];
            self.read(*ptr, &mut raw)?;
            for side in 0..shape.sides {
                let nibbles: Vec<Nibble> = raw
                    .iter()
                    .map(|&b| if side == 0 { b & 0xf } else { b >> 4 })
                    .collect();
                if !material.matches(&nibbles) {
                    return Err(
                        self.corrupt("the piece list does not match the material in the name")
                    );
                }
                pieces_by_subtable.push((file_index, nibbles));
            }
            *ptr += count as u64;
        }
        *ptr += *ptr & 1;
        Ok(pieces_by_subtable)
    }

    /// Each subtable's compression header: block size, sparse index span,
    /// block count, Huffman code lengths and symbols.
    fn compressions(
        &self,
        pieces_by_subtable: &[(usize, Vec<Nibble>)],
        material: &NibbleCounts,
        family: &Family,
        ptr: &mut u64,
    ) -> Result<Vec<Compression>, FormatError> {
        let mut compressions = Vec::new();
        for (file_index, nibbles) in pieces_by_subtable {
            let flags = self.byte(*ptr)?;
            if flags & FLAG_SINGLE_VALUE != 0 {
                compressions.push(Compression {
                    flags,
                    block_size: 0,
                    sparse_entries: 0,
                    block_length_entries: 0,
                    blocks: 0,
                });
                *ptr += 2;
                continue;
            }
            let mut head = [0u8; 10];
            self.read(*ptr, &mut head)?;
            let block_size = 1u32
                .checked_shl(u32::from(head[1]))
                .filter(|&s| s <= 1024)
                .ok_or_else(|| self.corrupt("block size out of range"))?;
            let span = 1u64
                .checked_shl(u32::from(head[2]))
                .filter(|&s| s <= 1 << 32)
                .ok_or_else(|| self.corrupt("sparse index span out of range"))?;
            let blocks = u32::from_le_bytes([head[4], head[5], head[6], head[7]]);
            let (max_len, min_len) = (head[8], head[9]);
            if max_len > 32 || min_len > max_len {
                return Err(self.corrupt("Huffman code lengths out of range"));
            }
            let lengths = u64::from(max_len - min_len) + 1;
            let positions = positions(nibbles, material, *file_index, family.connected_kings)
                .ok_or_else(|| self.corrupt("the piece list cannot be grouped"))?;
            *ptr += 10 + 2 * lengths;
            let symbols = u64::from(self.word(*ptr)?);
            *ptr += 2 + 3 * symbols + (symbols & 1);
            compressions.push(Compression {
                flags,
                block_size,
                sparse_entries: positions.div_ceil(span),
                block_length_entries: u64::from(blocks) + u64::from(head[3]),
                blocks,
            });
        }
        Ok(compressions)
    }

    /// DTZ value maps: per file, four runs (one per outcome), each a count
    /// then that many 8- or 16-bit values.
    fn skip_value_maps(
        &self,
        compressions: &[Compression],
        shape: Shape,
        ptr: &mut u64,
    ) -> Result<(), FormatError> {
        for file_index in 0..shape.files {
            let flags = compressions[file_index * shape.sides].flags;
            if flags & FLAG_MAPPED == 0 {
                continue;
            }
            for _ in 0..4 {
                if flags & FLAG_WIDE_DTZ != 0 {
                    *ptr += 2 + 2 * u64::from(self.word(*ptr)?);
                } else {
                    *ptr += 1 + u64::from(self.byte(*ptr)?);
                }
            }
        }
        *ptr += *ptr & 1;
        Ok(())
    }
}

/// After the header (which ends at `header_bytes`): all sparse indexes, all
/// block-length lists, then each subtable's data blocks, aligned to 64 bytes.
fn locate_regions(
    name: &str,
    file_size: u64,
    kind: TableKind,
    header_bytes: u64,
    compressions: &[Compression],
) -> Result<TableLayout, FormatError> {
    let mut ptr = header_bytes;
    let mut sparse = Vec::new();
    for c in compressions {
        sparse.push(ptr..ptr + 6 * c.sparse_entries);
        ptr += 6 * c.sparse_entries;
    }
    let sparse_end = ptr;
    let mut lengths = Vec::new();
    for c in compressions {
        lengths.push(ptr..ptr + 2 * c.block_length_entries);
        ptr += 2 * c.block_length_entries;
    }
    let lengths_end = ptr;
    let mut subtables = Vec::new();
    let mut prefix_len = None;
    for ((c, sparse_index), block_lengths) in compressions.iter().zip(sparse).zip(lengths) {
        ptr = ptr.div_ceil(64) * 64;
        prefix_len.get_or_insert(ptr);
        let end = ptr + u64::from(c.blocks) * u64::from(c.block_size);
        subtables.push(Subtable {
            sparse_index,
            block_lengths,
            data: ptr..end,
            block_size: c.block_size,
            blocks: c.blocks,
        });
        ptr = end;
    }
    if ptr > file_size {
        return Err(FormatError::Truncated {
            name: name.to_string(),
            needed: ptr,
            size: file_size,
        });
    }
    // A table whose subtables all hold a single value has no data at all.
    let prefix_len = prefix_len.unwrap_or(lengths_end).min(file_size);
    Ok(TableLayout {
        kind,
        file_size,
        header_bytes,
        sparse_index_bytes: sparse_end - header_bytes,
        block_length_bytes: prefix_len - sparse_end,
        prefix_len,
        subtables,
    })
}

/// Parses a table file on disk.
pub fn parse_file(path: &Path) -> Result<TableLayout, FormatError> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| FormatError::Name {
            name: path.display().to_string(),
        })?;
    let io_err = |source| FormatError::Io {
        name: name.to_string(),
        source,
    };
    let file = File::open(path).map_err(io_err)?;
    let size = file.metadata().map_err(io_err)?.len();
    parse(name, size, &file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_pawn_placements_like_the_generator() {
        // One leading pawn: six ranks on any file.
        assert_eq!(lead_pawn_placements(1, 0), 6);
        assert_eq!(lead_pawn_placements(1, 3), 6);
        // Two leading pawns on the a-file: the second one on any square numbered lower.
        assert_eq!(lead_pawn_placements(2, 0), 47 + 45 + 43 + 41 + 39 + 37);
    }

    #[test]
    fn reads_table_names() {
        assert!(is_table_name("KQvKR.rtbw"));
        assert!(is_table_name("BBvK.stbz") && is_table_name("KPvK.gtbw"));
        assert_eq!(variant_of_name("KQvK.atbw"), Some(Variant::Atomic));
        assert_eq!(variant_of_name("KPvK.gtbz"), Some(Variant::Antichess));
        assert_eq!(variant_of_name("KQvK.rtbw"), Some(Variant::Standard));
        assert_eq!(
            variant_table_name(Variant::Antichess, "KPvK", Metric::Dtz),
            "KPvK.gtbz"
        );
        assert_eq!(
            variant_table_name(Variant::Antichess, "BBvK", Metric::Wdl),
            "BBvK.stbw"
        );
        assert_eq!(
            variant_table_name(Variant::Atomic, "KQvK", Metric::Wdl),
            "KQvK.atbw"
        );
        assert!(is_table_name("KPvKP.stbz"));
        assert!(!is_table_name("README.txt"));
        assert!(!is_table_name("KQvKR.rtbw.tmp"));
    }

    #[test]
    fn rejects_wrong_magic_by_name() {
        let bytes = [0u8; 64];
        let err = parse("KQvK.rtbw", 64, &bytes[..]).unwrap_err();
        assert!(err.to_string().contains("KQvK.rtbw"), "{err}");
    }

    #[test]
    fn parses_every_embedded_table() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tables");
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let layout = parse_file(&path).unwrap();
            assert!(layout.prefix_len <= layout.file_size, "{}", path.display());
            // The generator pads the last block run only slightly.
            let end = layout
                .subtables
                .iter()
                .map(|s| s.data.end)
                .max()
                .unwrap_or(0);
            assert!(
                layout.file_size - end < 1024,
                "{}: {layout:?}",
                path.display()
            );
        }
    }
}
