//! A fetched table file checked from birth: the one pass that compares it
//! with its expected digest also computes its sha256 and a checksum per
//! 4 KiB block (and, for a Prophet file, runs its own check: header, block
//! list, length, checksum field), and once it is under its real name its
//! manifest and sums go to the `.zugzwang` folder beside it, as
//! `zugzwang verify --init` writes them and where `serve` looks for them. So
//! every read of a fetched table is checked from its first answer, without
//! a second pass over its bytes.

use std::{
    fs::{self, File},
    io,
    path::{Path, PathBuf},
};

use md5::Md5;
use sha2::{Digest, Sha256};
use xxhash_rust::xxh3::xxh3_128;

use crate::{
    catalog::whole_file::{hex, read_chunks},
    dtm::{
        ProphetError,
        format::{self as prophet_format, StreamCheck},
    },
    store::{
        layout::{self, file_name},
        quarantine::Quarantine,
        tier::build as tier_build,
        tier::{
            INTEGRITY_SUBDIR,
            integrity::{BlockSums, DEFAULT_BLOCK_SIZE, HASH_NAME, block_sum},
            manifest::{Manifest, mtime_ns, sums_path},
        },
    },
};

/// What one pass over a file's bytes found.
#[derive(Debug)]
pub struct Pass {
    /// sha256 of the whole file, lowercase hex (the manifest records it,
    /// also for tables published with md5 only).
    pub sha256: String,
    /// md5 of the whole file, lowercase hex, when asked for.
    pub md5: Option<String>,
    /// One checksum per [`DEFAULT_BLOCK_SIZE`] bytes.
    pub sums: BlockSums,
    /// Modification time of the bytes read (nanoseconds since the epoch).
    pub mtime_ns: i128,
    /// A Prophet file's own check; `None` for other files.
    pub own_check: Option<Result<(), String>>,
}

/// Reads `path` once, start to end: its sha256 (and md5 `with_md5`), its
/// block checksums and, when `target` (the name it is to have) is a
/// Prophet file's, its own check. A file that changes meanwhile is an error.
pub fn read(path: &Path, target: &Path, with_md5: bool) -> io::Result<Pass> {
    let mut file = File::open(path)?;
    let before = file.metadata()?;
    let block = DEFAULT_BLOCK_SIZE as usize;
    let mut sums = Vec::with_capacity(
        usize::try_from(BlockSums::blocks_for(before.len(), DEFAULT_BLOCK_SIZE)).unwrap_or(0),
    );
    let mut sha = Sha256::new();
    let mut md5 = with_md5.then(<Md5 as md5::Digest>::new);
    let mut own =
        prophet_format::is_table_name(&file_name(target)).then(|| StreamCheck::new(target));
    // A whole number of blocks per chunk, so each block is hashed from one buffer.
    let mut chunk = vec![0u8; (1usize << 20).div_ceil(block) * block];
    let read = read_chunks(&mut file, &mut chunk, |bytes| {
        sha.update(bytes);
        if let Some(md5) = md5.as_mut() {
            md5::Digest::update(md5, bytes);
        }
        sums.extend(bytes.chunks(block).map(block_sum));
        if let Some(Ok(check)) = own.as_mut() {
            check.feed(bytes);
        }
    })?;
    let after = fs::metadata(path)?;
    if read != before.len() || after.len() != before.len() || mtime_ns(&after) != mtime_ns(&before)
    {
        return Err(io::Error::other(format!(
            "{} changed while it was read",
            path.display()
        )));
    }
    Ok(Pass {
        sha256: format!("{:x}", sha.finalize()),
        md5: md5.map(|md5| hex(&md5::Digest::finalize(md5))),
        sums: BlockSums {
            block_size: DEFAULT_BLOCK_SIZE,
            file_size: read,
            sums,
        },
        mtime_ns: mtime_ns(&before),
        own_check: own.map(|check| check.and_then(StreamCheck::finish).map_err(problem)),
    })
}

/// What a Prophet file's own check found wrong (the file is named apart).
fn problem(err: ProphetError) -> String {
    match err {
        ProphetError::Corrupt { what, .. } => what,
        other => other.to_string(),
    }
}

/// Where the checksums of the table file at `target` go: `.zugzwang` in
/// its directory (`TieredFilesystem::checksum_dirs` looks there).
pub fn integrity_dir(target: &Path) -> PathBuf {
    target
        .parent()
        .unwrap_or(Path::new("."))
        .join(INTEGRITY_SUBDIR)
}

/// Writes the manifest and sums of the table file at `target`, which is
/// under its real name and holds the bytes `pass` read (its size and
/// modification time are checked to be theirs, so the manifest matches
/// it), unless the same entry is already there. Returns whether it wrote.
pub fn record(target: &Path, pass: &Pass) -> io::Result<bool> {
    let table = file_name(target);
    let meta = fs::metadata(target)?;
    if meta.len() != pass.sums.file_size || mtime_ns(&meta) != pass.mtime_ns {
        return Err(io::Error::other(format!(
            "{} changed since it was checked",
            target.display()
        )));
    }
    let invalid = |err: String| io::Error::new(io::ErrorKind::InvalidData, err);
    let prefix_len = if prophet_format::is_table_name(&table) {
        prophet_format::layout(target).map_err(|e| invalid(e.to_string()))?
    } else {
        layout::parse_file(target).map_err(|e| invalid(e.to_string()))?
    }
    .prefix_len;
    // As `verify --init` writes it (`store::tier::build`): checksums only, no prefix.
    let manifest = Manifest {
        table: table.clone(),
        source_size: meta.len(),
        source_mtime_ns: mtime_ns(&meta),
        prefix_len,
        fast_len: 0,
        prefix_digest: format!("{:032x}", xxh3_128(&[])),
        block_size: DEFAULT_BLOCK_SIZE,
        hash: HASH_NAME.to_string(),
        sha256: pass.sha256.clone(),
    };
    let dir = integrity_dir(target);
    if is_recorded(&dir, &manifest, &pass.sums) {
        return Ok(false);
    }
    super::mirror_limits::create_dirs(&dir)?;
    tier_build::write_entry(&dir, &table, &manifest, &pass.sums, &[]).map_err(io::Error::other)?;
    Ok(true)
}

/// Whether `dir` already holds this very manifest and these sums.
fn is_recorded(dir: &Path, manifest: &Manifest, sums: &BlockSums) -> bool {
    matches!(Manifest::load(dir, &manifest.table), Ok(Some(m)) if m == *manifest)
        && fs::read(sums_path(dir, &manifest.table)).is_ok_and(|bytes| bytes == sums.to_bytes())
}

/// The table file at `target` is whole: fetched or found complete, matched
/// against its expected digest, its block checksums recorded. Whatever a
/// failed check once recorded against the table (an earlier, damaged copy)
/// no longer holds: this is where `tables fetch` clears such a record, for
/// every file it ends well.
pub fn now_whole(target: &Path) {
    // A file fetched again (or found whole) is no longer the damaged one a
    // record beside it names.
    Quarantine::default().clear(target);
    tracing::debug!(
        "{}: whole and checked from birth (block checksums in {})",
        target.display(),
        integrity_dir(target).display()
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn embedded(dir: &str, name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join(dir).join(name)
    }

    #[test]
    fn records_once_what_it_read_and_never_for_a_file_changed_since() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("KQvK.rtbw");
        fs::copy(embedded("tables", "KQvK.rtbw"), &target).unwrap();
        let pass = read(&target, &target, false).unwrap();
        assert!(pass.md5.is_none() && pass.own_check.is_none());
        let bytes = fs::read(&target).unwrap();
        assert_eq!(pass.sums, BlockSums::of(&bytes, DEFAULT_BLOCK_SIZE));
        assert!(record(&target, &pass).unwrap());
        assert!(!record(&target, &pass).unwrap(), "already recorded");
        // Published with md5 only: the sha256 comes from the same pass.
        let md5 = read(&target, &target, true).unwrap();
        assert_eq!(md5.sha256, pass.sha256);
        assert_eq!(md5.md5.map(|hex| hex.len()), Some(32));

        let mut longer = bytes;
        longer.push(0);
        fs::write(&target, longer).unwrap();
        let err = record(&target, &pass).unwrap_err();
        assert!(
            err.to_string().contains("changed since it was checked"),
            "{err}"
        );
    }

    #[test]
    fn runs_a_prophet_files_own_check_in_the_same_pass() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("KQK.egtb.bz");
        let part = dir.path().join("KQK.egtb.bz.part");
        let mut bytes = fs::read(embedded("tables-prophet", "KQK.egtb.bz")).unwrap();
        fs::write(&part, &bytes).unwrap();
        let pass = read(&part, &target, true).unwrap();
        assert_eq!(pass.own_check, Some(Ok(())));
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0x10;
        fs::write(&part, &bytes).unwrap();
        let pass = read(&part, &target, true).unwrap();
        assert!(matches!(pass.own_check, Some(Err(_))), "{pass:?}");
    }
}
