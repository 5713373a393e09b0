//! Reading a position from a FEN, with reasons a person can act on.
//!
//! Shared by the server (400 answers) and the browser (the FEN box and the
//! editor), so both sides reject the same positions with the same words.

use shakmaty::{
    Board, CastlingMode, Chess, Position, PositionError, PositionErrorKinds,
    fen::{Fen, ParseFenError},
};

/// Why a FEN does not describe a position we can explore.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FenError {
    #[error("no FEN given: pass the position as ?fen=...")]
    Missing,
    #[error("malformed FEN \"{fen}\": {part}")]
    Malformed { fen: String, part: &'static str },
    #[error("illegal position: {0}")]
    Illegal(String),
}

/// Parses a FEN as the API accepts it: underscores may stand for spaces, and
/// impossible en passant squares or castling rights are dropped rather than
/// rejected (many tools write them loosely). An "impossible check" (checkers
/// no legal last move could have given, as position editors and puzzles
/// produce) is accepted, as lila-tablebase and python-chess accept it: the
/// tables answer such positions. Everything else must be legal.
pub fn parse_fen(text: &str) -> Result<Chess, FenError> {
    position_of(setup_of(text)?)
}

/// A FEN as the page shows it: the position, or why there is none, and the
/// pieces the FEN places either way (an illegal position still shows them).
/// `P` is a `Game`, from [`crate::game::read_game_fen`].
#[derive(Debug, Clone, PartialEq)]
pub struct FenReading<P> {
    pub position: Result<P, FenError>,
    pub placement: Board,
}

/// Reads a FEN once for both the pieces it places and the position that
/// `position_of` (one rule set's parser) makes of it.
pub(crate) fn read_with<P>(
    text: &str,
    position_of: impl FnOnce(Fen) -> Result<P, FenError>,
) -> FenReading<P> {
    match setup_of(text) {
        Ok(fen) => FenReading {
            placement: fen.as_setup().board.clone(),
            position: position_of(fen),
        },
        Err(err) => FenReading {
            position: Err(err),
            placement: Board::empty(),
        },
    }
}

/// The FEN's fields, before any rule of chess is checked.
pub(crate) fn setup_of(text: &str) -> Result<Fen, FenError> {
    let text = text.trim().replace('_', " ");
    if text.is_empty() {
        return Err(FenError::Missing);
    }
    Fen::from_ascii(text.as_bytes()).map_err(|err| FenError::Malformed {
        fen: text.clone(),
        part: malformed_part(err),
    })
}

/// What breaking the rules of standard chess is called in an error (the
/// variants' words are in `variant`, which reads FENs through this module).
pub(crate) const STANDARD_RULE_WORDS: &str = "not a standard chess position";

fn position_of(fen: Fen) -> Result<Chess, FenError> {
    lenient(
        fen.into_position::<Chess>(CastlingMode::Standard),
        STANDARD_RULE_WORDS,
    )
}

/// A rule set's verdict on a setup, dropping what lila-tablebase drops
/// (impossible en passant squares and castling rights) and accepting
/// impossible checks; `rule` says what `PositionErrorKinds::VARIANT` means
/// under those rules.
pub(crate) fn lenient<P>(verdict: Result<P, PositionError<P>>, rule: &str) -> Result<P, FenError> {
    verdict
        .or_else(PositionError::ignore_invalid_ep_square)
        .or_else(PositionError::ignore_invalid_castling_rights)
        .or_else(PositionError::ignore_impossible_check)
        .map_err(|err| FenError::Illegal(illegal_reasons(err.kinds(), rule)))
}

/// The FEN of a position with all six fields, as the API and URLs carry it
/// (any variant: a `Chess` or a `VariantPosition`).
pub fn to_fen<P: Position>(pos: &P) -> String {
    Fen::from_position(pos, shakmaty::EnPassantMode::Legal).to_string()
}

/// Number of pieces on the board, kings included (what the tables are
/// sized by): the position's, where `material::piece_count` reads a
/// table's from its name.
pub fn piece_count<P: Position>(pos: &P) -> usize {
    pos.board().occupied().count()
}

fn malformed_part(err: ParseFenError) -> &'static str {
    match err {
        ParseFenError::InvalidBoard => {
            "the board part must be 8 ranks of pieces (KQRBNPkqrbnp) and digits, separated by '/'"
        }
        ParseFenError::InvalidTurn => "the side to move must be 'w' or 'b'",
        ParseFenError::InvalidCastling => "the castling part must be '-' or letters from KQkq",
        ParseFenError::InvalidEpSquare => "the en passant part must be '-' or a square like e3",
        ParseFenError::InvalidHalfmoveClock => "the halfmove clock must be a number",
        ParseFenError::InvalidFullmoves => "the move number must be a positive number",
        _ => "expected 'board side castling en-passant halfmoves fullmoves'",
    }
}

/// The broken rules in words; `variant_rule` says what a violated
/// variant-specific rule means for the variant at hand.
pub(crate) fn illegal_reasons(kinds: PositionErrorKinds, variant_rule: &str) -> String {
    let reasons: [(PositionErrorKinds, &str); 7] = [
        (PositionErrorKinds::EMPTY_BOARD, "the board is empty"),
        (
            PositionErrorKinds::MISSING_KING,
            "a king is missing (each side needs exactly one)",
        ),
        (
            PositionErrorKinds::TOO_MANY_KINGS,
            "too many kings (each side needs exactly one)",
        ),
        (
            PositionErrorKinds::PAWNS_ON_BACKRANK,
            "pawns on the first or last rank",
        ),
        (
            PositionErrorKinds::OPPOSITE_CHECK,
            "the side not to move is in check",
        ),
        (
            PositionErrorKinds::TOO_MUCH_MATERIAL,
            "more pieces than a legal game can have",
        ),
        (PositionErrorKinds::VARIANT, variant_rule),
    ];
    let found: Vec<&str> = reasons
        .iter()
        .filter(|(kind, _)| kinds.contains(*kind))
        .map(|(_, text)| *text)
        .collect();
    if found.is_empty() {
        return "the position cannot arise in a game".to_string();
    }
    found.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{game::read_game_fen, variant::Variant};

    #[test]
    fn accepts_underscores_and_roundtrips() {
        let pos = parse_fen("4k3/8/8/8/8/8/8/4K2R_w_-_-_0_1").expect("legal");
        assert_eq!(to_fen(&pos), "4k3/8/8/8/8/8/8/4K2R w - - 0 1");
        assert_eq!(piece_count(&pos), 3);
    }

    #[test]
    fn an_illegal_position_still_places_its_pieces() {
        let reading = read_game_fen(Variant::Standard, "4k3/8/8/8/8/8/8/3KK3_w_-_-_0_1");
        assert!(reading.position.is_err());
        assert_eq!(reading.placement.occupied().count(), 3);
        let legal = read_game_fen(Variant::Standard, "4k3/8/8/8/8/8/8/4K2R w - - 0 1");
        assert_eq!(legal.placement, *legal.position.expect("legal").board());
        assert_eq!(
            read_game_fen(Variant::Standard, "not a fen").placement,
            Board::empty()
        );
    }

    #[test]
    fn names_the_broken_rule() {
        let cases = [
            ("8/8/8/8/8/8/8/4K3 w - - 0 1", "king is missing"),
            ("4k3/8/8/8/8/8/8/3KK3 w - - 0 1", "too many kings"),
            ("4k3/8/8/8/8/8/8/P3K3 w - - 0 1", "first or last rank"),
            (
                "4k3/4R3/8/8/8/8/8/4K3 w - - 0 1",
                "side not to move is in check",
            ),
        ];
        for (fen, expected) in cases {
            let err = parse_fen(fen).expect_err(fen).to_string();
            assert!(err.contains(expected), "{fen}: {err}");
        }
    }

    #[test]
    fn impossible_checks_are_accepted() {
        // A pawn on g2 checks f3: no legal last move gives that check.
        let pos = parse_fen("8/8/8/2K1N3/8/5k2/6P1/8 b - - 0 38").expect("accepted");
        assert!(pos.is_check());
        // Two knights checking at once cannot come from one move either.
        let pos = parse_fen("4k3/8/3N1N2/8/8/8/8/4K3 b - - 0 1").expect("accepted");
        assert_eq!(pos.checkers().count(), 2);
        // The side not to move in check stays refused, impossible or not.
        let err = parse_fen("4k3/8/3N1N2/8/8/8/8/4K3 w - - 0 1").expect_err("illegal");
        assert!(err.to_string().contains("side not to move"), "{err}");
    }

    #[test]
    fn malformed_and_missing() {
        assert_eq!(parse_fen("  "), Err(FenError::Missing));
        let err = parse_fen("4k3/8/8 w - - 0 1")
            .expect_err("short board")
            .to_string();
        assert!(err.contains("board part"), "{err}");
        let err = parse_fen("4k3/8/8/8/8/8/8/4K2R x - - 0 1")
            .expect_err("bad turn")
            .to_string();
        assert!(err.contains("side to move"), "{err}");
    }
}
