//! The page's components, one per file, and the view pieces they share.

pub mod arrow;
pub mod board;
pub mod board_keys;
pub mod clock;
pub mod drag;
pub mod editor;
pub mod explorer;
pub mod fen_box;
pub mod help;
pub mod history;
pub mod installed;
pub mod mainline;
pub mod move_list;
pub mod movetext;
pub mod outcome;
pub mod pieces;
pub mod play_area;
pub mod promotion;
pub mod results;
pub mod square;
pub mod stats;
pub mod status;
pub mod step_buttons;
pub mod variant_switch;
