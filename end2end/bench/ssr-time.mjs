// Server time for the SSR page: GET /?fen=... for each FEN of a workload
// file (one FEN per line), time to the whole body, first visit (the engine
// probes) and second visit (response cache warm). Not a test: a figure.
//   node bench/ssr-time.mjs /work/shared/workloads/explore-34.txt 300
import { readFileSync } from 'node:fs';

const [file, count = '300'] = process.argv.slice(2);
const base = process.env.BASE_URL ?? 'http://127.0.0.1:3000';
const fens = readFileSync(file, 'utf8')
  .split('\n')
  .map((l) => l.trim())
  .filter(Boolean)
  .slice(0, Number(count));

async function pass() {
  const times = [];
  let bytes = 0;
  for (const fen of fens) {
    const url = `${base}/?fen=${fen.replace(/ /g, '_')}`;
    let t0 = performance.now();
    let res;
    try {
      res = await fetch(url);
    } catch {
      // A kept-alive connection the server just closed: once more on a new one.
      t0 = performance.now();
      res = await fetch(url);
    }
    const body = await res.text();
    times.push(performance.now() - t0);
    bytes += body.length;
    if (!res.ok) console.error(`${res.status} for ${fen}`);
  }
  times.sort((a, b) => a - b);
  const q = (p) => times[Math.min(times.length - 1, Math.floor(p * times.length))].toFixed(1);
  return `p50 ${q(0.5)} ms, p95 ${q(0.95)} ms, max ${q(1)} ms, mean page ${(bytes / fens.length / 1024).toFixed(1)} KiB`;
}

console.log(`SSR page over ${fens.length} positions from ${file}`);
console.log(`  first visit:  ${await pass()}`);
console.log(`  second visit: ${await pass()}`);
