//! The five outcomes a player tells apart, whatever the tables' certainty:
//! the verdict's colour and the move list's groups are the same five, so a
//! move and the position it leads to are always coloured alike.

use crate::api::Category;

/// What a category means for whoever it describes, in the order a player
/// looks for moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Win,
    /// A win or loss that the 50-move rule turns into a draw.
    CursedBlessed,
    Draw,
    Loss,
    Unknown,
}

impl Outcome {
    pub fn of(category: Category) -> Outcome {
        match category {
            Category::Win | Category::SyzygyWin | Category::MaybeWin => Outcome::Win,
            Category::CursedWin | Category::BlessedLoss => Outcome::CursedBlessed,
            Category::Draw => Outcome::Draw,
            Category::Loss | Category::SyzygyLoss | Category::MaybeLoss => Outcome::Loss,
            Category::Unknown => Outcome::Unknown,
        }
    }

    /// The CSS class that colours it (`style/main.css`).
    pub fn class(self) -> &'static str {
        match self {
            Outcome::Win => "win",
            Outcome::CursedBlessed => "cursed",
            Outcome::Draw => "draw",
            Outcome::Loss => "loss",
            Outcome::Unknown => "unknown",
        }
    }

    /// The heading of the move list's group of moves with this outcome.
    pub fn title(self) -> &'static str {
        match self {
            Outcome::Win => "Winning",
            Outcome::CursedBlessed => "Cursed win / blessed loss (drawn by the 50-move rule)",
            Outcome::Draw => "Drawing",
            Outcome::Loss => "Losing",
            Outcome::Unknown => "Unknown",
        }
    }

    /// A shape next to the colour, so the outcomes differ without colour vision.
    pub fn icon(self) -> &'static str {
        match self {
            Outcome::Win => "▲",
            Outcome::CursedBlessed => "◆",
            Outcome::Draw => "●",
            Outcome::Loss => "▼",
            Outcome::Unknown => "?",
        }
    }
}
