//! Which answers depend on tables served unchecked (`--allow-unchecked`),
//! so they can say so (`X-Integrity: unchecked`).
//!
//! A probe reads the table of the position's material and, through
//! captures and promotions, tables of materials it can turn into; the
//! answer also probes every move. Which of those a probe really read is
//! lost in the caches above the disk, so an answer is marked when any
//! unchecked table is reachable from its material: sometimes one too many,
//! never one too few.

use std::{
    collections::HashSet,
    sync::atomic::{AtomicU64, Ordering},
};

use app::{
    material::{Material, Pieces},
    variant::Variant,
};
use shakmaty::{Color, Position, Role, variant::VariantPosition};

use crate::{dtm::format as prophet_format, store::layout::variant_of_name};

/// The unchecked tables served, as materials.
#[derive(Debug, Default)]
pub struct UncheckedTables {
    materials: Vec<(Variant, Pieces, Pieces)>,
    answers: AtomicU64,
}

impl UncheckedTables {
    /// From the file names of the unchecked tables (`KQvKR.rtbz`,
    /// `KQKR.egtb.bz`); names that are neither are left out.
    pub fn new(files: &HashSet<String>) -> UncheckedTables {
        let materials = files
            .iter()
            .filter_map(|name| material_of_file(name))
            .collect();
        UncheckedTables {
            materials,
            answers: AtomicU64::new(0),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.materials.is_empty()
    }

    /// Whether an answer for `pos` may have read an unchecked table; counts
    /// the answers that did.
    pub fn touched_by(&self, pos: &VariantPosition) -> bool {
        let Some(variant) = Variant::of(pos) else {
            return false;
        };
        let board = pos.board();
        let (white, black) = (
            Pieces::of(board, Color::White),
            Pieces::of(board, Color::Black),
        );
        let touched = self.materials.iter().any(|(v, a, b)| {
            *v == variant
                && ((reaches(white, *a) && reaches(black, *b))
                    || (reaches(white, *b) && reaches(black, *a)))
        });
        if touched {
            self.answers.fetch_add(1, Ordering::Relaxed);
        }
        touched
    }

    /// Answers marked `X-Integrity: unchecked` so far.
    pub fn answers(&self) -> u64 {
        self.answers.load(Ordering::Relaxed)
    }
}

/// Whether captures and promotions can turn the pieces `from` into `to`:
/// no pawn is gained, and each piece gained comes from a promoted pawn.
fn reaches(from: Pieces, to: Pieces) -> bool {
    let (pawns_from, pawns_to) = (from.count(Role::Pawn), to.count(Role::Pawn));
    if pawns_to > pawns_from {
        return false;
    }
    let gained: u8 = Role::ALL[1..]
        .iter()
        .map(|&role| to.count(role).saturating_sub(from.count(role)))
        .sum();
    gained <= pawns_from - pawns_to
}

/// A table file's variant and its two sides' pieces.
fn material_of_file(name: &str) -> Option<(Variant, Pieces, Pieces)> {
    if let Some(material) = prophet_format::material_of_name(name) {
        return Some((Variant::Standard, material.stm, material.sntm));
    }
    let variant = variant_of_name(name)?;
    let material = Material::parse(name.split('.').next()?)?;
    Some((variant, material.first, material.second))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn position(fen: &str) -> VariantPosition {
        app::variant::parse_variant_fen(Variant::Standard, fen).expect("legal")
    }

    #[test]
    fn marks_positions_whose_captures_or_promotions_reach_an_unchecked_table() {
        let unchecked = UncheckedTables::new(&HashSet::from(["KRvK.rtbz".to_string()]));
        // KRvKP: a capture of the pawn gives KRvK.
        assert!(unchecked.touched_by(&position("8/8/8/8/8/2k5/1p6/R3K3 w - - 0 1")));
        // Black's rook, either colour.
        assert!(unchecked.touched_by(&position("8/8/8/8/8/2k5/8/r3K3 w - - 0 1")));
        // KQvK cannot become KRvK.
        assert!(!unchecked.touched_by(&position("Q7/8/8/8/8/2k5/8/4K3 w - - 0 1")));
        // KPvK can: a pawn promotes to a rook.
        assert!(unchecked.touched_by(&position("8/8/8/8/8/2k5/P7/4K3 w - - 0 1")));
        assert_eq!(unchecked.answers(), 3);
    }

    #[test]
    fn reads_prophet_file_names() {
        let unchecked = UncheckedTables::new(&HashSet::from(["KQKR.egtb.bz".to_string()]));
        assert!(unchecked.touched_by(&position("8/6K1/5r2/8/Q7/8/8/4k3 w - - 0 1")));
        assert!(!unchecked.touched_by(&position("8/6K1/8/8/Q7/8/8/4k3 w - - 0 1")));
    }
}
