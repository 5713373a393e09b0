//! A practice page's cost is bounded however long its game: on the real
//! binary, a 649-ply game's page probes at most a tenth of the positions
//! that judging every move of it would (counted from `/metrics`), a link
//! of more than 1,000 plies gets a clear message and a page, and the
//! positions each route probes show on `/metrics`.
//!
//! The games are built here: long legal games in KPvKP (the embedded
//! tables answer every position) that never end, each pawn step kept for
//! when the 50-move rule nears, no position three times, no capture.

mod process;

use std::{
    collections::{BTreeMap, HashMap, HashSet},
    io::{Read, Write},
    net::{SocketAddr, TcpStream},
};

use process::PATIENCE;
use shakmaty::{
    CastlingMode, Chess, EnPassantMode, Move, Position, Role, fen::Fen, zobrist::Zobrist64,
};

/// White's pawn has six steps to a knight, Black's as many: thirteen
/// stretches of up to 99 plies without one.
const START: &str = "4k3/7p/8/8/8/8/P7/4K3 w - - 0 1";

/// The most player moves a page judges (`app::practice::review::JUDGED_MOVES`).
const JUDGED_MOVES: usize = app::practice::review::JUDGED_MOVES;

/// A tiny xorshift64*, so the games are the same on every run.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        (x.wrapping_mul(0x2545_F491_4F6C_DD1D) % n as u64) as usize
    }
}

/// A legal game of `plies` from [`START`] that has not ended after them.
fn long_game(plies: usize) -> Vec<Move> {
    (1..200)
        .find_map(|seed| try_long_game(plies, seed))
        .unwrap_or_else(|| panic!("no {plies}-ply game found"))
}

fn try_long_game(plies: usize, seed: u64) -> Option<Vec<Move>> {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut pos: Chess = START
        .parse::<Fen>()
        .ok()?
        .into_position(CastlingMode::Standard)
        .ok()?;
    let key = |pos: &Chess| pos.zobrist_hash::<Zobrist64>(EnPassantMode::Legal);
    let mut seen: HashMap<Zobrist64, usize> = HashMap::from([(key(&pos), 1)]);
    let mut game = Vec::with_capacity(plies);
    while game.len() < plies {
        let step = |m: &Move| {
            m.role() == Role::Pawn
                && !m.is_capture()
                && m.promotion().is_none_or(|p| p == Role::Knight)
                && m.from().is_some_and(|from| from.distance(m.to()) == 1)
        };
        let legal = pos.legal_moves();
        // A pawn step once the 50-move rule nears; else any quiet move.
        let steps: Vec<Move> = legal.iter().filter(|m| step(m)).cloned().collect();
        let choices: Vec<Move> = if pos.halfmoves() >= 90 && !steps.is_empty() {
            steps
        } else {
            legal
                .iter()
                .filter(|m| m.role() != Role::Pawn && !m.is_capture())
                .cloned()
                .collect()
        };
        let fine: Vec<(Move, Chess)> = choices
            .into_iter()
            .filter_map(|m| {
                let mut after = pos.clone();
                after.play_unchecked(m);
                let ends = after.legal_moves().is_empty()
                    || after.is_insufficient_material()
                    || after.halfmoves() >= 100
                    || seen.get(&key(&after)).copied().unwrap_or(0) >= 2;
                (!ends).then_some((m, after))
            })
            .collect();
        if fine.is_empty() {
            return None;
        }
        let (m, after) = fine[rng.below(fine.len())].clone();
        *seen.entry(key(&after)).or_default() += 1;
        game.push(m);
        pos = after;
    }
    Some(game)
}

/// The practice link of `game` from [`START`], the player White.
fn practice_url(game: &[Move]) -> String {
    let moves: Vec<String> = game
        .iter()
        .map(|m| m.to_uci(CastlingMode::Standard).to_string())
        .collect();
    format!(
        "/practice?fen={}&side=white&seed=1&moves={}",
        START.replace(' ', "_"),
        moves.join("_")
    )
}

/// How many positions judging every one of the player's moves takes at
/// the least: each answer probes its position and the position after each
/// legal move, and a position probed once is remembered (clocks left out).
fn probes_to_judge_every_move(game: &[Move]) -> usize {
    let mut pos: Chess = START
        .parse::<Fen>()
        .expect("fen")
        .into_position(CastlingMode::Standard)
        .expect("legal");
    let key = |pos: &Chess| pos.zobrist_hash::<Zobrist64>(EnPassantMode::Legal);
    let mut probed = HashSet::new();
    for (ply, m) in game.iter().enumerate() {
        if ply % 2 == 0 {
            probed.insert(key(&pos));
            for reply in pos.legal_moves() {
                let mut after = pos.clone();
                after.play_unchecked(reply);
                probed.insert(key(&after));
            }
        }
        pos.play_unchecked(*m);
    }
    probed.len()
}

/// `GET path` over HTTP/1.0, so the body comes whole, not chunked.
fn get(addr: SocketAddr, path: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.set_read_timeout(Some(PATIENCE)).expect("timeout");
    write!(stream, "GET {path} HTTP/1.0\r\nHost: test\r\n\r\n").expect("send");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("read the answer");
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").expect("a response head");
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .expect("a status");
    (status, body.to_string())
}

/// The samples of one family on `/metrics`, by their labels.
fn samples(addr: SocketAddr, family: &str) -> BTreeMap<String, f64> {
    let (status, text) = get(addr, "/metrics");
    assert_eq!(status, 200);
    text.lines()
        .filter_map(|line| {
            let rest = line.strip_prefix(family)?;
            let (labels, value) = rest.rsplit_once(' ')?;
            (labels.is_empty() || labels.starts_with('{'))
                .then(|| (labels.to_string(), value.parse().expect("a number")))
        })
        .collect()
}

/// Positions probed by place (all routes) and for `/practice`.
fn probes(addr: SocketAddr) -> (f64, f64) {
    let all = samples(addr, "zugzwang_probes_total").values().sum();
    let practice = samples(addr, "zugzwang_http_probes_total")
        .get("{route=\"/practice\"}")
        .copied()
        .unwrap_or(0.0);
    (all, practice)
}

#[test]
fn a_long_games_page_costs_a_few_answers_and_a_too_long_one_a_message() {
    let server = process::serve(&[]);
    let addr = server.addr;

    // 649 plies, as the game that cost 7,565 probes when every move was
    // judged: it ends on the tablebase's turn, so its reply is worked out too.
    let game = long_game(649);
    let url = practice_url(&game);
    let every_move = probes_to_judge_every_move(&game);
    let before = probes(addr);
    let (status, page) = get(addr, &url);
    let after = probes(addr);
    assert_eq!(status, 200, "{page}");
    let (spent, on_practice) = (after.0 - before.0, after.1 - before.1);
    println!(
        "649-ply practice page: {spent} positions probed ({on_practice} counted for /practice); \
         judging every move would probe at least {every_move}; page {} bytes, URL {} bytes",
        page.len(),
        url.len()
    );
    assert_eq!(spent, on_practice, "the page's probes count for its route");
    assert!(spent > 0.0, "the last moves were judged");
    assert!(
        spent * 10.0 <= every_move as f64,
        "{spent} probes is more than a tenth of {every_move}"
    );
    assert!(page.contains("not judged here"), "older moves unjudged");
    assert_eq!(
        page.matches("class=\"mark best\"").count()
            + page.matches("class=\"mark slower\"").count()
            + page.matches("class=\"mark mistake\"").count()
            + page.matches("class=\"mark unjudged\"").count(),
        JUDGED_MOVES,
        "the last moves are judged"
    );
    assert!(page.contains("replied"), "the tablebase replied: {page}");

    // More than 1,000 plies: the first 1,000, and why the game stops.
    let game = long_game(1_010);
    let (status, page) = get(addr, &practice_url(&game));
    assert_eq!(status, 200, "{page}");
    assert!(
        page.contains("The link holds 1,010 plies; the page plays at most 1,000"),
        "{page}"
    );
    assert!(page.contains("Stopped after 1,000 plies"), "{page}");

    // Every route's probes show: the lines' too.
    let fen = "8/8/8/8/8/2k5/8/KQ6_w_-_-_0_1";
    for route in ["/standard/mainline", "/standard/fastest-mate"] {
        let (status, body) = get(addr, &format!("{route}?fen={fen}"));
        assert_eq!(status, 200, "{route}: {body}");
    }
    let by_route = samples(addr, "zugzwang_http_probes_total");
    for route in ["/practice", "/standard/mainline", "/standard/fastest-mate"] {
        let probes = by_route.get(&format!("{{route=\"{route}\"}}")).copied();
        assert!(probes.unwrap_or(0.0) > 0.0, "{route}: {by_route:?}");
    }
}
