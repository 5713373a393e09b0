import { test, expect } from './fixtures';
import { fenOfUrl, fenUrl, openHydrated, waitForList } from './helpers';

// Results in words a player reads right, the clock, and why a
// move is unknown.

test('a cursed win and a blessed loss are labelled as what they are', async ({ page }) => {
  // KQvK is won in about 20 plies: with 90 plies on the clock the win comes too late.
  const cursed = '8/8/8/8/4k3/8/1Q6/K7 w - - 90 1';
  await openHydrated(page, cursed);
  await waitForList(page, cursed);
  await expect(page.locator('.status')).toContainText('win prevented by the 50-move rule (cursed win)');
  const heading = page.locator('.group h3', { hasText: 'Win prevented by the 50-move rule' });
  await expect(heading).toBeVisible();
  await expect(heading).toHaveAttribute('title', /cursed win/);
  const blessed = '8/8/8/8/4k3/8/1Q6/K7 b - - 90 1';
  await openHydrated(page, blessed);
  await waitForList(page, blessed);
  await expect(page.locator('.status')).toContainText('loss saved by the 50-move rule (blessed loss)');
  await expect(page.locator('.group h3', { hasText: 'Loss saved by the 50-move rule' })).toBeVisible();
});

test('a rounded DTZ reads "maybe", in the heading, the label and the tooltip', async ({ page, request }) => {
  // KBNvK with 45 plies on the clock: the tables store these distances
  // rounded, so whether the win comes in time is open (syzygy-win/-loss).
  const fen = '6B1/8/8/8/8/K2N4/8/2k5 b - - 45 1';
  const api = await (await request.get(`/standard?fen=${encodeURIComponent(fen)}`)).json();
  expect(api.moves.some((m: { category: string }) => m.category.startsWith('syzygy-'))).toBeTruthy();
  await openHydrated(page, fen);
  await waitForList(page, fen);
  const maybe = page.locator('.move-list a.move[data-category^="syzygy-"]').first();
  await expect(maybe).toHaveAttribute('data-result', /\(maybe: DTZ rounding\)/);
  await expect(maybe).toHaveAttribute('title', /maybe: DTZ rounding/);
  await expect(page.locator('.group h3', { hasText: '(maybe: DTZ rounding)' }).first()).toBeVisible();
  // Every tooltip is words, never the raw API name.
  const titles = await page.locator('.move-list a.move').evaluateAll((links) => links.map((a) => a.getAttribute('title') ?? ''));
  for (const title of titles) expect(title).not.toMatch(/^(syzygy|maybe|cursed|blessed)-/);
});

test('the help explains DTZ and the order; the landing page says what to do', async ({ page }) => {
  await page.goto('/');
  await expect(page.locator('.help .intro')).toContainText('Play a move on the board');
  await page.locator('.help summary').click();
  await expect(page.locator('.help dl')).toContainText('Distance to zeroing');
  await expect(page.locator('.help dl')).toContainText('captures and promotions that keep the win come first');
});

test('captures say so in words, and the list and the statistics count DTZ alike', async ({ page }) => {
  const fen = '8/8/8/8/8/3k4/1r6/K1Q5 w - - 0 1';
  await openHydrated(page, fen);
  await waitForList(page, fen);
  const capture = page.locator('.move-list a.move', { hasText: 'Kxb2' });
  await expect(capture.locator('.badge')).toHaveText('capture');
  await expect(capture).toHaveAttribute('title', /plies to the next capture or pawn move/);
  await expect(page.locator('.stats .longest')).toContainText(/Longest win for White: DTZ \d+ /);
  await expect(page.locator('.stats .longest')).not.toContainText('plies');
  await expect(page.locator('.stats')).toContainText('share of all its positions');
});

test('the halfmove clock is shown in plies until a claim, and 150 is flagged', async ({ page }) => {
  await page.goto(fenUrl('4k3/8/8/8/8/8/8/4K2R w - - 37 60'));
  await expect(page.locator('.clock')).toHaveText('Halfmove clock 37: 63 plies until a draw can be claimed');
  await page.goto(fenUrl('4k3/8/8/8/8/8/8/4K2R w - - 150 60'));
  await expect(page.locator('.clock')).toHaveClass(/warn/);
  await expect(page.locator('.clock')).toContainText('75-move rule');
});

test('unknown says why: castling rights, or the table that is not installed, with the command', async ({ page }) => {
  // Black may still castle after White's rook moves: those positions are
  // not in the tables (the verdict itself comes from the moves that are).
  const castling = '4k2r/8/8/8/8/8/8/4K2R w Kk - 0 1';
  await openHydrated(page, castling);
  await waitForList(page, castling);
  await expect(page.locator('.move-list a.move[data-san="Rh2"] .why')).toContainText('Castling is still possible');
  // The embedded tables hold 3 and 4 pieces: KRPvKR is not installed, but
  // taking the rook leads into KRPvK, which is (and decides the verdict).
  const five = '8/8/4k3/8/4PK2/8/8/r6R w - - 0 50';
  await openHydrated(page, five);
  await waitForList(page, five);
  // Said once above the list, and in each move's tooltip.
  const rookMove = page.locator('.move-list a.move[data-san="Rh2"]');
  await expect(rookMove).toHaveAttribute('title', /KRPvKR not installed/);
  await expect(rookMove.locator('.why')).toHaveCount(0);
  await expect(page.locator('.missing-tables summary')).toHaveText('Not installed: KRPvKR');
  await expect(page.locator('.move-list a.move[data-san="Rxa1"]')).toContainText('DTZ');
  await page.locator('.missing-tables summary').click();
  await expect(page.locator('.missing-tables code')).toContainText('zugzwang tables fetch --only KRPvKR');
  const coverage = await (await page.request.get('/tables')).json();
  expect(coverage.tables).toContain('KRvK');
  expect(coverage.pieces.find((p: { pieces: number }) => p.pieces === 4).installed).toBeGreaterThan(0);
});

test('when the server does not answer, the page says so and retries', async ({ page }) => {
  const fen = '4k3/8/8/8/8/8/8/4K2R w - - 0 1';
  await openHydrated(page, fen);
  await waitForList(page, fen);
  const api = (url: URL) => url.pathname === '/standard';
  await page.route(api, (route) => route.abort());
  await page.locator('.move-list a.move[data-san="Rh7"]').click();
  const next = '4k3/7R/8/8/8/8/8/4K3 b - - 1 1';
  await expect.poll(() => fenOfUrl(page.url())).toBe(next);
  // In a player's words, not the browser's "TypeError: Failed to fetch".
  await expect(page.locator('.status')).toHaveText(
    'The server cannot be reached: check your connection and try again. The moves below are not analysed.',
  );
  await expect(page.locator('.results')).not.toContainText(/TypeError|fetch/);
  await expect(page.locator('button.retry')).toBeVisible();
  await page.unroute(api);
  await page.locator('button.retry').click();
  await waitForList(page, next);
  await expect(page.locator('.status')).toContainText('Black to move loses');
  await expect(page.locator('button.retry')).toHaveCount(0);
});

test('a line asked for while the server is down says so in the same words', async ({ page }) => {
  const fen = '4k3/8/8/8/8/8/8/3QK3 w - - 0 1';
  await openHydrated(page, fen);
  await waitForList(page, fen);
  const lines = (url: URL) => url.pathname.startsWith('/standard/');
  await page.route(lines, (route) => route.abort('internetdisconnected'));
  await page.locator('button.show-line').click();
  await expect(page.locator('.mainline .line-error')).toHaveText(
    'The server cannot be reached: check your connection and try again',
  );
  // Asking again once it is back brings the line.
  await page.unroute(lines);
  await page.locator('button.show-line').click();
  await expect(page.locator('.mainline .line')).toBeVisible();
  await expect(page.locator('.mainline .line-error')).toHaveCount(0);
});

test('an answer the page cannot read says which field and why, and the page goes on', async ({ page }) => {
  // The page reads answers with its own reader (app::json), not serde: a
  // field missing or of the wrong type is named, nothing breaks.
  const fen = '4k3/8/8/8/8/8/8/4K2R w - - 0 1';
  await openHydrated(page, fen);
  await waitForList(page, fen);
  const api = (url: URL) => url.pathname === '/standard';
  await page.route(api, (route) =>
    route.fulfill({ status: 200, contentType: 'application/json', body: '{"checkmate":false,"stalemate":"no"}' }),
  );
  await page.locator('.move-list a.move[data-san="Rh7"]').click();
  const next = '4k3/7R/8/8/8/8/8/4K3 b - - 1 1';
  await expect.poll(() => fenOfUrl(page.url())).toBe(next);
  await expect(page.locator('.status')).toContainText(
    "the server's answer could not be read: `stalemate` is not true or false",
  );
  await page.unroute(api);
  await page.route(api, (route) => route.fulfill({ status: 200, contentType: 'application/json', body: '{"checkm' }));
  await page.goBack();
  await waitForList(page, fen);
  await page.locator('.move-list a.move[data-san="Rh6"]').click();
  await expect(page.locator('.status')).toContainText("the server's answer could not be read: it is not JSON");
  await page.unroute(api);
  await page.reload();
  await waitForList(page, '4k3/8/7R/8/8/8/8/4K3 b - - 1 1');
  await expect(page.locator('.status')).toContainText('Black to move loses');
});

test('the hover arrow takes the colour of the move\'s result', async ({ page }) => {
  const fen = '4k3/8/8/8/8/8/8/4K2R b - - 0 1';
  await openHydrated(page, fen);
  await waitForList(page, fen);
  await page.locator('.move-list a.move').first().hover();
  await expect(page.locator('.board .arrow')).toHaveClass(/loss/);
});

test('the page says which piece counts this server has', async ({ page }) => {
  await page.goto('/');
  // The embedded tables: every 3- and 4-piece table, nothing larger.
  await expect(page.locator('.installed li[data-pieces="3"]')).toHaveText('3 pieces: all 5 tables');
  await expect(page.locator('.installed li[data-pieces="4"]')).toHaveClass('complete');
  await expect(page.locator('.installed li[data-pieces="5"]')).toHaveText('5 pieces: none installed');
});
