import { test } from '@playwright/test';
import { openHydrated, waitForList } from './helpers';

/**
 * Benchmark, not a test: time from a click on a move to the new position's
 * DTZ list being in the DOM (not pending), measured in the browser with
 * performance.now() and a MutationObserver, over a random walk of moves.
 * Runs only with BENCH=1 against a running server, e.g.
 *   BENCH=1 BENCH_MOVES=200 npx playwright test bench
 */
test.skip(!process.env.BENCH, 'set BENCH=1 to run the click-to-render benchmark');

test('click to DTZ list rendered', async ({ page }, testInfo) => {
  test.setTimeout(600_000);
  const starts = [
    '4k3/8/8/8/8/8/8/4K2R w - - 0 1',
    '8/8/3k4/8/8/3K4/3P4/8 w - - 0 1',
    '8/8/8/4k3/8/8/8/1NB1K3 w - - 0 1',
    '8/8/8/3k4/8/8/2Q5/4K3 w - - 0 1',
  ];
  const moves = Number(process.env.BENCH_MOVES ?? 150);
  const times: number[] = [];
  let start = 0;
  let lost = 0;
  let sinceStart = 0;
  // Positions whose answer this page load has seen (a reload empties the cache).
  let seen = new Set<string>([starts[0]]);
  const firstVisits: number[] = [];
  const revisits: number[] = [];
  await openHydrated(page, starts[0]);
  await waitForList(page, starts[0]);
  while (times.length < moves) {
    const [ms, fen] = await page.evaluate(async (): Promise<[number, string]> => {
      const links = [...document.querySelectorAll<HTMLAnchorElement>('.move-list a.move')];
      if (links.length === 0 || document.querySelector('.status')?.textContent?.includes('Checkmate')) {
        return [-1, ''];
      }
      // Prefer moves that keep the game going, so the walk stays in the tables.
      const link = links[Math.floor(Math.random() * Math.min(links.length, 6))];
      const href = link.getAttribute('href') ?? '';
      const fen = decodeURIComponent(href.slice('/?fen='.length)).replace(/_/g, ' ');
      const ms = await new Promise<number>((resolve) => {
        const done = () => {
          const list = document.querySelector(`.move-list[data-fen="${CSS.escape(fen)}"]`);
          const results = document.querySelector('.results');
          if (list && results && !results.classList.contains('pending')) {
            observer.disconnect();
            resolve(performance.now() - t0);
            return true;
          }
          return false;
        };
        const observer = new MutationObserver(done);
        // A move whose list never shows (should not happen) counts as lost, not as a hang.
        setTimeout(() => {
          observer.disconnect();
          resolve(-2);
        }, 10_000);
        observer.observe(document.body, { subtree: true, childList: true, attributes: true });
        const t0 = performance.now();
        link.click();
      });
      return [ms, fen];
    });
    if (ms === -2) lost += 1;
    // Start again from another position when the game ends or every 40 moves.
    if (ms < 0 || sinceStart >= 40) {
      sinceStart = 0;
      start = (start + 1) % starts.length;
      await openHydrated(page, starts[start]);
      await waitForList(page, starts[start]);
      seen = new Set<string>([starts[start]]);
      continue;
    }
    times.push(ms);
    // The tab keeps answers it has seen: a revisit is served from memory.
    (seen.has(fen) ? revisits : firstVisits).push(ms);
    seen.add(fen);
    sinceStart += 1;
  }
  const describe = (label: string, xs: number[]) => {
    if (xs.length === 0) return `${label}: none`;
    xs.sort((a, b) => a - b);
    const pick = (q: number) => xs[Math.min(xs.length - 1, Math.floor(q * xs.length))].toFixed(1);
    return `${label} over ${xs.length} moves: p50 ${pick(0.5)} ms, p95 ${pick(0.95)} ms, max ${pick(1)} ms`;
  };
  const summary = [
    describe('click-to-render, all', times),
    describe('  first visits (API asked)', firstVisits),
    describe('  revisits (tab cache)', revisits),
    `  ${lost} lost`,
  ].join('\n');
  console.log(summary);
  await testInfo.attach('click-to-render', { body: `${summary}\n${JSON.stringify(times)}\n`, contentType: 'text/plain' });
});
