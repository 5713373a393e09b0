//! Depth to mate: everything about Prophet DTM tables lives here, from the
//! reader a request uses to the tools that find, check and fetch the files.
//!
//! - this module: `ProphetTables`, our own reader of the open DTM tablebase
//!   of markus7800/prophet_tb_gen_and_probe (what lila-tablebase serves as
//!   `dtm` with `--prophet`); `format` reads one file, `index` maps a
//!   position to its table and index, `block_cache` keeps decompressed
//!   blocks, `unavailable` counts the tables that failed while answering
//!   (the answer goes on with `dtm` null). These sit at the store's level:
//!   they read through the store's `Filesystem` layers and use nothing
//!   above them.
//! - `catalog`: the 2-4 piece set, `MD5SUMS` lists beside tables and the
//!   whole-file check (`verify`, `tier build`, the scrub, `tables status`).
//! - `fetch`: `tables fetch --dtm`, through the fetch layer's transfers.
//!
//! Why our own reader: the upstream prober is C++ with process-wide state and
//! reads files through mmap; ours reads through shakmaty-syzygy's
//! [`Filesystem`] (so it can go over the store's pread and tiered layers),
//! returns errors naming the damaged file instead of asserting, and keeps
//! per lookup to one positioned read and one zstd block. The format and
//! the index are described in server/docs/prophet.md.
//!
//! Policy, as lila's: positions with castling rights are not in the tables
//! (`None`); a material with no table for either side is `None`; a material
//! whose table exists only for the other side to move is answered by
//! playing every legal move and probing the other side's table (one ply of
//! search, as Prophet's own prober does inside lila).

pub mod block_cache;
pub mod catalog;
pub mod fetch;
pub mod format;
pub mod index;
pub mod unavailable;

use std::{
    collections::{HashMap, HashSet},
    io,
    path::{Path, PathBuf},
    sync::{Arc, OnceLock},
};

use shakmaty::{Chess, Position};
use shakmaty_syzygy::filesystem::Filesystem;

use block_cache::BlockCache;
use format::TableFile;
use index::{Layout, ProphetMaterial};

use crate::store::{
    layout::file_name,
    table_error::{TableIoError, is_never_checked, is_out_of_descriptors},
};

/// What went wrong reading a Prophet table; every variant names the file.
///
/// A table's error shows its file name only (`KQK.egtb.bz`), as the
/// store's errors do: it ends up in answers to clients (a fastest-mate
/// error) and in `/metrics`. The path stays in the variant, for the log
/// ([`ProphetError::path`]).
#[derive(Debug, thiserror::Error)]
pub enum ProphetError {
    /// The file could not be read.
    #[error("cannot read the Prophet DTM table {}: {source}", file_name(.path))]
    Read {
        /// The table file.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// The file is not a valid table for its material.
    #[error(
        "the Prophet table {} is damaged: {what}; fetch it again (compare with MD5SUMS) \
         or remove it",
        file_name(.path)
    )]
    Corrupt {
        /// The table file.
        path: PathBuf,
        /// What is wrong with it.
        what: String,
    },
    /// A table directory could not be listed (at start, before any client
    /// is answered: the operator's own path is worth showing).
    #[error("cannot read the Prophet DTM table directory {}: {source}", .path.display())]
    Directory {
        /// The directory.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
}

impl ProphetError {
    /// The file (or directory) the error is about, for the log.
    pub fn path(&self) -> &Path {
        match self {
            ProphetError::Read { path, .. }
            | ProphetError::Corrupt { path, .. }
            | ProphetError::Directory { path, .. } => path,
        }
    }

    /// Whether the table's bytes are wrong (a failed check, a short file,
    /// a block the store's checksums refuse) rather than unreadable.
    pub fn is_damage(&self) -> bool {
        match self {
            ProphetError::Corrupt { .. } => true,
            ProphetError::Read { source, .. } => matches!(
                source.kind(),
                io::ErrorKind::InvalidData | io::ErrorKind::UnexpectedEof
            ),
            ProphetError::Directory { .. } => false,
        }
    }

    /// Whether no file descriptor was left to read the table with: a
    /// passing shortage, not a fault of the table.
    pub fn out_of_descriptors(&self) -> bool {
        matches!(self, ProphetError::Read { source, .. } if is_out_of_descriptors(source))
    }

    /// Whether the store refused the table because its bytes were never
    /// checked (no checksums recorded, and no `--allow-unchecked`): not a
    /// fault of the table, which [`ProphetError::is_damage`] also counts.
    pub fn is_unchecked(&self) -> bool {
        let ProphetError::Read { source, .. } = self else {
            return false;
        };
        is_never_checked(source)
    }
}

/// A value from the tables, for the side to move, in plies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dtm {
    /// Neither side can force mate.
    Draw,
    /// The side to move mates in this many plies (odd, at least 1).
    Win(u16),
    /// The side to move is mated in this many plies (even; 0 = checkmated).
    Loss(u16),
}

impl Dtm {
    /// Decodes a stored value: 0 is a draw, `1000 - n` a win in `n` plies,
    /// `-1000 + n` a loss in `n` plies.
    fn from_raw(raw: i16) -> Option<Dtm> {
        match raw {
            0 => Some(Dtm::Draw),
            1..=999 => Some(Dtm::Win((1000 - raw) as u16)),
            -1000..=-1 => Some(Dtm::Loss((raw + 1000) as u16)),
            _ => None,
        }
    }

    /// The value one ply earlier, for the side that moved into `self`.
    pub fn before(self) -> Dtm {
        match self {
            Dtm::Draw => Dtm::Draw,
            Dtm::Win(n) => Dtm::Loss(n + 1),
            Dtm::Loss(n) => Dtm::Win(n + 1),
        }
    }

    /// Orders values by how good they are for the side to move: the
    /// fastest win is best, the slowest loss the best of losses.
    pub fn goodness(self) -> i32 {
        match self {
            Dtm::Win(n) => 2000 - i32::from(n),
            Dtm::Draw => 0,
            Dtm::Loss(n) => -2000 + i32::from(n),
        }
    }

    /// The signed plies lila's API calls `dtm`: positive = the side to move
    /// mates, negative = it is mated, 0 = draw. A checkmated position has no
    /// such number (0 means draw there), so lila gives none: `None`.
    pub fn lila(self) -> Option<i32> {
        match self {
            Dtm::Draw => Some(0),
            Dtm::Win(n) => Some(i32::from(n)),
            Dtm::Loss(0) => None,
            Dtm::Loss(n) => Some(-i32::from(n)),
        }
    }
}

/// When a table's checksum (over all its values) is checked.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Verification {
    /// Before the first lookup in each table of at most
    /// [`FIRST_USE_CHECK_MAX_BYTES`] (it decompresses the whole table once:
    /// at most a few MB for 4 pieces). A block damaged in a way zstd still
    /// decodes then gives an error, never a wrong value. Larger tables
    /// (5 and 6 pieces) would stall their first request for seconds to
    /// minutes: they rely on the fast tier's block checksums, checked on
    /// every read, and on `zugzwang verify`.
    #[default]
    OnFirstUse,
    /// Never (lookups read one block; the caller checks files some other
    /// way, e.g. their md5 in MD5SUMS, or calls [`ProphetTables::verify_all`]).
    Never,
    /// As `OnFirstUse` for the files named (file names, e.g.
    /// `KBNK.egtb.bz`): those the store has no block checksums for. The
    /// others are checked block by block on every read, and reading them
    /// whole would cost every block's slow read once.
    OnFirstUseOf(Arc<HashSet<String>>),
}

impl Verification {
    /// Whether the table at `path`, `size` bytes, is checked whole on first use.
    fn checks_whole(&self, path: &Path, size: u64) -> bool {
        let small = size <= FIRST_USE_CHECK_MAX_BYTES;
        match self {
            Verification::OnFirstUse => small,
            Verification::Never => false,
            Verification::OnFirstUseOf(names) => {
                let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
                small && names.contains(name)
            }
        }
    }
}

/// The largest table [`Verification::OnFirstUse`] checks whole.
pub const FIRST_USE_CHECK_MAX_BYTES: u64 = 64 << 20;

/// How the tables are read beyond where they are.
#[derive(Debug, Clone)]
pub struct ProphetOptions {
    pub verification: Verification,
    /// Bytes of decompressed blocks kept in memory (`block_cache`).
    pub cache_bytes: u64,
}

impl Default for ProphetOptions {
    fn default() -> Self {
        ProphetOptions {
            verification: Verification::default(),
            cache_bytes: block_cache::DEFAULT_BYTES,
        }
    }
}

struct Table {
    layout: Layout,
    file: TableFile,
    /// Whether the checksum over all values is checked before the first
    /// lookup (`Verification`).
    check_whole: bool,
    /// The checksum's verdict once it is final: passed, or the damage it
    /// found. A read that failed (no descriptor left, a refused wait) is
    /// no verdict, and the check runs again on the next lookup.
    verified: OnceLock<Result<(), Arc<str>>>,
}

/// A table file skipped at open, and why: lookups that need it say so.
#[derive(Debug, Clone)]
pub struct Rejected {
    pub path: PathBuf,
    /// The error that skipped it (naming the file only).
    pub reason: String,
    /// What a lookup that needs it is told: the same class of error as
    /// the one that skipped it (damaged, or unreadable), said briefly.
    cause: RejectedCause,
}

#[derive(Debug, Clone)]
enum RejectedCause {
    Damaged(String),
    Unreadable(io::ErrorKind, String),
    /// Refused by the store as never checked (kept apart: it is not damage).
    Unchecked,
}

impl Rejected {
    fn new(path: PathBuf, err: &ProphetError) -> Rejected {
        let cause = match err {
            _ if err.is_unchecked() => RejectedCause::Unchecked,
            ProphetError::Corrupt { what, .. } => RejectedCause::Damaged(what.clone()),
            ProphetError::Read { source, .. } | ProphetError::Directory { source, .. } => {
                RejectedCause::Unreadable(source.kind(), source.to_string())
            }
        };
        Rejected {
            path,
            reason: err.to_string(),
            cause,
        }
    }

    /// The error of a lookup that needs this file.
    fn error(&self) -> ProphetError {
        let path = self.path.clone();
        match &self.cause {
            RejectedCause::Damaged(what) => ProphetError::Corrupt {
                path,
                what: format!("it was skipped at start: {what}"),
            },
            RejectedCause::Unreadable(kind, detail) => ProphetError::Read {
                path,
                source: io::Error::new(*kind, format!("it was skipped at start: {detail}")),
            },
            RejectedCause::Unchecked => ProphetError::Read {
                source: TableIoError::never_checked(&path),
                path,
            },
        }
    }
}

/// The Prophet tables found in some directories.
pub struct ProphetTables {
    tables: HashMap<ProphetMaterial, Table>,
    rejected: HashMap<ProphetMaterial, Rejected>,
    cache: BlockCache,
}

impl std::fmt::Debug for ProphetTables {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProphetTables")
            .field("tables", &self.tables.len())
            .finish()
    }
}

/// How deep the search for a table missing on one side may go (each level
/// is a capture or promotion into another material missing on one side).
const MAX_SEARCH_DEPTH: u32 = 4;

impl ProphetTables {
    /// Finds `*.egtb.bz` files in `dirs` (and their subdirectories, as laid
    /// out by the generator: `4men/0pawns/KBNK.egtb.bz`), reading each one's
    /// header and block list. As in lila, a table in a later directory
    /// replaces one of the same name in an earlier one. Files whose name is
    /// not a table name are ignored; a table that fails its structural
    /// checks is an error. Checksums are checked on first use.
    pub fn open(
        dirs: &[PathBuf],
        filesystem: Arc<dyn Filesystem>,
    ) -> Result<ProphetTables, ProphetError> {
        Self::open_with(dirs, filesystem, ProphetOptions::default())
    }

    /// No tables: every lookup is `None`.
    pub fn none() -> ProphetTables {
        ProphetTables {
            tables: HashMap::new(),
            rejected: HashMap::new(),
            cache: BlockCache::new(0),
        }
    }

    /// [`ProphetTables::open`], choosing when checksums are checked and how
    /// many decompressed blocks are kept.
    pub fn open_with(
        dirs: &[PathBuf],
        filesystem: Arc<dyn Filesystem>,
        options: ProphetOptions,
    ) -> Result<ProphetTables, ProphetError> {
        let mut found: HashMap<ProphetMaterial, PathBuf> = HashMap::new();
        for dir in dirs {
            let mut files = Vec::new();
            list_tables(filesystem.as_ref(), dir, 3, &mut files)?;
            files.sort_by(|a, b| a.1.cmp(&b.1));
            for (material, path) in files {
                found.insert(material, path);
            }
        }
        let mut tables = HashMap::with_capacity(found.len());
        let mut rejected = HashMap::new();
        for (material, path) in found {
            let layout = Layout::new(material);
            match TableFile::open(filesystem.as_ref(), &path, layout.num_positions()) {
                Ok(file) => {
                    let check_whole = options.verification.checks_whole(&path, file.file_size());
                    tables.insert(
                        material,
                        Table {
                            layout,
                            file,
                            check_whole,
                            verified: OnceLock::new(),
                        },
                    );
                }
                Err(err) => {
                    rejected.insert(material, Rejected::new(path, &err));
                }
            }
        }
        Ok(ProphetTables {
            tables,
            rejected,
            cache: BlockCache::new(options.cache_bytes),
        })
    }

    /// The files skipped at open (damaged or unreadable), sorted by path.
    pub fn rejected(&self) -> Vec<&Rejected> {
        let mut rejected: Vec<&Rejected> = self.rejected.values().collect();
        rejected.sort_by(|a, b| a.path.cmp(&b.path));
        rejected
    }

    /// The decompressed blocks kept, with their figures.
    pub fn block_cache(&self) -> &BlockCache {
        &self.cache
    }

    /// Number of tables found.
    pub fn len(&self) -> usize {
        self.tables.len()
    }

    /// Whether no table was found.
    pub fn is_empty(&self) -> bool {
        self.tables.is_empty()
    }

    /// Names of the tables found, sorted.
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.tables.keys().map(ProphetMaterial::name).collect();
        names.sort();
        names
    }

    /// Every table's file name and size, for the digest naming the table
    /// set a server answers from.
    pub fn files(&self) -> Vec<(String, u64)> {
        let mut files: Vec<(String, u64)> = self
            .tables
            .values()
            .map(|table| {
                let name = table.file.path().file_name().unwrap_or_default();
                (name.to_string_lossy().into_owned(), table.file.file_size())
            })
            .collect();
        files.sort();
        files
    }

    /// The materials the tables answer, named as Syzygy names them
    /// (`KBNvK`: either side's file answers both), sorted.
    pub fn materials(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .tables
            .keys()
            .map(ProphetMaterial::syzygy_name)
            .collect();
        names.sort();
        names.dedup();
        names
    }

    /// Checks every table's checksum now (reads everything).
    pub fn verify_all(&self) -> Result<(), ProphetError> {
        let mut tables: Vec<&Table> = self.tables.values().collect();
        tables.sort_by(|a, b| a.file.path().cmp(b.file.path()));
        tables.into_iter().try_for_each(|table| table.file.verify())
    }

    /// The value of `pos` for its side to move, or `None` when the tables
    /// do not answer (castling rights, material without a table).
    pub fn probe(&self, pos: &Chess) -> Result<Option<Dtm>, ProphetError> {
        if pos.castles().any() {
            return Ok(None);
        }
        self.probe_at_depth(pos, 0)
    }

    fn probe_at_depth(&self, pos: &Chess, depth: u32) -> Result<Option<Dtm>, ProphetError> {
        let material = ProphetMaterial::from_position(pos);
        if let Some(table) = self.tables.get(&material) {
            return table.probe(pos, &self.cache).map(Some);
        }
        if let Some(rejected) = self
            .rejected
            .get(&material)
            .or_else(|| self.rejected.get(&material.mirrored()))
        {
            return Err(rejected.error());
        }
        if depth >= MAX_SEARCH_DEPTH || !self.tables.contains_key(&material.mirrored()) {
            return Ok(None);
        }
        // Only the other side's table: one ply of search.
        let moves = pos.legal_moves();
        if moves.is_empty() {
            return Ok(Some(if pos.is_check() {
                Dtm::Loss(0)
            } else {
                Dtm::Draw
            }));
        }
        let mut best: Option<Dtm> = None;
        for m in moves {
            let mut child = pos.clone();
            child.play_unchecked(m);
            let Some(value) = self.probe_at_depth(&child, depth + 1)? else {
                return Ok(None);
            };
            let value = value.before();
            if best.is_none_or(|b| value.goodness() > b.goodness()) {
                best = Some(value);
            }
        }
        Ok(best)
    }
}

impl Table {
    fn probe(&self, pos: &Chess, cache: &BlockCache) -> Result<Dtm, ProphetError> {
        let corrupt = |what: String| ProphetError::Corrupt {
            path: self.file.path().to_owned(),
            what,
        };
        if self.check_whole {
            self.check_once()?;
        }
        let index = self.layout.index(pos).ok_or_else(|| {
            corrupt(format!(
                "no index for {} (not a position of {})",
                shakmaty::fen::Fen::from_position(pos, shakmaty::EnPassantMode::Legal),
                self.layout.material().name()
            ))
        })?;
        let raw = self.file.value(index, cache)?;
        Dtm::from_raw(raw).ok_or_else(|| corrupt(format!("stored value {raw} at index {index}")))
    }
}

impl Table {
    /// Checks the table's checksum unless a final verdict is known.
    fn check_once(&self) -> Result<(), ProphetError> {
        let verdict = match self.verified.get() {
            Some(verdict) => verdict,
            None => match self.file.verify() {
                Ok(()) => self.verified.get_or_init(|| Ok(())),
                Err(ProphetError::Corrupt { what, .. }) => {
                    self.verified.get_or_init(|| Err(Arc::from(what)))
                }
                Err(err) => return Err(err),
            },
        };
        verdict.clone().map_err(|message| ProphetError::Corrupt {
            path: self.file.path().to_owned(),
            what: format!("checksum check failed earlier ({message})"),
        })
    }
}

/// Collects the table files under `dir`, descending `depth` levels.
fn list_tables(
    filesystem: &dyn Filesystem,
    dir: &Path,
    depth: u32,
    out: &mut Vec<(ProphetMaterial, PathBuf)>,
) -> Result<(), ProphetError> {
    let entries = filesystem
        .read_dir(dir)
        .map_err(|source| ProphetError::Directory {
            path: dir.to_owned(),
            source,
        })?;
    for path in entries {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if let Some(stem) = name.strip_suffix(".egtb.bz") {
            if let Some(material) = ProphetMaterial::from_name(stem)
                && filesystem.regular_file_size(&path).is_ok()
            {
                out.push((material, path));
            }
        } else if depth > 0 && filesystem.regular_file_size(&path).is_err() {
            // Not a regular file: a subdirectory (or something unreadable,
            // which then lists as nothing).
            let _ = list_tables(filesystem, &path, depth - 1, out);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_table_checks_only_where_no_block_checks_and_small() {
        let path = Path::new("/tables/KBNK.egtb.bz");
        let small = 5 << 20;
        let huge = FIRST_USE_CHECK_MAX_BYTES + 1;
        assert!(Verification::OnFirstUse.checks_whole(path, small));
        assert!(!Verification::OnFirstUse.checks_whole(path, huge));
        assert!(!Verification::Never.checks_whole(path, small));
        let unchecked = HashSet::from(["KBNK.egtb.bz".to_string()]);
        let some = Verification::OnFirstUseOf(Arc::new(unchecked));
        assert!(some.checks_whole(path, small));
        assert!(!some.checks_whole(Path::new("/tables/KQK.egtb.bz"), small));
        assert!(!some.checks_whole(path, huge));
    }
}
