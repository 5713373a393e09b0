import { test, expect } from '@playwright/test';
import { fenOfUrl, openHydrated, waitForList } from './helpers';

test('"show line" steps to the end of the mainline of a won KQvK position', async ({ page }) => {
  const KQvK = '4k3/8/8/8/8/8/8/3QK3 w - - 0 1';
  await openHydrated(page, KQvK);
  await waitForList(page, KQvK);
  await page.locator('button.show-line').click();
  const line = page.locator('.mainline .line');
  await expect(line).toBeVisible();
  const steps = await line.locator('.line-moves a').count();
  expect(steps).toBeGreaterThan(0);
  await expect(line.locator('.line-pos')).toHaveText(`0 / ${steps}`);

  // The PGN carries the start position.
  const href = (await line.locator('a.pgn').getAttribute('href')) ?? '';
  const pgn = decodeURIComponent(href.slice(href.indexOf(',') + 1));
  expect(pgn).toContain(`[FEN "${KQvK}"]`);
  expect(pgn).toContain('1-0');

  for (let i = 1; i <= steps; i++) {
    await line.locator('button.line-next').click();
    await expect(line.locator('.line-pos')).toHaveText(`${i} / ${steps}`);
  }
  await expect(line.locator('button.line-next')).toBeDisabled();
  await waitForList(page, fenOfUrl(page.url()));
  await expect(page.locator('.status')).toContainText('Checkmate');
});
