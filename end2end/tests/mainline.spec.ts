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
  test.use({ viewport: { width: 1280, height: 720 } });
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
