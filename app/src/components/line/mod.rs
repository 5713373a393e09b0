//! The lines of moves to step through: this tab's moves and the mainline.
//!
//! Both are written as a score sheet (`movetext`) with the same step
//! buttons, so the history and the DTZ-optimal line read and move alike.

pub mod history_panel;
pub mod mainline;
pub mod movetext;
pub mod played;
pub mod step_buttons;
