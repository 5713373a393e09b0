//! The fast tier, read and written in one place.
//!
//! For each table `NAME`, a tier directory holds `NAME.prefix` (header, sparse
//! index and block lengths), `NAME.sums` (a checksum per block of the whole
//! table) and `NAME.manifest` (what they were built from), written by
//! `build` (`zugzwang tier build`, `zugzwang verify --init`) and read by
//! `read` ([`TieredFilesystem`]), which checks every block
//! it hands out against `integrity`'s sums. `manifest` is the record and
//! its files, shared by the reader and the builder.

pub mod build;
pub mod integrity;
pub mod manifest;
pub mod read;

pub use manifest::INTEGRITY_SUBDIR;
pub use read::{TierOptions, TieredFilesystem};
