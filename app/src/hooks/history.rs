//! This tab's line of moves: a start position, the moves played from it and
//! a cursor, so ←/→ and the history panel step through the game inside the
//! page instead of through the browser's history (which can leave the site
//! and jumps back across a FEN typed in or a position set up).
//!
//! The line follows the URL, the page's single source of the position, so
//! every way of moving (the board, the move list, the mainline, the browser's
//! back and forward) lands in it without telling it: a position one legal
//! move from the cursor extends the line there, a position already in the
//! line moves the cursor, anything else starts a new line.
//!
//! The URL holds the line too (`&from=<start>&moves=h1h7_e8d8`, beside the
//! position on show in `fen`), as practice links hold their moves, so a
//! reload, back/forward and a shared link keep the moves played.

use crate::url::{NavigateOptions, Query, use_navigate, use_query_map};
use leptos::prelude::*;
use shakmaty::{Position, Square};

use crate::{
    api::MoveInfo,
    hooks::last_moves::LastMoves,
    move_squares::move_squares,
    position::to_fen,
    source::{encode, position_href},
    {game::parse_game_fen, variant::Variant},
};

/// One move of the line and the position after it.
#[derive(Clone, Debug, PartialEq)]
pub struct Ply {
    pub san: String,
    pub uci: String,
    pub fen: String,
    /// The move's squares, to highlight it as the last move.
    pub squares: Option<(Square, Square)>,
}

/// A start position, the moves played from it, and where the board is.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    /// The rules the moves were played under.
    pub variant: Variant,
    pub start: String,
    pub plies: Vec<Ply>,
    /// 0 = the start, i = after the i-th move.
    pub cursor: usize,
}

impl Line {
    pub fn new(start: String) -> Line {
        Line::in_variant(Variant::Standard, start)
    }

    pub fn in_variant(variant: Variant, start: String) -> Line {
        Line {
            variant,
            start,
            plies: Vec::new(),
            cursor: 0,
        }
    }

    /// The position at an index (0 = the start), `None` past the end.
    pub fn fen_at(&self, index: usize) -> Option<&str> {
        match index.checked_sub(1) {
            None => Some(&self.start),
            Some(i) => self.plies.get(i).map(|p| p.fen.as_str()),
        }
    }

    fn index_of(&self, fen: &str) -> Option<usize> {
        if self.start == fen {
            return Some(0);
        }
        self.plies.iter().position(|p| p.fen == fen).map(|i| i + 1)
    }

    /// The line a URL names: `moves` (UCI) played from `start`, with the
    /// cursor on `at`; `None` if a move is not legal there or `at` is not
    /// in the line.
    pub fn replay(variant: Variant, start: String, moves: &str, at: &str) -> Option<Line> {
        let mut line = Line::in_variant(variant, start);
        for uci in moves.split('_').filter(|m| !m.is_empty()) {
            let from = line.fen_at(line.plies.len())?;
            let ply = find_ply(variant, from, &|m, _| m == uci)?;
            line.plies.push(ply);
        }
        line.cursor = line.index_of(at)?;
        Some(line)
    }

    /// The line's part of the URL (`&from=...&moves=...`), empty without moves.
    pub fn url_params(&self) -> (Option<String>, Option<String>) {
        if self.plies.is_empty() {
            return (None, None);
        }
        let moves: Vec<&str> = self.plies.iter().map(|p| p.uci.as_str()).collect();
        (Some(encode(&self.start)), Some(moves.join("_")))
    }

    /// Follows the board to `fen`; true if the line changed. A FEN holds the
    /// move number, so no position comes twice in one line.
    pub fn observe(&mut self, fen: &str) -> bool {
        if self.fen_at(self.cursor) == Some(fen) {
            return false;
        }
        if let Some(index) = self.index_of(fen) {
            self.cursor = index;
            return true;
        }
        let from = self.fen_at(self.cursor).unwrap_or(&self.start);
        match ply_between(self.variant, from, fen) {
            Some(ply) => {
                self.plies.truncate(self.cursor);
                self.plies.push(ply);
                self.cursor = self.plies.len();
            }
            None => *self = Line::in_variant(self.variant, fen.to_string()),
        }
        true
    }
}

/// The legal move from one position to the other, if there is one.
fn ply_between(variant: Variant, from: &str, to: &str) -> Option<Ply> {
    find_ply(variant, from, &|_, fen| fen == to)
}

/// The first legal move from `from` whose UCI and position after it
/// `wanted` accepts.
fn find_ply(variant: Variant, from: &str, wanted: &dyn Fn(&str, &str) -> bool) -> Option<Ply> {
    let pos = parse_game_fen(variant, from).ok()?;
    pos.legal_moves().into_iter().find_map(|m| {
        let (info, after) = MoveInfo::play(&pos, m);
        let fen = to_fen(&after);
        wanted(&info.uci, &fen).then(|| Ply {
            san: info.san,
            uci: info.uci,
            fen,
            squares: move_squares(&m),
        })
    })
}

/// A step through a line of moves, from a button or a key; the mainline
/// steps through its own line alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Start,
    Back,
    Forward,
    End,
}

impl Step {
    /// The index a step leads to from `at` in a line of `len` moves
    /// (0 = the start, `len` = after the last move).
    pub fn target(self, at: usize, len: usize) -> usize {
        match self {
            Step::Start => 0,
            Step::Back => at.saturating_sub(1),
            Step::Forward => (at + 1).min(len),
            Step::End => len,
        }
    }
}

/// The page's handle on the line.
#[derive(Clone, Copy)]
pub struct MoveHistory {
    line: RwSignal<Line>,
    variant: Memo<Variant>,
    /// The URL's position, which the line follows.
    current_fen: Memo<Option<String>>,
    /// Whether the URL brought moves (`&moves=`) not yet read into the line.
    pub from_url: RwSignal<bool>,
    /// Shows a position without adding a browser history entry.
    show: Callback<String>,
    last_moves: LastMoves,
}

impl MoveHistory {
    /// The line, tracked.
    pub fn with<T>(self, f: impl FnOnce(&Line) -> T) -> T {
        self.line.with(f)
    }

    /// Walks the line through these positions, each one move from the one
    /// before (or already in the line): a caller about to jump several moves
    /// ahead (the mainline's end) calls this first, so the moves in between
    /// are in the line too.
    pub fn follow(self, fens: &[String]) {
        for fen in fens {
            self.observe(fen);
        }
    }

    fn observe(self, fen: &str) {
        let changed = self
            .line
            .try_maybe_update(|l| {
                let changed = l.observe(fen);
                (changed, changed)
            })
            .unwrap_or(false);
        if changed {
            self.record_last_move(fen);
        }
    }

    /// The move that led to the cursor's position, highlighted again when
    /// stepping back to it.
    fn record_last_move(self, fen: &str) {
        let squares = self.line.with_untracked(|l| {
            l.cursor
                .checked_sub(1)
                .and_then(|i| l.plies.get(i))
                .and_then(|p| p.squares)
        });
        if let Some(squares) = squares {
            self.last_moves.record(fen.to_string(), squares);
        }
    }

    /// Reads the line from the URL (if `from_url`), then writes it back
    /// whenever it or the URL changes: a move or a link drops it from the
    /// URL, and the orientation's own writing may too. Called by the moves
    /// panel (a split part), so its code is not in the first download.
    pub fn keep_in_url(self) {
        let MoveHistory {
            line,
            variant,
            current_fen,
            from_url,
            ..
        } = self;
        let query = use_query_map();
        let navigate = use_navigate();
        let params = |q: &Query| (q.get("from"), q.get("moves"));
        Effect::new(move |_| {
            let (line_params, fen) = (line.with(Line::url_params), current_fen.get());
            let url_params = query.with(params);
            let Some(fen) = fen else {
                return;
            };
            if from_url.get_untracked() {
                from_url.set(false);
                if let (Some(start), Some(moves)) = url_params {
                    let start = start.replace('_', " ");
                    let replayed = Line::replay(variant.get_untracked(), start, &moves, &fen);
                    if let Some(replayed) = replayed.filter(|_| line.with(|l| l.plies.is_empty())) {
                        line.set(replayed);
                        self.record_last_move(&fen);
                    }
                }
                return;
            }
            // Encoded as the URL has them once written, for the comparison.
            let url_params = (url_params.0.map(|s| encode(&s)), url_params.1);
            if line_params == url_params || line.with(|l| l.fen_at(l.cursor) != Some(fen.as_str()))
            {
                return;
            }
            let mut href = position_href(variant.get_untracked(), &fen);
            if let (Some(start), Some(moves)) = line_params {
                href.push_str(&format!("&from={start}&moves={moves}"));
            }
            if query.with(|q| q.get("orientation")).as_deref() == Some("black") {
                href.push_str("&orientation=black");
            }
            let options = NavigateOptions {
                replace: true,
                scroll: false,
            };
            navigate(&href, options);
        });
    }

    /// Steps through the line; nothing when already there (← at the start
    /// stays on the page).
    pub fn step(self, step: Step) {
        let target = self
            .line
            .with_untracked(|l| step.target(l.cursor, l.plies.len()));
        self.go_to(target);
    }

    /// Shows a position without adding a browser history entry (stepping
    /// through a line must not pile up entries for the back button).
    pub fn show(self, fen: String) {
        self.show.run(fen);
    }

    /// Shows the position at an index of the line.
    pub fn go_to(self, index: usize) {
        let fen = self.line.with_untracked(|l| {
            if l.cursor == index {
                return None;
            }
            l.fen_at(index).map(str::to_string)
        });
        let Some(fen) = fen else {
            return;
        };
        self.line.update(|l| l.cursor = index);
        self.show.run(fen);
    }
}

/// The line for this tab, following the URL's position (`current_fen`) and
/// noting each move's squares in `last_moves`.
pub fn use_history(
    variant: Memo<Variant>,
    current_fen: Memo<Option<String>>,
    last_moves: LastMoves,
) -> MoveHistory {
    let navigate = use_navigate();
    let show = Callback::new(move |fen: String| {
        let options = NavigateOptions {
            replace: true,
            scroll: false,
        };
        navigate(&position_href(variant.get_untracked(), &fen), options);
    });
    let start = current_fen.get_untracked().unwrap_or_default();
    let history = MoveHistory {
        line: RwSignal::new(Line::in_variant(variant.get_untracked(), start)),
        variant,
        current_fen,
        from_url: RwSignal::new(false),
        show,
        last_moves,
    };
    Effect::new(move |_| {
        let variant = variant.get();
        let Some(fen) = current_fen.get() else {
            return;
        };
        // Other rules, other game: a new line.
        if history.line.with_untracked(|l| l.variant != variant) {
            history.line.set(Line::in_variant(variant, fen));
            return;
        }
        history.observe(&fen);
    });
    // Once the page is live (the server's page shows no moves, so
    // hydration finds what it rendered): whether the URL brings moves,
    // which the moves panel then loads (`keep_in_url`).
    let query = use_query_map();
    Effect::new(move |_| {
        let moves = query.with_untracked(|q| q.get("moves").is_some());
        history.from_url.set(moves);
    });
    history
}

#[cfg(test)]
mod tests {
    use super::*;

    const KRVK: &str = "4k3/8/8/8/8/8/8/4K2R w - - 0 1";
    const RH7: &str = "4k3/7R/8/8/8/8/8/4K3 b - - 1 1";
    const KD8: &str = "3k4/7R/8/8/8/8/8/4K3 w - - 2 2";
    const KF8: &str = "5k2/7R/8/8/8/8/8/4K3 w - - 2 2";

    #[test]
    fn a_move_extends_the_line() {
        let mut line = Line::new(KRVK.to_string());
        assert!(line.observe(RH7));
        assert!(line.observe(KD8));
        assert_eq!(line.cursor, 2);
        let sans: Vec<&str> = line.plies.iter().map(|p| p.san.as_str()).collect();
        assert_eq!(sans, ["Rh7", "Kd8"]);
        assert_eq!(line.plies[0].uci, "h1h7");
        assert!(
            !line.observe(KD8),
            "the same position again changes nothing"
        );
    }

    #[test]
    fn back_and_forward_move_the_cursor_and_keep_the_moves() {
        let mut line = Line::new(KRVK.to_string());
        line.observe(RH7);
        line.observe(KD8);
        line.observe(KRVK);
        assert_eq!(line.cursor, 0);
        line.observe(RH7);
        assert_eq!((line.cursor, line.plies.len()), (1, 2));
    }

    #[test]
    fn another_move_from_the_cursor_replaces_the_rest() {
        let mut line = Line::new(KRVK.to_string());
        line.observe(RH7);
        line.observe(KD8);
        line.observe(RH7);
        line.observe(KF8);
        assert_eq!(line.cursor, 2);
        assert_eq!(line.plies.len(), 2);
        assert_eq!(line.plies[1].san, "Kf8");
    }

    #[test]
    fn an_unrelated_position_starts_a_new_line() {
        let mut line = Line::new(KRVK.to_string());
        line.observe(RH7);
        let kqvk = "4k3/8/8/8/8/8/8/3QK3 w - - 0 1";
        line.observe(kqvk);
        assert_eq!(line, Line::new(kqvk.to_string()));
        // The same pieces with another clock are another position too.
        let later = "4k3/8/8/8/8/8/8/3QK3 w - - 40 1";
        line.observe(later);
        assert_eq!(line.start, later);
    }

    #[test]
    fn a_line_round_trips_through_the_url() {
        let mut line = Line::new(KRVK.to_string());
        line.observe(RH7);
        line.observe(KD8);
        line.observe(RH7);
        let (start, moves) = line.url_params();
        assert_eq!(start.as_deref(), Some("4k3/8/8/8/8/8/8/4K2R_w_-_-_0_1"));
        assert_eq!(moves.as_deref(), Some("h1h7_e8d8"));
        let replayed = Line::replay(Variant::Standard, KRVK.to_string(), "h1h7_e8d8", RH7);
        assert_eq!(replayed, Some(line));
        // An illegal move, or a position not in the line, gives none.
        assert_eq!(
            Line::replay(Variant::Standard, KRVK.to_string(), "h1a8_e8d8", RH7),
            None
        );
        assert_eq!(
            Line::replay(Variant::Standard, KRVK.to_string(), "h1h7", KD8),
            None
        );
        assert_eq!(Line::new(KRVK.to_string()).url_params(), (None, None));
    }

    #[test]
    fn steps_stay_inside_the_line() {
        assert_eq!(Step::Back.target(0, 3), 0);
        assert_eq!(Step::Forward.target(3, 3), 3);
        assert_eq!(Step::Forward.target(1, 3), 2);
        assert_eq!(Step::End.target(1, 3), 3);
        assert_eq!(Step::Start.target(2, 3), 0);
    }
}
