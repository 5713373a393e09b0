//! What the page says beside the play: help, statistics, installed tables.

pub mod help;
pub mod installed;
pub mod stats;
