//! The review of a practice game: the player's last moves marked, and the
//! tablebase's reply when it is its turn, from the answers the API already
//! gives (the page's answer cache serves those it has seen). The server
//! renders the page from the same review, so a reload, a shared link and
//! the page without JavaScript all show the same game.
//!
//! A review judges the last [`JUDGED_MOVES`] moves of the player only, so
//! a page costs a handful of answers however long its game is; the browser
//! judges the older ones afterwards, one answer at a time
//! (`practice::earlier`).

use leptos::prelude::Resource;
use serde::{Deserialize, Serialize};
use shakmaty::{Position, uci::UciMove};

use crate::{
    api::{Category, TablebaseAnswer},
    game::Game,
    hooks::answers::{Answers, sendable},
    json::{FromJson, Json, JsonError, bool_field, int_field, list_field, optional_field},
    needed_table::unknown_reason,
    position::to_fen,
    practice::{
        defence::{Further, choices_to_look_past, guessed, reply},
        earlier::{EarlierMarks, common_prefix},
        judge::{Judgement, judge},
        replay::PracticeGame,
        setup::Setup,
    },
    source::fetch_tables,
    text::capitalized,
};

/// How many of the player's last moves a review judges (8 plies of the
/// game): a page of a 600-ply game asks for as many answers as one of a
/// 10-ply game.
pub const JUDGED_MOVES: usize = 4;

/// The review of the URL's game, or why there is none; it travels in the
/// page read by `crate::json`, as the explorer's answers do.
pub type ReviewResource = Resource<Result<Review, String>, crate::json::PageCodec>;

/// What the answers say about one game.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Review {
    /// The moves reviewed: a review belongs to this game only.
    pub moves: Vec<String>,
    /// How many of the player's moves come before those judged here (the
    /// older ones are left to the browser).
    pub judged_from: usize,
    /// The player's moves from `judged_from` on, in order, marked; `None`
    /// where the tables do not know the result.
    pub judged: Vec<Option<Judgement>>,
    /// The tablebase's reply (UCI) when it is its turn.
    pub reply: Option<String>,
    /// The tablebase's move (the reply, or else the last move of the
    /// game reviewed) is a guess: the tables do not know what it leads to.
    pub guessed: bool,
    /// The answer of the start, for the choice of side.
    pub start: Option<TablebaseAnswer>,
    /// Why the tables cannot judge the start, when they cannot: said
    /// before a side is chosen.
    pub outside: Option<String>,
    /// The upstream server whose answers the review took where the local
    /// tables end (`serve --upstream`), to be named on the page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

impl FromJson for Review {
    fn from_json<J: Json>(value: &J) -> Result<Self, JsonError> {
        Ok(Review {
            moves: list_field(value, "moves")?,
            judged_from: int_field(value, "judged_from")?,
            judged: list_field(value, "judged")?,
            reply: optional_field(value, "reply")?,
            guessed: bool_field(value, "guessed")?,
            start: optional_field(value, "start")?,
            outside: optional_field(value, "outside")?,
            source: optional_field(value, "source")?,
        })
    }
}

/// One of the player's moves as a review knows it.
#[derive(Clone, Debug, PartialEq)]
pub enum Marked {
    Judged(Judgement),
    /// The tables do not know its result (a table not installed).
    Unknown,
    /// An older move the review left out, not (or not yet) judged in the
    /// browser: the page without JavaScript leaves it so.
    NotJudgedHere,
    /// Not reviewed yet: the review is of another game.
    Pending,
}

impl Marked {
    pub fn judgement(&self) -> Option<&Judgement> {
        match self {
            Marked::Judged(j) => Some(j),
            _ => None,
        }
    }
}

impl Review {
    /// The marks of a game's player moves that this review and the marks
    /// the browser added (`earlier`) know: those of the moves the games
    /// share (a review of the game before the last move, or after a
    /// takeback, still marks the moves before).
    pub fn marks_for(&self, game: &PracticeGame, earlier: &EarlierMarks) -> Vec<Marked> {
        let common = common_prefix(&self.moves, &game.setup.moves);
        let earlier_common = earlier.common(&game.setup.moves);
        // Up to `common` the two games are one: the same player plies,
        // counted alike.
        game.player_plies()
            .into_iter()
            .enumerate()
            .map(|(j, ply)| {
                let known = |judged: Option<&Judgement>| match judged {
                    Some(judged) => Marked::Judged(judged.clone()),
                    None => Marked::Unknown,
                };
                if ply < common && j >= self.judged_from {
                    return known(
                        self.judged
                            .get(j - self.judged_from)
                            .and_then(Option::as_ref),
                    );
                }
                if ply < earlier_common
                    && let Some(judged) = earlier.get(ply)
                {
                    return known(judged);
                }
                if ply < common {
                    Marked::NotJudgedHere
                } else {
                    Marked::Pending
                }
            })
            .collect()
    }

    /// Whether the tablebase's last move in `game` (its reply here, or the
    /// game's last move) was a guess, as far as this review knows.
    pub fn last_move_guessed(&self, game: &PracticeGame) -> bool {
        let common = common_prefix(&self.moves, &game.setup.moves);
        self.guessed && common == self.moves.len() && game.setup.moves.len() <= self.moves.len() + 1
    }

    /// The plies of the player's older moves this review left out.
    pub fn left_out(&self, game: &PracticeGame) -> Vec<usize> {
        let common = common_prefix(&self.moves, &game.setup.moves);
        game.player_plies()
            .into_iter()
            .take(self.judged_from)
            .take_while(|&ply| ply < common)
            .collect()
    }
}

/// Reviews the game a setup holds: its player's last [`JUDGED_MOVES`]
/// moves, the start's answer before a side is chosen, the reply on the
/// tablebase's turn; `Err` is why an answer did not come.
pub async fn review(answers: Answers, setup: Setup) -> Result<Review, String> {
    let game = PracticeGame::replay(&setup)?;
    let plies = game.player_plies();
    let judged_from = plies.len().saturating_sub(JUDGED_MOVES);
    let mut judged = Vec::new();
    for &ply in &plies[judged_from..] {
        let (fen, uci) = (to_fen(&game.positions[ply]), &game.plies[ply].uci);
        let (_, answer) = answers.answer(fen).await?;
        judged.push(judge(&answer, uci));
    }
    let start = if game.setup.side.is_none() {
        Some(answers.answer(setup.fen.clone()).await?.1)
    } else {
        None
    };
    let outside = match &start {
        Some(answer) if answer.pos.category == Category::Unknown => {
            Some(outside_words(&game.positions[0]).await)
        }
        _ => None,
    };
    let (reply, guessed) = match game.setup.side {
        Some(_) if game.end().is_none() && !game.players_turn() => {
            tablebase_move(answers, &game).await?
        }
        // The tablebase's last move was a guess if the tables do not know
        // the position it left the player.
        Some(side) if game.end().is_none() && last_ply_by(&game, side.other()) => {
            let known = answers.answer(game.fen()).await.ok();
            (
                None,
                known.is_some_and(|(_, a)| a.pos.category == Category::Unknown),
            )
        }
        _ => (None, false),
    };
    let source = upstream_source(answers, &game);
    Ok(Review {
        moves: game.setup.moves,
        judged_from,
        judged,
        reply,
        guessed,
        start,
        outside,
        source,
    })
}

/// The upstream server that answered the latest of the game's positions
/// whose answer the review took (the page's cache has each it asked for).
fn upstream_source(answers: Answers, game: &PracticeGame) -> Option<String> {
    game.positions
        .iter()
        .rev()
        .take(2 * JUDGED_MOVES + 2)
        .find_map(|pos| answers.read(&to_fen(pos), |a| a.source.clone()).flatten())
}

/// Whether the game's last ply was played by `side`.
fn last_ply_by(game: &PracticeGame, side: shakmaty::Color) -> bool {
    let plies = game.plies.len();
    plies > 0 && game.positions[plies - 1].turn() == side
}

/// Why the tables cannot judge a start, in the words the explorer uses
/// for the missing table: "KRPvKR not installed. The tablebase cannot
/// judge this position: …".
async fn outside_words(start: &Game) -> String {
    let reason = sendable(fetch_tables(start.variant()))
        .await
        .ok()
        .and_then(|installed| unknown_reason(start, &installed))
        .map(|reason| format!("{}. ", capitalized(&reason.to_string())))
        .unwrap_or_default();
    format!(
        "{reason}The tablebase cannot judge this position: your moves will not be \
         judged, and where it knows nothing better it guesses (never a move it \
         knows to lose while another is not known to)."
    )
}

/// The tablebase's move in the game's position and whether it is a
/// guess, and its answer asked for (the player's next move is judged
/// from it).
async fn tablebase_move(
    answers: Answers,
    game: &PracticeGame,
) -> Result<(Option<String>, bool), String> {
    let pos = game.current();
    let (_, answer) = answers.answer(to_fen(pos)).await?;
    let after = |uci: &str| -> Option<String> {
        let m = uci.parse::<UciMove>().ok()?.to_move(pos).ok()?;
        let mut next = pos.clone();
        next.play_unchecked(m);
        Some(to_fen(&next))
    };
    // A drawing side, or one that knows nothing better than unknown
    // moves, looks one move further: all asked at once.
    let choices: Vec<(String, String)> = choices_to_look_past(&answer)
        .into_iter()
        .filter_map(|m| Some((m.uci.clone(), after(&m.uci)?)))
        .collect();
    for (_, fen) in &choices {
        answers.prefetch(fen.clone());
    }
    let mut further = Vec::new();
    for (uci, fen) in choices {
        let seen = answers.answer(fen).await.ok().map(|(_, a)| Further::of(&a));
        further.push((uci, seen));
    }
    let chosen = reply(&answer, game.setup.seed, game.plies.len(), |m| {
        further
            .iter()
            .find(|(uci, _)| *uci == m.uci)
            .and_then(|(_, f)| *f)
    });
    let guess = chosen.is_some_and(guessed);
    let chosen = chosen.map(|m| m.uci.clone());
    if let Some(fen) = chosen.as_deref().and_then(after) {
        answers.prefetch(fen);
    }
    Ok((chosen, guess))
}

#[cfg(test)]
mod tests {
    use shakmaty::Color;

    use super::*;
    use crate::{
        practice::judge::{Mark, Standing},
        variant::Variant,
    };

    fn marked(san: &str) -> Judgement {
        let standing = Standing {
            category: Category::Win,
            mate: Some(3),
            dtz: Some(5),
        };
        Judgement {
            san: san.to_string(),
            mark: Mark::Best,
            before: standing,
            after: standing,
            best_san: san.to_string(),
        }
    }

    #[test]
    fn marks_carry_over_to_the_moves_two_games_share() {
        let setup =
            Setup::new(Variant::Standard, "4k3/8/8/8/8/8/8/4K2R w - - 0 1").playing(Color::White);
        let moves = |m: &[&str]| m.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let review = Review {
            moves: moves(&["h1h7", "e8d8", "e1d2", "d8c8"]),
            judged_from: 0,
            judged: vec![Some(marked("Rh7")), None],
            reply: None,
            guessed: false,
            start: None,
            outside: None,
            source: None,
        };
        // One move further: the first two are known, the new one pending.
        let longer = PracticeGame::replay(
            &setup.with_moves(moves(&["h1h7", "e8d8", "e1d2", "d8c8", "d2d3"])),
        )
        .expect("legal");
        let marks = review.marks_for(&longer, &EarlierMarks::default());
        assert_eq!(marks[0].judgement().map(|j| j.san.as_str()), Some("Rh7"));
        assert_eq!(marks[1], Marked::Unknown);
        assert_eq!(marks[2], Marked::Pending);
        // Another second move: only the first is this review's.
        let other = PracticeGame::replay(&setup.with_moves(moves(&["h1h7", "e8d8", "e1e2"])))
            .expect("legal");
        let marks = review.marks_for(&other, &EarlierMarks::default());
        assert!(marks[0].judgement().is_some());
        assert_eq!(marks[1], Marked::Pending);
    }

    #[test]
    fn older_moves_are_left_to_the_browser() {
        let setup =
            Setup::new(Variant::Standard, "4k3/8/8/8/8/8/8/4K2R w - - 0 1").playing(Color::White);
        // Six moves of each side, no position three times.
        let plies = [
            "h1h2", "e8d8", "h2h3", "d8c8", "h3h4", "c8b8", "h4h5", "b8a8", "h5h6", "a8b8", "h6h7",
            "b8c8",
        ];
        let moves: Vec<String> = plies.iter().map(|s| s.to_string()).collect();
        let game = PracticeGame::replay(&setup.with_moves(moves.clone())).expect("legal");
        assert_eq!(game.player_plies().len(), 6);
        let review = Review {
            moves: moves.clone(),
            judged_from: 6 - JUDGED_MOVES,
            judged: (0..JUDGED_MOVES).map(|_| Some(marked("R"))).collect(),
            reply: None,
            guessed: false,
            start: None,
            outside: None,
            source: None,
        };
        assert_eq!(review.left_out(&game), vec![0, 2]);
        let mut earlier = EarlierMarks::default();
        let marks = review.marks_for(&game, &earlier);
        assert_eq!(marks[..2], [Marked::NotJudgedHere, Marked::NotJudgedHere]);
        assert!(marks[2..].iter().all(|m| m.judgement().is_some()));
        // The browser judges the second; the first stays as it was.
        earlier.add(&moves, vec![(2, Some(marked("Rh3")))]);
        let marks = review.marks_for(&game, &earlier);
        assert_eq!(marks[0], Marked::NotJudgedHere);
        assert_eq!(marks[1].judgement().map(|j| j.san.as_str()), Some("Rh3"));
    }
}
