import { appendFileSync } from 'node:fs';
import { test, type Page } from './fixtures';
import { openHydrated, waitForList } from './helpers';

/**
 * Benchmark, not a test: time from a click on a move to the new position's
 * DTZ list being in the DOM (not pending), measured in the browser with
 * performance.now() and a MutationObserver, over a random walk of moves.
 * Three kinds of step: a move clicked cold (the API is asked at the click),
 * a move hovered BENCH_HOVER_MS before its click (asked at the hover), and
 * back then forward again (both answers in the tab's cache). Runs only with
 * BENCH=1 against a running server, e.g.
 *   BENCH=1 BENCH_MOVES=200 npx playwright test bench
 */
test.skip(!process.env.BENCH, 'set BENCH=1 to run the click-to-render benchmark');

type Step = 'click' | 'hover' | 'back' | 'forward';

/** One timed step: milliseconds (-1: nothing to click, -2: no list within 10 s), the FEN shown, requests sent. */
type Timed = { ms: number; fen: string; requests: number };

/**
 * Does one step in the page and times it until the list of the position it
 * leads to is rendered. A click picks one of the first six moves not seen
 * yet (moves that keep the game going, so the walk stays in the tables).
 */
async function timedStep(page: Page, step: Step, expected: string, seen: string[], hoverMs: number): Promise<Timed> {
  return page.evaluate(
    async ({ step, expected, seen, hoverMs }): Promise<Timed> => {
      const fenOf = (link: HTMLAnchorElement) =>
        decodeURIComponent((link.getAttribute('href') ?? '').slice('/?fen='.length)).replace(/_/g, ' ');
      let fen = expected;
      let link: HTMLAnchorElement | undefined;
      if (step === 'click' || step === 'hover') {
        const links = [...document.querySelectorAll<HTMLAnchorElement>('.move-list a.move')].filter(
          (l) => !seen.includes(fenOf(l)),
        );
        if (links.length === 0 || document.querySelector('.status')?.textContent?.includes('Checkmate')) {
          return { ms: -1, fen: '', requests: 0 };
        }
        link = links[Math.floor(Math.random() * Math.min(links.length, 6))];
        fen = fenOf(link);
      }
      const requests = () =>
        performance.getEntriesByType('resource').filter((e) => new URL(e.name).pathname === '/standard').length;
      performance.clearResourceTimings();
      if (link && step === 'hover') {
        link.dispatchEvent(new MouseEvent('mouseenter'));
        await new Promise((r) => setTimeout(r, hoverMs));
      }
      const ms = await new Promise<number>((resolve) => {
        const done = () => {
          const list = document.querySelector(`.move-list[data-fen="${CSS.escape(fen)}"]`);
          const results = document.querySelector('.results');
          if (list && results && !results.classList.contains('pending')) {
            observer.disconnect();
            resolve(performance.now() - t0);
          }
        };
        const observer = new MutationObserver(done);
        // A list that never shows (should not happen) counts as lost, not as a hang.
        setTimeout(() => {
          observer.disconnect();
          resolve(-2);
        }, 10_000);
        observer.observe(document.body, { subtree: true, childList: true, attributes: true });
        const t0 = performance.now();
        if (step === 'back') history.back();
        else if (step === 'forward') history.forward();
        else link?.click();
      });
      return { ms, fen, requests: requests() };
    },
    { step, expected, seen, hoverMs },
  );
}

test('click to DTZ list rendered', async ({ page }, testInfo) => {
  test.setTimeout(900_000);
  const starts = [
    '4k3/8/8/8/8/8/8/4K2R w - - 0 1',
    '8/8/3k4/8/8/3K4/3P4/8 w - - 0 1',
    '8/8/8/4k3/8/8/8/1NB1K3 w - - 0 1',
    '8/8/8/3k4/8/8/2Q5/4K3 w - - 0 1',
  ];
  const moves = Number(process.env.BENCH_MOVES ?? 150);
  const hoverMs = Number(process.env.BENCH_HOVER_MS ?? 100);
  const times: number[] = [];
  const firstVisits: number[] = [];
  const hovered: number[] = [];
  const revisits: number[] = [];
  // Requests sent per step, by kind: a hovered move must not ask twice, a revisit not at all.
  let hoveredRequests = 0;
  let revisitRequests = 0;
  let lost = 0;
  let start = 0;
  let sinceStart = 0;
  // Positions this page load has shown: a reload empties the tab's cache.
  let seen = [starts[0]];
  let shown = starts[0];
  const restart = async () => {
    sinceStart = 0;
    start = (start + 1) % starts.length;
    await openHydrated(page, starts[start]);
    await waitForList(page, starts[start]);
    seen = [starts[start]];
    shown = starts[start];
  };
  await openHydrated(page, starts[0]);
  await waitForList(page, starts[0]);
  while (times.length < moves) {
    const kind: Step = sinceStart % 3 === 2 ? 'hover' : 'click';
    const before = shown;
    const step = await timedStep(page, kind, '', seen, hoverMs);
    if (step.ms === -2) lost += 1;
    // Start again from another position when the game ends or every 40 moves.
    if (step.ms < 0 || sinceStart >= 40) {
      await restart();
      continue;
    }
    times.push(step.ms);
    if (kind === 'hover') {
      hovered.push(step.ms);
      hoveredRequests = Math.max(hoveredRequests, step.requests);
    } else {
      firstVisits.push(step.ms);
    }
    seen.push(step.fen);
    shown = step.fen;
    sinceStart += 1;
    // Every fourth move: back to the position before and forward again, both from the tab's cache.
    if (sinceStart % 4 === 0) {
      for (const [dir, fen] of [['back', before], ['forward', shown]] as const) {
        const again = await timedStep(page, dir, fen, seen, hoverMs);
        if (again.ms === -2) lost += 1;
        if (again.ms < 0) continue;
        revisits.push(again.ms);
        revisitRequests = Math.max(revisitRequests, again.requests);
      }
    }
  }
  const describe = (label: string, xs: number[]) => {
    if (xs.length === 0) return `${label}: none`;
    xs.sort((a, b) => a - b);
    const pick = (q: number) => xs[Math.min(xs.length - 1, Math.floor(q * xs.length))].toFixed(1);
    return `${label} over ${xs.length} moves: p50 ${pick(0.5)} ms, p95 ${pick(0.95)} ms, max ${pick(1)} ms`;
  };
  const summary = [
    describe('click-to-render, all', [...times]),
    describe('  first visits (API asked)', firstVisits),
    `${describe(`  hovered ${hoverMs} ms, then clicked`, hovered)}; at most ${hoveredRequests} request(s) per move`,
    `${describe('  revisits (tab cache: back, forward)', revisits)}; at most ${revisitRequests} request(s) per move`,
    `  ${lost} lost`,
  ].join('\n');
  console.log(summary);
  // BENCH_OUT: one JSON line per walk, so several walks can be pooled (click-ab.sh does).
  if (process.env.BENCH_OUT) {
    appendFileSync(process.env.BENCH_OUT, `${JSON.stringify({ firstVisits, hovered, revisits })}\n`);
  }
  await testInfo.attach('click-to-render', { body: `${summary}\n${JSON.stringify(times)}\n`, contentType: 'text/plain' });
});
