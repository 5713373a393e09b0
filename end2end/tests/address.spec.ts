import { test, expect, type Page } from './fixtures';
import { fenOfUrl, fenUrl, openHydrated } from './helpers';

// The page's address (app/src/url.rs): a link to the same page changes the
// position in place, back and forward walk the positions, the practice page
// is a page of its own, and an unknown address is a 404.

const KQvK = '4k3/8/8/8/8/8/8/3QK3 w - - 0 1';
const START = '4k3/8/8/8/8/8/8/4K2R w - - 0 1';

/** Marks the document: the mark survives only while no page load happens. */
async function markDocument(page: Page) {
  await page.evaluate(() => ((window as unknown as { sameDocument: boolean }).sameDocument = true));
}

async function sameDocument(page: Page): Promise<boolean> {
  return page.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument === true);
}

test('a link to this page changes the position in place; back and forward walk it', async ({ page }) => {
  await openHydrated(page, KQvK);
  await markDocument(page);
  await page.locator('header.top a').click();
  await expect(page).toHaveURL(/\/$/);
  await expect(page.locator('.move-list')).toContainText('Rh8');
  expect(await sameDocument(page), 'no page load for a link to the same page').toBe(true);

  await page.goBack();
  await expect.poll(() => fenOfUrl(page.url())).toBe(KQvK);
  await expect(page.locator('.move-list')).toContainText('Qd8');
  await page.goForward();
  await expect(page).toHaveURL(/\/$/);
  await expect(page.locator('.move-list')).toContainText('Rh8');
  expect(await sameDocument(page), 'no page load for back and forward').toBe(true);
});

test('a move played from the list is a new history entry, made in place', async ({ page }) => {
  await openHydrated(page, START);
  await markDocument(page);
  await page.locator('.move-list a.move', { hasText: 'Rh8' }).click();
  await expect.poll(() => fenOfUrl(page.url())).toContain('4k2R');
  expect(await sameDocument(page)).toBe(true);
  await page.goBack();
  await expect.poll(() => fenOfUrl(page.url())).toBe(START);
  expect(await sameDocument(page)).toBe(true);
});

test('the practice page is a page of its own, and back returns to the explorer', async ({ page }) => {
  await openHydrated(page, KQvK);
  await markDocument(page);
  await page.locator('a.play-out').click();
  await expect(page).toHaveURL(/\/practice\?/);
  await expect(page.locator('.practice-sides a.play-side')).toHaveCount(2);
  expect(await sameDocument(page), 'another page is a page load').toBe(false);
  await page.goBack();
  await expect(page.locator('.explorer')).toHaveAttribute('data-hydrated', 'true');
  await expect.poll(() => fenOfUrl(page.url())).toBe(KQvK);
});

test('the practice page with a trailing slash is the practice page, game and all', async ({ page }) => {
  await page.goto(`/practice/?fen=${KQvK.replace(/ /g, '_')}&seed=1`);
  await expect(page).toHaveURL(/\/practice\?fen=[^&]+&seed=1$/);
  await expect(page.locator('.practice-sides a.play-side')).toHaveCount(2);
});

test('a practice page whose code does not arrive says so, and its links still work', async ({ page }) => {
  await page.route(/\/pkg\/(split_|chunk_)[^/]*\.wasm$/, (route) => route.abort());
  await page.goto(`/practice?fen=${KQvK.replace(/ /g, '_')}&seed=1`);
  await expect(page.locator('.part-error', { hasText: 'The practice page did not load' })).toBeVisible();
  // The server's page: choosing a side is a link.
  await page.locator('.practice-sides a.play-side.white').click();
  await expect(page).toHaveURL(/side=white/);
  await expect(page.locator('.part-error', { hasText: 'The practice page did not load' })).toBeVisible();
});

test('an unknown address answers 404 with a page that says so', async ({ page }) => {
  const response = await page.goto('/no-such-page');
  expect(response?.status()).toBe(404);
  await expect(page.locator('main')).toHaveText('Page not found.');
  // The explorer is one link away.
  await page.locator('header.top a').click();
  await expect(page).toHaveURL(/\/$/);
  await expect(page.locator('.explorer')).toHaveAttribute('data-hydrated', 'true');
});

test('the first position is read from the address on the server too', async ({ request }) => {
  const html = await (await request.get(`${fenUrl(KQvK)}&orientation=black`)).text();
  expect(html).toContain('Qd8');
});
