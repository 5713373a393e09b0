//! Which served tables have block checksums recorded, surveyed at start.
//!
//! A table without checksums was never checked against a published digest:
//! a flipped bit on the disk would become a wrong answer nobody notices. So
//! such tables are not served by default; the server says at start, per
//! directory, which they are and what to run to check them (and how long
//! that takes), and serves the rest. `--allow-unchecked` serves them anyway,
//! a choice an operator makes knowingly.

use std::path::{Path, PathBuf};

use crate::dtm::format as prophet_format;

use super::{
    layout::{file_name, is_table_name},
    remote::is_remote,
    tier::{TieredFilesystem, manifest::manifest_path},
};

/// One table directory's tables without recorded checksums.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Uncovered {
    pub dir: PathBuf,
    pub tables: usize,
    /// File names of the unchecked tables, sorted.
    pub unchecked: Vec<String>,
    /// Their bytes, to say how long checking them takes.
    pub bytes: u64,
    /// Tables a check found damaged, refused until replaced.
    pub quarantined: Vec<String>,
}

/// Read rates a check runs at: a hard disk's and an SSD's.
const HDD_BYTES_PER_SEC: f64 = 150e6;
const SSD_BYTES_PER_SEC: f64 = 1.5e9;

/// How long reading `bytes` once takes, on a hard disk and on an SSD.
fn check_time(bytes: u64) -> String {
    let secs = |rate: f64| {
        let s = (bytes as f64 / rate).ceil() as u64;
        match s {
            0..=1 => "a second".to_string(),
            2..=119 => format!("{s} s"),
            120..=7199 => format!("{} min", s.div_ceil(60)),
            _ => format!("{:.1} h", s as f64 / 3600.0),
        }
    };
    format!(
        "reads {} MB: about {} from a hard disk, {} from an SSD",
        bytes.div_ceil(1_000_000),
        secs(HDD_BYTES_PER_SEC),
        secs(SSD_BYTES_PER_SEC)
    )
}

/// The tables of a remote source's "directory", with their sizes.
fn remote_tables(fs: &TieredFilesystem, dir: &Path) -> Vec<(String, PathBuf, u64)> {
    let Some(remote) = fs.remote() else {
        return Vec::new();
    };
    remote
        .read_dir(dir)
        .unwrap_or_default()
        .into_iter()
        .filter(|path| is_table_name(&file_name(path)))
        .filter_map(|path| {
            let size = remote.stat(&path).ok()?.size;
            Some((file_name(&path), dir.to_path_buf(), size))
        })
        .collect()
}

/// Table files in `dir` whose checksums no manifest records.
fn survey_dir(fs: &TieredFilesystem, dir: &Path) -> Uncovered {
    if is_remote(dir) {
        let tables = remote_tables(fs, dir);
        let sizes: std::collections::HashMap<String, u64> = tables
            .iter()
            .map(|(t, _, size)| (t.clone(), *size))
            .collect();
        let tables: Vec<(String, PathBuf)> = tables
            .into_iter()
            .map(|(t, parent, _)| (t, parent))
            .collect();
        return judge(fs, dir, tables, |table, _| {
            sizes.get(table).copied().unwrap_or(0)
        });
    }
    // Syzygy tables lie in the directory itself; Prophet DTM files also in
    // its subdirectories, their checksums beside them.
    let mut tables: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|name| is_table_name(name))
        .map(|name| (name, dir.to_path_buf()))
        .collect();
    let mut unlisted = Vec::new();
    tables.extend(
        prophet_format::table_files(&[dir.to_path_buf()], &mut unlisted)
            .into_iter()
            .map(|path| {
                let parent = path.parent().unwrap_or(dir).to_path_buf();
                (file_name(&path), parent)
            }),
    );
    tables.sort();
    judge(fs, dir, tables, |table, parent| {
        std::fs::metadata(parent.join(table)).map_or(0, |m| m.len())
    })
}

/// Which of `tables` have checksums, and which are quarantined.
fn judge(
    fs: &TieredFilesystem,
    dir: &Path,
    tables: Vec<(String, PathBuf)>,
    size_of: impl Fn(&str, &Path) -> u64,
) -> Uncovered {
    let size = |(table, parent): &(String, PathBuf)| size_of(table, parent);
    let recorded = |(table, parent): &(String, PathBuf)| {
        fs.checks_blocks()
            && fs
                .checksum_dirs(parent)
                .iter()
                .any(|d| manifest_path(d, table).is_file())
    };
    let total = tables.len();
    let quarantined = tables
        .iter()
        .filter(|(table, parent)| fs.quarantine().find_at(&parent.join(table)).is_some())
        .map(|(table, _)| table.clone())
        .collect();
    let unchecked: Vec<(String, PathBuf)> = tables.into_iter().filter(|t| !recorded(t)).collect();
    Uncovered {
        dir: dir.to_path_buf(),
        tables: total,
        bytes: unchecked.iter().map(size).sum(),
        unchecked: unchecked.into_iter().map(|(table, _)| table).collect(),
        quarantined,
    }
}

/// Surveys the table directories: one warning per directory with tables
/// whose bytes were never checked, saying whether they are refused or
/// served anyway and what to run. Returns the directories with such tables.
pub fn survey(fs: &TieredFilesystem, dirs: &[PathBuf]) -> Vec<Uncovered> {
    let surveyed: Vec<Uncovered> = dirs.iter().map(|dir| survey_dir(fs, dir)).collect();
    for dir in &surveyed {
        if !dir.quarantined.is_empty() {
            tracing::error!(
                "{}: {} tables were found damaged and are not served until replaced ({}); `zugzwang tables status` says why; fetch them again with `zugzwang tables fetch`",
                dir.dir.display(),
                dir.quarantined.len(),
                dir.quarantined.join(", ")
            );
        }
    }
    let uncovered: Vec<Uncovered> = surveyed
        .into_iter()
        .filter(|u| !u.unchecked.is_empty())
        .collect();
    for dir in &uncovered {
        warn(fs, dir);
    }
    uncovered
}

fn warn(fs: &TieredFilesystem, dir: &Uncovered) {
    let (what, count, path) = (
        &dir.unchecked,
        dir.unchecked.len(),
        dir.dir.display().to_string(),
    );
    let examples = what.iter().take(3).cloned().collect::<Vec<_>>().join(", ");
    let more = if count > 3 { ", ..." } else { "" };
    let how = match is_remote(&dir.dir) {
        true => format!(
            "build their prefixes and checksums with `zugzwang tier build --from {path} --to FAST_DIR` (reads {} MB once) and serve with --fast FAST_DIR",
            dir.bytes.div_ceil(1_000_000)
        ),
        false => format!(
            "check them with `zugzwang verify --init {path}` ({}), or fetch them with `zugzwang tables fetch`",
            check_time(dir.bytes)
        ),
    };
    if !fs.checks_blocks() {
        tracing::warn!(
            "{path}: {count} of {} tables ({examples}{more}) were never checked against their published digest, and block checks are turned off: they are served as they are read",
            dir.tables
        );
    } else if fs.allows_unchecked() {
        tracing::warn!(
            "{path}: {count} of {} tables ({examples}{more}) were never checked against their published digest; --allow-unchecked serves them anyway (answers from them carry `X-Integrity: unchecked`), so a damaged disk can give wrong answers; {how}",
            dir.tables
        );
    } else {
        tracing::warn!(
            "{path}: {count} of {} tables ({examples}{more}) were never checked against their published digest and are NOT served (positions that need them answer 500 naming the table); {how}; or serve them anyway with --allow-unchecked",
            dir.tables
        );
    }
}
