//! Tables whose header failed its checksum, refused for a while.
//!
//! shakmaty-syzygy keeps a table only once its header has been read, so a
//! table with a damaged header would be opened, read and checked again by
//! every probe that needs it: a steady load of reads and error logs from one
//! bad file. Its failure is remembered instead and repeated without touching
//! the disk until the retry interval has passed; then one probe tries again,
//! so a table replaced with a good copy is picked up without a restart.

use std::{
    collections::HashMap,
    io,
    path::{Path, PathBuf},
    sync::Mutex,
    time::{Duration, Instant},
};

use super::table_error::TableIoError;

/// How long a table whose header failed its checksum is refused.
pub const DEFAULT_RETRY_AFTER: Duration = Duration::from_secs(60);

#[derive(Debug)]
pub struct Quarantine {
    retry_after: Duration,
    tables: Mutex<HashMap<PathBuf, (Instant, String)>>,
}

impl Default for Quarantine {
    fn default() -> Self {
        Quarantine::new(DEFAULT_RETRY_AFTER)
    }
}

impl Quarantine {
    pub fn new(retry_after: Duration) -> Quarantine {
        Quarantine {
            retry_after,
            tables: Mutex::new(HashMap::new()),
        }
    }

    /// Remembers why the table at `path` cannot be opened.
    pub fn remember(&self, path: &Path, reason: String) {
        let mut tables = self.tables.lock().unwrap_or_else(|p| p.into_inner());
        tables.insert(path.to_path_buf(), (Instant::now(), reason));
    }

    /// The remembered failure of `path`, while it is still to be refused.
    pub fn refusal(&self, path: &Path) -> Option<io::Error> {
        let mut tables = self.tables.lock().unwrap_or_else(|p| p.into_inner());
        let (since, reason) = tables.get(path)?;
        let elapsed = since.elapsed();
        if elapsed >= self.retry_after {
            tables.remove(path);
            return None;
        }
        let left = (self.retry_after - elapsed).as_secs().max(1);
        Some(TableIoError::quiet(
            path,
            io::ErrorKind::InvalidData,
            format!("{reason} (remembered; the table is tried again in {left} s)"),
        ))
    }

    /// Tables refused now.
    pub fn len(&self) -> usize {
        let tables = self.tables.lock().unwrap_or_else(|p| p.into_inner());
        tables
            .values()
            .filter(|(since, _)| since.elapsed() < self.retry_after)
            .count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_until_the_retry_interval_has_passed() {
        let quarantine = Quarantine::new(Duration::from_millis(50));
        let path = Path::new("/srv/tables/KQvK.rtbw");
        assert!(quarantine.refusal(path).is_none());
        quarantine.remember(path, "header checksum mismatch".into());
        let err = quarantine.refusal(path).expect("refused");
        assert!(
            err.to_string()
                .starts_with("KQvK.rtbw: header checksum mismatch")
        );
        assert_eq!(quarantine.len(), 1);
        std::thread::sleep(Duration::from_millis(60));
        assert!(quarantine.refusal(path).is_none());
        assert!(quarantine.is_empty());
    }
}
