//! Whole table files checked against their published digests, shipped
//! with the program: sha256 for standard tables (`catalog`), md5 for atomic
//! and antichess ones (`digests`, the only digests published for
//! them). Used by `verify`, the scrub and `tier build`.

use std::{
    collections::BTreeSet,
    fs::File,
    io::{self, Read},
    path::{Path, PathBuf},
};

use md5::{Digest as _, Md5};
use sha2::{Digest, Sha256};

use app::{material::piece_count, variant::Variant};

use super::{digests as variant_digests, sha256};
use crate::{
    catalog,
    progress::Progress,
    store::layout::{file_name, table_files, variant_of_name},
};

/// The digest a table file is published with: the lists compiled in hold
/// `&'static str`, a digest read at run time (a mirror's `MD5SUMS`) a
/// `String`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PublishedDigest<Hex = &'static str> {
    /// Standard tables: sha256, lowercase hex.
    Sha256(Hex),
    /// Atomic and antichess tables, Prophet files: md5, lowercase hex.
    Md5(Hex),
}

impl PublishedDigest {
    /// The published digest of a file name, of whichever variant (its
    /// suffix says which).
    pub fn of(name: &str) -> Option<PublishedDigest> {
        let variant = variant_of_name(name)?;
        catalog::of(variant).published(name).map(|p| p.digest)
    }
}

impl<Hex: AsRef<str>> PublishedDigest<Hex> {
    /// The algorithm's name, as messages print it.
    pub fn algorithm(&self) -> &'static str {
        match self {
            PublishedDigest::Sha256(_) => "sha256",
            PublishedDigest::Md5(_) => "md5",
        }
    }

    pub fn hex(&self) -> &str {
        match self {
            PublishedDigest::Sha256(hex) | PublishedDigest::Md5(hex) => hex.as_ref(),
        }
    }

    /// The digest of a file by this digest's algorithm, calling `progress`
    /// with each chunk's size.
    pub fn of_file(&self, path: &Path, progress: impl FnMut(usize)) -> io::Result<String> {
        match self {
            PublishedDigest::Sha256(_) => sha256_file(path, progress),
            PublishedDigest::Md5(_) => md5_file(path, progress),
        }
    }
}

/// A file whose digest is not the published one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// `sha256` or `md5`.
    pub algorithm: &'static str,
    pub got: String,
    pub published: &'static str,
}

/// Compares a table's sha256 with the published one; a name without a
/// published sha256 passes (tables of other sets, variant tables: see
/// [`check_md5`]).
pub fn check_digest(table: &str, sha256_hex: &str) -> Result<(), Mismatch> {
    match sha256(table) {
        Some(published) if published != sha256_hex => Err(Mismatch {
            algorithm: "sha256",
            got: sha256_hex.to_string(),
            published,
        }),
        _ => Ok(()),
    }
}

/// Compares a variant table's md5 with the published one; a name without
/// a published md5 passes.
pub fn check_md5(table: &str, md5_hex: &str) -> Result<(), Mismatch> {
    match variant_digests::md5(table) {
        Some(published) if published != md5_hex => Err(Mismatch {
            algorithm: "md5",
            got: md5_hex.to_string(),
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
        "{} {} differs from the published {}: the file is damaged; replace it",
        .0.algorithm,
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
    match PublishedDigest::of(&name) {
        None => Err(CheckError::NotPublished),
        Some(PublishedDigest::Sha256(_)) => {
            let digest = sha256_file(path, progress)?;
            check_digest(&name, &digest).map_err(CheckError::Damaged)
        }
        Some(PublishedDigest::Md5(_)) => {
            let digest = md5_file(path, progress)?;
            check_md5(&name, &digest).map_err(CheckError::Damaged)
        }
    }
}

/// md5 of a file, calling `progress` with each chunk's size.
pub fn md5_file(path: &Path, mut progress: impl FnMut(usize)) -> io::Result<String> {
    let mut file = File::open(path)?;
    let mut md5 = Md5::new();
    let mut buf = vec![0u8; 1 << 20];
    read_chunks(&mut file, &mut buf, |bytes| {
        md5.update(bytes);
        progress(bytes.len());
    })?;
    Ok(hex(&md5.finalize()))
}

/// Bytes as lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
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
    file: &mut impl Read,
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
    /// Files whose digest differs, and why: to be quarantined.
    pub damaged: Vec<(PathBuf, String)>,
    /// Files whose digest matched: whole, their quarantine cleared.
    pub whole: Vec<PathBuf>,
}

impl Findings {
    pub fn is_clean(&self, partial: bool) -> bool {
        self.mismatched.is_empty() && self.extra.is_empty() && (partial || self.missing.is_empty())
    }
}

/// Checks every table file of the directories.
pub fn check_dirs(dirs: &[PathBuf], progress: &dyn Progress) -> Findings {
    let mut findings = Findings::default();
    let mut failures = Vec::new();
    let files = table_files(dirs, &mut failures);
    findings.mismatched.extend(failures);
    let sizes: Vec<u64> = files
        .iter()
        .map(|f| f.metadata().map_or(0, |m| m.len()))
        .collect();
    progress.start(sizes.iter().sum(), files.len());
    let mut present = BTreeSet::new();
    for (i, path) in files.iter().enumerate() {
        let name = file_name(path);
        progress.message(&format!("{}/{} {name}", i + 1, files.len()));
        present.insert(name.clone());
        if PublishedDigest::of(&name).is_none() {
            findings.extra.push(name);
            progress.advance(sizes[i]);
            continue;
        }
        findings.checked += 1;
        findings.bytes += sizes[i];
        match check_file(path, |n| progress.advance(n as u64)) {
            Ok(()) => findings.whole.push(path.clone()),
            Err(err) => {
                let problem = err.to_string();
                progress.problem(&name, &problem);
                if matches!(err, CheckError::Damaged(_)) {
                    findings.damaged.push((path.clone(), problem.clone()));
                }
                findings.mismatched.push((name, problem));
            }
        }
    }
    progress.finish();
    // Missing: published files of a variant and piece count the
    // directories hold some of.
    let counts: BTreeSet<_> = present
        .iter()
        .map(|n| (variant_of_name(n), piece_count(n)))
        .collect();
    let mut missing: Vec<String> = Variant::ALL
        .iter()
        .flat_map(|&variant| catalog::of(variant).names())
        .filter(|n| counts.contains(&(variant_of_name(n), piece_count(n))) && !present.contains(*n))
        .map(str::to_string)
        .collect();
    missing.sort();
    findings.missing = missing;
    findings
}
