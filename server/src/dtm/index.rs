//! Where a position's value sits in a Prophet table: which table (the
//! material seen from the side to move) and which index inside it.
//!
//! The layout is Prophet's (server/docs/prophet.md, "Index"); this is our
//! own code, written from the description there. Every table is indexed
//! from the side to move's point of view: the squares are first mirrored
//! so that the king of the side *not* to move stands in a canonical region
//! (and, with pawns, so that the side to move's pawns move up the board);
//! then the king pair picks a slice of the table and each group of equal
//! pieces contributes a combination index over the squares left to it.

use std::sync::OnceLock;

use app::material::{Material, Pieces};
use shakmaty::{Bitboard, Chess, Color, EnPassantMode, Piece, Position, Role, Square, attacks};

/// Roles in the order Prophet names and indexes the non-king pieces.
const PIECE_ROLES: [Role; 4] = [Role::Queen, Role::Rook, Role::Bishop, Role::Knight];

/// Squares a pawn may stand on (ranks 2 to 7).
const PAWN_SQUARES: Bitboard = Bitboard(0x00ff_ffff_ffff_ff00);

/// The 14 en passant configurations (ep pawn file, capturing pawn left or right).
const N_EP: u64 = 14;

/// A Prophet table's material: the side to move's pieces, then the other
/// side's. Where a Syzygy material ([`Material`]) names one table for both
/// sides to move, this names one of Prophet's two (`KBNK`, `KKBN`), and
/// the index counts from the side to move's point of view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ProphetMaterial {
    /// The side to move's pieces.
    pub stm: Pieces,
    /// The other side's pieces.
    pub sntm: Pieces,
}

impl ProphetMaterial {
    /// The material of `pos`, seen from its side to move.
    pub fn from_position(pos: &Chess) -> ProphetMaterial {
        let board = pos.board();
        ProphetMaterial {
            stm: Pieces::of(board, pos.turn()),
            sntm: Pieces::of(board, !pos.turn()),
        }
    }

    /// Parses a table name such as `KBNK` (the side to move's pieces first,
    /// each side `K` then queens, rooks, bishops, knights, pawns). Only the
    /// canonical spelling is accepted, so that one material has one name.
    pub fn from_name(name: &str) -> Option<ProphetMaterial> {
        let rest = name.strip_prefix('K')?;
        let (stm, sntm) = rest.split_once('K')?;
        // Each side has one king, the `K` its letters follow.
        let side = |letters: &str| {
            Pieces::parse(&format!("K{letters}")).filter(|side| side.count(Role::King) == 1)
        };
        let material = ProphetMaterial {
            stm: side(stm)?,
            sntm: side(sntm)?,
        };
        (material.name() == name).then_some(material)
    }

    /// The material as Syzygy names it (`KBNK` → `KBNvK`, stronger side
    /// first), whichever side is to move.
    pub fn syzygy_name(&self) -> String {
        Material {
            first: self.stm,
            second: self.sntm,
        }
        .table_name()
    }

    /// The table's name, e.g. `KBNK`: each side spelled as Syzygy spells it,
    /// without the `v`.
    pub fn name(&self) -> String {
        format!("{}{}", self.stm, self.sntm)
    }

    /// The same material with the other side to move.
    pub fn mirrored(&self) -> ProphetMaterial {
        ProphetMaterial {
            stm: self.sntm,
            sntm: self.stm,
        }
    }

    fn count(&self, stm: bool, role: Role) -> u8 {
        let side = if stm { self.stm } else { self.sntm };
        side.count(role)
    }

    fn has_pawns(&self) -> bool {
        self.count(true, Role::Pawn) + self.count(false, Role::Pawn) > 0
    }
}

/// C(n, k): the number of ways to place k equal pieces on n squares.
fn binomial(n: u64, k: u64) -> u64 {
    if k > n {
        return 0;
    }
    (0..k).fold(1, |acc, i| acc * (n - i) / (i + 1))
}

/// Squares from which a piece of `role` belonging to the side to move would
/// give a check to the king on `king` that no piece can block: such
/// positions are illegal (the side not to move would be in check), so
/// Prophet leaves these squares out of the side to move's pieces' domains.
fn unblockable_checks(role: Role, king: Square) -> Bitboard {
    let adjacent = attacks::king_attacks(king);
    let orthogonal = adjacent
        .into_iter()
        .filter(|sq| sq.file() == king.file() || sq.rank() == king.rank())
        .fold(Bitboard::EMPTY, |bb, sq| bb | Bitboard::from_square(sq));
    match role {
        Role::Knight => attacks::knight_attacks(king),
        Role::Bishop => adjacent & !orthogonal,
        Role::Rook => orthogonal,
        Role::Queen | Role::King => adjacent,
        // Pawns of the side to move move up the board (after the mirroring).
        Role::Pawn => attacks::pawn_attacks(Color::Black, king) & PAWN_SQUARES,
    }
}

/// The legal placements of the two kings Prophet enumerates, in its order:
/// the king not to move first (a canonical square), then the king to move.
struct KingPairs {
    /// Index of each (not-to-move, to-move) pair, `u16::MAX` if not listed.
    index: Vec<u16>,
    /// The pairs, in index order.
    pairs: Vec<(Square, Square)>,
}

impl KingPairs {
    fn build(
        keep_kntm: impl Fn(Square) -> bool,
        keep_pair: impl Fn(Square, Square) -> bool,
    ) -> Self {
        let mut index = vec![u16::MAX; 64 * 64];
        let mut pairs = Vec::new();
        for kntm in Square::ALL.into_iter().filter(|&sq| keep_kntm(sq)) {
            for ktm in Square::ALL {
                if ktm == kntm || attacks::king_attacks(kntm).contains(ktm) || !keep_pair(kntm, ktm)
                {
                    continue;
                }
                index[kntm as usize * 64 + ktm as usize] = pairs.len() as u16;
                pairs.push((kntm, ktm));
            }
        }
        KingPairs { index, pairs }
    }

    fn get(&self, kntm: Square, ktm: Square) -> Option<u64> {
        let ix = self.index[kntm as usize * 64 + ktm as usize];
        (ix != u16::MAX).then_some(u64::from(ix))
    }
}

/// Without pawns: the king not to move in the triangle a1-d1-d4 (on or
/// below the long diagonal), and when it is on the diagonal the king to
/// move not above it. 462 pairs.
fn pawnless_kings() -> &'static KingPairs {
    static PAIRS: OnceLock<KingPairs> = OnceLock::new();
    PAIRS.get_or_init(|| {
        KingPairs::build(
            |kntm| kntm.file() as u32 <= 3 && kntm.rank() as u32 <= kntm.file() as u32,
            |kntm, ktm| {
                !(kntm.rank() as u32 == kntm.file() as u32 && ktm.rank() as u32 > ktm.file() as u32)
            },
        )
    })
}

/// With pawns: the king not to move on files a-d, the king to move
/// anywhere. 1806 pairs.
fn pawn_kings() -> &'static KingPairs {
    static PAIRS: OnceLock<KingPairs> = OnceLock::new();
    PAIRS.get_or_init(|| KingPairs::build(|kntm| (kntm.file() as u32) < 4, |_, _| true))
}

/// The king pairs of a table: with pawns the board has fewer symmetries,
/// so more pairs are told apart.
fn king_pairs(pawns: bool) -> &'static KingPairs {
    if pawns {
        pawn_kings()
    } else {
        pawnless_kings()
    }
}

/// The number of positions, and where each king pair's slice starts, of
/// one table: enough to turn a position into an index.
#[derive(Debug, Clone)]
pub struct Layout {
    material: ProphetMaterial,
    /// Start of each king pair's slice of the non-en-passant part; one more
    /// entry than pairs, the last being the size of that part.
    king_offsets: Vec<u64>,
    /// Positions with a legal en passant capture, after all others.
    ep_positions: u64,
}

impl Layout {
    /// The layout of the table for `material` (side to move first).
    pub fn new(material: ProphetMaterial) -> Layout {
        let kings = king_pairs(material.has_pawns());
        let mut king_offsets = Vec::with_capacity(kings.pairs.len() + 1);
        let mut total = 0u64;
        king_offsets.push(0);
        for &(kntm, ktm) in &kings.pairs {
            total += slice_size(&material, kntm, ktm);
            king_offsets.push(total);
        }
        Layout {
            material,
            king_offsets,
            ep_positions: ep_positions(&material),
        }
    }

    /// The material this layout is for.
    pub fn material(&self) -> ProphetMaterial {
        self.material
    }

    /// Number of entries in the table (its header must say the same).
    pub fn num_positions(&self) -> u64 {
        self.non_ep_positions() + self.ep_positions
    }

    fn non_ep_positions(&self) -> u64 {
        self.king_offsets.last().copied().unwrap_or(0)
    }

    /// The index of `pos`, whose material (from its side to move) must be
    /// this layout's. `None` only if the position cannot be in the table
    /// (a king missing, or kings touching), which a legal position of this
    /// material never is.
    pub fn index(&self, pos: &Chess) -> Option<u64> {
        let board = pos.board();
        let stm = pos.turn();
        let kntm = board.king_of(!stm)?;
        let ktm = board.king_of(stm)?;
        let mut diagonal = self.orientation(stm, kntm);
        let mut sum = IndexSum {
            index: 0,
            multiplier: 1,
            occupied: Bitboard::EMPTY,
        };
        let ep_pawns = match pos.ep_square(EnPassantMode::Legal) {
            Some(square) => {
                let stm_pawns = board.by_piece(stm.pawn());
                Some(self.place_en_passant(&mut sum, &diagonal, square, stm_pawns)?)
            }
            None => None,
        };
        // The transposition, if any, is decided by the kings first.
        let kntm = diagonal.transform(Bitboard::from_square(kntm)).first()?;
        let ktm = diagonal.transform(Bitboard::from_square(ktm)).first()?;
        self.place_kings(&mut sum, kntm, ktm, ep_pawns.is_some())?;
        place_groups(&mut sum, &mut diagonal, pos, kntm, ktm, ep_pawns);
        Some(sum.index)
    }

    /// How the board is mirrored: a table holds one position of each
    /// class of mirror images, with the king not to move on files a-d
    /// (without pawns also on ranks 1-4, the diagonal decided later by
    /// [`Diagonal::transform`]); with pawns, ranks flip when Black is to
    /// move so the side to move's pawns go up, as they do in the table.
    fn orientation(&self, stm: Color, kntm: Square) -> Diagonal {
        let pawns = self.material.has_pawns();
        let mut flip = if kntm.file() as u32 >= 4 { 7 } else { 0 };
        if !pawns {
            if kntm.rank() as u32 >= 4 {
                flip ^= 56;
            }
        } else if stm == Color::Black {
            flip ^= 56;
        }
        Diagonal {
            symmetric: !pawns,
            transpose: false,
            flip,
        }
    }

    /// A position with a legal en passant capture lies past all others, its
    /// first digit the capture (the ep pawn's file, the capturer left or
    /// right); the two pawns it names are placed here, not with their
    /// groups, which is why they are returned.
    fn place_en_passant(
        &self,
        sum: &mut IndexSum,
        diagonal: &Diagonal,
        ep_square: Square,
        stm_pawns: Bitboard,
    ) -> Option<Bitboard> {
        // Both sides have pawns here (a legal capture exists), so the
        // board is only flipped, never transposed.
        let ep_square = flip_square(ep_square, diagonal.flip);
        let ep_pawn = Square::new(ep_square as u32 - 8);
        let capturer = (diagonal.flip_only(stm_pawns)
            & attacks::pawn_attacks(Color::Black, ep_square))
        .first()?;
        let file = ep_square.file() as u64;
        let right = capturer.file() as u64 > file;
        let ep_index = if file == 0 {
            0
        } else {
            2 * file - 1 + u64::from(right)
        };
        sum.index += self.non_ep_positions();
        sum.push(ep_index, N_EP);
        let ep_pawns = Bitboard::from_square(ep_pawn) | Bitboard::from_square(capturer);
        sum.occupied = ep_pawns;
        Some(ep_pawns)
    }

    /// The king pair's part: with en passant one more digit; otherwise
    /// the start of the pair's slice, looked up because slices differ in
    /// size (the side to move's pieces avoid checking the other king).
    fn place_kings(&self, sum: &mut IndexSum, kntm: Square, ktm: Square, ep: bool) -> Option<()> {
        let kings = king_pairs(self.material.has_pawns());
        let king_index = kings.get(kntm, ktm)?;
        if ep {
            sum.push(king_index, kings.pairs.len() as u64);
        } else {
            sum.index += self.king_offsets.get(king_index as usize).copied()?;
            sum.occupied = Bitboard::from_square(kntm) | Bitboard::from_square(ktm);
        }
        Some(())
    }
}

/// Positions in one king pair's slice (without en passant): the product
/// of each group's placements, as [`place_groups`] counts them.
fn slice_size(material: &ProphetMaterial, kntm: Square, ktm: Square) -> u64 {
    let stm_pawns = u64::from(material.count(true, Role::Pawn));
    let sntm_pawns = u64::from(material.count(false, Role::Pawn));
    let stm_others: u64 = PIECE_ROLES
        .iter()
        .map(|&r| u64::from(material.count(true, r)))
        .sum();
    let kings_bb = Bitboard::from_square(kntm) | Bitboard::from_square(ktm);
    let stm_pawn_squares = PAWN_SQUARES & !(unblockable_checks(Role::Pawn, kntm) | kings_bb);
    let mut n = binomial(stm_pawn_squares.count() as u64, stm_pawns);
    n *= binomial(
        (PAWN_SQUARES & !kings_bb).count() as u64 - stm_pawns,
        sntm_pawns,
    );
    for role in PIECE_ROLES {
        let domain = !(unblockable_checks(role, kntm) | kings_bb);
        n *= binomial(domain.count() as u64, u64::from(material.count(true, role)));
    }
    let mut free = 62 - stm_pawns - sntm_pawns - stm_others;
    for role in PIECE_ROLES {
        let count = u64::from(material.count(false, role));
        n *= binomial(free, count);
        free -= count;
    }
    n
}

/// Positions with a legal en passant capture, counted as Prophet's files
/// count them: more loosely than the slices (every king pair, no square
/// left out for a check), since the index must match the files, not be
/// tight.
fn ep_positions(material: &ProphetMaterial) -> u64 {
    let stm_pawns = u64::from(material.count(true, Role::Pawn));
    let sntm_pawns = u64::from(material.count(false, Role::Pawn));
    if stm_pawns == 0 || sntm_pawns == 0 {
        return 0;
    }
    let mut n = N_EP * pawn_kings().pairs.len() as u64;
    n *= binomial(46, stm_pawns - 1);
    n *= binomial(47 - stm_pawns, sntm_pawns - 1);
    let mut free = 62 - stm_pawns - sntm_pawns;
    for stm in [true, false] {
        for role in PIECE_ROLES {
            let count = u64::from(material.count(stm, role));
            n *= binomial(free, count);
            free -= count;
        }
    }
    n
}

/// A position's index as it is built: a mixed-radix number whose digits
/// are the parts (capture, kings, each group), each worth the product of
/// the ways the parts before it could go.
struct IndexSum {
    index: u64,
    multiplier: u64,
    /// The squares the parts placed so far take.
    occupied: Bitboard,
}

impl IndexSum {
    /// One more digit, of `radix` possible values.
    fn push(&mut self, digit: u64, radix: u64) {
        self.index += digit * self.multiplier;
        self.multiplier *= radix;
    }

    /// A group of equal pieces on `squares`, numbered within `available`
    /// (combinatorial number system): its squares are taken from then on.
    fn push_group(&mut self, squares: Bitboard, available: Bitboard) {
        let mut combination = 0u64;
        let mut count = 0u64;
        for sq in squares {
            let below = Bitboard((1u64 << sq as u32) - 1);
            let rank = (available & below).count() as u64;
            count += 1;
            combination += binomial(rank, count);
            self.occupied |= Bitboard::from_square(sq);
        }
        self.push(combination, binomial(available.count() as u64, count));
    }
}

/// The groups of equal pieces, in Prophet's order (server/docs/prophet.md,
/// "Index" 3), each numbered within its domain. The domains differ with
/// en passant, where the table leaves out no checks and places the kings
/// only after the pawns.
fn place_groups(
    sum: &mut IndexSum,
    diagonal: &mut Diagonal,
    pos: &Chess,
    kntm: Square,
    ktm: Square,
    ep_pawns: Option<Bitboard>,
) {
    let board = pos.board();
    let stm = pos.turn();
    let kings_bb = Bitboard::from_square(kntm) | Bitboard::from_square(ktm);
    let order = [(stm, Role::Pawn), (!stm, Role::Pawn)]
        .into_iter()
        .chain(PIECE_ROLES.iter().map(|&r| (stm, r)))
        .chain(PIECE_ROLES.iter().map(|&r| (!stm, r)));
    for (color, role) in order {
        if ep_pawns.is_some() && color == stm && role == Role::Queen {
            sum.occupied |= kings_bb;
        }
        let pieces = board.by_piece(Piece { color, role });
        if pieces.is_empty() {
            continue;
        }
        let mut squares = diagonal.transform(pieces);
        let taken = match ep_pawns {
            Some(ep_pawns) => {
                if role == Role::Pawn {
                    squares &= !ep_pawns;
                }
                sum.occupied
            }
            // The side to move's groups do not exclude each other.
            None if color == stm => unblockable_checks(role, kntm) | kings_bb,
            None => sum.occupied,
        };
        let on = if role == Role::Pawn {
            PAWN_SQUARES
        } else {
            Bitboard::FULL
        };
        sum.push_group(squares, on & !taken);
    }
}

fn flip_square(sq: Square, flip: u32) -> Square {
    Square::new(sq as u32 ^ flip)
}

fn transpose(sq: Square) -> Square {
    Square::new(((sq as u32) >> 3) | (((sq as u32) & 7) << 3))
}

/// The board transformation, found piece group by piece group: a fixed
/// mirroring, then (only without pawns) a transposition about the a1-h8
/// diagonal, decided by the first group (in index order, kings first)
/// that does not lie symmetric to that diagonal.
struct Diagonal {
    symmetric: bool,
    transpose: bool,
    flip: u32,
}

impl Diagonal {
    fn flip_only(&self, bb: Bitboard) -> Bitboard {
        bb.into_iter().fold(Bitboard::EMPTY, |acc, sq| {
            acc | Bitboard::from_square(flip_square(sq, self.flip))
        })
    }

    fn transform(&mut self, bb: Bitboard) -> Bitboard {
        let plain = self.flip_only(bb);
        let transposed = plain.into_iter().fold(Bitboard::EMPTY, |acc, sq| {
            acc | Bitboard::from_square(transpose(sq))
        });
        if self.symmetric && plain != transposed {
            self.symmetric = false;
            // Keep the group below the diagonal: of the squares where the
            // two candidates differ below the diagonal, the lowest decides.
            let below = Bitboard::from_iter(
                Square::ALL
                    .into_iter()
                    .filter(|sq| sq.file() as u32 > sq.rank() as u32),
            );
            let lower_plain = plain & below & !(transposed & below);
            let lower_transposed = transposed & below & !(plain & below);
            self.transpose = match (lower_plain.first(), lower_transposed.first()) {
                (_, None) => false,
                (None, Some(_)) => true,
                (Some(p), Some(t)) => t < p,
            };
        }
        if self.transpose { transposed } else { plain }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn king_pairs_have_prophets_counts() {
        assert_eq!(pawnless_kings().pairs.len(), 462);
        assert_eq!(pawn_kings().pairs.len(), 1806);
    }

    #[test]
    fn syzygy_names_put_the_stronger_side_first() {
        let name = |n: &str| {
            ProphetMaterial::from_name(n)
                .expect("a table name")
                .syzygy_name()
        };
        assert_eq!(name("KBNK"), "KBNvK");
        assert_eq!(name("KKBN"), "KBNvK");
        assert_eq!(name("KPKR"), "KRvKP");
        assert_eq!(name("KK"), "KvK");
    }

    #[test]
    fn names_round_trip() {
        for name in ["KK", "KBNK", "KKQ", "KPKP", "KQKR", "KRPK"] {
            let material = ProphetMaterial::from_name(name).expect(name);
            assert_eq!(material.name(), name);
        }
        assert_eq!(ProphetMaterial::from_name("KNBK"), None);
        assert_eq!(ProphetMaterial::from_name("KBN"), None);
        assert_eq!(ProphetMaterial::from_name("KXK"), None);
    }

    #[test]
    fn sizes_match_the_tables_headers() {
        // numpos from Prophet's longest_mates.csv.
        for (name, positions) in [
            ("KK", 462),
            ("KQK", 25635),
            ("KKQ", 28644),
            ("KPK", 81664),
            ("KKP", 84012),
            ("KBNK", 1550621),
            ("KNKQ", 1603202),
        ] {
            let layout = Layout::new(ProphetMaterial::from_name(name).expect(name));
            assert_eq!(layout.num_positions(), positions, "{name}");
        }
    }
}
