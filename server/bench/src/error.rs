//! What can go wrong in `zugzwang-bench replay` and `plot`, worded so the
//! operator knows what to fix.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error("cannot read the request log {path}: {source}")]
    ReadLog {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the request log {path} has no FENs (one per line expected)")]
    EmptyLog { path: PathBuf },
    #[error(
        "bad endpoint {url:?}: {reason} (expected e.g. http://127.0.0.1:3000/standard; only plain http is supported)"
    )]
    BadEndpoint { url: String, reason: String },
    #[error("--clients must be at least 1")]
    NoClients,
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot read the result file {path}: {source}")]
    ReadResult {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{path}, line {line}: {reason} (is this a file written by `zugzwang-bench replay --out`?)"
    )]
    BadResultLine {
        path: PathBuf,
        line: usize,
        reason: String,
    },
    #[error("{path} has no measured requests after the warm-up: nothing to plot")]
    NothingToPlot { path: PathBuf },
    #[error("cannot draw {path}: {reason}")]
    Draw { path: PathBuf, reason: String },
    #[error("cannot draw {path}: unknown image type (use a .svg or .png file name)")]
    UnknownImageType { path: PathBuf },
}
