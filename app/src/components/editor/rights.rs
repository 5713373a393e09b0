//! The parts of a position the board does not show: castling rights, the
//! en passant square and the two clocks. The halfmove clock decides whether
//! a win is cursed, so the editor keeps it (from the position it opened on)
//! and lets the player set it.

use leptos::{prelude::*, wasm_bindgen::JsCast, web_sys};
use shakmaty::{Bitboard, Board, Color, File, Piece, Rank, Role, Setup, Square};

/// The four castling rights in FEN order, with the squares they need.
const CASTLING: [(char, Color, Square, Square); 4] = [
    ('K', Color::White, Square::E1, Square::H1),
    ('Q', Color::White, Square::E1, Square::A1),
    ('k', Color::Black, Square::E8, Square::H8),
    ('q', Color::Black, Square::E8, Square::A8),
];

#[derive(Clone, Copy)]
pub struct Rights {
    /// K, Q, k, q as the player ticked them.
    castling: RwSignal<[bool; 4]>,
    en_passant: RwSignal<Option<Square>>,
    halfmoves: RwSignal<u32>,
    fullmoves: RwSignal<u32>,
}

impl Rights {
    pub fn new(setup: &Setup) -> Self {
        let castling = CASTLING.map(|(_, _, _, rook)| setup.castling_rights.contains(rook));
        Rights {
            castling: RwSignal::new(castling),
            en_passant: RwSignal::new(setup.ep_square),
            halfmoves: RwSignal::new(setup.halfmoves),
            fullmoves: RwSignal::new(setup.fullmoves.get()),
        }
    }

    /// The FEN's last four fields. Rights the board no longer allows (a
    /// king or rook moved away) are left out rather than refused.
    pub fn fen_fields(self, board: &Board, turn: Color) -> String {
        let ticked = self.castling.get();
        let castling: String = CASTLING
            .iter()
            .zip(ticked)
            .filter(|(right, on)| *on && castling_possible(board, right))
            .map(|((c, ..), _)| *c)
            .collect();
        let castling = if castling.is_empty() {
            "-".to_string()
        } else {
            castling
        };
        let ep = self
            .en_passant
            .get()
            .filter(|sq| en_passant_squares(board, turn).contains(sq))
            .map_or("-".to_string(), |sq| sq.to_string());
        format!(
            "{castling} {ep} {} {}",
            self.halfmoves.get(),
            self.fullmoves.get().max(1)
        )
    }

    pub fn controls(self, board: RwSignal<Board>, turn: RwSignal<Color>) -> impl IntoView {
        view! {
            <fieldset class="castling">
                <legend>"Castling rights"</legend>
                {self.castling_boxes(board)}
            </fieldset>
            {self.clocks(board, turn)}
        }
    }

    /// A box per castling right, which only a king and rook on their
    /// squares can have: the others are greyed out and left off the FEN.
    fn castling_boxes(self, board: RwSignal<Board>) -> impl IntoView {
        let castling = self.castling;
        CASTLING
            .iter()
            .enumerate()
            .map(|(i, right)| {
                let right = *right;
                let possible = move || board.with(|b| castling_possible(b, &right));
                let (label, name) = castling_label(&right);
                view! {
                    <label title=label>
                        // The FEN letters alone read alike to a screen reader.
                        <input
                            type="checkbox"
                            aria-label=name
                            name=format!("castling-{}", right.0)
                            prop:checked=move || castling.get()[i] && possible()
                            disabled=move || !possible()
                            on:change=move |ev| {
                                let on = checked(&ev);
                                castling.update(|c| c[i] = on);
                            }
                        />
                        {right.0.to_string()}
                    </label>
                }
            })
            .collect_view()
    }

    /// En passant, whose squares follow the board and the side to move,
    /// and the two clocks.
    fn clocks(self, board: RwSignal<Board>, turn: RwSignal<Color>) -> impl IntoView {
        let Rights {
            en_passant,
            halfmoves,
            fullmoves,
            ..
        } = self;
        let ep_options = move || {
            let squares = board.with(|b| en_passant_squares(b, turn.get()));
            let current = en_passant.get();
            squares
                .into_iter()
                .map(|sq| {
                    view! {
                        <option value=sq.to_string() selected=current == Some(sq)>{sq.to_string()}</option>
                    }
                })
                .collect_view()
        };
        view! {
            <div class="clocks">
                <label>
                    "En passant "
                    <select
                        name="en-passant"
                        on:change=move |ev| en_passant.set(selected_square(&ev))
                    >
                        <option value="-" selected=move || en_passant.get().is_none()>"none"</option>
                        {ep_options}
                    </select>
                </label>
                <label title="Plies since the last capture or pawn move: it decides whether a win comes in time for the 50-move rule">
                    "Halfmove clock "
                    <input
                        type="number"
                        name="halfmoves"
                        min="0"
                        max="150"
                        prop:value=move || halfmoves.get().to_string()
                        on:input=move |ev| halfmoves.set(number(&ev).unwrap_or(0))
                    />
                </label>
                <label>
                    "Move number "
                    <input
                        type="number"
                        name="fullmoves"
                        min="1"
                        prop:value=move || fullmoves.get().to_string()
                        on:input=move |ev| fullmoves.set(number(&ev).unwrap_or(1).max(1))
                    />
                </label>
            </div>
        }
    }
}

/// Whether the king and rook of a castling right stand on their squares.
fn castling_possible(
    board: &Board,
    &(_, color, king, rook): &(char, Color, Square, Square),
) -> bool {
    board.piece_at(king)
        == Some(Piece {
            color,
            role: Role::King,
        })
        && board.piece_at(rook)
            == Some(Piece {
                color,
                role: Role::Rook,
            })
}

/// A castling right's tooltip, and its name for screen readers.
fn castling_label(&(c, ..): &(char, Color, Square, Square)) -> (&'static str, &'static str) {
    match c {
        'K' => ("White may castle king side", "White O-O"),
        'Q' => ("White may castle queen side", "White O-O-O"),
        'k' => ("Black may castle king side", "Black O-O"),
        _ => ("Black may castle queen side", "Black O-O-O"),
    }
}

/// The squares a pawn of the side to move could capture en passant on: an
/// enemy pawn just beside one of ours, with the two squares it crossed empty.
pub fn en_passant_squares(board: &Board, turn: Color) -> Vec<Square> {
    let (their_rank, crossed, start) = match turn {
        Color::White => (Rank::Fifth, Rank::Sixth, Rank::Seventh),
        Color::Black => (Rank::Fourth, Rank::Third, Rank::Second),
    };
    let ours = board.by_piece(Piece {
        color: turn,
        role: Role::Pawn,
    });
    let theirs = board.by_piece(Piece {
        color: turn.other(),
        role: Role::Pawn,
    });
    File::ALL
        .into_iter()
        .filter(|&file| {
            let pawn = Square::from_coords(file, their_rank);
            let beside = Bitboard::from_iter(
                [file.offset(-1), file.offset(1)]
                    .into_iter()
                    .flatten()
                    .map(|f| Square::from_coords(f, their_rank)),
            );
            theirs.contains(pawn)
                && (ours & beside).any()
                && board.piece_at(Square::from_coords(file, crossed)).is_none()
                && board.piece_at(Square::from_coords(file, start)).is_none()
        })
        .map(|file| Square::from_coords(file, crossed))
        .collect()
}

fn checked(ev: &leptos::ev::Event) -> bool {
    ev.target()
        .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
        .is_some_and(|input| input.checked())
}

fn number(ev: &leptos::ev::Event) -> Option<u32> {
    ev.target()
        .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
        .and_then(|input| input.value().trim().parse().ok())
}

fn selected_square(ev: &leptos::ev::Event) -> Option<Square> {
    ev.target()
        .and_then(|t| t.dyn_into::<web_sys::HtmlSelectElement>().ok())
        .and_then(|select| select.value().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::fen::Fen;

    fn setup(fen: &str) -> Setup {
        Fen::from_ascii(fen.as_bytes()).expect("fen").into_setup()
    }

    #[test]
    fn en_passant_needs_a_pawn_beside_and_the_path_clear() {
        let s = setup("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1");
        assert_eq!(en_passant_squares(&s.board, Color::White), vec![Square::D6]);
        let s = setup("4k3/3p4/8/3pP3/8/8/8/4K3 w - - 0 1");
        assert!(en_passant_squares(&s.board, Color::White).is_empty());
        let s = setup("4k3/8/8/8/2Pp4/8/8/4K3 b - c3 0 1");
        assert_eq!(en_passant_squares(&s.board, Color::Black), vec![Square::C3]);
    }

    #[test]
    fn castling_needs_king_and_rook_at_home() {
        let s = setup("r3k3/8/8/8/8/8/8/4K2R w Kq - 3 40");
        assert!(castling_possible(&s.board, &CASTLING[0]));
        assert!(!castling_possible(&s.board, &CASTLING[1]));
        assert!(castling_possible(&s.board, &CASTLING[3]));
    }
}
