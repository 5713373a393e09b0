//! What can go wrong while answering, in words an operator or client can act on.

use app::variant::Variant;
use shakmaty_syzygy::{ProbeError, SyzygyError};

use crate::{
    dtm::ProphetError,
    store::{
        format::{file_name, variant_table_name},
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
    /// A DTM table that could not be read or is damaged, named by its file
    /// (never its directory: this goes to clients).
    pub fn from_prophet(err: ProphetError) -> EngineError {
        let (path, reason) = match &err {
            ProphetError::Read { path, source } | ProphetError::Directory { path, source } => {
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
