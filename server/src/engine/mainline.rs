//! The DTZ-optimal line from a position.

use app::api::{MainlineAnswer, MainlineStep};
use shakmaty::{CastlingMode, Position, san::SanPlus, variant::VariantPosition};

use super::{EngineError, Tables};
use crate::store::context;

/// A line longer than this is a bug in the tables or in us; stop rather than spin.
const MAX_STEPS: usize = 2_000;

/// Follows the best move until the game ends (by mate or the variant's own
/// end) or a 50-move draw can be claimed; empty for a drawn position.
pub fn mainline(tables: &Tables, mut pos: VariantPosition) -> Result<MainlineAnswer, EngineError> {
    let dtz = tables.require_dtz(&pos)?;
    context::count_probes(1);
    let mut steps = Vec::new();
    if !dtz.is_zero() {
        while pos.halfmoves() < 100 && steps.len() < MAX_STEPS {
            // The best move is found by probing the position after each move.
            context::count_probes(pos.legal_moves().len());
            let Some((m, after)) = tables.best_move(&pos)? else {
                break;
            };
            let uci = m.to_uci(CastlingMode::Standard).to_string();
            let san = SanPlus::from_move_and_play_unchecked(&mut pos, m).to_string();
            steps.push(MainlineStep {
                uci,
                san,
                dtz: after.ignore_rounding().0,
                precise_dtz: after.precise().map(|d| d.0),
            });
        }
    }
    Ok(MainlineAnswer {
        dtz: dtz.ignore_rounding().0,
        precise_dtz: dtz.precise().map(|d| d.0),
        mainline: steps,
        winner: pos.outcome().winner().map(|color| color.char().to_string()),
    })
}
