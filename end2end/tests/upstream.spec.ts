import { test, expect } from './fixtures';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

// Answers from an upstream server where the local tables end (`serve
// --upstream`). A second Zugzwang is started here with no standard tables
// of its own (an empty `--tables` directory) and the server under test as
// its upstream: every standard position it shows is answered upstream, as
// a 6-piece position would be for a self-hoster with the 3-4-5 set who
// points `--upstream` at a bigger server.

const upstream = process.env.BASE_URL ?? 'http://127.0.0.1:3000';
const KRK = '4k3/8/8/8/8/8/8/4K2R w - - 0 1';

function binary(): string {
  if (process.env.ZUGZWANG_BIN) return process.env.ZUGZWANG_BIN;
  const root = resolve(__dirname, '..', '..');
  const target = process.env.CARGO_TARGET_DIR ?? resolve(root, 'target');
  const found = ['release/zugzwang', 'debug/zugzwang']
    .map((p) => resolve(target, p))
    .filter((p) => existsSync(p))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  if (found.length === 0) throw new Error('no zugzwang binary in target/');
  return found[0];
}

let child: ChildProcess | undefined;
let base = '';

test.beforeAll(async () => {
  const root = resolve(__dirname, '..', '..');
  const empty = mkdtempSync(join(tmpdir(), 'zugzwang-no-tables-'));
  const state = mkdtempSync(join(tmpdir(), 'zugzwang-state-'));
  const started = spawn(
    binary(),
    ['serve', '--bind', '127.0.0.1:0', '--tables', empty, '--upstream', upstream, '--state-dir', state],
    {
      cwd: root,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: {
        ...process.env,
        LEPTOS_SITE_ROOT: process.env.LEPTOS_SITE_ROOT ?? resolve(root, 'target/site'),
        RUST_LOG: 'info',
        NO_COLOR: '1',
      },
    },
  );
  child = started;
  base = await new Promise<string>((ok, fail) => {
    let log = '';
    const timer = setTimeout(() => fail(new Error(`the second server did not start:\n${log}`)), 60_000);
    started.stderr?.on('data', (chunk: Buffer) => {
      log += chunk.toString();
      const found = /serving on (http:\/\/[0-9.:]+)/.exec(log);
      if (found) {
        clearTimeout(timer);
        ok(found[1]);
      }
    });
    started.on('exit', (code) => fail(new Error(`the second server exited (${code}):\n${log}`)));
  });
});

test.afterAll(() => {
  child?.kill();
});

test('an answer from upstream says whose it is beside the verdict', async ({
  page,
  request,
}) => {
  const host = new URL(upstream).host;
  const api = await request.get(`${base}/standard?fen=${KRK.replace(/ /g, '_')}`);
  expect(api.headers()['x-source']).toBe('upstream');
  expect(api.headers()['x-upstream-host']).toBe(host);
  const own = await request.get(`${upstream}/standard?fen=${KRK.replace(/ /g, '_')}`);
  expect(await api.text()).toBe(await own.text());

  await page.goto(`${base}/?fen=${KRK.replace(/ /g, '_')}`);
  await expect(page.locator('.explorer')).toHaveAttribute('data-hydrated', 'true');
  const verdict = page.locator('.results .status');
  await expect(verdict).toContainText('White to move wins');
  await expect(verdict).toContainText(`answer from ${host}`);
  // The moves are the upstream's, though this server has no table for them.
  await expect(page.locator('.move-list a.move')).toHaveCount((await api.json()).moves.length);
});
