//! The material on a board as Syzygy spells it (`KRPvKR`: one side's
//! pieces from king to pawn, `v`, the other's). One home for the spelling,
//! so the table a position needs, its statistics, the tab's title and the
//! server's errors all name a material alike.

use shakmaty::{Board, Color, Role};

use crate::variant::Variant;

/// One side's pieces as table names write them: `KQR`, king first, then
/// from queen down to pawn.
pub fn side(board: &Board, color: Color) -> String {
    Role::ALL
        .into_iter()
        .rev()
        .map(|role| {
            let n = (board.by_color(color) & board.by_role(role)).count();
            role.upper_char().to_string().repeat(n)
        })
        .collect()
}

/// The material with `first`'s pieces before the `v` whichever side is
/// stronger: where the colours matter (the tab's title, an error naming
/// the position, a table looked up either way round).
pub fn with_first(board: &Board, first: Color) -> String {
    format!("{}v{}", side(board, first), side(board, first.other()))
}

/// The material as the tab's title names it, White's pieces first and
/// the rules before it where they are not standard chess: "Atomic KRvK".
pub fn titled(variant: Variant, board: &Board) -> String {
    let material = with_first(board, Color::White);
    match variant {
        Variant::Standard => material,
        other => format!("{} {material}", other.label()),
    }
}

/// The Syzygy table of a board's material, named as the files are: the
/// stronger side first (more pieces, then more of each role from king to
/// pawn; White on a tie), e.g. `KRPvKR`.
pub fn table_name(board: &Board) -> String {
    table_name_of_sides(&side(board, Color::White), &side(board, Color::Black))
}

/// The Syzygy table name of two sides' pieces (`"KBN"`, `"K"`), the
/// stronger first, the first given on a tie: how other tables' materials
/// (Prophet's DTM files) are named alike.
pub fn table_name_of_sides(a: &str, b: &str) -> String {
    if strength(a) >= strength(b) {
        format!("{a}v{b}")
    } else {
        format!("{b}v{a}")
    }
}

/// The order the generator uses to put the stronger side first.
fn strength(side: &str) -> (usize, [usize; 6]) {
    let count = |c: char| side.chars().filter(|&p| p == c).count();
    (
        side.len(),
        [
            count('K'),
            count('Q'),
            count('R'),
            count('B'),
            count('N'),
            count('P'),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::fen::Fen;

    fn board(fen: &str) -> Board {
        Fen::from_ascii(fen.as_bytes())
            .expect("fen")
            .into_setup()
            .board
    }

    #[test]
    fn names_the_stronger_side_first() {
        let name = |fen: &str| table_name(&board(fen));
        assert_eq!(name("8/8/4k3/8/4PK2/8/8/r6R w - - 0 50"), "KRPvKR");
        assert_eq!(name("8/8/4k3/8/4pK2/8/8/r6R w - - 0 50"), "KRPvKR");
        assert_eq!(name("4k3/8/8/8/8/8/8/1NB1K3 w - - 0 1"), "KBNvK");
        assert_eq!(name("4k3/8/8/8/8/8/q7/1NB1K3 w - - 0 1"), "KBNvKQ");
    }

    #[test]
    fn names_either_colour_first_when_asked() {
        let kbnkq = board("4k3/8/8/8/8/8/q7/1NB1K3 w - - 0 1");
        assert_eq!(side(&kbnkq, Color::White), "KBN");
        assert_eq!(with_first(&kbnkq, Color::White), "KBNvKQ");
        assert_eq!(with_first(&kbnkq, Color::Black), "KQvKBN");
        // Antichess boards may hold any number of kings, or none.
        let kkn = board("8/8/8/8/8/8/1KK5/7n w - - 0 1");
        assert_eq!(with_first(&kkn, Color::White), "KKvN");
    }
}
