//! `zugzwang tier build`: copy every table's prefix to fast storage, with
//! per-block checksums and a manifest (the work is `store::tier::build`),
//! and print how the bytes divide.

use std::path::PathBuf;

use super::{
    RemoteArgs, StateDirArg,
    output::{Bar, human},
};
use crate::store::{
    layout::TableKind,
    quarantine::Quarantine,
    remote::{RemoteError, RemoteSources},
    tier::{
        build::{BuildOptions, RegionTotals, Summary, build},
        integrity::DEFAULT_BLOCK_SIZE,
    },
};

/// `zugzwang tier ...`
#[derive(Debug, clap::Subcommand)]
pub enum TierCommand {
    /// Copy every table's prefix (header, sparse index, block lengths) to
    /// fast storage, with block checksums and a manifest per table. Prophet
    /// DTM files (`*.egtb.bz`, also in the generator's `Nmen/Mpawns/`
    /// subdirectories) too: their prefix is the header and block-size list.
    Build(TierBuildArgs),
}

#[derive(Debug, clap::Args)]
pub struct TierBuildArgs {
    /// Table directories on the slow tier, or remote sources
    /// (`s3://BUCKET/PREFIX`, `https://host/path/`): each table is then
    /// read once with one streamed GET.
    #[arg(long, required = true, num_args = 1.., value_name = "SLOW_DIR|URL")]
    pub from: Vec<PathBuf>,
    /// Directory on fast storage for prefixes, checksums and manifests.
    #[arg(long, value_name = "FAST_DIR", required_unless_present = "dry_run")]
    pub to: Option<PathBuf>,
    /// Print how the bytes divide (what the fast tier needs) without writing.
    #[arg(long)]
    pub dry_run: bool,
    /// Bytes per checksum (a power of two).
    #[arg(long, default_value_t = DEFAULT_BLOCK_SIZE, value_parser = parse_block_size)]
    pub block_size: u32,
    /// Where tables found damaged are recorded when their directory cannot
    /// be written (see `serve --state-dir`).
    #[command(flatten)]
    pub state: StateDirArg,
    #[command(flatten)]
    pub remote: RemoteArgs,
}

fn parse_block_size(s: &str) -> Result<u32, String> {
    let size: u32 = s.parse().map_err(|_| format!("{s} is not a number"))?;
    if size >= 64 && size.is_power_of_two() {
        Ok(size)
    } else {
        Err("the block size must be a power of two of at least 64".to_string())
    }
}

/// Why `zugzwang tier` failed.
#[derive(Debug, thiserror::Error)]
pub enum TierError {
    /// Tables that could not be built are named above, each with its reason.
    #[error("{0} tables failed; the others were built")]
    TablesFailed(usize),
    #[error(transparent)]
    Remote(#[from] RemoteError),
}

/// Runs `zugzwang tier ...`; the summary goes to stdout, failures are named
/// there and make the exit status non-zero.
pub fn run(command: TierCommand) -> Result<(), TierError> {
    let TierCommand::Build(args) = command;
    let remote = RemoteSources::connect(&args.from, &args.remote.streaming_options())?;
    let options = BuildOptions {
        remote: remote.clone(),
        from: args.from,
        to: args.to.unwrap_or_default(),
        dry_run: args.dry_run,
        block_size: args.block_size,
        prefixes: true,
        per_directory: false,
    };
    let summary = build(&options, &Bar::new());
    if !args.dry_run {
        let quarantine = Quarantine::new(args.state.resolve()).with_remote(remote);
        summary.record_verdicts(&quarantine, "tier build");
    }
    print!("{}", render_summary(&summary));
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
    for (path, _) in &summary.damaged {
        println!("QUARANTINED {}: not served until replaced", path.display());
    }
    if summary.failures.is_empty() {
        Ok(())
    } else {
        Err(TierError::TablesFailed(summary.failures.len()))
    }
}

/// How the bytes divide, per kind of table and in all: what the fast tier needs.
pub fn render_summary(summary: &Summary) -> String {
    let mut out = format!(
        "{:<6} {:>7} {:>16} {:>16} {:>16} {:>16} {:>8}\n",
        "", "tables", "header+sparse", "block lengths", "data blocks", "prefix (fast)", "prefix%"
    );
    let rows: [(&str, RegionTotals); 4] = [
        (TableKind::Wdl.label(), summary.wdl),
        (TableKind::Dtz.label(), summary.dtz),
        (TableKind::Dtm.label(), summary.dtm),
        ("total", summary.total()),
    ];
    // A DTM row only where there are Prophet files.
    for (label, t) in rows
        .into_iter()
        .filter(|(label, t)| *label != TableKind::Dtm.label() || t.tables > 0)
    {
        let share = if t.total() == 0 {
            0.0
        } else {
            100.0 * t.prefix() as f64 / t.total() as f64
        };
        out.push_str(&format!(
            "{label:<6} {:>7} {:>16} {:>16} {:>16} {:>16} {share:>7.2}%\n",
            t.tables,
            human(t.header_and_sparse),
            human(t.block_lengths),
            human(t.data),
            human(t.prefix()),
        ));
    }
    let total = summary.total();
    out.push_str(&format!(
        "prefix {} bytes (header+sparse {}, block lengths {}) of {} table bytes; data blocks {} bytes\n",
        total.prefix(),
        total.header_and_sparse,
        total.block_lengths,
        total.total(),
        total.data
    ));
    out
}
