//! A line as the panel holds it: the API's moves (mainline or fastest mate)
//! played out into positions once, so stepping is a lookup; its PGN; and
//! why it ends where it does, which the API does not say.

use shakmaty::{Color, Position, uci::UciMove};

use crate::{
    api::{MainlineAnswer, MateLineAnswer},
    components::line::movetext::{dtz_comment, pgn},
    game::{Game, end_words},
    position::to_fen,
    variant::Variant,
};

/// Which line: the DTZ mainline (as lila-tablebase's) or the fastest mate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Dtz,
    Mate,
}

impl Kind {
    /// The PGN's event, which names the line.
    fn event(self) -> &'static str {
        match self {
            Kind::Dtz => "Zugzwang DTZ mainline",
            Kind::Mate => "Zugzwang fastest mate",
        }
    }
}

/// One fetched line: the start and the positions after each step.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    pub kind: Kind,
    /// The rules the line is played under.
    pub variant: Variant,
    pub start: String,
    pub steps: Vec<Step>,
    winner: Option<String>,
    /// How the line ends, in words ("Draw by the 50-move rule after ...").
    pub ending: String,
}

/// One move of the line and the position after it.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub san: String,
    pub fen: String,
    /// The PGN comment: the DTZ (or DTM) after the move, in plies.
    comment: Option<String>,
}

impl Line {
    /// Where the board is in the line: 0 = start, i = after step i.
    pub fn index_of(&self, fen: &str) -> Option<usize> {
        if self.start == fen {
            return Some(0);
        }
        self.steps.iter().position(|s| s.fen == fen).map(|i| i + 1)
    }

    /// The position at an index.
    fn fen_at(&self, index: usize) -> &str {
        match index.checked_sub(1).and_then(|i| self.steps.get(i)) {
            Some(step) => &step.fen,
            None => &self.start,
        }
    }

    /// The positions the board passes going from one index to another: each
    /// one move after the one before going forward, just the target going back.
    pub fn path(&self, from: usize, to: usize) -> Vec<String> {
        if to <= from {
            return vec![self.fen_at(to).to_string()];
        }
        let end = to.min(self.steps.len());
        self.steps[from.min(end)..end]
            .iter()
            .map(|s| s.fen.clone())
            .collect()
    }

    /// The line as PGN, from its FEN, with each move's DTZ (or DTM) as a comment.
    pub fn pgn(&self) -> String {
        let result = match self.winner.as_deref() {
            Some("w") => "1-0",
            Some("b") => "0-1",
            _ => "1/2-1/2",
        };
        let moves: Vec<(String, Option<String>)> = self
            .steps
            .iter()
            .map(|s| (s.san.clone(), s.comment.clone()))
            .collect();
        pgn(self.kind.event(), &self.start, &moves, result)
    }
}

/// What the API gave for one line, before its positions are built.
pub struct Fetched {
    kind: Kind,
    /// Each move as UCI, its SAN and its PGN comment.
    moves: Vec<(String, String, Option<String>)>,
    winner: Option<String>,
    /// The start's DTZ (0 for a fastest mate, which ignores the 50-move rule).
    dtz: i32,
}

impl From<MainlineAnswer> for Fetched {
    fn from(answer: MainlineAnswer) -> Fetched {
        Fetched {
            kind: Kind::Dtz,
            moves: answer
                .mainline
                .into_iter()
                .map(|s| (s.uci, s.san, dtz_comment(Some(s.dtz))))
                .collect(),
            winner: answer.winner,
            dtz: answer.dtz,
        }
    }
}

impl From<MateLineAnswer> for Fetched {
    fn from(answer: MateLineAnswer) -> Fetched {
        Fetched {
            kind: Kind::Mate,
            moves: answer
                .mainline
                .into_iter()
                .map(|s| (s.uci, s.san, s.dtm.map(|d| format!("DTM {}", d.abs()))))
                .collect(),
            winner: answer.winner,
            dtz: 0,
        }
    }
}

/// Builds the line's positions from the API's UCI moves.
pub fn build_line(start: &Game, fetched: Fetched) -> Line {
    let mut pos = start.clone();
    let mut steps = Vec::new();
    for (uci, san, comment) in fetched.moves {
        let Some(m) = uci
            .parse::<UciMove>()
            .ok()
            .and_then(|u| u.to_move(&pos).ok())
        else {
            break;
        };
        pos.play_unchecked(m);
        steps.push(Step {
            san,
            fen: to_fen(&pos),
            comment,
        });
    }
    Line {
        kind: fetched.kind,
        variant: start.variant(),
        start: to_fen(start),
        ending: ending(start, &pos, fetched.dtz, steps.len()),
        steps,
        winner: fetched.winner,
    }
}

/// Why the line ends where it does. The server follows the best move until
/// the game is over or a draw can be claimed under the 50-move rule (as
/// lila-tablebase does), so a win whose next capture or pawn move comes too
/// late (a cursed win, or a blessed loss seen from the loser) ends in a draw.
fn ending(start: &Game, end: &Game, root_dtz: i32, n: usize) -> String {
    let after = match n {
        1 => "after 1 ply".to_string(),
        n => format!("after {n} plies"),
    };
    if let Some(words) = end_words(end) {
        return format!("{words} {after}");
    }
    if end.is_checkmate() {
        return format!("Checkmate: {} wins {after}", side(end.turn().other()));
    }
    if end.is_stalemate() {
        return format!("Draw by stalemate {after}");
    }
    if end.is_insufficient_material() {
        return format!("Draw by insufficient material {after}");
    }
    if end.halfmoves() >= 100 {
        let stronger = if root_dtz > 0 {
            start.turn()
        } else {
            start.turn().other()
        };
        return format!(
            "Draw by the 50-move rule {after}: the win comes too late (cursed win for {})",
            side(stronger)
        );
    }
    format!("The line stops {after}")
}

fn side(color: Color) -> &'static str {
    match color {
        Color::White => "White",
        Color::Black => "Black",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pgn_numbers_moves_from_black() {
        let line = Line {
            kind: Kind::Dtz,
            variant: Variant::Standard,
            start: "8/8/8/8/8/2k5/8/K1Q5 b - - 0 7".to_string(),
            steps: vec![
                Step {
                    san: "Kb3".into(),
                    fen: String::new(),
                    comment: dtz_comment(Some(-15)),
                },
                Step {
                    san: "Qc2+".into(),
                    fen: String::new(),
                    comment: dtz_comment(Some(14)),
                },
            ],
            winner: Some("w".into()),
            ending: String::new(),
        };
        let pgn = line.pgn();
        assert!(
            pgn.contains("[FEN \"8/8/8/8/8/2k5/8/K1Q5 b - - 0 7\"]"),
            "{pgn}"
        );
        assert!(
            pgn.contains("7... Kb3 {DTZ 15} 8. Qc2+ {DTZ 14} 1-0"),
            "{pgn}"
        );
    }

    #[test]
    fn says_why_a_line_ends() {
        let fen = |f: &str| crate::game::parse_game_fen(Variant::Standard, f).expect("legal");
        let start = fen("4k3/8/8/8/8/8/8/4K2R w - - 90 1");
        let claimable = fen("3k4/8/8/8/1K6/8/R7/8 w - - 100 6");
        assert_eq!(
            ending(&start, &claimable, 21, 10),
            "Draw by the 50-move rule after 10 plies: the win comes too late (cursed win for White)"
        );
        // Seen from the side that is saved, the winner is the other one.
        let black_to_move = fen("4k3/8/8/8/8/8/8/4K2R b - - 90 1");
        assert!(ending(&black_to_move, &claimable, -21, 10).ends_with("(cursed win for White)"));
        let mated = fen("R2k4/8/3K4/8/8/8/8/8 b - - 0 9");
        assert_eq!(
            ending(&start, &mated, 21, 1),
            "Checkmate: White wins after 1 ply"
        );
        let stalemate = fen("k7/2Q5/1K6/8/8/8/8/8 b - - 0 9");
        assert_eq!(
            ending(&start, &stalemate, 21, 3),
            "Draw by stalemate after 3 plies"
        );
    }
}
