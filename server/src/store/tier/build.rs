//! `zugzwang tier build`: copy every table's prefix to fast storage, with
//! per-block checksums and a manifest, and say how the bytes divide.
//!
//! A table is read once, start to end: the pass yields the prefix, the block
//! checksums and the whole-file sha256, which is compared with the published
//! digest first, so checksums are never recorded for an already damaged
//! table. Prophet DTM files (`*.egtb.bz`, also in the generator's
//! subdirectories `4men/0pawns/`) are built the same way: their prefix is
//! the header and the block-size list, and the same pass checks their own
//! checksum field and, where an `MD5SUMS` beside them lists them, their md5
//! (`crate::dtm::catalog`). Each output file is written atomically and the
//! manifest last, so an interrupted or failed run leaves either the old entry
//! or the new one.
//!
//! The tables may be in a remote source (`store::remote`, `tier build --from
//! s3://...`): their headers are then read with a few ranged GETs, each
//! table streamed once by one GET, and the manifest records the object's
//! listed size and last-modified time, which the reader compares with the
//! listing at its start.

use std::{
    fs::{self, File},
    io::{self, Read},
    path::{Path, PathBuf},
    sync::Arc,
};

use md5::Md5;
use sha2::{Digest, Sha256};
use xxhash_rust::xxh3::xxh3_128;

use super::{
    INTEGRITY_SUBDIR,
    integrity::{BlockSums, HASH_NAME, block_sum},
    manifest::{
        Manifest, Stamp, manifest_path, prefix_path, remove_stale_temporaries, sums_path,
        write_atomic,
    },
};
use crate::{
    catalog::whole_file as published,
    dtm::{
        ProphetError,
        catalog::{self as dtm, FileCheck, Listed},
        format as prophet_format,
    },
    progress::Progress,
    store::{
        layout::{self, TableKind, TableLayout, file_name},
        quarantine::Quarantine,
        remote::{self, RemoteSources, file::WindowedReader, is_remote},
    },
};

/// What to build.
#[derive(Debug, Clone)]
pub struct BuildOptions {
    pub from: Vec<PathBuf>,
    pub to: PathBuf,
    pub dry_run: bool,
    /// Bytes per checksum.
    pub block_size: u32,
    /// Keep prefixes (tier build) or only checksums (verify --init).
    pub prefixes: bool,
    /// Write each table's entry to the `.zugzwang` folder of the directory
    /// it is in instead of `to` (`verify --init` without `--to`: the reader
    /// looks there, also for Prophet files in subdirectories).
    pub per_directory: bool,
    /// The remote sources among `from` (`store::remote`), connected.
    pub remote: Option<Arc<RemoteSources>>,
}

impl BuildOptions {
    /// A quiet build of prefixes and 4 KiB block checksums (what tests and
    /// library callers want; the command line sets the rest from its flags).
    pub fn new(from: Vec<PathBuf>, to: PathBuf) -> BuildOptions {
        BuildOptions {
            from,
            to,
            dry_run: false,
            block_size: 4096,
            prefixes: true,
            per_directory: false,
            remote: None,
        }
    }
}

/// Bytes of one kind of table, by region.
#[derive(Debug, Default, Clone, Copy)]
pub struct RegionTotals {
    pub tables: u64,
    pub header_and_sparse: u64,
    pub block_lengths: u64,
    pub data: u64,
}

impl RegionTotals {
    fn add(&mut self, layout: &TableLayout) {
        self.tables += 1;
        self.header_and_sparse += layout.header_bytes + layout.sparse_index_bytes;
        self.block_lengths += layout.block_length_bytes;
        self.data += layout.data_bytes();
    }

    pub fn prefix(&self) -> u64 {
        self.header_and_sparse + self.block_lengths
    }

    pub fn total(&self) -> u64 {
        self.prefix() + self.data
    }
}

/// The outcome of a run.
#[derive(Debug, Default)]
pub struct Summary {
    pub wdl: RegionTotals,
    pub dtz: RegionTotals,
    /// Prophet DTM files (header + block-size list count as block lengths).
    pub dtm: RegionTotals,
    pub built: u64,
    pub up_to_date: u64,
    /// Temporary files of earlier, killed runs that were removed.
    pub stale_removed: Vec<String>,
    /// Table (or directory) and what went wrong.
    pub failures: Vec<(String, String)>,
    /// Tables found damaged (a digest or checksum that differs), and why:
    /// to be quarantined.
    pub damaged: Vec<(PathBuf, String)>,
    /// Tables whose entry was built or found current: whole, so any
    /// quarantine record of them is cleared.
    pub whole: Vec<PathBuf>,
}

impl Summary {
    /// Records the verdicts durably (see `store::quarantine`): damaged
    /// tables quarantined, whole ones cleared. `check` names the command.
    pub fn record_verdicts(&self, quarantine: &Quarantine, check: &str) {
        for path in &self.whole {
            quarantine.clear(path);
        }
        for (path, reason) in &self.damaged {
            // A record that cannot be written is logged by `record`.
            let _ = quarantine.record(path, check, reason);
        }
    }

    pub fn total(&self) -> RegionTotals {
        let kinds = [self.wdl, self.dtz, self.dtm];
        RegionTotals {
            tables: kinds.iter().map(|k| k.tables).sum(),
            header_and_sparse: kinds.iter().map(|k| k.header_and_sparse).sum(),
            block_lengths: kinds.iter().map(|k| k.block_lengths).sum(),
            data: kinds.iter().map(|k| k.data).sum(),
        }
    }
}

/// How far a lookup may read past the end of the block-length lists:
/// shakmaty-syzygy reads 16 entries (32 bytes) at a time, also near the end.
pub const READAHEAD_SLACK: u64 = 64;

/// Bytes kept on the fast tier: the prefix plus the readahead slack, rounded
/// up to a whole checksum block so reads near its end are served and checked
/// from the fast tier alone.
pub fn fast_len(layout: &TableLayout, block_size: u32) -> u64 {
    (layout.prefix_len + READAHEAD_SLACK)
        .div_ceil(u64::from(block_size))
        .saturating_mul(u64::from(block_size))
        .min(layout.file_size)
}

/// Builds (or checks, with `dry_run`) the fast tier, reporting how far it
/// is to `progress`.
pub fn build(options: &BuildOptions, progress: &dyn Progress) -> Summary {
    let mut summary = Summary::default();
    let work = find_work(options, &mut summary);
    for item in &work {
        match item.layout.kind {
            TableKind::Wdl => summary.wdl.add(&item.layout),
            TableKind::Dtz => summary.dtz.add(&item.layout),
            TableKind::Dtm => summary.dtm.add(&item.layout),
        }
    }
    if options.dry_run || !prepare_targets(options, &work, &mut summary) {
        return summary;
    }
    build_each(&work, options, progress, &mut summary);
    summary
}

/// The Syzygy and Prophet tables of `options.from` with their regions. A
/// header that does not parse fails its table here, before any whole read;
/// it is damage (to quarantine) only where the file is one a digest or
/// list vouches for and its bytes, not their reading, are wrong.
fn find_work(options: &BuildOptions, summary: &mut Summary) -> Vec<Work> {
    let mut work = Vec::new();
    let tables = remote::table_files(
        &options.from,
        options.remote.as_deref(),
        &mut summary.failures,
    );
    let (remote_dirs, local): (Vec<PathBuf>, Vec<PathBuf>) =
        options.from.iter().cloned().partition(|dir| is_remote(dir));
    for path in tables {
        let parsed = match is_remote(&path) {
            true => parse_remote(options, &path),
            false => layout::parse_file(&path),
        };
        match parsed {
            Ok(layout) => work.push(Work::new(path, layout, None, options)),
            Err(err) => {
                let damaged = !matches!(err, layout::FormatError::Io { .. })
                    && published::PublishedDigest::of(&file_name(&path)).is_some();
                if damaged {
                    summary.damaged.push((path.clone(), err.to_string()));
                }
                summary.failures.push((file_name(&path), err.to_string()));
            }
        }
    }
    let prophet = dtm::find(&local);
    summary.failures.extend(prophet.failures);
    let mut prophet_files = prophet.files;
    prophet_files.extend(remote_prophet(options, &remote_dirs, &mut summary.failures));
    for (path, listed) in prophet_files {
        let parsed = match (&options.remote, is_remote(&path)) {
            (Some(remote), true) => prophet_format::layout_in(remote.as_ref(), &path),
            _ => prophet_format::layout(&path),
        };
        match parsed {
            Ok(layout) => work.push(Work::new(path, layout, listed, options)),
            Err(err) => {
                if listed.is_some() && matches!(err, ProphetError::Corrupt { .. }) {
                    summary.damaged.push((path.clone(), err.to_string()));
                }
                summary.failures.push((file_name(&path), err.to_string()));
            }
        }
    }
    work
}

/// The Prophet table objects under the remote sources `dirs` (down to the
/// generator's subdirectories), each with the md5 an `MD5SUMS` object in
/// its directory or one above it gives, as `dtm::find` gives for local
/// directories.
fn remote_prophet(
    options: &BuildOptions,
    dirs: &[PathBuf],
    failures: &mut Vec<(String, String)>,
) -> Vec<(PathBuf, Option<Listed>)> {
    let Some(remote) = &options.remote else {
        return Vec::new();
    };
    let mut files = Vec::new();
    for dir in dirs {
        let objects = match remote.files_under(dir, prophet_format::SEARCH_DEPTH as usize) {
            Ok(objects) => objects,
            // Already reported by `RemoteSources::table_files`.
            Err(_) => continue,
        };
        let mut lists: Vec<(String, Listed)> = Vec::new();
        for list in objects.iter().filter(|p| file_name(p) == dtm::MD5SUMS) {
            match remote.read_whole(list) {
                Ok(bytes) => lists.extend(md5_entries(list, &String::from_utf8_lossy(&bytes))),
                Err(err) => failures.push((
                    list.display().to_string(),
                    format!("cannot read the md5 list: {err}"),
                )),
            }
        }
        for path in objects {
            if !prophet_format::is_table_name(&file_name(&path)) {
                continue;
            }
            let key = path.display().to_string();
            let listed = lists
                .iter()
                .find(|(p, _)| *p == key)
                .map(|(_, l)| l.clone());
            files.push((path, listed));
        }
    }
    files.sort_by(|a, b| a.0.file_name().cmp(&b.0.file_name()).then(a.0.cmp(&b.0)));
    files
}

/// The Prophet tables an md5 list object names, by the URL each is at.
fn md5_entries(list: &Path, text: &str) -> Vec<(String, Listed)> {
    let dir = list.parent().unwrap_or(list).display().to_string();
    crate::catalog::digests::parse_md5sums(text)
        .filter(|(_, path)| prophet_format::is_table_name(&file_name(Path::new(path))))
        .map(|(md5, path)| {
            let listed = Listed {
                md5: md5.to_ascii_lowercase(),
                list: list.to_path_buf(),
            };
            (format!("{dir}/{}", path.trim_start_matches("./")), listed)
        })
        .collect()
}

/// Parses the header of a table object with a few ranged GETs.
fn parse_remote(options: &BuildOptions, path: &Path) -> Result<TableLayout, layout::FormatError> {
    let name = file_name(path);
    let io_err = |source| layout::FormatError::Io {
        name: name.clone(),
        source,
    };
    let remote = options
        .remote
        .as_ref()
        .ok_or_else(|| io_err(io::ErrorKind::NotConnected.into()))?;
    let file = remote.open(path, &Arc::default()).map_err(io_err)?;
    layout::parse(&name, file.size(), &WindowedReader::new(&file))
}

/// The version of a table: from the disk, or its source's listing.
fn stamp_of(options: &BuildOptions, path: &Path) -> io::Result<Stamp> {
    match (&options.remote, is_remote(path)) {
        (Some(remote), true) => Ok(remote.stat(path)?.stamp()),
        _ => Ok(Stamp::of(&fs::metadata(path)?)),
    }
}

/// Creates every directory an entry goes to, and clears the `.NAME.tmp.PID`
/// files a run killed midway left there (nothing else would ever remove
/// them). False when a directory cannot be created: no entry could be
/// written, so the build stops there.
fn prepare_targets(options: &BuildOptions, work: &[Work], summary: &mut Summary) -> bool {
    let mut targets: Vec<&Path> = std::iter::once(options.to.as_path())
        .chain(work.iter().map(|w| w.to.as_path()))
        .collect();
    targets.sort();
    targets.dedup();
    for to in targets {
        if let Err(err) = fs::create_dir_all(to) {
            summary.failures.push((
                to.display().to_string(),
                format!("cannot create the directory: {err}"),
            ));
            return false;
        }
        match remove_stale_temporaries(to) {
            Ok(removed) => summary.stale_removed.extend(removed),
            Err(err) => summary.failures.push((
                to.display().to_string(),
                format!("cannot clear temporary files of earlier runs: {err}"),
            )),
        }
    }
    true
}

/// Each table's entry, kept where it is up to date, else built; a table
/// that fails does not stop the others.
fn build_each(
    work: &[Work],
    options: &BuildOptions,
    progress: &dyn Progress,
    summary: &mut Summary,
) {
    progress.start(work.iter().map(|w| w.layout.file_size).sum(), work.len());
    for (done, item) in work.iter().enumerate() {
        let table = file_name(&item.path);
        progress.message(&format!("{}/{} {table}", done + 1, work.len()));
        match up_to_date(item, &table, options) {
            Ok(true) => {
                summary.up_to_date += 1;
                summary.whole.push(item.path.clone());
            }
            _ => match build_one(item, &table, options, progress) {
                Ok(()) => {
                    summary.built += 1;
                    summary.whole.push(item.path.clone());
                }
                Err(failure) => {
                    let err = failure.to_string();
                    progress.problem(&table, &err);
                    if let BuildFailure::Damaged(reason) = failure {
                        summary.damaged.push((item.path.clone(), reason));
                    }
                    summary.failures.push((table, err));
                }
            },
        }
        progress.set_position(work[..=done].iter().map(|w| w.layout.file_size).sum());
    }
    progress.finish();
}

/// One table to build: where it is, its regions, where its entry goes and
/// (Prophet files) the md5 a list beside it gives.
struct Work {
    path: PathBuf,
    layout: TableLayout,
    to: PathBuf,
    listed: Option<Listed>,
}

impl Work {
    fn new(
        path: PathBuf,
        layout: TableLayout,
        listed: Option<Listed>,
        options: &BuildOptions,
    ) -> Work {
        let to = match path.parent() {
            Some(dir) if options.per_directory => dir.join(INTEGRITY_SUBDIR),
            _ => options.to.clone(),
        };
        Work {
            path,
            layout,
            to,
            listed,
        }
    }
}

/// Whether the entry in the fast tier was built from this very file and is intact.
fn up_to_date(item: &Work, table: &str, options: &BuildOptions) -> io::Result<bool> {
    let layout = &item.layout;
    let Ok(Some(manifest)) = Manifest::load(&item.to, table) else {
        return Ok(false);
    };
    let stamp = stamp_of(options, &item.path)?;
    let expected_fast = if options.prefixes {
        fast_len(layout, manifest.block_size)
    } else {
        0
    };
    if !manifest.matches_source(&stamp)
        || manifest.block_size != options.block_size
        || manifest.hash != HASH_NAME
        || manifest.fast_len != expected_fast
        || manifest.prefix_len != layout.prefix_len
    {
        return Ok(false);
    }
    let sums_len = fs::metadata(sums_path(&item.to, table))?.len();
    if sums_len != BlockSums::blocks_for(manifest.source_size, manifest.block_size) * 8 {
        return Ok(false);
    }
    if expected_fast == 0 {
        return Ok(true);
    }
    let prefix = fs::read(prefix_path(&item.to, table))?;
    Ok(format!("{:032x}", xxh3_128(&prefix)) == manifest.prefix_digest)
}

/// Why one table's entry was not built.
#[derive(Debug, thiserror::Error)]
enum BuildFailure {
    /// Its bytes differ from what its digest or checksum says.
    #[error("{0}")]
    Damaged(String),
    /// It could not be read, checked or written.
    #[error("{0}")]
    Other(String),
}

impl From<String> for BuildFailure {
    fn from(problem: String) -> Self {
        BuildFailure::Other(problem)
    }
}

/// What a table with no published digest is told: its bytes cannot be
/// checked, so no checksums vouch for them.
const UNPUBLISHED: &str = "no published digest names it, so its bytes cannot be checked and no checksums are recorded for it; serve it with --allow-unchecked if you trust it";

/// What a Prophet file no `MD5SUMS` lists is told.
const UNLISTED_DTM: &str = "no MD5SUMS beside it lists it, so its bytes cannot be checked against a published digest (its own checksum field misses swapped blocks); put the generator's MD5SUMS beside it (`zugzwang tables fetch --dtm` writes one)";

/// Reads one table start to end and writes its entry.
fn build_one(
    item: &Work,
    table: &str,
    options: &BuildOptions,
    progress: &dyn Progress,
) -> Result<(), BuildFailure> {
    let (path, layout) = (&item.path, &item.layout);
    let keep = if options.prefixes {
        fast_len(layout, options.block_size)
    } else {
        0
    };
    let published_md5 = matches!(
        published::PublishedDigest::of(table),
        Some(published::PublishedDigest::Md5(_))
    );
    // A Prophet file: its own checksum field (and md5, where listed) from
    // the same pass.
    let mut prophet = match (layout.kind, &item.listed) {
        (TableKind::Dtm, None) => return Err(BuildFailure::Other(UNLISTED_DTM.to_string())),
        (TableKind::Dtm, Some(listed)) => {
            Some(FileCheck::new(path, Some(listed.clone())).map_err(|err| damage_or_not(&err))?)
        }
        (TableKind::Wdl | TableKind::Dtz, _) => {
            if published::PublishedDigest::of(table).is_none() {
                return Err(BuildFailure::Other(UNPUBLISHED.to_string()));
            }
            None
        }
    };
    let pass = read_table(
        options,
        path,
        keep,
        options.block_size,
        published_md5,
        progress,
        |bytes| {
            if let Some(check) = prophet.as_mut() {
                check.feed(bytes);
            }
        },
    )?;
    if let Some(check) = prophet {
        check.finish().map_err(|err| match damage_or_not(&err) {
            BuildFailure::Damaged(problem) => BuildFailure::Damaged(format!(
                "{problem} (checked before building the tier: nothing was recorded for it)"
            )),
            other => other,
        })?;
    }
    let sha256 = pass.sha256;
    let checked = match &pass.md5 {
        Some(md5) => published::check_md5(table, md5),
        None => published::check_digest(table, &sha256),
    };
    if let Err(mismatch) = checked {
        return Err(BuildFailure::Damaged(format!(
            "does not match the published {} (got {}, published {}): the table is damaged; replace it before building the tier",
            mismatch.algorithm, mismatch.got, mismatch.published
        )));
    }
    let manifest = Manifest {
        table: table.to_string(),
        source_size: pass.source.size,
        source_mtime_ns: pass.source.mtime_ns,
        prefix_len: layout.prefix_len,
        fast_len: keep,
        prefix_digest: format!("{:032x}", xxh3_128(&pass.prefix)),
        block_size: options.block_size,
        hash: HASH_NAME.to_string(),
        sha256,
    };
    let sums = BlockSums {
        block_size: options.block_size,
        file_size: pass.source.size,
        sums: pass.sums,
    };
    Ok(write_entry(
        &item.to,
        table,
        &manifest,
        &sums,
        &pass.prefix,
    )?)
}

/// A Prophet check's failure: damage when the bytes are wrong, not when
/// they could not be read.
fn damage_or_not(err: &dtm::CheckError) -> BuildFailure {
    match err.is_damage() {
        true => BuildFailure::Damaged(err.to_string()),
        false => BuildFailure::Other(err.to_string()),
    }
}

/// What one pass over a table yields.
struct TablePass {
    /// The file's version before the pass (unchanged after it).
    source: Stamp,
    /// Its first `keep` bytes.
    prefix: Vec<u8>,
    sums: Vec<u64>,
    /// sha256 of the whole file, hex.
    sha256: String,
    /// md5 of the whole file, hex, when asked for (atomic and antichess
    /// tables are published with md5 only).
    md5: Option<String>,
}

/// Reads a table once, start to end: its first `keep` bytes, a checksum
/// per block and the whole-file sha256, handing every chunk to `also`; a
/// file that changes meanwhile is an error.
#[allow(clippy::too_many_arguments)]
fn read_table(
    options: &BuildOptions,
    path: &Path,
    keep: u64,
    block_size: u32,
    with_md5: bool,
    progress: &dyn Progress,
    mut also: impl FnMut(&[u8]),
) -> Result<TablePass, String> {
    let read_err = |err: io::Error| format!("cannot read {}: {err}", path.display());
    let (mut file, before): (Box<dyn Read>, Stamp) = match (&options.remote, is_remote(path)) {
        (Some(remote), true) => {
            let listed = remote.stat(path).map_err(read_err)?;
            (
                Box::new(remote.reader(path).map_err(read_err)?),
                listed.stamp(),
            )
        }
        _ => {
            let file = File::open(path).map_err(read_err)?;
            let before = Stamp::of(&file.metadata().map_err(read_err)?);
            (Box::new(file), before)
        }
    };
    let block = block_size as usize;
    let mut prefix = Vec::with_capacity(keep as usize);
    let mut sums = Vec::with_capacity(BlockSums::blocks_for(before.size, block_size) as usize);
    let mut sha = Sha256::new();
    let mut md5 = with_md5.then(<Md5 as md5::Digest>::new);
    // A whole number of blocks per chunk, so each block is hashed from one buffer.
    let mut chunk = vec![0u8; (1usize << 20).div_ceil(block) * block];
    let read = published::read_chunks(&mut file, &mut chunk, |bytes| {
        sha.update(bytes);
        also(bytes);
        if let Some(md5) = md5.as_mut() {
            md5::Digest::update(md5, bytes);
        }
        sums.extend(bytes.chunks(block).map(block_sum));
        if (prefix.len() as u64) < keep {
            let take = ((keep - prefix.len() as u64) as usize).min(bytes.len());
            prefix.extend_from_slice(&bytes[..take]);
        }
        progress.advance(bytes.len() as u64);
    })
    .map_err(read_err)?;
    // An object's GET checked its size and ETag against the listing.
    let after = stamp_of(options, path).map_err(read_err)?;
    if read != before.size || after != before {
        return Err(format!(
            "{} changed while it was read; run again",
            path.display()
        ));
    }
    Ok(TablePass {
        source: before,
        prefix,
        sums,
        sha256: format!("{:x}", sha.finalize()),
        md5: md5.map(|md5| published::hex(&md5::Digest::finalize(md5))),
    })
}

/// Writes a table's entry, each file atomically and the manifest last: it
/// vouches for the files written before it.
pub fn write_entry(
    to: &Path,
    table: &str,
    manifest: &Manifest,
    sums: &BlockSums,
    prefix: &[u8],
) -> Result<(), String> {
    let write = |target: PathBuf, bytes: &[u8]| {
        write_atomic(&target, &[bytes])
            .map_err(|err| format!("cannot write {}: {err}", target.display()))
    };
    let _ = fs::remove_file(manifest_path(to, table));
    write(sums_path(to, table), &sums.to_bytes())?;
    if manifest.fast_len > 0 {
        write(prefix_path(to, table), prefix)?;
    } else {
        let _ = fs::remove_file(prefix_path(to, table));
    }
    write(manifest_path(to, table), manifest.render().as_bytes())
}
