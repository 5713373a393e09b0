//! The loaded table sets (standard, atomic, antichess): which files were
//! registered, and which were rejected at start (so a probe that needs one
//! can say why it is missing). Every probe goes through here, behind a
//! panic guard: a prober that panics on a bad table or an odd position
//! answers one request with an error instead of taking a thread down.

use std::{
    collections::HashMap,
    io,
    panic::{AssertUnwindSafe, catch_unwind},
    path::{Path, PathBuf},
    sync::Arc,
};

use app::{material, position::to_fen, variant::Variant};
use shakmaty::{
    Chess, Color, Move, Position,
    variant::{Antichess, Atomic, VariantPosition},
};
use shakmaty_syzygy::{Dtz, MaybeRounded, Syzygy, SyzygyError, Tablebase, filesystem::Filesystem};

use super::{EngineError, TableSet};
use crate::{
    catalog::{self, inventory},
    dtm::{
        Dtm, ProphetError, ProphetOptions, ProphetTables, Verification,
        unavailable::{DtmFailure, DtmUnavailability},
    },
    store::{
        self, context,
        embedded::EmbeddedFilesystem,
        layout::{file_name, variant_table_name},
    },
};

/// Tables found in one directory, for the start-up log.
#[derive(Debug, Clone)]
pub struct LoadedDirectory {
    /// Whose tables these are (`--tables`, `--atomic` or `--antichess`).
    pub variant: Variant,
    pub path: PathBuf,
    pub tables: usize,
    pub rejected: usize,
    /// Names of the files loaded (e.g. `KQvK.rtbw`), sorted.
    pub files: Vec<String>,
}

impl LoadedDirectory {
    /// How complete each piece count is in this directory, e.g. `5-piece:
    /// 28 of 110 tables`, against the published tables of its variant; a
    /// table counts once both its files are loaded.
    pub fn completeness(&self) -> String {
        let counts = inventory::completeness(self.variant, self.files.iter().map(String::as_str));
        if counts.is_empty() {
            return format!("no {} tables", self.variant);
        }
        counts
            .iter()
            .map(|(pieces, complete, published)| {
                format!("{pieces}-piece: {complete} of {published} tables")
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("cannot read table directory {path}: {source}")]
    Directory { path: PathBuf, source: io::Error },
    #[error(transparent)]
    Store(#[from] store::OpenError),
    #[error(transparent)]
    Dtm(#[from] ProphetError),
}

/// One variant's table directories and the filesystem they are read through.
#[derive(Clone)]
pub struct TableDirs {
    pub filesystem: Arc<dyn Filesystem>,
    pub dirs: Vec<PathBuf>,
}

impl TableDirs {
    /// No tables: every probe that needs one answers "unknown", as
    /// lila-tablebase does for a variant it was given no directory for.
    pub fn none() -> TableDirs {
        TableDirs {
            filesystem: Arc::new(EmbeddedFilesystem),
            dirs: Vec::new(),
        }
    }
}

/// The table sets of the three variants, and the DTM tables (standard).
#[derive(Clone)]
pub struct TableDirsByVariant {
    pub standard: TableDirs,
    pub atomic: TableDirs,
    pub antichess: TableDirs,
    /// Prophet DTM tables; no directories: no `dtm` anywhere.
    pub dtm: TableDirs,
    /// Bytes of decompressed DTM blocks kept (`--dtm-cache-mb`).
    pub dtm_cache_bytes: u64,
    /// When a DTM table's own checksum is checked (`ProphetOptions`).
    pub dtm_verification: Verification,
}

impl TableDirsByVariant {
    /// Standard tables from `dirs` and nothing else (no variants, no DTM):
    /// what tests and tools that watch one filesystem's reads need.
    pub fn standard_only(filesystem: Arc<dyn Filesystem>, dirs: &[PathBuf]) -> TableDirsByVariant {
        TableDirsByVariant {
            standard: TableDirs {
                filesystem,
                dirs: dirs.to_vec(),
            },
            atomic: TableDirs::none(),
            antichess: TableDirs::none(),
            dtm: TableDirs::none(),
            dtm_cache_bytes: 0,
            dtm_verification: Verification::default(),
        }
    }
}

pub struct Tables {
    /// Standard chess tables.
    pub tablebase: Tablebase<Chess>,
    pub atomic: Tablebase<Atomic>,
    pub antichess: Tablebase<Antichess>,
    /// Depth to mate for standard positions (Prophet tables).
    pub dtm: ProphetTables,
    /// The DTM tables that failed while answering (answers go on without `dtm`).
    dtm_unavailable: DtmUnavailability,
    /// File name (e.g. `KQvK.rtbz`) → why it was not loaded. The suffixes
    /// tell the variants apart.
    rejected: HashMap<String, String>,
    /// Per variant, materials with both files loaded, sorted
    /// (e.g. `KRvK`).
    installed: HashMap<Variant, Vec<String>>,
    /// A digest of every loaded file's name and size, all variants.
    table_set: TableSet,
}

/// A variant's materials with both files loaded from any of its
/// directories, sorted.
fn installed(loaded: &[LoadedDirectory], variant: Variant) -> Vec<String> {
    let files = loaded
        .iter()
        .filter(|dir| dir.variant == variant)
        .flat_map(|dir| dir.files.iter().map(String::as_str));
    inventory::installed_materials(variant, files)
        .into_iter()
        .collect()
}

impl Tables {
    /// Standard tables only, from the directories (the other variants
    /// have none).
    pub fn load(
        filesystem: Arc<dyn Filesystem>,
        dirs: &[PathBuf],
    ) -> Result<(Tables, Vec<LoadedDirectory>), LoadError> {
        Tables::load_sets(&TableDirsByVariant::standard_only(filesystem, dirs))
    }

    /// Registers every table file of every variant's directories; files are
    /// opened lazily on first probe. A damaged file is logged and skipped
    /// rather than keeping the server from starting.
    pub fn load_sets(
        sets: &TableDirsByVariant,
    ) -> Result<(Tables, Vec<LoadedDirectory>), LoadError> {
        let mut tables = Tables {
            tablebase: Tablebase::with_filesystem(Arc::clone(&sets.standard.filesystem)),
            atomic: Tablebase::with_filesystem(Arc::clone(&sets.atomic.filesystem)),
            antichess: Tablebase::with_filesystem(Arc::clone(&sets.antichess.filesystem)),
            dtm: open_dtm(sets)?,
            dtm_unavailable: DtmUnavailability::default(),
            rejected: HashMap::new(),
            installed: HashMap::new(),
            table_set: TableSet::of([]),
        };
        let mut loaded = Vec::new();
        let rejected = &mut tables.rejected;
        let mut sized = Vec::new();
        loaded.extend(register(
            &mut tables.tablebase,
            Variant::Standard,
            &sets.standard,
            rejected,
            &mut sized,
        )?);
        loaded.extend(register(
            &mut tables.atomic,
            Variant::Atomic,
            &sets.atomic,
            rejected,
            &mut sized,
        )?);
        loaded.extend(register(
            &mut tables.antichess,
            Variant::Antichess,
            &sets.antichess,
            rejected,
            &mut sized,
        )?);
        tables.installed = Variant::ALL
            .into_iter()
            .map(|variant| (variant, installed(&loaded, variant)))
            .collect();
        sized.extend(tables.dtm.files());
        tables.table_set = TableSet::of(sized);
        Ok((tables, loaded))
    }

    /// A variant's tables whose two files were both loaded, published or
    /// beyond the shipped list, sorted by material (`KRvK`), for the page to
    /// say which are installed.
    pub fn installed(&self, variant: Variant) -> &[String] {
        self.installed.get(&variant).map_or(&[], Vec::as_slice)
    }

    /// Which table set this is (a digest of the loaded files).
    pub fn table_set(&self) -> &TableSet {
        &self.table_set
    }

    /// Largest piece count the loaded tables of a variant cover (0: none loaded).
    pub fn max_pieces(&self, variant: Variant) -> usize {
        match variant {
            Variant::Standard => self.tablebase.max_pieces(),
            Variant::Atomic => self.atomic.max_pieces(),
            Variant::Antichess => self.antichess.max_pieces(),
        }
    }

    /// The DTZ of a position, or `None` when the loaded tables do not cover
    /// it (answered as "unknown"). A table that exists but cannot be read,
    /// or that is missing because its file was rejected at start, is an
    /// error; so is a prober that panicked.
    pub fn probe_dtz(
        &self,
        pos: &VariantPosition,
    ) -> Result<Option<MaybeRounded<Dtz>>, EngineError> {
        let variant = variant_of(pos)?;
        let probed = guarded(variant, pos, || self.raw_probe_dtz(pos))?;
        match probed {
            Ok(dtz) => Ok(Some(dtz)),
            Err(SyzygyError::Castling | SyzygyError::TooManyPieces) => Ok(None),
            Err(SyzygyError::MissingTable { metric, material }) => {
                match self.rejected_error(variant_table_name(variant, &material, metric)) {
                    Some(rejected) => Err(rejected),
                    None => Ok(None),
                }
            }
            Err(err) => Err(EngineError::from_syzygy(err, variant)),
        }
    }

    /// The DTZ of a position the tables must cover (the mainline's start):
    /// anything but a value is an error naming why.
    pub fn require_dtz(&self, pos: &VariantPosition) -> Result<MaybeRounded<Dtz>, EngineError> {
        let variant = variant_of(pos)?;
        guarded(variant, pos, || self.raw_probe_dtz(pos))?.map_err(|err| self.explain(err, variant))
    }

    /// The DTZ-optimal move and the DTZ after it; `None` when the game is over.
    pub fn best_move(
        &self,
        pos: &VariantPosition,
    ) -> Result<Option<(Move, MaybeRounded<Dtz>)>, EngineError> {
        let variant = variant_of(pos)?;
        let best = guarded(variant, pos, || match pos {
            VariantPosition::Chess(p) => self.tablebase.best_move(p),
            VariantPosition::Atomic(p) => self.atomic.best_move(p),
            VariantPosition::Antichess(p) => self.antichess.best_move(p),
            // variant_of let only the three through.
            _ => Ok(None),
        })?;
        best.map_err(|err| self.explain(err, variant))
    }

    /// The depth to mate of a position as lila-tablebase's `dtm`: plies,
    /// negative when the side to move is mated, 0 for a draw; `None` where
    /// the DTM tables do not answer (not standard chess, castling rights,
    /// no table for the material) and for a checkmated position (0 is the
    /// draw).
    ///
    /// A DTM table that failed (damaged, unreadable, skipped at start)
    /// does not fail the answer: `dtm` is `None` and the failure says
    /// which table and why (logged and counted, `crate::dtm::unavailable`). Only a
    /// shortage of file descriptors (503, retry) and a panicking prober
    /// stay errors.
    pub fn probe_dtm(
        &self,
        pos: &VariantPosition,
    ) -> Result<(Option<i32>, Option<DtmFailure>), EngineError> {
        let VariantPosition::Chess(chess) = pos else {
            return Ok((None, None));
        };
        match guarded(Variant::Standard, pos, || self.dtm.probe(chess))? {
            Ok(value) => Ok((value.and_then(Dtm::lila), None)),
            // A read refused in the no-wait pass: this attempt is thrown
            // away and the probe runs again on the pool; nothing failed.
            Err(err) if context::refused() => Err(EngineError::from_prophet(err)),
            Err(err) => match self.dtm_unavailable.record(&err) {
                Some(failure) => Ok((None, Some(failure))),
                None => Err(EngineError::from_prophet(err)),
            },
        }
    }

    /// The DTM tables that failed while answering, and their figures.
    pub fn dtm_unavailable(&self) -> &DtmUnavailability {
        &self.dtm_unavailable
    }

    /// The DTM tables' value of a position for its side to move (telling
    /// a checkmate, `Loss(0)`, apart from a draw); a table that failed is
    /// an error naming its file (the fastest-mate line cannot go on
    /// without it).
    pub fn dtm_value(&self, pos: &VariantPosition) -> Result<Option<Dtm>, EngineError> {
        let VariantPosition::Chess(chess) = pos else {
            return Ok(None);
        };
        guarded(Variant::Standard, pos, || self.dtm.probe(chess))?
            .map_err(EngineError::from_prophet)
    }

    fn raw_probe_dtz(&self, pos: &VariantPosition) -> Result<MaybeRounded<Dtz>, SyzygyError> {
        match pos {
            VariantPosition::Chess(p) => self.tablebase.probe_dtz(p),
            VariantPosition::Atomic(p) => self.atomic.probe_dtz(p),
            VariantPosition::Antichess(p) => self.antichess.probe_dtz(p),
            // variant_of let only the three through.
            _ => Err(SyzygyError::TooManyPieces),
        }
    }

    /// Turns a probe failure into an engine error; a table that is missing
    /// only because its file was rejected at start is an error, not "unknown".
    pub fn explain(&self, err: SyzygyError, variant: Variant) -> EngineError {
        if let SyzygyError::MissingTable { metric, material } = &err
            && let Some(rejected) =
                self.rejected_error(variant_table_name(variant, material, *metric))
        {
            return rejected;
        }
        EngineError::from_syzygy(err, variant)
    }

    /// Why a table file was skipped at start, if it was.
    fn rejected_error(&self, table: String) -> Option<EngineError> {
        let reason = self.rejected.get(&table)?.clone();
        Some(EngineError::Table { table, reason })
    }
}

/// Opens the DTM tables of `sets.dtm`; files that fail their checks are
/// logged and skipped (a lookup that needs one names it), as Syzygy files are.
fn open_dtm(sets: &TableDirsByVariant) -> Result<ProphetTables, LoadError> {
    if sets.dtm.dirs.is_empty() {
        return Ok(ProphetTables::none());
    }
    let options = ProphetOptions {
        cache_bytes: sets.dtm_cache_bytes,
        verification: sets.dtm_verification.clone(),
    };
    let tables =
        ProphetTables::open_with(&sets.dtm.dirs, Arc::clone(&sets.dtm.filesystem), options)?;
    for rejected in tables.rejected() {
        tracing::warn!(
            path = %rejected.path.display(),
            "DTM table skipped at start: {}",
            rejected.reason
        );
    }
    Ok(tables)
}

/// Registers the table files of one variant's directories with its tablebase.
fn register<S: Position + Clone + Syzygy>(
    tablebase: &mut Tablebase<S>,
    variant: Variant,
    set: &TableDirs,
    rejected: &mut HashMap<String, String>,
    sized: &mut Vec<(String, u64)>,
) -> Result<Vec<LoadedDirectory>, LoadError> {
    let mut loaded = Vec::new();
    for dir in &set.dirs {
        let entries = set
            .filesystem
            .read_dir(dir)
            .map_err(|source| LoadError::Directory {
                path: dir.clone(),
                source,
            })?;
        let mut count = LoadedDirectory {
            variant,
            path: dir.clone(),
            tables: 0,
            rejected: 0,
            files: Vec::new(),
        };
        let remote = store::remote::is_remote(dir);
        for path in entries {
            // A remote source's listing is checked against the published
            // sizes before anything is read: an object of another size is
            // not the table its name says (a partial upload, another file).
            if remote && let Some(reason) = unpublished_size(variant, set, &path) {
                count.rejected += 1;
                tracing::warn!(url = %path.display(), "{reason}");
                rejected.insert(file_name(&path), reason);
                continue;
            }
            match tablebase.add_file(&path) {
                Ok(()) => {
                    count.tables += 1;
                    count.files.push(file_name(&path));
                    // add_file has just read the size; a file that vanished
                    // since counts as empty, which still changes the digest.
                    let size = set.filesystem.regular_file_size(&path).unwrap_or(0);
                    sized.push((file_name(&path), size));
                }
                // Not a table file name (README, checksums), or another
                // variant's table.
                Err(err) if err.kind() == io::ErrorKind::InvalidInput => {}
                Err(err) => {
                    count.rejected += 1;
                    reject(rejected, &path, &err);
                }
            }
        }
        count.files.sort();
        loaded.push(count);
    }
    Ok(loaded)
}

/// Why a table object of a remote source is not the published table, if
/// the catalogue gives its size and the listing another.
fn unpublished_size(variant: Variant, set: &TableDirs, path: &Path) -> Option<String> {
    let name = file_name(path);
    let published = catalog::of(variant).published(&name)?.size?;
    let listed = set.filesystem.regular_file_size(path).ok()?;
    (listed != published).then(|| {
        format!(
            "{name} was skipped at start: its remote source holds {listed} bytes, the published table has {published}; upload it again (`zugzwang tables fetch --to URL`)"
        )
    })
}

/// Logs the path; remembers a reason that names the file only, as it
/// goes to clients.
fn reject(rejected: &mut HashMap<String, String>, path: &Path, err: &io::Error) {
    let name = file_name(path);
    let reason = if err.kind() == io::ErrorKind::InvalidData {
        format!(
            "{name} was skipped at start: its size is not that of a Syzygy table (truncated or damaged); replace it"
        )
    } else {
        format!("{name} was skipped at start: {err}")
    };
    tracing::warn!(path = %path.display(), "{reason}");
    rejected.insert(name, reason);
}

/// Which of our three variants a position is under.
fn variant_of(pos: &VariantPosition) -> Result<Variant, EngineError> {
    Variant::of(pos).ok_or_else(|| {
        EngineError::Internal(format!("no tables for the variant {}", pos.variant()))
    })
}

/// Runs a probe, turning a panic in the prober (a misnamed or damaged table
/// it trusts, an input it does not expect) into an error naming the
/// position and its material. The table caches stay usable: a table whose
/// opening panicked is simply not cached.
fn guarded<T>(
    variant: Variant,
    pos: &VariantPosition,
    probe: impl FnOnce() -> T,
) -> Result<T, EngineError> {
    catch_unwind(AssertUnwindSafe(probe)).map_err(|payload| {
        let err = EngineError::ProbePanicked {
            variant,
            fen: to_fen(pos),
            material: material::with_first(pos.board(), Color::White),
            message: panic_message(payload.as_ref()),
        };
        tracing::error!("{err}");
        err
    })
}

/// The panic's message, when it is text (as `panic!` and `assert!` make it).
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        return (*text).to_string();
    }
    if let Some(text) = payload.downcast_ref::<String>() {
        return text.clone();
    }
    "no message".to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panicking_probe_becomes_an_error_naming_position_and_material() {
        let pos =
            app::variant::parse_variant_fen(Variant::Antichess, "8/8/8/8/8/8/1KK5/7n w - - 0 1")
                .expect("legal");
        let err = guarded(Variant::Antichess, &pos, || -> u32 {
            panic!("assertion failed: key == material")
        })
        .expect_err("caught");
        let text = err.to_string();
        assert!(text.contains("antichess"), "{text}");
        assert!(text.contains("8/8/8/8/8/8/1KK5/7n w - - 0 1"), "{text}");
        assert!(text.contains("KKvN"), "{text}");
        assert!(text.contains("key == material"), "{text}");
    }
}
