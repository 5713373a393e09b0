//! `zugzwang tables status` and `zugzwang tables fetch`: what a table
//! directory holds against the published set, and fetching what it lacks
//! (the work is `store::inventory` and `store::fetch`; this file holds the
//! flags and the printing).

use std::{collections::BTreeSet, fmt::Write as _, path::PathBuf};

use crate::store::{
    catalog,
    fetch::{
        self, Done, FetchError, FetchOptions, Summary,
        selection::{self, SelectionError, parse_pieces},
    },
    inventory::{self, Inventory},
    tier::build::human,
};

/// `zugzwang tables ...`
#[derive(Debug, clap::Subcommand)]
pub enum TablesCommand {
    /// Which standard tables directories hold, per piece count: present,
    /// missing, damaged (size, or with --verify sha256, other than the
    /// published one) and unknown files; what completing each set would add.
    Status(StatusArgs),
    /// Fetch tables from an HTTP(S) mirror, resuming cut transfers and
    /// verifying every file against its published sha256 before it appears
    /// under its real name.
    Fetch(FetchArgs),
}

#[derive(Debug, clap::Args)]
pub struct StatusArgs {
    /// Table directories, taken together as `serve --tables` takes them.
    #[arg(value_name = "DIR", default_value = ".")]
    pub dirs: Vec<PathBuf>,
    /// Also check every file's sha256 against the published one (reads every byte).
    #[arg(long)]
    pub verify: bool,
    /// Print the survey as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, clap::Args)]
pub struct FetchArgs {
    /// The mirror's directory of tables: files are fetched as URL/NAME.rtbw.
    /// Repeat it for a mirror that keeps WDL and DTZ files in separate
    /// directories: a file is asked of the next while one answers 404.
    #[arg(long, value_name = "URL", required = true)]
    pub from: Vec<String>,
    /// Directory to put the tables in (created if missing).
    #[arg(long, value_name = "DIR")]
    pub to: PathBuf,
    /// Whole piece counts, joined by '-': 3-4-5, 3-4, 6, 7.
    #[arg(long, value_name = "N-N", value_parser = parse_pieces_arg)]
    pub pieces: Option<BTreeSet<usize>>,
    /// Tables by material, comma-separated: KRPvKR,KQPvKQ.
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
    let inventory = inventory::survey(&args.dirs, args.verify, !args.json);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&inventory)?);
    } else {
        print!("{}", render_status(&inventory));
    }
    if inventory.has_problems() {
        let count = inventory.damaged.len() + inventory.unreadable.len();
        return Err(TablesError::Damaged(format!(
            "{count} files or directories"
        )));
    }
    Ok(())
}

/// The survey as a table per piece count, then the files that need attention.
pub fn render_status(inventory: &Inventory) -> String {
    let mut out = String::new();
    let dirs: Vec<String> = inventory
        .directories
        .iter()
        .map(|d| d.display().to_string())
        .collect();
    let checked = if inventory.verified {
        "sizes and sha256 checked"
    } else {
        "sizes checked; --verify also checks sha256"
    };
    let _ = writeln!(out, "Standard tables in {} ({checked})", dirs.join(", "));
    let _ = writeln!(
        out,
        "{:<7} {:>14} {:>14} {:>22}",
        "pieces", "tables", "files", "bytes"
    );
    for p in &inventory.pieces {
        let _ = writeln!(
            out,
            "{:<7} {:>14} {:>14} {:>22}",
            p.pieces,
            format!("{} of {}", p.tables, p.tables_published),
            format!("{} of {}", p.files, p.files_published),
            format!("{} of {}", human(p.bytes), human(p.bytes_published)),
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
                collapse_pairs(&p.missing).join(" ")
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
    for u in &inventory.unknown {
        let what = if u.file.ends_with(".part") {
            "an interrupted download; `zugzwang tables fetch` resumes it"
        } else {
            "not a published standard table"
        };
        let _ = writeln!(
            out,
            "unknown {} in {} ({}): {what}",
            u.file,
            u.directory.display(),
            human(u.bytes)
        );
    }
    for u in &inventory.unreadable {
        let _ = writeln!(out, "UNREADABLE {}: {}", u.path.display(), u.problem);
    }
    for set in &inventory.to_complete {
        let _ = if set.files == 0 {
            writeln!(out, "the {} set is complete", set.set)
        } else {
            writeln!(
                out,
                "completing the {} set adds {} files, {} (`zugzwang tables fetch --pieces {} --from URL --to DIR`)",
                set.set,
                set.files,
                human(set.bytes),
                set.set
            )
        };
    }
    out
}

/// File names with both files of a table absent shortened to the table
/// (`KRvK.rtbw KRvK.rtbz` → `KRvK`); a lone file keeps its extension.
fn collapse_pairs(files: &[String]) -> Vec<String> {
    let set: BTreeSet<&str> = files.iter().map(String::as_str).collect();
    let mut out = Vec::new();
    for file in files {
        let Some((material, _)) = file.split_once('.') else {
            continue;
        };
        let both = catalog::files_of(material)
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
    let from = args
        .from
        .iter()
        .map(|url| fetch::base_url(url))
        .collect::<Result<Vec<_>, _>>()?;
    let pieces = args.pieces.unwrap_or_default();
    let tables = selection::select(&pieces, &args.only, args.with_dependencies)?;
    let plan = fetch::plan(&tables, &args.to)?;
    println!(
        "{} tables, {} files: {} to transfer, {} free in {}",
        tables.len(),
        plan.files.len(),
        human(plan.needed),
        human(plan.free),
        args.to.display()
    );
    fetch::check_space(&plan, &args.to)?;
    let options = FetchOptions {
        from,
        to: args.to,
        jobs: usize::from(args.jobs),
        progress: true,
    };
    let summary = fetch::fetch(&options, plan).await?;
    print!("{}", render_summary(&summary));
    let failed = summary.failures().count();
    if failed > 0 {
        return Err(TablesError::Incomplete {
            failed,
            total: summary.files.len(),
        });
    }
    Ok(())
}

/// Per piece count: files fetched, already there, failed; then each failure.
pub fn render_summary(summary: &Summary) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<7} {:>7} {:>8} {:>14} {:>7}",
        "pieces", "files", "fetched", "already there", "failed"
    );
    let counts: BTreeSet<usize> = summary.files.iter().map(|f| f.pieces).collect();
    let rows = counts
        .iter()
        .map(|&pieces| (pieces.to_string(), Some(pieces)))
        .chain([("total".to_string(), None)]);
    for (label, pieces) in rows {
        let of = |want: fn(&Result<Done, fetch::TransferError>) -> bool| {
            summary
                .files
                .iter()
                .filter(|f| pieces.is_none_or(|p| f.pieces == p) && want(&f.result))
                .count()
        };
        let _ = writeln!(
            out,
            "{label:<7} {:>7} {:>8} {:>14} {:>7}",
            of(|_| true),
            of(|r| matches!(r, Ok(Done::Fetched(_)))),
            of(|r| matches!(r, Ok(Done::AlreadyComplete))),
            of(|r| r.is_err()),
        );
    }
    let seconds = summary.elapsed.as_secs_f64();
    let _ = writeln!(
        out,
        "received {} in {seconds:.1} s ({}/s)",
        human(summary.received()),
        human((summary.received() as f64 / seconds.max(0.001)) as u64)
    );
    for failure in summary.failures() {
        let _ = writeln!(out, "FAILED {failure}");
    }
    out
}
