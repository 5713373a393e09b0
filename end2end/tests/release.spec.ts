import { test, expect } from '@playwright/test';
import { gzipSync } from 'node:zlib';

// What ships: the end-to-end tests run against the release build, whose
// WASM must stay small enough for a phone on a slow line.

const LIMIT_KIB = 400;

test(`the WASM bundle is at most ${LIMIT_KIB} KiB gzipped`, async ({ request }) => {
  const response = await request.get('/pkg/zugzwang.wasm');
  expect(response.ok()).toBeTruthy();
  const body = await response.body();
  const gzipped = gzipSync(body, { level: 9 }).length;
  const kib = (n: number) => (n / 1024).toFixed(1);
  console.log(`WASM bundle: ${kib(body.length)} KiB, ${kib(gzipped)} KiB gzipped (limit ${LIMIT_KIB} KiB)`);
  expect(gzipped, 'run the end-to-end tests on the release build: cargo leptos end-to-end --release').toBeLessThanOrEqual(
    LIMIT_KIB * 1024,
  );
});
