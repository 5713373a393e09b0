//! The page's components, one per file.

pub mod arrow;
pub mod board;
pub mod drag;
pub mod editor;
pub mod explorer;
pub mod fen_box;
pub mod mainline;
pub mod move_list;
pub mod outcome;
pub mod pieces;
pub mod promotion;
pub mod square;
pub mod stats;
pub mod status;
