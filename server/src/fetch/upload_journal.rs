//! What a multipart upload of `tables fetch --to s3://` has sent so far,
//! kept on local disk so that a cut upload (the process killed, the
//! network gone) continues with its next part instead of starting over.
//! S3 keeps the parts of an upload that is neither completed nor aborted;
//! `object_store` cannot list them, so the upload's id and the id (ETag)
//! of every part sent are written here after each part, atomically.
//!
//! One file per object: `STATE_DIR/uploads/BUCKET/KEY.json`. It names the
//! endpoint, the part size and the source file's size and modification
//! time: a journal for another endpoint, part size or a source changed
//! since is not continued (its upload is aborted, and a new one begun). It
//! is removed when its upload is completed or aborted.

use std::{
    fs, io,
    path::{Path, PathBuf},
};

use serde::{Deserialize, Serialize};

use crate::store::tier::manifest::write_atomic;

/// The subdirectory of the state directory journals are kept in.
pub const UPLOADS_SUBDIR: &str = "uploads";

/// One multipart upload in progress.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Journal {
    /// The S3 endpoint (empty: AWS's own) and the object's URL.
    pub endpoint: String,
    pub object: String,
    /// The store's id of the upload.
    pub upload_id: String,
    pub part_size: u64,
    /// The source file the parts are read from, as it was when the upload
    /// began.
    pub source_size: u64,
    pub source_mtime_ns: i128,
    /// The store's id (ETag) of each part sent, in order: part `i` holds
    /// bytes `i * part_size ..`.
    pub parts: Vec<String>,
}

impl Journal {
    /// Whether this journal is of the same upload: same place, same part
    /// size, and the source unchanged.
    pub fn continues(&self, other: &Journal) -> bool {
        self.endpoint == other.endpoint
            && self.object == other.object
            && self.part_size == other.part_size
            && self.source_size == other.source_size
            && self.source_mtime_ns == other.source_mtime_ns
    }

    /// Bytes of the source the parts sent hold.
    pub fn bytes_sent(&self) -> u64 {
        (self.parts.len() as u64 * self.part_size).min(self.source_size)
    }
}

/// Where the journal of the object `key` of `bucket` is kept.
pub fn path(state_dir: &Path, bucket: &str, key: &str) -> PathBuf {
    state_dir
        .join(UPLOADS_SUBDIR)
        .join(bucket)
        .join(format!("{key}.json"))
}

/// The journal at `path`, if there is one that can be read (one that
/// cannot is as good as none: its upload begins again).
pub fn load(path: &Path) -> Option<Journal> {
    let text = fs::read_to_string(path).ok()?;
    match serde_json::from_str(&text) {
        Ok(journal) => Some(journal),
        Err(err) => {
            tracing::warn!("{}: not a journal ({err}); ignored", path.display());
            None
        }
    }
}

/// Writes `journal` to `path` atomically (its directories created).
pub fn save(path: &Path, journal: &Journal) -> io::Result<()> {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir)?;
    }
    let text = serde_json::to_string_pretty(journal).map_err(io::Error::other)?;
    write_atomic(path, &[text.as_bytes()])
}

/// Removes the journal at `path`, if any.
pub fn remove(path: &Path) -> io::Result<()> {
    match fs::remove_file(path) {
        Err(err) if err.kind() != io::ErrorKind::NotFound => Err(err),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn journal() -> Journal {
        Journal {
            endpoint: "http://127.0.0.1:3900".into(),
            object: "s3://tables/standard/KRPvKR.rtbw".into(),
            upload_id: "abc".into(),
            part_size: 8 << 20,
            source_size: 20 << 20,
            source_mtime_ns: 1_700_000_000_000_000_000,
            parts: vec!["e1".into(), "e2".into()],
        }
    }

    #[test]
    fn keeps_an_upload_across_runs_and_continues_only_the_same_one() {
        let dir = tempfile::tempdir().unwrap();
        let at = path(dir.path(), "tables", "standard/KRPvKR.rtbw");
        assert!(load(&at).is_none());
        save(&at, &journal()).unwrap();
        let loaded = load(&at).unwrap();
        assert_eq!(loaded, journal());
        assert_eq!(loaded.bytes_sent(), 16 << 20);
        let mut changed = journal();
        changed.source_mtime_ns += 1;
        assert!(!loaded.continues(&changed));
        changed = journal();
        changed.parts.clear();
        assert!(loaded.continues(&changed), "parts sent do not matter");
        remove(&at).unwrap();
        remove(&at).unwrap();
        assert!(load(&at).is_none());
        fs::write(&at, "{").unwrap();
        assert!(load(&at).is_none(), "a torn file is no journal");
    }
}
