// Prints the practice links of long legal games that have not ended, one
// path a line, for load on the practice page (server/bench/practice-load.sh).
//
//   node end2end/bench/long-practice.mjs [FEN] [PLIES] [GAMES]
//
// From FEN (default KBBvKP, as in the 649-ply game) the player takes
// White; every move is quiet (no capture), the pawns step only when the
// 50-move rule nears (promoting to a knight), no position comes a third
// time, and no move mates or stalemates. Each game is another seed.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { Chess } = require('../node_modules/chess.js');

const fen = process.argv[2] ?? '4k3/7p/8/8/8/8/8/2B1KB2 w - - 0 1';
const plies = Number(process.argv[3] ?? 649);
const games = Number(process.argv[4] ?? 1);

/** A small seeded generator (mulberry32), so the games are the same every run. */
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function longGame(seed) {
  const next = random(seed);
  const chess = new Chess(fen);
  const key = () => chess.fen().split(' ').slice(0, 4).join(' ');
  const seen = new Map([[key(), 1]]);
  const uci = [];
  while (uci.length < plies) {
    const halfmoves = Number(chess.fen().split(' ')[4]);
    const legal = chess.moves({ verbose: true }).filter((m) => !m.captured);
    const steps = legal.filter(
      (m) => m.piece === 'p' && Math.abs(m.from.charCodeAt(1) - m.to.charCodeAt(1)) === 1 && (m.promotion ?? 'n') === 'n',
    );
    const pool = halfmoves >= 94 && steps.length ? steps : legal.filter((m) => m.piece !== 'p');
    const fine = pool.filter((m) => {
      chess.move(m);
      const ok = !chess.isGameOver() && (seen.get(key()) ?? 0) < 2;
      chess.undo();
      return ok;
    });
    if (!fine.length) return null;
    const m = fine[Math.floor(next() * fine.length)];
    chess.move(m);
    seen.set(key(), (seen.get(key()) ?? 0) + 1);
    uci.push(m.from + m.to + (m.promotion ?? ''));
  }
  return uci;
}

let seed = 1;
for (let found = 0; found < games; seed++) {
  if (seed > 10_000) throw new Error(`no ${plies}-ply game from ${fen}`);
  const game = longGame(seed);
  if (!game) continue;
  found++;
  console.log(`/practice?fen=${fen.replace(/ /g, '_')}&side=white&seed=1&moves=${game.join('_')}`);
}
