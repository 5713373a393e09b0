//! Whether the editor's position can be explored, checked before leaving so
//! the player learns why not (two kings, side not to move in check, pawn on
//! the back rank, more pieces than the tables hold) while still editing.

use crate::{
    position::{piece_count, to_fen},
    source::{UNREACHABLE, fetch_answer},
    {game::parse_game_fen, variant::Variant},
};

/// A position that passed the rules: its full FEN and its piece count.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    pub fen: String,
    pub pieces: usize,
}

/// The rules the server applies (`position::parse_fen`) and the size of the
/// largest tables: a refusal reads as the reason.
pub fn check_rules(variant: Variant, text: &str) -> Result<Candidate, String> {
    let pos = parse_game_fen(variant, text).map_err(|err| err.to_string())?;
    let pieces = piece_count(&pos);
    let max = variant.max_table_pieces();
    if pieces > max {
        return Err(format!(
            "{pieces} pieces: more pieces than the {variant} tables hold (at most {max})"
        ));
    }
    Ok(Candidate {
        fen: to_fen(&pos),
        pieces,
    })
}

/// Asks the server before leaving, so a position it refuses keeps the
/// editor open with the reason. A position the loaded tables cannot answer
/// (a table not installed, more pieces than they hold) is still opened, as
/// it is from a URL: the page says it is not in the tables, and moves that
/// lead into loaded tables (captures, promotions) are answered.
pub async fn check_tables(
    variant: Variant,
    Candidate { fen, pieces }: &Candidate,
) -> Result<(), String> {
    match fetch_answer(variant, fen.clone()).await {
        Ok(_) => Ok(()),
        // The server's silence is not the position's fault.
        Err(err) if err.error.starts_with(UNREACHABLE) => Err(err.error),
        Err(err) => Err(format!("{pieces} pieces: {}", err.error)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_with_the_reason() {
        let too_many = check_rules(Variant::Standard, "4k3/8/8/8/8/8/PPPPPPPP/4K3 w - - 0 1");
        assert_eq!(
            too_many,
            Err("10 pieces: more pieces than the standard tables hold (at most 7)".to_string())
        );
        let two_kings =
            check_rules(Variant::Standard, "k3k3/8/8/8/8/8/8/4K3 w - - 0 1").expect_err("illegal");
        assert!(two_kings.contains("too many kings"), "{two_kings}");
        let fine =
            check_rules(Variant::Standard, "4k3/8/8/8/8/8/8/1NB1K3 w - - 0 1").expect("legal");
        assert_eq!(fine.pieces, 4);
        let atomic = check_rules(Variant::Atomic, "4k3/8/8/8/8/8/PPPPP3/4K3 w - - 0 1");
        assert_eq!(
            atomic,
            Err("7 pieces: more pieces than the atomic tables hold (at most 6)".to_string())
        );
        let antichess = check_rules(Variant::Antichess, "4k3/8/8/8/8/8/PPP5/4K3 w - - 0 1");
        assert_eq!(antichess.map(|c| c.pieces), Ok(5));
    }
}
