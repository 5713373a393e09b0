//! What a probe found about one position: made by `engine::answer`, kept by
//! `engine::probe_memo` (a file of its own so the memo needs nothing of the
//! code that probes).

use shakmaty_syzygy::{Dtz, MaybeRounded};

use crate::dtm::unavailable::DtmFailure;

/// What the tables and the rules say about one position, before the
/// 50-move-rule category is decided (that needs the clock of the move before).
#[derive(Debug, Clone)]
pub struct Probed {
    pub checkmate: bool,
    pub stalemate: bool,
    /// The variant's own end: the side to move has won (antichess: it has
    /// no pieces left) or lost (atomic: its king exploded).
    pub variant_win: bool,
    pub variant_loss: bool,
    pub insufficient_material: bool,
    /// `dtw: 0`: see `engine::answer::dtw_is_zero`.
    pub dtw_zero: bool,
    pub dtz: Option<MaybeRounded<Dtz>>,
    /// lila's `dtm` (see `engine::tablebases::Tables::probe_dtm`).
    pub dtm: Option<i32>,
    /// The DTM table that failed, leaving `dtm` unknown (boxed: nearly
    /// always `None`, and the memo keeps many of these).
    pub dtm_failure: Option<Box<DtmFailure>>,
    pub halfmoves: u32,
}
