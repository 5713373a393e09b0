//! The DTZ-optimal line from a position.

use app::api::{MainlineAnswer, MainlineStep};
use shakmaty::{CastlingMode, Chess, Position, san::SanPlus};

use super::{EngineError, Tables};

/// A line longer than this is a bug in the tables or in us; stop rather than spin.
const MAX_STEPS: usize = 2_000;

/// Follows the best move until the game ends or a 50-move draw can be
/// claimed; empty for a drawn position.
pub fn mainline(tables: &Tables, mut pos: Chess) -> Result<MainlineAnswer, EngineError> {
    let tablebase = &tables.tablebase;
    let dtz = tablebase
        .probe_dtz(&pos)
        .map_err(|err| tables.explain(err))?;
    let mut steps = Vec::new();
    if !dtz.is_zero() {
        while pos.halfmoves() < 100 && steps.len() < MAX_STEPS {
            let Some((m, after)) = tablebase
                .best_move(&pos)
                .map_err(|err| tables.explain(err))?
            else {
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
