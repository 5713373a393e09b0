//! The page's components, grouped by what the player sees: the board, the
//! verdict and move list, the lines of moves, choosing a position, and the
//! notes beside them; the page itself (`explorer`) and the area that holds
//! the board or the editor (`play_area`) compose them. The parts the first
//! visit does not need load later (`part`, `split_points`), among them
//! the practice page (`practice`, routed by `practice_route`).

pub mod about;
pub mod board;
pub mod editor;
pub mod explorer;
pub mod line;
pub mod move_list;
pub mod part;
pub mod play_area;
pub mod practice;
pub mod practice_route;
pub mod split_points;
