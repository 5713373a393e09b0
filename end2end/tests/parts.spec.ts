import { test, expect } from './fixtures';
import { fenUrl, openHydrated } from './helpers';

// The parts of the page whose WASM comes later (app/src/components/part.rs):
// a part whose file does not arrive says so and offers a retry, and the
// rest of the page goes on working; a click that came before the code is
// not lost.

const KRvK = '4k3/8/8/8/8/8/8/4K2R w - - 0 1';
// The split parts' files; the main WASM is zugzwang.<hash>.wasm.
const PARTS = /\/pkg\/(split_|chunk_)[^/]*\.wasm$/;

test('a part that does not load says so, the page still works, and Retry brings it', async ({ page }) => {
  await page.route(PARTS, (route) => route.abort());
  await openHydrated(page, KRvK);
  await page.locator('button.edit').click();
  // (The parts fetched while idle say so too: each its own line.)
  const error = page.locator('.part-error', { hasText: 'The editor did not load' });
  await expect(error).toBeVisible();
  // The move list still answers.
  await expect(page.locator('.move-list a.move').first()).toBeVisible();
  await page.unroute(PARTS);
  await error.locator('button.retry').click();
  await expect(page.locator('.editor')).toBeVisible();
  await expect(page.locator('.part-error', { hasText: 'The editor' })).toHaveCount(0);
});

test('a click on a server-rendered part before its code arrives is played once it has', async ({ page }) => {
  await page.route(PARTS, (route) => route.abort());
  await openHydrated(page, KRvK);
  await page.locator('button.show-line').click();
  const error = page.locator('.part-error', { hasText: 'The mainline did not load' });
  await expect(error).toBeVisible();
  await page.unroute(PARTS);
  // The part goes live under the pointer: a DOM click, not a pointer's.
  await error.locator('button.retry').dispatchEvent('click');
  await expect(page.locator('.mainline .line-moves a').first()).toBeVisible();
  await expect(error).toHaveCount(0);
});

test("a FEN typed and sent in the server's FEN box before its code arrives is loaded once it has", async ({ page }) => {
  // The FEN box's file is held back until the FEN has been typed and sent.
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  await page.route(/\/pkg\/split_fen_box[^/]*\.wasm$/, async (route) => {
    await held;
    await route.continue();
  });
  await openHydrated(page, KRvK);
  const input = page.locator('#fen-input');
  await input.fill('4k3/8/8/8/8/8/8/4K2Q w - - 0 1');
  await input.press('Enter');
  // Not sent by the browser as a plain form: the page waits for the part.
  await expect(page).toHaveURL(/4K2R/);
  release();
  await expect(page).toHaveURL(/4K2Q/);
  await expect(page.locator('#fen-input')).toHaveValue('4k3/8/8/8/8/8/8/4K2Q w - - 0 1');
  await expect(page.locator('.move-list a.move').first()).toBeVisible();
});

test('the server-rendered parts are in the page without JavaScript', async ({ browser }) => {
  const context = await browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  await page.goto(fenUrl(KRvK));
  await expect(page.locator('.help summary')).toHaveText('How to read the moves');
  await expect(page.locator('.stats h2')).toHaveText('Endgame statistics');
  await context.close();
});
