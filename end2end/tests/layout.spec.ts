import { test, expect } from './fixtures';
import { openHydrated, waitForList } from './helpers';

const fen = '4k3/8/8/8/8/8/8/4K2R w - - 0 1';

test.describe('phone', () => {
  test.use({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  test('the board fills the width and the list comes below', async ({ page }, testInfo) => {
    await openHydrated(page, fen);
    await waitForList(page, fen);
    const board = await page.locator('.board').boundingBox();
    const list = await page.locator('.results').boundingBox();
    if (!board || !list) throw new Error('board or list not on screen');
    expect(board.width).toBeGreaterThan(390 * 0.9);
    expect(list.y).toBeGreaterThanOrEqual(board.y + board.height);
    const path = testInfo.outputPath('phone.png');
    await page.screenshot({ path, fullPage: true });
    await testInfo.attach('phone', { path, contentType: 'image/png' });
  });
});

test.describe('desktop', () => {
  test.use({ viewport: { width: 1280, height: 800 } });
  test('board and list side by side', async ({ page }, testInfo) => {
    await openHydrated(page, fen);
    await waitForList(page, fen);
    const board = await page.locator('.board').boundingBox();
    const list = await page.locator('.results').boundingBox();
    if (!board || !list) throw new Error('board or list not on screen');
    expect(list.x).toBeGreaterThanOrEqual(board.x + board.width);
    await expect(page).toHaveTitle(/KRvK, white to move — Zugzwang/);
    const path = testInfo.outputPath('desktop.png');
    await page.screenshot({ path, fullPage: true });
    await testInfo.attach('desktop', { path, contentType: 'image/png' });
  });

  test('dark scheme', async ({ page }, testInfo) => {
    await page.emulateMedia({ colorScheme: 'dark' });
    await openHydrated(page, fen);
    await waitForList(page, fen);
    const path = testInfo.outputPath('desktop-dark.png');
    await page.screenshot({ path, fullPage: true });
    await testInfo.attach('desktop-dark', { path, contentType: 'image/png' });
  });
});
