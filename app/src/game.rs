//! The position the page plays on: standard chess, atomic or antichess.
//!
//! The page could use shakmaty's `VariantPosition`, but that carries all
//! eight of shakmaty's variants (crazyhouse, horde, ...), and their rules
//! would all ship in the WASM bundle, which has a 400 KiB budget. `Game`
//! holds only the three the tables serve and hands every rule to shakmaty,
//! the way `VariantPosition` does. The server keeps `VariantPosition`.

use std::num::NonZeroU32;

use shakmaty::{
    Bitboard, Board, ByColor, ByRole, Castles, CastlingMode, CastlingSide, Chess, Color, FromSetup,
    KnownOutcome, Move, MoveList, Outcome, Position, RemainingChecks, Role, Square,
    fen::Fen,
    variant::{Antichess, Atomic},
};

use crate::{
    position::{FenError, FenReading, lenient, read_with, setup_of},
    variant::Variant,
};

/// A legal position under one of the three rule sets.
#[derive(Clone, Debug)]
pub enum Game {
    Chess(Chess),
    Atomic(Atomic),
    Antichess(Antichess),
}

impl PartialEq for Game {
    /// Positions compare by what they show and who moves, as FENs do (the
    /// page's memos only need to know whether anything changed).
    fn eq(&self, other: &Game) -> bool {
        self.variant() == other.variant()
            && crate::position::to_fen(self) == crate::position::to_fen(other)
    }
}

impl Game {
    /// The rules this position is played under.
    pub fn variant(&self) -> Variant {
        match self {
            Game::Chess(_) => Variant::Standard,
            Game::Atomic(_) => Variant::Atomic,
            Game::Antichess(_) => Variant::Antichess,
        }
    }

    fn rules(&self) -> &dyn Position {
        match self {
            Game::Chess(pos) => pos,
            Game::Atomic(pos) => pos,
            Game::Antichess(pos) => pos,
        }
    }

    fn rules_mut(&mut self) -> &mut dyn Position {
        match self {
            Game::Chess(pos) => pos,
            Game::Atomic(pos) => pos,
            Game::Antichess(pos) => pos,
        }
    }
}

impl Position for Game {
    fn board(&self) -> &Board {
        self.rules().board()
    }
    fn promoted(&self) -> Bitboard {
        self.rules().promoted()
    }
    fn pockets(&self) -> Option<&ByColor<ByRole<u8>>> {
        self.rules().pockets()
    }
    fn turn(&self) -> Color {
        self.rules().turn()
    }
    fn castles(&self) -> &Castles {
        self.rules().castles()
    }
    fn maybe_ep_square(&self) -> Option<Square> {
        self.rules().maybe_ep_square()
    }
    fn remaining_checks(&self) -> Option<&ByColor<RemainingChecks>> {
        self.rules().remaining_checks()
    }
    fn halfmoves(&self) -> u32 {
        self.rules().halfmoves()
    }
    fn fullmoves(&self) -> NonZeroU32 {
        self.rules().fullmoves()
    }
    fn legal_moves(&self) -> MoveList {
        self.rules().legal_moves()
    }
    fn san_candidates(&self, role: Role, to: Square) -> MoveList {
        self.rules().san_candidates(role, to)
    }
    fn castling_moves(&self, side: CastlingSide) -> MoveList {
        self.rules().castling_moves(side)
    }
    fn en_passant_moves(&self) -> MoveList {
        self.rules().en_passant_moves()
    }
    fn capture_moves(&self) -> MoveList {
        self.rules().capture_moves()
    }
    fn promotion_moves(&self) -> MoveList {
        self.rules().promotion_moves()
    }
    fn is_irreversible(&self, m: Move) -> bool {
        self.rules().is_irreversible(m)
    }
    fn king_attackers(&self, square: Square, attacker: Color, occupied: Bitboard) -> Bitboard {
        self.rules().king_attackers(square, attacker, occupied)
    }
    fn is_variant_end(&self) -> bool {
        self.rules().is_variant_end()
    }
    fn has_insufficient_material(&self, color: Color) -> bool {
        self.rules().has_insufficient_material(color)
    }
    fn variant_outcome(&self) -> Outcome {
        self.rules().variant_outcome()
    }
    fn play_unchecked(&mut self, m: Move) {
        self.rules_mut().play_unchecked(m)
    }
}

/// Parses a FEN under a variant's rules, as the server's
/// `variant::parse_variant_fen` does (same leniency, same reasons).
pub fn parse_game_fen(variant: Variant, text: &str) -> Result<Game, FenError> {
    game_of(variant, setup_of(text)?)
}

/// Reads a FEN for both the position and the pieces on show.
pub fn read_game_fen(variant: Variant, text: &str) -> FenReading<Game> {
    read_with(text, |fen| game_of(variant, fen))
}

fn game_of(variant: Variant, fen: Fen) -> Result<Game, FenError> {
    let setup = fen.into_setup();
    match variant {
        Variant::Standard => under_rules(setup, variant).map(Game::Chess),
        Variant::Atomic => under_rules(setup, variant).map(Game::Atomic),
        Variant::Antichess => under_rules(setup, variant).map(Game::Antichess),
    }
}

fn under_rules<P: FromSetup + Position>(
    setup: shakmaty::Setup,
    variant: Variant,
) -> Result<P, FenError> {
    lenient(
        P::from_setup(setup, CastlingMode::Standard),
        variant.rule_words(),
    )
}

/// How a variant game ended, in a player's words ("White wins: Black's
/// king exploded"), or `None` if it did not end by the variant's own rule.
pub fn end_words(pos: &Game) -> Option<String> {
    if !pos.is_variant_end() {
        return None;
    }
    let name = |c: Color| match c {
        Color::White => "White",
        Color::Black => "Black",
    };
    let Outcome::Known(KnownOutcome::Decisive { winner }) = pos.variant_outcome() else {
        return Some("Draw by the variant's rules".to_string());
    };
    let reason = match pos.variant() {
        Variant::Atomic => format!("{}'s king exploded", name(winner.other())),
        Variant::Antichess => format!("{} has no pieces left", name(winner)),
        Variant::Standard => "by the rules".to_string(),
    };
    Some(format!("{} wins: {reason}", name(winner)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::variant::parse_variant_fen;

    #[test]
    fn reads_like_the_server() {
        let fens = [
            (Variant::Atomic, "8/8/8/8/8/8/3kK3/8 w - - 0 1"),
            (Variant::Atomic, "8/8/8/8/8/8/4K3/8 b - - 0 1"),
            (Variant::Antichess, "8/8/8/8/8/8/1KK5/7n_w_KQ_-_0_1"),
            (Variant::Standard, "4k3/8/8/8/8/8/8/4K2R w K - 3 40"),
        ];
        for (variant, fen) in fens {
            let game = parse_game_fen(variant, fen).expect(fen);
            let server = parse_variant_fen(variant, fen).expect(fen);
            assert_eq!(
                crate::position::to_fen(&game),
                crate::position::to_fen(&server)
            );
            assert_eq!(
                game.legal_moves().len(),
                server.legal_moves().len(),
                "{fen}"
            );
            assert_eq!(game.variant(), variant);
        }
        let err =
            parse_game_fen(Variant::Atomic, "8/8/8/8/8/8/4K3/8 w - - 0 1").expect_err("no king");
        assert!(err.to_string().contains("king is missing"), "{err}");
    }

    #[test]
    fn variant_ends_in_words() {
        let exploded = parse_game_fen(Variant::Atomic, "8/8/8/8/8/8/4K3/8 b - - 0 1")
            .expect("black's king exploded");
        assert_eq!(
            end_words(&exploded).as_deref(),
            Some("White wins: Black's king exploded")
        );
        let bare = parse_game_fen(Variant::Antichess, "8/8/8/8/8/8/4K3/8 b - - 0 1")
            .expect("black has nothing left");
        assert_eq!(
            end_words(&bare).as_deref(),
            Some("Black wins: Black has no pieces left")
        );
    }
}
