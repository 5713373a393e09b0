// Navigation to a usable page on a slow phone line, for several builds side
// by side (load-ab.sh starts their servers). Chrome DevTools protocol
// throttling: 1.6 Mbit/s down, 750 kbit/s up, 150 ms round trip, CPU 4x
// slower; every visit in a fresh context (empty cache). Per visit:
//   list:        the move list painted (first contentful paint; the server
//                renders it, so this is the HTML's arrival)
//   interactive: the page hydrated (data-hydrated="true"): the WASM and JS
//                of the first load fetched, compiled and run, so the list
//                and the board answer clicks
//   wasm:        bytes of WASM fetched before that (transfer size)
// Not a test: figures.
//   node bench/load-time.mjs ROUNDS LABEL=URL ...
import { chromium } from '@playwright/test';

const [rounds, ...specs] = process.argv.slice(2);
const builds = specs.map((s) => ({ label: s.split('=')[0], url: s.slice(s.indexOf('=') + 1) }));
const fen = process.env.FEN ?? '4k3/8/8/8/8/8/8/4K2R_w_-_-_0_1';
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking'],
});

async function visit(url) {
  const context = await browser.newContext();
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', {
    offline: false,
    latency: 150,
    downloadThroughput: (1.6e6 / 8),
    uploadThroughput: (750e3 / 8),
  });
  await cdp.send('Emulation.setCPUThrottlingRate', { rate: 4 });
  await page.addInitScript(() => {
    new MutationObserver((_, observer) => {
      if (document.querySelector('[data-hydrated="true"]')) {
        window.__hydratedAt = performance.now();
        observer.disconnect();
      }
    }).observe(document, { subtree: true, attributes: true, attributeFilter: ['data-hydrated'] });
  });
  await page.goto(`${url}/?fen=${fen}`, { waitUntil: 'commit', timeout: 120_000 });
  await page.waitForSelector('.explorer[data-hydrated="true"]', { timeout: 120_000 });
  const figures = await page.evaluate(() => {
    const paint = performance.getEntriesByName('first-contentful-paint')[0];
    const at = window.__hydratedAt;
    const wasm = performance
      .getEntriesByType('resource')
      .filter((e) => e.name.endsWith('.wasm') && e.startTime <= at)
      .reduce((n, e) => n + e.transferSize, 0);
    return { list: paint ? paint.startTime : NaN, interactive: at, wasm };
  });
  await context.close();
  return figures;
}

const results = Object.fromEntries(builds.map((b) => [b.label, []]));
for (let round = 1; round <= Number(rounds); round++) {
  for (const b of builds) {
    const f = await visit(b.url);
    results[b.label].push(f);
    console.log(
      `round ${round} ${b.label}: list ${f.list.toFixed(0)} ms, interactive ${f.interactive.toFixed(0)} ms, wasm ${(f.wasm / 1024).toFixed(1)} KiB`,
    );
  }
}
await browser.close();
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)];
};
console.log('== medians');
const first = builds[0].label;
for (const b of builds) {
  const r = results[b.label];
  const m = (k) => median(r.map((f) => f[k]));
  const ratio = (m('interactive') / median(results[first].map((f) => f.interactive))).toFixed(2);
  console.log(
    `${b.label}: list ${m('list').toFixed(0)} ms, interactive ${m('interactive').toFixed(0)} ms (${ratio}x ${first}), wasm ${(m('wasm') / 1024).toFixed(1)} KiB`,
  );
}
