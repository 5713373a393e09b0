//! The marks of the player's moves: best, slower (the same result, further
//! away: a longer mate, or a quicker loss) or mistake (a worse result:
//! a win given away, or a win the 50-move rule now takes), each with the
//! result before and after in the player's words.

use serde::{Deserialize, Serialize};

use crate::{
    api::{Category, MoveInfo, TablebaseAnswer},
    components::move_list::mate::{self, MoveMate},
    json::{FromJson, Json, JsonError, field, optional_int_field, string_field},
    practice::defence::{Metric, Worth, best_moves, best_worth},
};

/// A player's move, marked.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    Best,
    Slower,
    Mistake,
}

impl Mark {
    pub fn label(self) -> &'static str {
        match self {
            Mark::Best => "best",
            Mark::Slower => "slower",
            Mark::Mistake => "mistake",
        }
    }

    /// A sign beside the move, so marks differ without colour vision.
    pub fn icon(self) -> &'static str {
        match self {
            Mark::Best => "✓",
            Mark::Slower => "≈",
            Mark::Mistake => "✗",
        }
    }
}

impl FromJson for Mark {
    fn from_json<J: Json>(value: &J) -> Result<Self, JsonError> {
        match value.as_string().as_deref() {
            Some("Best") => Ok(Mark::Best),
            Some("Slower") => Ok(Mark::Slower),
            Some("Mistake") => Ok(Mark::Mistake),
            _ => Err(JsonError::Wrong("mark", "Best, Slower or Mistake")),
        }
    }
}

/// A result as the player sees it.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub struct Standing {
    /// The result for the player.
    pub category: Category,
    /// Full moves to mate: positive, the player mates; negative, the
    /// player is mated.
    pub mate: Option<i32>,
    /// DTZ in plies, for a result whose depth to mate is not known.
    pub dtz: Option<i32>,
}

impl FromJson for Standing {
    fn from_json<J: Json>(value: &J) -> Result<Self, JsonError> {
        Ok(Standing {
            category: Category::from_json(&field(value, "category")?)?,
            mate: optional_int_field(value, "mate")?,
            dtz: optional_int_field(value, "dtz")?,
        })
    }
}

impl Standing {
    /// The player's result before a move, from the answer of the position
    /// (its mate from its moves where its own table has none).
    pub fn before(answer: &TablebaseAnswer) -> Standing {
        let root = &answer.pos;
        let mate = mate::root_dtm(answer).and_then(|d| match d {
            0 => None,
            d if d > 0 => Some(mate::moves(d.unsigned_abs()) as i32),
            d => Some(-(mate::moves(d.unsigned_abs()) as i32)),
        });
        Standing {
            category: root.category,
            mate,
            dtz: root.dtz.map(i32::abs),
        }
    }

    /// The player's result after a move, counted from before it (as the
    /// move list counts: the best move of a mate in 12 is "mate in 12").
    pub fn after(m: &MoveInfo) -> Standing {
        let mate = if m.pos.checkmate {
            Some(1)
        } else {
            MoveMate::of_move(m.pos.dtm).map(|mate| match mate {
                MoveMate::Mates(n) => n as i32,
                MoveMate::Mated(n) => -(n as i32),
            })
        };
        Standing {
            category: m.pos.category.flip(),
            mate,
            dtz: m.pos.dtz.map(i32::abs),
        }
    }

    /// The same result seen by the other side.
    pub fn other_side(self) -> Standing {
        Standing {
            category: self.category.flip(),
            mate: self.mate.map(|n| -n),
            dtz: self.dtz,
        }
    }

    /// What the result is worth under the 50-move rule, which the
    /// practice game keeps: 2 a win, 1 a draw, 0 a loss.
    pub(crate) fn result(self) -> Option<u8> {
        match self.category {
            Category::Win | Category::SyzygyWin | Category::MaybeWin => Some(2),
            Category::CursedWin | Category::Draw | Category::BlessedLoss => Some(1),
            Category::Loss | Category::SyzygyLoss | Category::MaybeLoss => Some(0),
            Category::Unknown => None,
        }
    }

    /// "mate in 12", "mated in 7", "draw", "win (DTZ 14)", "cursed win".
    pub fn text(self) -> String {
        match self.category {
            Category::CursedWin => return "cursed win (drawn by the 50-move rule)".to_string(),
            Category::BlessedLoss => return "blessed loss (saved by the 50-move rule)".to_string(),
            Category::Draw => return "draw".to_string(),
            Category::Unknown => return "unknown".to_string(),
            _ => {}
        }
        match (self.mate, self.result()) {
            (Some(n), _) if n > 0 => format!("mate in {n}"),
            (Some(n), _) => format!("mated in {}", n.unsigned_abs()),
            (None, Some(2)) => with_dtz("win", self.dtz),
            (None, _) => with_dtz("loss", self.dtz),
        }
    }
}

fn with_dtz(word: &str, dtz: Option<i32>) -> String {
    match dtz {
        Some(d) => format!("{word} (DTZ {d})"),
        None => word.to_string(),
    }
}

/// One of the player's moves with its result before and after.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Judgement {
    pub san: String,
    pub mark: Mark,
    pub before: Standing,
    pub after: Standing,
    /// A best move of the position, for the summary ("Rh7 was best").
    pub best_san: String,
}

impl FromJson for Judgement {
    fn from_json<J: Json>(value: &J) -> Result<Self, JsonError> {
        Ok(Judgement {
            san: string_field(value, "san")?,
            mark: Mark::from_json(&field(value, "mark")?)?,
            before: Standing::from_json(&field(value, "before")?)?,
            after: Standing::from_json(&field(value, "after")?)?,
            best_san: string_field(value, "best_san")?,
        })
    }
}

impl Judgement {
    /// In words: "slower: was mate in 12, now mate in 14".
    pub fn words(&self) -> String {
        let (before, after) = (self.before.text(), self.after.text());
        match self.mark {
            Mark::Best => format!("best: {after}"),
            Mark::Slower => format!("slower: was {before}, now {after}"),
            Mark::Mistake => format!("mistake: {}", self.loss_words()),
        }
    }

    /// What a mistake gave away.
    fn loss_words(&self) -> String {
        let (before, after) = (self.before.text(), self.after.text());
        match (self.before.result(), self.after.category) {
            (Some(2), Category::CursedWin) => {
                format!("cursed: the win no longer comes within the 50-move rule (was {before})")
            }
            (Some(2), _) if self.after.result() == Some(1) => {
                format!("win thrown away: now a draw (was {before})")
            }
            (Some(2), _) => format!("win thrown away: now {after}"),
            _ => format!("draw thrown away: now {after}"),
        }
    }
}

/// Marks the move `uci` of the position `answer` answers; `None` when the
/// move is not in it or the tables do not know its result.
pub fn judge(answer: &TablebaseAnswer, uci: &str) -> Option<Judgement> {
    let played = answer.moves.iter().find(|m| m.uci == uci)?;
    let metric = Metric::of(answer);
    let best = best_worth(answer)?;
    let best_move = *best_moves(answer).first()?;
    let before = Standing::before(answer);
    let after = Standing::after(played);
    let (was, now) = (before.result()?, after.result()?);
    let mark = if now < was {
        Mark::Mistake
    } else if Worth::of(played, metric) == best {
        Mark::Best
    } else {
        Mark::Slower
    };
    Some(Judgement {
        san: played.san.clone(),
        mark,
        before,
        after,
        best_san: best_move.san.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::practice::defence::tests::{after, answer};

    fn mate_in_12() -> TablebaseAnswer {
        answer(
            Category::Win,
            Some(23),
            vec![
                after("best", Category::Loss, -5, Some(-22)),
                after("slow", Category::Loss, -7, Some(-26)),
                after("drawn", Category::Draw, 0, Some(0)),
                after("cursed", Category::BlessedLoss, -105, Some(-60)),
            ],
        )
    }

    #[test]
    fn marks_and_words() {
        let pos = mate_in_12();
        let best = judge(&pos, "best").expect("judged");
        assert_eq!(best.mark, Mark::Best);
        assert_eq!(best.words(), "best: mate in 12");
        let slow = judge(&pos, "slow").expect("judged");
        assert_eq!(slow.mark, Mark::Slower);
        assert_eq!(slow.words(), "slower: was mate in 12, now mate in 14");
        assert_eq!(slow.best_san, "best");
        let drawn = judge(&pos, "drawn").expect("judged");
        assert_eq!(drawn.mark, Mark::Mistake);
        assert_eq!(
            drawn.words(),
            "mistake: win thrown away: now a draw (was mate in 12)"
        );
        let cursed = judge(&pos, "cursed").expect("judged");
        assert_eq!(cursed.mark, Mark::Mistake);
        assert!(
            cursed
                .words()
                .starts_with("mistake: cursed: the win no longer comes within the 50-move rule")
        );
        assert_eq!(judge(&pos, "nope"), None);
    }

    #[test]
    fn a_losing_player_is_best_resisting_longest() {
        let pos = answer(
            Category::Loss,
            Some(-14),
            vec![
                after("long", Category::Win, 9, Some(13)),
                after("short", Category::Win, 3, Some(5)),
            ],
        );
        assert_eq!(
            judge(&pos, "long").map(|j| j.words()).as_deref(),
            Some("best: mated in 7")
        );
        assert_eq!(
            judge(&pos, "short").map(|j| j.words()).as_deref(),
            Some("slower: was mated in 7, now mated in 3")
        );
        let drawn = answer(
            Category::Draw,
            Some(0),
            vec![
                after("hold", Category::Draw, 0, Some(0)),
                after("lose", Category::Win, 9, Some(13)),
            ],
        );
        assert_eq!(
            judge(&drawn, "hold").map(|j| j.words()).as_deref(),
            Some("best: draw")
        );
        assert_eq!(
            judge(&drawn, "lose").map(|j| j.words()).as_deref(),
            Some("mistake: draw thrown away: now mated in 7")
        );
    }
}
