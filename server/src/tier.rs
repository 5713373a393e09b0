//! `zugzwang tier build`: copy every table's prefix to fast storage, with
//! per-block checksums and a manifest, and say how the bytes divide.
//!
//! A table is read once, start to end: the pass yields the prefix, the block
//! checksums and the whole-file sha256, which is compared with the published
//! digest first, so checksums are never recorded for an already damaged
//! table. Each output file is written atomically and the manifest last, so an
//! interrupted or failed run leaves either the old entry or the new one.

use std::{
    fmt,
    fs::{self, File},
    io::{self, Read},
    path::{Path, PathBuf},
};

use indicatif::{ProgressBar, ProgressStyle};
use sha2::{Digest, Sha256};
use xxhash_rust::xxh3::xxh3_128;

use crate::store::{
    format::{self, TableKind, TableLayout},
    integrity::{BlockSums, HASH_NAME, block_sum},
    manifest::{
        Manifest, manifest_path, mtime_ns, prefix_path, remove_stale_temporaries, sums_path,
        write_atomic,
    },
    published,
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
    pub progress: bool,
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
            progress: false,
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
    pub built: u64,
    pub up_to_date: u64,
    /// Temporary files of earlier, killed runs that were removed.
    pub stale_removed: Vec<String>,
    /// Table (or directory) and what went wrong.
    pub failures: Vec<(String, String)>,
}

impl Summary {
    pub fn total(&self) -> RegionTotals {
        RegionTotals {
            tables: self.wdl.tables + self.dtz.tables,
            header_and_sparse: self.wdl.header_and_sparse + self.dtz.header_and_sparse,
            block_lengths: self.wdl.block_lengths + self.dtz.block_lengths,
            data: self.wdl.data + self.dtz.data,
        }
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{:<6} {:>7} {:>16} {:>16} {:>16} {:>16} {:>8}",
            "",
            "tables",
            "header+sparse",
            "block lengths",
            "data blocks",
            "prefix (fast)",
            "prefix%"
        )?;
        for (label, t) in [
            ("WDL", self.wdl),
            ("DTZ", self.dtz),
            ("total", self.total()),
        ] {
            let share = if t.total() == 0 {
                0.0
            } else {
                100.0 * t.prefix() as f64 / t.total() as f64
            };
            writeln!(
                f,
                "{label:<6} {:>7} {:>16} {:>16} {:>16} {:>16} {share:>7.2}%",
                t.tables,
                human(t.header_and_sparse),
                human(t.block_lengths),
                human(t.data),
                human(t.prefix()),
            )?;
        }
        let total = self.total();
        writeln!(
            f,
            "prefix {} bytes (header+sparse {}, block lengths {}) of {} table bytes; data blocks {} bytes",
            total.prefix(),
            total.header_and_sparse,
            total.block_lengths,
            total.total(),
            total.data
        )
    }
}

/// Bytes in binary units, exact below 1 KiB.
pub fn human(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64;
    let mut unit = "B";
    for u in UNITS {
        if value < 1024.0 {
            break;
        }
        value /= 1024.0;
        unit = u;
    }
    format!("{value:.1} {unit}")
}

/// Table files of the directories, sorted by name; unreadable directories
/// are reported as failures.
pub fn table_files(dirs: &[PathBuf], failures: &mut Vec<(String, String)>) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in dirs {
        match fs::read_dir(dir) {
            Ok(entries) => files.extend(entries.filter_map(Result::ok).map(|e| e.path()).filter(
                |p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(format::is_table_name)
                },
            )),
            Err(err) => failures.push((
                dir.display().to_string(),
                format!("cannot list the directory: {err}"),
            )),
        }
    }
    files.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
    files
}

fn name_of(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
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

/// Builds (or checks, with `dry_run`) the fast tier.
pub fn build(options: &BuildOptions) -> Summary {
    let mut summary = Summary::default();
    let files = table_files(&options.from, &mut summary.failures);
    let mut work = Vec::new();
    for path in files {
        match format::parse_file(&path) {
            Ok(layout) => {
                match layout.kind {
                    TableKind::Wdl => summary.wdl.add(&layout),
                    TableKind::Dtz => summary.dtz.add(&layout),
                }
                work.push((path, layout));
            }
            Err(err) => summary.failures.push((name_of(&path), err.to_string())),
        }
    }
    if options.dry_run {
        return summary;
    }
    if let Err(err) = fs::create_dir_all(&options.to) {
        summary.failures.push((
            options.to.display().to_string(),
            format!("cannot create the directory: {err}"),
        ));
        return summary;
    }
    // A run killed midway leaves its `.NAME.tmp.PID` files; nothing else
    // would ever remove them.
    match remove_stale_temporaries(&options.to) {
        Ok(removed) => summary.stale_removed = removed,
        Err(err) => summary.failures.push((
            options.to.display().to_string(),
            format!("cannot clear temporary files of earlier runs: {err}"),
        )),
    }
    let bar = progress_bar(
        options.progress,
        work.iter().map(|(_, l)| l.file_size).sum(),
        work.len(),
    );
    for (done, (path, layout)) in work.iter().enumerate() {
        let table = name_of(path);
        bar.set_message(format!("{}/{} {table}", done + 1, work.len()));
        match up_to_date(path, &table, layout, options) {
            Ok(true) => summary.up_to_date += 1,
            _ => match build_one(path, &table, layout, options, &bar) {
                Ok(()) => summary.built += 1,
                Err(err) => {
                    bar.suspend(|| eprintln!("{table}: {err}"));
                    summary.failures.push((table, err));
                }
            },
        }
        bar.set_position(work[..=done].iter().map(|(_, l)| l.file_size).sum());
    }
    bar.finish_and_clear();
    summary
}

pub fn progress_bar(enabled: bool, bytes: u64, tables: usize) -> ProgressBar {
    if !enabled {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(bytes);
    let style = ProgressStyle::with_template(
        "{wide_bar} {bytes}/{total_bytes} ({bytes_per_sec}, {eta}) {msg}",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar.set_message(format!("0/{tables}"));
    bar
}

/// Whether the entry in the fast tier was built from this very file and is intact.
fn up_to_date(
    path: &Path,
    table: &str,
    layout: &TableLayout,
    options: &BuildOptions,
) -> io::Result<bool> {
    let Ok(Some(manifest)) = Manifest::load(&options.to, table) else {
        return Ok(false);
    };
    let meta = fs::metadata(path)?;
    let expected_fast = if options.prefixes {
        fast_len(layout, manifest.block_size)
    } else {
        0
    };
    if !manifest.matches_source(&meta)
        || manifest.block_size != options.block_size
        || manifest.hash != HASH_NAME
        || manifest.fast_len != expected_fast
        || manifest.prefix_len != layout.prefix_len
    {
        return Ok(false);
    }
    let sums_len = fs::metadata(sums_path(&options.to, table))?.len();
    if sums_len != BlockSums::blocks_for(manifest.source_size, manifest.block_size) * 8 {
        return Ok(false);
    }
    if expected_fast == 0 {
        return Ok(true);
    }
    let prefix = fs::read(prefix_path(&options.to, table))?;
    Ok(format!("{:032x}", xxh3_128(&prefix)) == manifest.prefix_digest)
}

/// Reads one table start to end and writes its entry.
fn build_one(
    path: &Path,
    table: &str,
    layout: &TableLayout,
    options: &BuildOptions,
    bar: &ProgressBar,
) -> Result<(), String> {
    let read_err = |err: io::Error| format!("cannot read {}: {err}", path.display());
    let mut file = File::open(path).map_err(read_err)?;
    let before = file.metadata().map_err(read_err)?;
    let keep = if options.prefixes {
        fast_len(layout, options.block_size)
    } else {
        0
    };
    let block = options.block_size as usize;
    let mut prefix = Vec::with_capacity(keep as usize);
    let mut sums =
        Vec::with_capacity(BlockSums::blocks_for(before.len(), options.block_size) as usize);
    let mut sha = Sha256::new();
    // A whole number of blocks per chunk, so each block is hashed from one buffer.
    let mut chunk = vec![0u8; (1usize << 20).div_ceil(block) * block];
    let mut offset = 0u64;
    loop {
        let n = read_full(&mut file, &mut chunk).map_err(read_err)?;
        if n == 0 {
            break;
        }
        let bytes = &chunk[..n];
        sha.update(bytes);
        sums.extend(bytes.chunks(block).map(block_sum));
        if (prefix.len() as u64) < keep {
            let take = ((keep - prefix.len() as u64) as usize).min(n);
            prefix.extend_from_slice(&bytes[..take]);
        }
        offset += n as u64;
        bar.inc(n as u64);
    }
    let after = fs::metadata(path).map_err(read_err)?;
    if offset != before.len()
        || after.len() != before.len()
        || mtime_ns(&after) != mtime_ns(&before)
    {
        return Err(format!(
            "{} changed while it was read; run again",
            path.display()
        ));
    }
    let sha256 = format!("{:x}", sha.finalize());
    if let Some(published) = published::sha256(table)
        && published != sha256
    {
        return Err(format!(
            "does not match the published sha256 (got {sha256}, published {published}): the table is damaged; replace it before building the tier"
        ));
    }
    let manifest = Manifest {
        table: table.to_string(),
        source_size: before.len(),
        source_mtime_ns: mtime_ns(&before),
        prefix_len: layout.prefix_len,
        fast_len: keep,
        prefix_digest: format!("{:032x}", xxh3_128(&prefix)),
        block_size: options.block_size,
        hash: HASH_NAME.to_string(),
        sha256,
    };
    let sums = BlockSums {
        block_size: options.block_size,
        file_size: before.len(),
        sums,
    };
    let write = |target: PathBuf, bytes: &[u8]| {
        write_atomic(&target, &[bytes])
            .map_err(|err| format!("cannot write {}: {err}", target.display()))
    };
    // The manifest goes last: it vouches for the files written before it.
    let _ = fs::remove_file(manifest_path(&options.to, table));
    write(sums_path(&options.to, table), &sums.to_bytes())?;
    if keep > 0 {
        write(prefix_path(&options.to, table), &prefix)?;
    } else {
        let _ = fs::remove_file(prefix_path(&options.to, table));
    }
    write(
        manifest_path(&options.to, table),
        manifest.render().as_bytes(),
    )
}

/// Fills `buf` unless the file ends first; returns the bytes read.
fn read_full(file: &mut File, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
    Ok(filled)
}

/// `zugzwang tier ...`
#[derive(Debug, clap::Subcommand)]
pub enum TierCommand {
    /// Copy every table's prefix (header, sparse index, block lengths) to
    /// fast storage, with block checksums and a manifest per table.
    Build(TierBuildArgs),
}

#[derive(Debug, clap::Args)]
pub struct TierBuildArgs {
    /// Table directories on the slow tier.
    #[arg(long, required = true, num_args = 1.., value_name = "SLOW_DIR")]
    pub from: Vec<PathBuf>,
    /// Directory on fast storage for prefixes, checksums and manifests.
    #[arg(long, value_name = "FAST_DIR", required_unless_present = "dry_run")]
    pub to: Option<PathBuf>,
    /// Print how the bytes divide (what the fast tier needs) without writing.
    #[arg(long)]
    pub dry_run: bool,
    /// Bytes per checksum (a power of two).
    #[arg(long, default_value_t = crate::store::integrity::DEFAULT_BLOCK_SIZE, value_parser = parse_block_size)]
    pub block_size: u32,
}

fn parse_block_size(s: &str) -> Result<u32, String> {
    let size: u32 = s.parse().map_err(|_| format!("{s} is not a number"))?;
    if size >= 64 && size.is_power_of_two() {
        Ok(size)
    } else {
        Err("the block size must be a power of two of at least 64".to_string())
    }
}

/// Runs `zugzwang tier ...`; the summary goes to stdout, failures are named
/// there and make the exit status non-zero.
pub fn run(command: TierCommand) -> Result<(), String> {
    let TierCommand::Build(args) = command;
    let summary = build(&BuildOptions {
        from: args.from,
        to: args.to.unwrap_or_default(),
        dry_run: args.dry_run,
        block_size: args.block_size,
        prefixes: true,
        progress: true,
    });
    print!("{summary}");
    if !summary.stale_removed.is_empty() {
        println!(
            "removed {} temporary files left by earlier runs that were stopped midway",
            summary.stale_removed.len()
        );
    }
    if !args.dry_run {
        println!(
            "{} prefixes written, {} already up to date",
            summary.built, summary.up_to_date
        );
    }
    for (table, problem) in &summary.failures {
        println!("FAILED {table}: {problem}");
    }
    if summary.failures.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} tables failed; the others were built",
            summary.failures.len()
        ))
    }
}
