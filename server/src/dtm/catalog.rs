//! Prophet DTM tables (`*.egtb.bz`) for self-hosters: the set the
//! generator writes for 2 to 4 pieces (the names of the embedded
//! `tables-prophet/MD5SUMS`), `MD5SUMS` lists found beside tables (the
//! generator's layout: `./4men/0pawns/KBNK.egtb.bz`), and the whole-file
//! check `verify`, `tier build` and the scrub make: the file's own checksum
//! field (Prophet's, over all decompressed values) and, where a list names
//! the file, its md5. Both come from one read of the file.
//!
//! Prophet publishes no digests of its own, so unlike Syzygy tables there
//! is no shipped list to compare with: the shipped `MD5SUMS` names the
//! expected 2-4 piece set (the generator at 0b54777 is deterministic, but
//! another version may write other bytes for the same values), and the
//! checksum field is what tells a damaged file.

use std::{
    collections::{BTreeMap, BTreeSet, HashMap},
    fs::{self, File},
    io,
    path::{Component, Path, PathBuf},
};

use app::material::piece_count;
use md5::{Digest as _, Md5};
use serde::Serialize;

use super::{
    ProphetError,
    format::{self as prophet_format, StreamCheck, TableFile, material_of_name},
    index::Layout,
};
use crate::{
    catalog::{
        digests::parse_md5sums,
        whole_file::{hex, read_chunks},
    },
    progress::Progress,
    store::layout::file_name,
};

/// The md5 list of the embedded tables, one line per file of the 2-4 piece set.
static EMBEDDED_MD5SUMS: &str = include_str!("../../tables-prophet/MD5SUMS");

pub use super::format::MD5SUMS;

/// The piece counts of the expected set.
pub const EXPECTED_PIECES: std::ops::RangeInclusive<usize> = 2..=4;

/// Every Prophet file of 2 to 4 pieces (`KBNK.egtb.bz`), sorted: one per
/// material and side to move, one for a symmetric material.
pub fn expected_files() -> BTreeSet<&'static str> {
    parse_md5sums(EMBEDDED_MD5SUMS)
        .map(|(_, path)| path.rsplit('/').next().unwrap_or(path))
        .filter(|name| prophet_format::is_table_name(name))
        .collect()
}

/// A path with `.` components left out, so that `DIR/./4men/x` and
/// `DIR/4men/x` compare equal.
fn normalized(path: &Path) -> PathBuf {
    path.components()
        .filter(|c| *c != Component::CurDir)
        .collect()
}

/// An md5 a list gives for a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    pub md5: String,
    /// The list that says so.
    pub list: PathBuf,
}

/// The `MD5SUMS` lists found in table directories and the subdirectories
/// their tables are in: the md5 each gives per file.
#[derive(Debug, Default)]
pub struct Md5Lists {
    files: HashMap<PathBuf, Listed>,
    lists: BTreeSet<PathBuf>,
}

impl Md5Lists {
    /// Reads the `MD5SUMS` in `root` and in every directory between it and
    /// the `files` under it; a list that cannot be read is a failure (path,
    /// problem); one that does not exist is not.
    pub fn load(root: &Path, files: &[PathBuf], failures: &mut Vec<(String, String)>) -> Md5Lists {
        let mut dirs = BTreeSet::new();
        dirs.insert(root.to_path_buf());
        for file in files {
            let Ok(relative) = file.strip_prefix(root) else {
                continue;
            };
            let mut dir = root.to_path_buf();
            for part in relative.parent().into_iter().flat_map(Path::components) {
                dir.push(part);
                dirs.insert(dir.clone());
            }
        }
        let mut lists = Md5Lists::default();
        for dir in dirs {
            lists.read(&dir, failures);
        }
        lists
    }

    fn read(&mut self, dir: &Path, failures: &mut Vec<(String, String)>) {
        let list = dir.join(MD5SUMS);
        let text = match fs::read_to_string(&list) {
            Ok(text) => text,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return,
            Err(err) => {
                failures.push((
                    list.display().to_string(),
                    format!("cannot read the md5 list: {err}"),
                ));
                return;
            }
        };
        for (md5, path) in parse_md5sums(&text) {
            if !prophet_format::is_table_name(&file_name(Path::new(path))) {
                continue;
            }
            self.files.insert(
                normalized(&dir.join(path)),
                Listed {
                    md5: md5.to_ascii_lowercase(),
                    list: list.clone(),
                },
            );
        }
        self.lists.insert(list);
    }

    /// What the lists say of a file.
    pub fn get(&self, file: &Path) -> Option<&Listed> {
        self.files.get(&normalized(file))
    }

    /// Every file the lists name (whether it exists or not).
    pub fn files(&self) -> impl Iterator<Item = &Path> {
        self.files.keys().map(PathBuf::as_path)
    }

    /// The lists read.
    pub fn lists(&self) -> impl Iterator<Item = &Path> {
        self.lists.iter().map(PathBuf::as_path)
    }
}

/// The Prophet files of some directories, each with the md5 a list gives.
#[derive(Debug, Default)]
pub struct Found {
    /// Files sorted by name, with what a list says of each.
    pub files: Vec<(PathBuf, Option<Listed>)>,
    /// File names the lists give that are not among `files`, sorted.
    pub listed_absent: Vec<String>,
    /// Directories or lists that could not be read: path, problem.
    pub failures: Vec<(String, String)>,
}

/// Finds the Prophet files of `dirs` (see
/// [`prophet_format::table_files`]) and the md5 lists beside them.
pub fn find(dirs: &[PathBuf]) -> Found {
    let mut found = Found::default();
    let mut names = BTreeSet::new();
    let mut listed = BTreeSet::new();
    for dir in dirs {
        let files = prophet_format::table_files(std::slice::from_ref(dir), &mut found.failures);
        let lists = Md5Lists::load(dir, &files, &mut found.failures);
        listed.extend(lists.files().map(file_name));
        for file in files {
            names.insert(file_name(&file));
            let entry = lists.get(&file).cloned();
            found.files.push((file, entry));
        }
    }
    found
        .files
        .sort_by(|a, b| a.0.file_name().cmp(&b.0.file_name()).then(a.0.cmp(&b.0)));
    found.listed_absent = listed.difference(&names).cloned().collect();
    found
}

/// Why a Prophet file failed its whole-file check.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error(
        "md5 {got} differs from {listed} in its {}: the file is damaged; fetch it again",
        file_name(list)
    )]
    Md5 {
        got: String,
        listed: String,
        list: PathBuf,
    },
    #[error(transparent)]
    Table(#[from] ProphetError),
    #[error("cannot read: {0}")]
    Read(#[from] io::Error),
}

impl CheckError {
    /// Whether the file's bytes are wrong (not merely unreadable).
    pub fn is_damage(&self) -> bool {
        !matches!(
            self,
            CheckError::Read(_) | CheckError::Table(ProphetError::Read { .. })
        )
    }
}

/// What one read of a Prophet file computes besides its checks: hand it
/// every byte in order ([`FileCheck::feed`]), then [`FileCheck::finish`].
pub struct FileCheck {
    stream: StreamCheck,
    md5: Md5,
    listed: Option<Listed>,
}

impl FileCheck {
    pub fn new(path: &Path, listed: Option<Listed>) -> Result<FileCheck, CheckError> {
        Ok(FileCheck {
            stream: StreamCheck::new(path)?,
            md5: Md5::new(),
            listed,
        })
    }

    pub fn feed(&mut self, bytes: &[u8]) {
        self.stream.feed(bytes);
        self.md5.update(bytes);
    }

    /// The file's md5, once its checksum field and (where listed) md5 pass.
    pub fn finish(self) -> Result<String, CheckError> {
        let got = hex(&self.md5.finalize());
        if let Some(listed) = self.listed
            && listed.md5 != got
        {
            return Err(CheckError::Md5 {
                got,
                listed: listed.md5,
                list: listed.list,
            });
        }
        self.stream.finish()?;
        Ok(got)
    }
}

/// Checks one Prophet file whole: its checksum field, and its md5 where a
/// list gives one, reading it once and calling `progress` with each
/// chunk's size (the scrub throttles there).
pub fn check_file(
    path: &Path,
    listed: Option<&Listed>,
    mut progress: impl FnMut(usize),
) -> Result<(), CheckError> {
    let mut check = FileCheck::new(path, listed.cloned())?;
    let mut file = File::open(path)?;
    let mut buf = vec![0u8; 1 << 20];
    read_chunks(&mut file, &mut buf, |bytes| {
        check.feed(bytes);
        progress(bytes.len());
    })?;
    check.finish().map(|_| ())
}

/// Checks every Prophet file of `dirs` whole, reporting to `progress`:
/// `(checked, bytes, damaged (name, problem), missing names)`, where
/// missing are files the lists name and files of the 2-4 piece set of a
/// piece count the directories hold some of, that are absent.
pub fn check_dirs(dirs: &[PathBuf], progress: &dyn Progress) -> Checked {
    let found = find(dirs);
    let mut checked = Checked {
        damaged: found.failures.clone(),
        ..Checked::default()
    };
    let sizes: Vec<u64> = found
        .files
        .iter()
        .map(|(f, _)| f.metadata().map_or(0, |m| m.len()))
        .collect();
    progress.start(sizes.iter().sum(), found.files.len());
    for (i, (path, listed)) in found.files.iter().enumerate() {
        let name = file_name(path);
        progress.message(&format!("{}/{} {name}", i + 1, found.files.len()));
        checked.files += 1;
        checked.bytes += sizes[i];
        match check_file(path, listed.as_ref(), |n| progress.advance(n as u64)) {
            Ok(()) if listed.is_some() => checked.whole.push(path.clone()),
            Ok(()) => checked.unlisted.push(name),
            Err(err) => {
                let problem = err.to_string();
                progress.problem(&name, &problem);
                if err.is_damage() {
                    checked.damaged_paths.push((path.clone(), problem.clone()));
                }
                checked.damaged.push((name, problem));
            }
        }
    }
    progress.finish();
    checked.missing = missing(&found);
    checked
}

/// Files the lists name, and files of the 2-4 piece set of a piece count
/// present, that are not there; sorted.
fn missing(found: &Found) -> Vec<String> {
    let present: BTreeSet<String> = found.files.iter().map(|(f, _)| file_name(f)).collect();
    let counts: BTreeSet<usize> = present.iter().map(|n| piece_count(n)).collect();
    let mut missing: BTreeSet<String> = found.listed_absent.iter().cloned().collect();
    missing.extend(
        expected_files()
            .into_iter()
            .filter(|n| counts.contains(&piece_count(n)) && !present.contains(*n))
            .map(str::to_string),
    );
    missing.into_iter().collect()
}

/// What [`check_dirs`] found.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Checked {
    pub files: u64,
    pub bytes: u64,
    /// File (or directory) and what is wrong with it.
    pub damaged: Vec<(String, String)>,
    pub missing: Vec<String>,
    /// Files no `MD5SUMS` lists: only their own checksum field was checked,
    /// which misses swapped blocks, so they count as never checked.
    pub unlisted: Vec<String>,
    /// Files whose bytes are wrong, and why: to be quarantined.
    pub damaged_paths: Vec<(PathBuf, String)>,
    /// Files that passed against a listed md5: whole, their quarantine cleared.
    pub whole: Vec<PathBuf>,
}

/// The Prophet tables of some directories (`tables status --dtm`): per
/// piece count the files found and their bytes, the 2-4 piece files
/// missing, damaged and unreadable files.
#[derive(Debug, Serialize)]
pub struct DtmInventory {
    pub directories: Vec<PathBuf>,
    /// Whether every file was read whole (checksum field, md5 where
    /// listed); otherwise only the header, the block list and the length
    /// were checked.
    pub verified: bool,
    /// The md5 lists found beside the tables.
    pub md5_lists: Vec<PathBuf>,
    pub pieces: Vec<DtmPieceCount>,
    pub damaged: Vec<DtmDamaged>,
    pub unreadable: Vec<DtmUnreadable>,
}

/// A Prophet file that failed its check.
#[derive(Debug, Serialize)]
pub struct DtmDamaged {
    pub file: String,
    pub directory: PathBuf,
    pub bytes: u64,
    pub problem: String,
}

/// A directory, list or file that could not be read.
#[derive(Debug, Serialize)]
pub struct DtmUnreadable {
    pub path: PathBuf,
    pub problem: String,
}

/// Prophet files of one piece count.
#[derive(Debug, Serialize)]
pub struct DtmPieceCount {
    pub pieces: usize,
    /// Intact files present.
    pub files: usize,
    /// Files of the 2-4 piece set (`None` above 4 pieces, where the set is
    /// not shipped).
    pub files_expected: Option<usize>,
    /// Bytes of the intact files on disk.
    pub bytes: u64,
    /// Files of the set, or named by a list, that are absent.
    pub missing: Vec<String>,
}

impl DtmInventory {
    pub fn has_problems(&self) -> bool {
        !self.damaged.is_empty() || !self.unreadable.is_empty()
    }
}

/// Surveys the Prophet tables of `dirs`; with `verify` each file is read
/// whole (checksum field, md5 where listed), else opened (header, block
/// list, length).
pub fn survey(dirs: &[PathBuf], verify: bool, progress: &dyn Progress) -> DtmInventory {
    let found = find(dirs);
    let mut inventory = DtmInventory {
        directories: dirs.to_vec(),
        verified: verify,
        md5_lists: lists_used(&found),
        pieces: Vec::new(),
        damaged: Vec::new(),
        unreadable: found
            .failures
            .iter()
            .map(|(path, problem)| DtmUnreadable {
                path: PathBuf::from(path),
                problem: problem.clone(),
            })
            .collect(),
    };
    let intact = survey_files(&found, verify, progress, &mut inventory);
    let damaged: BTreeSet<String> = inventory.damaged.iter().map(|d| d.file.clone()).collect();
    inventory.pieces = per_piece_count(&intact, &missing(&found), &damaged);
    inventory
}

/// The md5 lists that name a file found: those are the ones the status
/// shows, a list naming none of the files found says nothing of them.
fn lists_used(found: &Found) -> Vec<PathBuf> {
    let mut lists = BTreeSet::new();
    for (_, listed) in &found.files {
        lists.extend(listed.iter().map(|l| l.list.clone()));
    }
    lists.into_iter().collect()
}

/// Checks every file found, adding the damaged and unreadable ones to
/// `inventory`; returns the bytes of the intact ones by name. The first
/// file of each name counts, as `tables status` counts Syzygy files.
fn survey_files(
    found: &Found,
    verify: bool,
    progress: &dyn Progress,
    inventory: &mut DtmInventory,
) -> BTreeMap<String, u64> {
    if verify {
        let total = found
            .files
            .iter()
            .map(|(f, _)| f.metadata().map_or(0, |m| m.len()))
            .sum();
        progress.start(total, found.files.len());
    }
    let mut intact: BTreeMap<String, u64> = BTreeMap::new();
    for (i, (path, listed)) in found.files.iter().enumerate() {
        let name = file_name(path);
        let bytes = match fs::metadata(path) {
            Ok(meta) => meta.len(),
            Err(err) => {
                inventory.unreadable.push(DtmUnreadable {
                    path: path.clone(),
                    problem: err.to_string(),
                });
                continue;
            }
        };
        let problem = if verify {
            progress.message(&format!("{}/{} {name}", i + 1, found.files.len()));
            check_file(path, listed.as_ref(), |n| progress.advance(n as u64))
                .err()
                .map(|e| e.to_string())
        } else {
            open_check(path).err().map(|e| e.to_string())
        };
        match problem {
            Some(problem) => inventory.damaged.push(DtmDamaged {
                file: name,
                directory: path.parent().map(Path::to_path_buf).unwrap_or_default(),
                bytes,
                problem,
            }),
            None => {
                intact.entry(name).or_insert(bytes);
            }
        }
    }
    if verify {
        progress.finish();
    }
    intact
}

/// The survey per piece count: every count a file is found, missing or
/// damaged at, and always those of the 2-4 piece set, so an empty
/// directory still shows what it lacks. A damaged file is not also
/// missing.
fn per_piece_count(
    intact: &BTreeMap<String, u64>,
    absent: &[String],
    damaged: &BTreeSet<String>,
) -> Vec<DtmPieceCount> {
    let expected = expected_files();
    let mut counts: BTreeSet<usize> = intact.keys().map(|n| piece_count(n)).collect();
    counts.extend(absent.iter().map(|n| piece_count(n)));
    counts.extend(damaged.iter().map(|n| piece_count(n)));
    counts.extend(EXPECTED_PIECES);
    counts
        .into_iter()
        .map(|pieces| {
            let of = |n: &&String| piece_count(n) == pieces;
            DtmPieceCount {
                pieces,
                files: intact.keys().filter(of).count(),
                files_expected: EXPECTED_PIECES
                    .contains(&pieces)
                    .then(|| expected.iter().filter(|n| piece_count(n) == pieces).count()),
                bytes: intact
                    .iter()
                    .filter(|(n, _)| piece_count(n) == pieces)
                    .map(|(_, b)| b)
                    .sum(),
                missing: absent
                    .iter()
                    .filter(of)
                    .filter(|n| !damaged.contains(*n))
                    .cloned()
                    .collect(),
            }
        })
        .collect()
}

/// Opens a file as the server does (header, block list, length), without
/// reading its blocks.
fn open_check(path: &Path) -> Result<(), ProphetError> {
    let name = file_name(path);
    let material = material_of_name(&name).ok_or_else(|| ProphetError::Corrupt {
        path: path.to_owned(),
        what: "not a Prophet table name".to_owned(),
    })?;
    let fs = shakmaty_syzygy::filesystem::OsFilesystem::new();
    TableFile::open(&fs, path, Layout::new(material).num_positions()).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knows_the_2_to_4_piece_set() {
        let expected = expected_files();
        assert_eq!(expected.len(), 66);
        let per_count: Vec<usize> = (2..=4)
            .map(|p| expected.iter().filter(|n| piece_count(n) == p).count())
            .collect();
        assert_eq!(per_count.iter().sum::<usize>(), 66);
        assert!(expected.contains("KBNK.egtb.bz") && expected.contains("KK.egtb.bz"));
    }

    #[test]
    fn reads_md5_lists_of_the_generators_layout() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("4men/0pawns");
        fs::create_dir_all(&sub).unwrap();
        fs::write(
            dir.path().join(MD5SUMS),
            "0123456789abcdef0123456789abcdef  ./4men/0pawns/KBNK.egtb.bz\n\
             garbage\n\
             fedcba9876543210fedcba9876543210 *KQK.egtb.bz\n",
        )
        .unwrap();
        let file = sub.join("KBNK.egtb.bz");
        let mut failures = Vec::new();
        let lists = Md5Lists::load(dir.path(), std::slice::from_ref(&file), &mut failures);
        assert!(failures.is_empty());
        assert_eq!(
            lists.get(&file).map(|l| l.md5.as_str()),
            Some("0123456789abcdef0123456789abcdef")
        );
        assert!(lists.get(&dir.path().join("KQK.egtb.bz")).is_some());
        assert_eq!(lists.files().count(), 2);
    }
}
