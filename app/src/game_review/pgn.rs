//! Reading the games of a PGN with `pgn-reader` (by shakmaty's author, on
//! the same shakmaty): the tags of every game, and the moves of the one
//! asked for, replayed under its variant's rules. A move that cannot be
//! read or played stops the game there, with where and why; the moves
//! before it are kept, so a review shows what it could read.

#[cfg(feature = "ssr")]
use std::ops::ControlFlow;

#[cfg(feature = "ssr")]
use pgn_reader::{Outcome, RawTag, Reader, SanPlus, Visitor};
use shakmaty::{Color, Position};

#[cfg(feature = "ssr")]
use crate::{api::MoveInfo, game::parse_game_fen, position::to_fen};
use crate::{game::Game, variant::Variant};

/// The most games one PGN may hold.
pub const MAX_GAMES: usize = 100;
/// The most plies a reviewed game may have (as a practice game).
pub const MAX_PLIES: usize = crate::practice::replay::MAX_PLIES;

/// The start of a standard game (atomic's too; antichess drops the castling rights).
pub(crate) const INITIAL_FEN: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

/// One game of a PGN as the picker names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameTitle {
    /// 1 for the first game.
    pub index: usize,
    /// "Anand – Carlsen, Wch 2014 (1/2-1/2)".
    pub title: String,
}

/// One ply as played.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PgnPly {
    pub san: String,
    pub uci: String,
}

/// The game asked for, replayed.
#[derive(Clone, Debug)]
pub struct PgnGame {
    pub tags: Vec<(String, String)>,
    pub variant: Variant,
    /// The game's `[FEN]`, when it starts from a position.
    pub setup_fen: Option<String>,
    /// The position before each ply, then the last: one more than `plies`.
    pub positions: Vec<Game>,
    pub plies: Vec<PgnPly>,
    /// The result as the movetext (or else the `Result` tag) gives it.
    pub result: String,
    /// What stopped the reading, with where: the plies before it are kept.
    pub error: Option<String>,
}

/// Why a PGN gives no game to review.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PgnError {
    #[error("no game in the PGN: paste the moves (1. e4 e5 ...) with or without tags")]
    Empty,
    #[error("more than {MAX_GAMES} games in one PGN: send at most {MAX_GAMES}")]
    TooManyGames,
    #[error("there is no game {asked}: the PGN holds {games}")]
    NoSuchGame { asked: usize, games: usize },
    #[error(
        "game {game} is longer than {MAX_PLIES} plies: a review takes at most {MAX_PLIES} (cut the game to its endgame, with [SetUp \"1\"] and [FEN])"
    )]
    TooLong { game: usize },
    #[error("game {game}: {reason}")]
    Unreadable { game: usize, reason: String },
}

/// The games of `text`, named, and the `wanted`-th (1 for the first) replayed.
#[cfg(feature = "ssr")]
pub fn read_pgn(text: &str, wanted: usize) -> Result<(Vec<GameTitle>, PgnGame), PgnError> {
    let mut reader = Reader::new(text.as_bytes());
    let mut visitor = Games {
        wanted,
        titles: Vec::new(),
        chosen: None,
        too_long: false,
    };
    loop {
        match reader.read_game(&mut visitor) {
            Ok(Some(())) => {}
            Ok(None) => break,
            Err(err) => {
                let game = visitor.titles.len().max(1);
                match visitor.chosen.as_mut() {
                    Some(chosen) if game == wanted => {
                        chosen
                            .error
                            .get_or_insert_with(|| format!("game {game}: {err}"));
                        break;
                    }
                    _ => {
                        return Err(PgnError::Unreadable {
                            game,
                            reason: err.to_string(),
                        });
                    }
                }
            }
        }
        if visitor.too_long {
            return Err(PgnError::TooLong { game: wanted });
        }
        if visitor.titles.len() > MAX_GAMES {
            return Err(PgnError::TooManyGames);
        }
    }
    let games = visitor.titles.len();
    match visitor.chosen {
        _ if games == 0 => Err(PgnError::Empty),
        Some(game) => Ok((visitor.titles, game)),
        None => Err(PgnError::NoSuchGame {
            asked: wanted,
            games,
        }),
    }
}

/// "34…Kf6" or "34.Kf6": the move's number and its SAN, as players write it.
pub fn move_label(before: &Game, san: &str) -> String {
    let number = before.fullmoves();
    match before.turn() {
        Color::White => format!("{number}.{san}"),
        Color::Black => format!("{number}…{san}"),
    }
}

#[cfg(feature = "ssr")]
struct Games {
    wanted: usize,
    titles: Vec<GameTitle>,
    chosen: Option<PgnGame>,
    too_long: bool,
}

#[cfg(feature = "ssr")]
impl Games {
    fn building(&mut self) -> Option<&mut PgnGame> {
        self.chosen.as_mut().filter(|game| game.error.is_none())
    }
}

#[cfg(feature = "ssr")]
fn tag_value(tags: &[(String, String)], name: &str) -> Option<String> {
    tags.iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.clone())
}

#[cfg(feature = "ssr")]
fn title_of(index: usize, tags: &[(String, String)]) -> String {
    let known = |name| tag_value(tags, name).filter(|v| !v.is_empty() && v != "?");
    let mut title = match (known("White"), known("Black")) {
        (Some(white), Some(black)) => format!("{white} – {black}"),
        _ => format!("Game {index}"),
    };
    if let Some(event) = known("Event") {
        title.push_str(&format!(", {event}"));
    }
    if let Some(result) = known("Result").filter(|r| r != "*") {
        title.push_str(&format!(" ({result})"));
    }
    title
}

/// The variant a `[Variant]` tag names, when it has tables here.
#[cfg(feature = "ssr")]
fn variant_named(name: &str) -> Result<Variant, String> {
    match name.trim().to_ascii_lowercase().as_str() {
        "" | "standard" | "chess" | "from position" | "normal" => Ok(Variant::Standard),
        "atomic" => Ok(Variant::Atomic),
        "antichess" | "giveaway" => Ok(Variant::Antichess),
        _ => Err(format!(
            "[Variant \"{name}\"]: no tables for it here (standard, atomic and antichess are reviewed)"
        )),
    }
}

#[cfg(feature = "ssr")]
impl Visitor for Games {
    type Tags = Vec<(String, String)>;
    type Movetext = ();
    type Output = ();

    fn begin_tags(&mut self) -> ControlFlow<(), Self::Tags> {
        ControlFlow::Continue(Vec::new())
    }

    fn tag(&mut self, tags: &mut Self::Tags, name: &[u8], value: RawTag<'_>) -> ControlFlow<()> {
        tags.push((
            String::from_utf8_lossy(name).into_owned(),
            String::from_utf8_lossy(&value.decode()).into_owned(),
        ));
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, tags: Self::Tags) -> ControlFlow<(), ()> {
        let index = self.titles.len() + 1;
        self.titles.push(GameTitle {
            index,
            title: title_of(index, &tags),
        });
        if index != self.wanted {
            return ControlFlow::Break(());
        }
        let variant =
            tag_value(&tags, "Variant").map_or(Ok(Variant::Standard), |v| variant_named(&v));
        let setup_fen = tag_value(&tags, "FEN").filter(|f| !f.trim().is_empty());
        let mut error = None;
        let start = match variant {
            Ok(variant) => {
                let fen = setup_fen.as_deref().unwrap_or(INITIAL_FEN);
                parse_game_fen(variant, fen)
                    .map_err(|err| error = Some(format!("game {index}: [FEN \"{fen}\"]: {err}")))
                    .ok()
            }
            Err(ref reason) => {
                error = Some(format!("game {index}: {reason}"));
                None
            }
        };
        let result = tag_value(&tags, "Result").unwrap_or_else(|| "*".to_string());
        self.chosen = Some(PgnGame {
            variant: variant.unwrap_or_default(),
            tags,
            setup_fen,
            positions: start.into_iter().collect(),
            plies: Vec::new(),
            result,
            error,
        });
        ControlFlow::Continue(())
    }

    fn san(&mut self, _: &mut (), san_plus: SanPlus) -> ControlFlow<()> {
        let index = self.wanted;
        let Some(game) = self.building() else {
            return ControlFlow::Continue(());
        };
        if game.plies.len() >= MAX_PLIES {
            self.too_long = true;
            return ControlFlow::Break(());
        }
        let Some(pos) = game.positions.last() else {
            return ControlFlow::Continue(());
        };
        match san_plus.san.to_move(pos) {
            Ok(m) => {
                let (info, after) = MoveInfo::play(pos, m);
                game.plies.push(PgnPly {
                    san: info.san,
                    uci: info.uci,
                });
                game.positions.push(after);
            }
            Err(_) => {
                let label = move_label(pos, &san_plus.to_string());
                game.error = Some(format!(
                    "game {index}, move {label}: not a legal move in {} (the moves before it are reviewed)",
                    to_fen(pos)
                ));
            }
        }
        ControlFlow::Continue(())
    }

    fn outcome(&mut self, _: &mut (), outcome: Outcome) -> ControlFlow<()> {
        if let Some(game) = self.chosen.as_mut() {
            game.result = outcome.to_string();
        }
        ControlFlow::Continue(())
    }

    fn end_game(&mut self, _: ()) {}
}

#[cfg(all(test, feature = "ssr"))]
mod tests {
    use super::*;

    const TWO: &str = r#"[Event "Club"]
[White "Ann"]
[Black "Bob"]
[Result "1-0"]

1. e4 e5 2. Nf3 Nc6 1-0

[White "Cy"]
[Black "Di"]
[SetUp "1"]
[FEN "4k3/8/8/8/8/8/8/4K2R w K - 0 1"]

1. Rh7 Kd8 2. Kd2 (2. O-O) Kc8 *
"#;

    #[test]
    fn every_game_is_named_and_the_one_asked_for_replayed() {
        let (titles, game) = read_pgn(TWO, 2).expect("read");
        assert_eq!(titles.len(), 2);
        assert_eq!(titles[0].title, "Ann – Bob, Club (1-0)");
        assert_eq!(titles[1].title, "Cy – Di");
        assert_eq!(
            game.setup_fen.as_deref(),
            Some("4k3/8/8/8/8/8/8/4K2R w K - 0 1")
        );
        let sans: Vec<&str> = game.plies.iter().map(|p| p.san.as_str()).collect();
        assert_eq!(sans, ["Rh7", "Kd8", "Kd2", "Kc8"]);
        assert_eq!(game.plies[0].uci, "h1h7");
        assert_eq!(game.positions.len(), 5);
        assert_eq!(game.result, "*");
        assert_eq!(game.error, None);
        let (_, first) = read_pgn(TWO, 1).expect("read");
        assert_eq!(first.plies.len(), 4);
        assert_eq!(first.result, "1-0");
        assert_eq!(
            read_pgn(TWO, 3).err(),
            Some(PgnError::NoSuchGame { asked: 3, games: 2 })
        );
    }

    #[test]
    fn an_illegal_move_is_named_and_the_moves_before_it_kept() {
        let (_, game) = read_pgn("1. e4 e5 2. Ke3 Nc6 *", 1).expect("read");
        assert_eq!(game.plies.len(), 2);
        let error = game.error.expect("an error");
        assert!(
            error.starts_with("game 1, move 2.Ke3: not a legal move"),
            "{error}"
        );
        let (_, game) = read_pgn("[Variant \"Crazyhouse\"]\n\n1. e4 *", 1).expect("read");
        assert!(
            game.error
                .expect("an error")
                .contains("[Variant \"Crazyhouse\"]")
        );
        let (_, game) = read_pgn("[FEN \"8/8/8/8 w - - 0 1\"]\n\n1. Kd2 *", 1).expect("read");
        assert!(game.error.expect("an error").contains("[FEN"));
        assert_eq!(read_pgn("  \n", 1).err(), Some(PgnError::Empty));
    }

    #[test]
    fn variants_play_by_their_rules_and_long_games_are_refused() {
        let (_, game) = read_pgn("[Variant \"Antichess\"]\n\n1. e3 b5 2. Bxb5 *", 1).expect("read");
        assert_eq!(game.variant, Variant::Antichess);
        assert_eq!(game.plies.len(), 3);
        let shuffle = "Nf3 Nf6 Ng1 Ng8 ".repeat(MAX_PLIES / 4 + 1);
        assert_eq!(
            read_pgn(&shuffle, 1).err(),
            Some(PgnError::TooLong { game: 1 })
        );
    }
}
