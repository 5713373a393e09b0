//! The explorer page's state, one hook per concern, as Leptos's examples
//! keep a page's logic beside it: each `use_*` creates signals owned by the
//! calling component and hands back small `Copy` handles; `explorer`
//! wires them together for the page.

pub mod answers;
pub mod click_keys;
pub mod explorer;
pub mod history;
pub mod last_moves;
pub mod mode;
pub mod orientation;
pub mod pick;
pub mod shared_requests;
pub mod shortcuts;
pub mod url_position;
