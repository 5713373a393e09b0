//! What the fast tier holds for one table, and how to tell it is current.
//!
//! For each table `NAME` the fast directory holds `NAME.prefix` (the table's
//! first bytes: header, sparse index, block lengths, rounded up to a whole
//! checksum block), `NAME.sums` (a checksum per block of the whole table) and
//! `NAME.manifest`, written last, so a manifest only exists for a complete
//! set. The manifest records the source file's size and modification time:
//! a table replaced since is detected and its prefix not used.

use std::{
    fs::{self, File, Metadata},
    io::{self, Write},
    path::{Path, PathBuf},
    time::UNIX_EPOCH,
};

const MAGIC: &str = "zugzwang-tier 1";

/// Where `zugzwang verify --init` keeps checksums (and quarantine records)
/// for tables served without a fast tier: a folder inside the table
/// directory.
pub const INTEGRITY_SUBDIR: &str = ".zugzwang";

/// The folder of the state directory (`--state-dir`) that holds checksums
/// recorded for tables in read-only directories.
pub const STATE_CHECKSUMS_SUBDIR: &str = "checksums";

/// The record of one table's entry in the fast tier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    pub table: String,
    pub source_size: u64,
    /// Modification time of the source, nanoseconds since the epoch.
    pub source_mtime_ns: i128,
    /// Where the data blocks begin.
    pub prefix_len: u64,
    /// Bytes kept in `NAME.prefix` (0 for checksums only).
    pub fast_len: u64,
    /// xxh3-128 of those bytes, hex.
    pub prefix_digest: String,
    pub block_size: u32,
    pub hash: String,
    /// sha256 of the whole source, hex, as computed when the entry was built.
    pub sha256: String,
}

#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error(
        "{path}: not a zugzwang tier manifest ({detail}); rebuild it with `zugzwang tier build`"
    )]
    Invalid { path: PathBuf, detail: String },
}

pub fn manifest_path(dir: &Path, table: &str) -> PathBuf {
    dir.join(format!("{table}.manifest"))
}

pub fn prefix_path(dir: &Path, table: &str) -> PathBuf {
    dir.join(format!("{table}.prefix"))
}

pub fn sums_path(dir: &Path, table: &str) -> PathBuf {
    dir.join(format!("{table}.sums"))
}

/// Modification time in nanoseconds since the epoch (negative before it).
pub fn mtime_ns(meta: &Metadata) -> i128 {
    match meta.modified() {
        Ok(time) => match time.duration_since(UNIX_EPOCH) {
            Ok(d) => d.as_nanos() as i128,
            Err(before) => -(before.duration().as_nanos() as i128),
        },
        Err(_) => 0,
    }
}

/// One version of a table file: its size and modification time, from the
/// disk ([`Stamp::of`]) or from a remote source's listing (an object's
/// last-modified time).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    pub size: u64,
    pub mtime_ns: i128,
}

impl Stamp {
    pub fn of(meta: &Metadata) -> Stamp {
        Stamp {
            size: meta.len(),
            mtime_ns: mtime_ns(meta),
        }
    }
}

impl Manifest {
    /// Whether the source file is still the one this entry was built from.
    pub fn matches_source(&self, source: &Stamp) -> bool {
        source.size == self.source_size && source.mtime_ns == self.source_mtime_ns
    }

    /// Why the source no longer matches, for the log.
    pub fn staleness(&self, source: &Stamp) -> String {
        format!(
            "the table changed since the fast tier was built (size {} → {}, mtime {} → {} ns); rerun `zugzwang tier build`",
            self.source_size, source.size, self.source_mtime_ns, source.mtime_ns
        )
    }

    pub fn render(&self) -> String {
        format!(
            "{MAGIC}\ntable {}\nsource_size {}\nsource_mtime_ns {}\nprefix_len {}\nfast_len {}\nprefix_xxh3_128 {}\nblock_size {}\nhash {}\nsha256 {}\n",
            self.table,
            self.source_size,
            self.source_mtime_ns,
            self.prefix_len,
            self.fast_len,
            self.prefix_digest,
            self.block_size,
            self.hash,
            self.sha256
        )
    }

    pub fn parse(text: &str, path: &Path) -> Result<Manifest, ManifestError> {
        let invalid = |detail: &str| ManifestError::Invalid {
            path: path.to_path_buf(),
            detail: detail.to_string(),
        };
        let mut lines = text.lines();
        if lines.next() != Some(MAGIC) {
            return Err(invalid("unknown first line"));
        }
        let fields: std::collections::HashMap<&str, &str> =
            lines.filter_map(|l| l.split_once(' ')).collect();
        let field = |key: &str| {
            fields
                .get(key)
                .copied()
                .ok_or_else(|| invalid(&format!("no {key}")))
        };
        let number = |key: &str| {
            field(key)?
                .parse::<u64>()
                .map_err(|_| invalid(&format!("{key} is not a number")))
        };
        let block_size = u32::try_from(number("block_size")?)
            .ok()
            .filter(|&b| b >= 64 && b.is_power_of_two())
            .ok_or_else(|| invalid("block_size must be a power of two of at least 64"))?;
        Ok(Manifest {
            table: field("table")?.to_string(),
            source_size: number("source_size")?,
            source_mtime_ns: field("source_mtime_ns")?
                .parse()
                .map_err(|_| invalid("source_mtime_ns is not a number"))?,
            prefix_len: number("prefix_len")?,
            fast_len: number("fast_len")?,
            prefix_digest: field("prefix_xxh3_128")?.to_string(),
            block_size,
            hash: field("hash")?.to_string(),
            sha256: field("sha256")?.to_string(),
        })
    }

    /// Reads the manifest of `table` in `dir`; `Ok(None)` when there is none.
    pub fn load(dir: &Path, table: &str) -> Result<Option<Manifest>, ManifestError> {
        let path = manifest_path(dir, table);
        match fs::read_to_string(&path) {
            Ok(text) => Manifest::parse(&text, &path).map(Some),
            // No such folder, or a file where it would be: none recorded here.
            Err(err)
                if matches!(
                    err.kind(),
                    io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                ) =>
            {
                Ok(None)
            }
            Err(source) => Err(ManifestError::Io { path, source }),
        }
    }
}

/// The temporary file `write_atomic` writes `name` through, for process `pid`.
fn temporary_name(name: &str, pid: u32) -> String {
    format!(".{name}.tmp.{pid}")
}

/// The writer's process id, if `name` is a temporary file of `write_atomic`.
fn temporary_writer(name: &str) -> Option<u32> {
    let (stem, pid) = name.strip_prefix('.')?.rsplit_once(".tmp.")?;
    (!stem.is_empty()).then_some(())?;
    pid.parse().ok()
}

/// Whether a process with this id is running (on this machine).
fn is_running(pid: u32) -> bool {
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    // EPERM: it exists, owned by someone else.
    !matches!(
        rustix::process::test_kill_process(pid),
        Err(rustix::io::Errno::SRCH)
    )
}

/// Removes temporary files that runs killed midway (power loss, SIGKILL)
/// left in `dir`: those whose writer is no longer running. A run still
/// going keeps its own. Returns the names removed.
pub fn remove_stale_temporaries(dir: &Path) -> io::Result<Vec<String>> {
    let mut removed = Vec::new();
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        let Some(pid) = temporary_writer(&name) else {
            continue;
        };
        if is_running(pid) {
            continue;
        }
        match fs::remove_file(entry.path()) {
            Ok(()) => removed.push(name),
            Err(err) if err.kind() == io::ErrorKind::NotFound => {}
            Err(err) => return Err(err),
        }
    }
    removed.sort();
    Ok(removed)
}

/// Writes a file so that readers see the old content or the complete new
/// one, never a torn write: temporary file, fsync, rename, fsync of the
/// directory. The temporary file is removed on failure (a full disk must not
/// leave debris that fills it further).
pub fn write_atomic(path: &Path, chunks: &[&[u8]]) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let tmp = dir.join(temporary_name(&name, std::process::id()));
    let result = (|| {
        let mut file = File::create(&tmp)?;
        for chunk in chunks {
            file.write_all(chunk)?;
        }
        file.sync_all()?;
        fs::rename(&tmp, path)?;
        File::open(dir)?.sync_all()
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let m = Manifest {
            table: "KQvK.rtbw".into(),
            source_size: 123,
            source_mtime_ns: 1_700_000_000_123_456_789,
            prefix_len: 100,
            fast_len: 123,
            prefix_digest: "ab".into(),
            block_size: 4096,
            hash: "xxh3-64".into(),
            sha256: "cd".into(),
        };
        assert_eq!(Manifest::parse(&m.render(), Path::new("x")).unwrap(), m);
        assert!(Manifest::parse("garbage", Path::new("x")).is_err());
    }

    #[test]
    fn removes_temporaries_of_dead_runs_only() {
        let dir = tempfile::tempdir().unwrap();
        // Above any pid_max: no such process can be running.
        let dead = temporary_name("KQvK.rtbw.sums", 99_999_999);
        let ours = temporary_name("KQvK.rtbw.prefix", std::process::id());
        for name in [
            dead.as_str(),
            ours.as_str(),
            "KQvK.rtbw.manifest",
            ".tmp.12",
        ] {
            fs::write(dir.path().join(name), b"x").unwrap();
        }
        let removed = remove_stale_temporaries(dir.path()).unwrap();
        assert_eq!(removed, [dead]);
        let mut left: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(left, [ours.as_str(), ".tmp.12", "KQvK.rtbw.manifest"]);
        write_atomic(&dir.path().join("t"), &[b"y"]).unwrap();
    }
}
