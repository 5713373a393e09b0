//! Zugzwang's benchmarks, kept out of the production binary: the replay
//! benchmark (tail latency from a real request log with parallel clients),
//! the ECDF plots of its results, and `serve` with the switches only a
//! measurement wants, and a proxy that delays a store's answers. `cli` is the `zugzwang-bench` command line.

pub mod cli;
pub mod delay;
pub mod error;
pub mod plot;
pub mod replay;
pub mod result;
pub mod summary;

pub use error::BenchError;
