import { test, expect, type Page } from './fixtures';
import { Chess } from 'chess.js';
import { readFileSync } from 'node:fs';

// Reviewing a game: a PGN pasted, picked or dropped on /review, every
// endgame move marked by the tablebase, the moment the result changed
// hands, the chart, a move opening its position in the explorer, and the
// annotated PGN to take away. The page is written by the server: it works
// without JavaScript too.

/** KQvKR: 1...Kd7 resists less long than Ke7, 2.Qa5?? gives the queen away. */
const KQVKR = `[Event "Club"]
[White "Ann"]
[Black "Bob"]
[Result "0-1"]
[SetUp "1"]
[FEN "r3k3/8/8/8/8/8/8/3QK3 w - - 0 1"]

1. Qh5+ Kd7 2. Qa5 Rxa5 3. Kd2 0-1
`;

/** KRvK: 1.Rh6 is slower than Rh7, 1...Kd7 slower than Kf7; the rest best. */
const KRVK = `[White "Cy"]
[Black "Di"]
[SetUp "1"]
[FEN "4k3/8/8/8/8/8/8/4K2R w - - 0 1"]

1. Rh6 Kd7 2. Kd2 Ke7 3. Kc3 *
`;

async function review(page: Page, pgn: string): Promise<void> {
  await page.goto('/review');
  await page.locator('#review-pgn').fill(pgn);
  await page.getByRole('button', { name: 'Review' }).click();
  await expect(page.locator('.review-moves')).toBeVisible();
}

const marks = (page: Page) =>
  page.locator('.review-ply').evaluateAll((plies) => plies.map((p) => p.getAttribute('data-mark')));

test('a pasted KQvKR game shows the win thrown away, and the annotated PGN', async ({
  page,
  request,
}) => {
  await review(page, KQVKR);
  expect(await marks(page)).toEqual(['best', 'slower', 'mistake', 'best', 'best']);
  // The API says the same of every move.
  const api = await request.post('/review', {
    data: KQVKR,
    headers: { 'Content-Type': 'application/x-chess-pgn' },
  });
  expect(api.ok()).toBe(true);
  const answer = await api.json();
  expect(answer.plies.map((p: { judgement: { mark: string } }) => p.judgement.mark.toLowerCase())).toEqual(
    await marks(page),
  );
  expect(answer.moments.map((m: { words: string }) => m.words)).toEqual(
    await page.locator('.review-moments li').allTextContents(),
  );
  await expect(page.locator('.review-moments li')).toHaveCount(1);
  await expect(page.locator('.review-moments li')).toContainText(
    /^2\.Qa5\?\? threw the win away: now Black mates in \d+; 2\.\w+\+? kept the win$/,
  );
  await expect(page.locator('#ply-1')).toContainText('was mated in');
  await expect(page.locator('#ply-1')).toContainText('best Ke7');
  await expect(page.locator('.review-counts')).toContainText('White');
  // The chart is the server's SVG.
  const chart = page.locator('img.review-chart');
  await expect(chart).toBeVisible();
  expect(await chart.evaluate((img: HTMLImageElement) => img.naturalWidth)).toBeGreaterThan(0);

  // The annotated PGN: NAGs and comments, and chess.js reads it back.
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.locator('#review-download').click(),
  ]);
  const pgn = readFileSync(await download.path(), 'utf8');
  expect(pgn).toContain('[FEN "r3k3/8/8/8/8/8/8/3QK3 w - - 0 1"]');
  expect(pgn).toContain('[SetUp "1"]');
  const movetext = pgn.replace(/\n/g, ' ');
  expect(movetext).toMatch(/2\. Qa5 \$4 \{mistake: win thrown away: now mated in \d+/);
  expect(movetext).toContain('Kd7 $2 {slower: was mated in 11, now mated in 10; best Ke7}');
  const chess = new Chess();
  chess.loadPgn(pgn);
  expect(chess.history()).toEqual(['Qh5+', 'Kd7', 'Qa5', 'Rxa5', 'Kd2']);
  expect(chess.getComments().length).toBe(5);

  // A move opens the position before it in the explorer, with every move.
  await page.locator('#ply-2 a.review-move').click();
  await expect(page).toHaveURL(/\/\?fen=r7\/3k4\/8\/7Q\/8\/8\/8\/4K3_w_-_-_2_2$/);
  await expect(page.locator('.move-list a.move').first()).toBeVisible();
});

test('a KRvK game picked as a file, then dropped, shows its slower moves', async ({ page }) => {
  await page.goto('/review');
  await page.locator('#review-file').setInputFiles({
    name: 'krvk.pgn',
    mimeType: 'application/x-chess-pgn',
    buffer: Buffer.from(KRVK),
  });
  await expect(page.locator('#review-pgn')).toHaveValue(/1\. Rh6 Kd7/);
  await page.getByRole('button', { name: 'Review' }).click();
  expect(await marks(page)).toEqual(['slower', 'slower', 'best', 'best', 'best']);
  await expect(page.locator('#ply-0')).toContainText('was mate in 11, now mate in 14; best Rh7');
  await expect(page.locator('.review-moments-none')).toBeVisible();
  // "Play it out from here" opens practice on the position before the move.
  await expect(page.locator('#ply-0 a.review-practice')).toHaveAttribute(
    'href',
    '/practice?fen=4k3/8/8/8/8/8/8/4K2R_w_-_-_0_1',
  );

  // Dropped on the box instead.
  await page.goto('/review');
  const data = await page.evaluateHandle((text) => {
    const transfer = new DataTransfer();
    transfer.items.add(new File([text], 'krvk.pgn', { type: 'application/x-chess-pgn' }));
    return transfer;
  }, KRVK);
  await page.dispatchEvent('#review-pgn', 'drop', { dataTransfer: data });
  await expect(page.locator('#review-pgn')).toHaveValue(/1\. Rh6 Kd7/);
  await page.getByRole('button', { name: 'Review' }).click();
  expect(await marks(page)).toEqual(['slower', 'slower', 'best', 'best', 'best']);

  // Its link reopens the same review.
  await page.locator('#review-link').click();
  await expect(page).toHaveURL(/\/review\?fen=.*&moves=h1h6_e8d7_e1d2_d7e7_d2c3$/);
  expect(await marks(page)).toEqual(['slower', 'slower', 'best', 'best', 'best']);
});

test('of several games, the one picked is reviewed', async ({ page }) => {
  await review(page, `${KRVK}\n${KQVKR}`);
  await expect(page.locator('.review-summary h3')).toHaveText('Cy – Di');
  await page.locator('#review-game').selectOption('2');
  await expect(page.locator('.review-summary h3')).toHaveText('Ann – Bob, Club (0-1)');
  await expect(page.locator('.review-moments li')).toHaveCount(1);
});

test('a PGN with an illegal move says which, and reviews the moves before it', async ({ page }) => {
  await review(page, '[FEN "4k3/8/8/8/8/8/8/4K2R w - - 0 1"]\n\n1. Rh7 Kd8 2. Ke5 *');
  await expect(page.locator('.review-error')).toContainText('game 1, move 2.Ke5: not a legal move');
  await expect(page.locator('.review-ply')).toHaveCount(2);
});

test.describe('without JavaScript', () => {
  test.use({ javaScriptEnabled: false });

  test('the form posts and the server writes the review', async ({ page }) => {
    await review(page, KQVKR);
    expect(await marks(page)).toEqual(['best', 'slower', 'mistake', 'best', 'best']);
    await expect(page.locator('.review-moments li')).toContainText('threw the win away');
  });

  test('a finished practice game links its review', async ({ page }) => {
    await page.goto('/practice?fen=k7/8/1K6/8/8/8/7Q/8_w_-_-_0_1&side=white&seed=1&moves=h2h8');
    await page.getByRole('link', { name: 'Review both sides' }).click();
    await expect(page).toHaveURL(/\/review\?fen=k7\/8\/1K6\/8\/8\/8\/7Q\/8_w_-_-_0_1&moves=h2h8$/);
    expect(await marks(page)).toEqual(['best']);
    await expect(page.locator('#ply-0')).toContainText('mate in 1');
  });
});

test.describe('on a phone', () => {
  test.use({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });

  test('the review fits the width and its links are large enough to tap', async ({ page }) => {
    await review(page, KQVKR);
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    const wide = await page.evaluate(() =>
      [...document.querySelectorAll('body *')]
        .filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5)
        .map((e) => `${e.tagName}.${e.className}`),
    );
    expect(wide).toEqual([]);
    expect(overflow).toBeLessThanOrEqual(0);
    const box = await page.locator('#ply-2 a.review-move').boundingBox();
    expect(box?.height ?? 0).toBeGreaterThanOrEqual(44);
    await expect(page.locator('img.review-chart')).toBeVisible();
  });
});
