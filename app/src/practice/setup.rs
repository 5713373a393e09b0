//! A practice game as its URL holds it, so a reload or a shared link
//! resumes it: `/practice?fen=<start>&side=white&seed=7&moves=h1h7_e8d8`
//! (and `&variant=atomic`, `&resigned=1`). Without `side` the page asks
//! which side to take.

use shakmaty::Color;

use crate::{hooks::url_position::START_FEN, source::encode, variant::Variant};

/// The page of the practice mode.
pub const PRACTICE_PATH: &str = "/practice";

/// Everything a practice game is made of; the moves of both sides are in
/// `moves`, the tablebase's replies too (a reload does not ask again).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setup {
    pub variant: Variant,
    /// The start position, as the URL spells it.
    pub fen: String,
    /// The player's side; `None` until chosen.
    pub side: Option<Color>,
    /// Every ply played since the start, as UCI.
    pub moves: Vec<String>,
    /// Chooses among equally good replies, so the same URL replays alike.
    pub seed: u64,
    pub resigned: bool,
}

impl Setup {
    /// A game not begun: the player has still to choose a side.
    pub fn new(variant: Variant, fen: &str) -> Setup {
        Setup {
            variant,
            fen: fen.to_string(),
            side: None,
            moves: Vec::new(),
            seed: seed_of(fen),
            resigned: false,
        }
    }

    /// Reads the URL's query, given as a lookup by name; anything missing
    /// or unreadable reads as its default, as the explorer's URL does.
    pub fn read(get: impl Fn(&str) -> Option<String>) -> Setup {
        // Links write spaces as underscores, as the API allows.
        let fen = get("fen").map_or_else(|| START_FEN.to_string(), |f| f.replace('_', " "));
        let moves = get("moves")
            .map(|m| {
                m.split(['_', ' ', ','])
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        Setup {
            variant: get("variant")
                .and_then(|v| v.parse().ok())
                .unwrap_or_default(),
            side: get("side").and_then(|s| side_named(&s)),
            moves,
            seed: get("seed")
                .and_then(|s| s.parse().ok())
                .unwrap_or_else(|| seed_of(&fen)),
            resigned: get("resigned").is_some_and(|v| v == "1" || v == "true"),
            fen,
        }
    }

    /// The game's link.
    pub fn href(&self) -> String {
        let mut out = format!("{PRACTICE_PATH}?");
        if self.variant != Variant::Standard {
            out.push_str(&format!("variant={}&", self.variant));
        }
        out.push_str(&format!("fen={}", encode(&self.fen)));
        if let Some(side) = self.side {
            out.push_str(&format!("&side={}&seed={}", side_name(side), self.seed));
        }
        if !self.moves.is_empty() {
            out.push_str(&format!("&moves={}", self.moves.join("_")));
        }
        if self.resigned {
            out.push_str("&resigned=1");
        }
        out
    }

    /// The same game with other moves (a move, a takeback, a new try).
    pub fn with_moves(&self, moves: Vec<String>) -> Setup {
        Setup {
            moves,
            resigned: false,
            ..self.clone()
        }
    }

    /// The game begun with the player on `side`.
    pub fn playing(&self, side: Color) -> Setup {
        Setup {
            side: Some(side),
            moves: Vec::new(),
            resigned: false,
            ..self.clone()
        }
    }

    /// The game given up by the player.
    pub fn resigning(&self) -> Setup {
        Setup {
            resigned: true,
            ..self.clone()
        }
    }
}

/// The link of "Play this out" from a position: the choice of side.
pub fn practice_href(variant: Variant, fen: &str) -> String {
    Setup::new(variant, fen).href()
}

fn side_name(side: Color) -> &'static str {
    match side {
        Color::White => "white",
        Color::Black => "black",
    }
}

fn side_named(name: &str) -> Option<Color> {
    match name {
        "white" | "w" => Some(Color::White),
        "black" | "b" => Some(Color::Black),
        _ => None,
    }
}

/// The seed of a game whose URL names none: from its start, so the link
/// of "Play this out" is the same on the server and in the browser.
fn seed_of(fen: &str) -> u64 {
    // FNV-1a: any stable hash does.
    fen.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    }) % 1_000_000
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(href: &str) -> impl Fn(&str) -> Option<String> + '_ {
        let query = href.split_once('?').map(|(_, q)| q).unwrap_or_default();
        move |name: &str| {
            query.split('&').find_map(|pair| {
                let (key, value) = pair.split_once('=')?;
                (key == name).then(|| value.replace("%20", " "))
            })
        }
    }

    #[test]
    fn round_trips_through_its_link() {
        let setup = Setup::new(Variant::Atomic, "4k3/8/8/8/8/8/8/4K2R w - - 0 1")
            .playing(Color::Black)
            .with_moves(vec!["h1h7".into(), "e8d8".into()])
            .resigning();
        let href = setup.href();
        assert!(
            href.starts_with(
                "/practice?variant=atomic&fen=4k3/8/8/8/8/8/8/4K2R_w_-_-_0_1&side=black&seed="
            ),
            "{href}"
        );
        assert!(href.ends_with("&moves=h1h7_e8d8&resigned=1"), "{href}");
        assert_eq!(Setup::read(query(&href)), setup);
    }

    #[test]
    fn a_bare_link_asks_for_a_side_with_a_stable_seed() {
        let href = practice_href(Variant::Standard, START_FEN);
        let setup = Setup::read(query(&href));
        assert_eq!(setup.side, None);
        assert!(setup.moves.is_empty());
        assert_eq!(setup.seed, Setup::new(Variant::Standard, START_FEN).seed);
        assert_eq!(Setup::read(|_| None).fen, START_FEN);
    }
}
