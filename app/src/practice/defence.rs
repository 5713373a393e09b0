//! The tablebase's move in a practice game: the strongest defence a person
//! can face, from the same answer the explorer shows.
//!
//! - A winning side mates fastest: the shortest DTM, or, where depth to mate
//!   is not known, lila's DTZ rule (a capture or pawn move that keeps the
//!   win first, then the shortest DTZ).
//! - A losing side resists longest: the longest DTM, else the longest DTZ;
//!   among equals it avoids captures that simplify the position, then
//!   keeps the longest DTZ.
//! - A drawing side keeps the draw; among drawing moves it plays one that
//!   leaves the player the most moves that lose, counted from the answers
//!   of the positions after each drawing move.
//! - What is still equal after that is chosen by the game's seed and the
//!   ply, so the same link replays the same game.
//!
//! The same [`Worth`] marks the player's moves (`judge`): a move worth as
//! much as the best is best.

use std::cmp::Reverse;

use crate::api::{Category, MoveInfo, PositionInfo, TablebaseAnswer};

/// What distances in one answer are counted in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    /// Depth to mate: every decisive move has one.
    Dtm,
    /// Distance to zeroing, where some decisive move has no DTM (more
    /// pieces than the DTM tables, or a variant).
    Dtz,
}

impl Metric {
    pub fn of(answer: &TablebaseAnswer) -> Metric {
        let known = |m: &MoveInfo| {
            m.pos.checkmate || m.pos.category == Category::Draw || m.pos.dtm.is_some()
        };
        if answer.moves.iter().all(known) {
            Metric::Dtm
        } else {
            Metric::Dtz
        }
    }
}

/// The result a move leaves its player with, best last: the category of
/// the position after it seen from the other side, `Unknown` lowest.
pub fn standing(after: Category) -> u8 {
    match after {
        Category::Unknown => 0,
        Category::Win => 1,
        Category::SyzygyWin => 2,
        Category::MaybeWin => 3,
        Category::CursedWin => 4,
        Category::Draw => 5,
        Category::BlessedLoss => 6,
        Category::MaybeLoss => 7,
        Category::SyzygyLoss => 8,
        Category::Loss => 9,
    }
}

/// The standing of a drawn result: above it the mover wins (with or
/// without the 50-move rule), below it the mover loses.
pub const DRAWN: u8 = 5;

/// How good a move is for its player; more is better. Two moves worth
/// the same are equally good for the result and its distance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Worth {
    standing: u8,
    /// The move mates.
    mates: bool,
    /// Under the DTZ rule, a winning capture or pawn move: it resets the
    /// 50-move count, which is what DTZ measures.
    resets: bool,
    /// Plies to the end of the decisive result: shorter for a winner,
    /// longer for a loser, so negated for the winner.
    distance: i32,
}

impl Worth {
    pub fn of(m: &MoveInfo, metric: Metric) -> Worth {
        let after = &m.pos;
        let standing = standing(after.category);
        let plies = distance(after, metric);
        if standing > DRAWN {
            Worth {
                standing,
                mates: after.checkmate || after.variant_loss,
                resets: metric == Metric::Dtz && m.zeroing,
                distance: -plies,
            }
        } else if standing < DRAWN && standing > 0 {
            Worth {
                standing,
                mates: false,
                resets: false,
                distance: plies,
            }
        } else {
            Worth {
                standing,
                mates: false,
                resets: false,
                distance: 0,
            }
        }
    }

    pub fn standing(self) -> u8 {
        self.standing
    }
}

/// Plies from the position after a move to the end its metric counts.
fn distance(after: &PositionInfo, metric: Metric) -> i32 {
    let plies = match metric {
        Metric::Dtm => after.dtm,
        Metric::Dtz => after.dtz,
    };
    plies.map_or(0, i32::abs)
}

/// The best a move of this answer is worth.
pub fn best_worth(answer: &TablebaseAnswer) -> Option<Worth> {
    let metric = Metric::of(answer);
    answer.moves.iter().map(|m| Worth::of(m, metric)).max()
}

/// The moves worth as much as the best: the best moves, all of them.
pub fn best_moves(answer: &TablebaseAnswer) -> Vec<&MoveInfo> {
    let metric = Metric::of(answer);
    let Some(best) = best_worth(answer) else {
        return Vec::new();
    };
    answer
        .moves
        .iter()
        .filter(|m| Worth::of(m, metric) == best)
        .collect()
}

/// The moves whose choice needs the answers of the positions after them:
/// the drawing moves, when keeping the draw is the best the side to move
/// can do and there is more than one way to.
pub fn drawing_choices(answer: &TablebaseAnswer) -> Vec<&MoveInfo> {
    let metric = Metric::of(answer);
    if best_worth(answer).map(Worth::standing) != Some(DRAWN) {
        return Vec::new();
    }
    let drawing: Vec<&MoveInfo> = answer
        .moves
        .iter()
        .filter(|m| Worth::of(m, metric).standing == DRAWN)
        .collect();
    if drawing.len() > 1 {
        drawing
    } else {
        Vec::new()
    }
}

/// The chances to go wrong a position leaves its side to move: how many
/// of its moves lose (a loss the 50-move rule saves still draws).
pub fn chances_to_go_wrong(answer: &TablebaseAnswer) -> usize {
    answer
        .moves
        .iter()
        .filter(|m| (1..standing(Category::CursedWin)).contains(&standing(m.pos.category)))
        .count()
}

/// The tablebase's move. `chances` gives, for a drawing move of
/// [`drawing_choices`], the chances to go wrong it leaves (`None` when its
/// answer is not known, counted as none).
pub fn reply(
    answer: &TablebaseAnswer,
    seed: u64,
    ply: usize,
    chances: impl Fn(&MoveInfo) -> Option<usize>,
) -> Option<&MoveInfo> {
    let best = best_worth(answer)?;
    let candidates = best_moves(answer).into_iter();
    let preference = |m: &MoveInfo| -> (usize, bool, Reverse<i32>, i32) {
        match best.standing {
            DRAWN => (chances(m).unwrap_or(0), false, Reverse(0), 0),
            // Losing: no simplifying capture, then the longest DTZ.
            s if s < DRAWN => (0, !m.conversion, Reverse(0), m.pos.dtz.map_or(0, i32::abs)),
            // Winning: the shortest DTZ among equally short mates.
            _ => (0, false, Reverse(m.pos.dtz.map_or(0, i32::abs)), 0),
        }
    };
    let top = candidates.clone().map(preference).max()?;
    let finalists: Vec<&MoveInfo> = candidates.filter(|m| preference(m) == top).collect();
    let pick = mix(seed, ply as u64) % finalists.len() as u64;
    finalists.get(pick as usize).copied()
}

/// A well-mixed number from the seed and the ply (splitmix64), so equal
/// moves are picked evenly and reproducibly.
fn mix(seed: u64, ply: u64) -> u64 {
    let mut z = seed ^ ply.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A move leading to `category` (seen by the opponent), with its DTZ and DTM.
    pub(crate) fn after(uci: &str, category: Category, dtz: i32, dtm: Option<i32>) -> MoveInfo {
        let mut pos = PositionInfo::unknown();
        pos.category = category;
        pos.dtz = Some(dtz);
        pos.dtm = dtm;
        MoveInfo {
            uci: uci.to_string(),
            san: uci.to_string(),
            zeroing: false,
            conversion: false,
            pos,
        }
    }

    pub(crate) fn answer(
        category: Category,
        dtm: Option<i32>,
        moves: Vec<MoveInfo>,
    ) -> TablebaseAnswer {
        let mut pos = PositionInfo::unknown();
        pos.category = category;
        pos.dtm = dtm;
        TablebaseAnswer {
            pos,
            moves,
            dtm_unavailable: Vec::new(),
        }
    }

    fn no_chances(_: &MoveInfo) -> Option<usize> {
        None
    }

    #[test]
    fn a_winner_mates_fastest_and_a_loser_resists_longest() {
        let win = answer(
            Category::Win,
            Some(9),
            vec![
                after("a", Category::Loss, -4, Some(-10)),
                after("b", Category::Loss, -2, Some(-8)),
                after("c", Category::Draw, 0, Some(0)),
            ],
        );
        assert_eq!(
            reply(&win, 1, 0, no_chances).map(|m| m.uci.as_str()),
            Some("b")
        );
        let mut capture = after("x", Category::Win, 1, Some(12));
        capture.conversion = true;
        capture.zeroing = true;
        let loss = answer(
            Category::Loss,
            Some(-13),
            vec![
                after("a", Category::Win, 3, Some(8)),
                capture,
                after("b", Category::Win, 5, Some(12)),
            ],
        );
        // Equally long, but the capture simplifies: the other one.
        for seed in 0..20 {
            assert_eq!(
                reply(&loss, seed, 3, no_chances).map(|m| m.uci.as_str()),
                Some("b")
            );
        }
    }

    #[test]
    fn without_dtm_the_winner_follows_dtz_with_resets_first() {
        let mut push = after("p", Category::Loss, -9, None);
        push.zeroing = true;
        let win = answer(
            Category::Win,
            None,
            vec![after("a", Category::Loss, -3, None), push],
        );
        assert_eq!(Metric::of(&win), Metric::Dtz);
        assert_eq!(
            reply(&win, 0, 0, no_chances).map(|m| m.uci.as_str()),
            Some("p")
        );
    }

    #[test]
    fn a_drawing_side_keeps_the_draw_and_sets_traps() {
        let drawn = answer(
            Category::Draw,
            Some(0),
            vec![
                after("a", Category::Draw, 0, Some(0)),
                after("b", Category::Draw, 0, Some(0)),
                after("c", Category::Win, 5, Some(7)),
            ],
        );
        let choices: Vec<&str> = drawing_choices(&drawn)
            .iter()
            .map(|m| m.uci.as_str())
            .collect();
        assert_eq!(choices, vec!["a", "b"]);
        let traps = |m: &MoveInfo| Some(if m.uci == "b" { 4 } else { 1 });
        for seed in 0..20 {
            assert_eq!(
                reply(&drawn, seed, 5, traps).map(|m| m.uci.as_str()),
                Some("b")
            );
        }
    }

    #[test]
    fn equal_moves_are_picked_by_seed_and_ply_alike_every_time() {
        let drawn = answer(
            Category::Draw,
            Some(0),
            (0..6)
                .map(|i| after(&format!("m{i}"), Category::Draw, 0, Some(0)))
                .collect(),
        );
        let first = reply(&drawn, 42, 7, no_chances).map(|m| m.uci.clone());
        assert_eq!(
            reply(&drawn, 42, 7, no_chances).map(|m| m.uci.clone()),
            first
        );
        let picked: std::collections::HashSet<String> = (0..40)
            .filter_map(|seed| reply(&drawn, seed, 7, no_chances).map(|m| m.uci.clone()))
            .collect();
        assert!(picked.len() > 3, "{picked:?}");
    }

    #[test]
    fn counts_the_moves_that_lose() {
        let pos = answer(
            Category::Draw,
            Some(0),
            vec![
                after("a", Category::Win, 3, Some(5)),
                after("b", Category::CursedWin, 120, None),
                after("c", Category::Draw, 0, Some(0)),
                after("d", Category::SyzygyWin, 3, None),
            ],
        );
        assert_eq!(chances_to_go_wrong(&pos), 2);
    }
}
