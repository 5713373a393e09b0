//! The fast tier, read and written in one place.
//!
//! For each table `NAME`, a tier directory holds `NAME.prefix` (header, sparse
//! index and block lengths), `NAME.sums` (a checksum per block of the whole
//! table) and `NAME.manifest` (what they were built from), written by
//! `build` (`zugzwang tier build`, `zugzwang verify --init`) and read by
//! `read` ([`TieredFilesystem`]), which checks every block it hands out
//! against `integrity`'s sums. `manifest` is the record and its files.

pub mod build;
pub mod integrity;
pub mod manifest;
pub mod read;

pub use build::{BuildOptions, READAHEAD_SLACK, Summary, build, fast_len};
pub use read::{INTEGRITY_SUBDIR, TierOptions, TieredFilesystem};
