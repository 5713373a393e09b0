import { test, expect, type Page } from './fixtures';
import { fenOfUrl, fenUrl, openHydrated, waitForList } from './helpers';

// Depth to mate from the embedded Prophet tables, as a new user
// meets it: KBNvK's longest mate, mate in 33.

const KBNvK = '8/8/8/8/8/7B/8/Nk5K w - - 0 1';

test('KBNvK: the best move says "Mate in 33" and the verdict "White mates in 33"', async ({ page }) => {
  await openHydrated(page, KBNvK);
  await waitForList(page, KBNvK);
  await expect(page.locator('.status')).toContainText('White mates in 33');
  const best = page.locator('.move-list a.move').first();
  await expect(best.locator('.dtm')).toHaveText('Mate in 33');
  await expect(best).toHaveAttribute('data-dtm', '-64');
  await expect(best.locator('.dtz')).toContainText('DTZ');
  // A move that gives the win away says no mate.
  const draws = page.locator('.move-list .group.draw a.move .dtm');
  if ((await draws.count()) > 0) await expect(draws.first()).toHaveText('');
});

test('"Fastest mate" steps along the mate in 33 to checkmate, with its PGN', async ({ page }) => {
  await openHydrated(page, KBNvK);
  await waitForList(page, KBNvK);
  await page.locator('button.show-mate').click();
  const line = page.locator('.mainline .line');
  await expect(line).toBeVisible();
  await expect(page.locator('.mainline h2')).toHaveText('Fastest mate');
  await expect(line.locator('.movetext .ply')).toHaveCount(65);
  const href = (await line.locator('a.pgn').getAttribute('href')) ?? '';
  const pgn = decodeURIComponent(href.slice(href.indexOf(',') + 1));
  expect(pgn).toContain('[Event "Zugzwang fastest mate"]');
  expect(pgn).toContain(`[FEN "${KBNvK}"]`);
  expect(pgn).toMatch(/^1\. \S+ \{DTM 64\}/m);
  expect(pgn).toContain('1-0');
  await line.locator('button.step-end').click();
  await expect(line.locator('.line-pos')).toHaveText('65 / 65');
  await expect(line.locator('.line-outcome')).toHaveText('Checkmate: White wins after 65 plies');
  await waitForList(page, fenOfUrl(page.url()));
  await expect(page.locator('.status')).toContainText('Checkmate');
});

/** Clicks the list's first move, plies times, with JavaScript off. */
async function followFirstMoves(page: Page, plies: number): Promise<void> {
  for (let i = 0; i < plies; i++) {
    const first = page.locator('.move-list a.move').first();
    const href = (await first.getAttribute('href')) ?? '';
    await first.click();
    await page.waitForURL((url) => url.pathname + url.search === href);
  }
}

test.describe('without JavaScript', () => {
  test.use({ javaScriptEnabled: false });

  test('mate in N is in the page, and the first move is the fastest mate', async ({ page }) => {
    await page.goto(fenUrl(KBNvK));
    await expect(page.locator('.status')).toContainText('White mates in 33');
    await expect(page.locator('.move-list a.move').first().locator('.dtm')).toHaveText('Mate in 33');
    await followFirstMoves(page, 2);
    await expect(page.locator('.status')).toContainText('White mates in 32');
  });
});
