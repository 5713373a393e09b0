import { test, expect, type Page } from './fixtures';
import { Chess } from 'chess.js';
import { apiAnswer, clickSquare, openHydrated } from './helpers';

// Playing a position out against the tablebase: the page plays
// the other side from the API's answers, marks each of the player's moves
// and keeps the game in its URL.

const KRvK = '4k3/8/8/8/8/8/8/4K2R w - - 0 1';
const KBNvK = '8/8/8/8/8/7B/8/Nk5K w - - 0 1';
const KQvKR = '8/8/8/3k4/8/8/5r1Q/K7 w - - 0 1';
const KRvKR = 'k7/8/8/3r4/8/8/8/4K2R w - - 0 1';

function practiceUrl(fen: string, side: string, moves: string[] = []): string {
  const tail = moves.length ? `&moves=${moves.join('_')}` : '';
  return `/practice?fen=${fen.replace(/ /g, '_')}&side=${side}&seed=1${tail}`;
}

const panel = (page: Page) => page.locator('.practice-panel');

// A hydration mismatch or a panic shows as a page error: none may happen.
const pageErrors = new WeakMap<Page, string[]>();
test.beforeEach(({ page }) => {
  const errors: string[] = [];
  pageErrors.set(page, errors);
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
});
test.afterEach(({ page }) => {
  expect(pageErrors.get(page) ?? []).toEqual([]);
});

/** Opens a practice game and waits for the WASM to take over. */
async function openPractice(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await expect(page.locator('.practice')).toHaveAttribute('data-hydrated', 'true');
}

/** Waits until it is the player's turn (or the game is over); the FEN then. */
async function playersTurn(page: Page): Promise<{ state: string; fen: string }> {
  await expect(panel(page)).toHaveAttribute('data-state', /^(player|over)$/);
  return {
    state: (await panel(page).getAttribute('data-state')) ?? '',
    fen: (await panel(page).getAttribute('data-fen')) ?? '',
  };
}

/** Plays a UCI move on the board by clicking its squares. */
async function play(page: Page, uci: string): Promise<void> {
  await clickSquare(page, uci.slice(0, 2));
  await clickSquare(page, uci.slice(2, 4));
}

/** The plies in the page's URL. */
function urlMoves(page: Page): string[] {
  return (new URL(page.url()).searchParams.get('moves') ?? '').split('_').filter(Boolean);
}

/** Counts the page's API requests from now on. */
function countApiRequests(page: Page): string[] {
  const asked: string[] = [];
  page.on('request', (r) => {
    if (/^\/(standard|atomic|antichess)$/.test(new URL(r.url()).pathname)) asked.push(r.url());
  });
  return asked;
}

/**
 * A game of `plies` from `fen` that goes on: no capture, no mate or
 * stalemate, no position a third time; the same moves on every run.
 */
function longGame(fen: string, plies: number): string[] {
  const chess = new Chess(fen);
  const key = () => chess.fen().split(' ').slice(0, 4).join(' ');
  const seen = new Map<string, number>([[key(), 1]]);
  const uci: string[] = [];
  for (let i = 0; i < plies; i++) {
    const quiet = chess.moves({ verbose: true }).filter((m) => !m.captured);
    const next = quiet
      .map((_, k) => quiet[(k + i * 7) % quiet.length])
      .find((m) => {
        chess.move(m);
        const goesOn = !chess.isGameOver() && (seen.get(key()) ?? 0) < 2;
        chess.undo();
        return goesOn;
      });
    if (!next) throw new Error(`no move goes on at ply ${i}`);
    chess.move(next);
    seen.set(key(), (seen.get(key()) ?? 0) + 1);
    uci.push(next.from + next.to + (next.promotion ?? ''));
  }
  return uci;
}

/** The player's moves the server's page judges; the browser judges the older ones. */
const JUDGED_BY_THE_SERVER = 4;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

test('KRvK played to mate: every best move is marked best, and the PGN parses', async ({ page, request }) => {
  await openPractice(page, practiceUrl(KRvK, 'white'));
  const asked = countApiRequests(page);
  const replyMs: number[] = [];
  let plies = 0;
  let moves = 0;
  for (let turn = 0; turn < 40; turn++) {
    const { state, fen } = await playersTurn(page);
    if (state === 'over') break;
    const best = (await apiAnswer(request, fen)).moves[0];
    const started = Date.now();
    await play(page, best.uci);
    moves += 1;
    plies += 1;
    // The move, its mark, and the reply that follows in the URL.
    await expect(page.locator('.practice-status')).toContainText(`You played ${best.san}: best`);
    await expect.poll(() => urlMoves(page).length).toBeGreaterThanOrEqual(plies);
    plies = urlMoves(page).length;
    await playersTurn(page);
    replyMs.push(Date.now() - started);
  }
  await expect(page.locator('.practice-status')).toContainText('Checkmate: White wins');
  // What the mode costs the server: the answers the explorer asks for too
  // (one per position shown), no new kind of request.
  console.log(
    `practice KRvK: ${moves} moves of the player, ${asked.length} API requests ` +
      `(${(asked.length / moves).toFixed(2)} per move), move to reply shown: median ${median(replyMs)} ms, ` +
      `max ${Math.max(...replyMs)} ms (includes the click and the page's redraw)`,
  );
  await expect(page.locator('.practice-summary')).toContainText('slower 0 · mistakes 0');
  await expect(page.locator('.practice-record .mark.best').first()).toBeVisible();
  await expect(page.locator('.practice-record .mark.mistake')).toHaveCount(0);
  const pgn = (await page.locator('.practice-summary a.pgn').getAttribute('data-pgn')) ?? '';
  const chess = new Chess();
  chess.loadPgn(pgn);
  expect(chess.isCheckmate()).toBe(true);
  expect(chess.getHeaders()['FEN']).toBe(KRvK);
  expect(chess.getHeaders()['Result']).toBe('1-0');
  expect(chess.history().length).toBe(urlMoves(page).length);
  expect(pgn).toMatch(/\{best: mate in \d+\}/);
});

test('a move that throws the KQvKR win away is a mistake, with the result before and after', async ({
  page,
  request,
}) => {
  await openPractice(page, practiceUrl(KQvKR, 'white'));
  const { fen } = await playersTurn(page);
  const answer = await apiAnswer(request, fen);
  expect(answer.category).toBe('win');
  // The worst move: it leaves Black a draw or a win.
  const worst = answer.moves[answer.moves.length - 1];
  expect(['draw', 'win', 'cursed-win', 'blessed-loss']).toContain(worst.category);
  await play(page, worst.uci);
  const status = page.locator('.practice-status');
  await expect(status).toContainText(`You played ${worst.san}: mistake: win thrown away: now`);
  await expect(status).toContainText(/was mate in \d+|mated in \d+|now a draw/);
  await expect(page.locator('.practice-record .mark.mistake')).toHaveCount(1);
  // Takeback: back to before the mistake, the record empty again.
  await page.locator('a.takeback').click();
  await expect.poll(() => urlMoves(page)).toEqual([]);
  expect((await playersTurn(page)).fen).toBe(fen);
  await expect(page.locator('.practice-record')).toHaveCount(0);
});

test('a drawn KRvKR: the tablebase keeps the draw, looking one move further for traps', async ({ page, request }) => {
  await openPractice(page, practiceUrl(KRvKR, 'white'));
  const asked = countApiRequests(page);
  for (let i = 0; i < 3; i++) {
    const { fen } = await playersTurn(page);
    const answer = await apiAnswer(request, fen);
    expect(answer.category).toBe('draw');
    const keep = answer.moves.find((m) => m.category === 'draw');
    expect(keep).toBeTruthy();
    await play(page, keep!.uci);
    await expect(page.locator('.practice-status')).toContainText(`You played ${keep!.san}: best: draw`);
    await expect.poll(() => urlMoves(page).length).toBe(2 * (i + 1));
  }
  const { fen } = await playersTurn(page);
  expect((await apiAnswer(request, fen)).category).toBe('draw');
  console.log(`practice KRvKR (drawn): 3 moves of the player, ${asked.length} API requests (the replies' look-ahead included)`);
});

test('a reload resumes the game, and the hint names the best move only when asked again', async ({
  page,
  request,
}) => {
  await openPractice(page, practiceUrl(KRvK, 'white'));
  for (let i = 0; i < 2; i++) {
    const { fen } = await playersTurn(page);
    await play(page, (await apiAnswer(request, fen)).moves[0].uci);
    await expect.poll(() => urlMoves(page).length).toBe(2 * (i + 1));
  }
  const before = await playersTurn(page);
  await page.reload();
  await expect(page.locator('.practice')).toHaveAttribute('data-hydrated', 'true');
  expect(await playersTurn(page)).toEqual(before);
  await expect(page.locator('.practice-record li')).toHaveCount(2);
  await expect(page.locator('.practice-record .mark.best')).toHaveCount(2);

  await page.locator('button.hint').click();
  const hint = page.locator('.practice-hint');
  await expect(hint.locator('.hint-group.win')).toBeVisible();
  await expect(hint.locator('.hint-best')).toHaveCount(0);
  await page.locator('button.hint').click();
  const best = (await apiAnswer(request, before.fen)).moves[0].san;
  await expect(hint.locator('.hint-best')).toContainText(best);
});

test('from the explorer: KBNvK, "Play this out", White: mate in 33 to find', async ({ page }) => {
  await openHydrated(page, KBNvK);
  await page.locator('a.play-out').click();
  await expect(page).toHaveURL(/\/practice\?/);
  await expect(page.locator('.practice-sides')).toContainText('Play White (to move): mate in 33');
  await expect(page.locator('.practice-sides')).toContainText('Play Black: mated in 33');
  await page.locator('a.play-side.white').click();
  expect((await playersTurn(page)).state).toBe('player');
  await expect(page.locator('.practice-status')).toContainText('Your move (white)');
  await page.locator('a.to-explorer').click();
  await expect(page.locator('.explorer:not(.practice)')).toBeVisible();
});

test("the statistics' longest wins open a practice game too", async ({ page }) => {
  await openHydrated(page, '8/8/8/8/4K3/8/1q6/k7 w - - 0 1');
  const link = page.locator('a.play-out-example').first();
  await expect(link).toBeVisible();
  await link.click();
  await expect(page).toHaveURL(/\/practice\?fen=/);
  await expect(page.locator('.practice-sides a.play-side')).toHaveCount(2);
});

test('playing Black: the tablebase moves first, and resigning ends the game with a summary', async ({ page }) => {
  await openPractice(page, practiceUrl(KRvK, 'black'));
  await playersTurn(page);
  expect(urlMoves(page).length).toBe(1);
  await expect(page.locator('.practice-record .opening')).toContainText('The tablebase began');
  await page.locator('a.resign').click();
  await expect(page.locator('.practice-summary')).toContainText('Black resigned: White wins');
  expect(new URL(page.url()).searchParams.get('resigned')).toBe('1');
});

test('a long game: the page comes judged for the last moves, the browser judges the older ones', async ({
  page,
}) => {
  const moves = longGame(KRvK, 30);
  await openPractice(page, practiceUrl(KRvK, 'white', moves));
  await playersTurn(page);
  const record = page.locator('.practice-record');
  await expect(record.locator('li')).toHaveCount(15);
  await expect(record.locator('.mark.older')).toHaveCount(0);
  await expect(record.locator('.mark.best, .mark.slower, .mark.mistake')).toHaveCount(15);
  await expect(page.locator('.practice-note')).toHaveCount(0);
});

test.describe('without JavaScript', () => {
  test.use({ javaScriptEnabled: false });

  test('the moves are links, and the server plays the reply', async ({ page }) => {
    await page.goto(practiceUrl(KRvK, 'white'));
    const link = page.locator('.practice-moves a.practice-move', { hasText: 'Rh7' });
    await link.click();
    await expect(page.locator('.practice-status')).toContainText('You played Rh7:');
    await expect(page.locator('.practice-status')).toContainText('Black replied');
    await expect(page.locator('.practice-moves a.practice-move').first()).toBeVisible();
    await expect(page.locator('.practice-record li')).toHaveCount(1);
  });

  test('a long game: the older moves are "not judged here", and a note says why', async ({ page }) => {
    await page.goto(practiceUrl(KRvK, 'white', longGame(KRvK, 30)));
    const record = page.locator('.practice-record');
    await expect(record.locator('li')).toHaveCount(15);
    await expect(record.locator('.mark.older')).toHaveCount(15 - JUDGED_BY_THE_SERVER);
    await expect(record.locator('.mark.older').first()).toContainText('not judged here');
    await expect(record.locator('.mark.best, .mark.slower, .mark.mistake')).toHaveCount(JUDGED_BY_THE_SERVER);
    await expect(page.locator('.practice-note')).toContainText('Without JavaScript');
  });
});

// Practice on a phone: move links big enough for a
// finger, and at the end the last move in sight, not cut off.
test.describe('practice on a phone', () => {
  test.use({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });

  test('the move links are targets of at least 44 × 44 px', async ({ page }) => {
    await openPractice(page, practiceUrl(KRvK, 'w'));
    await playersTurn(page);
    const links = page.locator('.practice-move');
    expect(await links.count()).toBeGreaterThan(5);
    const sizes = await links.evaluateAll((all) =>
      all.map((a) => {
        const r = a.getBoundingClientRect();
        return { text: a.textContent, width: r.width, height: r.height };
      }),
    );
    for (const size of sizes) {
      expect(size.width, `${size.text}`).toBeGreaterThanOrEqual(44);
      expect(size.height, `${size.text}`).toBeGreaterThanOrEqual(44);
    }
    // Tapped, one plays.
    await links.first().tap();
    await expect.poll(() => urlMoves(page).length).toBeGreaterThan(0);
  });

  test('at the end of a long game the record shows its last move', async ({ page, request }) => {
    // The fastest mate of KBNvK, 33 moves for the player.
    const response = await request.get(`/standard/fastest-mate?fen=${encodeURIComponent(KBNvK)}`);
    expect(response.ok()).toBeTruthy();
    const line = (await response.json()) as { mainline: { uci: string; san: string }[] };
    const moves = line.mainline.map((m) => m.uci);
    await openPractice(page, practiceUrl(KBNvK, 'w', moves));
    await expect(panel(page)).toHaveAttribute('data-state', 'over');
    const record = page.locator('.practice-record');
    const rows = record.locator('li');
    await expect(rows).toHaveCount(33);
    const last = rows.last();
    await expect(last.locator('.san')).toHaveText(line.mainline[line.mainline.length - 1].san);
    // The record is scrolled to its end: the last row lies wholly inside it.
    await expect
      .poll(() =>
        last.evaluate((li) => {
          const list = li.parentElement!;
          const a = li.getBoundingClientRect();
          const b = list.getBoundingClientRect();
          return a.top >= b.top - 0.5 && a.bottom <= b.bottom + 0.5;
        }),
      )
      .toBe(true);
    const overflows = await record.evaluate((el) => el.scrollHeight > el.clientHeight);
    expect(overflows, 'a game this long scrolls in its box').toBe(true);
    await last.scrollIntoViewIfNeeded();
    await expect(last).toBeInViewport({ ratio: 1 });
  });
});
