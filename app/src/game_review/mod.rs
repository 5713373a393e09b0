//! The review of a whole game (`POST /review` and the `/review` page): its
//! PGN read (`pgn`), the first position the installed tables cover found,
//! and from there every move of both sides judged by the practice judge
//! (`practice::judge`), with the moments the result changed hands, the
//! counts per side, the chart's points and the annotated PGN (`annotate`).
//!
//! The server probes the positions ([`positions_to_judge`]) and hands the
//! answers to [`assemble`]; the API and the page show what it makes, so
//! they say the same.

pub mod annotate;
pub mod pgn;

use serde::{Deserialize, Serialize};
use shakmaty::{Color, Position, uci::UciMove};

use crate::{
    api::{Category, InstalledTables, MoveInfo, TablebaseAnswer},
    game::{Game, parse_game_fen},
    needed_table::unknown_reason,
    position::{piece_count, to_fen},
    practice::{
        defence::{Metric, best_moves},
        judge::{Judgement, Mark, Standing, judge},
    },
    source::encode,
    variant::Variant,
};
use pgn::{GameTitle, PgnGame, PgnPly, move_label};

/// The page, and the API's route (`POST`).
pub const REVIEW_PATH: &str = "/review";
/// The chart of a review, an SVG the server draws from the points in its query.
pub const REVIEW_CHART_PATH: &str = "/review/chart.svg";
/// PGN's media type, for the body and for `Accept`.
pub const PGN_MEDIA_TYPE: &str = "application/x-chess-pgn";
/// The largest PGN body a review reads.
pub const MAX_BODY_BYTES: usize = 1 << 20;

/// A game reviewed: every ply with its verdict, the story and the counts.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct GameReview {
    /// The game reviewed, 1 for the first of the PGN.
    pub game: usize,
    /// How many games the PGN holds.
    pub games: usize,
    /// The games' names, for picking another ("Ann – Bob, Club (1-0)").
    pub titles: Vec<String>,
    pub variant: Variant,
    /// The game's tags, in the PGN's order.
    pub tags: Vec<Tag>,
    /// The position the game starts from.
    pub start_fen: String,
    /// Whether it starts from a position of its own (`[SetUp "1"]`).
    pub from_position: bool,
    /// `1-0`, `0-1`, `1/2-1/2` or `*`.
    pub result: String,
    /// The first ply the tables judge; `None` when they judge none.
    pub judged_from: Option<usize>,
    /// Why some plies are not judged (before the tables' reach, or the
    /// time budget), in words.
    pub not_judged: Option<String>,
    /// What stopped reading the PGN, with where (the page reviews the
    /// moves before it; the API refuses such a PGN with 400).
    pub error: Option<String>,
    pub plies: Vec<ReviewedPly>,
    /// The moments the result changed hands, in order.
    pub moments: Vec<Moment>,
    pub counts: Counts,
    /// The chart of the judged plies (a path on this server), if any.
    pub chart: Option<String>,
    /// The link that reopens this review.
    pub link: String,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Tag {
    pub name: String,
    pub value: String,
}

/// What the review says of one ply.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Judged: see `judgement`.
    Judged,
    /// Before the first position the tables cover (castling rights, or
    /// more pieces than installed): shown, not judged.
    BeforeTables,
    /// In the tables' reach, but they do not know the result (a table
    /// not installed).
    Unknown,
    /// Not judged: the review's time budget ran out, or the tables failed.
    NotJudged,
}

/// One ply of the game.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ReviewedPly {
    /// 0 for the game's first ply.
    pub ply: usize,
    /// "34…Kf6".
    pub label: String,
    /// The side that played it: "white" or "black".
    pub side: String,
    pub san: String,
    pub uci: String,
    /// The position before the move.
    pub fen: String,
    pub verdict: Verdict,
    /// The practice judge's mark, with the result before and after in the
    /// mover's view.
    pub judgement: Option<Judgement>,
    /// What distances were compared in: "dtm", or "dtz" where DTM is not known.
    pub metric: Option<String>,
    /// Every best move of the position (SAN), when judged.
    pub best: Vec<String>,
    /// In words: "slower: was mate in 12, now mate in 14; best Rh7".
    pub words: Option<String>,
    /// The PGN's NAG: 4 (`??`) for a mistake, 2 (`?`) for a slower move.
    pub nag: Option<u8>,
}

/// A moment the result changed hands.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Moment {
    pub ply: usize,
    /// The side that gave it away: "white" or "black".
    pub side: String,
    /// "54…Rd1?? threw the draw away: now White mates in 19; 54…Kg7 held".
    pub words: String,
}

/// The marks of one side's judged moves.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SideCounts {
    pub best: usize,
    pub slower: usize,
    pub mistake: usize,
    /// In the tables' reach but not judged (unknown, or not probed).
    pub not_judged: usize,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub white: SideCounts,
    pub black: SideCounts,
}

fn side_name(side: Color) -> &'static str {
    match side {
        Color::White => "white",
        Color::Black => "black",
    }
}

fn side_title(side: Color) -> &'static str {
    match side {
        Color::White => "White",
        Color::Black => "Black",
    }
}

/// The first ply whose position the tables cover: no castling rights and
/// at most `max_pieces` pieces (pieces only go, castling rights never
/// come back, so every later position is covered too).
pub fn first_covered(game: &PgnGame, max_pieces: usize) -> Option<usize> {
    game.plies
        .iter()
        .zip(&game.positions)
        .position(|(_, pos)| covered(pos, max_pieces))
}

fn covered(pos: &Game, max_pieces: usize) -> bool {
    pos.castles().is_empty() && piece_count(pos) <= max_pieces
}

/// The FENs the review needs answers for, in order: the positions before
/// each ply from `judged_from` on.
pub fn positions_to_judge(game: &PgnGame, judged_from: Option<usize>) -> Vec<String> {
    let Some(from) = judged_from else {
        return Vec::new();
    };
    game.positions[from..game.plies.len()]
        .iter()
        .map(to_fen)
        .collect()
}

/// Why plies are not judged, when none of the game is within reach.
fn outside_words(game: &PgnGame, max_pieces: usize) -> String {
    let fewest = game.positions.iter().map(piece_count).min().unwrap_or(0);
    if max_pieces == 0 {
        format!(
            "No {} tables are installed here: no move is judged.",
            game.variant.label().to_lowercase()
        )
    } else if fewest > max_pieces {
        format!(
            "The game never comes down to {max_pieces} pieces, the most the installed \
             tables hold (its fewest: {fewest}): no move is judged."
        )
    } else if game.plies.is_empty() {
        "The game has no moves to judge.".to_string()
    } else {
        "Every position with few enough pieces still has castling rights, which the \
         tables do not cover: no move is judged."
            .to_string()
    }
}

/// The review of `game` (the `index`-th of `titles`) from the answers of
/// [`positions_to_judge`], in order: `Err` is why an answer did not come
/// (the time budget, a failing table); answers short of the positions
/// leave the rest not judged. `installed` (the variant's tables, sorted)
/// names the table a position the tables do not know needs.
pub fn assemble(
    titles: &[GameTitle],
    index: usize,
    game: &PgnGame,
    (max_pieces, installed): (usize, &[String]),
    answers: &[Result<TablebaseAnswer, String>],
) -> GameReview {
    let judged_from = first_covered(game, max_pieces);
    let mut not_judged = match judged_from {
        None => Some(outside_words(game, max_pieces)),
        Some(0) => None,
        Some(from) => Some(format!(
            "The tables judge the game from {} on; the moves before are shown, not judged \
             (castling rights, or more than {max_pieces} pieces).",
            move_label(&game.positions[from], &game.plies[from].san)
        )),
    };
    let mut plies = Vec::with_capacity(game.plies.len());
    for (i, (ply, pos)) in game.plies.iter().zip(&game.positions).enumerate() {
        let answer = judged_from
            .filter(|&from| i >= from)
            .map(|from| answers.get(i - from));
        let reviewed = review_ply(i, ply, pos, answer, installed);
        if let (Verdict::NotJudged, Some(Some(Err(reason)))) = (reviewed.verdict, answer) {
            not_judged.get_or_insert_with(|| reason.clone());
        }
        plies.push(reviewed);
    }
    let moments = moments(&plies);
    let counts = counts(&plies);
    let chart = chart_href(game, judged_from, &plies, &moments);
    let start = game.positions.first();
    GameReview {
        game: index,
        games: titles.len(),
        titles: titles.iter().map(|t| t.title.clone()).collect(),
        variant: game.variant,
        tags: game
            .tags
            .iter()
            .map(|(name, value)| Tag {
                name: name.clone(),
                value: value.clone(),
            })
            .collect(),
        start_fen: start.map(to_fen).unwrap_or_default(),
        from_position: game.setup_fen.is_some(),
        result: game.result.clone(),
        judged_from,
        not_judged,
        error: game.error.clone(),
        moments,
        counts,
        chart,
        link: review_href(game),
        plies,
    }
}

fn review_ply(
    i: usize,
    ply: &PgnPly,
    pos: &Game,
    answer: Option<Option<&Result<TablebaseAnswer, String>>>,
    installed: &[String],
) -> ReviewedPly {
    let reviewed = ReviewedPly {
        ply: i,
        label: move_label(pos, &ply.san),
        side: side_name(pos.turn()).to_string(),
        san: ply.san.clone(),
        uci: ply.uci.clone(),
        fen: to_fen(pos),
        verdict: Verdict::BeforeTables,
        judgement: None,
        metric: None,
        best: Vec::new(),
        words: None,
        nag: None,
    };
    let answer = match answer {
        None => return reviewed,
        Some(Some(Ok(answer))) => answer,
        Some(Some(Err(reason))) => {
            return ReviewedPly {
                verdict: Verdict::NotJudged,
                words: Some(format!("not judged: {reason}")),
                ..reviewed
            };
        }
        Some(None) => {
            return ReviewedPly {
                verdict: Verdict::NotJudged,
                words: Some("not judged: the review's time budget ran out".to_string()),
                ..reviewed
            };
        }
    };
    match judge(answer, &ply.uci) {
        Some(judgement) => judged(reviewed, answer, judgement),
        None => ReviewedPly {
            verdict: Verdict::Unknown,
            words: Some(format!("not judged: {}", unknown_words(pos, installed))),
            ..reviewed
        },
    }
}

/// Why the tables do not know a position, as the explorer says it
/// ("KRPvKQ not installed").
fn unknown_words(pos: &Game, installed: &[String]) -> String {
    let installed = InstalledTables {
        tables: installed.to_vec(),
        ..InstalledTables::default()
    };
    unknown_reason(pos, &installed).map_or_else(
        || "the tables do not know this position".to_string(),
        |reason| reason.to_string(),
    )
}

/// A ply the practice judge marked: its best moves, metric, words and NAG.
fn judged(reviewed: ReviewedPly, answer: &TablebaseAnswer, judgement: Judgement) -> ReviewedPly {
    let best: Vec<String> = best_moves(answer).iter().map(|m| m.san.clone()).collect();
    let metric = match Metric::of(answer) {
        Metric::Dtm => "dtm",
        Metric::Dtz => "dtz",
    };
    let mut words = judgement.words();
    if judgement.mark != Mark::Best {
        words.push_str(&format!("; best {}", best.join(" or ")));
    }
    ReviewedPly {
        verdict: Verdict::Judged,
        metric: Some(metric.to_string()),
        best,
        words: Some(words),
        nag: nag(judgement.mark),
        judgement: Some(judgement),
        ..reviewed
    }
}

/// The NAG a mark gets: `??` a result lost under the 50-move rule, `?` a
/// result kept but further away, nothing for a best move.
pub fn nag(mark: Mark) -> Option<u8> {
    match mark {
        Mark::Best => None,
        Mark::Slower => Some(2),
        Mark::Mistake => Some(4),
    }
}

/// The NAG as a suffix to a move ("??", "?").
pub fn nag_suffix(nag: Option<u8>) -> &'static str {
    match nag {
        Some(4) => "??",
        Some(2) => "?",
        _ => "",
    }
}

/// A result in words that name the sides, for the mover `side`: "White
/// mates in 19", "a draw", "Black wins (DTZ 14)".
fn result_words(standing: Standing, side: Color) -> String {
    let mover = side_title(side);
    let other = side_title(side.other());
    match standing.category {
        Category::Draw => return "a draw".to_string(),
        Category::CursedWin => {
            return format!("a cursed win for {mover}, drawn by the 50-move rule");
        }
        Category::BlessedLoss => {
            return format!("a cursed win for {other}, drawn by the 50-move rule");
        }
        Category::Unknown => return "unknown".to_string(),
        _ => {}
    }
    let (winner, mate) = match standing.result() {
        Some(2) => (mover, standing.mate.filter(|&n| n > 0)),
        _ => (other, standing.mate.filter(|&n| n < 0).map(|n| -n)),
    };
    match (mate, standing.dtz) {
        (Some(n), _) => format!("{winner} mates in {n}"),
        (None, Some(d)) => format!("{winner} wins (DTZ {d})"),
        (None, None) => format!("{winner} wins"),
    }
}

/// The moments the result changed hands: every mistake, in words that
/// name the sides, with the move that kept the result.
fn moments(plies: &[ReviewedPly]) -> Vec<Moment> {
    plies
        .iter()
        .filter_map(|ply| {
            let judgement = ply.judgement.as_ref()?;
            if judgement.mark != Mark::Mistake {
                return None;
            }
            let side = if ply.side == "white" {
                Color::White
            } else {
                Color::Black
            };
            let was = judgement.before.result()?;
            let thrown = if was == 2 { "win" } else { "draw" };
            let kept = if was == 2 { "kept the win" } else { "held" };
            let best = ply.best.first().cloned().unwrap_or_default();
            let best_label = ply.label.replacen(&ply.san, &best, 1);
            Some(Moment {
                ply: ply.ply,
                side: ply.side.clone(),
                words: format!(
                    "{}{} threw the {thrown} away: now {}; {best_label} {kept}",
                    ply.label,
                    nag_suffix(ply.nag),
                    result_words(judgement.after, side)
                ),
            })
        })
        .collect()
}

fn counts(plies: &[ReviewedPly]) -> Counts {
    let mut counts = Counts::default();
    for ply in plies {
        let side = match ply.side.as_str() {
            "white" => &mut counts.white,
            _ => &mut counts.black,
        };
        match (ply.verdict, ply.judgement.as_ref().map(|j| j.mark)) {
            (Verdict::BeforeTables, _) => {}
            (_, Some(Mark::Best)) => side.best += 1,
            (_, Some(Mark::Slower)) => side.slower += 1,
            (_, Some(Mark::Mistake)) => side.mistake += 1,
            (_, None) => side.not_judged += 1,
        }
    }
    counts
}

/// A point of the chart: a result from White's view, with its distance
/// ("m12" White mates in 12, "-m7" Black mates in 7, "z14"/"-z14" a win
/// by DTZ, "d" a draw, "c"/"-c" a cursed win for White/Black, "u" unknown).
pub fn chart_point(white_view: Standing) -> String {
    match (white_view.category, white_view.result()) {
        (Category::CursedWin, _) => "c".to_string(),
        (Category::BlessedLoss, _) => "-c".to_string(),
        (_, Some(1)) => "d".to_string(),
        (_, Some(2)) => match white_view.mate {
            Some(n) => format!("m{}", n.abs()),
            None => format!("z{}", white_view.dtz.unwrap_or(0)),
        },
        (_, Some(_)) => match white_view.mate {
            Some(n) => format!("-m{}", n.abs()),
            None => format!("-z{}", white_view.dtz.unwrap_or(0)),
        },
        (_, None) => "u".to_string(),
    }
}

/// The chart's link: a point before each judged ply and one after the
/// last, the first at ply `from`, the moments marked by their point.
fn chart_href(
    game: &PgnGame,
    judged_from: Option<usize>,
    plies: &[ReviewedPly],
    moments: &[Moment],
) -> Option<String> {
    let from = judged_from?;
    let judged = &plies[from..];
    if judged.is_empty() {
        return None;
    }
    let white_view = |standing: Standing, side: &str| {
        if side == "white" {
            standing
        } else {
            standing.other_side()
        }
    };
    let mut points: Vec<String> = judged
        .iter()
        .map(|ply| match &ply.judgement {
            Some(j) => chart_point(white_view(j.before, &ply.side)),
            None => "u".to_string(),
        })
        .collect();
    let last = judged.last()?;
    points.push(match &last.judgement {
        Some(j) => chart_point(white_view(j.after, &last.side)),
        None => "u".to_string(),
    });
    let start = &game.positions[from];
    let first_ply =
        (start.fullmoves().get() as usize - 1) * 2 + usize::from(start.turn().is_black());
    let marks: Vec<String> = moments
        .iter()
        .map(|m| (m.ply + 1 - from).to_string())
        .collect();
    let mut href = format!(
        "{REVIEW_CHART_PATH}?from={first_ply}&s={}",
        points.join(".")
    );
    if !marks.is_empty() {
        href.push_str(&format!("&x={}", marks.join(".")));
    }
    Some(href)
}

/// The link that reopens a review: the start and the moves in the URL, as
/// practice keeps them (`/review?fen=...&moves=h1h7_e8d8`).
pub fn review_href(game: &PgnGame) -> String {
    let start = game
        .setup_fen
        .as_ref()
        .and(game.positions.first())
        .map(to_fen);
    review_link(
        game.variant,
        start.as_deref(),
        game.plies.iter().map(|p| p.uci.as_str()),
    )
}

/// The review link of a game from `start` (the initial position when
/// `None`) with its moves as UCI: also practice's "Review both sides".
pub fn review_link<'a>(
    variant: Variant,
    start: Option<&str>,
    moves: impl Iterator<Item = &'a str>,
) -> String {
    let mut href = format!("{REVIEW_PATH}?");
    if variant != Variant::Standard {
        href.push_str(&format!("variant={variant}&"));
    }
    if let Some(fen) = start {
        href.push_str(&format!("fen={}&", encode(fen)));
    }
    href.push_str("moves=");
    for (i, uci) in moves.enumerate() {
        if i > 0 {
            href.push('_');
        }
        href.push_str(uci);
    }
    href
}

/// The game a review link holds (see [`review_href`]): its start (the
/// initial position without `fen`) and its moves, replayed; a move that is
/// not legal ends it there, with why.
pub fn game_of_link(variant: Variant, fen: Option<&str>, moves: &str) -> Result<PgnGame, String> {
    let start = match fen {
        Some(fen) => parse_game_fen(variant, fen).map_err(|err| err.to_string())?,
        None => parse_game_fen(variant, pgn::INITIAL_FEN).map_err(|err| err.to_string())?,
    };
    let mut game = PgnGame {
        tags: Vec::new(),
        variant,
        setup_fen: fen.map(|_| to_fen(&start)),
        positions: vec![start],
        plies: Vec::new(),
        result: "*".to_string(),
        error: None,
    };
    for uci in moves.split(['_', ' ', ',']).filter(|s| !s.is_empty()) {
        if game.plies.len() >= pgn::MAX_PLIES {
            return Err(pgn::PgnError::TooLong { game: 1 }.to_string());
        }
        let pos = game.positions.last().expect("a start");
        let Some(m) = uci
            .parse::<UciMove>()
            .ok()
            .and_then(|u| u.to_move(pos).ok())
        else {
            game.error = Some(format!(
                "move {} ({uci}) is not legal in {} (the moves before it are reviewed)",
                game.plies.len() + 1,
                to_fen(pos)
            ));
            break;
        };
        let (info, after) = MoveInfo::play(pos, m);
        game.plies.push(PgnPly {
            san: info.san,
            uci: info.uci,
        });
        game.positions.push(after);
    }
    Ok(game)
}

// They read PGN, which only the server's build can (`pgn::read_pgn`).
#[cfg(all(test, feature = "ssr"))]
mod tests;
