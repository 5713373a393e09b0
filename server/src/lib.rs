//! Zugzwang's server, in layers that only look down:
//!
//! - `cli`: the commands (`serve`, `probe`, `tier`, `verify`, `tables`),
//!   each with its arguments and printing in one file;
//! - `http`: routes and their answers, on top of
//! - `upstream`: answers from upstream tablebase servers where the local
//!   tables end (`serve --upstream`), asked politely and kept on disk;
//! - `engine`: the answer for a position, probed on a bounded pool, on top of
//! - `store`: how table files are read (pread, embedded, the fast tier and
//!   its checksums);
//! - `service`: process-level services `serve` starts (limits, listener,
//!   connections, shutdown, scrub, request log, process health).
//!
//! `server/docs/architecture.md` follows a request through them.

// The page's nested view types (rendered here on the server) are deep;
// computing their layout needs more room than the default limit of 128.
#![recursion_limit = "256"]

pub mod catalog;
pub mod circuit_breaker;
pub mod cli;
pub mod dtm;
pub mod engine;
pub mod exposition;
pub mod fetch;
pub mod http;
pub mod progress;
pub mod service;
pub mod store;
pub mod sync;
pub mod upstream;
