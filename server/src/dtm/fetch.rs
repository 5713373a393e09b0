//! `tables fetch --dtm`: Prophet DTM files (`*.egtb.bz`) from a mirror
//! directory that lists them in an `MD5SUMS` as the generator writes it
//! (`md5  ./4men/0pawns/KBNK.egtb.bz`). The list says which files there are
//! and the md5 each must have; `--pieces` and `--only` choose among them,
//! each file goes to the same path below `--to` (the reader searches
//! subdirectories) through `crate::fetch::transfer`, under its real name only once its md5
//! is the list's. The list gives no sizes: HEAD requests learn them for the
//! free-space check. Afterwards an `MD5SUMS` in `--to` names the files there
//! with their md5, so that `verify` and the scrub check them later.

use std::{
    collections::{BTreeMap, BTreeSet},
    fs, io,
    path::{Path, PathBuf},
};

use app::material::piece_count;
use futures::StreamExt;
use reqwest::{Client, StatusCode, Url, header};

use super::{
    catalog::MD5SUMS,
    format::{SEARCH_DEPTH, SUFFIX, is_table_name},
};
use crate::{
    catalog::digests::{merge_md5sums, parse_md5sums},
    fetch::{
        self, FetchError, Plan, PlannedFile, Summary, selection::SelectionError, transfer::Expected,
    },
    store::tier::manifest::write_atomic,
};

/// The largest list accepted (the 2-6 piece set lists a few thousand files).
const LIST_LIMIT: usize = 16 << 20;

/// One file the mirror's list names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedFile {
    /// Below the list's directory, without `./`: `4men/0pawns/KBNK.egtb.bz`.
    pub path: String,
    /// Lowercase hex.
    pub md5: String,
}

impl ListedFile {
    /// The file's name (`KBNK.egtb.bz`).
    pub fn name(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or(&self.path)
    }

    /// Its pieces, kings included.
    pub fn pieces(&self) -> usize {
        piece_count(self.name())
    }
}

/// The Prophet files a mirror's `MD5SUMS` lists.
#[derive(Debug)]
pub struct MirrorList {
    pub url: Url,
    /// Sorted by path.
    pub files: Vec<ListedFile>,
}

impl MirrorList {
    /// Each of `files` the list names, with its md5: the lines of the
    /// `MD5SUMS` written after a fetch or an upload, for the files that
    /// ended well.
    pub fn md5s<'s, 'f>(
        &'s self,
        files: impl IntoIterator<Item = &'f str>,
    ) -> Vec<(&'f str, &'s str)> {
        let md5s: BTreeMap<&str, &str> = self
            .files
            .iter()
            .map(|f| (f.path.as_str(), f.md5.as_str()))
            .collect();
        files
            .into_iter()
            .filter_map(|file| Some((file, *md5s.get(file)?)))
            .collect()
    }
}

/// Fetches and reads the `MD5SUMS` of the first mirror directory that has one.
pub async fn fetch_list(from: &[Url]) -> Result<MirrorList, FetchError> {
    let client = fetch::client()?;
    let mut absent = None;
    for base in from {
        let url = base
            .join(MD5SUMS)
            .map_err(|_| FetchError::Url(base.to_string()))?;
        match get_list(&client, &url).await? {
            Some(text) => {
                let files = parse_list(&text).map_err(|problem| FetchError::BadList {
                    url: url.clone(),
                    problem,
                })?;
                return Ok(MirrorList { url, files });
            }
            None => {
                absent.get_or_insert(url);
            }
        }
    }
    Err(absent.map_or(FetchError::NoMirror, |url| FetchError::NoList { url }))
}

/// Reads the `MD5SUMS` of a local Prophet directory (`tables fetch --dtm
/// --from DIR --to s3://…`): the files it lists are those uploaded.
pub fn read_list(dir: &Path) -> Result<MirrorList, FetchError> {
    let path = dir.join(MD5SUMS);
    let absolute = std::path::absolute(&path).unwrap_or_else(|_| path.clone());
    let url =
        Url::from_file_path(&absolute).map_err(|()| FetchError::Url(path.display().to_string()))?;
    let text = match fs::read_to_string(&path) {
        Ok(text) => text,
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            return Err(FetchError::NoLocalList { path });
        }
        Err(source) => {
            return Err(FetchError::Directory {
                dir: dir.to_path_buf(),
                source,
            });
        }
    };
    let files = parse_list(&text).map_err(|problem| FetchError::BadList {
        url: url.clone(),
        problem,
    })?;
    Ok(MirrorList { url, files })
}

/// The list's text, or `None` on a 404.
async fn get_list(client: &Client, url: &Url) -> Result<Option<String>, FetchError> {
    let connection = |source| FetchError::ListConnection {
        url: url.clone(),
        source,
    };
    let bad = |problem: &str| FetchError::BadList {
        url: url.clone(),
        problem: problem.to_string(),
    };
    let mut response = client.get(url.clone()).send().await.map_err(connection)?;
    match response.status() {
        StatusCode::OK => {}
        StatusCode::NOT_FOUND | StatusCode::GONE => return Ok(None),
        status => {
            return Err(FetchError::ListStatus {
                url: url.clone(),
                status,
            });
        }
    }
    let mut bytes = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(connection)? {
        if bytes.len() + chunk.len() > LIST_LIMIT {
            return Err(bad("larger than 16 MiB"));
        }
        bytes.extend_from_slice(&chunk);
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| bad("not UTF-8 text"))
}

/// The Prophet files of a list's text, sorted by path; lines naming other
/// files are left out. Refuses paths that leave the list's directory or
/// that the reader would not find, and a file listed twice.
pub fn parse_list(text: &str) -> Result<Vec<ListedFile>, String> {
    let mut by_path: BTreeMap<String, String> = BTreeMap::new();
    let mut by_name: BTreeMap<String, String> = BTreeMap::new();
    for (md5, path) in parse_md5sums(text) {
        let name = path.rsplit('/').next().unwrap_or(path);
        if !is_table_name(name) {
            continue;
        }
        let relative = relative_path(path).ok_or_else(|| {
            format!(
                "it names {path}, which is not a plain path below the list's directory (at most {SEARCH_DEPTH} directories deep, of letters, digits, '.', '_' and '-')"
            )
        })?;
        if let Some(other) = by_name.insert(name.to_string(), relative.clone())
            && other != relative
        {
            return Err(format!("it lists {name} twice ({other} and {relative})"));
        }
        let md5 = md5.to_ascii_lowercase();
        if let Some(other) = by_path.insert(relative.clone(), md5.clone())
            && other != md5
        {
            return Err(format!("it gives {relative} two md5s ({other} and {md5})"));
        }
    }
    if by_path.is_empty() {
        return Err("it lists no Prophet DTM files (*.egtb.bz)".to_string());
    }
    Ok(by_path
        .into_iter()
        .map(|(path, md5)| ListedFile { path, md5 })
        .collect())
}

/// `./4men/0pawns/KBNK.egtb.bz` → `4men/0pawns/KBNK.egtb.bz`; `None` for
/// a path that is absolute, climbs (`..`), is deeper than the reader looks,
/// or has other characters than letters, digits, `.`, `_` and `-`.
fn relative_path(path: &str) -> Option<String> {
    let parts: Vec<&str> = path.split('/').filter(|p| *p != ".").collect();
    let plain = |part: &&str| {
        !part.is_empty()
            && *part != ".."
            && part
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
    };
    let depth = u32::try_from(parts.len().checked_sub(1)?).ok()?;
    (!path.starts_with('/') && depth <= SEARCH_DEPTH && parts.iter().all(plain))
        .then(|| parts.join("/"))
}

/// The listed files `--pieces` and `--only` select, sorted by path. A
/// name in `--only` is a file's (`KBNK`, `KBNK.egtb.bz`) or a material's
/// with both sides to move (`KBNvK`: `KBNK` and `KKBN`).
pub fn select(
    list: &MirrorList,
    pieces: &BTreeSet<usize>,
    only: &[String],
) -> Result<Vec<ListedFile>, SelectionError> {
    let counts: BTreeSet<usize> = list.files.iter().map(ListedFile::pieces).collect();
    if !pieces.is_subset(&counts) {
        let join = |set: &BTreeSet<usize>, by: &str| {
            set.iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(by)
        };
        return Err(SelectionError::DtmPieces {
            spec: join(pieces, "-"),
            list: list.url.to_string(),
            counts: join(&counts, ", "),
        });
    }
    let mut selected: BTreeMap<&str, &ListedFile> = list
        .files
        .iter()
        .filter(|f| pieces.contains(&f.pieces()))
        .map(|f| (f.path.as_str(), f))
        .collect();
    for name in only {
        let name = name.trim();
        let stem = name.strip_suffix(SUFFIX).unwrap_or(name);
        let wanted: BTreeSet<String> = match stem.split_once('v') {
            Some((strong, weak)) => [format!("{strong}{weak}"), format!("{weak}{strong}")].into(),
            None => [stem.to_string()].into(),
        };
        let wanted: BTreeSet<String> = wanted.into_iter().map(|s| s + SUFFIX).collect();
        let mut found = false;
        for file in list.files.iter().filter(|f| wanted.contains(f.name())) {
            selected.insert(&file.path, file);
            found = true;
        }
        if !found {
            return Err(SelectionError::DtmUnknown {
                name: name.to_string(),
                list: list.url.to_string(),
            });
        }
    }
    if selected.is_empty() {
        return Err(SelectionError::Empty("2-3-4", "KBNvK"));
    }
    Ok(selected.into_values().cloned().collect())
}

/// Creates the target directory and measures what fetching `files` needs:
/// the sizes of the files not yet there, asked of the mirrors with HEAD
/// (`jobs` at a time; one that gives none counts as of unknown size).
pub async fn plan(
    files: Vec<ListedFile>,
    from: &[Url],
    to: &Path,
    jobs: usize,
) -> Result<Plan, FetchError> {
    let dir_error = |source| FetchError::Directory {
        dir: to.to_path_buf(),
        source,
    };
    fetch::mirror_limits::create_dirs(to).map_err(dir_error)?;
    let client = fetch::client()?;
    let planned: Vec<PlannedFile> = futures::stream::iter(files)
        .map(|listed| {
            let client = &client;
            async move {
                let size = match to.join(&listed.path).exists() {
                    true => None,
                    false => head_size(client, from, &listed.path).await,
                };
                PlannedFile {
                    pieces: listed.pieces(),
                    expected: Expected::listed_md5(&listed.md5),
                    file: listed.path,
                    size,
                }
            }
        })
        .buffered(jobs.max(1))
        .collect()
        .await;
    Plan::measure(planned, to).map_err(dir_error)
}

/// The size the first mirror that has the file gives (Content-Length of a
/// HEAD); `None` when none answers with one.
async fn head_size(client: &Client, from: &[Url], path: &str) -> Option<u64> {
    for base in from {
        let url = base.join(path).ok()?;
        let response = client.head(url).send().await.ok()?;
        match response.status() {
            StatusCode::NOT_FOUND | StatusCode::GONE => continue,
            status if status.is_success() => {
                return response
                    .headers()
                    .get(header::CONTENT_LENGTH)?
                    .to_str()
                    .ok()?
                    .parse()
                    .ok();
            }
            _ => return None,
        }
    }
    None
}

/// Writes `TO/MD5SUMS` naming, in the generator's layout, every file that
/// ended well with the mirror's md5, keeping the other lines of a list
/// already there (a line for the same file is replaced). Returns the
/// list's path, or `None` when no file ended well.
pub fn record(
    to: &Path,
    list: &MirrorList,
    summary: &Summary,
) -> Result<Option<PathBuf>, FetchError> {
    let path = to.join(MD5SUMS);
    let error = |source| FetchError::Record {
        path: path.clone(),
        source,
    };
    let done = list.md5s(
        summary
            .files
            .iter()
            .filter(|f| f.result.is_ok())
            .map(|f| f.file.as_str()),
    );
    if done.is_empty() {
        return Ok(None);
    }
    let existing = match fs::read_to_string(&path) {
        Ok(text) => text,
        Err(err) if err.kind() == io::ErrorKind::NotFound => String::new(),
        Err(err) => return Err(error(err)),
    };
    let text = merge_md5sums(&existing, done);
    write_atomic(&path, &[text.as_bytes()]).map_err(error)?;
    Ok(Some(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIST: &str = "e01a30ce58f4811b32d483026d0bb0c6  ./2men/0pawns/KK.egtb.bz\n\
        fa6ca3893b2935219455e82fcd5a7e4f  ./3men/0pawns/KKQ.egtb.bz\n\
        0123456789abcdef0123456789ABCDEF  ./3men/0pawns/KQK.egtb.bz\n\
        0123456789abcdef0123456789abcdef  ./4men/0pawns/KBNK.egtb.bz\n\
        0123456789abcdef0123456789abcdef  ./4men/0pawns/KKBN.egtb.bz\n\
        0123456789abcdef0123456789abcdef  ./README.md\n";

    fn mirror_list() -> MirrorList {
        MirrorList {
            url: Url::parse("http://mirror/prophet/MD5SUMS").unwrap(),
            files: parse_list(LIST).unwrap(),
        }
    }

    fn paths(files: &[ListedFile]) -> Vec<&str> {
        files.iter().map(|f| f.path.as_str()).collect()
    }

    #[test]
    fn reads_the_generators_list() {
        let list = mirror_list();
        assert_eq!(
            paths(&list.files),
            [
                "2men/0pawns/KK.egtb.bz",
                "3men/0pawns/KKQ.egtb.bz",
                "3men/0pawns/KQK.egtb.bz",
                "4men/0pawns/KBNK.egtb.bz",
                "4men/0pawns/KKBN.egtb.bz"
            ]
        );
        assert_eq!(list.files[2].md5, "0123456789abcdef0123456789abcdef");
        assert_eq!(list.files[3].pieces(), 4);
        let flat = parse_list("0123456789abcdef0123456789abcdef  KQK.egtb.bz\n").unwrap();
        assert_eq!(paths(&flat), ["KQK.egtb.bz"]);
    }

    #[test]
    fn refuses_paths_outside_the_directory_and_files_listed_twice() {
        let md5 = "0123456789abcdef0123456789abcdef";
        for path in [
            "../KQK.egtb.bz",
            "/etc/KQK.egtb.bz",
            "./a/../../KQK.egtb.bz",
            "a/b/c/d/KQK.egtb.bz",
            "a b/KQK.egtb.bz",
            "a//KQK.egtb.bz",
        ] {
            let err = parse_list(&format!("{md5}  {path}\n")).unwrap_err();
            assert!(err.contains(path), "{path}: {err}");
        }
        let twice = format!("{md5}  ./a/KQK.egtb.bz\n{md5}  ./b/KQK.egtb.bz\n");
        assert!(parse_list(&twice).unwrap_err().contains("twice"));
        assert!(parse_list("garbage\n").unwrap_err().contains("no Prophet"));
    }

    #[test]
    fn selects_by_piece_count_file_and_material() {
        let list = mirror_list();
        let none = BTreeSet::new();
        let three = select(&list, &BTreeSet::from([3]), &[]).unwrap();
        assert_eq!(
            paths(&three),
            ["3men/0pawns/KKQ.egtb.bz", "3men/0pawns/KQK.egtb.bz"]
        );
        let both = select(&list, &none, &["KBNvK".into()]).unwrap();
        assert_eq!(
            paths(&both),
            ["4men/0pawns/KBNK.egtb.bz", "4men/0pawns/KKBN.egtb.bz"]
        );
        let one = select(&list, &BTreeSet::from([2]), &["KKBN.egtb.bz".into()]).unwrap();
        assert_eq!(
            paths(&one),
            ["2men/0pawns/KK.egtb.bz", "4men/0pawns/KKBN.egtb.bz"]
        );
        let err = select(&list, &BTreeSet::from([5]), &[]).unwrap_err();
        assert!(err.to_string().contains("2, 3, 4 pieces"), "{err}");
        let err = select(&list, &none, &["KRvK".into()]).unwrap_err();
        assert!(err.to_string().contains("--only KRvK"), "{err}");
        assert!(select(&list, &none, &[]).is_err());
    }
}
