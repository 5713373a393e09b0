import { test, expect, type APIRequestContext, type Page } from './fixtures';
import { fenOfUrl, openHydrated, waitForList } from './helpers';

interface MainlineAnswer {
  mainline: { uci: string; san: string; dtz: number }[];
  winner: string | null;
  dtz: number;
}

async function apiMainline(request: APIRequestContext, fen: string): Promise<MainlineAnswer> {
  const response = await request.get(`/standard/mainline?fen=${encodeURIComponent(fen)}`);
  expect(response.ok(), `mainline for ${fen}`).toBeTruthy();
  return (await response.json()) as MainlineAnswer;
}

/** Opens a position and asks for its mainline. */
async function showLine(page: Page, fen: string): Promise<void> {
  await openHydrated(page, fen);
  await waitForList(page, fen);
  await page.locator('button.show-line').click();
  await expect(page.locator('.mainline .line')).toBeVisible();
}

test('"show line" steps to the end of the mainline of a won KQvK position', async ({ page, request }) => {
  const KQvK = '4k3/8/8/8/8/8/8/3QK3 w - - 0 1';
  await showLine(page, KQvK);
  const line = page.locator('.mainline .line');
  const api = await apiMainline(request, KQvK);
  const steps = api.mainline.length;
  await expect(line.locator('.movetext .ply')).toHaveCount(steps);
  await expect(line.locator('.line-pos')).toHaveText(`0 / ${steps}`);

  // The PGN carries the start position and each move's DTZ.
  const href = (await line.locator('a.pgn').getAttribute('href')) ?? '';
  const pgn = decodeURIComponent(href.slice(href.indexOf(',') + 1));
  expect(pgn).toContain(`[FEN "${KQvK}"]`);
  expect(pgn).toContain(`1. ${api.mainline[0].san} {DTZ ${Math.abs(api.mainline[0].dtz)}} 1... ${api.mainline[1].san}`);
  expect(pgn.match(/\{DTZ \d+\}/g)?.length).toBe(steps);
  expect(pgn).toContain('1-0');

  for (let i = 1; i <= steps; i++) {
    await line.locator('button.step-forward').click();
    await expect(line.locator('.line-pos')).toHaveText(`${i} / ${steps}`);
  }
  await expect(line.locator('button.step-forward')).toBeDisabled();
  await expect(line.locator('.line-outcome')).toHaveText(`Checkmate: White wins after ${steps} plies`);
  await waitForList(page, fenOfUrl(page.url()));
  await expect(page.locator('.status')).toContainText('Checkmate');
});

test('the mainline numbers its moves from the FEN, "37..." when Black moves first', async ({ page }) => {
  await showLine(page, '4k3/8/8/8/8/8/8/3QK3 b - - 0 37');
  const numbers = page.locator('.mainline .move-number');
  await expect(numbers.nth(0)).toHaveText('37...');
  await expect(numbers.nth(1)).toHaveText('38.');
  const text = (await page.locator('.mainline .movetext').innerText()).replace(/\s+/g, ' ');
  expect(text).toMatch(/^37\.\.\. \S+ 38\. \S+ \S+ 39\. /);
});

test.describe('a long line', () => {
  // Low enough that the line scrolls in its box (a line fits whole where it can).
  test.use({ viewport: { width: 1280, height: 330 } });
  test('the step buttons have drawn arrows and stay in sight above the moves', async ({ page }) => {
    // KBNvK, 59 plies to mate.
    await showLine(page, 'K7/B1k5/8/8/8/1N6/8/8 w - - 4 41');
    const line = page.locator('.mainline .line');
    const buttons = line.locator('.step-buttons');
    await expect(buttons.locator('button svg')).toHaveCount(4);
    expect(await buttons.innerText()).not.toMatch(/[⏮⏭◀▶]/);

    const list = line.locator('.movetext');
    const { scrollHeight, clientHeight } = await list.evaluate((el) => ({
      scrollHeight: el.scrollHeight,
      clientHeight: el.clientHeight,
    }));
    expect(scrollHeight).toBeGreaterThan(clientHeight);

    await line.locator('button.step-end').click();
    await expect(line.locator('.line-pos')).toHaveText('59 / 59');
    await expect(line.locator('.ply.current')).toBeInViewport();
    await expect(buttons).toBeInViewport();
    await list.evaluate((el) => {
      el.scrollTop = 0;
    });
    await list.evaluate((el) => {
      el.scrollTop = el.scrollHeight;
    });
    await expect(buttons).toBeInViewport();
    await expect(line.locator('a.pgn')).toBeInViewport();
  });
});

test('a drawn position says so, without stepping controls or PGN', async ({ page }) => {
  await showLine(page, '4k3/8/8/8/8/8/8/4KN2 w - - 0 1');
  const line = page.locator('.mainline .line');
  await expect(line.locator('.line-outcome')).toHaveText('Drawn: there is no winning line to follow.');
  await expect(line.locator('.step-buttons')).toHaveCount(0);
  await expect(line.locator('a.pgn')).toHaveCount(0);
  await expect(line).not.toContainText('0 / 0');
});

test('a cursed win ends in a draw by the 50-move rule and says why', async ({ page }) => {
  // KRvK is a win in 21 plies, but 90 plies have passed without a capture or pawn move.
  const cursed = '4k3/8/8/8/8/8/8/4K2R w - - 90 1';
  await showLine(page, cursed);
  const line = page.locator('.mainline .line');
  await expect(line.locator('.line-outcome')).toHaveText(
    'Draw by the 50-move rule after 10 plies: the win comes too late (cursed win for White)',
  );
  const pgn = (await line.locator('a.pgn').getAttribute('data-pgn')) ?? '';
  expect(pgn).toContain('1/2-1/2');
  expect(pgn).toContain('1. Rh7 {DTZ 20}');
});

// The fastest mate of KBNvK (65 plies) is read whole, not
// cut at move 24 with the rest in a box that does not look scrollable.
const KBNvK = '8/8/8/8/8/7B/8/Nk5K w - - 0 1';

/** Opens a position and asks for its fastest mate. */
async function showMate(page: Page, fen: string): Promise<void> {
  await openHydrated(page, fen);
  await waitForList(page, fen);
  await page.locator('button.show-mate').click();
  await expect(page.locator('.mainline .line')).toBeVisible();
}

/** Whether an element lies wholly inside its scroll box's visible part. */
async function insideItsBox(page: Page, selector: string, box: string): Promise<boolean> {
  return page.locator(selector).evaluate((el, box) => {
    const list = el.closest(box);
    if (!list) return false;
    const a = el.getBoundingClientRect();
    const b = list.getBoundingClientRect();
    return a.top >= b.top - 0.5 && a.bottom <= b.bottom + 0.5;
  }, box);
}

test.describe('the fastest mate on a desktop', () => {
  test.use({ viewport: { width: 1366, height: 900 } });
  test('shows all 33 moves at once and the end right after the last one', async ({ page }) => {
    await showMate(page, KBNvK);
    const line = page.locator('.mainline .line');
    await expect(line.locator('.line-pos')).toHaveText('0 / 65');
    const plies = line.locator('.movetext .ply');
    await expect(plies).toHaveCount(65);
    await expect(line.locator('.move-number').last()).toHaveText('33.');
    // The box holds the whole line: nothing to scroll, the last move in sight.
    const list = line.locator('.movetext');
    const { scrollHeight, clientHeight } = await list.evaluate((el) => ({
      scrollHeight: el.scrollHeight,
      clientHeight: el.clientHeight,
    }));
    expect(scrollHeight).toBeLessThanOrEqual(clientHeight + 1);
    expect(await insideItsBox(page, '.mainline .movetext .ply >> nth=-1', '.movetext')).toBe(true);
    await expect(line.locator('.line-outcome')).toHaveText('Checkmate: White wins after 65 plies');
    const last = await plies.last().boundingBox();
    const outcome = await line.locator('.line-outcome').boundingBox();
    if (!last || !outcome) throw new Error('the last move or the end line is not on screen');
    expect(outcome.y).toBeGreaterThanOrEqual(last.y + last.height - 1);
  });
});

test.describe('the fastest mate on a phone', () => {
  test.use({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  test('scrolls visibly under the board and brings each step into sight', async ({ page }) => {
    await showMate(page, KBNvK);
    const line = page.locator('.mainline .line');
    await expect(line.locator('.movetext .ply')).toHaveCount(65);
    const list = line.locator('.movetext');
    const box = await list.evaluate((el) => ({
      scrollHeight: el.scrollHeight,
      clientHeight: el.clientHeight,
      background: getComputedStyle(el).backgroundImage,
    }));
    if (box.scrollHeight > box.clientHeight + 1) {
      // Clearly scrollable: shadows at the box's edges, as a phone shows
      // its scrollbar only while scrolling.
      expect(box.background.match(/linear-gradient/g)?.length).toBe(4);
    }
    // The end line is outside the box, right under it.
    const moves = await list.boundingBox();
    const outcome = await line.locator('.line-outcome').boundingBox();
    if (!moves || !outcome) throw new Error('the moves or the end line are not on screen');
    expect(outcome.y).toBeGreaterThanOrEqual(moves.y + moves.height - 1);
    expect(outcome.y - (moves.y + moves.height)).toBeLessThan(20);
    // End: the last move, with its mate, comes into sight inside the box,
    // and the box and the buttons are on screen under the board.
    await line.locator('button.step-end').tap();
    await expect(line.locator('.line-pos')).toHaveText('65 / 65');
    await expect(line.locator('.ply.current')).toHaveText(/#$/);
    await expect.poll(() => insideItsBox(page, '.mainline .movetext .ply.current', '.movetext')).toBe(true);
    await expect(line.locator('.ply.current')).toBeInViewport({ ratio: 1 });
    await expect(page.locator('.board')).toBeInViewport({ ratio: 0.99 });
  });
});

test.describe('a line longer than its box (a low window)', () => {
  test.use({ viewport: { width: 900, height: 420 } });
  test('scrolls with shadows that say more moves are there, and keeps the step in sight', async ({ page }) => {
    await showLine(page, KBNvK);
    const line = page.locator('.mainline .line');
    const list = line.locator('.movetext');
    const sizes = await list.evaluate((el) => ({
      scrollHeight: el.scrollHeight,
      clientHeight: el.clientHeight,
      background: getComputedStyle(el).backgroundImage,
    }));
    expect(sizes.scrollHeight).toBeGreaterThan(sizes.clientHeight);
    // Shadows at the edges (a phone shows its scrollbar only while scrolling).
    expect(sizes.background).toContain('linear-gradient');
    // The end line stays outside the box, in sight under it.
    await line.locator('button.step-end').click();
    await expect(line.locator('.ply.current')).toHaveText(/#$/);
    expect(await insideItsBox(page, '.mainline .movetext .ply.current', '.movetext')).toBe(true);
    const box = await list.boundingBox();
    const outcome = await line.locator('.line-outcome').boundingBox();
    if (!box || !outcome) throw new Error('the moves or the end line are not on screen');
    expect(outcome.y).toBeGreaterThanOrEqual(box.y + box.height - 1);
  });
});

// On a phone the board stays on screen while a line is
// stepped through, and the buttons stay under the finger.
test.describe('stepping a line on a phone', () => {
  test.use({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  test('keeps the board in view and the step buttons in place', async ({ page }, testInfo) => {
    await openHydrated(page, KBNvK);
    await waitForList(page, KBNvK);
    // Tapping scrolls the button into view first, as a player scrolls to it.
    await page.locator('button.show-mate').tap();
    const line = page.locator('.mainline .line');
    await expect(line.locator('.line-pos')).toHaveText('0 / 65');
    const board = page.locator('.board');
    const forward = line.locator('button.step-forward');
    await expect(forward).toBeInViewport();
    // Big enough for a thumb (44 px where there is room, as on a phone).
    for (const button of await line.locator('.step-button').all()) {
      const size = await button.boundingBox();
      expect(size?.width).toBeGreaterThanOrEqual(44);
      expect(size?.height).toBeGreaterThanOrEqual(44);
    }
    let at: number | undefined;
    for (let i = 1; i <= 8; i++) {
      await forward.tap();
      await expect(line.locator('.line-pos')).toHaveText(`${i} / 65`);
      await expect(board).toBeInViewport({ ratio: 0.99 });
      await expect(forward).toBeInViewport();
      // The board shows the step's position.
      const fen = fenOfUrl(page.url());
      await expect(page.locator('.board [data-square]').first()).toBeVisible();
      expect(fen).not.toBe(KBNvK);
      const box = await forward.boundingBox();
      if (!box) throw new Error('the forward button is not on screen');
      if (at !== undefined) expect(Math.abs(box.y - at)).toBeLessThan(2);
      at = box.y;
      // The board covers no part of the line's buttons.
      const b = await board.boundingBox();
      if (!b) throw new Error('the board is not on screen');
      expect(box.y).toBeGreaterThanOrEqual(b.y + b.height - 1);
    }
    const path = testInfo.outputPath('phone-line.png');
    await page.screenshot({ path });
    await testInfo.attach('phone-line', { path, contentType: 'image/png' });
    // Closed, the board goes back to its place in the page.
    await line.locator('button.line-close').tap();
    await expect(page.locator('.board-wrap')).toHaveCSS('position', 'relative');
  });
});

test.describe('a line on a desktop', () => {
  test.use({ viewport: { width: 1366, height: 900 } });
  test('leaves the board where it was', async ({ page }) => {
    await openHydrated(page, KBNvK);
    await waitForList(page, KBNvK);
    const before = await page.locator('.board').boundingBox();
    await page.locator('button.show-mate').click();
    await page.locator('.mainline button.step-forward').click();
    await expect(page.locator('.mainline .line-pos')).toHaveText('1 / 65');
    const after = await page.locator('.board').boundingBox();
    expect(after).toEqual(before);
    await expect(page.locator('.board-wrap')).toHaveCSS('position', 'relative');
  });
});
