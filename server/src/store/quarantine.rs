//! Tables found damaged, refused until they are replaced or verify clean.
//!
//! A verdict kept only in one process's memory is lost by a restart, and a
//! damaged table served again gives wrong answers. So whatever finds a
//! table damaged (`verify`, `verify --init`, `tier build`, the scrub, a
//! block check on read) writes a record: beside the table
//! (`DIR/.zugzwang/NAME.quarantine`) where that directory can be written,
//! else in the state directory (`STATE/quarantine/`), because table
//! directories are often read-only (a container's mount, an NFS export).
//!
//! A record names the file's identity (device, inode, size, modification
//! time): a file replaced since (fetched again, copied over) is not the
//! file that was judged, and its own checks judge it (its block checksums,
//! or none: then it is unchecked and refused by default).

use std::{
    collections::HashMap,
    fs::{self, Metadata},
    io,
    os::unix::fs::MetadataExt,
    path::{Path, PathBuf},
    sync::{
        Arc, Mutex,
        atomic::{AtomicU64, Ordering},
    },
    time::{SystemTime, UNIX_EPOCH},
};

use super::{
    layout::file_name,
    remote::RemoteSources,
    table_error::TableIoError,
    tier::manifest::{INTEGRITY_SUBDIR, Stamp},
};
use crate::sync::lock;

const MAGIC: &str = "zugzwang-quarantine 1";

/// The folder of the state directory that holds records.
pub const STATE_SUBDIR: &str = "quarantine";

/// Which file a record judged: a replaced file is another file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity {
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    pub mtime_ns: i128,
}

impl Identity {
    pub fn of(meta: &Metadata) -> Identity {
        let stamp = Stamp::of(meta);
        Identity {
            dev: meta.dev(),
            ino: meta.ino(),
            size: stamp.size,
            mtime_ns: stamp.mtime_ns,
        }
    }

    /// An object of a remote source (`store::remote`): no device, its URL's
    /// hash as the inode, its listed size and last-modified time.
    pub fn of_remote(path: &Path, stamp: Stamp) -> Identity {
        Identity {
            dev: 0,
            ino: xxhash_rust::xxh3::xxh3_64(path.as_os_str().as_encoded_bytes()),
            size: stamp.size,
            mtime_ns: stamp.mtime_ns,
        }
    }
}

/// One table found damaged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// The file name, e.g. `KQBvKR.rtbz`.
    pub table: String,
    /// What found it: `verify`, `tier build`, `scrub`, `read`.
    pub check: String,
    /// What is wrong, naming no directory (it reaches clients).
    pub reason: String,
    /// When, in seconds since the epoch.
    pub at: u64,
    pub identity: Identity,
}

impl Record {
    fn render(&self, path: &Path) -> String {
        let id = &self.identity;
        format!(
            "{MAGIC}\ntable {}\ncheck {}\nat {}\ndev {}\nino {}\nsize {}\nmtime_ns {}\npath {}\nreason {}\n",
            self.table,
            self.check,
            self.at,
            id.dev,
            id.ino,
            id.size,
            id.mtime_ns,
            path.display(),
            self.reason.replace('\n', " "),
        )
    }

    fn parse(text: &str) -> Option<Record> {
        let mut lines = text.lines();
        if lines.next() != Some(MAGIC) {
            return None;
        }
        let fields: HashMap<&str, &str> = lines.filter_map(|l| l.split_once(' ')).collect();
        let number = |key: &str| fields.get(key)?.parse::<u64>().ok();
        Some(Record {
            table: fields.get("table")?.to_string(),
            check: fields.get("check")?.to_string(),
            reason: fields.get("reason")?.to_string(),
            at: number("at")?,
            identity: Identity {
                dev: number("dev")?,
                ino: number("ino")?,
                size: number("size")?,
                mtime_ns: fields.get("mtime_ns")?.parse().ok()?,
            },
        })
    }

    /// What a client is told when the table is refused.
    pub fn refusal(&self) -> String {
        format!(
            "damaged ({}; found by {}): it is not served until it is replaced; fetch it again with `zugzwang tables fetch`, or run `zugzwang verify` on its directory once the file is whole again",
            self.reason, self.check
        )
    }
}

/// The quarantine records of one process, and where it writes new ones.
#[derive(Debug, Default)]
pub struct Quarantine {
    state_dir: Option<PathBuf>,
    /// Records this process wrote or found, by the table's path.
    known: Mutex<HashMap<PathBuf, Known>>,
    /// Bumped with every new record, so open tables notice one cheaply.
    generation: AtomicU64,
    /// The remote sources whose tables are judged too: their records go to
    /// the state directory only.
    remote: Option<Arc<RemoteSources>>,
}

/// A record this process holds, and the file it lies in (`None`: it could
/// not be written), so that a record removed by `zugzwang verify` in
/// another process lifts the refusal here too.
#[derive(Debug, Clone)]
struct Known {
    record: Record,
    stored: Option<PathBuf>,
}

impl Known {
    /// Whether another process removed the record's file. Only "not
    /// found" says so: a record that cannot be looked at for a moment (no
    /// descriptor, no permission) still holds.
    fn cleared_elsewhere(&self) -> bool {
        self.stored.as_ref().is_some_and(|file| {
            fs::metadata(file).is_err_and(|err| err.kind() == io::ErrorKind::NotFound)
        })
    }
}

/// Where a record of the table at `path` lies beside it; none for a table
/// of a remote source.
fn beside(path: &Path) -> Option<PathBuf> {
    if super::remote::is_remote(path) {
        return None;
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    Some(
        dir.join(INTEGRITY_SUBDIR)
            .join(format!("{}.quarantine", file_name(path))),
    )
}

impl Quarantine {
    /// Records go beside the tables, else into `state_dir`.
    pub fn new(state_dir: Option<PathBuf>) -> Quarantine {
        Quarantine {
            state_dir,
            ..Quarantine::default()
        }
    }

    /// Tables of these remote sources are judged too (by their listing).
    #[must_use]
    pub fn with_remote(mut self, remote: Option<Arc<RemoteSources>>) -> Quarantine {
        self.remote = remote;
        self
    }

    /// The identity of the table at `path` now: from the disk, or from its
    /// remote source's listing.
    pub fn identity_at(&self, path: &Path) -> io::Result<Identity> {
        if super::remote::is_remote(path) {
            let remote = self.remote.as_ref().ok_or_else(|| {
                io::Error::new(io::ErrorKind::NotFound, "no remote source is connected")
            })?;
            let listed = remote.stat(path)?;
            return Ok(Identity::of_remote(path, listed.stamp()));
        }
        Ok(Identity::of(&fs::metadata(path)?))
    }

    /// The record this process holds for `path`, unless another process
    /// has removed its file since (then it is forgotten here too).
    fn held(&self, path: &Path) -> Option<Record> {
        let mut known = lock(&self.known);
        let held = known.get(path)?;
        if held.cleared_elsewhere() {
            known.remove(path);
            self.generation.fetch_add(1, Ordering::Relaxed);
            tracing::info!(path = %path.display(), "{}: quarantine record removed by another process; served again", file_name(path));
            return None;
        }
        Some(held.record.clone())
    }

    /// Where a record of the table at `path` lies in the state directory.
    fn in_state_dir(&self, path: &Path, identity: &Identity) -> Option<PathBuf> {
        let dir = self.state_dir.as_ref()?.join(STATE_SUBDIR);
        let name = file_name(path);
        Some(dir.join(format!(
            "{name}.{}-{}.quarantine",
            identity.dev, identity.ino
        )))
    }

    /// Records that the table at `path` is damaged, durably where a
    /// directory can be written (the error names why none could), and for
    /// this process in any case.
    pub fn record(&self, path: &Path, check: &str, reason: &str) -> io::Result<PathBuf> {
        let identity = self.identity_at(path)?;
        let record = Record {
            table: file_name(path),
            check: check.to_string(),
            reason: reason.to_string(),
            at: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            identity,
        };
        let held = Known {
            record: record.clone(),
            stored: None,
        };
        lock(&self.known).insert(path.to_path_buf(), held);
        self.generation.fetch_add(1, Ordering::Relaxed);
        // A table directory without write permission is read-only, also
        // for root, who could write it anyway.
        let dir_writable = path
            .parent()
            .and_then(|dir| fs::metadata(dir).ok())
            .is_some_and(|meta| !meta.permissions().readonly());
        let mut tried: Vec<PathBuf> = beside(path).filter(|_| dir_writable).into_iter().collect();
        tried.extend(self.in_state_dir(path, &identity));
        let mut last = None;
        for target in tried {
            match write_record(&target, &record.render(path)) {
                Ok(()) => {
                    if let Some(held) = lock(&self.known).get_mut(path) {
                        held.stored = Some(target.clone());
                    }
                    tracing::error!(path = %path.display(), record = %target.display(), "{} quarantined: {}", record.table, record.reason);
                    return Ok(target);
                }
                Err(err) => last = Some((target, err)),
            }
        }
        let (target, err) =
            last.unwrap_or_else(|| (PathBuf::new(), io::ErrorKind::NotFound.into()));
        tracing::error!(path = %path.display(), "{} quarantined for this process only: cannot write {} ({err}); pass a writable --state-dir", record.table, target.display());
        Err(err)
    }

    /// Removes every record of the table at `path` (it verified clean or
    /// was replaced); says whether there was one.
    pub fn clear(&self, path: &Path) -> bool {
        let mut cleared = lock(&self.known).remove(path).is_some();
        let mut targets: Vec<PathBuf> = beside(path).into_iter().collect();
        if let Ok(identity) = self.identity_at(path) {
            targets.extend(self.in_state_dir(path, &identity));
        }
        for target in targets {
            cleared |= fs::remove_file(&target).is_ok();
        }
        if cleared {
            self.generation.fetch_add(1, Ordering::Relaxed);
            tracing::info!(path = %path.display(), "{}: quarantine record cleared", file_name(path));
        }
        cleared
    }

    /// The record that applies to the table at `path` as it is now
    /// (`identity`), from this process's memory or from disk.
    pub fn find(&self, path: &Path, identity: &Identity) -> Option<Record> {
        let identity = *identity;
        if let Some(record) = self.held(path) {
            return (record.identity == identity).then_some(record);
        }
        let mut places: Vec<PathBuf> = beside(path).into_iter().collect();
        places.extend(self.in_state_dir(path, &identity));
        let (place, record) = places
            .into_iter()
            .filter_map(|place| Some((place.clone(), fs::read_to_string(&place).ok()?)))
            .filter_map(|(place, text)| Some((place, Record::parse(&text)?)))
            .find(|(_, record)| record.identity == identity)?;
        let held = Known {
            record: record.clone(),
            stored: Some(place),
        };
        lock(&self.known).insert(path.to_path_buf(), held);
        Some(record)
    }

    /// The record that applies to the table at `path` as it is on disk
    /// now; `None` also when the file cannot be looked at.
    pub fn find_at(&self, path: &Path) -> Option<Record> {
        let identity = self.identity_at(path).ok()?;
        self.find(path, &identity)
    }

    /// The error a probe gets for a quarantined table; `None` when the
    /// table at `path` is not quarantined as it is now.
    pub fn refusal(&self, path: &Path, identity: &Identity) -> Option<io::Error> {
        let record = self.find(path, identity)?;
        Some(TableIoError::quiet(
            path,
            io::ErrorKind::InvalidData,
            record.refusal(),
        ))
    }

    /// The refusal for a table this process knows to be quarantined
    /// (no disk access: for reads of tables already open).
    pub fn known_refusal(&self, path: &Path) -> Option<io::Error> {
        let record = self.held(path)?.refusal();
        Some(TableIoError::quiet(
            path,
            io::ErrorKind::InvalidData,
            record,
        ))
    }

    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Relaxed)
    }

    /// The records this process knows, sorted by table.
    pub fn records(&self) -> Vec<Record> {
        let paths: Vec<PathBuf> = lock(&self.known).keys().cloned().collect();
        let mut records: Vec<Record> = paths.iter().filter_map(|p| self.held(p)).collect();
        records.sort_by(|a, b| a.table.cmp(&b.table));
        records.dedup_by(|a, b| a.table == b.table);
        records
    }
}

/// What an open table checks before each read: whether the table was
/// quarantined since (by a read of another handle, the scrub), so no
/// later read of it is served, cached chunks included.
#[derive(Debug)]
pub struct Watch {
    quarantine: Arc<Quarantine>,
    path: PathBuf,
    /// The quarantine's generation when the table was last found clear.
    seen: AtomicU64,
}

impl Watch {
    pub fn new(quarantine: Arc<Quarantine>, path: &Path) -> Watch {
        let seen = AtomicU64::new(quarantine.generation());
        Watch {
            quarantine,
            path: path.to_path_buf(),
            seen,
        }
    }

    /// The refusal once the table is quarantined; one atomic load while
    /// nothing was recorded since the last check.
    pub fn check(&self) -> io::Result<()> {
        let now = self.quarantine.generation();
        if now == self.seen.load(Ordering::Relaxed) {
            return Ok(());
        }
        if let Some(refused) = self.quarantine.known_refusal(&self.path) {
            return Err(refused);
        }
        self.seen.store(now, Ordering::Relaxed);
        Ok(())
    }
}

/// Writes a record whole or not at all.
fn write_record(target: &Path, text: &str) -> io::Result<()> {
    let dir = target.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(".{}.tmp.{}", file_name(target), std::process::id()));
    fs::write(&tmp, text)?;
    fs::rename(&tmp, target).inspect_err(|_| {
        let _ = fs::remove_file(&tmp);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(dir: &Path) -> PathBuf {
        let path = dir.join("KQvK.rtbw");
        fs::write(&path, b"some table bytes").expect("write");
        path
    }

    #[test]
    fn a_record_survives_the_process_and_ends_with_the_file() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = table(tmp.path());
        Quarantine::default()
            .record(&path, "verify", "sha256 differs")
            .expect("recorded beside");
        let later = Quarantine::default();
        let meta = fs::metadata(&path).expect("stat");
        let err = later
            .refusal(&path, &Identity::of(&meta))
            .expect("refused after a restart");
        assert!(
            err.to_string()
                .starts_with("KQvK.rtbw: damaged (sha256 differs; found by verify)"),
            "{err}"
        );
        assert!(!err.to_string().contains(&tmp.path().display().to_string()));
        // A replaced file is another file.
        fs::remove_file(&path).expect("rm");
        let path = table(tmp.path());
        let meta = fs::metadata(&path).expect("stat");
        assert!(
            Quarantine::default()
                .find(&path, &Identity::of(&meta))
                .is_none()
        );
    }

    #[test]
    fn a_record_removed_by_another_process_lifts_the_refusal_here() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = table(tmp.path());
        let serving = Arc::new(Quarantine::default());
        let watch = Watch::new(Arc::clone(&serving), &path);
        serving
            .record(&path, "a block check on read", "bad block")
            .expect("recorded");
        assert!(watch.check().is_err(), "an open table is refused at once");
        assert!(watch.check().is_err(), "and stays refused");
        // `zugzwang verify` in another process finds it whole.
        assert!(Quarantine::default().clear(&path));
        assert!(watch.check().is_ok());
        let meta = fs::metadata(&path).expect("stat");
        assert!(serving.find(&path, &Identity::of(&meta)).is_none());
        assert!(serving.records().is_empty());
    }

    #[test]
    fn a_read_only_table_directory_records_in_the_state_directory() {
        let tables = tempfile::tempdir().expect("tempdir");
        let state = tempfile::tempdir().expect("tempdir");
        let path = table(tables.path());
        // A file where the integrity folder would go: nothing can be written beside.
        fs::write(tables.path().join(INTEGRITY_SUBDIR), b"").expect("block");
        let quarantine = Quarantine::new(Some(state.path().to_path_buf()));
        let at = quarantine
            .record(&path, "scrub", "md5 differs")
            .expect("recorded");
        assert!(at.starts_with(state.path()), "{}", at.display());
        let meta = fs::metadata(&path).expect("stat");
        let fresh = Quarantine::new(Some(state.path().to_path_buf()));
        assert_eq!(
            fresh.find(&path, &Identity::of(&meta)).map(|r| r.check),
            Some("scrub".into())
        );
        assert!(fresh.clear(&path));
        assert!(
            Quarantine::new(Some(state.path().to_path_buf()))
                .find(&path, &Identity::of(&meta))
                .is_none()
        );
    }
}
