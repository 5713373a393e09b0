//! The three rule sets the tablebase API serves (`/standard`, `/atomic`,
//! `/antichess`, as lila-tablebase names them), and reading a FEN under each.
//!
//! Shared by the server (which variant a route answers, 400 answers) and the
//! page (the variant switch, kept in the URL), so both name a variant and
//! reject a position alike. The rules themselves (explosions, compulsory
//! captures, king promotion) are shakmaty's.

use std::{fmt, str::FromStr};

use serde::{Deserialize, Serialize};
use shakmaty::{
    CastlingMode,
    fen::Fen,
    variant::{self as rules, VariantPosition},
};

use crate::position::{FenError, STANDARD_RULE_WORDS, lenient, setup_of};

/// A variant with Syzygy tables, as the API path and the page's URL name it.
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord,
)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    #[default]
    Standard,
    Atomic,
    Antichess,
}

impl Variant {
    /// Every variant, in the order the page offers them.
    pub const ALL: [Variant; 3] = [Variant::Standard, Variant::Atomic, Variant::Antichess];

    /// The lowercase name of the API path and the URL (`"atomic"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Variant::Standard => "standard",
            Variant::Atomic => "atomic",
            Variant::Antichess => "antichess",
        }
    }

    /// The name for people (`"Atomic"`).
    pub fn label(self) -> &'static str {
        match self {
            Variant::Standard => "Standard",
            Variant::Atomic => "Atomic",
            Variant::Antichess => "Antichess",
        }
    }

    /// The API route of a position's answer (`"/atomic"`).
    pub fn api_path(self) -> &'static str {
        match self {
            Variant::Standard => "/standard",
            Variant::Atomic => "/atomic",
            Variant::Antichess => "/antichess",
        }
    }

    /// The API route of the DTZ-optimal line (`"/atomic/mainline"`).
    pub fn mainline_path(self) -> &'static str {
        match self {
            Variant::Standard => "/standard/mainline",
            Variant::Atomic => "/atomic/mainline",
            Variant::Antichess => "/antichess/mainline",
        }
    }

    /// The most pieces the variant's Syzygy tables hold: 7 in standard
    /// chess, 6 for atomic and antichess (the generator's limit for them).
    /// The page says so instead of "not installed" when a position is
    /// beyond it, since no mirror has the table to fetch.
    pub fn max_table_pieces(self) -> usize {
        match self {
            Variant::Standard => 7,
            Variant::Atomic | Variant::Antichess => 6,
        }
    }

    /// shakmaty's rule set for this variant.
    pub fn rules(self) -> rules::Variant {
        match self {
            Variant::Standard => rules::Variant::Chess,
            Variant::Atomic => rules::Variant::Atomic,
            Variant::Antichess => rules::Variant::Antichess,
        }
    }

    /// The variant of a position, if it is one of the three.
    pub fn of(pos: &VariantPosition) -> Option<Variant> {
        match pos.variant() {
            rules::Variant::Chess => Some(Variant::Standard),
            rules::Variant::Atomic => Some(Variant::Atomic),
            rules::Variant::Antichess => Some(Variant::Antichess),
            _ => None,
        }
    }

    /// What a broken variant-specific rule means here, in words.
    pub(crate) fn rule_words(self) -> &'static str {
        match self {
            Variant::Standard => STANDARD_RULE_WORDS,
            Variant::Atomic => "not a legal atomic position",
            Variant::Antichess => "not a legal antichess position",
        }
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is not one of the three variants.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown variant \"{0}\": expected standard, atomic or antichess")]
pub struct UnknownVariant(pub String);

impl FromStr for Variant {
    type Err = UnknownVariant;

    fn from_str(name: &str) -> Result<Variant, UnknownVariant> {
        Variant::ALL
            .into_iter()
            .find(|v| v.as_str() == name)
            .ok_or_else(|| UnknownVariant(name.to_string()))
    }
}

/// Parses a FEN under a variant's rules, as [`crate::position::parse_fen`]
/// does for standard chess (underscores for spaces; impossible en passant
/// squares and castling rights dropped; impossible checks accepted), the
/// way lila-tablebase reads it. An atomic position whose side to move has
/// lost its king is legal (the game is over); in antichess any number of
/// kings, or none, is.
pub fn parse_variant_fen(variant: Variant, text: &str) -> Result<VariantPosition, FenError> {
    position_of(variant, setup_of(text)?)
}

fn position_of(variant: Variant, fen: Fen) -> Result<VariantPosition, FenError> {
    lenient(
        VariantPosition::from_setup(variant.rules(), fen.into_setup(), CastlingMode::Standard),
        variant.rule_words(),
    )
}

#[cfg(test)]
mod tests {
    use shakmaty::{Position, uci::UciMove};

    use super::*;
    use crate::{api::MoveInfo, game::read_game_fen, position::to_fen};

    #[test]
    fn names_round_trip_through_str_and_serde() {
        for variant in Variant::ALL {
            assert_eq!(variant.as_str().parse::<Variant>(), Ok(variant));
            let json = serde_json::to_string(&variant).expect("serializes");
            assert_eq!(json, format!("\"{}\"", variant.as_str()));
            assert_eq!(variant.api_path(), format!("/{variant}"));
            assert_eq!(variant.mainline_path(), format!("/{variant}/mainline"));
        }
        assert!("chess".parse::<Variant>().is_err());
    }

    #[test]
    fn atomic_allows_touching_kings_and_an_exploded_king_to_move() {
        let pos = parse_variant_fen(Variant::Atomic, "8/8/8/8/8/8/3kK3/8 w - - 0 1")
            .expect("kings may touch in atomic");
        assert_eq!(Variant::of(&pos), Some(Variant::Atomic));
        parse_variant_fen(Variant::Atomic, "8/8/8/8/8/8/4K3/8 b - - 0 1")
            .expect("black's king exploded: game over, still a position");
        let err = parse_variant_fen(Variant::Atomic, "8/8/8/8/8/8/4K3/8 w - - 0 1")
            .expect_err("the side that just moved has no king");
        assert!(err.to_string().contains("king is missing"), "{err}");
    }

    #[test]
    fn antichess_takes_any_kings_and_names_its_rules() {
        let pos = parse_variant_fen(Variant::Antichess, "8/8/8/8/8/8/1KK5/7n_w_KQ_-_0_1")
            .expect("two kings and castling rights dropped");
        assert_eq!(to_fen(&pos), "8/8/8/8/8/8/1KK5/7n w - - 0 1");
        let err =
            parse_variant_fen(Variant::Antichess, "8/8/8/8/8/8/8/8 w - - 0 1").expect_err("empty");
        assert!(err.to_string().contains("board is empty"), "{err}");
        assert!(matches!(
            read_game_fen(Variant::Antichess, "bad fen").position,
            Err(FenError::Malformed { .. })
        ));
    }

    #[test]
    fn moves_are_named_under_the_variants_rules() {
        // Atomic: Qxd7 explodes the king on e8; the position after is over.
        let pos =
            parse_variant_fen(Variant::Atomic, "4k3/3n4/8/8/8/8/3Q4/K7 w - - 0 1").expect("legal");
        let m = UciMove::from_ascii(b"d2d7")
            .expect("uci")
            .to_move(&pos)
            .expect("legal move");
        let (info, after) = MoveInfo::play(&pos, m);
        assert_eq!(info.san, "Qxd7#");
        assert!(after.is_variant_end());
        // Antichess: a capture is compulsory, and a pawn may promote to a king.
        let pos =
            parse_variant_fen(Variant::Antichess, "8/4P3/8/8/8/8/8/n7 w - - 0 1").expect("legal");
        let sans: Vec<String> = pos
            .legal_moves()
            .into_iter()
            .map(|m| MoveInfo::play(&pos, m).0.san)
            .collect();
        assert!(sans.contains(&"e8=K".to_string()), "{sans:?}");
    }
}
