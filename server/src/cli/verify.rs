//! `zugzwang verify`: whole table files against the published digests
//! (shipped with the program: sha256, md5 for atomic and antichess
//! tables), and Prophet DTM files (`*.egtb.bz`, also in subdirectories)
//! against their own checksum field and the md5 an `MD5SUMS` beside them
//! gives, naming every missing, extra or damaged file; `verify --init`
//! records per-block checksums for tables served without a fast tier.

use std::path::PathBuf;

use clap::Args;

use super::output::{Bar, human};
use crate::{
    catalog::{prophet, whole_file::check_dirs},
    store::tier::{INTEGRITY_SUBDIR, integrity::DEFAULT_BLOCK_SIZE},
    tier_build::{self, BuildOptions},
};

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Table directories to check (Syzygy tables in them; Prophet DTM
    /// files in them and their subdirectories, as the generator lays them
    /// out: checked by their own checksum and, where an MD5SUMS lists
    /// them, by md5).
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

/// Why `zugzwang verify` failed; what failed is listed above it.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error("{0} tables failed")]
    InitFailed(usize),
    #[error("the table set does not match the published digests")]
    Mismatch,
}

/// Runs `zugzwang verify`.
pub fn run(args: VerifyArgs) -> Result<(), VerifyError> {
    if args.init {
        let mut failed = 0;
        for dir in &args.dirs {
            let to = args
                .to
                .clone()
                .unwrap_or_else(|| dir.join(INTEGRITY_SUBDIR));
            let options = BuildOptions {
                from: vec![dir.clone()],
                to: to.clone(),
                dry_run: false,
                block_size: DEFAULT_BLOCK_SIZE,
                prefixes: false,
                // Without --to, beside each table (Prophet files may be in
                // subdirectories), where `serve` finds them.
                per_directory: args.to.is_none(),
            };
            let summary = tier_build::build(&options, &Bar::new());
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
            Err(VerifyError::InitFailed(failed))
        };
    }
    let findings = check_dirs(&args.dirs, &Bar::new());
    let mut dtm = prophet::check_dirs(&args.dirs, &Bar::new());
    // A directory that cannot be listed is named once.
    dtm.damaged
        .retain(|(name, _)| findings.mismatched.iter().all(|(other, _)| other != name));
    for (name, problem) in findings.mismatched.iter().chain(&dtm.damaged) {
        println!("MISMATCH {name}: {problem}");
    }
    for name in &findings.extra {
        println!("EXTRA {name}: not in the published list of Syzygy tables");
    }
    for name in &findings.missing {
        println!("MISSING {name}");
    }
    for name in &dtm.missing {
        println!("MISSING {name}: a Prophet DTM table (listed in MD5SUMS or of the 2-4 piece set)");
    }
    let dtm_note = match dtm.files {
        0 => String::new(),
        n => format!(" (of which {n} Prophet DTM files, {})", human(dtm.bytes)),
    };
    println!(
        "{} tables ({}) checked{dtm_note}: {} damaged, {} extra, {} missing",
        findings.checked + dtm.files,
        human(findings.bytes + dtm.bytes),
        findings.mismatched.len() + dtm.damaged.len(),
        findings.extra.len(),
        findings.missing.len() + dtm.missing.len()
    );
    let dtm_clean = dtm.damaged.is_empty() && (args.partial || dtm.missing.is_empty());
    if findings.is_clean(args.partial) && dtm_clean {
        Ok(())
    } else {
        Err(VerifyError::Mismatch)
    }
}
