//! The page's components, one per file.

pub mod explorer;
pub mod move_list;
