//! DTM tables that failed while answering ("degrade, don't fail"): depth
//! to mate is an extra beside WDL and DTZ, so a damaged or
//! unreadable Prophet table leaves `dtm` null for the positions it covers
//! instead of failing the whole answer. Each failure is logged with the
//! file's path (at most once a minute per table), counted by file name for
//! `/metrics`, and named to the client (`app::api::DtmUnavailable`, the
//! `X-Dtm-Unavailable` header) without any directory.

use std::{
    collections::BTreeMap,
    sync::Mutex,
    time::{Duration, Instant},
};

use app::api::DtmProblem;

use crate::{
    dtm::ProphetError,
    exposition::{Exposition, Kind},
    store::layout::file_name,
    sync::lock,
};

/// A DTM table that failed a probe: which file, and what was wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DtmFailure {
    /// The file name (`KQKR.egtb.bz`).
    pub table: String,
    pub problem: DtmProblem,
}

/// How often a table that keeps failing is logged again.
const LOG_EVERY: Duration = Duration::from_secs(60);

/// The DTM tables that failed since start, with how many positions each
/// left without `dtm`.
#[derive(Debug, Default)]
pub struct DtmUnavailability {
    seen: Mutex<BTreeMap<(String, DtmProblem), Seen>>,
}

#[derive(Debug)]
struct Seen {
    positions: u64,
    logged: Instant,
}

impl DtmUnavailability {
    /// What `err` means for an answer: the failure to name when the answer
    /// may go on without `dtm` (logged and counted here); `None` when it
    /// may not: no file descriptor was left, a passing shortage the whole
    /// answer reports as 503 (retry), as for Syzygy tables.
    pub fn record(&self, err: &ProphetError) -> Option<DtmFailure> {
        if err.out_of_descriptors() {
            return None;
        }
        let problem = if err.is_unchecked() {
            DtmProblem::Unchecked
        } else if err.is_damage() {
            DtmProblem::Damaged
        } else {
            DtmProblem::Unreadable
        };
        let failure = DtmFailure {
            table: file_name(err.path()),
            problem,
        };
        let now = Instant::now();
        let mut seen = lock(&self.seen);
        let key = (failure.table.clone(), failure.problem);
        let log = match seen.get_mut(&key) {
            Some(seen) => {
                seen.positions += 1;
                let due = now.duration_since(seen.logged) >= LOG_EVERY;
                if due {
                    seen.logged = now;
                }
                due.then_some(seen.positions)
            }
            None => {
                seen.insert(
                    key,
                    Seen {
                        positions: 1,
                        logged: now,
                    },
                );
                Some(1)
            }
        };
        drop(seen);
        match log {
            // Refused by choice, and said at start: not an error.
            Some(positions) if problem == DtmProblem::Unchecked => tracing::warn!(
                path = %err.path().display(),
                "{err}; answers go on without dtm for the positions it covers ({positions} so far)"
            ),
            Some(positions) => tracing::error!(
                path = %err.path().display(),
                "{err}; answers go on without dtm for the positions it covers ({positions} so far)"
            ),
            None => {}
        }
        Some(failure)
    }

    /// Positions left without `dtm` so far, by table and problem.
    pub fn counts(&self) -> Vec<(String, DtmProblem, u64)> {
        let seen = lock(&self.seen);
        seen.iter()
            .map(|((table, problem), seen)| (table.clone(), *problem, seen.positions))
            .collect()
    }

    /// The counter for `/metrics`, one sample per table and problem.
    pub fn render(&self, out: &mut Exposition) {
        let name = "zugzwang_dtm_unavailable_total";
        out.family(
            name,
            "Positions answered with dtm: null because their DTM table failed (problem: damaged, its bytes failed a check or it was quarantined or skipped at start as damaged; unreadable, the read failed; unchecked, refused as never checked), by table file.",
            Kind::Counter,
        );
        for (table, problem, positions) in self.counts() {
            out.sample(
                name,
                &[("table", &table), ("problem", problem.as_str())],
                positions,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use std::{io, path::PathBuf};

    use super::*;

    #[test]
    fn names_the_file_counts_and_keeps_shortages_of_descriptors_as_errors() {
        let seen = DtmUnavailability::default();
        let path = PathBuf::from("/srv/secret/prophet/4men/0pawns/KQKR.egtb.bz");
        let damaged = ProphetError::Corrupt {
            path: path.clone(),
            what: "block 3 is not a zstd frame".to_string(),
        };
        let failure = seen.record(&damaged).expect("degrades");
        assert_eq!(failure.table, "KQKR.egtb.bz");
        assert_eq!(failure.problem, DtmProblem::Damaged);
        seen.record(&damaged);
        let checksum = ProphetError::Read {
            path: path.clone(),
            source: io::Error::new(io::ErrorKind::InvalidData, "checksum mismatch"),
        };
        assert_eq!(
            seen.record(&checksum).map(|f| f.problem),
            Some(DtmProblem::Damaged)
        );
        let eio = ProphetError::Read {
            path: path.clone(),
            source: io::Error::from_raw_os_error(5),
        };
        assert_eq!(
            seen.record(&eio).map(|f| f.problem),
            Some(DtmProblem::Unreadable)
        );
        let unchecked = ProphetError::Read {
            path: path.clone(),
            source: crate::store::table_error::TableIoError::never_checked(&path),
        };
        assert_eq!(
            seen.record(&unchecked).map(|f| f.problem),
            Some(DtmProblem::Unchecked)
        );
        let no_descriptor = ProphetError::Read {
            path,
            source: io::Error::from_raw_os_error(24),
        };
        assert_eq!(seen.record(&no_descriptor), None);

        let mut out = Exposition::default();
        seen.render(&mut out);
        let text = out.into_string();
        assert!(
            text.contains(
                "zugzwang_dtm_unavailable_total{table=\"KQKR.egtb.bz\",problem=\"damaged\"} 3"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "zugzwang_dtm_unavailable_total{table=\"KQKR.egtb.bz\",problem=\"unreadable\"} 1"
            ),
            "{text}"
        );
        assert!(!text.contains("/srv"), "{text}");
    }
}
