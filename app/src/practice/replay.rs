//! The practice game replayed from its URL: every position, every move in
//! SAN, and how (and whether) the game has ended. A URL whose moves stop
//! being legal, or go on after the end, is played up to there and says so;
//! so is one longer than [`MAX_PLIES`], the most a page replays.

use std::collections::HashMap;

use shakmaty::{Color, KnownOutcome, Outcome, Position, Square, uci::UciMove};

use crate::{
    api::MoveInfo,
    components::board::pieces::color_name,
    game::{Game, end_words, parse_game_fen},
    move_squares::move_squares,
    position::to_fen,
    practice::setup::Setup,
    text::capitalized,
};

/// The most plies a practice game holds: every page of a game replays it
/// from its URL, so a link's cost stays bounded however long it is. Longer
/// than any game the tablebase's play leads to (a 7-piece mate takes at
/// most 549 plies), far shorter than what the rules allow (thousands).
pub const MAX_PLIES: usize = 1_000;

/// One ply of the game.
#[derive(Clone, Debug, PartialEq)]
pub struct Ply {
    pub uci: String,
    pub san: String,
    /// The squares the board highlights for it.
    pub squares: Option<(Square, Square)>,
}

/// How a practice game ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum End {
    Checkmate {
        winner: Color,
    },
    Stalemate,
    InsufficientMaterial,
    /// A hundred plies without a capture or pawn move: the practice game
    /// draws at once, as if the side it saves claimed it.
    FiftyMoves,
    Repetition,
    /// An atomic or antichess game ended by its own rule.
    Variant {
        words: String,
        winner: Option<Color>,
    },
    Resigned {
        winner: Color,
    },
    /// [`MAX_PLIES`] played: the page goes no further (not a result).
    TooLong,
}

impl End {
    /// In a player's words: "Checkmate: White wins".
    pub fn words(&self) -> String {
        match self {
            End::Checkmate { winner } => format!("Checkmate: {} wins", name(*winner)),
            End::Stalemate => "Draw by stalemate".to_string(),
            End::InsufficientMaterial => "Draw by insufficient material".to_string(),
            End::FiftyMoves => "Draw by the 50-move rule".to_string(),
            End::Repetition => "Draw by threefold repetition".to_string(),
            End::Variant { words, .. } => words.clone(),
            End::Resigned { winner } => {
                format!("{} resigned: {} wins", name(winner.other()), name(*winner))
            }
            End::TooLong => format!(
                "Stopped after {} plies, the longest game this page plays",
                thousands(MAX_PLIES)
            ),
        }
    }

    pub fn winner(&self) -> Option<Color> {
        match self {
            End::Checkmate { winner } | End::Resigned { winner } => Some(*winner),
            End::Variant { winner, .. } => *winner,
            _ => None,
        }
    }

    /// The PGN result ("*" for a game stopped unfinished).
    pub fn result(&self) -> &'static str {
        match (self, self.winner()) {
            (End::TooLong, _) => "*",
            (_, Some(Color::White)) => "1-0",
            (_, Some(Color::Black)) => "0-1",
            (_, None) => "1/2-1/2",
        }
    }
}

/// The game as played so far.
#[derive(Clone, Debug)]
pub struct PracticeGame {
    pub setup: Setup,
    /// The start, then the position after each ply.
    pub positions: Vec<Game>,
    pub plies: Vec<Ply>,
    /// Why the URL's moves were not all played, if they were not.
    pub dropped: Option<String>,
    /// How the game ended, worked out once: the page asks on every redraw.
    end: Option<End>,
    /// How often each position (its FEN without the clocks) has stood on
    /// the board: one lookup per ply, not a scan of the game.
    seen: HashMap<String, usize>,
    /// How often the current position has.
    repeated: usize,
}

impl PartialEq for PracticeGame {
    /// Games compare by their setup (the moves played) and what came of it:
    /// the positions follow from those, and comparing them would build
    /// every position's FEN on each change the page checks.
    fn eq(&self, other: &PracticeGame) -> bool {
        self.setup == other.setup && self.dropped == other.dropped && self.end == other.end
    }
}

impl PracticeGame {
    /// Replays the URL's moves from its start; an illegal start is the
    /// FEN's reason.
    pub fn replay(setup: &Setup) -> Result<PracticeGame, String> {
        let start = parse_game_fen(setup.variant, &setup.fen).map_err(|err| err.to_string())?;
        let mut game = PracticeGame {
            setup: setup.clone(),
            positions: vec![start],
            plies: Vec::new(),
            dropped: None,
            end: None,
            seen: HashMap::new(),
            repeated: 0,
        };
        game.count_repetition(repetition_key(game.current()));
        for (i, uci) in setup.moves.iter().enumerate() {
            if let Some(end) = game.end_of_play() {
                game.dropped = Some(match end {
                    End::TooLong => format!(
                        "The link holds {} plies; the page plays at most {}, so the game stops there.",
                        thousands(setup.moves.len()),
                        thousands(MAX_PLIES)
                    ),
                    end => format!(
                        "The link's moves go on after the end ({}); they are left out.",
                        end.words()
                    ),
                });
                break;
            }
            if let Err(why) = game.push(uci) {
                game.dropped = Some(format!(
                    "Move {} of the link ({uci}) {why}: the game goes on from before it.",
                    i + 1
                ));
                break;
            }
        }
        game.setup.moves = game.plies.iter().map(|p| p.uci.clone()).collect();
        game.end = game.end_of_play().or_else(|| match game.setup.side {
            Some(side) if game.setup.resigned => Some(End::Resigned {
                winner: side.other(),
            }),
            _ => None,
        });
        Ok(game)
    }

    /// The game with the tablebase's reply played on (the URL's next
    /// game), without replaying the moves before it; the game as it is if
    /// the move cannot be played.
    pub fn with_reply(&self, uci: &str) -> PracticeGame {
        let mut next = self.clone();
        if self.end.is_some() || next.push(uci).is_err() {
            return next;
        }
        next.setup.moves.push(uci.to_string());
        next.end = next.end_of_play();
        next
    }

    /// Plays one UCI move, if legal.
    fn push(&mut self, uci: &str) -> Result<(), &'static str> {
        let pos = self.current();
        let m = uci
            .parse::<UciMove>()
            .map_err(|_| "is not a move")?
            .to_move(pos)
            .map_err(|_| "is not legal there")?;
        let (info, after) = MoveInfo::play(pos, m);
        self.plies.push(Ply {
            uci: info.uci,
            san: info.san,
            squares: move_squares(&m),
        });
        self.count_repetition(repetition_key(&after));
        self.positions.push(after);
        Ok(())
    }

    /// Counts one more time the position `key` stood on the board, which
    /// is now the current one.
    fn count_repetition(&mut self, key: String) {
        let count = self.seen.entry(key).or_default();
        *count += 1;
        self.repeated = *count;
    }

    /// The position on the board.
    pub fn current(&self) -> &Game {
        self.positions
            .last()
            .unwrap_or_else(|| unreachable!("a game has its start"))
    }

    pub fn fen(&self) -> String {
        to_fen(self.current())
    }

    /// The FEN after `ply` plies.
    pub fn fen_at(&self, ply: usize) -> Option<String> {
        self.positions.get(ply).map(to_fen)
    }

    /// Whether the player is to move (false before a side is chosen).
    pub fn players_turn(&self) -> bool {
        self.setup.side == Some(self.current().turn())
    }

    /// The plies the player made, by index.
    pub fn player_plies(&self) -> Vec<usize> {
        let Some(side) = self.setup.side else {
            return Vec::new();
        };
        (0..self.plies.len())
            .filter(|&i| self.positions[i].turn() == side)
            .collect()
    }

    /// How the game has ended, or `None` while it goes on.
    pub fn end(&self) -> Option<End> {
        self.end.clone()
    }

    /// The end the board shows, by the rules.
    fn end_of_play(&self) -> Option<End> {
        let pos = self.current();
        if let Some(words) = end_words(pos) {
            let winner = match pos.variant_outcome() {
                Outcome::Known(KnownOutcome::Decisive { winner }) => Some(winner),
                _ => None,
            };
            return Some(End::Variant { words, winner });
        }
        if pos.is_checkmate() {
            return Some(End::Checkmate {
                winner: pos.turn().other(),
            });
        }
        if pos.is_stalemate() {
            return Some(End::Stalemate);
        }
        if pos.is_insufficient_material() {
            return Some(End::InsufficientMaterial);
        }
        if pos.halfmoves() >= 100 {
            return Some(End::FiftyMoves);
        }
        // How often the current position has stood on the board (pieces,
        // side to move, castling and en passant: the FEN without its clocks).
        if self.repeated >= 3 {
            return Some(End::Repetition);
        }
        if self.plies.len() >= MAX_PLIES {
            return Some(End::TooLong);
        }
        None
    }

    /// The game with one more move.
    pub fn with_move(&self, uci: String) -> Setup {
        let mut moves = self.setup.moves.clone();
        moves.push(uci);
        self.setup.with_moves(moves)
    }

    /// The game back to before the player's last move; `None` when the
    /// player has made none.
    pub fn takeback(&self) -> Option<Setup> {
        let last = *self.player_plies().last()?;
        Some(self.setup.with_moves(self.setup.moves[..last].to_vec()))
    }

    /// The game back to before ply `ply` (the player to move there).
    pub fn from_ply(&self, ply: usize) -> Setup {
        let end = ply.min(self.setup.moves.len());
        self.setup.with_moves(self.setup.moves[..end].to_vec())
    }
}

/// What a repetition compares: the FEN without its clocks.
fn repetition_key(pos: &Game) -> String {
    let fen = to_fen(pos);
    fen.split(' ').take(4).collect::<Vec<_>>().join(" ")
}

fn name(color: Color) -> String {
    capitalized(color_name(color))
}

/// A count as the page writes it: "5,009".
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::variant::Variant;

    fn game(fen: &str, side: Color, moves: &[&str]) -> PracticeGame {
        let setup = Setup::new(Variant::Standard, fen)
            .playing(side)
            .with_moves(moves.iter().map(|m| m.to_string()).collect());
        PracticeGame::replay(&setup).expect("legal start")
    }

    #[test]
    fn replays_the_link_and_keeps_the_clock() {
        let g = game(
            "4k3/8/8/8/8/8/8/4K2R w - - 0 1",
            Color::White,
            &["h1h7", "e8d8"],
        );
        assert_eq!(g.plies.len(), 2);
        assert_eq!(g.plies[0].san, "Rh7");
        assert_eq!(g.fen(), "3k4/7R/8/8/8/8/8/4K3 w - - 2 2");
        assert!(g.players_turn());
        assert_eq!(g.player_plies(), vec![0]);
        assert_eq!(g.takeback().map(|s| s.moves), Some(vec![]));
        assert_eq!(g.end(), None);
    }

    #[test]
    fn stops_at_an_illegal_move_and_after_the_end() {
        let g = game(
            "4k3/8/8/8/8/8/8/4K2R w - - 0 1",
            Color::White,
            &["h1h7", "e8e9", "e1e2"],
        );
        assert_eq!(g.plies.len(), 1);
        assert!(
            g.dropped
                .as_deref()
                .is_some_and(|d| d.contains("Move 2 of the link (e8e9)"))
        );
        assert_eq!(g.setup.moves, vec!["h1h7".to_string()]);
        let mated = game(
            "k7/8/1K6/8/8/8/8/7R w - - 0 1",
            Color::White,
            &["h1h8", "a8a7"],
        );
        assert_eq!(
            mated.end(),
            Some(End::Checkmate {
                winner: Color::White
            })
        );
        assert_eq!(mated.plies.len(), 1);
        assert!(mated.dropped.is_some());
        assert_eq!(mated.end().map(|e| e.result()), Some("1-0"));
    }

    #[test]
    fn draws_by_rule_and_by_resigning() {
        let fifty = game("4k3/8/8/8/8/8/8/4K2R w - - 99 60", Color::White, &["h1h2"]);
        assert_eq!(fifty.end(), Some(End::FiftyMoves));
        let shuffle = [
            "e1d1", "e8d8", "d1e1", "d8e8", "e1d1", "e8d8", "d1e1", "d8e8",
        ];
        let repeated = game("4k3/8/8/8/8/8/8/4K2R w - - 0 1", Color::White, &shuffle);
        assert_eq!(repeated.end(), Some(End::Repetition));
        let mut setup = repeated.setup.with_moves(vec!["h1h2".into()]);
        setup.resigned = true;
        let resigned = PracticeGame::replay(&setup).expect("legal");
        assert_eq!(
            resigned.end().map(|e| e.words()).as_deref(),
            Some("White resigned: Black wins")
        );
    }

    #[test]
    fn a_game_stops_at_the_most_plies_a_page_plays() {
        assert_eq!(thousands(5_009), "5,009");
        assert_eq!(thousands(1_000_000), "1,000,000");
        assert_eq!(thousands(649), "649");
        assert_eq!(End::TooLong.result(), "*");
        assert_eq!(End::TooLong.winner(), None);
        assert!(End::TooLong.words().contains("1,000 plies"));
    }

    #[test]
    fn a_reply_played_on_is_the_game_replayed_with_it() {
        let g = game("4k3/8/8/8/8/8/8/4K2R w - - 0 1", Color::White, &["h1h7"]);
        let on = g.with_reply("e8d8");
        assert_eq!(
            on,
            PracticeGame::replay(&g.with_move("e8d8".into())).expect("legal")
        );
        assert_eq!(on.fen(), "3k4/7R/8/8/8/8/8/4K3 w - - 2 2");
        assert_eq!(on.plies.len(), 2);
        assert_eq!(g.with_reply("e8e9"), g);
        let mated = game("k7/8/1K6/8/8/8/8/6R1 w - - 0 1", Color::White, &[]).with_reply("g1g8");
        assert_eq!(
            mated.end(),
            Some(End::Checkmate {
                winner: Color::White
            })
        );
    }
}
