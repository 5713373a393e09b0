//! A material as tables name it: Syzygy's spelling (`KRPvKR`: one side's
//! pieces from king to pawn, `v`, the other's) and the counts behind it
//! ([`Pieces`], [`Material`]). One home, so the table a position needs, its
//! statistics, the tab's title, the server's table readers and its errors
//! all name and count a material alike.

use std::fmt::{self, Write as _};

use shakmaty::{Board, Color, Role};

use crate::variant::Variant;

/// One side's pieces counted by role: what the letters of one side of a
/// name stand for whatever their order, so materials compare by value.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Pieces([u8; 6]);

impl Pieces {
    /// `color`'s pieces on `board`.
    pub fn of(board: &Board, color: Color) -> Pieces {
        let mut counts = [0; 6];
        for role in Role::ALL {
            counts[slot(role)] = (board.by_color(color) & board.by_role(role)).count() as u8;
        }
        Pieces(counts)
    }

    /// Pieces from their letters (`KRP`, in any order); `None` for anything
    /// but the upper-case letters of pieces.
    pub fn parse(letters: &str) -> Option<Pieces> {
        let mut counts = [0u8; 6];
        for c in letters.chars() {
            let role = Role::from_char(c).filter(|_| c.is_ascii_uppercase())?;
            counts[slot(role)] = counts[slot(role)].checked_add(1)?;
        }
        Some(Pieces(counts))
    }

    /// How many of `role` there are.
    pub fn count(self, role: Role) -> u8 {
        self.0[slot(role)]
    }

    /// All the pieces, kings included.
    pub fn total(self) -> usize {
        self.0.iter().map(|&n| usize::from(n)).sum()
    }
}

/// Where a role's count is kept (pawn first, king last, as `Role` numbers them).
fn slot(role: Role) -> usize {
    role as usize - 1
}

/// As table names write a side: `KQR`, king first, then from queen down
/// to pawn.
impl fmt::Display for Pieces {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for role in Role::ALL.into_iter().rev() {
            for _ in 0..self.count(role) {
                f.write_char(role.upper_char())?;
            }
        }
        Ok(())
    }
}

/// Two sides' pieces, in the order a name or its caller gives them
/// (`KRPvKR`: `first` before the `v`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Material {
    pub first: Pieces,
    pub second: Pieces,
}

impl Material {
    /// The material on `board`, `first`'s pieces first.
    pub fn of(board: &Board, first: Color) -> Material {
        Material {
            first: Pieces::of(board, first),
            second: Pieces::of(board, first.other()),
        }
    }

    /// A table's material from its name without the file's extension
    /// (`KRPvKR`): both sides have pieces; within a side any order is read.
    pub fn parse(name: &str) -> Option<Material> {
        let (first, second) = name.split_once('v')?;
        if first.is_empty() || second.is_empty() {
            return None;
        }
        Some(Material {
            first: Pieces::parse(first)?,
            second: Pieces::parse(second)?,
        })
    }

    /// All the pieces, kings included.
    pub fn pieces(&self) -> usize {
        self.first.total() + self.second.total()
    }

    /// The Syzygy table's name: the stronger side first.
    pub fn table_name(&self) -> String {
        table_name_of_sides(&self.first.to_string(), &self.second.to_string())
    }
}

/// As written, `first` before the `v`: `KBNvKQ`.
impl fmt::Display for Material {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}v{}", self.first, self.second)
    }
}

/// The pieces (kings included) a table's name counts, in either spelling
/// and with or without the file's extension (Syzygy's `KRPvKP`,
/// `KRPvKP.rtbw`, Prophet's `KRPKP.egtb.bz`): the piece count tables are
/// grouped by, read from names alone.
pub fn piece_count(name: &str) -> usize {
    let stem = name.split('.').next().unwrap_or_default();
    stem.chars().filter(char::is_ascii_uppercase).count()
}

/// The material with `first`'s pieces before the `v` whichever side is
/// stronger: where the colours matter (the tab's title, an error naming
/// the position, a table looked up either way round).
pub fn with_first(board: &Board, first: Color) -> String {
    Material::of(board, first).to_string()
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
    Material::of(board, Color::White).table_name()
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
        assert_eq!(Pieces::of(&kbnkq, Color::White).to_string(), "KBN");
        assert_eq!(with_first(&kbnkq, Color::White), "KBNvKQ");
        assert_eq!(with_first(&kbnkq, Color::Black), "KQvKBN");
        // Antichess boards may hold any number of kings, or none.
        let kkn = board("8/8/8/8/8/8/1KK5/7n w - - 0 1");
        assert_eq!(with_first(&kkn, Color::White), "KKvN");
    }

    #[test]
    fn reads_names_as_counts() {
        let krpvkr = Material::parse("KRPvKR").expect("a material");
        assert_eq!(krpvkr.first, Pieces::parse("PRK").expect("pieces"));
        assert_eq!(krpvkr.first.count(Role::Rook), 1);
        assert_eq!(krpvkr.pieces(), 5);
        assert_eq!(krpvkr.to_string(), "KRPvKR");
        assert_eq!(
            Material::parse("KRvKRP").map(|m| m.table_name()).as_deref(),
            Some("KRPvKR")
        );
        for name in ["KRPKR", "vK", "Kv", "KXvK", "KrvK", "KvKvK"] {
            assert_eq!(Material::parse(name), None, "{name}");
        }
    }

    #[test]
    fn counts_pieces_of_names() {
        assert_eq!(piece_count("KRPvKP"), 5);
        assert_eq!(piece_count("KRPvKP.rtbw"), 5);
        assert_eq!(piece_count("BvP.gtbz"), 2);
        assert_eq!(piece_count("KRPKP.egtb.bz"), 5);
    }
}
