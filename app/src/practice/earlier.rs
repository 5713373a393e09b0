//! The player's older moves, which a review leaves out
//! (`review::JUDGED_MOVES`): judged in the browser once the page is up,
//! one answer at a time as the explorer asks for them, the newest first,
//! and shown a batch at a time. The server never judges them, so a long
//! game's page costs it no more than a short one's; without JavaScript
//! they stay "not judged here".

use std::collections::HashMap;

use leptos::{prelude::*, task::spawn_local};

use crate::{
    hooks::answers::Answers,
    practice::{
        judge::{Judgement, judge},
        replay::PracticeGame,
    },
};

/// Marks shown together: each batch redraws the record once, not once
/// per move.
const BATCH: usize = 16;

/// How many moves two games share from the start.
pub fn common_prefix(a: &[String], b: &[String]) -> usize {
    a.iter().zip(b).take_while(|(a, b)| a == b).count()
}

/// The marks the browser added, by ply, for the game they were made in.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EarlierMarks {
    /// The game's moves (the longest the marks were made for).
    moves: Vec<String>,
    /// The mark of each judged ply; `None` where the tables do not know
    /// the result.
    by_ply: HashMap<usize, Option<Judgement>>,
}

impl EarlierMarks {
    /// How many moves a game shares with these marks' game: the marks of
    /// plies before that belong to it too.
    pub fn common(&self, moves: &[String]) -> usize {
        common_prefix(&self.moves, moves)
    }

    /// The mark of a ply, if judged (`Some(None)`: the tables do not know).
    pub fn get(&self, ply: usize) -> Option<Option<&Judgement>> {
        self.by_ply.get(&ply).map(Option::as_ref)
    }

    /// Adds marks made in the game `moves`; those of another game after
    /// the moves the two share go.
    pub fn add(&mut self, moves: &[String], marks: Vec<(usize, Option<Judgement>)>) {
        let common = self.common(moves);
        if common < self.moves.len().min(moves.len()) {
            self.by_ply.retain(|&ply, _| ply < common);
            self.moves = moves.to_vec();
        } else if moves.len() > self.moves.len() {
            self.moves = moves.to_vec();
        }
        self.by_ply.extend(marks);
    }

    /// The plies of `wanted` not judged yet for the game `moves`.
    fn missing(&self, moves: &[String], wanted: Vec<usize>) -> Vec<usize> {
        let common = self.common(moves);
        wanted
            .into_iter()
            .filter(|&ply| ply >= common || !self.by_ply.contains_key(&ply))
            .collect()
    }
}

/// The URL's game and the plies of the player's moves its review left
/// out (`Review::left_out`).
pub type LeftOut = Memo<Option<(PracticeGame, Vec<usize>)>>;

/// The marks the browser adds to the URL's game: whenever the game or its
/// review changes, the player's moves the review left out and no mark has
/// yet are judged, newest first, one answer at a time (those the tab has
/// seen cost no request); a change of game stops the walk, and the next
/// one goes on from what is marked. Nothing runs on the server.
pub fn use_earlier_marks(left_out: LeftOut, answers: Answers) -> ReadSignal<EarlierMarks> {
    let marks = RwSignal::new(EarlierMarks::default());
    let walk = StoredValue::new(0_u64);
    Effect::new(move |_| {
        let Some((game, mut wanted)) = left_out.get() else {
            return;
        };
        walk.update_value(|n| *n += 1);
        let this = walk.get_value();
        wanted.reverse();
        let missing = marks.with_untracked(|m| m.missing(&game.setup.moves, wanted));
        if missing.is_empty() {
            return;
        }
        let current = move || walk.try_get_value() == Some(this);
        spawn_local(async move {
            let publish = |batch: &mut Vec<(usize, Option<Judgement>)>| {
                let batch = std::mem::take(batch);
                marks.try_update(|m| m.add(&game.setup.moves, batch));
            };
            let mut batch = Vec::new();
            for ply in missing {
                let (Some(fen), Some(played)) = (game.fen_at(ply), game.plies.get(ply)) else {
                    break;
                };
                // An answer that does not come leaves the rest unjudged
                // until the game changes.
                let Ok((_, answer)) = answers.answer(fen).await else {
                    break;
                };
                if !current() {
                    return;
                }
                batch.push((ply, judge(&answer, &played.uci)));
                if batch.len() >= BATCH {
                    publish(&mut batch);
                }
            }
            if current() && !batch.is_empty() {
                publish(&mut batch);
            }
        });
    });
    marks.read_only()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::practice::judge::{Mark, Standing};

    fn moves(m: &[&str]) -> Vec<String> {
        m.iter().map(|s| s.to_string()).collect()
    }

    fn mark(san: &str) -> Option<Judgement> {
        let standing = Standing {
            category: crate::api::Category::Draw,
            mate: None,
            dtz: Some(0),
        };
        Some(Judgement {
            san: san.to_string(),
            mark: Mark::Best,
            before: standing,
            after: standing,
            best_san: san.to_string(),
        })
    }

    #[test]
    fn marks_hold_for_the_moves_games_share() {
        let mut marks = EarlierMarks::default();
        let game = moves(&["a", "b", "c", "d"]);
        marks.add(&game, vec![(0, mark("a")), (2, mark("c"))]);
        assert_eq!(marks.missing(&game, vec![2, 1, 0]), vec![1]);
        // A longer game keeps them, and so does a takeback.
        let longer = moves(&["a", "b", "c", "d", "e", "f"]);
        assert_eq!(marks.common(&longer), 4);
        assert_eq!(marks.missing(&longer, vec![4, 2, 0]), vec![4]);
        marks.add(&longer, vec![(4, None)]);
        assert_eq!(marks.get(4), Some(None));
        assert_eq!(marks.common(&moves(&["a", "b"])), 2);
        // Another third move: the marks from there on go.
        let other = moves(&["a", "b", "x", "d"]);
        assert_eq!(marks.missing(&other, vec![2, 0]), vec![2]);
        marks.add(&other, vec![]);
        assert_eq!(marks.get(2), None);
        assert_eq!(marks.get(4), None);
        assert!(marks.get(0).is_some());
    }
}
