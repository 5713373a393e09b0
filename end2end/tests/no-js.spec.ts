import { test, expect } from './fixtures';
import { apiAnswer, expectListMatchesApi, fenUrl } from './helpers';

// The server renders the whole page: with JavaScript off it must still show
// the board, the verdict and every move with its DTZ, as plain links.
test.use({ javaScriptEnabled: false });

const positions = [
  '4k3/8/8/8/8/8/8/4K2R w - - 0 1', // KRvK, white wins
  '8/8/8/8/4k3/8/4P3/4K3 b - - 0 1', // KPvK, black to move
  '8/8/8/8/8/2k5/8/K1q5 w - - 0 1', // KvKQ: the side to move loses
  '8/8/8/2K1N3/8/5k2/6P1/8 b - - 0 38', // an impossible check (pawn and knight), answered as lila does
];

for (const fen of positions) {
  test(`without JavaScript, ${fen} shows every move and its DTZ`, async ({ page, request }) => {
    const api = await apiAnswer(request, fen);
    await page.goto(fenUrl(fen));
    await expect(page.locator('.explorer')).toHaveAttribute('data-hydrated', 'false');
    await expect(page.locator('.board [data-square]')).toHaveCount(64);
    await expect(page.locator('.status')).toBeVisible();
    await expectListMatchesApi(page, api);
    // Controls that need the WASM are not offered.
    await expect(page.locator('button.flip')).toBeHidden();
    await expect(page.locator('.mainline')).toBeHidden();
    // Moves are links to the next position.
    const href = await page.locator('.move-list a.move').first().getAttribute('href');
    expect(href).toMatch(/^\/\?fen=/);
  });
}

test('without JavaScript, following a move link shows the next position', async ({ page, request }) => {
  const fen = '4k3/8/8/8/8/8/8/4K2R w - - 0 1';
  await page.goto(fenUrl(fen));
  const first = page.locator('.move-list a.move').first();
  const href = (await first.getAttribute('href')) ?? '';
  await first.click();
  await expect(page).toHaveURL(new RegExp(href.replace(/[?]/g, '\\?').replace(/\//g, '\\/') + '$'));
  const next = decodeURIComponent(href.slice('/?fen='.length)).replace(/_/g, ' ');
  await expectListMatchesApi(page, await apiAnswer(request, next));
});

test('without JavaScript, an illegal position says why', async ({ page }) => {
  await page.goto('/?fen=4k3/8/8/8/8/8/8/3KK3_w_-_-_0_1');
  await expect(page.locator('.status')).toContainText('too many kings');
});

test('without JavaScript, the FEN box loads a position', async ({ page, request }) => {
  await page.goto('/');
  const fen = '4k3/8/8/8/8/8/8/3QK3 w - - 0 1';
  await page.locator('#fen-input').fill(fen);
  await page.locator('#fen-input').press('Enter');
  await expect(page.locator('.status')).toContainText('White to move wins');
  await expectListMatchesApi(page, await apiAnswer(request, fen));
});

// Without JavaScript the page says what works there
// (the move links, the FEN box, playing it out), not the board or the editor.
test('without JavaScript, the help says what works: move links, the FEN box, practice', async ({ page }) => {
  await page.goto(fenUrl('4k3/8/8/8/8/8/8/4K2R w - - 0 1'));
  const intro = page.locator('.help .intro:visible');
  await expect(intro).toHaveCount(1);
  await expect(intro).toContainText('Each move in the list is a link');
  await expect(intro).toContainText('paste a FEN below');
  await expect(intro).toContainText('Play this out');
  await expect(intro).not.toContainText('Play a move on the board');
  await expect(intro).not.toContainText('editor (e)');
  // What it points to is there and works without the page's script.
  await expect(page.locator('#fen-input')).toBeVisible();
  await expect(page.locator('a.play-out')).toBeVisible();
  // The keys need the script: the help does not list them.
  await page.locator('.help summary').first().click();
  await expect(page.locator('.help dd.keys')).toBeHidden();
  await page.locator('a.play-out').click();
  await expect(page).toHaveURL(/\/practice\?/);
  await expect(page.locator('.practice-panel')).toBeVisible();
});

test('with JavaScript, the help offers the board and the editor instead', async ({ browser }) => {
  const context = await browser.newContext({ javaScriptEnabled: true });
  const page = await context.newPage();
  await page.goto(fenUrl('4k3/8/8/8/8/8/8/4K2R w - - 0 1'));
  await expect(page.locator('.explorer')).toHaveAttribute('data-hydrated', 'true');
  const intro = page.locator('.help .intro:visible');
  await expect(intro).toHaveCount(1);
  await expect(intro).toContainText('Play a move on the board');
  await expect(page.locator('.help')).not.toContainText('Each move in the list is a link', { useInnerText: true });
  await context.close();
});
