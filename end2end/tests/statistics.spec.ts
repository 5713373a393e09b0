import { test, expect } from './fixtures';
import { openHydrated, waitForList } from './helpers';

const KRvK = '4k3/8/8/8/8/8/8/4K2R w - - 0 1';

test('the statistics show a DTZ histogram drawn by the server, the position marked', async ({ page, request }) => {
  await openHydrated(page, KRvK);
  await waitForList(page, KRvK);
  const img = page.locator('.stats .dtz-histogram img');
  await expect(img).toBeVisible();
  await expect(img).toHaveAttribute('alt', /KRvK.*DTZ/);
  // The image has loaded (an SVG of real size), from the server.
  await expect.poll(() => img.evaluate((i: HTMLImageElement) => i.complete && i.naturalWidth)).toBeGreaterThan(0);
  const src = await img.getAttribute('src');
  expect(src).toContain('/stats/dtz.svg?fen=');
  const svg = await (await request.get(src!)).text();
  const dtz = (await request.get(`/standard?fen=${encodeURIComponent(KRvK)}`).then((r) => r.json())).dtz as number;
  expect(svg).toContain(`this position: DTZ ${dtz}`);
  expect(svg).toContain('KRvK, white to move');
  // A bar per DTZ the table has for white to move (KRvK wins in 1 to 31 plies, odd ones).
  expect(svg.match(/<rect class="w"/g)?.length).toBe(16);

  // After a move the mark follows the position (Black to move, losing).
  await page.locator('.move-list .move[data-san="Rh7"]').click();
  const afterRh7 = '4k3/7R/8/8/8/8/8/4K3 b - - 1 1';
  await waitForList(page, afterRh7);
  await expect(img).toHaveAttribute('src', /4k3\/7R\/.*_b_/);
  const after = await (await request.get((await img.getAttribute('src'))!)).text();
  const dtzAfter = (await request.get(`/standard?fen=${encodeURIComponent(afterRh7)}`).then((r) => r.json())).dtz as number;
  expect(dtzAfter).toBeLessThan(0);
  expect(after).toContain(`this position: DTZ ${dtzAfter}`);
  expect(after).toContain('KRvK, black to move');
});

test('the position opens on lichess\'s analysis board', async ({ page }) => {
  await openHydrated(page, KRvK);
  const link = page.locator('.fen-box a.lichess');
  await expect(link).toHaveAttribute('href', 'https://lichess.org/analysis/4k3/8/8/8/8/8/8/4K2R_w_-_-_0_1');
  await page.locator('.move-list .move[data-san="Rh7"]').click();
  await expect(link).toHaveAttribute('href', 'https://lichess.org/analysis/4k3/7R/8/8/8/8/8/4K3_b_-_-_1_1');
  // Other rules name themselves in the path.
  await page.goto('/?variant=atomic&fen=4k3/8/8/8/8/8/8/4K2R_w_-_-_0_1');
  await expect(page.locator('.fen-box a.lichess')).toHaveAttribute(
    'href',
    'https://lichess.org/analysis/atomic/4k3/8/8/8/8/8/8/4K2R_w_-_-_0_1',
  );
});
