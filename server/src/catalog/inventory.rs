//! What table directories hold of one variant's tables, compared with the
//! catalogue of published ones (`tables status`): per piece count the
//! tables present and missing, files that are damaged (a size other than
//! the published one where sizes are published; with `verify` also a
//! digest other than the published one), files that are no published
//! table of the variant, and what completing each usual set would add;
//! with `--dtm`, the Prophet DTM tables too (`prophet::survey`).

use std::{
    collections::{BTreeMap, BTreeSet},
    fs, io,
    path::{Path, PathBuf},
};

use app::{material::piece_count, variant::Variant};
use serde::Serialize;

use super::{Catalog, Published, dependencies};
use crate::{
    catalog,
    dtm::{catalog::DtmInventory, format as prophet_format},
    progress::Progress,
    store::{
        layout::table_files,
        quarantine::Quarantine,
        remote::{RemoteSources, is_remote},
    },
};

/// The survey of one or more directories, taken together as `serve` would.
#[derive(Debug, Serialize)]
pub struct Inventory {
    pub variant: Variant,
    pub directories: Vec<PathBuf>,
    /// Whether intact-looking files were also checked against their digest.
    pub verified: bool,
    /// The published digest's algorithm: `sha256` (standard), `md5` (atomic, antichess).
    pub digest: &'static str,
    /// Whether sizes are published: without them (atomic, antichess) only
    /// `verified` tells a damaged file.
    pub sizes_published: bool,
    pub pieces: Vec<PieceCount>,
    pub damaged: Vec<Damaged>,
    pub unknown: Vec<Unknown>,
    /// Directories or files that could not be read, and why.
    pub unreadable: Vec<Unreadable>,
    /// What completing each usual set would add (missing and damaged files).
    pub to_complete: Vec<ToComplete>,
    /// Prophet DTM tables, when asked for (`tables status --dtm DIR`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dtm: Option<DtmInventory>,
    /// Tables a check found damaged and `serve` refuses (their quarantine
    /// records), Syzygy and DTM alike.
    pub quarantined: Vec<Quarantined>,
}

impl Quarantined {
    /// The quarantined tables among the table files (Syzygy and Prophet)
    /// of `dirs`, as `serve` with the same state directory would see them.
    pub fn among(dirs: &[PathBuf], quarantine: &Quarantine) -> Vec<Quarantined> {
        let mut ignored = Vec::new();
        let files = table_files(dirs, &mut ignored)
            .into_iter()
            .chain(prophet_format::table_files(dirs, &mut ignored));
        let mut found: Vec<Quarantined> = files
            .filter_map(|path| quarantine.find_at(&path))
            .map(|record| Quarantined {
                table: record.table,
                check: record.check,
                reason: record.reason,
                at: record.at,
            })
            .collect();
        found.sort_by(|a, b| a.table.cmp(&b.table));
        found
    }
}

/// A table `serve` refuses until it is replaced or verifies clean.
#[derive(Debug, Serialize)]
pub struct Quarantined {
    pub table: String,
    /// What found it: `verify`, `tier build`, `the scrub`, `a block check on read`.
    pub check: String,
    pub reason: String,
    /// When, in seconds since the epoch.
    pub at: u64,
}

/// Tables, files and bytes of one piece count: intact ones present, and published.
#[derive(Debug, Serialize)]
pub struct PieceCount {
    pub pieces: usize,
    /// Tables whose two files (WDL and DTZ) are both present and intact.
    pub tables: usize,
    pub tables_published: usize,
    pub files: usize,
    pub files_published: usize,
    /// Bytes of the intact files present.
    pub bytes: u64,
    /// `None` where sizes are not published.
    pub bytes_published: Option<u64>,
    /// Published files that are absent (damaged ones are listed apart).
    pub missing: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct Damaged {
    pub file: String,
    pub directory: PathBuf,
    pub bytes: u64,
    pub published_bytes: Option<u64>,
    pub problem: String,
}

#[derive(Debug, Serialize)]
pub struct Unknown {
    pub file: String,
    pub directory: PathBuf,
    pub bytes: u64,
}

#[derive(Debug, Serialize)]
pub struct Unreadable {
    pub path: PathBuf,
    pub problem: String,
}

#[derive(Debug, Serialize)]
pub struct ToComplete {
    pub set: &'static str,
    pub files: usize,
    /// `None` where sizes are not published.
    pub bytes: Option<u64>,
}

/// A published file found, with its published size if any.
struct Candidate {
    name: String,
    path: PathBuf,
    bytes: u64,
    published: Published,
}

impl Inventory {
    /// Whether anything is damaged or could not be read (missing tables are
    /// normal for a partial set and do not count).
    pub fn has_problems(&self) -> bool {
        !self.damaged.is_empty()
            || !self.unreadable.is_empty()
            || !self.quarantined.is_empty()
            || self.dtm.as_ref().is_some_and(DtmInventory::has_problems)
    }
}

/// Surveys the directories for the variant's tables; with `verify`, hashes
/// every file that may be intact (showing a progress bar when `progress`).
pub fn survey(
    dirs: &[PathBuf],
    variant: Variant,
    verify: bool,
    progress: &dyn Progress,
) -> Inventory {
    survey_with(dirs, None, variant, verify, progress)
}

/// [`survey`], where some of `dirs` may be remote sources (`s3://`,
/// `https://`) listed by `remote`: their objects are judged by name and
/// size from the listing, and with `verify` each is streamed once by one
/// GET and its digest checked.
pub fn survey_with(
    dirs: &[PathBuf],
    remote: Option<&RemoteSources>,
    variant: Variant,
    verify: bool,
    progress: &dyn Progress,
) -> Inventory {
    let catalog = catalog::of(variant);
    let mut inventory = Inventory {
        variant,
        directories: dirs.to_vec(),
        verified: verify,
        digest: catalog.algorithm(),
        sizes_published: catalog.has_sizes(),
        pieces: Vec::new(),
        damaged: Vec::new(),
        unknown: Vec::new(),
        unreadable: Vec::new(),
        to_complete: Vec::new(),
        dtm: None,
        quarantined: Vec::new(),
    };
    let mut candidates = Vec::new();
    for dir in dirs {
        list_directory(catalog, dir, remote, &mut inventory, &mut candidates);
    }
    if verify {
        candidates = verified(candidates, remote, &mut inventory, progress);
    }
    let intact: BTreeMap<String, u64> = candidates.into_iter().map(|c| (c.name, c.bytes)).collect();
    let damaged: BTreeSet<&str> = inventory.damaged.iter().map(|d| d.file.as_str()).collect();
    inventory.pieces = catalog
        .piece_counts()
        .into_iter()
        .map(|pieces| count_pieces(catalog, pieces, &intact, &damaged))
        .collect();
    inventory.to_complete = to_complete(catalog, &intact);
    inventory
}

/// Sorts one directory's files into candidates, damaged and unknown.
fn list_directory(
    catalog: &Catalog,
    dir: &Path,
    remote: Option<&RemoteSources>,
    inventory: &mut Inventory,
    candidates: &mut Vec<Candidate>,
) {
    let files = match remote.filter(|_| is_remote(dir)) {
        Some(remote) => remote_files(remote, dir),
        None => local_files(dir),
    };
    let files = match files {
        Ok(files) => files,
        Err(err) => {
            inventory.unreadable.push(Unreadable {
                path: dir.to_path_buf(),
                problem: format!("cannot list the directory: {err}"),
            });
            return;
        }
    };
    for (path, size) in files {
        let bytes = match size {
            Ok(Some(bytes)) => bytes,
            // Not a file (a subdirectory).
            Ok(None) => continue,
            Err(err) => {
                inventory.unreadable.push(Unreadable {
                    path,
                    problem: err.to_string(),
                });
                continue;
            }
        };
        let name = crate::store::layout::file_name(&path);
        let Some(published) = catalog.published(&name) else {
            inventory.unknown.push(Unknown {
                file: name,
                directory: dir.to_path_buf(),
                bytes,
            });
            continue;
        };
        if let Some(size) = published.size.filter(|&size| size != bytes) {
            inventory.damaged.push(Damaged {
                problem: format!(
                    "{bytes} bytes, published {size}: truncated or damaged; fetch it again"
                ),
                file: name,
                directory: dir.to_path_buf(),
                bytes,
                published_bytes: Some(size),
            });
            continue;
        }
        if candidates.iter().all(|c| c.name != name) {
            candidates.push(Candidate {
                name,
                path,
                bytes,
                published,
            });
        }
    }
}

/// A file's size, `None` for what is not a file.
type Listed = (PathBuf, io::Result<Option<u64>>);

/// The entries of a directory, sorted, with their sizes.
fn local_files(dir: &Path) -> io::Result<Vec<Listed>> {
    let mut paths: Vec<PathBuf> = fs::read_dir(dir)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    paths.sort();
    Ok(paths
        .into_iter()
        .map(|path| {
            let size = fs::metadata(&path).map(|meta| meta.is_file().then_some(meta.len()));
            (path, size)
        })
        .collect())
}

/// The objects directly under a remote source's "directory", with the
/// sizes its listing at start gave.
fn remote_files(remote: &RemoteSources, dir: &Path) -> io::Result<Vec<Listed>> {
    let mut paths = remote.read_dir(dir)?;
    paths.sort();
    Ok(paths
        .into_iter()
        .map(|path| {
            let size = Ok(remote.stat(&path).ok().map(|listed| listed.size));
            (path, size)
        })
        .collect())
}

/// The candidates whose digest is the published one; the others go to damaged.
fn verified(
    candidates: Vec<Candidate>,
    remote: Option<&RemoteSources>,
    inventory: &mut Inventory,
    progress: &dyn Progress,
) -> Vec<Candidate> {
    let total = candidates.iter().map(|c| c.bytes).sum();
    let count = candidates.len();
    progress.start(total, count);
    let mut intact = Vec::new();
    for (i, candidate) in candidates.into_iter().enumerate() {
        progress.message(&format!("{}/{count} {}", i + 1, candidate.name));
        let published = candidate.published.digest;
        let advance = |n| progress.advance(n as u64);
        let problem = match published.of_table(&candidate.path, remote, advance) {
            Ok(digest) if digest == published.hex() => None,
            Ok(digest) => Some(format!(
                "{} {digest} differs from the published {}: damaged; fetch it again",
                published.algorithm(),
                published.hex()
            )),
            Err(err) => Some(format!("cannot read: {err}")),
        };
        match problem {
            None => intact.push(candidate),
            Some(problem) => inventory.damaged.push(Damaged {
                file: candidate.name,
                directory: candidate
                    .path
                    .parent()
                    .map(Path::to_path_buf)
                    .unwrap_or_default(),
                bytes: candidate.bytes,
                published_bytes: candidate.published.size,
                problem,
            }),
        }
    }
    progress.finish();
    intact
}

fn count_pieces(
    catalog: &Catalog,
    pieces: usize,
    intact: &BTreeMap<String, u64>,
    damaged: &BTreeSet<&str>,
) -> PieceCount {
    let mut count = PieceCount {
        pieces,
        tables: 0,
        tables_published: 0,
        files: 0,
        files_published: 0,
        bytes: 0,
        bytes_published: Some(0),
        missing: Vec::new(),
    };
    for material in catalog.materials_with(pieces) {
        count.tables_published += 1;
        let files = catalog.files_of(material);
        if files.iter().all(|f| intact.contains_key(f)) {
            count.tables += 1;
        }
        for file in files {
            count.files_published += 1;
            let size = catalog.published(&file).and_then(|p| p.size);
            count.bytes_published = count.bytes_published.zip(size).map(|(a, b)| a + b);
            if let Some(bytes) = intact.get(&file) {
                count.files += 1;
                count.bytes += bytes;
            } else if !damaged.contains(file.as_str()) {
                count.missing.push(file);
            }
        }
    }
    count
}

/// Files and bytes each usual set lacks (absent or damaged).
fn to_complete(catalog: &Catalog, intact: &BTreeMap<String, u64>) -> Vec<ToComplete> {
    catalog
        .sets()
        .iter()
        .map(|(set, range)| {
            let lacking: Vec<Option<u64>> = catalog
                .names()
                .filter(|n| range.contains(&piece_count(n)) && !intact.contains_key(*n))
                .map(|n| catalog.published(n).and_then(|p| p.size))
                .collect();
            ToComplete {
                set,
                files: lacking.len(),
                bytes: lacking.iter().try_fold(0, |sum, size| Some(sum + (*size)?)),
            }
        })
        .collect()
}

/// A variant's materials (`KRvK`) with both their files among `files`:
/// the tables a server that loaded those files can answer from. Published
/// ones, and beyond what the shipped list covers (6-piece atomic, antichess
/// with pawns) any material spelled as the tables spell it, so that a host
/// with those tables sees them counted, not called missing.
pub fn installed_materials<'a>(
    variant: Variant,
    files: impl IntoIterator<Item = &'a str>,
) -> BTreeSet<String> {
    let files: BTreeSet<&str> = files.into_iter().collect();
    let catalog = catalog::of(variant);
    files
        .iter()
        .filter_map(|file| file.split_once('.').map(|(material, _)| material))
        .filter(|material| dependencies::is_material(material))
        .filter(|material| {
            catalog
                .files_of(material)
                .iter()
                .all(|f| files.contains(f.as_str()))
        })
        .map(str::to_string)
        .collect()
}

/// A variant's installed tables per piece count among file names
/// (`serve`'s start-up log): `(pieces, tables with both files, tables
/// published)` for every piece count with at least one file present.
pub fn completeness<'a>(
    variant: Variant,
    files: impl IntoIterator<Item = &'a str> + Clone,
) -> Vec<(usize, usize, usize)> {
    let catalog = catalog::of(variant);
    let installed = installed_materials(variant, files.clone());
    let present: BTreeSet<usize> = files
        .into_iter()
        .filter(|file| catalog.material_of(file).is_some())
        .map(piece_count)
        .collect();
    present
        .into_iter()
        .map(|pieces| {
            let complete = installed
                .iter()
                .filter(|m| piece_count(m) == pieces && catalog.canonical(m).is_some())
                .count();
            (pieces, complete, catalog.materials_with(pieces).count())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn installed_tables_include_those_beyond_the_shipped_list() {
        // Atomic: the shipped list stops at 5 pieces; a host's 6-piece table
        // with both files is installed, one with a single file is not, and
        // a stray file is no table.
        let files = [
            "KQvK.atbw",
            "KQvK.atbz",
            "KQRvKQN.atbw",
            "KQRvKQN.atbz",
            "KRRvKQN.atbw",
            "notes.atbw",
            "notes.atbz",
            "KQvK.rtbw",
        ];
        let installed = installed_materials(Variant::Atomic, files);
        assert_eq!(
            installed.into_iter().collect::<Vec<_>>(),
            ["KQRvKQN", "KQvK"]
        );
        // The start-up log counts only published tables against the list.
        assert_eq!(completeness(Variant::Atomic, files), [(3, 1, 5)]);
    }
}
