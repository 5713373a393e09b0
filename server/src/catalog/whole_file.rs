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
    store::{
        layout::{file_name, variant_of_name},
        remote::{self, RemoteSources, is_remote},
    },
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

    /// The digest of a table by this digest's algorithm (a file, or an
    /// object of `remote`: see [`open_table`]), calling `progress` with
    /// each chunk's size.
    pub fn of_table(
        &self,
        path: &Path,
        remote: Option<&RemoteSources>,
        progress: impl FnMut(usize),
    ) -> io::Result<String> {
        let mut table = open_table(path, remote)?;
        match self {
            PublishedDigest::Sha256(_) => sha256_of(&mut table, progress),
            PublishedDigest::Md5(_) => md5_of(&mut table, progress),
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
    check_table(path, None, progress)
}

/// [`check_file`] for a table that may be an object of `remote`.
pub fn check_table(
    path: &Path,
    remote: Option<&RemoteSources>,
    progress: impl FnMut(usize),
) -> Result<(), CheckError> {
    let name = file_name(path);
    let published = PublishedDigest::of(&name).ok_or(CheckError::NotPublished)?;
    let digest = published.of_table(path, remote, progress)?;
    match published {
        PublishedDigest::Sha256(_) => check_digest(&name, &digest),
        PublishedDigest::Md5(_) => check_md5(&name, &digest),
    }
    .map_err(CheckError::Damaged)
}

/// The bytes of a table: a local file, or an object of a remote source
/// streamed by one GET (`RemoteSources::reader`, as `tier build --from
/// URL` reads it).
pub fn open_table(path: &Path, remote: Option<&RemoteSources>) -> io::Result<Box<dyn Read>> {
    match remote.filter(|_| is_remote(path)) {
        Some(remote) => Ok(Box::new(remote.reader(path)?)),
        None => Ok(Box::new(File::open(path)?)),
    }
}

/// md5 of a file, calling `progress` with each chunk's size.
pub fn md5_file(path: &Path, progress: impl FnMut(usize)) -> io::Result<String> {
    md5_of(&mut File::open(path)?, progress)
}

/// sha256 of a file, calling `progress` with each chunk's size.
pub fn sha256_file(path: &Path, progress: impl FnMut(usize)) -> io::Result<String> {
    sha256_of(&mut File::open(path)?, progress)
}

/// md5 of a table's bytes, calling `progress` with each chunk's size.
fn md5_of(table: &mut dyn Read, mut progress: impl FnMut(usize)) -> io::Result<String> {
    let mut md5 = Md5::new();
    let mut buf = vec![0u8; 1 << 20];
    read_chunks(table, &mut buf, |bytes| {
        md5.update(bytes);
        progress(bytes.len());
    })?;
    Ok(hex(&md5.finalize()))
}

/// Bytes as lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// sha256 of a table's bytes, calling `progress` with each chunk's size.
fn sha256_of(table: &mut dyn Read, mut progress: impl FnMut(usize)) -> io::Result<String> {
    let mut sha = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    read_chunks(table, &mut buf, |bytes| {
        sha.update(bytes);
        progress(bytes.len());
    })?;
    Ok(format!("{:x}", sha.finalize()))
}

/// Reads a file to its end in chunks of `buf`'s size (the last may be
/// shorter), handing each to `each`; returns the bytes read.
pub fn read_chunks(
    file: &mut (impl Read + ?Sized),
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

/// A table's size: on disk, or in its remote source's listing.
fn size_of(path: &Path, remote: Option<&RemoteSources>) -> u64 {
    match remote.filter(|_| is_remote(path)) {
        Some(remote) => remote.stat(path).map_or(0, |listed| listed.size),
        None => path.metadata().map_or(0, |m| m.len()),
    }
}

/// What is wrong with a table of `size` bytes whose published size is
/// another (found without reading it: a remote object is not downloaded).
fn wrong_size(name: &str, size: u64) -> Option<String> {
    let variant = variant_of_name(name)?;
    let published = catalog::of(variant).published(name)?.size?;
    (published != size)
        .then(|| format!("{size} bytes, published {published}: truncated or damaged; replace it"))
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

/// Checks every table file of the directories, and every table object of
/// those that are remote sources (`remote`, each object streamed once).
pub fn check_dirs(
    dirs: &[PathBuf],
    remote: Option<&RemoteSources>,
    progress: &dyn Progress,
) -> Findings {
    let mut findings = Findings::default();
    let mut failures = Vec::new();
    let files = remote::table_files(dirs, remote, &mut failures);
    findings.mismatched.extend(failures);
    let sizes: Vec<u64> = files.iter().map(|f| size_of(f, remote)).collect();
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
        if let Some(problem) = wrong_size(&name, sizes[i]) {
            progress.advance(sizes[i]);
            findings.damaged.push((path.clone(), problem.clone()));
            findings.mismatched.push((name, problem));
            continue;
        }
        match check_table(path, remote, |n| progress.advance(n as u64)) {
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
