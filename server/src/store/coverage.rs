//! Which served tables have block checksums recorded, surveyed at start.
//!
//! A table without checksums is served as it is read: a flipped bit on the
//! disk becomes a wrong answer nobody notices. That is a choice an operator
//! should make knowingly, so the server says at start which directories are
//! served unchecked (and `/metrics` shows the count, kept by `store::open`), and
//! `--require-checksums` turns it into a refusal to start.

use std::{
    fmt,
    path::{Path, PathBuf},
};

use super::{
    format::{file_name, is_table_name},
    prophet::format as prophet_format,
    tier::{TieredFilesystem, manifest::manifest_path},
};

/// One table directory's tables without recorded checksums.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Uncovered {
    pub dir: PathBuf,
    pub tables: usize,
    /// File names of the unchecked tables, sorted.
    pub unchecked: Vec<String>,
}

/// `--require-checksums` and tables without them: the server does not start.
#[derive(Debug, thiserror::Error)]
pub struct MissingChecksums(pub Vec<Uncovered>);

impl fmt::Display for MissingChecksums {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "--require-checksums is set, but")?;
        for (i, dir) in self.0.iter().enumerate() {
            let sep = if i == 0 { "" } else { ";" };
            write!(
                f,
                "{sep} {} of {} tables in {} have no block checksums (such as {})",
                dir.unchecked.len(),
                dir.tables,
                dir.dir.display(),
                dir.unchecked.first().map_or("?", String::as_str)
            )?;
        }
        write!(
            f,
            ". Record them with `zugzwang verify --init DIR`, or serve with `--fast` from `zugzwang tier build`."
        )
    }
}

/// Table files in `dir` whose checksums no manifest records.
fn survey_dir(fs: &TieredFilesystem, dir: &Path) -> Uncovered {
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
    let recorded = |(table, parent): &(String, PathBuf)| {
        fs.checks_blocks()
            && fs
                .checksum_dirs(parent)
                .iter()
                .any(|d| manifest_path(d, table).is_file())
    };
    Uncovered {
        dir: dir.to_path_buf(),
        tables: tables.len(),
        unchecked: tables
            .into_iter()
            .filter(|t| !recorded(t))
            .map(|(table, _)| table)
            .collect(),
    }
}

/// Surveys the table directories: one warning per directory with tables
/// served unchecked, and with
/// `--require-checksums` an error naming them. Returns the directories
/// with unchecked tables.
pub fn survey(fs: &TieredFilesystem, dirs: &[PathBuf]) -> Result<Vec<Uncovered>, MissingChecksums> {
    let uncovered: Vec<Uncovered> = dirs
        .iter()
        .map(|dir| survey_dir(fs, dir))
        .filter(|u| !u.unchecked.is_empty())
        .collect();
    if fs.requires_checksums() && !uncovered.is_empty() {
        return Err(MissingChecksums(uncovered));
    }
    for dir in &uncovered {
        let advice = if fs.checks_blocks() {
            format!(
                "record them with `zugzwang verify --init {}` or serve a fast tier built by `zugzwang tier build`",
                dir.dir.display()
            )
        } else {
            "block checks are turned off".to_string()
        };
        tracing::warn!(
            "{}: {} of {} tables are served without block checksums, so a damaged disk can give wrong answers; {advice}",
            dir.dir.display(),
            dir.unchecked.len(),
            dir.tables,
        );
    }
    Ok(uncovered)
}
