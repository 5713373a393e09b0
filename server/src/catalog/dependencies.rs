//! Materials as table names spell them (`KRPvKR`: the pieces of one side,
//! `v`, the other's) and which materials one capture or one promotion leads
//! to under each variant's rules: what `tables fetch --with-dependencies`
//! adds so that every move of a selected position can be answered.
//!
//! The rules differ where material changes: in standard chess a capture
//! removes the captured piece; in atomic chess the capturing piece explodes
//! with it, and so does every piece but a pawn next to the square (kings
//! never capture, and a king in the blast ends the game); in antichess the
//! king is an ordinary piece, captured and promoted to like the others, and
//! a side with no pieces left has won (no table is needed there).

use std::collections::BTreeSet;

use app::{
    material::{Material, Pieces},
    variant::Variant,
};

/// Pieces of one side in the order table names use (K, Q, R, B, N, P);
/// `None` for a letter that is not a piece.
pub fn sorted_side(side: &str) -> Option<String> {
    Pieces::parse(side).map(|pieces| pieces.to_string())
}

/// Whether `name` is spelled as table files name a material: two sides
/// (`KRP`, `KR`) of pieces in table order, joined by `v`.
pub fn is_material(name: &str) -> bool {
    Material::parse(name).is_some_and(|material| material.to_string() == name)
}

/// The materials one capture or one promotion away from `material` under
/// the variant's rules, spelled as they come (not necessarily as
/// published; some, such as `KvK` or a side with nothing left, have no
/// table at all).
pub fn successors(variant: Variant, material: &str) -> BTreeSet<String> {
    let Some((white, black)) = material.split_once('v') else {
        return BTreeSet::new();
    };
    let mut next = BTreeSet::new();
    for (side, other) in [(white, black), (black, white)] {
        for promoted in promotions(variant, side) {
            next.insert(format!("{promoted}v{other}"));
        }
        match variant {
            Variant::Standard | Variant::Antichess => {
                for captured in without_one(side, capturable(variant)) {
                    next.insert(format!("{captured}v{other}"));
                }
            }
            Variant::Atomic => {
                for (rest, other_rest) in explosions(side, other) {
                    next.insert(format!("{rest}v{other_rest}"));
                }
            }
        }
    }
    next
}

/// Which pieces can be captured: all but the king, except in antichess.
fn capturable(variant: Variant) -> fn(char) -> bool {
    match variant {
        Variant::Antichess => |_| true,
        Variant::Standard | Variant::Atomic => |piece| piece != 'K',
    }
}

/// The side with one of its pawns promoted (to a king too in antichess).
fn promotions(variant: Variant, side: &str) -> BTreeSet<String> {
    let pieces: &[char] = match variant {
        Variant::Antichess => &['Q', 'R', 'B', 'N', 'K'],
        Variant::Standard | Variant::Atomic => &['Q', 'R', 'B', 'N'],
    };
    without_one(side, |piece| piece == 'P')
        .into_iter()
        .flat_map(|rest| pieces.iter().map(move |p| format!("{rest}{p}")))
        .collect()
}

/// The side less one of its pieces that `which` accepts, each way.
fn without_one(side: &str, which: impl Fn(char) -> bool) -> BTreeSet<String> {
    side.char_indices()
        .filter(|&(_, piece)| which(piece))
        .map(|(i, piece)| format!("{}{}", &side[..i], &side[i + piece.len_utf8()..]))
        .collect()
}

/// Atomic captures of a piece of `side` by a piece of `other`: both go,
/// and any of the remaining pieces but kings and pawns may stand next to
/// the square and go too. Returns what is left of (`side`, `other`).
fn explosions(side: &str, other: &str) -> BTreeSet<(String, String)> {
    let not_king = |piece: char| piece != 'K';
    let mut left = BTreeSet::new();
    for side_rest in without_one(side, not_king) {
        for other_rest in without_one(other, not_king) {
            for blast in blasts(&side_rest) {
                for other_blast in blasts(&other_rest) {
                    left.insert((blast.clone(), other_blast));
                }
            }
        }
    }
    left
}

/// A side after any of its pieces other than kings and pawns exploded
/// (none, some or all of them).
fn blasts(side: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::from([side.to_string()]);
    let mut todo = vec![side.to_string()];
    while let Some(rest) = todo.pop() {
        for smaller in without_one(&rest, |piece| !matches!(piece, 'K' | 'P')) {
            if out.insert(smaller.clone()) {
                todo.push(smaller);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Successors spelled alike: each side in table order, the side with
    /// more (then stronger) pieces first.
    fn successors_of(variant: Variant, material: &str) -> BTreeSet<String> {
        successors(variant, material)
            .into_iter()
            .map(|m| {
                let (a, b) = m.split_once('v').unwrap();
                let (a, b) = (sorted_side(a).unwrap(), sorted_side(b).unwrap());
                app::material::table_name_of_sides(&a, &b)
            })
            .collect()
    }

    fn set(materials: &[&str]) -> BTreeSet<String> {
        materials.iter().map(|m| m.to_string()).collect()
    }

    #[test]
    fn standard_captures_remove_one_piece_and_pawns_promote() {
        assert_eq!(
            successors_of(Variant::Standard, "KRPvKR"),
            set(&[
                "KRvKP", "KQRvKR", "KRBvKR", "KRNvKR", "KRPvK", "KRRvKR", "KRvKR"
            ])
        );
    }

    #[test]
    fn atomic_captures_take_the_capturer_and_the_blast() {
        // R takes B or B takes R (N likewise): both go, and the other
        // piece may be in the blast.
        assert_eq!(
            successors_of(Variant::Atomic, "KRNvKB"),
            set(&["KNvK", "KRvK", "KvK"])
        );
        // A promotion is no capture; a capture leaves the kings alone.
        assert_eq!(
            successors_of(Variant::Atomic, "KPvKP"),
            set(&["KQvKP", "KRvKP", "KBvKP", "KNvKP", "KvK"])
        );
        // A pawn next to the square survives the blast.
        assert_eq!(
            successors_of(Variant::Atomic, "KRPvKQ"),
            set(&[
                "KPvK", "KRvK", "KvK", "KQRvKQ", "KRRvKQ", "KRBvKQ", "KRNvKQ"
            ])
        );
    }

    #[test]
    fn antichess_kings_are_captured_and_promoted_to() {
        // The pawn may become a king; a side with nothing left has won.
        assert_eq!(
            successors_of(Variant::Antichess, "KvP"),
            set(&["KvQ", "KvR", "KvB", "KvN", "KvK", "Kv", "Pv"])
        );
        assert_eq!(
            successors_of(Variant::Antichess, "KBvK"),
            set(&["KvB", "KvK", "KBv"])
        );
    }

    #[test]
    fn tells_material_names_from_other_file_stems() {
        for name in ["KvK", "KRPvKR", "KQRvKQN", "KBNvK"] {
            assert!(is_material(name), "{name}");
        }
        for name in ["KRPKR", "KPRvKR", "vK", "Kv", "KXvK", "README"] {
            assert!(!is_material(name), "{name}");
        }
    }

    #[test]
    fn sorts_sides() {
        assert_eq!(sorted_side("PRK").as_deref(), Some("KRP"));
        assert_eq!(sorted_side("KX"), None);
    }
}
