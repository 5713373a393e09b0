//! The replay benchmark (tail latency from a real request log with parallel
//! clients) and the ECDF plots of its results; `cli::bench` is the command.

pub mod error;
pub mod plot;
pub mod replay;
pub mod result;
pub mod summary;

pub use error::BenchError;
