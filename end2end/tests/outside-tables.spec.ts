import { test, expect, type Page } from './fixtures';
import { apiAnswer, openHydrated } from './helpers';

// Positions outside the installed tables. The
// server of these tests carries the 3- and 4-piece tables only, so any
// 5-piece position is "not installed"; its captures into 4 pieces are known.

// KRPvKR, White to move: after 1.Rd4 several of Black's rook moves hang
// the rook (Ra4, Rd5, Ra1+, Ra2: known to lose), the others are unknown.
const KRPvKR = '7k/8/8/r7/8/8/4P3/1K1R4 w - - 0 1';
const PLAYER_MOVE = 'd1d4';
const AFTER_RD4 = '7k/8/8/r7/3R4/8/4P3/1K6 b - - 1 1';

// After 1...Ra4: White wins by taking the rook; every other move is unknown.
const HANGING = '7k/8/8/8/r2R4/8/4P3/1K6 w - - 2 2';

const LOSING = new Set(['win', 'syzygy-win', 'maybe-win']);

function practiceUrl(fen: string, params: string): string {
  return `/practice?fen=${fen.replace(/ /g, '_')}&${params}`;
}

async function openPractice(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await expect(page.locator('.practice')).toHaveAttribute('data-hydrated', 'true');
}

test('before the side choice the page says the tablebase cannot judge the position', async ({ page }) => {
  await openPractice(page, practiceUrl(KRPvKR, 'seed=1'));
  const outside = page.locator('.practice-outside');
  await expect(outside).toContainText('KRPvKR not installed');
  await expect(outside).toContainText('The tablebase cannot judge this position');
  await expect(page.locator('.practice-sides a.play-side')).toHaveCount(2);
});

test('outside the tables the tablebase never plays a move known to lose while another is unknown', async ({
  page,
  request,
}) => {
  const answer = await apiAnswer(request, AFTER_RD4);
  const losing = answer.moves.filter((m) => LOSING.has(m.category)).map((m) => m.uci);
  const unknown = answer.moves.filter((m) => m.category === 'unknown').map((m) => m.uci);
  // The position is what the test needs: both kinds of move.
  expect(losing.length, `losing moves in ${JSON.stringify(answer.moves)}`).toBeGreaterThan(1);
  expect(unknown.length).toBeGreaterThan(1);
  const replies = new Set<string>();
  for (const seed of [1, 2, 3, 4, 5, 6]) {
    await openPractice(page, practiceUrl(KRPvKR, `side=white&seed=${seed}&moves=${PLAYER_MOVE}`));
    const panel = page.locator('.practice-panel');
    await expect(panel).toHaveAttribute('data-state', /^(player|over)$/);
    const moves = (new URL(page.url()).searchParams.get('moves') ?? '').split('_').filter(Boolean);
    expect(moves.length).toBe(2);
    const reply = moves[1];
    expect(losing, `seed ${seed}: the tablebase played ${reply}, a move the API lists as losing`).not.toContain(reply);
    expect(unknown).toContain(reply);
    replies.add(reply);
    // It says it is guessing, and the player's move is not judged.
    const status = page.locator('.practice-status');
    await expect(status).toContainText('a guess: the tables do not know this position');
    await expect(status).toContainText('not judged');
    await expect(page.locator('.practice-record .mark.unjudged')).toContainText('not judged');
  }
  // The hint names no unknown move "best".
  await page.locator('button.hint').click();
  await expect(page.locator('.practice-hint')).toContainText('Unknown');
  await page.locator('button.hint').click();
  await expect(page.locator('.hint-best')).toContainText('Best: not known');
  console.log(`KRPvKR after Rd4: replies ${[...replies].join(', ')}; losing moves avoided: ${losing.join(', ')}`);
});

test('the move list says once which table is missing, and the lines are disabled saying why', async ({ page }) => {
  await openHydrated(page, KRPvKR);
  await expect(page.locator('.move-list a.move').first()).toBeVisible();
  const unknownMoves = page.locator('.move-list a.move[data-category="unknown"]');
  expect(await unknownMoves.count()).toBeGreaterThan(2);
  // Once above the list (and in the verdict), not under every unknown move.
  await expect(page.locator('.results .status')).toContainText('KRPvKR not installed');
  await expect(page.locator('.missing-tables summary')).toHaveText('Not installed: KRPvKR');
  await expect(page.locator('.move-list .why', { hasText: 'KRPvKR not installed' })).toHaveCount(0);
  // The tooltip of each move still says why.
  await expect(unknownMoves.first()).toHaveAttribute('title', /KRPvKR not installed/);
  // Show line and Fastest mate cannot fail on a missing table: disabled, with the reason.
  for (const button of ['button.show-line', 'button.show-mate']) {
    await expect(page.locator(button)).toBeDisabled();
    await expect(page.locator(button)).toHaveAttribute('title', /KRPvKR not installed/);
  }
  // A position the tables know (White takes the hanging rook) whose other
  // moves are unknown: the reason once above the list.
  await openHydrated(page, HANGING);
  await expect(page.locator('.results .status')).toContainText('White to move wins');
  await expect(page.locator('.missing-tables summary')).toHaveText('Not installed: KRPvKR');
  await expect(page.locator('.move-list .why', { hasText: 'KRPvKR not installed' })).toHaveCount(0);
  // A position in the tables: both enabled again.
  await openHydrated(page, '4k3/8/8/8/8/8/8/4K2R w - - 0 1');
  await expect(page.locator('button.show-line')).toBeEnabled();
  await expect(page.locator('button.show-mate')).toBeEnabled();
});
