//! `zugzwang verify`: whole table files against the published digests
//! (shipped with the program: sha256, md5 for atomic and antichess
//! tables), and Prophet DTM files (`*.egtb.bz`, also in subdirectories)
//! against their own checksum field and the md5 an `MD5SUMS` beside them
//! gives, naming every missing, extra or damaged file; `verify --init`
//! records per-block checksums for tables served without a fast tier.
//! Syzygy tables in a remote source (`s3://`, `https://`) are checked the
//! same way, each object streamed once; its Prophet DTM objects are named,
//! and left to `tier build --from URL`, which checks them as it reads them.

use std::path::{Path, PathBuf};

use clap::Args;

use super::{
    RemoteArgs, StateDirArg,
    output::{Bar, human},
};
use crate::{
    catalog::whole_file::check_dirs,
    dtm::{catalog as prophet, format as prophet_format},
    store::{
        quarantine::Quarantine,
        remote::{self, RemoteError, RemoteSources},
        tier::{
            INTEGRITY_SUBDIR,
            build::{self as tier_build, BuildOptions},
            integrity::DEFAULT_BLOCK_SIZE,
            manifest::STATE_CHECKSUMS_SUBDIR,
        },
    },
};

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Table directories to check (Syzygy tables in them; Prophet DTM
    /// files in them and their subdirectories, as the generator lays them
    /// out: checked by their own checksum and, where an MD5SUMS lists
    /// them, by md5). Also remote sources (`s3://BUCKET/PREFIX`,
    /// `https://host/path/`): each table object streamed once by one GET
    /// (an object of the wrong size is named without being read).
    #[arg(required = true, value_name = "DIR|URL")]
    pub dirs: Vec<PathBuf>,
    /// Instead of checking, record a checksum per block of every table (after
    /// checking it against the published digest), for integrity checks on
    /// read when the tables are served without a fast tier.
    #[arg(long)]
    pub init: bool,
    /// With --init: where to keep the checksums. Default: DIR/.zugzwang,
    /// where `serve` finds them by itself, or, where DIR cannot be written,
    /// the state directory's `checksums/` (`--state-dir`, which `serve`
    /// searches too).
    #[arg(long, value_name = "DIR", requires = "init")]
    pub to: Option<PathBuf>,
    #[command(flatten)]
    pub state: StateDirArg,
    /// Do not count published tables absent from the directories as a
    /// failure (for partial table sets); they are still listed.
    #[arg(long)]
    pub partial: bool,
    #[command(flatten)]
    pub remote: RemoteArgs,
}

/// Why `zugzwang verify` failed; what failed is listed above it.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error("{0} tables failed")]
    InitFailed(usize),
    #[error("the table set does not match the published digests")]
    Mismatch,
    #[error(transparent)]
    Remote(#[from] RemoteError),
    #[error(
        "--init records block checksums beside local tables; for {0}, `zugzwang tier build --from {0} --to FAST_DIR` records them (and the prefixes) on local disk"
    )]
    InitRemote(String),
}

/// Runs `zugzwang verify`. Its verdicts last: damaged tables are
/// quarantined (`store::quarantine`), whole ones cleared.
pub fn run(args: VerifyArgs) -> Result<(), VerifyError> {
    let state_dir = args.state.resolve();
    let remote_dir = args.dirs.iter().find(|dir| remote::is_remote(dir));
    if args.init {
        if let Some(url) = remote_dir {
            return Err(VerifyError::InitRemote(url.display().to_string()));
        }
        let quarantine = Quarantine::new(state_dir.clone());
        return init(&args, state_dir, &quarantine);
    }
    let remote = RemoteSources::connect(&args.dirs, &args.remote.streaming_options())?;
    let quarantine = Quarantine::new(state_dir).with_remote(remote.clone());
    check(&args, remote.as_deref(), &quarantine)
}

/// Where `verify --init` writes a directory's checksums: `--to`, else
/// beside the tables, else (a read-only directory) the state directory.
fn init_target(args: &VerifyArgs, dir: &Path, state_dir: Option<&Path>) -> (PathBuf, bool) {
    if let Some(to) = &args.to {
        return (to.clone(), false);
    }
    let beside = dir.join(INTEGRITY_SUBDIR);
    let writable = is_writable_dir(dir) && {
        let probe = beside.join(format!(".write-test.{}", std::process::id()));
        let ok = std::fs::create_dir_all(&beside).is_ok() && std::fs::write(&probe, b"").is_ok();
        let _ = std::fs::remove_file(&probe);
        ok
    };
    match (writable, state_dir) {
        (false, Some(state)) => {
            let to = state.join(STATE_CHECKSUMS_SUBDIR);
            println!(
                "{}: cannot write there; keeping its checksums in {} (`serve` finds them with the same --state-dir)",
                dir.display(),
                to.display()
            );
            (to, false)
        }
        // Beside each table (Prophet files may be in subdirectories),
        // where `serve` finds them.
        _ => (beside, true),
    }
}

/// Whether `dir` is meant to be written: a directory without any write
/// permission is read-only, also for root, who could write it anyway.
fn is_writable_dir(dir: &Path) -> bool {
    std::fs::metadata(dir).is_ok_and(|meta| !meta.permissions().readonly())
}

/// `verify --init`: checksums recorded for every table that matches its
/// published digest.
fn init(
    args: &VerifyArgs,
    state_dir: Option<PathBuf>,
    quarantine: &Quarantine,
) -> Result<(), VerifyError> {
    let mut failed = 0;
    for dir in &args.dirs {
        let (to, per_directory) = init_target(args, dir, state_dir.as_deref());
        let options = BuildOptions {
            remote: None,
            from: vec![dir.clone()],
            to: to.clone(),
            dry_run: false,
            block_size: DEFAULT_BLOCK_SIZE,
            prefixes: false,
            per_directory,
        };
        let summary = tier_build::build(&options, &Bar::new());
        summary.record_verdicts(quarantine, "verify --init");
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
        for (path, _) in &summary.damaged {
            println!("QUARANTINED {}: not served until replaced", path.display());
        }
        failed += summary.failures.len();
    }
    if failed == 0 {
        Ok(())
    } else {
        Err(VerifyError::InitFailed(failed))
    }
}

/// Names the Prophet DTM objects of remote sources, which `verify` does
/// not read, and the command that checks them, so that a clean summary is
/// not taken for a check of them.
fn note_remote_prophet(dirs: &[PathBuf], remote: Option<&RemoteSources>) {
    let Some(remote) = remote else {
        return;
    };
    for dir in dirs.iter().filter(|dir| remote::is_remote(dir)) {
        let Ok(objects) = remote.files_under(dir, prophet_format::SEARCH_DEPTH as usize) else {
            continue;
        };
        let count = objects
            .iter()
            .filter(|path| {
                path.file_name()
                    .is_some_and(|name| prophet_format::is_table_name(&name.to_string_lossy()))
            })
            .count();
        if count > 0 {
            println!(
                "UNCHECKED {count} Prophet DTM files in {}: `zugzwang tier build --from {} --to FAST_DIR` checks them against the MD5SUMS beside them",
                dir.display(),
                dir.display()
            );
        }
    }
}

/// `verify`: whole files against the published digests.
fn check(
    args: &VerifyArgs,
    remote: Option<&RemoteSources>,
    quarantine: &Quarantine,
) -> Result<(), VerifyError> {
    let findings = check_dirs(&args.dirs, remote, &Bar::new());
    // Prophet DTM objects in a bucket are checked by `tier build --from
    // URL`, which has to read them whole anyway; here they are only named.
    note_remote_prophet(&args.dirs, remote);
    let local: Vec<PathBuf> = args
        .dirs
        .iter()
        .filter(|dir| !remote::is_remote(dir))
        .cloned()
        .collect();
    let mut dtm = prophet::check_dirs(&local, &Bar::new());
    for path in findings.whole.iter().chain(&dtm.whole) {
        if quarantine.clear(path) {
            println!("CLEARED {}: whole again, served again", path.display());
        }
    }
    for (path, reason) in findings.damaged.iter().chain(&dtm.damaged_paths) {
        // A record that cannot be written is logged by `record`.
        let _ = quarantine.record(path, "verify", reason);
        println!("QUARANTINED {}: not served until replaced", path.display());
    }
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
    for name in &dtm.unlisted {
        println!(
            "UNCHECKED {name}: no MD5SUMS beside it lists it, so it cannot be checked against a published digest (its own checksum field passed, but misses swapped blocks)"
        );
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
    let dtm_clean = dtm.damaged.is_empty()
        && dtm.unlisted.is_empty()
        && (args.partial || dtm.missing.is_empty());
    if findings.is_clean(args.partial) && dtm_clean {
        Ok(())
    } else {
        Err(VerifyError::Mismatch)
    }
}
