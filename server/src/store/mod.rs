//! How table files are read: the filesystem layers handed to shakmaty-syzygy.
//!
//! `pread` is the default for table directories on disk; `embedded` serves the
//! 3- and 4-piece tables compiled into the binary so a fresh clone answers
//! without configuration; `tiered` puts each table's prefix (`format` finds
//! it) on fast storage, described by a `manifest`, and checks every read
//! against block checksums (`integrity`), keeping verified blocks in memory
//! (`verified_cache`) and counting reads in `metrics`.

pub mod embedded;
pub mod format;
pub mod integrity;
pub mod manifest;
pub mod metrics;
pub mod pread;
pub mod published;
pub mod tiered;
pub mod verified_cache;
