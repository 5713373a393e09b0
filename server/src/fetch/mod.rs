//! `tables fetch`: the selected tables' files from a plain HTTP(S) mirror
//! (`BASE/NAME.rtbw`, `BASE/NAME.atbw`, ...) into a directory, a few at a
//! time, each verified against its published digest (sha256, md5 for atomic
//! and antichess) before it appears under its real name (`transfer`), its
//! block checksums recorded beside it from the bytes verified (`checksums`).
//! Before any byte moves, the free space of the directory is compared with
//! what the transfers still need, as far as sizes are known; while bytes
//! are written it is looked at again, and a file without a published size
//! stops at the most a file of its kind can be (`limits`). Prophet DTM
//! files (`--dtm`) are planned by `crate::dtm::fetch` from the mirror's `MD5SUMS` and
//! then fetched the same way.

pub mod checksums;
pub mod mirror_limits;
pub mod selection;
pub mod transfer;
pub mod upload;
pub mod upload_journal;

use std::{
    collections::BTreeSet,
    fs, io,
    path::{Path, PathBuf},
    sync::atomic::{AtomicUsize, Ordering::Relaxed},
    time::{Duration, Instant},
};

use app::material::piece_count;
use futures::StreamExt;
use reqwest::{Client, Url};

use indicatif::HumanBytes;

use crate::{catalog::Catalog, progress::Progress};
pub use transfer::{Done, Expected, TransferError};

/// What to fetch, from where, to where.
pub struct FetchOptions {
    /// Mirror directories, tried in turn for a file while they answer 404.
    pub from: Vec<Url>,
    pub to: PathBuf,
    /// Transfers at once.
    pub jobs: usize,
}

/// Why a fetch could not start.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error(
        "--from {0}: not an http:// or https:// URL; give the mirror's directory of tables, e.g. https://host/syzygy/3-4-5/"
    )]
    Url(String),
    #[error("no mirror given: pass --from URL")]
    NoMirror,
    #[error("cannot use {}: {source}; check that it exists and is writable", .dir.display())]
    Directory {
        dir: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error(
        "not enough free space in {}: the transfers need {}, {} is free; free some space or select fewer tables (--pieces, --only)",
        .dir.display(), HumanBytes(*.needed), HumanBytes(*.free)
    )]
    NoSpace {
        dir: PathBuf,
        needed: u64,
        free: u64,
    },
    #[error("cannot set up the HTTP client: {0}")]
    Client(#[source] reqwest::Error),
    #[error(
        "{url} answered 404: `tables fetch --dtm` fetches the files listed in the MD5SUMS the Prophet generator writes (lines `md5  ./4men/0pawns/KBNK.egtb.bz`); give as --from the mirror's directory that holds it (beside 2men/, 3men/, 4men/), or use a mirror that lists its files"
    )]
    NoList { url: Url },
    #[error(
        "{}: not found: `tables fetch --dtm --from DIR` uploads the Prophet DTM files the MD5SUMS of DIR lists, each checked against its md5; write one beside 2men/, 3men/, 4men/ (`find . -name '*.egtb.bz' | sort | xargs md5sum > MD5SUMS` there) or fetch the files with `tables fetch --dtm --from URL --to DIR`, which writes it",
        .path.display()
    )]
    NoLocalList { path: PathBuf },
    #[error("{url}: the mirror answered {status}; try again later or use another mirror")]
    ListStatus {
        url: Url,
        status: reqwest::StatusCode,
    },
    #[error(
        "{url}: cannot fetch the list ({}); check the URL and the network, or use another mirror",
        mirror_limits::describe(.source)
    )]
    ListConnection {
        url: Url,
        #[source]
        source: reqwest::Error,
    },
    #[error(
        "{url}: {problem}; this is not an MD5SUMS of Prophet DTM files as the generator writes it (`md5  ./4men/0pawns/KBNK.egtb.bz`); use another mirror"
    )]
    BadList { url: Url, problem: String },
    #[error(
        "cannot write {}: {source}; the files fetched are verified, but `verify` and `tables status --dtm --verify` will not check their md5 until a list beside them names it",
        .path.display()
    )]
    Record {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// How one file ended: a fetch's by default, an upload's
/// ([`upload::UploadOutcome`]) with its own result types.
#[derive(Debug)]
pub struct FileOutcome<T = Done, E = TransferError> {
    pub file: String,
    pub pieces: usize,
    pub result: Result<T, E>,
}

/// Every file's outcome (sorted by name) and what the run took.
#[derive(Debug)]
pub struct Summary<T = Done, E = TransferError> {
    pub files: Vec<FileOutcome<T, E>>,
    pub elapsed: Duration,
}

impl<T, E> Summary<T, E> {
    pub fn failures(&self) -> impl Iterator<Item = &E> {
        self.files.iter().filter_map(|f| f.result.as_ref().err())
    }
}

impl Summary {
    /// Bytes received over the network.
    pub fn received(&self) -> u64 {
        self.files
            .iter()
            .map(|f| match f.result {
                Ok(Done::Fetched(bytes)) => bytes,
                _ => 0,
            })
            .sum()
    }
}

/// One file a fetch is to bring.
#[derive(Debug, Clone)]
pub struct PlannedFile {
    /// Its path below the target directory: a name (`KRvK.rtbw`), or the
    /// path an md5 list gives (`4men/0pawns/KBNK.egtb.bz`).
    pub file: String,
    pub pieces: usize,
    /// What it must be before it appears under its real name.
    pub expected: Expected,
    /// Its size where known before the transfer (published, or what the
    /// mirror answered to HEAD), for the free-space check.
    pub size: Option<u64>,
}

/// What a fetch will do, known before it starts.
#[derive(Debug)]
pub struct Plan {
    /// Every file of the selection, with what it must be.
    pub files: Vec<PlannedFile>,
    /// Bytes still to transfer: files not yet there with their known
    /// size, less what their `.part` files already hold.
    pub needed: u64,
    /// Files not yet there whose size is not known (atomic, antichess; a
    /// Prophet file the mirror gave no size for): not counted in `needed`.
    pub unknown_size: usize,
    /// Bytes free in the target directory for an unprivileged user.
    pub free: u64,
}

impl Plan {
    /// Measures what fetching `files` into `to` (which exists) needs.
    pub(crate) fn measure(files: Vec<PlannedFile>, to: &Path) -> io::Result<Plan> {
        // A file already there of the expected size (or of any size where
        // none is published) is checked by its digest, not transferred.
        let to_transfer: Vec<&PlannedFile> = files
            .iter()
            .filter(|f| match fs::metadata(to.join(&f.file)) {
                Ok(meta) => f.expected.size.is_some_and(|size| size != meta.len()),
                Err(_) => true,
            })
            .collect();
        let needed = to_transfer
            .iter()
            .filter_map(|f| Some(f.size?.saturating_sub(transfer::part_len(to, &f.file))))
            .sum();
        let unknown_size = to_transfer.iter().filter(|f| f.size.is_none()).count();
        let free = mirror_limits::free_space(to)?;
        Ok(Plan {
            files,
            needed,
            unknown_size,
            free,
        })
    }
}

/// Reads `--from`: an http(s) URL, taken as a directory.
pub fn base_url(from: &str) -> Result<Url, FetchError> {
    let mut url = Url::parse(from).map_err(|_| FetchError::Url(from.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") || url.cannot_be_a_base() {
        return Err(FetchError::Url(from.to_string()));
    }
    if !url.path().ends_with('/') {
        url.set_path(&format!("{}/", url.path()));
    }
    Ok(url)
}

/// Creates the target directory and measures what the fetch needs.
pub fn plan(
    catalog: &Catalog,
    tables: &BTreeSet<&'static str>,
    to: &Path,
) -> Result<Plan, FetchError> {
    let dir_error = |source| FetchError::Directory {
        dir: to.to_path_buf(),
        source,
    };
    mirror_limits::create_dirs(to).map_err(dir_error)?;
    Plan::measure(planned_files(catalog, tables), to).map_err(dir_error)
}

/// The files of the selected tables, each with what it must be.
pub fn planned_files(catalog: &Catalog, tables: &BTreeSet<&'static str>) -> Vec<PlannedFile> {
    tables
        .iter()
        .flat_map(|material| catalog.files_of(material))
        .filter_map(|file| {
            let published = catalog.published(&file)?;
            Some(PlannedFile {
                pieces: piece_count(&file),
                size: published.size,
                expected: published.into(),
                file,
            })
        })
        .collect()
}

/// Refuses to start when the directory lacks the space the plan needs.
pub fn check_space(plan: &Plan, to: &Path) -> Result<(), FetchError> {
    if plan.needed > plan.free {
        return Err(FetchError::NoSpace {
            dir: to.to_path_buf(),
            needed: plan.needed,
            free: plan.free,
        });
    }
    Ok(())
}

/// The HTTP client: rustls with the ring provider, timeouts that notice a
/// dead mirror without cutting a slow one, redirects followed but never
/// from https to http (`mirror_limits::redirect_policy`).
pub(crate) fn client() -> Result<Client, FetchError> {
    // reqwest is built without a provider of its own; another install won.
    let _ = rustls::crypto::ring::default_provider().install_default();
    Client::builder()
        .user_agent(concat!("zugzwang/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(Duration::from_secs(30))
        .read_timeout(Duration::from_secs(60))
        .redirect(mirror_limits::redirect_policy())
        .build()
        .map_err(FetchError::Client)
}

/// Fetches every file of the plan, `jobs` at a time; a file that fails is
/// reported in the summary, the others go on.
pub async fn fetch(
    options: &FetchOptions,
    plan: Plan,
    progress: &dyn Progress,
) -> Result<Summary, FetchError> {
    let client = client()?;
    let started = Instant::now();
    let total = plan.files.len();
    progress.start(plan.needed, total);
    let finished = AtomicUsize::new(0);
    let mut files: Vec<FileOutcome> = futures::stream::iter(plan.files)
        .map(|planned| {
            let (client, finished) = (&client, &finished);
            async move {
                let result =
                    fetch_one(client, &options.from, &options.to, &planned, progress).await?;
                let done = finished.fetch_add(1, Relaxed) + 1;
                progress.message(&format!("{done}/{total} files"));
                Ok(FileOutcome {
                    pieces: planned.pieces,
                    file: planned.file,
                    result,
                })
            }
        })
        .buffer_unordered(options.jobs.max(1))
        .collect::<Vec<Result<FileOutcome, FetchError>>>()
        .await
        .into_iter()
        .collect::<Result<_, _>>()?;
    progress.finish();
    files.sort_by(|a, b| a.file.cmp(&b.file));
    Ok(Summary {
        files,
        elapsed: started.elapsed(),
    })
}

/// Fetches one file into `to` from the first of the mirror directories
/// `from` that has it (the next is asked while one answers 404).
pub async fn fetch_one(
    client: &Client,
    from: &[Url],
    to: &Path,
    planned: &PlannedFile,
    progress: &dyn Progress,
) -> Result<Result<Done, TransferError>, FetchError> {
    let urls = from
        .iter()
        .map(|base| {
            base.join(&planned.file)
                .map_err(|_| FetchError::Url(base.to_string()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let Some((first, others)) = urls.split_first() else {
        return Err(FetchError::NoMirror);
    };
    let transfer = |url: &Url| transfer::Transfer {
        client,
        url: url.clone(),
        dir: to,
        file: &planned.file,
        pieces: planned.pieces,
        expected: &planned.expected,
        progress,
    };
    // Mirrors that keep WDL and DTZ files apart: try the next on a 404.
    let mut result = transfer(first).run().await;
    for url in others {
        if !matches!(result, Err(TransferError::NotFound { .. })) {
            break;
        }
        result = transfer(url).run().await;
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_to_start_without_the_space_needed() {
        let plan = Plan {
            files: Vec::new(),
            needed: 3 << 30,
            unknown_size: 0,
            free: 1 << 30,
        };
        let err = check_space(&plan, Path::new("/srv/syzygy")).unwrap_err();
        let message = err.to_string();
        assert!(
            message.contains("need 3.00 GiB") && message.contains("1.00 GiB is free"),
            "{message}"
        );
    }

    #[test]
    fn takes_the_mirror_as_a_directory() {
        let url = base_url("https://example.org/syzygy").unwrap();
        assert_eq!(
            url.join("KRvK.rtbw").unwrap().as_str(),
            "https://example.org/syzygy/KRvK.rtbw"
        );
        assert!(base_url("ftp://example.org/").is_err());
        assert!(base_url("/srv/syzygy").is_err());
    }
}
