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
//! - Outside the installed tables a move whose result is unknown may still
//!   win or draw, so it ranks above every move known to lose (below a known
//!   draw). Among unknown moves the tablebase looks one move further, at
//!   the answers after them: it avoids a move the player has a reply known
//!   to win against, then plays one leaving the player the most replies
//!   known to lose; the page says that it is guessing.
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
    /// Depth to mate: every move of the best result has one.
    Dtm,
    /// Distance to zeroing, where some move of the best result has no DTM
    /// (more pieces than the DTM tables, or a variant).
    Dtz,
}

impl Metric {
    /// Depth to mate where every move that gives the best result has one,
    /// whatever the position's own table: at the edge of the DTM tables
    /// the winning moves may all capture into tables that have it.
    pub fn of(answer: &TablebaseAnswer) -> Metric {
        let known = |m: &MoveInfo| {
            m.pos.checkmate || m.pos.category == Category::Draw || m.pos.dtm.is_some()
        };
        let Some(best) = answer.moves.iter().map(|m| standing(m.pos.category)).max() else {
            return Metric::Dtm;
        };
        let candidates = answer
            .moves
            .iter()
            .filter(|m| standing(m.pos.category) == best);
        if best == UNKNOWN {
            Metric::Dtz
        } else if candidates.clone().all(known) {
            Metric::Dtm
        } else {
            Metric::Dtz
        }
    }
}

/// The result a move leaves its player with, best last: the category of
/// the position after it seen from the other side. `Unknown` comes above
/// every loss (it may yet win or draw) and below every result the 50-move
/// rule makes a draw or better.
pub fn standing(after: Category) -> u8 {
    match after {
        Category::Win => 1,
        Category::SyzygyWin => 2,
        Category::MaybeWin => 3,
        Category::Unknown => UNKNOWN,
        Category::CursedWin => 5,
        Category::Draw => DRAWN,
        Category::BlessedLoss => 7,
        Category::MaybeLoss => 8,
        Category::SyzygyLoss => 9,
        Category::Loss => 10,
    }
}

/// The standing of a move the tables do not know.
pub const UNKNOWN: u8 = 4;

/// The standing of a drawn result: above it the mover wins (with or
/// without the 50-move rule), below it the mover loses or does not know.
pub const DRAWN: u8 = 6;

/// Whether a standing is a loss for the mover the tables know of (a loss
/// the 50-move rule saves draws).
fn loses(standing: u8) -> bool {
    standing < UNKNOWN
}

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
        } else if standing < DRAWN && standing != UNKNOWN {
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
/// can do, or the unknown moves, when it knows of nothing better than
/// those, and there is more than one of them.
pub fn choices_to_look_past(answer: &TablebaseAnswer) -> Vec<&MoveInfo> {
    let metric = Metric::of(answer);
    let Some(best) = best_worth(answer).map(Worth::standing) else {
        return Vec::new();
    };
    if best != DRAWN && best != UNKNOWN {
        return Vec::new();
    }
    let choices: Vec<&MoveInfo> = answer
        .moves
        .iter()
        .filter(|m| Worth::of(m, metric).standing == best)
        .collect();
    if choices.len() > 1 {
        choices
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
        .filter(|m| loses(standing(m.pos.category)))
        .count()
}

/// What the answer of the position after one of the tablebase's moves
/// says about the player's replies there.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Further {
    /// A reply the tables know wins for the player: the move loses, even
    /// where its own result is unknown (a promotion the tables see past).
    pub refuted: bool,
    /// The replies the tables know lose for the player.
    pub chances_to_go_wrong: usize,
}

impl Further {
    pub fn of(after: &TablebaseAnswer) -> Further {
        Further {
            refuted: after
                .moves
                .iter()
                .any(|m| standing(m.pos.category) > standing(Category::BlessedLoss)),
            chances_to_go_wrong: chances_to_go_wrong(after),
        }
    }
}

/// The tablebase's move. `further` gives, for a move of
/// [`choices_to_look_past`], what the answer after it says (`None` when
/// that answer is not known, counted as nothing).
pub fn reply(
    answer: &TablebaseAnswer,
    seed: u64,
    ply: usize,
    further: impl Fn(&MoveInfo) -> Option<Further>,
) -> Option<&MoveInfo> {
    let best = best_worth(answer)?;
    let candidates = best_moves(answer).into_iter();
    let preference = |m: &MoveInfo| -> (bool, usize, bool, Reverse<i32>, i32) {
        match best.standing {
            // Not refuted, then the most traps.
            DRAWN | UNKNOWN => {
                let f = further(m).unwrap_or_default();
                (!f.refuted, f.chances_to_go_wrong, false, Reverse(0), 0)
            }
            // Losing: no simplifying capture, then the longest DTZ.
            s if s < DRAWN => (
                true,
                0,
                !m.conversion,
                Reverse(0),
                m.pos.dtz.map_or(0, i32::abs),
            ),
            // Winning: the shortest DTZ among equally short mates.
            _ => (true, 0, false, Reverse(m.pos.dtz.map_or(0, i32::abs)), 0),
        }
    };
    let top = candidates.clone().map(preference).max()?;
    let finalists: Vec<&MoveInfo> = candidates.filter(|m| preference(m) == top).collect();
    let pick = mix(seed, ply as u64) % finalists.len() as u64;
    finalists.get(pick as usize).copied()
}

/// Whether the tablebase's move is a guess: the tables do not know what
/// it leads to.
pub fn guessed(m: &MoveInfo) -> bool {
    m.pos.category == Category::Unknown
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
            source: None,
            ask_again: false,
        }
    }

    fn no_chances(_: &MoveInfo) -> Option<Further> {
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
        let choices: Vec<&str> = choices_to_look_past(&drawn)
            .iter()
            .map(|m| m.uci.as_str())
            .collect();
        assert_eq!(choices, vec!["a", "b"]);
        let traps = |m: &MoveInfo| {
            Some(Further {
                refuted: false,
                chances_to_go_wrong: if m.uci == "b" { 4 } else { 1 },
            })
        };
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

    /// A move whose result the tables do not know.
    fn unknown(uci: &str) -> MoveInfo {
        let mut m = after(uci, Category::Unknown, 0, None);
        m.pos.dtz = None;
        m
    }

    #[test]
    fn outside_the_tables_a_move_known_to_lose_is_never_played() {
        // KRPvKR without its table: two rook moves hang the rook (known
        // lost: the player captures into a table that is installed).
        let hanging = answer(
            Category::Unknown,
            None,
            vec![
                after("a7", Category::Win, 1, None),
                after("a8", Category::Win, 1, None),
                unknown("b1"),
                unknown("b2"),
                unknown("c1"),
            ],
        );
        for seed in 0..40 {
            let m = reply(&hanging, seed, 3, no_chances).expect("a reply");
            assert!(guessed(m), "seed {seed}: {}", m.uci);
            assert!(!m.uci.starts_with('a'), "seed {seed}: {}", m.uci);
        }
        // Only losing moves and nothing unknown: the longest resistance.
        let lost = answer(
            Category::Loss,
            None,
            vec![
                after("a7", Category::Win, 1, None),
                after("h1", Category::Win, 17, None),
            ],
        );
        assert_eq!(
            reply(&lost, 0, 0, no_chances).map(|m| m.uci.as_str()),
            Some("h1")
        );
        // A known draw is kept rather than a guess.
        let draw_known = answer(
            Category::Unknown,
            None,
            vec![unknown("b1"), after("d", Category::Draw, 0, None)],
        );
        for seed in 0..20 {
            assert_eq!(
                reply(&draw_known, seed, 1, no_chances).map(|m| m.uci.as_str()),
                Some("d")
            );
        }
        // And a known win rather than anything unknown.
        let win_known = answer(
            Category::Win,
            None,
            vec![unknown("b1"), after("w", Category::Loss, -3, None)],
        );
        assert_eq!(
            reply(&win_known, 5, 1, no_chances).map(|m| m.uci.as_str()),
            Some("w")
        );
    }

    #[test]
    fn among_unknown_moves_it_looks_one_move_further() {
        let pos = answer(
            Category::Unknown,
            None,
            vec![
                unknown("refuted"),
                unknown("plain"),
                unknown("trap"),
                after("hangs", Category::Win, 1, None),
            ],
        );
        let choices: Vec<&str> = choices_to_look_past(&pos)
            .iter()
            .map(|m| m.uci.as_str())
            .collect();
        assert_eq!(choices, vec!["refuted", "plain", "trap"]);
        // The answers after them: against "refuted" the player promotes
        // into an installed table and wins; after "trap" two of the
        // player's replies are known to lose.
        let answer_after = |uci: &str| match uci {
            "refuted" => answer(
                Category::Unknown,
                None,
                vec![unknown("x"), after("promotes", Category::Loss, -9, None)],
            ),
            "trap" => answer(
                Category::Unknown,
                None,
                vec![
                    unknown("x"),
                    after("blunder", Category::Win, 1, None),
                    after("blunder2", Category::Win, 3, None),
                ],
            ),
            _ => answer(Category::Unknown, None, vec![unknown("x"), unknown("y")]),
        };
        assert!(Further::of(&answer_after("refuted")).refuted);
        assert_eq!(Further::of(&answer_after("trap")).chances_to_go_wrong, 2);
        let further = |m: &MoveInfo| Some(Further::of(&answer_after(&m.uci)));
        for seed in 0..20 {
            assert_eq!(
                reply(&pos, seed, 2, further).map(|m| m.uci.as_str()),
                Some("trap")
            );
        }
        // Without the answers after them, any unknown move but the hanging one.
        let picked: std::collections::HashSet<&str> = (0..40)
            .filter_map(|seed| reply(&pos, seed, 2, no_chances).map(|m| m.uci.as_str()))
            .collect();
        assert!(!picked.contains("hangs"), "{picked:?}");
        assert!(picked.len() > 1, "{picked:?}");
    }

    #[test]
    fn at_the_edge_of_the_dtm_tables_the_winning_moves_dtm_decides() {
        // 8/k7/p1R3r1/7K/8/8/8/8 w: no DTM for the 5-piece root, but both
        // winning moves capture into 4-piece tables that have it; the
        // other moves draw or lose, without DTM.
        let mut rxg6 = after("c6g6", Category::Loss, -1, Some(-24));
        rxg6.zeroing = true;
        rxg6.conversion = true;
        let mut kxg6 = after("h5g6", Category::Loss, -3, Some(-20));
        kxg6.zeroing = true;
        kxg6.conversion = true;
        let edge = answer(
            Category::Win,
            None,
            vec![
                rxg6,
                kxg6,
                after("c6c7", Category::Draw, 0, None),
                after("c6c1", Category::Win, 12, None),
            ],
        );
        assert_eq!(Metric::of(&edge), Metric::Dtm);
        for seed in 0..20 {
            assert_eq!(
                reply(&edge, seed, 0, no_chances).map(|m| m.uci.as_str()),
                Some("h5g6"),
                "the shorter DTM, not the shorter DTZ"
            );
        }
        // One winning move without DTM: DTZ decides, as before.
        let mut partial = edge.clone();
        partial.moves[1].pos.dtm = None;
        assert_eq!(Metric::of(&partial), Metric::Dtz);
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
