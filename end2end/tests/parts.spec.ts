import { test, expect } from '@playwright/test';
import { fenUrl, openHydrated } from './helpers';

// The parts of the page whose WASM comes later (app/src/components/part.rs):
// a part whose file does not arrive says so and offers a retry, and the
// rest of the page goes on working; a click that came before the code is
// not lost.

const KQK = '8/8/8/8/8/2k5/1q6/K7 b - - 0 1';
// The split parts' files; the main WASM is zugzwang.<hash>.wasm.
const PARTS = /\/pkg\/(split_|chunk_)[^/]*\.wasm$/;

test('a part that does not load says so, the page still works, and Retry brings it', async ({ page }) => {
  await page.route(PARTS, (route) => route.abort());
  await openHydrated(page, KQK);
  await page.locator('button.edit').click();
  const error = page.locator('.part-error');
  await expect(error).toContainText('The editor did not load');
  // The move list still answers.
  await expect(page.locator('.move-list a.move').first()).toBeVisible();
  await page.unroute(PARTS);
  await error.locator('button.retry').click();
  await expect(page.locator('.editor')).toBeVisible();
  await expect(page.locator('.part-error')).toHaveCount(0);
});

test('a click on a server-rendered part before its code arrives is played once it has', async ({ page }) => {
  await page.route(PARTS, (route) => route.abort());
  await openHydrated(page, KQK);
  await page.locator('button.show-line').click();
  await expect(page.locator('.part-error')).toContainText('The mainline did not load');
  await page.unroute(PARTS);
  await page.locator('.part-error button.retry').click();
  await expect(page.locator('.mainline .line-moves a').first()).toBeVisible();
});

test('the server-rendered parts are in the page without JavaScript', async ({ browser }) => {
  const context = await browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  await page.goto(fenUrl(KQK));
  await expect(page.locator('.help summary')).toHaveText('How to read the moves');
  await expect(page.locator('.stats h2')).toHaveText('Endgame statistics');
  await context.close();
});
