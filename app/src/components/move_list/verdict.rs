//! The one-line verdict on the position: who wins, draws or loses and the DTZ,
//! or why there is no verdict (mate, stalemate, outside the tables, illegal).

use leptos::prelude::*;
use shakmaty::{Color, Position};

use crate::{
    api::{InstalledTables, TablebaseAnswer},
    components::{
        board::pieces::color_name,
        move_list::{
            mate,
            outcome::{Label, Outcome},
        },
    },
    game::{Game, end_words},
    needed_table::unknown_reason,
    position::piece_count,
    source::UNREACHABLE,
    text::capitalized,
    variant::Variant,
};

/// Why there is no verdict, when the answer did not come.
#[derive(Clone, Debug, PartialEq)]
pub enum NoAnswer {
    /// The server answered with a reason (a damaged table, overload, ...).
    Refused(String),
    /// The server could not be reached: worth a retry.
    Unreachable(String),
}

impl NoAnswer {
    /// Sorts an error message from `source` into the two kinds.
    pub fn from_message(message: String) -> NoAnswer {
        if message.starts_with(UNREACHABLE) {
            NoAnswer::Unreachable(message)
        } else {
            NoAnswer::Refused(message)
        }
    }
}

/// The verdict in words plus a class for its colour (`win`, `cursed`,
/// `draw`, `loss`, `unknown`, `error`), seen from the side to move.
/// `installed` (when known) lets an unknown position say which table it needs.
pub fn status_line(
    pos: &Game,
    answer: Result<&TablebaseAnswer, &NoAnswer>,
    installed: Option<&InstalledTables>,
) -> (String, &'static str) {
    let side = capitalized(color_name(pos.turn()));
    let other = capitalized(color_name(pos.turn().other()));
    if let Some(words) = end_words(pos) {
        return (words, "loss");
    }
    if pos.is_checkmate() {
        return (format!("Checkmate: {other} wins"), "loss");
    }
    if pos.is_stalemate() {
        return ("Stalemate: draw".to_string(), "draw");
    }
    if pos.is_insufficient_material() {
        return ("Insufficient material: draw".to_string(), "draw");
    }
    let answer = match answer {
        Ok(answer) => answer,
        Err(NoAnswer::Unreachable(message)) => {
            return (
                format!("{message}. The moves below are not analysed."),
                "error",
            );
        }
        Err(NoAnswer::Refused(message)) => {
            return (format!("No answer from the tables: {message}"), "error");
        }
    };
    let dtz = answer
        .pos
        .dtz
        .map(|d| format!(" · DTZ {}", d.abs()))
        .unwrap_or_default();
    let mate = mate::verdict(mate::root_dtm(answer), &side, &other)
        .or_else(|| missing_dtm(pos, answer, installed))
        .map(|words| format!(" · {words}"))
        .unwrap_or_default();
    let dtz = format!("{mate}{dtz}");
    let text = match Label::of(answer.pos.category) {
        Label::Win => format!("{side} to move wins{dtz}"),
        Label::MaybeWin => format!("{side} to move wins (maybe: DTZ rounding){dtz}"),
        Label::CursedWin => {
            format!("{side} to move has a win prevented by the 50-move rule (cursed win){dtz}")
        }
        Label::Draw => format!("Draw ({side} to move)"),
        Label::BlessedLoss => {
            format!("{side} to move has a loss saved by the 50-move rule (blessed loss){dtz}")
        }
        Label::MaybeLoss => format!("{side} to move loses (maybe: DTZ rounding){dtz}"),
        Label::Loss => format!("{side} to move loses{dtz}"),
        Label::Unknown => not_in_tables(pos, installed),
    };
    // Where the local tables end, an upstream server's answer says whose
    // it is: the server's page and the browser's alike (it learns the
    // server from the API's `X-Upstream-Host`).
    let text = match &answer.source {
        Some(host) => format!("{text} · answer from {host}"),
        None => text,
    };
    (text, Outcome::of(answer.pos.category).class())
}

/// Why a won or lost standard position has no mate in N: its DTM table
/// failed (damaged or unreadable: the server said which), or is not
/// installed (castling rights are never in DTM tables; say nothing).
fn missing_dtm(
    pos: &Game,
    answer: &TablebaseAnswer,
    installed: Option<&InstalledTables>,
) -> Option<String> {
    let decisive = answer.pos.category.is_win() || answer.pos.category.flip().is_win();
    if !decisive || pos.variant() != Variant::Standard || pos.castles().any() {
        return None;
    }
    if let Some(failed) = answer.root_dtm_unavailable() {
        return Some(format!(
            "mate in N unknown: the {} DTM table {}",
            failed.material(),
            failed.problem.words()
        ));
    }
    let name = crate::material::table_name(pos.board());
    let installed = installed?;
    (installed.dtm.binary_search(&name).is_err())
        .then(|| format!("mate in N unknown: no {name} DTM table"))
}

/// An unknown position's verdict: which table it needs, when the page knows.
fn not_in_tables(pos: &Game, installed: Option<&InstalledTables>) -> String {
    let pieces = piece_count(pos);
    match installed.and_then(|tables| unknown_reason(pos, tables)) {
        Some(reason) => format!("Not in the installed tables: {reason}"),
        None => format!("Not in the installed tables ({pieces} pieces)"),
    }
}

/// Who is to move, for the line under the status.
pub fn turn_text(turn: Color) -> String {
    format!("{} to move", capitalized(color_name(turn)))
}

#[component]
pub fn Status(text: String, class: &'static str) -> impl IntoView {
    view! {
        <p class=format!("status {class}") role="status" aria-live="polite">
            {text}
        </p>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Game;

    fn parse_fen(fen: &str) -> Result<Game, crate::position::FenError> {
        crate::position::parse_fen(fen).map(Game::Chess)
    }

    #[test]
    fn mate_stalemate_and_outside_the_tables() {
        let mate = parse_fen("k7/1Q6/1K6/8/8/8/8/8 b - - 0 1").expect("legal");
        let none = NoAnswer::Refused("-".to_string());
        assert_eq!(
            status_line(&mate, Err(&none), None).0,
            "Checkmate: White wins"
        );
        let stalemate = parse_fen("k7/8/1QK5/8/8/8/8/8 b - - 0 1").expect("legal");
        assert_eq!(status_line(&stalemate, Err(&none), None).1, "draw");
        let five = parse_fen("k7/8/8/8/8/8/8/KQRN4 w - - 0 1").expect("legal");
        let unknown = TablebaseAnswer {
            pos: crate::api::PositionInfo::unknown(),
            moves: Vec::new(),
            dtm_unavailable: Vec::new(),
            source: None,
            ask_again: false,
        };
        let installed = InstalledTables::default();
        let (text, class) = status_line(&five, Ok(&unknown), Some(&installed));
        assert_eq!(text, "Not in the installed tables: KQRNvK not installed");
        assert_eq!(class, "unknown");
        let mut kbnk = TablebaseAnswer {
            pos: crate::api::PositionInfo::unknown(),
            moves: Vec::new(),
            dtm_unavailable: Vec::new(),
            source: None,
            ask_again: false,
        };
        kbnk.pos.category = crate::api::Category::Win;
        kbnk.pos.dtm = Some(65);
        kbnk.pos.dtz = Some(64);
        let start = parse_fen("8/8/8/8/8/7B/8/Nk5K w - - 0 1").expect("legal");
        assert_eq!(
            status_line(&start, Ok(&kbnk), None).0,
            "White to move wins · White mates in 33 · DTZ 64"
        );
        // A win without DTM says which DTM table is missing.
        kbnk.pos.dtm = None;
        assert_eq!(
            status_line(&start, Ok(&kbnk), Some(&installed)).0,
            "White to move wins · mate in N unknown: no KBNvK DTM table · DTZ 64"
        );
        // A DTM table that failed says so, whether or not the list of
        // installed tables is known.
        kbnk.dtm_unavailable =
            crate::api::DtmUnavailable::from_header("KBNK.egtb.bz;problem=damaged;root");
        for installed in [None, Some(&installed)] {
            assert_eq!(
                status_line(&start, Ok(&kbnk), installed).0,
                "White to move wins · mate in N unknown: the KBNvK DTM table is damaged · DTZ 64"
            );
        }
        kbnk.dtm_unavailable =
            crate::api::DtmUnavailable::from_header("KBNK.egtb.bz;problem=unchecked;root");
        assert_eq!(
            status_line(&start, Ok(&kbnk), None).0,
            "White to move wins · mate in N unknown: the KBNvK DTM table was never checked · DTZ 64"
        );
        // One that failed for moves only leaves the root's words alone.
        kbnk.dtm_unavailable =
            crate::api::DtmUnavailable::from_header("KBK.egtb.bz;problem=unreadable");
        assert_eq!(
            status_line(&start, Ok(&kbnk), None).0,
            "White to move wins · DTZ 64"
        );
        // KQBvKQ without its DTM table, but its only winning move Qxc3
        // captures into KQBvK, mated in 12 plies: the root's mate is known.
        let kqbkq = parse_fen("8/8/3k4/8/8/2q5/8/1KQB4 w - - 0 1").expect("legal");
        let capture = "c1c3"
            .parse::<shakmaty::uci::UciMove>()
            .expect("uci")
            .to_move(&kqbkq)
            .expect("legal");
        let mut qxc3 = crate::api::MoveInfo::play(&kqbkq, capture).0;
        qxc3.pos.category = crate::api::Category::Loss;
        qxc3.pos.dtm = Some(-12);
        qxc3.pos.dtz = Some(-3);
        let mut edge = TablebaseAnswer {
            pos: crate::api::PositionInfo::unknown(),
            moves: vec![qxc3],
            dtm_unavailable: Vec::new(),
            source: None,
            ask_again: false,
        };
        edge.pos.category = crate::api::Category::Win;
        edge.pos.dtz = Some(4);
        assert_eq!(
            status_line(&kqbkq, Ok(&edge), Some(&installed)).0,
            "White to move wins · White mates in 7 · DTZ 4"
        );
        // An upstream server's answer names it, in the browser as on the server.
        edge.source = Some("tablebase.lichess.ovh".to_string());
        assert_eq!(
            status_line(&kqbkq, Ok(&edge), Some(&installed)).0,
            "White to move wins · White mates in 7 · DTZ 4 · answer from tablebase.lichess.ovh"
        );
        let down = NoAnswer::from_message(format!("{UNREACHABLE}: check your connection"));
        assert_eq!(
            status_line(&five, Err(&down), None),
            (
                "The server cannot be reached: check your connection. The moves below are not analysed."
                    .to_string(),
                "error"
            )
        );
    }
}
