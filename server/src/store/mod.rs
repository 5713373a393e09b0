//! How table files are read: the filesystem layers handed to shakmaty-syzygy.
//!
//! `pread` is the default for table directories on disk; `embedded` serves the
//! 3- and 4-piece tables compiled into the binary so a fresh clone answers
//! without configuration; `tiered` puts each table's prefix (`format` finds
//! it) on fast storage, described by a `manifest`, and checks every read
//! against block checksums (`integrity`), keeping verified blocks in memory
//! (`verified_cache`) and counting reads in `metrics`. Descriptors of table
//! files are kept within a budget by `handles`; tables whose header failed
//! its checksum are refused for a while (`quarantine`); `coverage` says at
//! start which tables are served without checksums.

pub mod coverage;
pub mod embedded;
pub mod format;
pub mod handles;
pub mod integrity;
pub mod manifest;
pub mod metrics;
pub mod pread;
pub mod published;
pub mod quarantine;
pub mod tiered;
pub mod verified_cache;
