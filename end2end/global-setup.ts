import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * `cargo leptos end-to-end` starts the server and the tests at the same time:
 * wait until the server answers instead of racing it.
 *
 * cargo-leptos 0.3.11 starts the binary without arguments for end-to-end
 * runs (its `bin-args` apply to `serve`/`watch` only). If no server answers
 * within a short grace period, start `zugzwang serve` from `target/` here
 * (the binary cargo-leptos just built, or $ZUGZWANG_BIN) and stop it after
 * the tests.
 */
const url = process.env.BASE_URL ?? 'http://127.0.0.1:3000';
const probe = `${url}/standard?fen=4k3/8/8/8/8/8/8/4K2R_w_-_-_0_1`;

async function answers(): Promise<boolean> {
  try {
    return (await fetch(probe)).ok;
  } catch {
    return false;
  }
}

async function waitFor(ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await answers()) return true;
    await new Promise((r) => setTimeout(r, 250));
  }
  return false;
}

function newestBinary(): string {
  if (process.env.ZUGZWANG_BIN) return process.env.ZUGZWANG_BIN;
  const root = resolve(__dirname, '..');
  const target = process.env.CARGO_TARGET_DIR ?? resolve(root, 'target');
  const candidates = ['debug/zugzwang', 'release/zugzwang']
    .map((p) => resolve(target, p))
    .filter((p) => existsSync(p))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  if (candidates.length === 0) throw new Error('no zugzwang binary in target/: build it first');
  return candidates[0];
}

export default async function globalSetup(): Promise<(() => Promise<void>) | void> {
  if (await waitFor(15_000)) return;
  let child: ChildProcess | undefined;
  if (!process.env.BASE_URL) {
    const bin = newestBinary();
    console.log(`no server on ${url} yet: starting ${bin} serve`);
    child = spawn(bin, ['serve'], {
      cwd: resolve(__dirname, '..'),
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, LEPTOS_SITE_ROOT: process.env.LEPTOS_SITE_ROOT ?? 'target/site' },
    });
  }
  if (!(await waitFor(120_000))) {
    child?.kill();
    throw new Error(`the server at ${url} did not answer within 2 minutes`);
  }
  if (child) {
    const started = child;
    return async () => {
      started.kill();
    };
  }
}
