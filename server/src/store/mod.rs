//! How table files are read: the filesystem layers handed to shakmaty-syzygy.
//!
//! `pread` is the default for table directories on disk; `embedded` serves the
//! 3- and 4-piece tables compiled into the binary so a fresh clone answers
//! without configuration.

pub mod embedded;
pub mod pread;
