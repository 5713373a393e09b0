// Where a click's time goes: a random walk of moves clicked cold (as
// tests/bench.spec.ts), each split into the click's own dispatch, when the
// API request left, how long it took, and the time from its last byte to the
// new list in the DOM; and the CPU the browser's processes spent per click,
// read from /proc (page loads left out), which the machine's load inflates
// far less than wall time. Not a test: figures.
//   BASE_URL=http://127.0.0.1:3000 MOVES=80 node bench/click-cost.mjs
// HOVER_MS=300: each move is hovered that long before its click (a cached
// click when the answer came in time). PROFILE=file.cpuprofile: a V8 CPU
// profile of the page (open it in Chrome's DevTools); TRACE=file.json: a
// Chrome trace of the walk, with marks "click" and "rendered" per move.
import { chromium } from '@playwright/test';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';

const base = process.env.BASE_URL ?? 'http://127.0.0.1:3000';
const moves = Number(process.env.MOVES ?? 60);
const hoverMs = process.env.HOVER_MS === undefined ? null : Number(process.env.HOVER_MS);
const starts = [
  '4k3/8/8/8/8/8/8/4K2R w - - 0 1',
  '8/8/3k4/8/8/3K4/3P4/8 w - - 0 1',
  '8/8/8/4k3/8/8/8/1NB1K3 w - - 0 1',
  '8/8/8/3k4/8/8/2Q5/4K3 w - - 0 1',
];

/** The `/proc/<pid>/stat` fields after the command name. */
function statFields(path) {
  const stat = readFileSync(path, 'utf8');
  return { comm: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), fields: stat.slice(stat.lastIndexOf(')') + 2).split(' ') };
}

/**
 * CPU seconds used so far by the processes this script started (the
 * browser), by kind ("renderer", "gpu-process", "utility:network",
 * "browser"), and by thread for the renderer ("renderer/chromium" is its
 * main thread).
 */
function cpuByKind() {
  const procs = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const { fields } = statFields(`/proc/${name}/stat`);
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8');
      procs.push({ pid: Number(name), ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]), cmd });
    } catch {
      // The process ended while being read.
    }
  }
  const mine = new Set([process.pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of procs) {
      if (!mine.has(p.pid) && mine.has(p.ppid)) {
        mine.add(p.pid);
        grew = true;
      }
    }
  }
  const out = {};
  const add = (key, ticks) => (out[key] = (out[key] ?? 0) + ticks / 100);
  for (const p of procs) {
    if (!mine.has(p.pid) || p.pid === process.pid) continue;
    const kind = (p.cmd.match(/--type=([a-z-]+)/)?.[1] ?? 'browser') + (p.cmd.includes('network.mojom') ? ':network' : '');
    add(kind, p.ticks);
    if (kind !== 'renderer') continue;
    for (const t of readdirSync(`/proc/${p.pid}/task`)) {
      try {
        const { comm, fields } = statFields(`/proc/${p.pid}/task/${t}/stat`);
        add(`renderer/${comm.replace(/\d+$/, '')}`, Number(fields[11]) + Number(fields[12]));
      } catch {
        // The thread ended while being read.
      }
    }
  }
  return out;
}

/** Clicks one of the first six moves not seen yet and times it; null when there is none. */
function clickMove(page, seen) {
  return page.evaluate(
    async ({ seen, hoverMs }) => {
      const fenOf = (l) => decodeURIComponent(l.getAttribute('href').slice('/?fen='.length)).replace(/_/g, ' ');
      const links = [...document.querySelectorAll('.move-list a.move')].filter((l) => !seen.includes(fenOf(l)));
      if (links.length === 0 || document.querySelector('.status')?.textContent?.includes('Checkmate')) return null;
      const link = links[Math.floor(Math.random() * Math.min(links.length, 6))];
      const fen = fenOf(link);
      if (hoverMs !== null) {
        link.dispatchEvent(new MouseEvent('mouseenter'));
        await new Promise((r) => setTimeout(r, hoverMs));
      }
      performance.clearResourceTimings();
      return await new Promise((resolve) => {
        let t0 = 0;
        let dispatch = 0;
        const observer = new MutationObserver(() => {
          const list = document.querySelector(`.move-list[data-fen="${CSS.escape(fen)}"]`);
          const results = document.querySelector('.results');
          if (!list || !results || results.classList.contains('pending')) return;
          const rendered = performance.now() - t0;
          performance.mark('rendered');
          observer.disconnect();
          const requests = performance
            .getEntriesByType('resource')
            .filter((e) => new URL(e.name).pathname === '/standard')
            .map((e) => ({ start: e.startTime - t0, end: e.responseEnd - t0 }));
          resolve({ fen, rendered, dispatch, requests });
        });
        observer.observe(document.body, { subtree: true, childList: true, attributes: true });
        performance.mark('click');
        t0 = performance.now();
        link.click();
        dispatch = performance.now() - t0;
      });
    },
    { seen, hoverMs },
  );
}

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run'],
});
const page = await browser.newPage();
const cdp = await page.context().newCDPSession(page);
const open = async (fen) => {
  await page.goto(`${base}/?fen=${fen.replace(/ /g, '_')}`);
  await page.waitForSelector('.explorer[data-hydrated="true"]');
  await page.waitForSelector(`.move-list[data-fen="${fen}"]`);
};

let start = 0;
await open(starts[start]);
if (process.env.TRACE) {
  const categories = ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'blink.user_timing', 'loading', 'v8.execute'];
  await cdp.send('Tracing.start', { transferMode: 'ReturnAsStream', traceConfig: { includedCategories: categories } });
}
if (process.env.PROFILE) {
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 100 });
  await cdp.send('Profiler.start');
}
const rows = [];
const cpu = {};
let mark = cpuByKind();
const addCpu = () => {
  const now = cpuByKind();
  for (const k of Object.keys(now)) cpu[k] = (cpu[k] ?? 0) + now[k] - (mark[k] ?? 0);
  mark = now;
};
let seen = [starts[start]];
while (rows.length < moves) {
  const row = await clickMove(page, seen);
  // Start again from another position when the game ends or every 40 moves.
  if (!row || seen.length > 40) {
    addCpu();
    start = (start + 1) % starts.length;
    await open(starts[start]);
    mark = cpuByKind();
    seen = [starts[start]];
    continue;
  }
  seen.push(row.fen);
  rows.push(row);
}
addCpu();
if (process.env.PROFILE) {
  const { profile } = await cdp.send('Profiler.stop');
  writeFileSync(process.env.PROFILE, JSON.stringify(profile));
}
if (process.env.TRACE) {
  const complete = new Promise((resolve) => cdp.once('Tracing.tracingComplete', resolve));
  await cdp.send('Tracing.end');
  const { stream } = await complete;
  let data = '';
  for (let eof = false; !eof; ) {
    const chunk = await cdp.send('IO.read', { handle: stream });
    data += chunk.data;
    eof = chunk.eof;
  }
  writeFileSync(process.env.TRACE, data);
}
await browser.close();

const quantile = (xs, q) => {
  if (xs.length === 0) return '-';
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))].toFixed(1);
};
const line = (label, xs) =>
  console.log(`${label.padEnd(26)} n=${xs.length} min ${quantile(xs, 0)} p50 ${quantile(xs, 0.5)} p95 ${quantile(xs, 0.95)} max ${quantile(xs, 1)}`);
const first = (r) => r.requests[0];
line('click to rendered (ms)', rows.map((r) => r.rendered));
line('click dispatch', rows.map((r) => r.dispatch));
line('requests per click', rows.map((r) => r.requests.length));
line('request left at', rows.filter(first).map((r) => first(r).start));
line('request took', rows.filter(first).map((r) => first(r).end - first(r).start));
line('last byte to rendered', rows.filter(first).map((r) => r.rendered - first(r).end));
const perClick = Object.entries(cpu)
  .filter(([, s]) => s > 0.05)
  .map(([k, s]) => `${k} ${((1000 * s) / rows.length).toFixed(1)}`);
console.log(`CPU ms per click: ${perClick.join(', ')}`);
