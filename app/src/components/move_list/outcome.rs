//! What a category means to a player, in words and colours.
//!
//! Colours come in five (`Outcome`): win, cursed/blessed, draw, loss,
//! unknown, so a move and the position it leads to are always coloured
//! alike. Words are finer (`Label`): a win the tables only "maybe" keep
//! within the 50-move rule, or a loss the rule saves, must not read like a
//! plain win or loss.

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

/// The outcomes a player tells apart in words: `SyzygyWin` and `MaybeWin`
/// (and their losses) read the same, as both mean "DTZ rounding leaves the
/// 50-move rule open".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Label {
    Win,
    MaybeWin,
    CursedWin,
    Draw,
    BlessedLoss,
    MaybeLoss,
    Loss,
    Unknown,
}

impl Label {
    pub fn of(category: Category) -> Label {
        match category {
            Category::Win => Label::Win,
            Category::SyzygyWin | Category::MaybeWin => Label::MaybeWin,
            Category::CursedWin => Label::CursedWin,
            Category::Draw => Label::Draw,
            Category::BlessedLoss => Label::BlessedLoss,
            Category::SyzygyLoss | Category::MaybeLoss => Label::MaybeLoss,
            Category::Loss => Label::Loss,
            Category::Unknown => Label::Unknown,
        }
    }

    /// The result in a few words, as a move's label: "win (maybe: DTZ rounding)".
    pub fn words(self) -> &'static str {
        match self {
            Label::Win => "win",
            Label::MaybeWin => "win (maybe: DTZ rounding)",
            Label::CursedWin => "win prevented by the 50-move rule",
            Label::Draw => "draw",
            Label::BlessedLoss => "loss saved by the 50-move rule",
            Label::MaybeLoss => "loss (maybe: DTZ rounding)",
            Label::Loss => "loss",
            Label::Unknown => "unknown",
        }
    }

    /// The heading of the move list's group of moves with this result.
    pub fn heading(self) -> &'static str {
        match self {
            Label::Win => "Winning",
            Label::MaybeWin => "Winning (maybe: DTZ rounding)",
            Label::CursedWin => "Win prevented by the 50-move rule (cursed win)",
            Label::Draw => "Drawing",
            Label::BlessedLoss => "Loss saved by the 50-move rule (blessed loss)",
            Label::MaybeLoss => "Losing (maybe: DTZ rounding)",
            Label::Loss => "Losing",
            Label::Unknown => "Unknown",
        }
    }

    /// One sentence on what the result means, for tooltips.
    pub fn meaning(self) -> &'static str {
        match self {
            Label::Win => "Wins with best play, within the 50-move rule.",
            Label::MaybeWin => {
                "Wins with best play, but the tables store this distance rounded, so it is not certain the win comes before the 50-move rule allows a draw claim."
            }
            Label::CursedWin => {
                "Would win, but not before the 50-move rule lets the opponent claim a draw (a cursed win)."
            }
            Label::Draw => "A draw with best play.",
            Label::BlessedLoss => {
                "Would lose, but the opponent cannot win before the 50-move rule allows a draw claim (a blessed loss)."
            }
            Label::MaybeLoss => {
                "Loses with best play, but the tables store this distance rounded, so the 50-move rule might still save it."
            }
            Label::Loss => "Loses with best play, within the 50-move rule.",
            Label::Unknown => "The installed tables do not answer this position.",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uncertain_and_fifty_move_results_have_their_own_words() {
        assert_eq!(
            Label::of(Category::SyzygyWin).words(),
            "win (maybe: DTZ rounding)"
        );
        assert_eq!(Label::of(Category::MaybeWin), Label::MaybeWin);
        assert_ne!(
            Label::of(Category::CursedWin).heading(),
            Label::of(Category::BlessedLoss).heading()
        );
        assert_eq!(
            Label::of(Category::BlessedLoss).words(),
            "loss saved by the 50-move rule"
        );
    }
}
