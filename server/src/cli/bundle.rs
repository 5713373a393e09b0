//! `zugzwang bundle compress`: the page's bundle written compressed beside
//! itself (`name.br`, `name.gz`), at the best quality, for a web server in
//! front that sends such files as they are (nginx's `gzip_static` and
//! `brotli_static`, server/deploy/nginx). `serve` itself keeps the same
//! compressed copies in memory (`http::bundle_compression`).

use std::path::{Path, PathBuf};

use crate::http::bundle_compression::{Compressed, compressible_files, with_suffix};

/// `zugzwang bundle ...`
#[derive(Debug, clap::Subcommand)]
pub enum BundleCommand {
    /// Write each content-hashed file of the site's `pkg/` compressed beside
    /// it, with brotli (`.br`) and gzip (`.gz`). Files already written are
    /// kept, so running it again after an upgrade compresses only the new
    /// files.
    Compress(CompressArgs),
}

#[derive(Debug, clap::Args)]
pub struct CompressArgs {
    /// The installed site: the directory that holds `pkg/` (what nginx's
    /// `SITE_ROOT` names; `cargo leptos build` leaves it in `target/site`).
    #[arg(long, default_value = "target/site", value_name = "SITE_DIR")]
    pub site: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    #[error("cannot read the bundle in {dir}: {source} (is --site the directory that holds pkg/?)")]
    ReadDir {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot compress {file}: {source}")]
    Compress {
        file: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write {file}: {source} (is the disk full, or the site read-only?)")]
    Write {
        file: PathBuf,
        source: std::io::Error,
    },
}

pub fn run(command: BundleCommand) -> Result<(), BundleError> {
    let BundleCommand::Compress(args) = command;
    let dir = args.site.join("pkg");
    let files = hashed_files(&dir)?;
    let mut written = 0;
    for file in &files {
        if compress_beside(file)? {
            written += 1;
        }
    }
    println!(
        "{written} of {} bundle files compressed in {} ({} already were)",
        files.len(),
        dir.display(),
        files.len() - written
    );
    Ok(())
}

/// The bundle's files kept compressed (`bundle_compression`).
fn hashed_files(dir: &Path) -> Result<Vec<PathBuf>, BundleError> {
    let names = compressible_files(dir).map_err(|source| BundleError::ReadDir {
        dir: dir.to_path_buf(),
        source,
    })?;
    Ok(names.into_iter().map(|name| dir.join(name)).collect())
}

/// Writes `file.br` and `file.gz` unless both are there; true if written.
/// Each is written to a temporary name first, so a web server never sends
/// half a file.
fn compress_beside(file: &Path) -> Result<bool, BundleError> {
    let br = with_suffix(file, "br");
    let gz = with_suffix(file, "gz");
    if br.is_file() && gz.is_file() {
        return Ok(false);
    }
    let compressed = Compressed::of_file(file).map_err(|source| BundleError::Compress {
        file: file.to_path_buf(),
        source,
    })?;
    write_atomically(&br, compressed.brotli())?;
    write_atomically(&gz, compressed.gzip())?;
    Ok(true)
}

fn write_atomically(file: &Path, bytes: &[u8]) -> Result<(), BundleError> {
    let partial = with_suffix(file, "partial");
    let write = |source| BundleError::Write {
        file: file.to_path_buf(),
        source,
    };
    std::fs::write(&partial, bytes).map_err(write)?;
    std::fs::rename(&partial, file).map_err(|source| {
        let _ = std::fs::remove_file(&partial);
        write(source)
    })
}
