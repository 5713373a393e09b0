//! `zugzwang verify`: whole table files against the published sha256 digests
//! (shipped with the program), naming every missing, extra or damaged file;
//! `verify --init` records per-block checksums for tables served without a
//! fast tier.

use std::{
    collections::BTreeSet,
    fs::File,
    io::{self, Read},
    path::{Path, PathBuf},
};

use clap::Args;
use sha2::{Digest, Sha256};

use crate::{
    store::{integrity::DEFAULT_BLOCK_SIZE, published, tiered::INTEGRITY_SUBDIR},
    tier::{self, BuildOptions},
};

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Table directories to check.
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// Instead of checking, record a checksum per block of every table (after
    /// checking it against the published digest), for integrity checks on
    /// read when the tables are served without a fast tier.
    #[arg(long)]
    pub init: bool,
    /// With --init: where to keep the checksums. Default: DIR/.zugzwang,
    /// where `serve` finds them by itself; elsewhere (a read-only table
    /// directory), pass the same directory to `serve --fast`.
    #[arg(long, value_name = "DIR", requires = "init")]
    pub to: Option<PathBuf>,
    /// Do not count published tables absent from the directories as a
    /// failure (for partial table sets); they are still listed.
    #[arg(long)]
    pub partial: bool,
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

/// sha256 of a file, calling `progress` with each chunk's size (the scrub
/// throttles there).
pub fn sha256_file(path: &Path, mut progress: impl FnMut(usize)) -> io::Result<String> {
    let mut file = File::open(path)?;
    let mut sha = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        sha.update(&buf[..n]);
        progress(n);
    }
    Ok(format!("{:x}", sha.finalize()))
}

/// Compares one file with its published digest; `Err` says what is wrong.
pub fn check_file(path: &Path, progress: impl FnMut(usize)) -> Result<(), String> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let Some(published) = published::sha256(&name) else {
        return Err("not a published table name".to_string());
    };
    match sha256_file(path, progress) {
        Ok(digest) if digest == published => Ok(()),
        Ok(digest) => Err(format!(
            "sha256 {digest} differs from the published {published}: the file is damaged; replace it"
        )),
        Err(err) => Err(format!("cannot read: {err}")),
    }
}

/// Checks every table file of the directories.
pub fn check_dirs(dirs: &[PathBuf], progress: bool) -> Findings {
    let mut findings = Findings::default();
    let mut failures = Vec::new();
    let files = tier::table_files(dirs, &mut failures);
    findings.mismatched.extend(failures);
    let sizes: Vec<u64> = files
        .iter()
        .map(|f| f.metadata().map_or(0, |m| m.len()))
        .collect();
    let bar = tier::progress_bar(progress, sizes.iter().sum(), files.len());
    let mut present = BTreeSet::new();
    for (i, path) in files.iter().enumerate() {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        bar.set_message(format!("{}/{} {name}", i + 1, files.len()));
        present.insert(name.clone());
        if published::sha256(&name).is_none() {
            findings.extra.push(name);
            bar.inc(sizes[i]);
            continue;
        }
        findings.checked += 1;
        findings.bytes += sizes[i];
        if let Err(problem) = check_file(path, |n| bar.inc(n as u64)) {
            bar.suspend(|| eprintln!("{name}: {problem}"));
            findings.mismatched.push((name, problem));
        }
    }
    bar.finish_and_clear();
    let counts: BTreeSet<usize> = present.iter().map(|n| published::piece_count(n)).collect();
    let mut missing: Vec<String> = published::names()
        .filter(|n| counts.contains(&published::piece_count(n)) && !present.contains(*n))
        .map(str::to_string)
        .collect();
    missing.sort();
    findings.missing = missing;
    findings
}

/// Runs `zugzwang verify`.
pub fn run(args: VerifyArgs) -> Result<(), String> {
    if args.init {
        let mut failed = 0;
        for dir in &args.dirs {
            let to = args
                .to
                .clone()
                .unwrap_or_else(|| dir.join(INTEGRITY_SUBDIR));
            let summary = tier::build(&BuildOptions {
                from: vec![dir.clone()],
                to: to.clone(),
                dry_run: false,
                block_size: DEFAULT_BLOCK_SIZE,
                prefixes: false,
                progress: true,
            });
            println!(
                "{}: block checksums for {} tables in {} ({} already up to date)",
                dir.display(),
                summary.built,
                to.display(),
                summary.up_to_date
            );
            for (table, problem) in &summary.failures {
                println!("FAILED {table}: {problem}");
            }
            failed += summary.failures.len();
        }
        return if failed == 0 {
            Ok(())
        } else {
            Err(format!("{failed} tables failed"))
        };
    }
    let findings = check_dirs(&args.dirs, true);
    for (name, problem) in &findings.mismatched {
        println!("MISMATCH {name}: {problem}");
    }
    for name in &findings.extra {
        println!("EXTRA {name}: not in the published list of Syzygy tables");
    }
    for name in &findings.missing {
        println!("MISSING {name}");
    }
    println!(
        "{} tables ({}) checked: {} damaged, {} extra, {} missing",
        findings.checked,
        tier::human(findings.bytes),
        findings.mismatched.len(),
        findings.extra.len(),
        findings.missing.len()
    );
    if findings.is_clean(args.partial) {
        Ok(())
    } else {
        Err("the table set does not match the published digests".to_string())
    }
}
