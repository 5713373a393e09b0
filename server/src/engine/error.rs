//! What can go wrong while answering, in words an operator or client can act on.

use app::variant::Variant;
use shakmaty_syzygy::{ProbeError, SyzygyError};

use crate::{
    dtm::ProphetError,
    store::{
        layout::{file_name, variant_table_name},
        remote::{self, SourceUnavailable},
        stuck_reads::{self, StuckRead},
        table_error,
    },
};

#[derive(Debug, Clone, thiserror::Error)]
pub enum EngineError {
    /// A table exists but could not be read: a server-side problem (500).
    #[error("cannot read table {table}: {reason}")]
    Table { table: String, reason: String },
    /// The process ran out of file descriptors opening a table (503: retry later).
    #[error(
        "cannot open table {table}: too many open files; the server's open-files limit is too low"
    )]
    TooManyOpenFiles { table: String },
    /// The position is not covered by the loaded tables (404 on mainline).
    #[error("{0}")]
    NotInTables(String),
    /// Too many requests are waiting already (503).
    #[error("the server is busy ({0} requests in progress); try again shortly")]
    Overloaded(usize),
    /// A table the probe needs has a read out on its disk for longer than
    /// `--stuck-read-secs` (a failing or hung disk), or the read it waited
    /// for did not come back within it: refused rather than queued behind
    /// it (503, retry after `retry_after_secs`).
    #[error(
        "table {table} is not answering: a read of it has been waiting for its disk for {waited_secs:.1} s (the disk may be failing or hung); probes that need it are refused until that read returns, try again later"
    )]
    Stuck {
        table: String,
        waited_secs: f64,
        retry_after_secs: u64,
    },
    /// A table in a remote source (an object store, an HTTP mirror) could
    /// not be read: the source did not answer, its breaker is open, or the
    /// object changed since the listing at start (503, retry after
    /// `retry_after_secs`). Never a wrong answer.
    #[error("table {table} is not available now: {reason}; try again later")]
    Unavailable {
        table: String,
        reason: String,
        retry_after_secs: u64,
    },
    /// The prober panicked on a position (a misnamed or damaged table it
    /// trusts, or an input it does not expect); caught at the probe, 500.
    #[error(
        "the tables failed on the {variant} position {fen} (material {material}): {message}; a table file of that material or one it leads to may be misnamed or damaged: check them with `zugzwang verify`"
    )]
    ProbePanicked {
        variant: Variant,
        fen: String,
        material: String,
        message: String,
    },
    /// A probe task died; should not happen, reported rather than crashing.
    #[error("internal error: {0}")]
    Internal(String),
}

impl EngineError {
    /// Turns a probe failure into an error naming the table file (whose
    /// suffix depends on the variant).
    pub fn from_syzygy(err: SyzygyError, variant: Variant) -> EngineError {
        match err {
            SyzygyError::ProbeFailed {
                metric,
                material,
                error,
            } => {
                if let ProbeError::Read { error } = &*error {
                    if let Some(stuck) = stuck_reads::stuck_read(error) {
                        return EngineError::stuck(stuck);
                    }
                    if let Some(unavailable) = remote::unavailable(error) {
                        return EngineError::unavailable(unavailable);
                    }
                }
                let table = variant_table_name(variant, &material, metric);
                if is_out_of_descriptors(&error) {
                    return EngineError::TooManyOpenFiles { table };
                }
                EngineError::Table {
                    table,
                    reason: probe_reason(&error),
                }
            }
            SyzygyError::MissingTable { metric, material } => EngineError::NotInTables(format!(
                "table {} is not loaded",
                variant_table_name(variant, &material, metric)
            )),
            SyzygyError::Castling => EngineError::NotInTables(
                "positions with castling rights are not in the tables".to_string(),
            ),
            SyzygyError::TooManyPieces => {
                EngineError::NotInTables("more pieces than the loaded tables cover".to_string())
            }
        }
    }
}

impl EngineError {
    /// The refusal of a probe that needs a table suspect of a stuck read:
    /// retry once the limit has passed again, by when the read has
    /// returned or the operator knows (at least a second).
    pub fn stuck(stuck: &StuckRead) -> EngineError {
        EngineError::Stuck {
            table: stuck.table.clone(),
            waited_secs: stuck.waited.as_secs_f64(),
            retry_after_secs: stuck.limit.as_secs_f64().ceil().max(1.0) as u64,
        }
    }

    /// The refusal of a read whose remote source failed.
    pub fn unavailable(unavailable: &SourceUnavailable) -> EngineError {
        EngineError::Unavailable {
            table: unavailable.table.clone(),
            reason: unavailable.reason.clone(),
            retry_after_secs: unavailable.retry_after.as_secs_f64().ceil().max(1.0) as u64,
        }
    }

    /// A DTM table that could not be read or is damaged, named by its file
    /// (never its directory: this goes to clients).
    pub fn from_prophet(err: ProphetError) -> EngineError {
        let (path, reason) = match &err {
            ProphetError::Read { path, source } | ProphetError::Directory { path, source } => {
                if let Some(stuck) = stuck_reads::stuck_read(source) {
                    return EngineError::stuck(stuck);
                }
                if let Some(unavailable) = remote::unavailable(source) {
                    return EngineError::unavailable(unavailable);
                }
                if table_error::is_out_of_descriptors(source) {
                    return EngineError::TooManyOpenFiles {
                        table: file_name(path),
                    };
                }
                (path, source.to_string())
            }
            ProphetError::Corrupt { path, what } => (
                path,
                format!(
                    "the DTM table is damaged: {what}; fetch it again (compare with MD5SUMS) or remove it"
                ),
            ),
        };
        EngineError::Table {
            table: file_name(path),
            reason,
        }
    }
}

fn probe_reason(err: &ProbeError) -> String {
    match err {
        ProbeError::Read { error } => error.to_string(),
        ProbeError::Magic { magic } => {
            format!("not a Syzygy table (starts with bytes {magic:02x?}); replace the file")
        }
        ProbeError::CorruptedTable { .. } => {
            "the table is truncated or corrupted; check it with the published checksums and replace it".to_string()
        }
    }
}

/// Whether a read failed because no file descriptor was left to open the table.
fn is_out_of_descriptors(err: &ProbeError) -> bool {
    matches!(err, ProbeError::Read { error } if table_error::is_out_of_descriptors(error))
}
