import { test, expect, type Page } from './fixtures';
import { apiAnswer, fenOfUrl, openHydrated, waitForList } from './helpers';

// The board from the keyboard, read by a screen reader.

const KRvK = '4k3/8/8/8/8/8/8/4K2R w - - 0 1';

test('the board reads as squares with their pieces, not as loose coordinates', async ({ page }) => {
  await openHydrated(page, KRvK);
  const snapshot = await page.locator('.board').ariaSnapshot();
  expect(snapshot).toContain('group "Board, White at the bottom');
  expect(snapshot).toContain('button "e1, white king"');
  expect(snapshot).toContain('button "h1, white rook"');
  expect(snapshot).toContain('button "e8, black king"');
  expect(snapshot).not.toMatch(/text: "?8"?\s*\n\s*- text: "?7/);
});

test('a move from the keyboard: arrows to the piece, Enter, arrows to the target, Enter', async ({ page }) => {
  await openHydrated(page, KRvK);
  await waitForList(page, KRvK);
  // The side to move's king holds the board's one tab stop.
  await page.locator('.board [data-square="e1"]').focus();
  for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowRight');
  await expect(page.locator('.board [data-square="h1"]')).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(page.locator('.board [data-square="h1"]')).toHaveClass(/selected/);
  for (let i = 0; i < 6; i++) await page.keyboard.press('ArrowUp');
  await expect(page.locator('.board [data-square="h7"]')).toHaveAttribute('aria-label', /a move goes here/);
  await page.keyboard.press('Enter');
  await expect.poll(() => fenOfUrl(page.url())).toBe('4k3/7R/8/8/8/8/8/4K3 b - - 1 1');
});

test('the promotion picker takes the focus, shows each result, and Esc cancels it', async ({ page }) => {
  const fen = '8/4P3/8/8/8/2k5/8/4K3 w - - 0 1';
  await openHydrated(page, fen);
  await waitForList(page, fen);
  await page.locator('.board [data-square="e1"]').focus();
  await page.locator('.board [data-square="e7"]').click();
  await page.locator('.board [data-square="e8"]').click();
  const dialog = page.locator('.promotion');
  await expect(dialog).toBeVisible();
  await expect(dialog.locator('button.choice').first()).toBeFocused();
  await expect(dialog.locator('button.choice[data-role="q"]')).toHaveAttribute('aria-label', /queen: win/);
  // Over the e-file (the fifth column), from the top edge.
  const board = await page.locator('.board').boundingBox();
  const box = await dialog.boundingBox();
  if (!board || !box) throw new Error('board or dialog not on screen');
  expect(Math.abs(box.x - (board.x + board.width * 0.5))).toBeLessThan(3);
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
  expect(fenOfUrl(page.url())).toBe(fen);
});

test('the focus ring on moves stands out (at least 3:1)', async ({ page }) => {
  await openHydrated(page, KRvK);
  await waitForList(page, KRvK);
  const first = page.locator('.move-list a.move').first();
  await first.focus();
  await page.keyboard.press('ArrowDown');
  const second = page.locator('.move-list a.move').nth(1);
  await expect(second).toBeFocused();
  const ratio = await second.evaluate((el) => {
    const rgb = (c: string) => (c.match(/[\d.]+/g) ?? ['0', '0', '0']).slice(0, 3).map(Number);
    const lum = (c: number[]) => {
      const [r, g, b] = c.map((v) => {
        const s = v / 255;
        return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
      });
      return 0.2126 * r + 0.7152 * g + 0.0722 * b;
    };
    const ring = lum(rgb(getComputedStyle(el).outlineColor));
    const back = lum(rgb(getComputedStyle(el).backgroundColor));
    const [hi, lo] = ring > back ? [ring, back] : [back, ring];
    return (hi + 0.05) / (lo + 0.05);
  });
  expect(ratio).toBeGreaterThanOrEqual(3);
});

/** Tab presses from the top of the page until `selector` has the focus. */
async function tabsUntil(page: Page, selector: string): Promise<number> {
  for (let i = 1; i <= 60; i++) {
    await page.keyboard.press('Tab');
    if (await page.locator(selector).evaluate((el) => el === document.activeElement)) return i;
  }
  return Infinity;
}

test('the FEN box is a few tab stops away: the board and the list are one each', async ({ page }) => {
  await openHydrated(page, KRvK);
  await waitForList(page, KRvK);
  const tabs = await tabsUntil(page, '#fen-input');
  expect(tabs).toBeLessThanOrEqual(14);
});

test('Esc leaves the editor without changes', async ({ page }) => {
  await openHydrated(page, KRvK);
  await page.keyboard.press('e');
  await expect(page.locator('.editor')).toBeVisible();
  await page.locator('.palette-piece[data-piece="wQ"]').click();
  await page.locator('.board.editing [data-square="a8"]').click();
  await page.keyboard.press('Escape');
  await expect(page.locator('.editor')).toBeHidden();
  expect(fenOfUrl(page.url())).toBe(KRvK);
});

test('the editor works from the keyboard: Enter places the chosen piece', async ({ page }) => {
  await openHydrated(page, KRvK);
  await page.keyboard.press('e');
  await page.locator('.palette-piece[data-piece="wN"]').click();
  await page.locator('.board.editing [data-square="a1"]').focus();
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('Enter');
  await expect(page.locator('.board.editing [data-square="b1"]')).toHaveAttribute('aria-label', 'b1, white knight');
});

// The keys the step buttons advertise step through
// the line on show; Space plays the best move, as on syzygy-tables.info.

/** Space and a line's keys load once the browser is idle after hydration. */
const keysReady = (page: Page) => expect(page.locator('html[data-keys="ready"]')).toHaveCount(1);

test('Space plays the best move, the first of the list, for either side', async ({ page, request }) => {
  await openHydrated(page, KRvK);
  await waitForList(page, KRvK);
  await keysReady(page);
  let fen = KRvK;
  for (let i = 0; i < 2; i++) {
    const api = await apiAnswer(request, fen);
    const first = page.locator('.move-list a.move').first();
    await expect(first).toHaveAttribute('data-uci', api.moves[0].uci);
    const next = fenOfUrl(new URL((await first.getAttribute('href')) ?? '', page.url()).href);
    await page.keyboard.press('Space');
    await expect.poll(() => fenOfUrl(page.url())).toBe(next);
    await waitForList(page, next);
    fen = next;
  }
  // Space on a focused button is the button's: the flip button flips, no move.
  const firstSquare = page.locator('.board [data-square]').first();
  await expect(firstSquare).toHaveAttribute('data-square', 'a8');
  await page.locator('button.flip').focus();
  await page.keyboard.press('Space');
  await expect(firstSquare).toHaveAttribute('data-square', 'h1');
  expect(fenOfUrl(page.url())).toBe(fen);
});

test('with a line on show, → and End step forward through it, ← and Home back', async ({ page }) => {
  const KQvK = '4k3/8/8/8/8/8/8/3QK3 w - - 0 1';
  await openHydrated(page, KQvK);
  await waitForList(page, KQvK);
  await keysReady(page);
  await page.locator('button.show-line').click();
  const line = page.locator('.mainline .line');
  const pos = line.locator('.line-pos');
  await expect(pos).toHaveText(/^0 \/ \d+$/);
  const n = Number(((await pos.textContent()) ?? '').split('/')[1]);
  expect(n).toBeGreaterThan(4);
  // The buttons say which keys they answer to.
  await expect(line.locator('button.step-forward')).toHaveAttribute('title', /→/);
  await expect(line.locator('button.step-end')).toHaveAttribute('title', /End/);
  await page.keyboard.press('ArrowRight');
  await expect(pos).toHaveText(`1 / ${n}`);
  await page.keyboard.press('ArrowRight');
  await expect(pos).toHaveText(`2 / ${n}`);
  await page.keyboard.press('End');
  await expect(pos).toHaveText(`${n} / ${n}`);
  await expect(page.locator('.status')).toContainText('Checkmate');
  // At the end, → stays.
  await page.keyboard.press('ArrowRight');
  await expect(pos).toHaveText(`${n} / ${n}`);
  await page.keyboard.press('ArrowLeft');
  await expect(pos).toHaveText(`${n - 1} / ${n}`);
  await page.keyboard.press('Home');
  await expect(pos).toHaveText(`0 / ${n}`);
  expect(fenOfUrl(page.url())).toBe(KQvK);
  await page.keyboard.press('ArrowDown');
  await expect(pos).toHaveText(`${n} / ${n}`);
});

test('the help lists every key', async ({ page }) => {
  await openHydrated(page, KRvK);
  await page.locator('.help summary').first().click();
  const keys = page.locator('.help dd.keys');
  await expect(keys).toBeVisible();
  for (const key of ['Space', '←', '→', '↑', '↓', 'Home', 'End', 'f', 'e', 'Enter', 'Esc']) {
    await expect(keys.locator('kbd', { hasText: new RegExp(`^${key}$`) })).toHaveCount(1);
  }
  await expect(keys).toContainText('best move');
});
