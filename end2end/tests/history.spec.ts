import { test, expect, type Page } from './fixtures';
import { apiAnswer, clickSquare, fenOfUrl, openHydrated, waitForList } from './helpers';

const KRvK = '4k3/8/8/8/8/8/8/4K2R w - - 0 1';
const afterRh7 = '4k3/7R/8/8/8/8/8/4K3 b - - 1 1';
const afterKd8 = '3k4/7R/8/8/8/8/8/4K3 w - - 2 2';
const KQvK = '4k3/8/8/8/8/8/8/3QK3 w - - 0 1';

/** Plays Rh7 on the board and Kd8 from the move list: one move each way. */
async function playRh7Kd8(page: Page): Promise<void> {
  await openHydrated(page, KRvK);
  await waitForList(page, KRvK);
  await clickSquare(page, 'h1');
  await clickSquare(page, 'h7');
  await expect.poll(() => fenOfUrl(page.url())).toBe(afterRh7);
  await waitForList(page, afterRh7);
  await page.locator('.move-list .move[data-san="Kd8"]').click();
  await expect.poll(() => fenOfUrl(page.url())).toBe(afterKd8);
  await waitForList(page, afterKd8);
}

test('the history panel numbers the moves played on the board and in the list', async ({ page }) => {
  await openHydrated(page, KRvK);
  const panel = page.locator('.history');
  await expect(panel).toContainText('Play a move on the board or in the list; the moves appear here.');
  await expect(panel.locator('.step-buttons')).toHaveCount(0);
  await playRh7Kd8(page);
  await expect(panel.locator('.movetext')).toHaveText('1. Rh7 Kd8');
  await expect(panel.locator('.ply[aria-current]')).toHaveText('Kd8');
  await expect(panel.locator('.history-empty')).toHaveCount(0);
  // Each move is a link to its position.
  await panel.locator('.ply', { hasText: 'Rh7' }).click();
  await expect.poll(() => fenOfUrl(page.url())).toBe(afterRh7);
  await expect(panel.locator('.ply[aria-current]')).toHaveText('Rh7');
  await expect(panel.locator('.movetext')).toHaveText('1. Rh7 Kd8');
});

/**
 * Starts recording which elements of the history's moves get an attribute
 * written; the returned function stops and gives each as "SAN attribute".
 */
async function watchHistoryWrites(page: Page): Promise<() => Promise<string[]>> {
  await page.evaluate(() => {
    const writes: string[] = [];
    const observer = new MutationObserver((records) => {
      for (const r of records) writes.push(`${(r.target as Element).textContent?.trim()} ${r.attributeName}`);
    });
    observer.observe(document.querySelector('.history .movetext')!, { subtree: true, attributes: true });
    (window as unknown as { stopWrites: () => string[] }).stopWrites = () => {
      observer.disconnect();
      return writes;
    };
  });
  return () => page.evaluate(() => (window as unknown as { stopWrites: () => string[] }).stopWrites());
}

test('a move played or stepped to writes only the links whose mark changes', async ({ page }) => {
  await playRh7Kd8(page);
  const panel = page.locator('.history');
  // Drawing the whole line again wrote every link's class and href.
  let stop = await watchHistoryWrites(page);
  await page.locator('.move-list .move[data-san="Rh8+"]').click();
  await expect(panel.locator('.movetext')).toHaveText('1. Rh7 Kd8 2. Rh8+');
  await expect(panel.locator('.ply[aria-current]')).toHaveText('Rh8+');
  expect((await stop()).sort()).toEqual(['Kd8 aria-current', 'Kd8 class']);
  stop = await watchHistoryWrites(page);
  await page.locator('body').press('ArrowLeft');
  await expect(panel.locator('.ply[aria-current]')).toHaveText('Kd8');
  expect((await stop()).sort()).toEqual(['Kd8 aria-current', 'Kd8 class', 'Rh8+ aria-current', 'Rh8+ class']);
  await expect(panel.locator('.ply.current')).toHaveCount(1);
});

test('move numbers follow the FEN, with "37..." when Black starts', async ({ page }) => {
  const start = '4k3/8/8/8/8/8/8/4K2R b - - 0 37';
  await openHydrated(page, start);
  await waitForList(page, start);
  await page.locator('.move-list .move[data-san="Kd7"]').click();
  const next = '8/3k4/8/8/8/8/8/4K2R w - - 1 38';
  await expect.poll(() => fenOfUrl(page.url())).toBe(next);
  await waitForList(page, next);
  await clickSquare(page, 'h1');
  await clickSquare(page, 'h7');
  await expect(page.locator('.history .movetext')).toHaveText('37... Kd7 38. Rh7+');
});

test('← and → step inside the page without new history entries; ← at the start stays', async ({ page }) => {
  await playRh7Kd8(page);
  const site = new URL(page.url()).origin;
  const entries = await page.evaluate(() => window.history.length);
  const body = page.locator('body');
  await body.press('ArrowLeft');
  await expect.poll(() => fenOfUrl(page.url())).toBe(afterRh7);
  await expect(page.locator('.history .ply[aria-current]')).toHaveText('Rh7');
  await body.press('ArrowLeft');
  await expect.poll(() => fenOfUrl(page.url())).toBe(KRvK);
  await expect(page.locator('.history .ply[aria-current]')).toHaveCount(0);
  // At the start ← does nothing: the page stays, never the previous site.
  await body.press('ArrowLeft');
  await page.waitForTimeout(300);
  expect(new URL(page.url()).origin).toBe(site);
  expect(fenOfUrl(page.url())).toBe(KRvK);
  await expect(page.locator('.explorer')).toHaveAttribute('data-hydrated', 'true');

  await body.press('ArrowRight');
  await expect.poll(() => fenOfUrl(page.url())).toBe(afterRh7);
  await body.press('End');
  await expect.poll(() => fenOfUrl(page.url())).toBe(afterKd8);
  await body.press('Home');
  await expect.poll(() => fenOfUrl(page.url())).toBe(KRvK);
  // The focus is still on the list's move (Kd8 was clicked there), where
  // ↑/↓ walk the moves; as a shortcut ↓ needs the focus elsewhere.
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  await body.press('ArrowDown');
  await expect.poll(() => fenOfUrl(page.url())).toBe(afterKd8);
  // The buttons step too.
  await page.locator('.history button.step-back').click();
  await expect.poll(() => fenOfUrl(page.url())).toBe(afterRh7);
  await page.locator('.history button.step-start').click();
  await expect.poll(() => fenOfUrl(page.url())).toBe(KRvK);
  await expect(page.locator('.history button.step-back')).toBeDisabled();
  await page.locator('.history button.step-end').click();
  await expect.poll(() => fenOfUrl(page.url())).toBe(afterKd8);
  await expect(page.locator('.history button.step-forward')).toBeDisabled();
  expect(await page.evaluate(() => window.history.length)).toBe(entries);
  // Stepping kept the line whole.
  await expect(page.locator('.history .movetext')).toHaveText('1. Rh7 Kd8');
  // The browser's back button still walks the positions visited.
  await page.goBack();
  await expect.poll(() => fenOfUrl(page.url())).toBe(afterRh7);
  await expect(page.locator('.history .ply[aria-current]')).toHaveText('Rh7');
});

test('a move played after stepping back replaces the rest of the line', async ({ page }) => {
  await playRh7Kd8(page);
  await page.locator('body').press('ArrowLeft');
  await expect.poll(() => fenOfUrl(page.url())).toBe(afterRh7);
  await waitForList(page, afterRh7);
  await page.locator('.move-list .move[data-san="Kf8"]').click();
  await expect(page.locator('.history .movetext')).toHaveText('1. Rh7 Kf8');
  await expect(page.locator('.history .ply[aria-current]')).toHaveText('Kf8');
});

test('after loading a FEN in the FEN box, ← does not jump back: a new line starts', async ({ page }) => {
  await playRh7Kd8(page);
  const input = page.locator('#fen-input');
  await input.fill(KQvK);
  await input.press('Enter');
  await expect.poll(() => fenOfUrl(page.url())).toBe(KQvK);
  await expect(page.locator('.history')).toContainText('the moves appear here');
  await page.locator('body').press('ArrowLeft');
  await page.waitForTimeout(300);
  expect(fenOfUrl(page.url())).toBe(KQvK);
});

test('Copy PGN: the start FEN and a DTZ comment after each move', async ({ page, context, request }) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await playRh7Kd8(page);
  const rh7 = await apiAnswer(request, afterRh7);
  const kd8 = await apiAnswer(request, afterKd8);
  const copy = page.locator('.history button.copy-pgn');
  await copy.click();
  await expect(copy).toHaveText('Copied');
  const pgn = (await copy.getAttribute('data-pgn')) ?? '';
  expect(pgn).toContain('[SetUp "1"]');
  expect(pgn).toContain(`[FEN "${KRvK}"]`);
  expect(pgn).toContain(`1. Rh7 {DTZ ${Math.abs(rh7.dtz ?? 0)}} 1... Kd8 {DTZ ${Math.abs(kd8.dtz ?? 0)}} *`);
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(pgn);
});

test('stepping through the mainline extends the history; its end brings the whole line', async ({ page }) => {
  await openHydrated(page, KQvK);
  await waitForList(page, KQvK);
  await page.locator('button.show-line').click();
  const line = page.locator('.mainline .line');
  await expect(line.locator('.ply').first()).toBeVisible();
  const plies = await line.locator('.ply').count();
  expect(plies).toBeGreaterThan(2);
  const next = line.locator('button.step-forward');
  await next.click();
  await expect(line.locator('.line-pos')).toHaveText(`1 / ${plies}`);
  await next.click();
  await expect(line.locator('.line-pos')).toHaveText(`2 / ${plies}`);
  const history = page.locator('.history');
  await expect(history.locator('.ply')).toHaveCount(2);
  await line.locator('button.step-end').click();
  await expect(line.locator('.line-pos')).toHaveText(`${plies} / ${plies}`);
  await expect(history.locator('.ply')).toHaveCount(plies);
  const mainlineText = (await line.locator('.movetext').innerText()).replace(/\s+/g, ' ');
  const historyText = (await history.locator('.movetext').innerText()).replace(/\s+/g, ' ');
  expect(historyText).toBe(mainlineText);
  // ← steps back through the same line, and the mainline follows.
  await page.locator('body').press('ArrowLeft');
  await expect(line.locator('.line-pos')).toHaveText(`${plies - 1} / ${plies}`);
});

test('the moves played stay in the URL: a reload and a shared link keep them, and stepping back works', async ({ page, browser }) => {
  await openHydrated(page, KRvK);
  await waitForList(page, KRvK);
  await page.locator('.move-list .move[data-san="Rh7"]').click();
  await waitForList(page, afterRh7);
  await page.locator('.move-list .move[data-san="Kd8"]').click();
  await waitForList(page, afterKd8);
  const afterRa7 = '3k4/R7/8/8/8/8/8/4K3 b - - 3 2';
  await page.locator('.move-list .move[data-san="Ra7"]').click();
  await waitForList(page, afterRa7);
  const panel = page.locator('.history');
  await expect(panel.locator('.movetext')).toHaveText('1. Rh7 Kd8 2. Ra7');
  await expect.poll(() => new URL(page.url()).searchParams.get('moves')).toBe('h1h7_e8d8_h7a7');

  await page.reload();
  await expect(page.locator('.explorer')).toHaveAttribute('data-hydrated', 'true');
  await expect(panel.locator('.movetext')).toHaveText('1. Rh7 Kd8 2. Ra7');
  await expect(panel.locator('.ply[aria-current]')).toHaveText('Ra7');
  await panel.locator('.step-button.step-back').click();
  await expect.poll(() => fenOfUrl(page.url())).toBe(afterKd8);
  await expect(panel.locator('.ply[aria-current]')).toHaveText('Kd8');
  // Stepped back, the URL still holds the whole line: forward works after a reload too.
  await page.reload();
  await expect(page.locator('.explorer')).toHaveAttribute('data-hydrated', 'true');
  await expect(panel.locator('.movetext')).toHaveText('1. Rh7 Kd8 2. Ra7');
  await expect(panel.locator('.ply[aria-current]')).toHaveText('Kd8');
  await panel.locator('.step-button.step-forward').click();
  await expect.poll(() => fenOfUrl(page.url())).toBe(afterRa7);

  // The browser's back button walks the moves and keeps the line.
  await page.goBack();
  await expect.poll(() => fenOfUrl(page.url())).not.toBe(afterRa7);
  await expect(panel.locator('.movetext')).toHaveText('1. Rh7 Kd8 2. Ra7');

  // A shared link opens with the moves in a fresh tab.
  const shared = page.url();
  const other = await browser.newPage();
  await other.goto(shared);
  await expect(other.locator('.explorer')).toHaveAttribute('data-hydrated', 'true');
  await expect(other.locator('.history .movetext')).toHaveText('1. Rh7 Kd8 2. Ra7');
  await other.close();
});
