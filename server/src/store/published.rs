//! Whole table files checked against their published sha256 (the digests
//! are in `catalog`, shipped with the program): `verify`, the scrub, `tier
//! build`.

use std::{
    collections::BTreeSet,
    fs::File,
    io::{self, Read},
    path::{Path, PathBuf},
};

use sha2::{Digest, Sha256};

use super::{
    catalog::{names, piece_count, sha256},
    format::{file_name, table_files},
    tier::build::progress_bar,
};

/// A file whose sha256 is not the published one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    pub got: String,
    pub published: &'static str,
}

/// Compares a table's sha256 with the published one; a name without a
/// published digest passes (tables of other sets).
pub fn check_digest(table: &str, sha256_hex: &str) -> Result<(), Mismatch> {
    match sha256(table) {
        Some(published) if published != sha256_hex => Err(Mismatch {
            got: sha256_hex.to_string(),
            published,
        }),
        _ => Ok(()),
    }
}

/// Why a whole file failed its check.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error("not a published table name")]
    NotPublished,
    #[error(
        "sha256 {} differs from the published {}: the file is damaged; replace it",
        .0.got,
        .0.published
    )]
    Damaged(Mismatch),
    #[error("cannot read: {0}")]
    Read(#[from] io::Error),
}

/// Compares one file with its published digest, calling `progress` with
/// each chunk's size (the scrub throttles there).
pub fn check_file(path: &Path, progress: impl FnMut(usize)) -> Result<(), CheckError> {
    let name = file_name(path);
    if sha256(&name).is_none() {
        return Err(CheckError::NotPublished);
    }
    let digest = sha256_file(path, progress)?;
    check_digest(&name, &digest).map_err(CheckError::Damaged)
}

/// sha256 of a file, calling `progress` with each chunk's size.
pub fn sha256_file(path: &Path, mut progress: impl FnMut(usize)) -> io::Result<String> {
    let mut file = File::open(path)?;
    let mut sha = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    read_chunks(&mut file, &mut buf, |bytes| {
        sha.update(bytes);
        progress(bytes.len());
    })?;
    Ok(format!("{:x}", sha.finalize()))
}

/// Reads a file to its end in chunks of `buf`'s size (the last may be
/// shorter), handing each to `each`; returns the bytes read.
pub fn read_chunks(
    file: &mut File,
    buf: &mut [u8],
    mut each: impl FnMut(&[u8]),
) -> io::Result<u64> {
    let mut total = 0;
    loop {
        let mut filled = 0;
        while filled < buf.len() {
            match file.read(&mut buf[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => return Err(err),
            }
        }
        if filled == 0 {
            return Ok(total);
        }
        each(&buf[..filled]);
        total += filled as u64;
    }
}

/// What a check found.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Findings {
    pub checked: u64,
    pub bytes: u64,
    /// Table name and what is wrong with it.
    pub mismatched: Vec<(String, String)>,
    /// Files with table names that are not in the published list.
    pub extra: Vec<String>,
    /// Published tables of the piece counts present that are not there.
    pub missing: Vec<String>,
}

impl Findings {
    pub fn is_clean(&self, partial: bool) -> bool {
        self.mismatched.is_empty() && self.extra.is_empty() && (partial || self.missing.is_empty())
    }
}

/// Checks every table file of the directories.
pub fn check_dirs(dirs: &[PathBuf], progress: bool) -> Findings {
    let mut findings = Findings::default();
    let mut failures = Vec::new();
    let files = table_files(dirs, &mut failures);
    findings.mismatched.extend(failures);
    let sizes: Vec<u64> = files
        .iter()
        .map(|f| f.metadata().map_or(0, |m| m.len()))
        .collect();
    let bar = progress_bar(progress, sizes.iter().sum(), files.len());
    let mut present = BTreeSet::new();
    for (i, path) in files.iter().enumerate() {
        let name = file_name(path);
        bar.set_message(format!("{}/{} {name}", i + 1, files.len()));
        present.insert(name.clone());
        if sha256(&name).is_none() {
            findings.extra.push(name);
            bar.inc(sizes[i]);
            continue;
        }
        findings.checked += 1;
        findings.bytes += sizes[i];
        if let Err(problem) = check_file(path, |n| bar.inc(n as u64)) {
            let problem = problem.to_string();
            bar.suspend(|| eprintln!("{name}: {problem}"));
            findings.mismatched.push((name, problem));
        }
    }
    bar.finish_and_clear();
    let counts: BTreeSet<usize> = present.iter().map(|n| piece_count(n)).collect();
    let mut missing: Vec<String> = names()
        .filter(|n| counts.contains(&piece_count(n)) && !present.contains(*n))
        .map(str::to_string)
        .collect();
    missing.sort();
    findings.missing = missing;
    findings
}
