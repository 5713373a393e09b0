//! What upstream servers answered, kept on disk so it is asked once: a
//! tablebase answer never changes. One redb file in the state directory
//! (`--state-dir`: `upstream-answers.redb`), bounded by `--upstream-store-mb`:
//! past it the answers learnt first go first.
//!
//! Why redb: it is pure Rust (nothing to compile in C, unlike SQLite),
//! crash-safe by design (copy-on-write B-trees, a commit is whole or not
//! there, checksummed pages), one file with a stable format, kept up, and
//! has no dependency but libc. sled's format is still unstable; SQLite
//! would bring a C build for a key-value map. Its multi-writer mode lets
//! replicas that share a state directory share the store, and `tables
//! status` read it while `serve` runs.
//!
//! Where no state directory can be had (or the file cannot be opened), the
//! answers are kept in memory for the process's life instead, and the
//! log says so.

use std::{
    path::{Path, PathBuf},
    sync::atomic::{AtomicU64, Ordering},
};

use redb::{
    Builder, ConcurrencyMode, Database, ReadableDatabase, ReadableTable, ReadableTableMetadata,
    TableDefinition, backends::InMemoryBackend,
};

/// The store's file in the state directory.
pub const FILE_NAME: &str = "upstream-answers.redb";

/// Key: the route and the position (`/standard 8/8/... w - - 0`); value:
/// [`encode`]d answer.
const ANSWERS: TableDefinition<&str, &[u8]> = TableDefinition::new("answers");
/// The order answers were learnt in: sequence number → key.
const ORDER: TableDefinition<u64, &str> = TableDefinition::new("order");
/// `bytes` (keys and values kept) and `next` (the next sequence number).
const META: TableDefinition<&str, u64> = TableDefinition::new("meta");

/// An answer as it was learnt: from which server, the body's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Learnt {
    pub host: String,
    pub json: Vec<u8>,
}

/// How much the store holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct StoreSize {
    pub answers: u64,
    /// Bytes of keys and answers kept (what the bound counts).
    pub bytes: u64,
    /// Bytes of the file on disk (0 in memory).
    pub file_bytes: u64,
}

pub struct AnswerStore {
    db: Database,
    /// `None`: in memory only.
    path: Option<PathBuf>,
    cap: u64,
    /// Answers dropped to stay within the bound, since start.
    evicted: AtomicU64,
}

impl AnswerStore {
    /// The store in `state_dir`, created if needed; in memory where there
    /// is none or it cannot be opened (said in the log).
    pub fn open(state_dir: Option<&Path>, cap: u64) -> AnswerStore {
        let Some(dir) = state_dir else {
            tracing::warn!(
                "no state directory (--state-dir): answers learnt from upstream are kept in memory only, and asked again after a restart"
            );
            return AnswerStore::in_memory(cap);
        };
        let path = dir.join(FILE_NAME);
        match open_file(&path) {
            Ok(db) => {
                let store = AnswerStore {
                    db,
                    path: Some(path),
                    cap,
                    evicted: AtomicU64::new(0),
                };
                let size = store.size();
                tracing::info!(
                    "answers learnt from upstream: {} ({} answers, {} bytes of at most {cap})",
                    store.path.as_deref().unwrap_or(Path::new("")).display(),
                    size.answers,
                    size.bytes
                );
                store
            }
            Err(err) => {
                tracing::error!(
                    "cannot open {}: {err}; answers learnt from upstream are kept in memory only (pass a writable --state-dir)",
                    path.display()
                );
                AnswerStore::in_memory(cap)
            }
        }
    }

    /// A store that lasts as long as the process.
    pub fn in_memory(cap: u64) -> AnswerStore {
        let db = Builder::new()
            .create_with_backend(InMemoryBackend::new())
            .expect("an in-memory redb database opens");
        create_tables(&db).expect("an in-memory redb database takes tables");
        AnswerStore {
            db,
            path: None,
            cap,
            evicted: AtomicU64::new(0),
        }
    }

    /// Where the store is kept (`None`: in memory).
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    pub fn cap(&self) -> u64 {
        self.cap
    }

    /// Answers dropped to stay within the bound, since start.
    pub fn evicted(&self) -> u64 {
        self.evicted.load(Ordering::Relaxed)
    }

    /// The answer kept for `key`, if any.
    pub fn get(&self, key: &str) -> Result<Option<Learnt>, redb::Error> {
        let read = self.db.begin_read()?;
        let answers = read.open_table(ANSWERS)?;
        let Some(value) = answers.get(key)? else {
            return Ok(None);
        };
        Ok(decode(value.value()).map(|(_, learnt)| learnt))
    }

    /// Keeps `learnt` for `key` (once: an answer never changes), then drops
    /// the oldest answers while the store is over its bound. One commit,
    /// on disk when this returns.
    pub fn put(&self, key: &str, learnt: &Learnt) -> Result<(), redb::Error> {
        let write = self.db.begin_write()?;
        let mut evicted = 0;
        {
            let mut answers = write.open_table(ANSWERS)?;
            if answers.get(key)?.is_some() {
                return Ok(());
            }
            let mut order = write.open_table(ORDER)?;
            let mut meta = write.open_table(META)?;
            let seq = meta.get("next")?.map_or(0, |v| v.value());
            let value = encode(seq, learnt);
            let weight = (key.len() + value.len()) as u64;
            if weight > self.cap {
                return Ok(());
            }
            answers.insert(key, value.as_slice())?;
            order.insert(seq, key)?;
            let mut bytes = meta.get("bytes")?.map_or(0, |v| v.value()) + weight;
            while bytes > self.cap {
                let Some((_, oldest)) = order.pop_first()? else {
                    break;
                };
                let oldest = oldest.value().to_string();
                if let Some(gone) = answers.remove(oldest.as_str())? {
                    bytes = bytes.saturating_sub((oldest.len() + gone.value().len()) as u64);
                    evicted += 1;
                }
            }
            meta.insert("next", seq + 1)?;
            meta.insert("bytes", bytes)?;
        }
        write.commit()?;
        self.evicted.fetch_add(evicted, Ordering::Relaxed);
        Ok(())
    }

    /// How much the store holds.
    pub fn size(&self) -> StoreSize {
        let mut size = size_of_db(&self.db).unwrap_or_default();
        size.file_bytes = self
            .path
            .as_ref()
            .and_then(|p| std::fs::metadata(p).ok())
            .map_or(0, |m| m.len());
        size
    }
}

/// The size of the store in `state_dir` (`tables status`); `None` when
/// there is none. Read-only, beside a `serve` that has it open; a store
/// left by a process that was killed needs the repair its next open makes,
/// which this open then makes.
pub fn size_in(state_dir: &Path) -> Option<Result<StoreSize, String>> {
    let path = state_dir.join(FILE_NAME);
    let file_bytes = std::fs::metadata(&path).ok()?.len();
    let read_only = Builder::new()
        .set_concurrency_mode(ConcurrencyMode::MultiWriter)
        .open_read_only(&path)
        .map_err(redb::Error::from)
        .and_then(|db| {
            let read = db.begin_read()?;
            size_of_tables(&read)
        });
    let size = read_only
        .or_else(|_| open_file(&path).and_then(|db| size_of_db(&db)))
        .map(|size| StoreSize { file_bytes, ..size })
        .map_err(|err| err.to_string());
    Some(size)
}

fn open_file(path: &Path) -> Result<Database, redb::Error> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(redb::Error::Io)?;
    }
    let db = Builder::new()
        .set_concurrency_mode(ConcurrencyMode::MultiWriter)
        .create(path)?;
    create_tables(&db)?;
    Ok(db)
}

fn create_tables(db: &Database) -> Result<(), redb::Error> {
    let write = db.begin_write()?;
    write.open_table(ANSWERS)?;
    write.open_table(ORDER)?;
    write.open_table(META)?;
    write.commit()?;
    Ok(())
}

fn size_of_db(db: &Database) -> Result<StoreSize, redb::Error> {
    size_of_tables(&db.begin_read()?)
}

fn size_of_tables(read: &redb::ReadTransaction) -> Result<StoreSize, redb::Error> {
    let answers = read.open_table(ANSWERS)?;
    let meta = read.open_table(META)?;
    Ok(StoreSize {
        answers: answers.len()?,
        bytes: meta.get("bytes")?.map_or(0, |v| v.value()),
        file_bytes: 0,
    })
}

/// `seq` (8 bytes, little-endian), the host's length (2 bytes), the host,
/// then the answer's bytes.
fn encode(seq: u64, learnt: &Learnt) -> Vec<u8> {
    let host = learnt.host.as_bytes();
    let host_len = u16::try_from(host.len()).unwrap_or(u16::MAX);
    let host = &host[..usize::from(host_len)];
    let mut out = Vec::with_capacity(10 + host.len() + learnt.json.len());
    out.extend_from_slice(&seq.to_le_bytes());
    out.extend_from_slice(&host_len.to_le_bytes());
    out.extend_from_slice(host);
    out.extend_from_slice(&learnt.json);
    out
}

fn decode(bytes: &[u8]) -> Option<(u64, Learnt)> {
    let seq = u64::from_le_bytes(bytes.get(..8)?.try_into().ok()?);
    let host_len = usize::from(u16::from_le_bytes(bytes.get(8..10)?.try_into().ok()?));
    let host = std::str::from_utf8(bytes.get(10..10 + host_len)?).ok()?;
    let json = bytes.get(10 + host_len..)?.to_vec();
    Some((
        seq,
        Learnt {
            host: host.to_string(),
            json,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn learnt(n: usize) -> Learnt {
        Learnt {
            host: "tb.example".into(),
            json: vec![b'x'; n],
        }
    }

    #[test]
    fn answers_survive_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = AnswerStore::open(Some(dir.path()), 1 << 20);
            assert_eq!(store.get("/standard a").unwrap(), None);
            store.put("/standard a", &learnt(10)).unwrap();
            assert_eq!(store.get("/standard a").unwrap(), Some(learnt(10)));
        }
        let store = AnswerStore::open(Some(dir.path()), 1 << 20);
        assert_eq!(store.get("/standard a").unwrap(), Some(learnt(10)));
        let size = store.size();
        assert_eq!(size.answers, 1);
        assert!(size.file_bytes > 0);
        let read = size_in(dir.path()).unwrap().unwrap();
        assert_eq!(read.answers, 1);
        assert_eq!(read.bytes, size.bytes);
    }

    #[test]
    fn past_its_bound_the_first_learnt_go_first() {
        let store = AnswerStore::in_memory(1000);
        for i in 0..10 {
            store.put(&format!("k{i}"), &learnt(190)).unwrap();
        }
        let size = store.size();
        assert!(size.bytes <= 1000, "{size:?}");
        assert_eq!(size.answers, 4);
        assert_eq!(store.get("k0").unwrap(), None);
        assert!(store.get("k9").unwrap().is_some());
        assert_eq!(store.evicted(), 6);
        // An answer larger than the whole bound is not kept.
        store.put("huge", &learnt(5000)).unwrap();
        assert_eq!(store.get("huge").unwrap(), None);
    }

    #[test]
    fn an_answer_is_kept_once() {
        let store = AnswerStore::in_memory(1 << 20);
        store.put("k", &learnt(5)).unwrap();
        store.put("k", &learnt(6)).unwrap();
        assert_eq!(store.get("k").unwrap(), Some(learnt(5)));
        assert_eq!(store.size().answers, 1);
    }
}
