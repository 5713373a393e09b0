//! The tablebase API types, shared by the server (which fills them) and the
//! browser (which renders them). The field names and JSON shape follow the
//! lichess tablebase API so existing clients can switch by changing a base URL.

use serde::{Deserialize, Serialize};
use shakmaty::{CastlingMode, Move, Position, san::SanPlus};

/// The longest UCI move: a promotion (`e7e8q`).
const MAX_UCI: usize = 5;
/// The longest SAN move: a capture with a full square, or a promotion
/// capture, with check or mate (`Qa1xb2+`, `exd8=Q#`).
const MAX_SAN: usize = 7;

/// Outcome of a position for the side to move, with the 50-move rule counted.
///
/// The order of the variants is the order in which a player prefers to *leave*
/// the opponent: a move leading to `Loss` (for the opponent) is best, and
/// `Unknown` ranks just above it (pessimistic), as in lila-tablebase.
///
/// `SyzygyWin` / `SyzygyLoss` are what the tables alone say when DTZ
/// rounding leaves open whether the win still comes within the 50-move rule;
/// `MaybeWin` / `MaybeLoss` are kept for answers that also use DTC (lichess
/// has such tables; Zugzwang does not), so Zugzwang never sends them.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    Loss,
    Unknown,
    SyzygyLoss,
    MaybeLoss,
    BlessedLoss,
    Draw,
    CursedWin,
    MaybeWin,
    SyzygyWin,
    Win,
}

impl Category {
    /// A win of any certainty for the side this category describes (what
    /// decides whether converting or zeroing is good for the other side).
    pub fn is_win(self) -> bool {
        matches!(
            self,
            Category::CursedWin | Category::MaybeWin | Category::SyzygyWin | Category::Win
        )
    }

    /// The same outcome seen by the other player.
    pub fn flip(self) -> Category {
        match self {
            Category::Loss => Category::Win,
            Category::Unknown => Category::Unknown,
            Category::SyzygyLoss => Category::SyzygyWin,
            Category::MaybeLoss => Category::MaybeWin,
            Category::BlessedLoss => Category::CursedWin,
            Category::Draw => Category::Draw,
            Category::CursedWin => Category::BlessedLoss,
            Category::MaybeWin => Category::MaybeLoss,
            Category::SyzygyWin => Category::SyzygyLoss,
            Category::Win => Category::Loss,
        }
    }

    /// The name used in the API (`"cursed-win"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Loss => "loss",
            Category::Unknown => "unknown",
            Category::SyzygyLoss => "syzygy-loss",
            Category::MaybeLoss => "maybe-loss",
            Category::BlessedLoss => "blessed-loss",
            Category::Draw => "draw",
            Category::CursedWin => "cursed-win",
            Category::MaybeWin => "maybe-win",
            Category::SyzygyWin => "syzygy-win",
            Category::Win => "win",
        }
    }
}

/// What is known about one position (the root, or the position after a move).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct PositionInfo {
    pub checkmate: bool,
    pub stalemate: bool,
    pub variant_win: bool,
    pub variant_loss: bool,
    pub insufficient_material: bool,
    /// DTZ50'' in plies, possibly rounded by the table format; null if unknown.
    pub dtz: Option<i32>,
    /// DTZ only where the tables guarantee it is not rounded.
    pub precise_dtz: Option<i32>,
    /// Depth to mate: Zugzwang has no DTM tables, always null.
    pub dtm: Option<i32>,
    /// Depth to win (antichess only). Zugzwang has no DTW tables: 0 where
    /// lila-tablebase's prober needs none (an antichess position of at most
    /// 4 pieces whose side to move has pieces but no legal move, so has
    /// won), otherwise null.
    pub dtw: Option<i32>,
    /// Depth to conversion: always null.
    pub dtc: Option<i32>,
    pub category: Category,
}

impl PositionInfo {
    /// A position the tables gave no answer for: nothing is known of it,
    /// not even mate (the page lists such moves when the server is out of reach).
    pub fn unknown() -> Self {
        PositionInfo {
            checkmate: false,
            stalemate: false,
            variant_win: false,
            variant_loss: false,
            insufficient_material: false,
            dtz: None,
            precise_dtz: None,
            dtm: None,
            dtw: None,
            dtc: None,
            category: Category::Unknown,
        }
    }
}

/// One legal move and what it leads to.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(from = "FlatMove")]
pub struct MoveInfo {
    pub uci: String,
    pub san: String,
    /// A capture or pawn move: resets the 50-move counter.
    pub zeroing: bool,
    /// A capture or promotion: changes the material (and so the table).
    pub conversion: bool,
    #[serde(flatten)]
    pub pos: PositionInfo,
}

impl MoveInfo {
    /// A legal move of `pos` as the API names it, and the position after
    /// it. What the move leads to is not known yet (`PositionInfo::unknown`):
    /// the server fills it in from the tables, the page shows it as is when
    /// the server is out of reach. One home for both, so the two sides name
    /// moves alike. Any variant: `pos` is a `Chess` or a `VariantPosition`,
    /// whose rules decide the SAN (explosions, antichess king promotions).
    pub fn play<P: Position + Clone>(pos: &P, m: Move) -> (MoveInfo, P) {
        let mut after = pos.clone();
        // Sized once: `to_string` grows a string from nothing, and those
        // regrowths were a third of glibc's `_int_malloc` samples in a hot
        // profile of the server (server/docs/benchmarks.md, "Probing without
        // a hand-off").
        let mut uci = String::with_capacity(MAX_UCI);
        m.to_uci(CastlingMode::Standard).append_to_string(&mut uci);
        let mut san = String::with_capacity(MAX_SAN);
        SanPlus::from_move_and_play_unchecked(&mut after, m).append_to_string(&mut san);
        let info = MoveInfo {
            uci,
            san,
            zeroing: m.is_zeroing(),
            conversion: m.is_conversion(),
            pos: PositionInfo::unknown(),
        };
        (info, after)
    }
}

/// Answer of `GET /standard`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(from = "FlatAnswer")]
pub struct TablebaseAnswer {
    #[serde(flatten)]
    pub pos: PositionInfo,
    /// Every legal move, best first.
    pub moves: Vec<MoveInfo>,
}

/// A [`MoveInfo`] as the JSON has it, its position's fields next to its own.
///
/// Reading `#[serde(flatten)]` buffers every field in serde's catch-all
/// `Content` first, and that machinery is about 4 KB of the gzipped WASM;
/// a flat struct reads the same JSON directly. Writing keeps `flatten`
/// (it costs the browser nothing, only the server writes answers).
#[derive(Deserialize)]
struct FlatMove {
    uci: String,
    san: String,
    zeroing: bool,
    conversion: bool,
    checkmate: bool,
    stalemate: bool,
    variant_win: bool,
    variant_loss: bool,
    insufficient_material: bool,
    dtz: Option<i32>,
    precise_dtz: Option<i32>,
    dtm: Option<i32>,
    dtw: Option<i32>,
    dtc: Option<i32>,
    category: Category,
}

impl From<FlatMove> for MoveInfo {
    fn from(m: FlatMove) -> MoveInfo {
        MoveInfo {
            uci: m.uci,
            san: m.san,
            zeroing: m.zeroing,
            conversion: m.conversion,
            pos: PositionInfo {
                checkmate: m.checkmate,
                stalemate: m.stalemate,
                variant_win: m.variant_win,
                variant_loss: m.variant_loss,
                insufficient_material: m.insufficient_material,
                dtz: m.dtz,
                precise_dtz: m.precise_dtz,
                dtm: m.dtm,
                dtw: m.dtw,
                dtc: m.dtc,
                category: m.category,
            },
        }
    }
}

/// A [`TablebaseAnswer`] as the JSON has it, read without `flatten` (see
/// [`FlatMove`]).
#[derive(Deserialize)]
struct FlatAnswer {
    checkmate: bool,
    stalemate: bool,
    variant_win: bool,
    variant_loss: bool,
    insufficient_material: bool,
    dtz: Option<i32>,
    precise_dtz: Option<i32>,
    dtm: Option<i32>,
    dtw: Option<i32>,
    dtc: Option<i32>,
    category: Category,
    moves: Vec<MoveInfo>,
}

impl From<FlatAnswer> for TablebaseAnswer {
    fn from(a: FlatAnswer) -> TablebaseAnswer {
        TablebaseAnswer {
            pos: PositionInfo {
                checkmate: a.checkmate,
                stalemate: a.stalemate,
                variant_win: a.variant_win,
                variant_loss: a.variant_loss,
                insufficient_material: a.insufficient_material,
                dtz: a.dtz,
                precise_dtz: a.precise_dtz,
                dtm: a.dtm,
                dtw: a.dtw,
                dtc: a.dtc,
                category: a.category,
            },
            moves: a.moves,
        }
    }
}

/// One step of a DTZ-optimal line.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct MainlineStep {
    pub uci: String,
    pub san: String,
    pub dtz: i32,
    pub precise_dtz: Option<i32>,
}

/// Answer of `GET /standard/mainline`. The fields are in lila-tablebase's
/// order, so the JSON is byte for byte the same.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct MainlineAnswer {
    /// Empty when the position is drawn.
    pub mainline: Vec<MainlineStep>,
    /// `"w"`, `"b"`, or null when the line ends in a draw (or a 50-move claim).
    pub winner: Option<String>,
    pub dtz: i32,
    pub precise_dtz: Option<i32>,
}

/// One move of a fastest-mate line and the depth to mate after it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct MateStep {
    pub uci: String,
    pub san: String,
    /// Plies to mate for the side to move after the move, as `dtm` in a
    /// probe answer (negative: it is mated); null once mated.
    pub dtm: Option<i32>,
}

/// The route of the fastest-mate line (standard chess only: the DTM tables
/// are Prophet's, which cover standard chess).
pub const FASTEST_MATE_PATH: &str = "/standard/fastest-mate";

/// Answer of `GET /standard/fastest-mate` (Zugzwang only, not in lila's
/// API): the DTM-optimal line, the winner mating as fast as possible and
/// the loser resisting as long as possible, to mate. Unlike the DTZ
/// mainline it ignores the 50-move rule, as depth to mate does.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct MateLineAnswer {
    /// Empty when the position is drawn or already mate.
    pub mainline: Vec<MateStep>,
    /// `"w"`, `"b"`, or null for a draw.
    pub winner: Option<String>,
    /// The start's depth to mate in plies, as `dtm` in a probe answer.
    pub dtm: Option<i32>,
}

/// Body of every error answer, so clients always get a message to show.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct ApiError {
    pub error: String,
}

/// Answer of `GET /tables` (Zugzwang only, not in lila's API): the tables
/// the server has installed, so the page can say which table an unknown
/// move needs and how complete each piece count is.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct InstalledTables {
    /// Material keys as Syzygy names them (`KRPvKR`), with both the WDL and
    /// the DTZ file installed, sorted.
    pub tables: Vec<String>,
    /// Per piece count, how many of the published tables are installed.
    pub pieces: Vec<PieceCoverage>,
    /// Materials with a depth-to-mate table, named as `tables` (`KBNvK`),
    /// sorted; standard chess only.
    #[serde(default)]
    pub dtm: Vec<String>,
}

/// How many of one piece count's published tables are installed.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct PieceCoverage {
    pub pieces: u8,
    pub installed: u32,
    pub published: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The server writes answers with `flatten`; the page reads them flat.
    #[test]
    fn answers_read_back_as_written() {
        let mut lost = PositionInfo::unknown();
        lost.category = Category::Loss;
        lost.dtz = Some(-3);
        lost.variant_loss = true;
        let answer = TablebaseAnswer {
            pos: PositionInfo::unknown(),
            moves: vec![MoveInfo {
                uci: "d2d7".to_string(),
                san: "Qxd7#".to_string(),
                zeroing: true,
                conversion: true,
                pos: lost,
            }],
        };
        let json = serde_json::to_string(&answer).expect("serializes");
        assert!(
            json.contains(
                r#""uci":"d2d7","san":"Qxd7#","zeroing":true,"conversion":true,"checkmate":false"#
            ),
            "{json}"
        );
        let read: TablebaseAnswer = serde_json::from_str(&json).expect("reads back");
        assert_eq!(read, answer);
        let missing = r#"{"checkmate":false,"stalemate":false,"variant_win":false,"variant_loss":false,"insufficient_material":false,"category":"draw","moves":[]}"#;
        let read: TablebaseAnswer =
            serde_json::from_str(missing).expect("absent distances are null");
        assert_eq!(read.pos.dtz, None);
    }
}
