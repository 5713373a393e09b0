//! What a mirror cannot make `tables fetch` do: write more than a file of
//! its kind can be where no size is published ([`size_bound`]), fill the
//! disk ([`space_runs_out`], looked at again every [`SPACE_CHECK_EVERY`]
//! bytes written), leave https for plain http on a redirect
//! ([`redirect_policy`]); and the directories it creates survive a crash
//! ([`create_dirs`]).

use std::{
    collections::BTreeMap,
    fs::{self, File},
    io,
    path::Path,
    sync::LazyLock,
};

use app::variant::Variant;
use reqwest::{Url, redirect};

use crate::{catalog, dtm::format as prophet_format, store::layout::file_name};

/// The most bytes a file without a published size may have, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SizeBound {
    pub bytes: u64,
    /// What the bound is, as messages say it.
    pub why: String,
}

/// The least a bound for a Syzygy file is: below a MiB no disk is at risk,
/// and the smallest files (2- and 3-piece antichess tables, a few KiB) get
/// room whatever their exact size.
const SYZYGY_FLOOR: u64 = 1 << 20;

/// The largest published standard file of each piece count (3 to 7).
static LARGEST_STANDARD: LazyLock<BTreeMap<usize, u64>> = LazyLock::new(|| {
    let standard = catalog::of(Variant::Standard);
    standard
        .piece_counts()
        .into_iter()
        .map(|pieces| {
            let largest = standard
                .materials_with(pieces)
                .flat_map(|material| standard.files_of(material))
                .filter_map(|file| standard.published(&file)?.size)
                .max();
            (pieces, largest.unwrap_or(0))
        })
        .collect()
});

/// The most bytes the file at `file` (a path below the target directory;
/// its name says its kind) of `pieces` pieces may have where no size is
/// published for it.
///
/// - A Prophet DTM file: the largest its material allows and the reader
///   still opens (`dtm::format::max_file_size`: every block at zstd's
///   bound). That is exact rather than guessed: a larger file is refused at
///   open anyway. The 2-4 piece files are at most 1.6 MB, and their bounds
///   (up to about 10 MB) stay that small.
/// - A Syzygy file of a variant (atomic, antichess: md5 lists only): the
///   largest published standard file with one piece more (at least
///   [`SYZYGY_FLOOR`]). A table grows about 60-fold with each piece (one
///   more piece on about 60 squares, less symmetry), while the variants'
///   files of a piece count stay within a few times the standard ones of
///   the same count (the largest 4-piece atomic file is 864 KB against the
///   standard 462 KB; 3-piece antichess 24 KB against 7.8 KB): the bound
///   leaves them a wide margin, and keeps a mirror from writing more than
///   32 MB for a 4-piece file, 2.2 GB for a 5-piece one. Past the 7-piece
///   standard files (no variant list reaches 6), the largest 7-piece one.
pub fn size_bound(file: &str, pieces: usize) -> SizeBound {
    let name = file_name(Path::new(file));
    if let Some(bytes) = prophet_format::max_file_size(&name) {
        return SizeBound {
            bytes,
            why: "the most a Prophet file of its material can hold".to_string(),
        };
    }
    let largest = &*LARGEST_STANDARD;
    let (next, size) = largest
        .range(pieces + 1..)
        .next()
        .or_else(|| largest.last_key_value())
        .map_or((pieces + 1, 0), |(&count, &size)| (count, size));
    if size <= SYZYGY_FLOOR {
        return SizeBound {
            bytes: SYZYGY_FLOOR,
            why: format!("the bound for a {pieces}-piece table file"),
        };
    }
    SizeBound {
        bytes: size,
        why: format!(
            "the bound for a {pieces}-piece table file: the largest published {next}-piece file"
        ),
    }
}

/// Bytes an unprivileged user may still write on the directory's filesystem.
pub fn free_space(dir: &Path) -> io::Result<u64> {
    let stat = rustix::fs::statvfs(dir)?;
    Ok(stat.f_bavail.saturating_mul(stat.f_frsize))
}

/// How many bytes are written between two looks at the free space.
pub const SPACE_CHECK_EVERY: u64 = 16 << 20;

/// What must be free while a file of unknown size is written (or less:
/// what its size bound still leaves it), looked at every
/// [`SPACE_CHECK_EVERY`] bytes: the bound itself may be far above what the
/// file will take, and asking for all of it would refuse files that fit.
pub const KEEP_FREE: u64 = 64 << 20;

/// Whether writing on would fill the disk: `free` bytes are free and the
/// file still needs `remaining` (`None`: its size is not known, and
/// [`KEEP_FREE`] is kept).
pub fn space_runs_out(free: u64, remaining: Option<u64>) -> bool {
    free < remaining.unwrap_or(KEEP_FREE)
}

/// Redirects followed before giving up (reqwest's default).
pub const MAX_REDIRECTS: usize = 10;

/// Why a redirect was not followed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RedirectRefused {
    #[error(
        "{from} redirected to {to}: from https to plain http, where anyone on the way could read and change what is sent; refused"
    )]
    Downgrade { from: String, to: String },
    #[error("more than {MAX_REDIRECTS} redirects, the last to {to}")]
    TooMany { to: String },
}

/// Whether a request that went through `chain` (the first URL asked
/// first) may follow a redirect to `next`: never from https to anything
/// else, and not beyond [`MAX_REDIRECTS`].
pub fn check_redirect(chain: &[Url], next: &Url) -> Result<(), RedirectRefused> {
    if chain.len() > MAX_REDIRECTS {
        return Err(RedirectRefused::TooMany {
            to: next.to_string(),
        });
    }
    match chain.iter().rev().find(|url| url.scheme() == "https") {
        Some(secure) if next.scheme() != "https" => Err(RedirectRefused::Downgrade {
            from: chain.last().unwrap_or(secure).to_string(),
            to: next.to_string(),
        }),
        _ => Ok(()),
    }
}

/// The client's redirect policy: [`check_redirect`].
pub fn redirect_policy() -> redirect::Policy {
    redirect::Policy::custom(
        |attempt| match check_redirect(attempt.previous(), attempt.url()) {
            Ok(()) => attempt.follow(),
            Err(refused) => attempt.error(refused),
        },
    )
}

/// The redirect refused behind a client error, if that is what it is.
pub fn redirect_refused(err: &reqwest::Error) -> Option<&RedirectRefused> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(err) = source {
        if let Some(refused) = err.downcast_ref::<RedirectRefused>() {
            return Some(refused);
        }
        source = err.source();
    }
    None
}

/// A client error with what caused it (reqwest's own message leaves the
/// cause out: "error sending request for url (...)").
pub fn describe(err: &reqwest::Error) -> String {
    let mut message = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    message
}

/// Creates `dir` and its missing parents, each made durable: fsynced, and
/// its parent (which now names it) fsynced after it, so that a crash does
/// not lose a directory files were then written and renamed into.
pub fn create_dirs(dir: &Path) -> io::Result<()> {
    let missing: Vec<&Path> = dir
        .ancestors()
        .take_while(|at| !at.as_os_str().is_empty() && fs::symlink_metadata(at).is_err())
        .collect();
    fs::create_dir_all(dir)?;
    for created in missing.into_iter().rev() {
        File::open(created)?.sync_all()?;
        let parent = created
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        File::open(parent)?.sync_all()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn never_follows_a_redirect_from_https_to_http() {
        let https = url("https://mirror.example/syzygy/KQvK.atbw");
        let http = url("http://mirror.example/syzygy/KQvK.atbw");
        let other = url("https://cdn.example/KQvK.atbw");
        assert_eq!(check_redirect(std::slice::from_ref(&http), &https), Ok(()));
        assert_eq!(check_redirect(std::slice::from_ref(&https), &other), Ok(()));
        assert_eq!(check_redirect(std::slice::from_ref(&http), &http), Ok(()));
        let err = check_redirect(std::slice::from_ref(&https), &http).unwrap_err();
        let message = err.to_string();
        assert!(
            message.contains("https://mirror.example") && message.contains("refused"),
            "{message}"
        );
        // Once on https, a later hop may not leave it either.
        let chain = [http.clone(), https.clone(), other.clone()];
        assert!(matches!(
            check_redirect(&chain, &http),
            Err(RedirectRefused::Downgrade { from, .. }) if from == other.as_str()
        ));
        let ftp = url("ftp://mirror.example/KQvK.atbw");
        assert!(check_redirect(std::slice::from_ref(&https), &ftp).is_err());
        let long = vec![http.clone(); MAX_REDIRECTS + 1];
        assert!(matches!(
            check_redirect(&long, &http),
            Err(RedirectRefused::TooMany { .. })
        ));
    }

    #[test]
    fn bounds_files_without_a_published_size_by_their_kind() {
        let atomic4 = size_bound("KQvKP.atbz", 4);
        assert_eq!(atomic4.bytes, LARGEST_STANDARD[&5]);
        assert!(atomic4.bytes > 30_000_000 && atomic4.bytes < 40_000_000);
        assert!(atomic4.why.contains("5-piece"), "{atomic4:?}");
        assert_eq!(size_bound("KQvK.atbw", 3).bytes, SYZYGY_FLOOR);
        assert_eq!(size_bound("BvP.gtbw", 2).bytes, SYZYGY_FLOOR);
        assert!(size_bound("KQRvKR.atbw", 5).bytes > 2_000_000_000);
        assert_eq!(
            size_bound("KRBNPvKRB.atbw", 8).bytes,
            LARGEST_STANDARD[&7],
            "past the catalogue: the largest file"
        );
        // Each embedded variant file is well inside its bound.
        for dir in ["tables-atomic", "tables-prophet"] {
            let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
            for entry in fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                let name = file_name(&path);
                let size = fs::metadata(&path).unwrap().len();
                let pieces = name
                    .chars()
                    .take_while(|&c| c != '.')
                    .filter(char::is_ascii_uppercase)
                    .count();
                let bound = size_bound(&name, pieces);
                assert!(size * 2 < bound.bytes, "{name}: {size} against {bound:?}");
            }
        }
        // Prophet: from the material (KQK: 28644 positions, one block).
        let kqk = size_bound("3men/0pawns/KQK.egtb.bz", 3);
        assert_eq!(
            kqk.bytes,
            24 + 2 + zstd::zstd_safe::compress_bound(65536) as u64
        );
        assert!(kqk.why.contains("Prophet"), "{kqk:?}");
        let largest4 = size_bound("KPKR.egtb.bz", 4).bytes;
        assert!(largest4 < 16 << 20, "{largest4}");
    }

    #[test]
    fn stops_before_the_disk_is_full() {
        assert!(!space_runs_out(10 << 30, Some(1 << 30)));
        assert!(space_runs_out(1 << 30, Some(2 << 30)));
        assert!(!space_runs_out(1 << 30, Some(1 << 30)));
        // Unknown size: a margin is kept.
        assert!(!space_runs_out(1 << 30, None));
        assert!(space_runs_out(KEEP_FREE - 1, None));
    }

    #[test]
    fn makes_every_directory_it_creates_durable() {
        let root = tempfile::tempdir().unwrap();
        let deep = root.path().join("4men/0pawns");
        create_dirs(&deep).unwrap();
        assert!(deep.is_dir());
        // Already there: nothing to do, no error.
        create_dirs(&deep).unwrap();
        create_dirs(root.path()).unwrap();
    }
}
