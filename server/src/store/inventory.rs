//! What table directories hold, compared with the catalogue of published
//! tables (`tables status`): per piece count the tables present and missing,
//! files that are damaged (a size other than the published one; with
//! `verify` also a sha256 other than the published one), files that are no
//! published standard table, and what completing each usual set would add.

use std::{
    collections::{BTreeMap, BTreeSet},
    fs,
    path::{Path, PathBuf},
};

use serde::Serialize;

use super::{
    catalog::{self, PIECE_COUNTS, Published},
    published::sha256_file,
    tier::build::progress_bar,
};

/// The sets tables are usually installed and published in.
pub const SETS: [(&str, std::ops::RangeInclusive<usize>); 3] =
    [("3-4-5", 3..=5), ("6", 6..=6), ("7", 7..=7)];

/// The survey of one or more directories, taken together as `serve` would.
#[derive(Debug, Serialize)]
pub struct Inventory {
    pub directories: Vec<PathBuf>,
    /// Whether intact-looking files were also checked against their sha256.
    pub verified: bool,
    pub pieces: Vec<PieceCount>,
    pub damaged: Vec<Damaged>,
    pub unknown: Vec<Unknown>,
    /// Directories or files that could not be read, and why.
    pub unreadable: Vec<Unreadable>,
    /// What completing each usual set would add (missing and damaged files).
    pub to_complete: Vec<ToComplete>,
}

/// Tables, files and bytes of one piece count: intact ones present, and published.
#[derive(Debug, Serialize)]
pub struct PieceCount {
    pub pieces: usize,
    /// Tables whose two files (.rtbw and .rtbz) are both present and intact.
    pub tables: usize,
    pub tables_published: usize,
    pub files: usize,
    pub files_published: usize,
    pub bytes: u64,
    pub bytes_published: u64,
    /// Published files that are absent (damaged ones are listed apart).
    pub missing: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct Damaged {
    pub file: String,
    pub directory: PathBuf,
    pub bytes: u64,
    pub published_bytes: u64,
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
    pub bytes: u64,
}

/// A published file found with its published size.
struct Candidate {
    name: String,
    path: PathBuf,
    published: Published,
}

impl Inventory {
    /// Whether anything is damaged or could not be read (missing tables are
    /// normal for a partial set and do not count).
    pub fn has_problems(&self) -> bool {
        !self.damaged.is_empty() || !self.unreadable.is_empty()
    }
}

/// Surveys the directories; with `verify`, hashes every file that has its
/// published size (showing a progress bar when `progress`).
pub fn survey(dirs: &[PathBuf], verify: bool, progress: bool) -> Inventory {
    let mut inventory = Inventory {
        directories: dirs.to_vec(),
        verified: verify,
        pieces: Vec::new(),
        damaged: Vec::new(),
        unknown: Vec::new(),
        unreadable: Vec::new(),
        to_complete: Vec::new(),
    };
    let mut candidates = Vec::new();
    for dir in dirs {
        list_directory(dir, &mut inventory, &mut candidates);
    }
    if verify {
        candidates = verified(candidates, &mut inventory, progress);
    }
    let intact: BTreeMap<String, u64> = candidates
        .into_iter()
        .map(|c| (c.name, c.published.size))
        .collect();
    let damaged: BTreeSet<&str> = inventory.damaged.iter().map(|d| d.file.as_str()).collect();
    inventory.pieces = PIECE_COUNTS
        .map(|pieces| count_pieces(pieces, &intact, &damaged))
        .collect();
    inventory.to_complete = to_complete(&intact);
    inventory
}

/// Sorts one directory's files into candidates, damaged and unknown.
fn list_directory(dir: &Path, inventory: &mut Inventory, candidates: &mut Vec<Candidate>) {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(err) => {
            inventory.unreadable.push(Unreadable {
                path: dir.to_path_buf(),
                problem: format!("cannot list the directory: {err}"),
            });
            return;
        }
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    paths.sort();
    for path in paths {
        let meta = match fs::metadata(&path) {
            Ok(meta) => meta,
            Err(err) => {
                inventory.unreadable.push(Unreadable {
                    path,
                    problem: err.to_string(),
                });
                continue;
            }
        };
        if !meta.is_file() {
            continue;
        }
        let name = super::format::file_name(&path);
        let bytes = meta.len();
        let Some(published) = catalog::published(&name) else {
            inventory.unknown.push(Unknown {
                file: name,
                directory: dir.to_path_buf(),
                bytes,
            });
            continue;
        };
        if bytes != published.size {
            inventory.damaged.push(Damaged {
                problem: format!(
                    "{bytes} bytes, published {}: truncated or damaged; fetch it again",
                    published.size
                ),
                file: name,
                directory: dir.to_path_buf(),
                bytes,
                published_bytes: published.size,
            });
            continue;
        }
        if candidates.iter().all(|c| c.name != name) {
            candidates.push(Candidate {
                name,
                path,
                published,
            });
        }
    }
}

/// The candidates whose sha256 is the published one; the others go to damaged.
fn verified(
    candidates: Vec<Candidate>,
    inventory: &mut Inventory,
    progress: bool,
) -> Vec<Candidate> {
    let total = candidates.iter().map(|c| c.published.size).sum();
    let count = candidates.len();
    let bar = progress_bar(progress, total, count);
    let mut intact = Vec::new();
    for (i, candidate) in candidates.into_iter().enumerate() {
        bar.set_message(format!("{}/{count} {}", i + 1, candidate.name));
        let problem = match sha256_file(&candidate.path, |n| bar.inc(n as u64)) {
            Ok(digest) if digest == candidate.published.sha256 => None,
            Ok(digest) => Some(format!(
                "sha256 {digest} differs from the published {}: damaged; fetch it again",
                candidate.published.sha256
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
                bytes: candidate.published.size,
                published_bytes: candidate.published.size,
                problem,
            }),
        }
    }
    bar.finish_and_clear();
    intact
}

fn count_pieces(
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
        bytes_published: 0,
        missing: Vec::new(),
    };
    for material in catalog::materials_with(pieces) {
        count.tables_published += 1;
        let files = catalog::files_of(material);
        if files.iter().all(|f| intact.contains_key(f)) {
            count.tables += 1;
        }
        for file in files {
            count.files_published += 1;
            count.bytes_published += catalog::published(&file).map_or(0, |p| p.size);
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
fn to_complete(intact: &BTreeMap<String, u64>) -> Vec<ToComplete> {
    SETS.iter()
        .map(|(set, range)| {
            let lacking: Vec<u64> = catalog::names()
                .filter(|n| range.contains(&catalog::piece_count(n)) && !intact.contains_key(*n))
                .map(|n| catalog::published(n).map_or(0, |p| p.size))
                .collect();
            ToComplete {
                set,
                files: lacking.len(),
                bytes: lacking.iter().sum(),
            }
        })
        .collect()
}

/// Installed tables per piece count among file names (`serve`'s start-up
/// log): `(pieces, tables with both files, tables published)` for every
/// piece count with at least one file present.
pub fn completeness<'a>(files: impl IntoIterator<Item = &'a str>) -> Vec<(usize, usize, usize)> {
    let files: BTreeSet<&str> = files.into_iter().collect();
    PIECE_COUNTS
        .filter_map(|pieces| {
            let mut any = false;
            let mut complete = 0;
            let mut published = 0;
            for material in catalog::materials_with(pieces) {
                published += 1;
                let present = catalog::files_of(material).map(|f| files.contains(f.as_str()));
                any |= present.iter().any(|&p| p);
                complete += usize::from(present.iter().all(|&p| p));
            }
            any.then_some((pieces, complete, published))
        })
        .collect()
}
