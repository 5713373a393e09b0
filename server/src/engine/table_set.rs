//! Which table set a server answers from, as a short digest, so that a
//! mixed fleet during a rolling table update is visible (`/metrics`, the
//! `X-Table-Set` header) and answers can carry an ETag that a table update
//! invalidates.
//!
//! The digest covers the names and sizes of the table files that were
//! loaded, sorted: cheap at start (one `stat` per file, no reads), and it
//! changes whenever a table is added, removed, rejected or replaced by one
//! of another size. A published Syzygy file has one size, so a file of the
//! right name and size with other contents is a damaged one, which the
//! block checksums and `--scrub` catch. The fast tier is left out on
//! purpose: it holds copies of the same tables' prefixes, checked against
//! them, and never changes an answer.

use sha2::{Digest, Sha256};

/// Hex digits of the digest kept: 64 bits, plenty to tell table sets apart
/// and short enough for a header and a metric label.
const DIGEST_HEX: usize = 16;

/// The loaded table files, summed up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableSet {
    digest: String,
    files: usize,
    bytes: u64,
}

impl TableSet {
    /// The set of these files, given as (file name, size) in any order.
    pub fn of(files: impl IntoIterator<Item = (String, u64)>) -> TableSet {
        let mut files: Vec<(String, u64)> = files.into_iter().collect();
        files.sort();
        let mut hasher = Sha256::new();
        for (name, size) in &files {
            hasher.update(format!("{name}\t{size}\n"));
        }
        let digest = hasher.finalize()[..DIGEST_HEX / 2]
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect();
        TableSet {
            digest,
            files: files.len(),
            bytes: files.iter().map(|(_, size)| size).sum(),
        }
    }

    /// 16 hex digits naming the set (e.g. in `X-Table-Set`).
    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// Table files in the set.
    pub fn files(&self) -> usize {
        self.files
    }

    /// Their total size in bytes.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(files: &[(&str, u64)]) -> TableSet {
        TableSet::of(files.iter().map(|(name, size)| (name.to_string(), *size)))
    }

    #[test]
    fn the_order_files_are_found_in_does_not_matter() {
        let a = set(&[("KQvK.rtbw", 10), ("KRvK.rtbw", 20)]);
        let b = set(&[("KRvK.rtbw", 20), ("KQvK.rtbw", 10)]);
        assert_eq!(a, b);
        assert_eq!(a.digest().len(), 16);
        assert_eq!((a.files(), a.bytes()), (2, 30));
    }

    #[test]
    fn any_added_or_resized_file_changes_the_digest() {
        let base = set(&[("KQvK.rtbw", 10)]);
        assert_ne!(base, set(&[("KQvK.rtbw", 11)]));
        assert_ne!(base, set(&[("KQvK.rtbw", 10), ("KQvK.rtbz", 5)]));
        assert_ne!(base.digest(), set(&[]).digest());
    }
}
