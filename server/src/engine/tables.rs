//! The loaded table set: which files were registered, and which were
//! rejected at start (so a probe that needs one can say why it is missing).

use std::{
    collections::{BTreeSet, HashMap},
    io,
    path::{Path, PathBuf},
    sync::Arc,
};

use shakmaty::Chess;
use shakmaty_syzygy::{Dtz, MaybeRounded, SyzygyError, Tablebase, filesystem::Filesystem};

use super::{EngineError, table_set::TableSet};
use crate::store::{
    catalog,
    coverage::MissingChecksums,
    format::{file_name, table_name},
    inventory,
};

/// Tables found in one directory, for the start-up log.
#[derive(Debug, Clone)]
pub struct LoadedDirectory {
    pub path: PathBuf,
    pub tables: usize,
    pub rejected: usize,
    /// Names of the files loaded (e.g. `KQvK.rtbw`), sorted.
    pub files: Vec<String>,
}

impl LoadedDirectory {
    /// How complete each piece count is in this directory, e.g. `5-piece:
    /// 28 of 110 tables`; a table counts once both its files are loaded.
    pub fn completeness(&self) -> String {
        let counts = inventory::completeness(self.files.iter().map(String::as_str));
        if counts.is_empty() {
            return "no standard tables".to_string();
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
    MissingChecksums(#[from] MissingChecksums),
}

pub struct Tables {
    pub tablebase: Tablebase<Chess>,
    /// File name (e.g. `KQvK.rtbz`) → why it was not loaded.
    rejected: HashMap<String, String>,
    /// Published materials with both files loaded, sorted (e.g. `KRvK`).
    installed: Vec<String>,
    /// The digest of the loaded files, naming this set to clients.
    table_set: TableSet,
}

/// Published materials with both files loaded from any of the directories.
fn installed(loaded: &[LoadedDirectory]) -> Vec<String> {
    let files: BTreeSet<&str> = loaded
        .iter()
        .flat_map(|dir| dir.files.iter().map(String::as_str))
        .collect();
    let materials: BTreeSet<&str> = files
        .iter()
        .filter_map(|file| catalog::material_of(file))
        .filter(|material| {
            catalog::files_of(material)
                .iter()
                .all(|f| files.contains(f.as_str()))
        })
        .collect();
    materials.into_iter().map(str::to_string).collect()
}

impl Tables {
    /// Registers every table file of the directories; files are opened lazily
    /// on first probe. A damaged file is logged and skipped rather than
    /// keeping the server from starting.
    pub fn load(
        filesystem: Arc<dyn Filesystem>,
        dirs: &[PathBuf],
    ) -> Result<(Tables, Vec<LoadedDirectory>), LoadError> {
        let mut tables = Tables {
            tablebase: Tablebase::with_filesystem(Arc::clone(&filesystem)),
            rejected: HashMap::new(),
            installed: Vec::new(),
            table_set: TableSet::of([]),
        };
        let mut loaded = Vec::new();
        let mut sized = Vec::new();
        for dir in dirs {
            let entries = filesystem
                .read_dir(dir)
                .map_err(|source| LoadError::Directory {
                    path: dir.clone(),
                    source,
                })?;
            let mut count = LoadedDirectory {
                path: dir.clone(),
                tables: 0,
                rejected: 0,
                files: Vec::new(),
            };
            for path in entries {
                match tables.tablebase.add_file(&path) {
                    Ok(()) => {
                        count.tables += 1;
                        count.files.push(file_name(&path));
                        // add_file has just read the size; a file that
                        // vanished since counts as empty, which still
                        // changes the digest.
                        let size = filesystem.regular_file_size(&path).unwrap_or(0);
                        sized.push((file_name(&path), size));
                    }
                    // Not a table file name: README, checksums, ...
                    Err(err) if err.kind() == io::ErrorKind::InvalidInput => {}
                    Err(err) => {
                        count.rejected += 1;
                        tables.reject(&path, &err);
                    }
                }
            }
            count.files.sort();
            loaded.push(count);
        }
        tables.installed = installed(&loaded);
        tables.table_set = TableSet::of(sized);
        Ok((tables, loaded))
    }

    /// Published standard tables whose two files were both loaded, sorted by
    /// material (`KRvK`), for the page to say which are installed.
    pub fn installed(&self) -> &[String] {
        &self.installed
    }

    /// Which table set this is (a digest of the loaded files).
    pub fn table_set(&self) -> &TableSet {
        &self.table_set
    }

    /// Logs the path; remembers a reason that names the file only, as it
    /// goes to clients.
    fn reject(&mut self, path: &Path, err: &io::Error) {
        let name = file_name(path);
        let reason = if err.kind() == io::ErrorKind::InvalidData {
            format!(
                "{name} was skipped at start: its size is not that of a Syzygy table (truncated or damaged); replace it"
            )
        } else {
            format!("{name} was skipped at start: {err}")
        };
        tracing::warn!(path = %path.display(), "{reason}");
        self.rejected.insert(name, reason);
    }

    /// The DTZ of a position, or `None` when the loaded tables do not cover
    /// it (answered as "unknown"). A table that exists but cannot be read,
    /// or that is missing because its file was rejected at start, is an error.
    pub fn probe_dtz(&self, pos: &Chess) -> Result<Option<MaybeRounded<Dtz>>, EngineError> {
        match self.tablebase.probe_dtz(pos) {
            Ok(dtz) => Ok(Some(dtz)),
            Err(SyzygyError::Castling | SyzygyError::TooManyPieces) => Ok(None),
            Err(SyzygyError::MissingTable { metric, material }) => {
                match self.rejected_error(table_name(&material, metric)) {
                    Some(rejected) => Err(rejected),
                    None => Ok(None),
                }
            }
            Err(err) => Err(EngineError::from_syzygy(err)),
        }
    }

    /// Turns a probe failure into an engine error; a table that is missing
    /// only because its file was rejected at start is an error, not "unknown".
    pub fn explain(&self, err: SyzygyError) -> EngineError {
        if let SyzygyError::MissingTable { metric, material } = &err
            && let Some(rejected) = self.rejected_error(table_name(material, *metric))
        {
            return rejected;
        }
        EngineError::from_syzygy(err)
    }

    /// Why a table file was skipped at start, if it was.
    fn rejected_error(&self, table: String) -> Option<EngineError> {
        let reason = self.rejected.get(&table)?.clone();
        Some(EngineError::Table { table, reason })
    }
}
