//! The tablebase's reply in a practice game (`app::practice::defence`),
//! checked against the tables themselves on 200 positions of 3 and 4
//! pieces.
//!
//! The reply comes from the page's own code path (`review::tablebase_move`),
//! with the engine's answers in place of `GET /standard?fen=`: the answer
//! of the position, `choices_to_look_past`, the answer after each of them
//! and what it says (`Further`), then `reply` with a few seeds.
//!
//! The rule it must follow is computed here without the answers' fields:
//! every legal move is played with shakmaty and the position after it
//! probed directly, its result with shakmaty-syzygy and its depth to mate
//! with the server's Prophet reader over `server/tables-prophet`:
//!
//! - the result comes first (win, then draw, then loss, as `standing`);
//! - a winning side mates fastest (shortest DTM; a mate at once first);
//! - a losing side resists longest (longest DTM), and among equally long
//!   moves plays no conversion (capture or promotion) if it has another;
//! - a drawing side with several drawing moves plays one that leaves the
//!   player the most moves that lose, counted on the positions two plies on.
//!
//! Without DTM tables (a second engine), the decisive positions follow
//! lila's DTZ rule instead: a mate first, then a zeroing move that keeps
//! the win, then the shortest DTZ; a loser the longest DTZ.
//!
//! Only the tables the repository carries are used: it runs on a bare clone.

mod common;

use std::{collections::BTreeSet, sync::Arc};

use app::{
    api::TablebaseAnswer,
    position::{parse_fen, to_fen},
    practice::defence::{Further, choices_to_look_past, reply},
};
use server::{
    dtm::{Dtm, ProphetTables},
    engine::{Engine, EngineConfig},
};
use shakmaty::{
    Board, CastlingMode, Chess, Color, FromSetup, Move, Piece, Position, Rank, Role, Setup, Square,
    uci::UciMove,
};
use shakmaty_syzygy::{Tablebase, Wdl, filesystem::OsFilesystem};

/// Positions checked, and how many of each result the side to move must
/// have among them at least.
const POSITIONS: usize = 200;
const AT_LEAST_OF_EACH: usize = 40;

/// The seeds each position's reply is asked with (a game's seed).
const SEEDS: [u64; 6] = [0, 1, 7, 0x5EED, 0xDEAD_BEEF, u64::MAX];

/// A tiny xorshift64*, so the positions are the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The pieces besides the kings: the first side's, the other side's.
/// Pawns, minor pieces against pawns and equal material give draws with
/// several drawing moves (and traps); queens and rooks give wins and losses.
const MATERIALS: [(&str, &str); 18] = [
    ("Q", ""),
    ("R", ""),
    ("P", ""),
    ("P", ""),
    ("PP", ""),
    ("BN", ""),
    ("BP", ""),
    ("NP", ""),
    ("Q", "R"),
    ("Q", "P"),
    ("R", "P"),
    ("R", "P"),
    ("R", "B"),
    ("R", "N"),
    ("P", "P"),
    ("B", "P"),
    ("N", "P"),
    ("R", "R"),
];

fn role(c: char) -> Role {
    match c {
        'Q' => Role::Queen,
        'R' => Role::Rook,
        'B' => Role::Bishop,
        'N' => Role::Knight,
        'P' => Role::Pawn,
        _ => unreachable!("{c}"),
    }
}

/// A random legal position of one of [`MATERIALS`] (colours and side to
/// move drawn too, no castling rights, clocks at zero) that is not over.
fn random_position(rng: &mut Rng) -> Option<Chess> {
    let (first, second) = MATERIALS[rng.below(MATERIALS.len())];
    let first_colour = if rng.below(2) == 0 {
        Color::White
    } else {
        Color::Black
    };
    let mut pieces = vec![
        Piece {
            color: first_colour,
            role: Role::King,
        },
        Piece {
            color: !first_colour,
            role: Role::King,
        },
    ];
    pieces.extend(first.chars().map(|c| Piece {
        color: first_colour,
        role: role(c),
    }));
    pieces.extend(second.chars().map(|c| Piece {
        color: !first_colour,
        role: role(c),
    }));
    let mut board = Board::empty();
    for piece in pieces {
        loop {
            let sq = Square::new(rng.below(64) as u32);
            let back_rank = matches!(sq.rank(), Rank::First | Rank::Eighth);
            if board.piece_at(sq).is_none() && !(piece.role == Role::Pawn && back_rank) {
                board.set_piece_at(sq, piece);
                break;
            }
        }
    }
    let mut setup = Setup::empty();
    setup.board = board;
    setup.turn = if rng.below(2) == 0 {
        Color::White
    } else {
        Color::Black
    };
    let pos = Chess::from_setup(setup, CastlingMode::Standard).ok()?;
    (!pos.legal_moves().is_empty()).then_some(pos)
}

/// A result for the side to move (the 50-move rule counted), best last.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Outcome {
    Loss,
    BlessedLoss,
    Draw,
    CursedWin,
    Win,
}

impl Outcome {
    /// The same result seen by the other side.
    fn flip(self) -> Outcome {
        match self {
            Outcome::Loss => Outcome::Win,
            Outcome::BlessedLoss => Outcome::CursedWin,
            Outcome::Draw => Outcome::Draw,
            Outcome::CursedWin => Outcome::BlessedLoss,
            Outcome::Win => Outcome::Loss,
        }
    }
}

/// The tables the repository carries, read directly: not through the
/// engine, its answers or its move order.
struct Oracle {
    syzygy: Tablebase<Chess>,
    prophet: ProphetTables,
}

impl Oracle {
    fn open() -> Oracle {
        let mut syzygy = Tablebase::with_filesystem(Arc::new(OsFilesystem::new()));
        syzygy
            .add_directory(common::embedded_tables_dir())
            .expect("server/tables");
        let prophet_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tables-prophet");
        let prophet = ProphetTables::open(&[prophet_dir], Arc::new(OsFilesystem::new()))
            .expect("server/tables-prophet");
        Oracle { syzygy, prophet }
    }

    /// The result of `pos` for its side to move (clocks of these positions
    /// stay far from 100 plies, so the tables' result after zeroing is it).
    fn outcome(&self, pos: &Chess) -> Outcome {
        if pos.is_checkmate() {
            return Outcome::Loss;
        }
        if pos.is_stalemate() || pos.is_insufficient_material() {
            return Outcome::Draw;
        }
        match self.syzygy.probe_wdl_after_zeroing(pos) {
            Ok(Wdl::Loss) => Outcome::Loss,
            Ok(Wdl::BlessedLoss) => Outcome::BlessedLoss,
            Ok(Wdl::Draw) => Outcome::Draw,
            Ok(Wdl::CursedWin) => Outcome::CursedWin,
            Ok(Wdl::Win) => Outcome::Win,
            Err(err) => panic!("{}: {err}", to_fen(pos)),
        }
    }

    /// Depth to mate of `pos` for its side to move.
    fn dtm(&self, pos: &Chess) -> Dtm {
        if pos.is_checkmate() {
            return Dtm::Loss(0);
        }
        self.prophet
            .probe(pos)
            .unwrap_or_else(|err| panic!("{}: {err}", to_fen(pos)))
            .unwrap_or_else(|| panic!("{}: no DTM table", to_fen(pos)))
    }

    /// |DTZ| of `pos` in plies.
    fn dtz(&self, pos: &Chess) -> u32 {
        if pos.is_checkmate() {
            return 0;
        }
        let dtz = self
            .syzygy
            .probe_dtz(pos)
            .unwrap_or_else(|err| panic!("{}: {err}", to_fen(pos)));
        dtz.ignore_rounding().0.unsigned_abs()
    }

    /// The moves of the player (to move in `pos`) that lose.
    fn losing_moves(&self, pos: &Chess) -> usize {
        pos.legal_moves()
            .into_iter()
            .filter(|&m| self.outcome(&played(pos, m)) == Outcome::Win)
            .count()
    }

    /// Every legal move with what it leads to, for the side that plays it.
    fn choices(&self, pos: &Chess) -> Vec<Choice> {
        pos.legal_moves()
            .into_iter()
            .map(|m| {
                let child = played(pos, m);
                Choice {
                    uci: m.to_uci(CastlingMode::Standard).to_string(),
                    outcome: self.outcome(&child).flip(),
                    mate: mover_plies(self.dtm(&child).before()),
                    dtz: self.dtz(&child),
                    mates: child.is_checkmate(),
                    zeroing: m.is_zeroing(),
                    conversion: m.is_conversion(),
                    capture: m.is_capture(),
                    child,
                }
            })
            .collect()
    }
}

/// Plies to mate for the side to move: positive it mates, negative it is
/// mated, 0 a draw.
fn mover_plies(dtm: Dtm) -> i32 {
    match dtm {
        Dtm::Win(n) => i32::from(n),
        Dtm::Loss(n) => -i32::from(n),
        Dtm::Draw => 0,
    }
}

fn played(pos: &Chess, m: Move) -> Chess {
    let mut next = pos.clone();
    next.play_unchecked(m);
    next
}

/// One legal move as the oracle sees it.
struct Choice {
    uci: String,
    child: Chess,
    /// The result for the side that plays it.
    outcome: Outcome,
    /// Plies to mate after it, for the side that plays it, counting the
    /// move itself (a mate at once is 1).
    mate: i32,
    /// |DTZ| of the position after it.
    dtz: u32,
    mates: bool,
    zeroing: bool,
    conversion: bool,
    capture: bool,
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

/// What `GET /standard?fen=` answers, from the engine.
fn answer(engine: &Engine, rt: &tokio::runtime::Runtime, fen: &str) -> TablebaseAnswer {
    let pos = parse_fen(fen).unwrap_or_else(|err| panic!("{fen}: {err}"));
    rt.block_on(engine.probe(pos))
        .unwrap_or_else(|err| panic!("{fen}: {err}"))
        .as_ref()
        .clone()
}

/// What the page gathers before it replies (`review::tablebase_move`): the
/// answer of the position and, for each drawing choice, what the answer
/// after it says (the chances to go wrong it leaves).
struct PageView {
    answer: TablebaseAnswer,
    further: Vec<(String, Option<Further>)>,
}

impl PageView {
    fn gather(engine: &Engine, rt: &tokio::runtime::Runtime, pos: &Chess) -> PageView {
        let answer = answer(engine, rt, &to_fen(pos));
        let further = choices_to_look_past(&answer)
            .into_iter()
            .map(|m| {
                let uci: UciMove = m.uci.parse().expect("the answer's UCI parses");
                let next = played(pos, uci.to_move(pos).expect("the answer's move is legal"));
                let after = answer_after(engine, rt, &next);
                (m.uci.clone(), Some(Further::of(&after)))
            })
            .collect();
        PageView { answer, further }
    }

    /// The page's reply for a game of `seed` at `ply`.
    fn reply(&self, seed: u64, ply: usize) -> Option<String> {
        reply(&self.answer, seed, ply, |m| {
            self.further
                .iter()
                .find(|(uci, _)| *uci == m.uci)
                .and_then(|(_, f)| *f)
        })
        .map(|m| m.uci.clone())
    }
}

fn answer_after(engine: &Engine, rt: &tokio::runtime::Runtime, pos: &Chess) -> TablebaseAnswer {
    answer(engine, rt, &to_fen(pos))
}

/// The embedded Syzygy tables without DTM, as lila-tablebase runs without
/// `--prophet`.
fn engine_without_dtm() -> (Engine, tempfile::TempDir) {
    let empty = tempfile::tempdir().expect("temporary directory");
    let engine = Engine::open(&EngineConfig {
        dtm: vec![empty.path().to_owned()],
        ..EngineConfig::default()
    })
    .expect("tables load");
    (engine, empty)
}

/// The three results of the side to move the positions are drawn for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Win,
    /// A draw with several drawing moves.
    Draw,
    Loss,
}

/// How many positions of each kind, and how many of those at least where
/// the rule's finer point decides: a mate at once among the wins, drawing
/// moves leaving different numbers of traps, a longest resistance that
/// could convert or not. (Random positions have few of the first and the
/// last.)
const QUOTAS: [(Kind, usize, usize); 3] = [
    (Kind::Win, 67, 10),
    (Kind::Draw, 67, 30),
    (Kind::Loss, 66, 10),
];

/// The kind of `pos` for [`QUOTAS`], and whether the finer point decides.
fn kind(oracle: &Oracle, pos: &Chess) -> Option<(Kind, bool)> {
    match oracle.outcome(pos) {
        Outcome::Win => {
            let mates = pos
                .legal_moves()
                .into_iter()
                .any(|m| played(pos, m).is_checkmate());
            Some((Kind::Win, mates))
        }
        Outcome::Draw => {
            let traps: Vec<usize> = pos
                .legal_moves()
                .into_iter()
                .map(|m| played(pos, m))
                .filter(|child| oracle.outcome(child) == Outcome::Draw)
                .map(|child| oracle.losing_moves(&child))
                .collect();
            let differ = traps.iter().min() != traps.iter().max();
            (traps.len() > 1).then_some((Kind::Draw, differ))
        }
        Outcome::Loss => {
            let choices = oracle.choices(pos);
            let longest = choices.iter().map(|c| c.mate).min();
            let longest: Vec<&Choice> =
                choices.iter().filter(|c| Some(c.mate) == longest).collect();
            let converts = longest.iter().any(|c| c.conversion);
            let quiet = longest.iter().any(|c| !c.conversion);
            Some((Kind::Loss, converts && quiet))
        }
        _ => None,
    }
}

/// 200 distinct positions, drawn until each kind has its quota (and its
/// share where the finer point decides).
fn positions(oracle: &Oracle) -> Vec<Chess> {
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    // Per kind: positions taken, of them where the finer point decides.
    let mut taken = [(0, 0); 3];
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    let mut attempts = 0;
    while out.len() < POSITIONS {
        attempts += 1;
        assert!(
            attempts < 1_000_000,
            "only {taken:?} after {attempts} tries"
        );
        let Some(pos) = random_position(&mut rng) else {
            continue;
        };
        let Some((kind, fine)) = kind(oracle, &pos) else {
            continue;
        };
        let i = QUOTAS.iter().position(|q| q.0 == kind).expect("a quota");
        let (_, quota, fine_quota) = QUOTAS[i];
        let (all, fines) = &mut taken[i];
        let room = *all < quota && (fine || *all - *fines < quota - fine_quota);
        if room && seen.insert(to_fen(&pos)) {
            *all += 1;
            *fines += usize::from(fine);
            out.push(pos);
        }
    }
    out
}

/// What the positions showed, printed at the end.
#[derive(Default, Debug)]
struct Counts {
    wins: usize,
    wins_mate_at_once: usize,
    draws: usize,
    /// Draws whose drawing moves leave the player different numbers of
    /// losing replies (the choice matters).
    draws_with_a_better_trap: usize,
    losses: usize,
    /// Losses where the longest resistance includes a conversion and
    /// another move (the conversion is avoided).
    losses_avoiding_a_conversion: usize,
    /// Losses whose longest moves are all conversions, some a promotion
    /// without capture: "avoid conversions" allows a capture there,
    /// "avoid captures" would not.
    losses_capture_or_promotion: usize,
    /// Positions where the seeds did not all pick the same move.
    ties_broken_differently: usize,
    /// Decisive positions checked under the DTZ rule (no DTM tables).
    dtz_wins: usize,
    dtz_wins_by_zeroing: usize,
    dtz_losses: usize,
}

#[test]
fn the_page_replies_as_the_rule_says_on_200_positions() {
    let started = std::time::Instant::now();
    let rt = runtime();
    let engine = common::engine_with(Vec::new());
    let (without_dtm, _empty) = engine_without_dtm();
    let oracle = Oracle::open();
    let positions = positions(&oracle);
    let mut counts = Counts::default();

    for (ply, pos) in positions.iter().enumerate() {
        let fen = to_fen(pos);
        let choices = oracle.choices(pos);
        let best = choices
            .iter()
            .map(|c| c.outcome)
            .max()
            .expect("a legal move");
        let page = PageView::gather(&engine, &rt, pos);

        let mut picked = BTreeSet::new();
        for seed in SEEDS {
            let uci = page
                .reply(seed, ply)
                .unwrap_or_else(|| panic!("{fen}: no reply"));
            assert_eq!(
                page.reply(seed, ply).as_deref(),
                Some(uci.as_str()),
                "{fen}: the same seed and ply replied differently"
            );
            let chosen = choices
                .iter()
                .find(|c| c.uci == uci)
                .unwrap_or_else(|| panic!("{fen}: {uci} is not a legal move"));
            assert_eq!(
                chosen.outcome, best,
                "{fen} (seed {seed}): {uci} gives {:?}, {best:?} was possible",
                chosen.outcome
            );
            check_distance(&fen, &uci, &choices, chosen, best, |c| c.mate);
            if best == Outcome::Draw {
                check_traps(&oracle, &fen, &choices, chosen);
            }
            picked.insert(uci);
        }
        if picked.len() > 1 {
            counts.ties_broken_differently += 1;
        }

        let with = |outcome: Outcome| choices.iter().filter(move |c| c.outcome == outcome);
        match best {
            Outcome::Win => {
                counts.wins += 1;
                counts.wins_mate_at_once += usize::from(choices.iter().any(|c| c.mates));
            }
            Outcome::Draw => {
                counts.draws += 1;
                let traps: BTreeSet<usize> = with(Outcome::Draw)
                    .map(|c| oracle.losing_moves(&c.child))
                    .collect();
                counts.draws_with_a_better_trap += usize::from(traps.len() > 1);
            }
            Outcome::Loss => {
                counts.losses += 1;
                // Mated in more plies: a more negative number.
                let longest = with(Outcome::Loss).map(|c| c.mate).min();
                let longest: Vec<&Choice> = with(Outcome::Loss)
                    .filter(|c| Some(c.mate) == longest)
                    .collect();
                let conversions = longest.iter().filter(|c| c.conversion).count();
                counts.losses_avoiding_a_conversion +=
                    usize::from(conversions > 0 && conversions < longest.len());
                counts.losses_capture_or_promotion += usize::from(
                    conversions == longest.len()
                        && longest.iter().any(|c| c.capture)
                        && longest.iter().any(|c| !c.capture),
                );
            }
            _ => {}
        }

        // Without DTM: lila's DTZ rule for the decisive results.
        if best != Outcome::Draw {
            let page = PageView::gather(&without_dtm, &rt, pos);
            for seed in SEEDS {
                let uci = page
                    .reply(seed, ply)
                    .unwrap_or_else(|| panic!("{fen}: no reply without DTM"));
                let chosen = choices
                    .iter()
                    .find(|c| c.uci == uci)
                    .unwrap_or_else(|| panic!("{fen}: {uci} is not a legal move"));
                assert_eq!(
                    chosen.outcome, best,
                    "{fen} without DTM (seed {seed}): {uci}"
                );
                check_dtz_rule(&fen, &uci, &choices, chosen, best);
            }
            match best {
                Outcome::Win => {
                    counts.dtz_wins += 1;
                    counts.dtz_wins_by_zeroing += usize::from(
                        !with(Outcome::Win).any(|c| c.mates)
                            && with(Outcome::Win).any(|c| c.zeroing),
                    );
                }
                _ => counts.dtz_losses += 1,
            }
        }
    }

    println!("{counts:#?}");
    println!(
        "{} positions checked in {:.1} s",
        positions.len(),
        started.elapsed().as_secs_f64()
    );
    // The mix, counted again from the checks' side of the test.
    let fine = |kind: Kind| QUOTAS.iter().find(|q| q.0 == kind).map_or(0, |q| q.2);
    for (what, n, at_least) in [
        ("wins", counts.wins, AT_LEAST_OF_EACH),
        (
            "wins with a mate at once",
            counts.wins_mate_at_once,
            fine(Kind::Win),
        ),
        (
            "draws with several drawing moves",
            counts.draws,
            AT_LEAST_OF_EACH,
        ),
        (
            "draws where the traps differ",
            counts.draws_with_a_better_trap,
            fine(Kind::Draw),
        ),
        ("losses", counts.losses, AT_LEAST_OF_EACH),
        (
            "losses avoiding a conversion",
            counts.losses_avoiding_a_conversion,
            fine(Kind::Loss),
        ),
    ] {
        assert!(n >= at_least, "only {n} {what}: {counts:?}");
    }
    assert!(
        counts.ties_broken_differently > 0,
        "no seed ever broke a tie differently: {counts:?}"
    );
}

/// A winner's move is among the fastest mates, a loser's among the longest
/// (`distance` gives a choice's plies to mate, signed for the mover), and a
/// loser plays no conversion where an equally long move is none.
fn check_distance(
    fen: &str,
    uci: &str,
    choices: &[Choice],
    chosen: &Choice,
    best: Outcome,
    distance: impl Fn(&Choice) -> i32,
) {
    let equal: Vec<&Choice> = choices.iter().filter(|c| c.outcome == best).collect();
    let list = || -> Vec<(&str, i32)> {
        equal
            .iter()
            .map(|c| (c.uci.as_str(), distance(c)))
            .collect()
    };
    match best {
        Outcome::Win => {
            let fastest = equal.iter().map(|c| distance(c)).min();
            assert_eq!(
                Some(distance(chosen)),
                fastest,
                "{fen}: {uci} is not a fastest mate: {:?}",
                list()
            );
        }
        Outcome::Loss => {
            // Mated in more plies: a more negative number.
            let longest = equal.iter().map(|c| distance(c)).min();
            assert_eq!(
                Some(distance(chosen)),
                longest,
                "{fen}: {uci} is not a longest resistance: {:?}",
                list()
            );
            let quiet_too = equal
                .iter()
                .any(|c| distance(c) == distance(chosen) && !c.conversion);
            assert!(
                !(chosen.conversion && quiet_too),
                "{fen}: {uci} converts where an equally long move does not: {:?}",
                list()
            );
        }
        _ => {}
    }
}

/// Among several drawing moves, one leaving the player the most moves that
/// lose, counted from the positions two plies on.
fn check_traps(oracle: &Oracle, fen: &str, choices: &[Choice], chosen: &Choice) {
    let traps: Vec<(&str, usize)> = choices
        .iter()
        .filter(|c| c.outcome == Outcome::Draw)
        .map(|c| (c.uci.as_str(), oracle.losing_moves(&c.child)))
        .collect();
    if traps.len() < 2 {
        return;
    }
    let most = traps.iter().map(|(_, n)| *n).max();
    let mine = traps
        .iter()
        .find(|(uci, _)| *uci == chosen.uci)
        .map(|t| t.1);
    assert_eq!(
        mine, most,
        "{fen}: {} leaves fewer losing replies than another drawing move: {traps:?}",
        chosen.uci
    );
}

/// lila's DTZ rule: a winner mates at once if it can, else plays a zeroing
/// move that keeps the win if it has one, else the shortest DTZ (among the
/// zeroing moves too); a loser plays the longest DTZ.
fn check_dtz_rule(fen: &str, uci: &str, choices: &[Choice], chosen: &Choice, best: Outcome) {
    let equal: Vec<&Choice> = choices.iter().filter(|c| c.outcome == best).collect();
    let list: Vec<(&str, bool, u32)> = equal
        .iter()
        .map(|c| (c.uci.as_str(), c.zeroing, c.dtz))
        .collect();
    match best {
        Outcome::Win => {
            if equal.iter().any(|c| c.mates) {
                assert!(chosen.mates, "{fen}: {uci} does not mate at once: {list:?}");
                return;
            }
            let zeroing = equal.iter().any(|c| c.zeroing);
            assert_eq!(
                chosen.zeroing, zeroing,
                "{fen}: {uci} without DTM: a zeroing win first: {list:?}"
            );
            let shortest = equal
                .iter()
                .filter(|c| c.zeroing == zeroing)
                .map(|c| c.dtz)
                .min();
            assert_eq!(
                Some(chosen.dtz),
                shortest,
                "{fen}: {uci} without DTM is not the shortest DTZ: {list:?}"
            );
        }
        Outcome::Loss => {
            let longest = equal.iter().map(|c| c.dtz).max();
            assert_eq!(
                Some(chosen.dtz),
                longest,
                "{fen}: {uci} without DTM is not the longest DTZ: {list:?}"
            );
        }
        _ => {}
    }
}

/// At the edge of the DTM tables: a 5-piece position without
/// DTM whose winning moves all capture into 4-piece tables that have it.
/// The tablebase mates fastest by those (Kxg6, as lila ranks it, not the
/// shorter DTZ of Rxg6), and the page says the root's mate, one ply more
/// than the fastest move's, where the API keeps `dtm: null`. Needs the
/// shared 5-piece tables (KRPvKR, KQBvKQ); one `SKIPPED:` line without.
#[test]
fn at_the_edge_of_the_dtm_tables_the_moves_dtm_decides() {
    let Some(dir) = common::shared_tables_dir() else {
        return;
    };
    let rt = runtime();
    // ../shared has no recorded checksums; this is about the answers.
    let engine = common::engine_allowing_unchecked(vec![dir]);
    let edge = parse_fen("8/k7/p1R3r1/7K/8/8/8/8 w - - 1 2").expect("legal");
    let page = PageView::gather(&engine, &rt, &edge);
    assert_eq!(page.answer.pos.dtm, None, "the root has no DTM table");
    let dtm = |uci: &str| {
        page.answer
            .moves
            .iter()
            .find(|m| m.uci == uci)
            .and_then(|m| m.pos.dtm)
    };
    let (kxg6, rxg6) = (
        dtm("h5g6").expect("Kxg6 has DTM"),
        dtm("c6g6").expect("Rxg6 has DTM"),
    );
    assert!(
        kxg6.abs() < rxg6.abs(),
        "Kxg6 {kxg6} mates sooner than Rxg6 {rxg6}"
    );
    for seed in SEEDS {
        assert_eq!(page.reply(seed, 2).as_deref(), Some("h5g6"), "seed {seed}");
    }
    assert_eq!(
        app::components::move_list::mate::root_dtm(&page.answer),
        Some(kxg6.abs() + 1)
    );
    // KQBvKQ: the only winning move Qxc3 is mate in 7, and so is the root.
    let kqbkq = answer(&engine, &rt, "8/8/3k4/8/8/2q5/8/1KQB4 w - - 0 1");
    assert_eq!(kqbkq.pos.dtm, None, "the API keeps lila's dtm: null");
    let root = app::components::move_list::mate::root_dtm(&kqbkq).expect("the root's mate");
    assert_eq!(app::components::move_list::mate::moves(root as u32), 7);
}
