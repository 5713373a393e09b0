import { test, expect } from './fixtures';
import {
  apiAnswer,
  boardPieces,
  clickSquare,
  dragSquare,
  expectListMatchesApi,
  fenOfUrl,
  openHydrated,
  squareCenter,
  waitForList,
} from './helpers';

const KRvK = '4k3/8/8/8/8/8/8/4K2R w - - 0 1';

test('a click-click move updates the board, the URL and the list', async ({ page, request }) => {
  await openHydrated(page, KRvK);
  await waitForList(page, KRvK);
  await clickSquare(page, 'h1');
  await expect(page.locator('[data-square="h1"]')).toHaveClass(/selected/);
  await expect(page.locator('[data-square="h7"]')).toHaveClass(/target/);
  await clickSquare(page, 'h7');

  const next = '4k3/7R/8/8/8/8/8/4K3 b - - 1 1';
  await expect.poll(() => fenOfUrl(page.url())).toBe(next);
  expect((await boardPieces(page))['h7']).toBe('wR');
  expect((await boardPieces(page))['h1']).toBeUndefined();
  await expect(page.locator('[data-square="h1"]')).toHaveClass(/last/);
  await waitForList(page, next);
  await expectListMatchesApi(page, await apiAnswer(request, next));
});

test('a drag-and-drop move updates the board, the URL and the list', async ({ page, request }) => {
  await openHydrated(page, KRvK);
  await waitForList(page, KRvK);
  await dragSquare(page, 'e1', 'd2');

  const next = '4k3/8/8/8/8/8/3K4/7R b - - 1 1';
  await expect.poll(() => fenOfUrl(page.url())).toBe(next);
  const pieces = await boardPieces(page);
  expect(pieces['d2']).toBe('wK');
  expect(pieces['e1']).toBeUndefined();
  await waitForList(page, next);
  await expectListMatchesApi(page, await apiAnswer(request, next));
});

test('clicking a move in the list plays it', async ({ page, request }) => {
  await openHydrated(page, KRvK);
  await waitForList(page, KRvK);
  const first = page.locator('.move-list a.move').first();
  const uci = (await first.getAttribute('data-uci')) ?? '';
  await first.hover();
  await expect(page.locator(`[data-square="${uci.slice(0, 2)}"]`)).toHaveClass(/hover/);
  await first.click();
  await expect.poll(() => fenOfUrl(page.url())).not.toBe(KRvK);
  const next = fenOfUrl(page.url());
  await waitForList(page, next);
  await expectListMatchesApi(page, await apiAnswer(request, next));
});

test('promotion asks for the piece; back returns to the previous position', async ({ page, request }) => {
  const KPvK = '8/4P3/8/8/8/2k5/8/K7 w - - 0 1';
  await openHydrated(page, KPvK);
  await waitForList(page, KPvK);
  await clickSquare(page, 'e7');
  await clickSquare(page, 'e8');
  const dialog = page.locator('.promotion');
  await expect(dialog).toBeVisible();
  await expect(dialog.locator('button.choice')).toHaveCount(4);
  await dialog.locator('button[data-role="n"]').click();

  const next = '4N3/8/8/8/8/2k5/8/K7 b - - 0 1';
  await expect.poll(() => fenOfUrl(page.url())).toBe(next);
  expect((await boardPieces(page))['e8']).toBe('wN');
  await waitForList(page, next);
  await expectListMatchesApi(page, await apiAnswer(request, next));

  await page.goBack();
  await expect.poll(() => fenOfUrl(page.url())).toBe(KPvK);
  expect((await boardPieces(page))['e7']).toBe('wP');
  await waitForList(page, KPvK);
  await expectListMatchesApi(page, await apiAnswer(request, KPvK));
});

// On a touch screen the tap on the promotion square
// opened the chooser and its click picked the queen drawn under the finger.
test.describe('on a touch screen', () => {
  test.use({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  test('promotion shows the chooser and honours the piece tapped', async ({ page }) => {
    const KPvK = '8/4P3/8/8/8/8/k7/4K3 w - - 0 1';
    await openHydrated(page, KPvK);
    await waitForList(page, KPvK);
    const tap = async (square: string) => {
      const { x, y } = await squareCenter(page, square);
      await page.touchscreen.tap(x, y);
    };
    await tap('e7');
    await expect(page.locator('.board [data-square="e7"]')).toHaveClass(/selected/);
    await tap('e8');
    const dialog = page.locator('.promotion');
    await expect(dialog).toBeVisible();
    await expect(dialog.locator('button.choice')).toHaveCount(4);
    // The tap that opened it chose nothing: it stays open on the same position.
    await page.waitForTimeout(300);
    await expect(dialog).toBeVisible();
    expect(fenOfUrl(page.url())).toBe(KPvK);
    await dialog.locator('button[data-role="n"]').tap();
    const next = '4N3/8/8/8/8/8/k7/4K3 b - - 0 1';
    await expect.poll(() => fenOfUrl(page.url())).toBe(next);
    expect((await boardPieces(page))['e8']).toBe('wN');
    await expect(dialog).toBeHidden();
  });
});

test('keyboard: f flips, left and right walk the history', async ({ page }) => {
  await openHydrated(page, KRvK);
  await waitForList(page, KRvK);
  await clickSquare(page, 'h1');
  await clickSquare(page, 'h7');
  const next = '4k3/7R/8/8/8/8/8/4K3 b - - 1 1';
  await expect.poll(() => fenOfUrl(page.url())).toBe(next);

  await page.locator('body').press('ArrowLeft');
  await expect.poll(() => fenOfUrl(page.url())).toBe(KRvK);
  await page.locator('body').press('ArrowRight');
  await expect.poll(() => fenOfUrl(page.url())).toBe(next);

  const firstSquare = page.locator('.board [data-square]').first();
  await expect(firstSquare).toHaveAttribute('data-square', 'a8');
  await page.locator('body').press('f');
  await expect(firstSquare).toHaveAttribute('data-square', 'h1');
});

test('an invalid FEN in the box shows the reason and keeps the board', async ({ page }) => {
  await openHydrated(page, KRvK);
  await waitForList(page, KRvK);
  const before = await boardPieces(page);
  const input = page.locator('#fen-input');
  await expect(input).toHaveValue(KRvK);

  await input.fill('4k3/8/8 w - - 0 1');
  await input.press('Enter');
  await expect(page.locator('.fen-error')).toContainText('board part');
  await input.fill('4k3/8/8/8/8/8/8/3KK3 w - - 0 1');
  await input.press('Enter');
  await expect(page.locator('.fen-error')).toContainText('too many kings');
  expect(await boardPieces(page)).toEqual(before);
  expect(fenOfUrl(page.url())).toBe(KRvK);

  // A valid one loads.
  const KQvK = '4k3/8/8/8/8/8/8/3QK3 w - - 0 1';
  await input.fill(KQvK);
  await input.press('Enter');
  await expect.poll(() => fenOfUrl(page.url())).toBe(KQvK);
  await expect(page.locator('.fen-error')).toHaveCount(0);
});

test('hydration keeps the server-rendered page and logs no errors', async ({ page }) => {
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(String(err)));
  page.on('console', (msg) => {
    if (msg.type() === 'error' || msg.type() === 'warning') errors.push(msg.text());
  });
  await page.goto('/?fen=4k3/8/8/8/8/8/8/4K2R_w_-_-_0_1');
  const before = await page.locator('.results').innerText();
  await expect(page.locator('.explorer')).toHaveAttribute('data-hydrated', 'true');
  expect(await page.locator('.results').innerText()).toBe(before);
  expect(errors).toEqual([]);
});

test('while the new answer loads, the previous list stays, greyed', async ({ page, request }) => {
  await openHydrated(page, KRvK);
  await waitForList(page, KRvK);
  // Hold the API's answers back so the waiting state can be seen.
  await page.route((url) => url.pathname === '/standard', async (route) => {
    await new Promise((r) => setTimeout(r, 1500));
    await route.continue();
  });
  await clickSquare(page, 'h1');
  await clickSquare(page, 'h7');
  const next = '4k3/7R/8/8/8/8/8/4K3 b - - 1 1';
  // The board moved at once...
  await expect.poll(() => fenOfUrl(page.url())).toBe(next);
  expect((await boardPieces(page))['h7']).toBe('wR');
  // ...while the old list is still there, marked pending.
  await expect(page.locator('.results')).toHaveClass(/pending/);
  await expect(page.locator(`.move-list[data-fen="${KRvK}"]`)).toBeVisible();
  await waitForList(page, next);
  await expectListMatchesApi(page, await apiAnswer(request, next));
});

test('a move clicked in the list is shown with its answer, or after a moment without it', async ({ page, request }) => {
  // The page's timers run only when the test says: the moment is the page's.
  await page.clock.install();
  await openHydrated(page, KRvK);
  await waitForList(page, KRvK);
  await page.clock.pauseAt(Date.now() + 60_000);
  // The answer is held back until the test lets it go.
  let release = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  const api = (url: URL) => url.pathname === '/standard';
  await page.route(api, async (route) => {
    await held;
    await route.continue();
  });
  await page.locator('.move-list a.move[data-san="Rh7"]').click();
  // Waiting for the answer, the board stays (a second of real time, none of the page's)...
  await page.waitForTimeout(1000);
  expect(fenOfUrl(page.url())).toBe(KRvK);
  expect((await boardPieces(page))['h1']).toBe('wR');
  // ...for a moment only: then it moves, and the old list stays, marked pending.
  await page.clock.runFor(100);
  const next = '4k3/7R/8/8/8/8/8/4K3 b - - 1 1';
  await expect.poll(() => fenOfUrl(page.url())).toBe(next);
  expect((await boardPieces(page))['h7']).toBe('wR');
  await expect(page.locator('.results')).toHaveClass(/pending/);
  await expect(page.locator(`.move-list[data-fen="${KRvK}"]`)).toBeVisible();
  release();
  await waitForList(page, next);
  await expectListMatchesApi(page, await apiAnswer(request, next));
  // An answer that comes is not waited out: with the page's time still
  // stopped, the next move shows with its list as soon as it comes.
  await page.unroute(api);
  await page.locator('.move-list a.move[data-san="Kd8"]').click();
  const after = '3k4/7R/8/8/8/8/8/4K3 w - - 2 2';
  await waitForList(page, after);
  expect(fenOfUrl(page.url())).toBe(after);
});

test('pressing a move asks for its answer before the click, as a hover does (a finger has none)', async ({ page }) => {
  await openHydrated(page, KRvK);
  await waitForList(page, KRvK);
  const next = '4k3/7R/8/8/8/8/8/4K3 b - - 1 1';
  const asked = page.waitForRequest((r) => new URL(r.url()).pathname === '/standard' && fenOfUrl(r.url()) === next);
  await page.locator('.move-list a.move[data-san="Rh7"]').dispatchEvent('pointerdown');
  await asked;
  expect(fenOfUrl(page.url())).toBe(KRvK);
});

test('a move clicked with Ctrl opens in a new tab and leaves this one where it was', async ({ page, context }) => {
  await openHydrated(page, KRvK);
  await waitForList(page, KRvK);
  const opened = context.waitForEvent('page');
  await page.locator('.move-list a.move[data-san="Rh7"]').click({ modifiers: ['Control'] });
  const tab = await opened;
  await tab.waitForLoadState();
  expect(fenOfUrl(tab.url())).toBe('4k3/7R/8/8/8/8/8/4K3 b - - 1 1');
  expect(fenOfUrl(page.url())).toBe(KRvK);
  await waitForList(page, KRvK);
});

test('answers seen before come back without the server: back, and a hovered move', async ({ page }) => {
  await openHydrated(page, KRvK);
  await waitForList(page, KRvK);
  const first = page.locator('.move-list a.move').first();
  const next = decodeURIComponent(((await first.getAttribute('href')) ?? '').slice('/?fen='.length)).replace(/_/g, ' ');
  // Hovering asks for the answer ahead of the click.
  const prefetched = page.waitForResponse((r) => new URL(r.url()).pathname === '/standard');
  await first.hover();
  await prefetched;
  // From here on the API is unreachable: lists must come from the tab's cache.
  await page.route((url) => url.pathname === '/standard', (route) => route.abort());
  await first.click();
  await waitForList(page, next);
  await page.goBack();
  await expect.poll(() => fenOfUrl(page.url())).toBe(KRvK);
  await waitForList(page, KRvK);
});

test('a move clicked while its hover is still asking waits for that request instead of sending another', async ({
  page,
}) => {
  await openHydrated(page, KRvK);
  await waitForList(page, KRvK);
  const first = page.locator('.move-list a.move').first();
  const next = decodeURIComponent(((await first.getAttribute('href')) ?? '').slice('/?fen='.length)).replace(/_/g, ' ');
  // Slow answers, so the click comes while the hover's request is on its way.
  // (Once the new list is in, the mouse over it asks for other moves: only
  // requests for this move's position count.)
  let asked = 0;
  await page.route(
    (url) => url.pathname === '/standard',
    async (route) => {
      if (fenOfUrl(route.request().url()) === next) asked += 1;
      await new Promise((r) => setTimeout(r, 1000));
      await route.continue();
    },
  );
  await first.hover();
  await expect.poll(() => asked).toBe(1);
  await first.click();
  await waitForList(page, next);
  expect(asked).toBe(1);
});
