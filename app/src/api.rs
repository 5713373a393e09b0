//! The tablebase API types, shared by the server (which fills them) and the
//! browser (which renders them). The field names and JSON shape follow the
//! lichess tablebase API so existing clients can switch by changing a base URL.

use serde::{Deserialize, Serialize};
use shakmaty::{CastlingMode, Move, Position, san::SanPlus};

use crate::json::{
    FromJson, Json, JsonError, bool_field, field, int_field, list_field, list_field_or_empty,
    optional_field, optional_int_field, string_field,
};

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

    const ALL: [Category; 10] = [
        Category::Loss,
        Category::Unknown,
        Category::SyzygyLoss,
        Category::MaybeLoss,
        Category::BlessedLoss,
        Category::Draw,
        Category::CursedWin,
        Category::MaybeWin,
        Category::SyzygyWin,
        Category::Win,
    ];

    /// The category the API names so.
    pub fn from_name(name: &str) -> Option<Category> {
        Category::ALL.into_iter().find(|c| c.as_str() == name)
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

/// `PositionInfo`'s flags and distances by their JSON names, for code that
/// reads answers as plain JSON (an upstream server's answer checked before
/// it is kept, the tests).
pub const POSITION_FLAGS: [&str; 5] = [
    "checkmate",
    "stalemate",
    "variant_win",
    "variant_loss",
    "insufficient_material",
];
/// The distances, likewise.
pub const POSITION_DISTANCES: [&str; 5] = ["dtz", "precise_dtz", "dtm", "dtw", "dtc"];

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
    /// Depth to mate in plies, where a DTM table covers the position
    /// (negative: the side to move is mated); null otherwise.
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
pub struct TablebaseAnswer {
    #[serde(flatten)]
    pub pos: PositionInfo,
    /// Every legal move, best first.
    pub moves: Vec<MoveInfo>,
    /// The DTM tables that failed while the answer was made (damaged or
    /// unreadable), so `dtm` is null where they would have said: the
    /// root's first. Not in lila's JSON: the API writes the body with
    /// [`TablebaseAnswer::lila`] and sends this as the
    /// [`DTM_UNAVAILABLE_HEADER`]; the page's own copy of an answer (its
    /// resources, written with serde) carries it here.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dtm_unavailable: Vec<DtmUnavailable>,
    /// The upstream server the answer came from where the local tables
    /// end (`serve --upstream`), for the verdict ("answer from
    /// tablebase.lichess.ovh"). Not in lila's JSON, which stays the
    /// upstream's byte for byte: the API says it in the
    /// [`UPSTREAM_HOST_HEADER`] (with `X-Source: upstream`), the browser
    /// reads it from there, and the page's own copy of an answer carries it
    /// here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The local tables' answer, missing part of itself because no
    /// upstream server could be asked just now (the API's
    /// [`UPSTREAM_UNAVAILABLE_HEADER`]: the budget is spent, the server
    /// is down): the page does not keep it, and asks again when it shows
    /// the position again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ask_again: bool,
}

impl TablebaseAnswer {
    /// The answer as lila-tablebase writes it (what the API sends): every
    /// field but `dtm_unavailable`, which travels in a header.
    pub fn lila(&self) -> LilaAnswer<'_> {
        LilaAnswer {
            pos: &self.pos,
            moves: &self.moves,
        }
    }

    /// Why the root's `dtm` is null, when a DTM table that should have
    /// given it failed.
    pub fn root_dtm_unavailable(&self) -> Option<&DtmUnavailable> {
        self.dtm_unavailable.iter().find(|u| u.root)
    }
}

/// A [`TablebaseAnswer`] in lila-tablebase's JSON shape, byte for byte.
#[derive(Serialize, Debug)]
pub struct LilaAnswer<'a> {
    #[serde(flatten)]
    pos: &'a PositionInfo,
    moves: &'a [MoveInfo],
}

/// What was wrong with a DTM table that could not answer.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
pub enum DtmProblem {
    /// Its bytes failed a check (its checksum, a block checksum, zstd,
    /// its length), or it was skipped at start as damaged.
    Damaged,
    /// It could not be read (an I/O error, or skipped at start as unreadable).
    Unreadable,
    /// Its bytes were never checked, so the server does not answer from
    /// it (no checksums recorded, and no `--allow-unchecked`).
    Unchecked,
}

impl DtmProblem {
    /// As the header and `/metrics` name it.
    pub fn as_str(self) -> &'static str {
        match self {
            DtmProblem::Damaged => "damaged",
            DtmProblem::Unreadable => "unreadable",
            DtmProblem::Unchecked => "unchecked",
        }
    }

    pub fn from_name(name: &str) -> Option<DtmProblem> {
        [
            DtmProblem::Damaged,
            DtmProblem::Unreadable,
            DtmProblem::Unchecked,
        ]
        .into_iter()
        .find(|p| p.as_str() == name)
    }

    /// What the page says of the table: "the KQvKR DTM table is damaged".
    pub fn words(self) -> &'static str {
        match self {
            DtmProblem::Damaged => "is damaged",
            DtmProblem::Unreadable => "cannot be read",
            DtmProblem::Unchecked => "was never checked",
        }
    }
}

/// The response header naming the DTM tables that failed for an answer
/// (see [`DtmUnavailable::header_value`]); absent when none did.
pub const DTM_UNAVAILABLE_HEADER: &str = "x-dtm-unavailable";

/// The response header naming the upstream server an answer came from
/// (`tablebase.lichess.ovh`), where the local tables end (`serve
/// --upstream`); absent on the local tables' own answers.
pub const UPSTREAM_HOST_HEADER: &str = "x-upstream-host";

/// The response header saying why an answer is the local tables' although
/// they miss part of it and upstream servers are configured (no server
/// could be asked just now); absent otherwise.
pub const UPSTREAM_UNAVAILABLE_HEADER: &str = "x-upstream-unavailable";

/// A DTM table that failed while an answer was made: `dtm` is null for the
/// positions it covers (the answer is otherwise whole: WDL and DTZ come
/// from the Syzygy tables).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Hash)]
pub struct DtmUnavailable {
    /// The table's file name (`KQKR.egtb.bz`), never where it lies.
    pub table: String,
    pub problem: DtmProblem,
    /// Whether the root's `dtm` is one it left null (else only moves').
    pub root: bool,
}

impl DtmUnavailable {
    /// The header's value: one item per table, the root's first, as a
    /// structured-field list (RFC 8941), e.g.
    /// `KQKR.egtb.bz;problem=damaged;root, KQK.egtb.bz;problem=unreadable`;
    /// `None` for no table.
    pub fn header_value(list: &[DtmUnavailable]) -> Option<String> {
        if list.is_empty() {
            return None;
        }
        let items: Vec<String> = list
            .iter()
            .map(|u| {
                let root = if u.root { ";root" } else { "" };
                format!("{};problem={}{root}", u.table, u.problem.as_str())
            })
            .collect();
        Some(items.join(", "))
    }

    /// Reads the header's value; items it cannot read are left out.
    pub fn from_header(value: &str) -> Vec<DtmUnavailable> {
        value
            .split(',')
            .filter_map(|item| {
                let mut parts = item.trim().split(';').map(str::trim);
                let table = parts.next().filter(|t| !t.is_empty())?.to_string();
                let mut problem = None;
                let mut root = false;
                for part in parts {
                    match part.split_once('=') {
                        Some(("problem", name)) => problem = DtmProblem::from_name(name),
                        None if part == "root" => root = true,
                        _ => {}
                    }
                }
                Some(DtmUnavailable {
                    table,
                    problem: problem?,
                    root,
                })
            })
            .collect()
    }

    /// The table's material as the page names tables, the stronger side
    /// first: `KQvKR` for `KQKR.egtb.bz` (either side to move).
    pub fn material(&self) -> String {
        let stem = self.table.strip_suffix(".egtb.bz").unwrap_or(&self.table);
        match stem.get(1..).and_then(|rest| rest.find('K')) {
            Some(at) => {
                let (a, b) = stem.split_at(at + 1);
                crate::material::table_name_of_sides(a, b)
            }
            None => stem.to_string(),
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

/// Zugzwang's own: the SVG histogram of a standard position's table by
/// DTZ, the position marked (`?fen=`), which the statistics show.
pub const DTZ_HISTOGRAM_PATH: &str = "/stats/dtz.svg";

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
    /// Table files of this variant (DTM files with standard chess) a check
    /// found damaged: the server refuses them until they are replaced.
    #[serde(default)]
    pub damaged: Vec<DamagedTable>,
}

/// A table file the server refuses because a check found it damaged.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct DamagedTable {
    /// The file, e.g. `KQBvKR.rtbz` or `KQKR.egtb.bz`.
    pub table: String,
    /// What is wrong and what found it.
    pub reason: String,
}

/// How many of one piece count's published tables are installed.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct PieceCoverage {
    pub pieces: u8,
    pub installed: u32,
    pub published: u32,
}

// Reading answers in the browser (`crate::json`): the field names are the
// ones serde writes above, and the tests below read back what it wrote.

impl FromJson for Category {
    fn from_json<J: Json>(value: &J) -> Result<Self, JsonError> {
        value
            .as_string()
            .and_then(|name| Category::from_name(&name))
            .ok_or(JsonError::Wrong("category", "a category name"))
    }
}

impl FromJson for PositionInfo {
    fn from_json<J: Json>(value: &J) -> Result<Self, JsonError> {
        Ok(PositionInfo {
            checkmate: bool_field(value, "checkmate")?,
            stalemate: bool_field(value, "stalemate")?,
            variant_win: bool_field(value, "variant_win")?,
            variant_loss: bool_field(value, "variant_loss")?,
            insufficient_material: bool_field(value, "insufficient_material")?,
            dtz: optional_int_field(value, "dtz")?,
            precise_dtz: optional_int_field(value, "precise_dtz")?,
            dtm: optional_int_field(value, "dtm")?,
            dtw: optional_int_field(value, "dtw")?,
            dtc: optional_int_field(value, "dtc")?,
            category: Category::from_json(&field(value, "category")?)?,
        })
    }
}

impl FromJson for MoveInfo {
    fn from_json<J: Json>(value: &J) -> Result<Self, JsonError> {
        Ok(MoveInfo {
            uci: string_field(value, "uci")?,
            san: string_field(value, "san")?,
            zeroing: bool_field(value, "zeroing")?,
            conversion: bool_field(value, "conversion")?,
            pos: PositionInfo::from_json(value)?,
        })
    }
}

impl FromJson for TablebaseAnswer {
    fn from_json<J: Json>(value: &J) -> Result<Self, JsonError> {
        Ok(TablebaseAnswer {
            pos: PositionInfo::from_json(value)?,
            moves: list_field(value, "moves")?,
            dtm_unavailable: list_field_or_empty(value, "dtm_unavailable")?,
            source: optional_field(value, "source")?,
            ask_again: value
                .field("ask_again")
                .and_then(|v| v.as_bool())
                .unwrap_or(false),
        })
    }
}

impl FromJson for DtmUnavailable {
    fn from_json<J: Json>(value: &J) -> Result<Self, JsonError> {
        let problem = string_field(value, "problem")?;
        Ok(DtmUnavailable {
            table: string_field(value, "table")?,
            problem: DtmProblem::from_name(&problem).ok_or(JsonError::Wrong(
                "problem",
                "damaged, unreadable or unchecked",
            ))?,
            root: bool_field(value, "root")?,
        })
    }
}

impl FromJson for MainlineStep {
    fn from_json<J: Json>(value: &J) -> Result<Self, JsonError> {
        Ok(MainlineStep {
            uci: string_field(value, "uci")?,
            san: string_field(value, "san")?,
            dtz: int_field(value, "dtz")?,
            precise_dtz: optional_int_field(value, "precise_dtz")?,
        })
    }
}

impl FromJson for MainlineAnswer {
    fn from_json<J: Json>(value: &J) -> Result<Self, JsonError> {
        Ok(MainlineAnswer {
            mainline: list_field(value, "mainline")?,
            winner: optional_field(value, "winner")?,
            dtz: int_field(value, "dtz")?,
            precise_dtz: optional_int_field(value, "precise_dtz")?,
        })
    }
}

impl FromJson for MateStep {
    fn from_json<J: Json>(value: &J) -> Result<Self, JsonError> {
        Ok(MateStep {
            uci: string_field(value, "uci")?,
            san: string_field(value, "san")?,
            dtm: optional_int_field(value, "dtm")?,
        })
    }
}

impl FromJson for MateLineAnswer {
    fn from_json<J: Json>(value: &J) -> Result<Self, JsonError> {
        Ok(MateLineAnswer {
            mainline: list_field(value, "mainline")?,
            winner: optional_field(value, "winner")?,
            dtm: optional_int_field(value, "dtm")?,
        })
    }
}

impl FromJson for ApiError {
    fn from_json<J: Json>(value: &J) -> Result<Self, JsonError> {
        Ok(ApiError {
            error: string_field(value, "error")?,
        })
    }
}

impl FromJson for InstalledTables {
    fn from_json<J: Json>(value: &J) -> Result<Self, JsonError> {
        Ok(InstalledTables {
            tables: list_field(value, "tables")?,
            pieces: list_field(value, "pieces")?,
            dtm: list_field_or_empty(value, "dtm")?,
            damaged: list_field_or_empty(value, "damaged")?,
        })
    }
}

impl FromJson for DamagedTable {
    fn from_json<J: Json>(value: &J) -> Result<Self, JsonError> {
        Ok(DamagedTable {
            table: string_field(value, "table")?,
            reason: string_field(value, "reason")?,
        })
    }
}

impl FromJson for PieceCoverage {
    fn from_json<J: Json>(value: &J) -> Result<Self, JsonError> {
        Ok(PieceCoverage {
            pieces: int_field(value, "pieces")?,
            installed: int_field(value, "installed")?,
            published: int_field(value, "published")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::read;

    fn lost_by_mate() -> MoveInfo {
        let mut lost = PositionInfo::unknown();
        lost.category = Category::Loss;
        lost.dtz = Some(-3);
        lost.dtm = Some(-2);
        lost.variant_loss = true;
        MoveInfo {
            uci: "d2d7".to_string(),
            san: "Qxd7#".to_string(),
            zeroing: true,
            conversion: true,
            pos: lost,
        }
    }

    /// The server writes answers with `flatten`; the page reads them flat,
    /// with its own reader (crate::json) rather than serde.
    #[test]
    fn answers_read_back_as_written() {
        let answer = TablebaseAnswer {
            pos: PositionInfo::unknown(),
            moves: vec![lost_by_mate()],
            dtm_unavailable: Vec::new(),
            source: None,
            ask_again: false,
        };
        let json = serde_json::to_string(&answer).expect("serializes");
        assert!(
            json.contains(
                r#""uci":"d2d7","san":"Qxd7#","zeroing":true,"conversion":true,"checkmate":false"#
            ),
            "{json}"
        );
        assert_eq!(read::<TablebaseAnswer>(&json), Ok(answer.clone()));
        let by_serde: TablebaseAnswer = serde_json::from_str(&json).expect("serde reads it too");
        assert_eq!(by_serde, answer);
        let missing = r#"{"checkmate":false,"stalemate":false,"variant_win":false,"variant_loss":false,"insufficient_material":false,"category":"draw","moves":[]}"#;
        let read = read::<TablebaseAnswer>(missing).expect("absent distances are null");
        assert_eq!(read.pos.dtz, None);
        assert_eq!(read.pos.category, Category::Draw);
    }

    /// A degraded answer: lila's JSON never shows what failed (it goes in
    /// the header), the page's own copy keeps it, and the header reads
    /// back as written.
    #[test]
    fn dtm_unavailable_stays_out_of_the_api_json_and_travels_in_a_header() {
        let healthy = TablebaseAnswer {
            pos: PositionInfo::unknown(),
            moves: vec![lost_by_mate()],
            dtm_unavailable: Vec::new(),
            source: None,
            ask_again: false,
        };
        let lila = serde_json::to_string(&healthy.lila()).expect("serializes");
        assert_eq!(
            lila,
            serde_json::to_string(&healthy).expect("serializes"),
            "a whole answer is written alike either way"
        );
        let mut degraded = healthy.clone();
        degraded.dtm_unavailable = vec![
            DtmUnavailable {
                table: "KQKR.egtb.bz".to_string(),
                problem: DtmProblem::Damaged,
                root: true,
            },
            DtmUnavailable {
                table: "KRK.egtb.bz".to_string(),
                problem: DtmProblem::Unreadable,
                root: false,
            },
        ];
        assert_eq!(
            serde_json::to_string(&degraded.lila()).expect("serializes"),
            lila,
            "lila's shape has no new field"
        );
        let page = serde_json::to_string(&degraded).expect("serializes");
        assert!(page.contains("dtm_unavailable"), "{page}");
        assert_eq!(read::<TablebaseAnswer>(&page), Ok(degraded.clone()));
        assert_eq!(read::<TablebaseAnswer>(&lila), Ok(healthy));

        let header = DtmUnavailable::header_value(&degraded.dtm_unavailable).expect("some");
        assert_eq!(
            header,
            "KQKR.egtb.bz;problem=damaged;root, KRK.egtb.bz;problem=unreadable"
        );
        assert_eq!(
            DtmUnavailable::from_header(&header),
            degraded.dtm_unavailable
        );
        assert_eq!(DtmUnavailable::header_value(&[]), None);
        assert_eq!(
            DtmUnavailable::from_header("x;problem=melted, ;problem=damaged, KK.egtb.bz"),
            Vec::new()
        );
        let root = degraded.root_dtm_unavailable().expect("the root's");
        assert_eq!(root.material(), "KQvKR");
        assert_eq!(degraded.dtm_unavailable[1].material(), "KRvK");
        let black_first = DtmUnavailable::from_header("KKQ.egtb.bz;problem=damaged");
        assert_eq!(black_first[0].material(), "KQvK");
    }

    #[test]
    fn every_category_reads_back_by_its_name() {
        for category in Category::ALL {
            let json = serde_json::to_string(&category).expect("serializes");
            assert_eq!(read::<Category>(&json), Ok(category));
        }
        assert!(read::<Category>(r#""won""#).is_err());
    }

    #[test]
    fn lines_tables_and_errors_read_back_as_written() {
        let mainline = MainlineAnswer {
            mainline: vec![MainlineStep {
                uci: "a1a8".to_string(),
                san: "Ra8#".to_string(),
                dtz: -1,
                precise_dtz: None,
            }],
            winner: Some("w".to_string()),
            dtz: 2,
            precise_dtz: Some(2),
        };
        let json = serde_json::to_string(&mainline).expect("serializes");
        assert_eq!(read::<MainlineAnswer>(&json), Ok(mainline));
        let mate = MateLineAnswer {
            mainline: vec![MateStep {
                uci: "a1a8".to_string(),
                san: "Ra8#".to_string(),
                dtm: None,
            }],
            winner: None,
            dtm: Some(1),
        };
        let json = serde_json::to_string(&mate).expect("serializes");
        assert_eq!(read::<MateLineAnswer>(&json), Ok(mate));
        let tables = InstalledTables {
            tables: vec!["KQvK".to_string()],
            pieces: vec![PieceCoverage {
                pieces: 3,
                installed: 5,
                published: 5,
            }],
            dtm: vec!["KBNvK".to_string()],
            damaged: vec![DamagedTable {
                table: "KQvKR.rtbz".to_string(),
                reason: "damaged (sha256 differs; found by verify)".to_string(),
            }],
        };
        let json = serde_json::to_string(&tables).expect("serializes");
        assert_eq!(read::<InstalledTables>(&json), Ok(tables));
        let older = r#"{"tables":[],"pieces":[]}"#;
        assert_eq!(
            read::<InstalledTables>(older).map(|t| t.dtm),
            Ok(Vec::new())
        );
        let error = r#"{"error":"illegal fen"}"#;
        assert_eq!(
            read::<ApiError>(error).map(|e| e.error),
            Ok("illegal fen".to_string())
        );
    }

    /// The page's resources travel inside the page as serde writes them.
    #[test]
    fn resource_values_read_back_as_written() {
        type Shown = Result<(String, TablebaseAnswer), String>;
        let answer = TablebaseAnswer {
            pos: PositionInfo::unknown(),
            moves: vec![lost_by_mate()],
            dtm_unavailable: Vec::new(),
            source: None,
            ask_again: false,
        };
        let shown: Shown = Ok(("8/8/8/8/8/8/8/K1k5 w - - 0 1".to_string(), answer.clone()));
        let json = serde_json::to_string(&shown).expect("serializes");
        assert_eq!(read::<Shown>(&json), Ok(shown));
        // An upstream server's answer keeps its source across hydration.
        let mut upstream = answer.clone();
        upstream.source = Some("tablebase.lichess.ovh".to_string());
        let shown: Shown = Ok(("8/8/8/8/8/8/8/K1k5 w - - 0 1".to_string(), upstream));
        let json = serde_json::to_string(&shown).expect("serializes");
        assert_eq!(read::<Shown>(&json), Ok(shown));
        // So does a local answer that is to be asked again.
        let mut for_now = answer.clone();
        for_now.ask_again = true;
        let shown: Shown = Ok(("8/8/8/8/8/8/8/K1k5 w - - 0 1".to_string(), for_now));
        let json = serde_json::to_string(&shown).expect("serializes");
        assert!(json.contains(r#""ask_again":true"#), "{json}");
        assert_eq!(read::<Shown>(&json), Ok(shown));
        let refused: Shown = Err("illegal position".to_string());
        let json = serde_json::to_string(&refused).expect("serializes");
        assert_eq!(read::<Shown>(&json), Ok(refused));
        assert_eq!(read::<Option<InstalledTables>>("null"), Ok(None));
    }

    /// What cannot be read says which field and why, and never panics.
    #[test]
    fn unreadable_answers_say_why() {
        assert!(matches!(read::<ApiError>("{"), Err(JsonError::Syntax(_))));
        assert_eq!(read::<ApiError>("{}"), Err(JsonError::Missing("error")));
        let fractional = r#"{"pieces":3.5,"installed":1,"published":1}"#;
        assert!(matches!(
            read::<PieceCoverage>(fractional),
            Err(JsonError::Wrong("pieces", _))
        ));
        let too_big = r#"{"pieces":300,"installed":1,"published":1}"#;
        assert!(matches!(
            read::<PieceCoverage>(too_big),
            Err(JsonError::Wrong("pieces", _))
        ));
        let text_dtz = r#"{"uci":"a1a2","san":"Ra2","dtz":"3","precise_dtz":null}"#;
        assert_eq!(
            read::<MainlineStep>(text_dtz).map_err(|e| e.to_string()),
            Err("`dtz` is not a whole number in range".to_string())
        );
        assert!(read::<(String, String)>(r#"["a"]"#).is_err());
        assert!(read::<Result<String, String>>("{}").is_err());
    }
}
