//! Practice: playing a position out against the tablebase. What the page
//! and the tests share, without any of the page's markup: the game as its
//! URL holds it (`setup`), the game replayed from it and how it ends
//! (`replay`), the tablebase's reply (`defence`), the marks of the player's
//! moves (`judge`), the review that puts them together from the
//! answers the API already gives (`review`: the last few moves, on the
//! server too), and the older moves judged in the browser (`earlier`).
//!
//! The page is `components::practice`, a part of its own (`components::practice_route`).

pub mod defence;
pub mod earlier;
pub mod judge;
pub mod replay;
pub mod review;
pub mod setup;
