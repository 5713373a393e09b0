//! `zugzwang tables status` and `zugzwang tables fetch`: what a table
//! directory holds against the published set, and fetching what it lacks
//! (the work is `catalog::inventory` and `fetch`; this file holds the
//! flags and the printing).

use std::{
    collections::{BTreeMap, BTreeSet},
    fmt::Write as _,
    path::{Path, PathBuf},
};

use app::variant::Variant;

use super::{
    RemoteArgs, StateDirArg,
    output::{Bar, human},
};
use crate::{
    catalog::{
        self, Catalog,
        inventory::{self, Inventory, Quarantined},
    },
    dtm::{
        catalog::{self as prophet, DtmInventory},
        format as prophet_format,
    },
    fetch::{
        self, Done, FetchError, FetchOptions, PlannedFile, Summary,
        selection::{self, SelectionError, parse_pieces},
        transfer::Expected,
        upload::{self, Source, Target, TargetError, UploadSummary, Uploaded},
    },
    progress::{Progress, Silent},
    store::{
        layout,
        quarantine::Quarantine,
        remote::{RemoteError, RemoteSources, RemoteUrl},
    },
    upstream::store::{self as upstream_store, StoreSize},
};

/// `zugzwang tables ...`
#[derive(Debug, clap::Subcommand)]
pub enum TablesCommand {
    /// Which tables of a variant directories hold, per piece count:
    /// present, missing, damaged (size, or with --verify digest, other than
    /// the published one) and unknown files; what completing each set would add.
    Status(StatusArgs),
    /// Fetch tables from an HTTP(S) mirror, resuming cut transfers and
    /// verifying every file against its published digest (sha256; md5 for
    /// atomic and antichess; with --dtm, Prophet DTM files against the md5
    /// the mirror's MD5SUMS lists) before it appears under its real name,
    /// with its block checksums (recorded in .zugzwang/ beside it from the
    /// same bytes, as `verify --init` does). With --to s3://BUCKET/PREFIX,
    /// upload them into an object store instead, from the mirror or from
    /// a local table directory (--from DIR): each file checked against its
    /// published digest before its upload completes; a rerun skips the
    /// objects already complete and continues a cut multipart upload.
    Fetch(FetchArgs),
}

#[derive(Debug, clap::Args)]
pub struct StatusArgs {
    /// Table directories, taken together as `serve --tables` takes them
    /// (default: the current directory, unless only --dtm is given); also
    /// remote sources (`s3://BUCKET/PREFIX`, `https://host/path/`), judged
    /// by their listing's names and sizes (with --verify, every object
    /// streamed once and its digest checked).
    #[arg(value_name = "DIR|URL")]
    pub dirs: Vec<PathBuf>,
    /// Prophet DTM directories, as `serve --dtm` takes them (files
    /// `*.egtb.bz`, flat or in the generator's `Nmen/Mpawns/`
    /// subdirectories): files and bytes per piece count, the missing ones
    /// of the 2-4 piece set, damaged ones (header, block list and length;
    /// with --verify every file's checksum field and its md5 where an
    /// MD5SUMS lists it). Repeatable.
    #[arg(long, value_name = "DIR")]
    pub dtm: Vec<PathBuf>,
    /// Whose tables to survey: standard (.rtbw/.rtbz), atomic (.atbw/.atbz)
    /// or antichess (.gtbw/.gtbz, pawnless .stbw/.stbz).
    #[arg(long, default_value = "standard")]
    pub variant: Variant,
    /// Also check every file's digest against the published one (sha256;
    /// md5 for atomic and antichess, whose sizes are not published, so
    /// only this finds their damaged files). Reads every byte.
    #[arg(long)]
    pub verify: bool,
    /// Print the survey as JSON.
    #[arg(long)]
    pub json: bool,
    /// Where `serve` finds quarantine records of tables in read-only
    /// directories (as `serve --state-dir`).
    #[command(flatten)]
    pub state: StateDirArg,
    #[command(flatten)]
    pub remote: RemoteArgs,
}

#[derive(Debug, clap::Args)]
pub struct FetchArgs {
    /// Whose tables to fetch: standard, atomic or antichess.
    #[arg(long, default_value = "standard")]
    pub variant: Variant,
    /// Fetch Prophet DTM tables (`*.egtb.bz`) instead: the files the
    /// mirror's URL/MD5SUMS lists (the generator's layout, `md5
    /// ./4men/0pawns/KBNK.egtb.bz`), each to the same path below --to and
    /// checked against the listed md5; --to then gets an MD5SUMS of the
    /// files there. With --to s3://…, --from DIR uploads the files the
    /// MD5SUMS in DIR lists, and the prefix gets an MD5SUMS object (the
    /// list `serve --dtm s3://…` checks them against). --only takes files
    /// (KBNK: the side to move's pieces first) or both files of a material
    /// (KBNvK).
    #[arg(long, conflicts_with_all = ["variant", "with_dependencies"])]
    pub dtm: bool,
    /// The mirror's directory of the variant's tables: files are fetched as
    /// URL/NAME.rtbw (.atbw, .gtbw, .stbw; with --dtm, URL/MD5SUMS and the
    /// paths it lists). Repeat it for a mirror that keeps WDL and DTZ files,
    /// or antichess tables with and without pawns, in separate directories:
    /// a file is asked of the next while one answers 404. With --to
    /// s3://…, also a local table directory (without --pieces or --only:
    /// every published table in it; with --dtm, every file its MD5SUMS
    /// lists).
    #[arg(long, value_name = "URL|DIR", required = true)]
    pub from: Vec<String>,
    /// Directory to put the tables in (created if missing), or an S3
    /// object store, s3://BUCKET/PREFIX (credentials and region from
    /// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION; see
    /// --s3-endpoint). Each object records the digest it was checked
    /// against (x-amz-meta-sha256, -md5); a mirror's files pass through
    /// the state directory's uploads/BUCKET/.staging, `--jobs` at a time.
    #[arg(long, value_name = "DIR|URL")]
    pub to: PathBuf,
    /// With --to s3://: files larger than this are sent as a multipart
    /// upload of parts this large, journalled after each part in the
    /// state directory's uploads/ (see --state-dir), so that a cut upload
    /// continues where it stopped. At least 5 (S3's smallest part).
    #[arg(long, value_name = "MIB", default_value_t = 64, value_parser = clap::value_parser!(u64).range(5..=5120))]
    pub part_size_mib: u64,
    /// Where upload journals and staged files are kept (with --to s3://).
    #[command(flatten)]
    pub state: StateDirArg,
    #[command(flatten)]
    pub remote: RemoteArgs,
    /// Whole piece counts, joined by '-': 3-4-5, 3-4, 6, 7 (atomic: 3-4-5;
    /// antichess: 2-3-4, as far as the shipped md5 lists go; --dtm: those
    /// the mirror's MD5SUMS lists, e.g. 2-3-4).
    #[arg(long, value_name = "N-N", value_parser = parse_pieces_arg)]
    pub pieces: Option<BTreeSet<usize>>,
    /// Tables by material, comma-separated: KRPvKR,KQPvKQ (antichess: BBvN).
    #[arg(long, value_name = "TABLES", value_delimiter = ',')]
    pub only: Vec<String>,
    /// Also fetch every table the selection's captures and promotions lead
    /// to, so that every move of a position in it can be answered.
    #[arg(long)]
    pub with_dependencies: bool,
    /// Transfers at once.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub jobs: u16,
}

fn parse_pieces_arg(s: &str) -> Result<BTreeSet<usize>, String> {
    parse_pieces(s).map_err(|e| e.to_string())
}

/// Why `zugzwang tables` failed; details are printed above it.
#[derive(Debug, thiserror::Error)]
pub enum TablesError {
    #[error(
        "{0} damaged or unreadable (listed above); fetch them again with `zugzwang tables fetch`"
    )]
    Damaged(String),
    #[error(transparent)]
    Selection(#[from] SelectionError),
    #[error(transparent)]
    Fetch(#[from] FetchError),
    #[error(transparent)]
    Remote(#[from] RemoteError),
    #[error(transparent)]
    Target(#[from] TargetError),
    #[error(
        "{failed} of {total} files were not uploaded ({damaged} of them damaged), each named above; the others are in the store, verified; run the same command again to continue"
    )]
    NotUploaded {
        failed: usize,
        damaged: usize,
        total: usize,
    },
    #[error(
        "{0}; the Prophet files uploaded are in the store, verified, but `serve --dtm s3://…` and `tier build` check them against the MD5SUMS object beside them: run the same command again to write it"
    )]
    DtmList(#[source] upload::UploadError),
    #[error("no published {variant} tables in {}: nothing to upload", .dir.display())]
    NoTables { dir: PathBuf, variant: Variant },
    #[error("--from {0}: not a directory; give a table directory or a mirror's URL")]
    FromNotDirectory(String),
    #[error(
        "--from takes either one local table directory (with --to s3://) or mirror URLs, not both"
    )]
    FromMixed,
    #[error(
        "{failed} of {total} files could not be fetched (each named above with what to do); the others are complete and verified"
    )]
    Incomplete { failed: usize, total: usize },
    #[error("cannot write JSON: {0}")]
    Json(#[from] serde_json::Error),
}

/// Runs `zugzwang tables ...`.
pub async fn run(command: TablesCommand) -> Result<(), TablesError> {
    match command {
        TablesCommand::Status(args) => status(args),
        TablesCommand::Fetch(args) => fetch_tables(args).await,
    }
}

fn status(args: StatusArgs) -> Result<(), TablesError> {
    let dirs = if args.dirs.is_empty() && args.dtm.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        args.dirs
    };
    // JSON is for scripts: no bar on their terminal either.
    let bar = (!args.json).then(Bar::new);
    let progress: &dyn Progress = match &bar {
        Some(bar) => bar,
        None => &Silent,
    };
    let remote = RemoteSources::connect(&dirs, &args.remote.streaming_options())?;
    let mut inventory = inventory::survey_with(
        &dirs,
        remote.as_deref(),
        args.variant,
        args.verify,
        progress,
    );
    if !args.dtm.is_empty() {
        inventory.dtm = Some(prophet::survey(&args.dtm, args.verify, progress));
    }
    let all_dirs: Vec<PathBuf> = dirs.iter().chain(&args.dtm).cloned().collect();
    inventory.quarantined = Quarantined::among(&all_dirs, &Quarantine::new(args.state.resolve()));
    let learnt = args.state.resolve().and_then(|dir| {
        let size = upstream_store::size_in(&dir)?;
        Some((dir.join(upstream_store::FILE_NAME), size))
    });
    if args.json {
        let mut value = serde_json::to_value(&inventory)?;
        if let (Some((path, Ok(size))), Some(object)) = (&learnt, value.as_object_mut()) {
            object.insert(
                "upstream_store".to_string(),
                serde_json::json!({
                    "path": path,
                    "answers": size.answers,
                    "bytes": size.bytes,
                    "file_bytes": size.file_bytes,
                }),
            );
        }
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        print!("{}", render_status(&inventory));
        if let Some((path, size)) = &learnt {
            println!("{}", render_upstream_store(path, size));
        }
    }
    if inventory.has_problems() {
        let dtm = inventory
            .dtm
            .as_ref()
            .map_or(0, |d| d.damaged.len() + d.unreadable.len());
        let count = inventory.damaged.len()
            + inventory.unreadable.len()
            + inventory.quarantined.len()
            + dtm;
        return Err(TablesError::Damaged(format!(
            "{count} files or directories"
        )));
    }
    Ok(())
}

/// The store of answers learnt from upstream servers (`serve --upstream`).
pub fn render_upstream_store(path: &Path, size: &Result<StoreSize, String>) -> String {
    match size {
        Ok(size) => format!(
            "upstream answers (serve --upstream): {} kept in {} ({} of answers, the file {})",
            size.answers,
            path.display(),
            human(size.bytes),
            human(size.file_bytes)
        ),
        Err(err) => format!(
            "upstream answers (serve --upstream): {} cannot be read: {err}",
            path.display()
        ),
    }
}

/// The survey as a table per piece count, then the files that need
/// attention; then the same for Prophet DTM tables when surveyed.
pub fn render_status(inventory: &Inventory) -> String {
    let mut out = String::new();
    if !inventory.directories.is_empty() {
        render_syzygy(&mut out, inventory);
    }
    if let Some(dtm) = &inventory.dtm {
        render_dtm(&mut out, dtm);
    }
    for q in &inventory.quarantined {
        let _ = writeln!(
            out,
            "QUARANTINED {}: {} (found by {}); not served until replaced: fetch it again with `zugzwang tables fetch`, or run `zugzwang verify` once the file is whole",
            q.table, q.reason, q.check
        );
    }
    out
}

/// Prophet DTM tables per piece count, then the files that need attention.
fn render_dtm(out: &mut String, dtm: &DtmInventory) {
    let dirs: Vec<String> = dtm
        .directories
        .iter()
        .map(|d| d.display().to_string())
        .collect();
    let checked = if dtm.verified {
        "every file read: its checksum field, and md5 where an MD5SUMS lists it"
    } else {
        "header, block list and length checked; --verify reads every file"
    };
    let _ = writeln!(out, "Prophet DTM tables in {} ({checked})", dirs.join(", "));
    for list in &dtm.md5_lists {
        let _ = writeln!(out, "(md5 list: {})", list.display());
    }
    let _ = writeln!(out, "{:<7} {:>14} {:>22}", "pieces", "files", "bytes");
    for p in &dtm.pieces {
        let files = match p.files_expected {
            Some(expected) => format!("{} of {expected}", p.files),
            None => p.files.to_string(),
        };
        let _ = writeln!(out, "{:<7} {files:>14} {:>22}", p.pieces, human(p.bytes));
    }
    for p in &dtm.pieces {
        if p.files > 0 && !p.missing.is_empty() {
            let names: Vec<&str> = p
                .missing
                .iter()
                .map(|n| n.strip_suffix(prophet_format::SUFFIX).unwrap_or(n))
                .collect();
            let _ = writeln!(
                out,
                "missing {}-piece DTM ({} files): {}",
                p.pieces,
                p.missing.len(),
                names.join(" ")
            );
        }
    }
    for d in &dtm.damaged {
        let _ = writeln!(
            out,
            "DAMAGED {} in {}: {}",
            d.file,
            d.directory.display(),
            d.problem
        );
    }
    for u in &dtm.unreadable {
        let _ = writeln!(out, "UNREADABLE {}: {}", u.path.display(), u.problem);
    }
    let lacking: usize = dtm
        .pieces
        .iter()
        .filter(|p| prophet::EXPECTED_PIECES.contains(&p.pieces))
        .map(|p| p.files_expected.unwrap_or(0).saturating_sub(p.files))
        .sum();
    let _ = if lacking == 0 {
        writeln!(out, "the 2-3-4 DTM set is complete")
    } else {
        writeln!(
            out,
            "completing the 2-3-4 DTM set adds {lacking} files (`zugzwang tables fetch --dtm --pieces 2-3-4 --from URL --to DIR`)"
        )
    };
}

fn render_syzygy(out: &mut String, inventory: &Inventory) {
    let dirs: Vec<String> = inventory
        .directories
        .iter()
        .map(|d| d.display().to_string())
        .collect();
    let catalog = catalog::of(inventory.variant);
    let _ = writeln!(
        out,
        "{} tables in {} ({})",
        inventory.variant.label(),
        dirs.join(", "),
        what_was_checked(inventory)
    );
    if let Some(scope) = catalog.scope() {
        let _ = writeln!(out, "({scope})");
    }
    let _ = writeln!(
        out,
        "{:<7} {:>14} {:>14} {:>22}",
        "pieces", "tables", "files", "bytes"
    );
    for p in &inventory.pieces {
        let bytes = match p.bytes_published {
            Some(published) => format!("{} of {}", human(p.bytes), human(published)),
            None => human(p.bytes),
        };
        let _ = writeln!(
            out,
            "{:<7} {:>14} {:>14} {:>22}",
            p.pieces,
            format!("{} of {}", p.tables, p.tables_published),
            format!("{} of {}", p.files, p.files_published),
            bytes,
        );
    }
    for p in &inventory.pieces {
        // Listing absent files makes sense for a set begun, not an empty one.
        if p.files > 0 && !p.missing.is_empty() {
            let _ = writeln!(
                out,
                "missing {}-piece ({} files): {}",
                p.pieces,
                p.missing.len(),
                collapse_pairs(catalog, &p.missing).join(" ")
            );
        }
    }
    for d in &inventory.damaged {
        let _ = writeln!(
            out,
            "DAMAGED {} in {}: {}",
            d.file,
            d.directory.display(),
            d.problem
        );
    }
    render_unknown(out, catalog, inventory);
    for u in &inventory.unreadable {
        let _ = writeln!(out, "UNREADABLE {}: {}", u.path.display(), u.problem);
    }
    let variant_flag = match inventory.variant {
        Variant::Standard => String::new(),
        variant => format!(" --variant {variant}"),
    };
    for set in &inventory.to_complete {
        let bytes = set
            .bytes
            .map_or_else(|| "sizes not published".to_string(), human);
        let _ = if set.files == 0 {
            writeln!(out, "the {} set is complete", set.set)
        } else {
            writeln!(
                out,
                "completing the {} set adds {} files, {bytes} (`zugzwang tables fetch{variant_flag} --pieces {} --from URL --to DIR`)",
                set.set, set.files, set.set
            )
        };
    }
}

/// The header's note of what was compared with the published catalogue.
fn what_was_checked(inventory: &Inventory) -> String {
    let digest = inventory.digest;
    match (inventory.sizes_published, inventory.verified) {
        (true, true) => format!("sizes and {digest} checked"),
        (true, false) => format!("sizes checked; --verify also checks {digest}"),
        (false, true) => format!("{digest} checked"),
        (false, false) => format!(
            "names only: sizes are not published for these tables; --verify checks {digest}"
        ),
    }
}

/// Files that are not counted, each with why: an interrupted download, or
/// a file the variant's list does not have. Tables of other variants are
/// counted per directory instead (a directory may hold all three).
fn render_unknown(out: &mut String, catalog: &Catalog, inventory: &Inventory) {
    let mut others: BTreeMap<(&Path, Variant), usize> = BTreeMap::new();
    for u in &inventory.unknown {
        let why = match layout::variant_of_name(&u.file) {
            _ if u.file.ends_with(".part") => {
                "an interrupted download; `zugzwang tables fetch` resumes it".to_string()
            }
            _ if prophet_format::is_table_name(&u.file) => format!(
                "a Prophet DTM table: `zugzwang tables status --dtm {}` surveys it",
                u.directory.display()
            ),
            Some(other) if other != catalog.variant() => {
                *others.entry((&u.directory, other)).or_default() += 1;
                continue;
            }
            Some(_) => format!("not in the published list ({})", catalog.list()),
            None => format!("not a published {} table", catalog.variant()),
        };
        let _ = writeln!(
            out,
            "unknown {} in {} ({}): {why}",
            u.file,
            u.directory.display(),
            human(u.bytes),
        );
    }
    for ((dir, other), count) in others {
        let _ = writeln!(
            out,
            "{count} {other} table files in {} not counted: `zugzwang tables status --variant {other}` surveys them",
            dir.display()
        );
    }
}

/// File names with both files of a table absent shortened to the table
/// (`KRvK.rtbw KRvK.rtbz` → `KRvK`); a lone file keeps its extension.
fn collapse_pairs(catalog: &Catalog, files: &[String]) -> Vec<String> {
    let set: BTreeSet<&str> = files.iter().map(String::as_str).collect();
    let mut out = Vec::new();
    for file in files {
        let Some((material, _)) = file.split_once('.') else {
            continue;
        };
        let both = catalog
            .files_of(material)
            .iter()
            .all(|f| set.contains(f.as_str()));
        match both {
            false => out.push(file.clone()),
            true if out.last().map(String::as_str) != Some(material) => {
                out.push(material.to_string())
            }
            true => {}
        }
    }
    out
}

async fn fetch_tables(args: FetchArgs) -> Result<(), TablesError> {
    if let Some(url) = RemoteUrl::of_path(&args.to) {
        return upload_tables(args, url?).await;
    }
    let from = args
        .from
        .iter()
        .map(|url| fetch::base_url(url))
        .collect::<Result<Vec<_>, _>>()?;
    if args.dtm {
        return fetch_dtm(args, from).await;
    }
    let catalog = catalog::of(args.variant);
    let pieces = args.pieces.unwrap_or_default();
    let tables = selection::select(catalog, &pieces, &args.only, args.with_dependencies)?;
    let plan = fetch::plan(catalog, &tables, &args.to)?;
    let unknown_size = match plan.unknown_size {
        0 => String::new(),
        n => format!(" plus {n} files whose size is not published"),
    };
    println!(
        "{} {} tables, {} files: {} to transfer{unknown_size}; {} free in {}",
        tables.len(),
        args.variant,
        plan.files.len(),
        human(plan.needed),
        human(plan.free),
        args.to.display()
    );
    let options = FetchOptions {
        from,
        to: args.to,
        jobs: usize::from(args.jobs),
    };
    let summary = transfer(&options, plan).await?;
    print!("{}", render_summary(&summary));
    complete(&summary)
}

/// The free-space check, then the transfers with a progress bar.
async fn transfer(options: &FetchOptions, plan: fetch::Plan) -> Result<Summary, TablesError> {
    fetch::check_space(&plan, &options.to)?;
    Ok(fetch::fetch(options, plan, &Bar::new()).await?)
}

/// A fetch with failed transfers ends with an error counting them.
fn complete(summary: &Summary) -> Result<(), TablesError> {
    let failed = summary.failures().count();
    if failed > 0 {
        return Err(TablesError::Incomplete {
            failed,
            total: summary.files.len(),
        });
    }
    Ok(())
}

/// `tables fetch --dtm`: the mirror's list, the selection, the free-space
/// check, the transfers, the list in --to, the summary.
async fn fetch_dtm(args: FetchArgs, from: Vec<reqwest::Url>) -> Result<(), TablesError> {
    let list = crate::dtm::fetch::fetch_list(&from).await?;
    let pieces = args.pieces.unwrap_or_default();
    let selected = crate::dtm::fetch::select(&list, &pieces, &args.only)?;
    let jobs = usize::from(args.jobs);
    let plan = crate::dtm::fetch::plan(selected, &from, &args.to, jobs).await?;
    let unknown_size = match plan.unknown_size {
        0 => String::new(),
        n => format!(" plus {n} files the mirror gave no size for"),
    };
    println!(
        "{} Prophet DTM files listed in {}, {} selected: {} to transfer{unknown_size}; {} free in {}",
        list.files.len(),
        list.url,
        plan.files.len(),
        human(plan.needed),
        human(plan.free),
        args.to.display()
    );
    let options = FetchOptions {
        from,
        to: args.to,
        jobs,
    };
    let summary = transfer(&options, plan).await?;
    let recorded = crate::dtm::fetch::record(&options.to, &list, &summary);
    print!("{}", render_summary(&summary));
    let failed = summary.failures().count();
    match recorded {
        Ok(Some(path)) => println!("md5 of the files there: {}", path.display()),
        Ok(None) => {}
        // The failed transfers are the error to end with; this one is said too.
        Err(err) if failed > 0 => eprintln!("zugzwang: {err}"),
        Err(err) => return Err(err.into()),
    }
    complete(&summary)
}

/// Per piece count: files fetched, already there, failed; then each failure.
pub fn render_summary(summary: &Summary) -> String {
    let mut out = String::new();
    let outcomes = summary.files.iter().map(|f| {
        let outcome = match f.result {
            Ok(Done::Fetched(_)) => Outcome::Moved,
            Ok(Done::AlreadyComplete { .. }) => Outcome::AlreadyThere,
            Err(_) => Outcome::Failed,
        };
        (f.pieces, outcome)
    });
    render_counts(&mut out, "fetched", &outcomes.collect::<Vec<_>>());
    let seconds = summary.elapsed.as_secs_f64();
    let _ = writeln!(
        out,
        "received {} in {seconds:.1} s ({}/s)",
        human(summary.received()),
        human((summary.received() as f64 / seconds.max(0.001)) as u64)
    );
    let recorded = |want: fn(&Done) -> bool| {
        summary
            .files
            .iter()
            .filter(|f| f.result.as_ref().is_ok_and(want))
            .count()
    };
    let fetched = recorded(|d| matches!(d, Done::Fetched(_)));
    let added = recorded(|d| matches!(d, Done::AlreadyComplete { recorded: true }));
    if fetched + added > 0 {
        let already = match added {
            0 => String::new(),
            n => format!(" ({n} of them already there without)"),
        };
        let _ = writeln!(
            out,
            "block checksums recorded for {} files{already} in .zugzwang/ beside each: every read of them is checked",
            fetched + added
        );
    }
    for failure in summary.failures() {
        let _ = writeln!(out, "FAILED {failure}");
    }
    out
}

/// How one file of a fetch or an upload ended, for the table of counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// Fetched, or uploaded.
    Moved,
    AlreadyThere,
    Failed,
}

/// Per piece count and in all: files, moved (`verb`), already there, failed.
fn render_counts(out: &mut String, verb: &str, outcomes: &[(usize, Outcome)]) {
    let _ = writeln!(
        out,
        "{:<7} {:>7} {verb:>8} {:>14} {:>7}",
        "pieces", "files", "already there", "failed"
    );
    let counts: BTreeSet<usize> = outcomes.iter().map(|(pieces, _)| *pieces).collect();
    let rows = counts
        .iter()
        .map(|&pieces| (pieces.to_string(), Some(pieces)))
        .chain([("total".to_string(), None)]);
    for (label, pieces) in rows {
        let of = |want: Option<Outcome>| {
            outcomes
                .iter()
                .filter(|(p, o)| pieces.is_none_or(|n| n == *p) && want.is_none_or(|w| w == *o))
                .count()
        };
        let _ = writeln!(
            out,
            "{label:<7} {:>7} {:>8} {:>14} {:>7}",
            of(None),
            of(Some(Outcome::Moved)),
            of(Some(Outcome::AlreadyThere)),
            of(Some(Outcome::Failed)),
        );
    }
}

/// `tables fetch --to s3://…`: the selection, the store tried with one
/// LIST, the uploads, the summary.
async fn upload_tables(args: FetchArgs, url: RemoteUrl) -> Result<(), TablesError> {
    if args.dtm {
        return upload_dtm(args, url).await;
    }
    let catalog = catalog::of(args.variant);
    let source_dir = local_source(&args.from)?;
    let pieces = args.pieces.clone().unwrap_or_default();
    let tables = match &source_dir {
        Some(dir) if pieces.is_empty() && args.only.is_empty() => {
            let found =
                upload::tables_in(catalog, dir).map_err(|source| FetchError::Directory {
                    dir: dir.clone(),
                    source,
                })?;
            if found.is_empty() {
                return Err(TablesError::NoTables {
                    dir: dir.clone(),
                    variant: args.variant,
                });
            }
            match args.with_dependencies {
                true => catalog.with_dependencies(found),
                false => found,
            }
        }
        _ => selection::select(catalog, &pieces, &args.only, args.with_dependencies)?,
    };
    let files = fetch::planned_files(catalog, &tables);
    let what = format!("{} {} tables", tables.len(), args.variant);
    let (_, summary) = upload_files(&args, url, source_dir, files, &what).await?;
    uploaded_all(&summary)
}

/// `tables fetch --dtm --to s3://…`: the Prophet files the `MD5SUMS` of
/// --from lists (a local directory's or a mirror's), selected by --pieces
/// and --only (without either: all), each uploaded to the same path below
/// the prefix once the bytes sent have the listed md5; then an `MD5SUMS`
/// object at the prefix names those in the store, as `serve --dtm
/// s3://…` and `tier build --from s3://…` check them against it.
async fn upload_dtm(args: FetchArgs, url: RemoteUrl) -> Result<(), TablesError> {
    let source_dir = local_source(&args.from)?;
    let list = match &source_dir {
        Some(dir) => crate::dtm::fetch::read_list(dir)?,
        None => crate::dtm::fetch::fetch_list(&mirror_urls(&args.from)?).await?,
    };
    let pieces = match (&args.pieces, args.only.is_empty()) {
        (Some(pieces), _) => pieces.clone(),
        (None, true) => list.files.iter().map(|f| f.pieces()).collect(),
        (None, false) => BTreeSet::new(),
    };
    let selected = crate::dtm::fetch::select(&list, &pieces, &args.only)?;
    let files: Vec<PlannedFile> = selected
        .into_iter()
        .map(|listed| PlannedFile {
            pieces: listed.pieces(),
            expected: Expected::listed_md5(&listed.md5),
            size: source_dir
                .as_ref()
                .and_then(|dir| std::fs::metadata(dir.join(&listed.path)).ok())
                .map(|meta| meta.len()),
            file: listed.path,
        })
        .collect();
    let what = format!("Prophet DTM files listed in {}:", list.url);
    let (target, summary) = upload_files(&args, url, source_dir, files, &what).await?;
    let stored = list.md5s(
        summary
            .files
            .iter()
            .filter(|f| f.result.is_ok())
            .map(|f| f.file.as_str()),
    );
    if !stored.is_empty() {
        match upload::record_md5s(&target, &stored).await {
            Ok(at) => println!("md5 of the files there: {at}"),
            // The failed uploads are the error to end with; this one is said too.
            Err(err) if summary.failures().next().is_some() => eprintln!("zugzwang: {err}"),
            Err(err) => return Err(TablesError::DtmList(err)),
        }
    }
    uploaded_all(&summary)
}

/// The store tried with one LIST, `files` uploaded from `source_dir` or
/// the mirrors of --from, the summary printed.
async fn upload_files(
    args: &FetchArgs,
    url: RemoteUrl,
    source_dir: Option<PathBuf>,
    files: Vec<PlannedFile>,
    what: &str,
) -> Result<(Target, UploadSummary), TablesError> {
    let jobs = usize::from(args.jobs);
    let mut options = args.remote.options(jobs);
    // A part of 64 MiB takes seconds; a GET's five would cut it.
    options.timeout = options.timeout.max(UPLOAD_TIMEOUT);
    let part_size = args.part_size_mib << 20;
    let target = Target::connect(url, &options, part_size, args.state.resolve()).await?;
    let source = match source_dir {
        Some(dir) => Source::Directory(dir),
        None => Source::Mirror {
            client: fetch::client()?,
            from: mirror_urls(&args.from)?,
            staging: upload::staging_dir(&target),
        },
    };
    let bytes: u64 = files.iter().filter_map(|f| f.size).sum();
    println!(
        "{what} {} files ({}) into {}: objects already complete are skipped; files over {} MiB go in parts, journalled in {}",
        files.len(),
        human(bytes),
        target.url(),
        args.part_size_mib,
        target.journal_dir().display()
    );
    let summary = upload::upload_all(&target, &source, files, jobs, &Bar::new()).await;
    print!("{}", render_upload_summary(&summary));
    Ok((target, summary))
}

/// The mirror directories --from names.
fn mirror_urls(from: &[String]) -> Result<Vec<reqwest::Url>, TablesError> {
    Ok(from
        .iter()
        .map(|url| fetch::base_url(url))
        .collect::<Result<_, _>>()?)
}

/// An error naming the failed files when any failed.
fn uploaded_all(summary: &UploadSummary) -> Result<(), TablesError> {
    let failed = summary.failures().count();
    if failed > 0 {
        return Err(TablesError::NotUploaded {
            failed,
            damaged: summary.failures().filter(|e| e.is_damage()).count(),
            total: summary.files.len(),
        });
    }
    Ok(())
}

/// How long one request of an upload (a part) may take, retries included.
const UPLOAD_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(600);

/// The local table directory `--from` names, if it names one (mirror
/// URLs otherwise; the two do not mix).
fn local_source(from: &[String]) -> Result<Option<PathBuf>, TablesError> {
    let is_url = |text: &str| text.starts_with("http://") || text.starts_with("https://");
    match from {
        [one] if !is_url(one) => {
            let dir = PathBuf::from(one);
            match std::fs::metadata(&dir) {
                Ok(meta) if meta.is_dir() => Ok(Some(dir)),
                Ok(_) => Err(TablesError::FromNotDirectory(one.clone())),
                Err(source) => Err(FetchError::Directory { dir, source }.into()),
            }
        }
        _ if from.iter().all(|f| is_url(f)) => Ok(None),
        _ => Err(TablesError::FromMixed),
    }
}

/// Per piece count: files uploaded, already there, failed; what was sent;
/// then each damaged file and each failure.
pub fn render_upload_summary(summary: &UploadSummary) -> String {
    let mut out = String::new();
    let outcomes = summary.files.iter().map(|f| {
        let outcome = match f.result {
            Ok(Uploaded::Sent { .. }) => Outcome::Moved,
            Ok(Uploaded::AlreadyComplete) => Outcome::AlreadyThere,
            Err(_) => Outcome::Failed,
        };
        (f.pieces, outcome)
    });
    render_counts(&mut out, "uploaded", &outcomes.collect::<Vec<_>>());
    let (sent, continued) = summary.sent();
    let seconds = summary.elapsed.as_secs_f64();
    let _ = write!(
        out,
        "sent {} in {seconds:.1} s ({}/s)",
        human(sent),
        human((sent as f64 / seconds.max(0.001)) as u64)
    );
    let resumed = summary
        .files
        .iter()
        .filter(|f| matches!(f.result, Ok(Uploaded::Sent { continued, .. }) if continued > 0))
        .count();
    let _ = match resumed {
        0 => writeln!(out),
        n => writeln!(
            out,
            "; {n} cut uploads continued ({} sent by earlier runs, not sent again)",
            human(continued)
        ),
    };
    for failure in summary.failures() {
        let label = if failure.is_damage() {
            "DAMAGED"
        } else {
            "FAILED"
        };
        let _ = writeln!(out, "{label} {failure}");
    }
    out
}
