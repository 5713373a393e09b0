//! `zugzwang probe`: print the API's answer for one position as JSON.

use app::variant::{Variant, parse_variant_fen};
use clap::Args;

use super::TableArgs;
use crate::engine::{Engine, EngineError, LoadError};

#[derive(Debug, Args)]
pub struct ProbeArgs {
    /// The position, as a FEN (underscores may stand for spaces).
    pub fen: String,
    /// Print the DTZ mainline instead of the move list.
    #[arg(long)]
    pub mainline: bool,
    /// The rules the position is under: standard, atomic or antichess.
    #[arg(long, default_value = "standard")]
    pub variant: Variant,
    #[command(flatten)]
    pub tables: TableArgs,
}

/// Why `zugzwang probe` printed no answer.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error(transparent)]
    Fen(#[from] app::position::FenError),
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error("cannot write the answer as JSON: {0}")]
    Json(#[from] serde_json::Error),
}

/// Prints the answer (or the mainline) as pretty JSON on stdout.
pub async fn run(args: ProbeArgs) -> Result<(), ProbeError> {
    let pos = parse_variant_fen(args.variant, &args.fen)?;
    let engine = Engine::open(&args.tables.engine_config())?;
    let json = if args.mainline {
        serde_json::to_string_pretty(engine.mainline(pos).await?.as_ref())?
    } else {
        serde_json::to_string_pretty(engine.probe(pos).await?.as_ref())?
    };
    println!("{json}");
    Ok(())
}
