import { test, expect, type Page } from './fixtures';
import { boardPieces, clickSquare, dragSquare, fenOfUrl, openHydrated, waitForList } from './helpers';

interface Point {
  x: number;
  y: number;
}

test('the editor builds KBN vs K from an empty board and shows a win', async ({ page }) => {
  await openHydrated(page, '4k3/8/8/8/8/8/8/4K2R w - - 0 1');
  await page.locator('button.edit').click();
  await expect(page.locator('.editor')).toBeVisible();
  await page.locator('.editor-controls button.clear').click();
  expect(await boardPieces(page)).toEqual({});

  const place = async (piece: string, square: string) => {
    await page.locator(`.palette-piece[data-piece="${piece}"]`).click();
    await clickSquare(page, square);
  };
  await place('wK', 'e1');
  await place('wB', 'c1');
  await place('wN', 'b1');
  await place('bK', 'e8');
  expect(await boardPieces(page)).toEqual({ e1: 'wK', c1: 'wB', b1: 'wN', e8: 'bK' });

  // An illegal set-up is refused with the reason: a second black king.
  await place('bK', 'a8');
  await page.locator('.editor-controls button.done').click();
  await expect(page.locator('.editor-error')).toContainText('too many kings');
  // Drag the extra king off the board to remove it.
  await page.locator('.palette-tool.hand').click();
  const a8Square = page.locator('.board [data-square="a8"]');
  await a8Square.scrollIntoViewIfNeeded();
  const a8 = await a8Square.boundingBox();
  const board = await page.locator('.board').boundingBox();
  if (!a8 || !board) throw new Error('board not on screen');
  await page.mouse.move(a8.x + a8.width / 2, a8.y + a8.height / 2);
  await page.mouse.down();
  // Off the board: to its right.
  await page.mouse.move(board.x + board.width + 40, a8.y + a8.height / 2, { steps: 8 });
  await page.mouse.up();
  expect((await boardPieces(page))['a8']).toBeUndefined();

  await page.locator('.editor-controls button.done').click();
  const fen = '4k3/8/8/8/8/8/8/1NB1K3 w - - 0 1';
  await expect.poll(() => fenOfUrl(page.url())).toBe(fen);
  await waitForList(page, fen);
  await expect(page.locator('.status')).toHaveClass(/win/);
  await expect(page.locator('.status')).toContainText('White to move wins');
  await expect(page.locator('.stats')).toContainText('KBNvK');
});

test('the editor refuses a side not to move in check', async ({ page }) => {
  // Black to move and in check is legal; white to move in it is not.
  await openHydrated(page, '4k3/8/8/8/8/8/8/4RK2 b - - 0 1');
  await page.keyboard.press('e');
  await expect(page.locator('.editor')).toBeVisible();
  await page.locator('.editor-controls input[value="w"]').check();
  // Leaving by keyboard checks the position like Done does.
  await page.locator('body').press('e');
  await expect(page.locator('.editor-error')).toContainText('side not to move is in check');
  await expect(page.locator('.editor')).toBeVisible();
});

test('the editor opens a position whose table is not loaded, with the moves that lead into loaded ones', async ({ page }) => {
  // KRvK plus a white pawn and a black rook: KRPvKR, not among the embedded 3-4 piece tables.
  await openHydrated(page, '4k3/8/8/8/8/8/8/4K2R w - - 0 1');
  await page.locator('button.edit').click();
  await expect(page.locator('.editor')).toBeVisible();
  await page.locator('.palette-piece[data-piece="wP"]').click();
  await clickSquare(page, 'a2');
  await page.locator('.palette-piece[data-piece="bR"]').click();
  await clickSquare(page, 'h8');
  await page.locator('.editor-controls button.done').click();
  const fen = '4k2r/8/8/8/8/8/P7/4K2R w - - 0 1';
  await expect.poll(() => fenOfUrl(page.url())).toBe(fen);
  await expect(page.locator('.editor')).toBeHidden();
  // Taking the rook leads into KRPvK, which is loaded: that move is answered,
  // and the verdict follows from it (as lila-tablebase derives it).
  await expect(page.locator('.move-list a.move', { hasText: 'Rxh8' })).toContainText('DTZ');
  await expect(page.locator('.status')).toContainText('White to move wins');
});

test('while editing, the analysis and the side to move follow the position set up', async ({ page }) => {
  await openHydrated(page, '4k3/8/8/8/8/8/8/4K2R w - - 0 1');
  await page.locator('button.edit').click();
  await expect(page.locator('.editor')).toBeVisible();
  // One way in, two ways out (Done, Cancel), and one Flip.
  await expect(page.locator('button.edit')).toBeHidden();
  await expect(page.locator('button.flip:visible')).toHaveCount(1);
  // Remove the rook: KvK, a draw, analysed before leaving the editor.
  await page.locator('.palette-tool.erase').click();
  await clickSquare(page, 'h1');
  await expect(page.locator('.status')).toContainText('Insufficient material');
  await page.locator('.editor-controls input[value="b"]').check();
  await expect(page.locator('.board-tools .turn')).toHaveText('Black to move');
});

test('the editor keeps the clocks and sets castling rights and en passant', async ({ page }) => {
  await openHydrated(page, '4k3/8/8/3pP3/8/8/8/R3K2R w - - 37 60');
  await page.keyboard.press('e');
  await expect(page.locator('input[name="halfmoves"]')).toHaveValue('37');
  await expect(page.locator('input[name="fullmoves"]')).toHaveValue('60');
  await page.locator('input[name="castling-K"]').check();
  await expect(page.locator('input[name="castling-k"]')).toBeDisabled();
  await page.locator('select[name="en-passant"]').selectOption('d6');
  await page.locator('input[name="halfmoves"]').fill('12');
  await expect(page.locator('.editor-fen')).toHaveText('4k3/8/8/3pP3/8/8/8/R3K2R w K d6 12 60');
  // Castling rights are outside the tables: the live verdict says so.
  await expect(page.locator('.status')).toContainText('castling');
  await page.locator('.editor-controls button.done').click();
  await expect.poll(() => fenOfUrl(page.url())).toBe('4k3/8/8/3pP3/8/8/8/R3K2R w K d6 12 60');
});

test('flipping is kept in the URL, across moves and a reload', async ({ page }) => {
  const fen = '4k3/8/8/8/8/8/8/4K2R w - - 0 1';
  await openHydrated(page, fen);
  await page.keyboard.press('f');
  await expect.poll(() => new URL(page.url()).searchParams.get('orientation')).toBe('black');
  await page.reload();
  await expect(page.locator('.explorer')).toHaveAttribute('data-hydrated', 'true');
  await expect(page.locator('.board')).toHaveClass(/flipped/);
  await page.locator('.move-list a.move[data-san="Rh7"]').click();
  await expect.poll(() => fenOfUrl(page.url())).toBe('4k3/7R/8/8/8/8/8/4K3 b - - 1 1');
  await expect.poll(() => new URL(page.url()).searchParams.get('orientation')).toBe('black');
});

/** Drags from one point to another with the mouse, in small steps. */
async function mouseDrag(page: Page, a: Point, b: Point): Promise<void> {
  await page.mouse.move(a.x, a.y);
  await page.mouse.down();
  await page.mouse.move((a.x + b.x) / 2, (a.y + b.y) / 2, { steps: 5 });
  await page.mouse.move(b.x, b.y, { steps: 5 });
  await page.mouse.up();
}

/** Drags one finger from one point to another, as a touch screen reports it. */
async function touchDrag(page: Page, a: Point, b: Point): Promise<void> {
  const cdp = await page.context().newCDPSession(page);
  const touch = (type: 'touchStart' | 'touchMove' | 'touchEnd', p?: Point) =>
    cdp.send('Input.dispatchTouchEvent', { type, touchPoints: p ? [{ x: p.x, y: p.y }] : [] });
  await touch('touchStart', a);
  for (let i = 1; i <= 10; i++) {
    await touch('touchMove', { x: a.x + ((b.x - a.x) * i) / 10, y: a.y + ((b.y - a.y) * i) / 10 });
  }
  await touch('touchEnd');
  await cdp.detach();
}

async function center(page: Page, selector: string): Promise<Point> {
  const box = await page.locator(selector).boundingBox();
  if (!box) throw new Error(`${selector} is not on screen`);
  return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
}

const tray = (piece: string) => `.palette-piece[data-piece="${piece}"]`;
const square = (sq: string) => `.board [data-square="${sq}"]`;

async function openEditor(page: Page, fen: string): Promise<void> {
  await openHydrated(page, fen);
  await page.locator('button.edit').click();
  await expect(page.locator('.editor')).toBeVisible();
}

test.describe('editor by pointer', () => {
  test.use({ viewport: { width: 1280, height: 900 } });

  test('a piece dragged from the tray with the mouse lands where it is dropped', async ({ page }) => {
    await openEditor(page, '4k3/8/8/8/8/8/8/4K3 w - - 0 1');
    await mouseDrag(page, await center(page, tray('wR')), await center(page, square('a1')));
    expect(await boardPieces(page)).toEqual({ e1: 'wK', e8: 'bK', a1: 'wR' });
    // The piece dragged is the one selected, and the tray says so.
    await expect(page.locator(tray('wR'))).toHaveAttribute('aria-pressed', 'true');
    await expect(page.locator(tray('wQ'))).toHaveAttribute('aria-pressed', 'false');
    // Dropped off the board, a tray piece is not placed.
    const board = await page.locator('.board').boundingBox();
    if (!board) throw new Error('board not on screen');
    await mouseDrag(page, await center(page, tray('bQ')), { x: board.x + board.width + 30, y: board.y + 10 });
    expect(await boardPieces(page)).toEqual({ e1: 'wK', e8: 'bK', a1: 'wR' });
  });

  test('click-click moves a piece on the board', async ({ page }) => {
    await openEditor(page, '4k3/8/8/8/8/8/8/4K3 w - - 0 1');
    await clickSquare(page, 'e1');
    await expect(page.locator(square('e1'))).toHaveClass(/selected/);
    await clickSquare(page, 'd2');
    expect(await boardPieces(page)).toEqual({ d2: 'wK', e8: 'bK' });
    await expect(page.locator(square('d2'))).not.toHaveClass(/selected/);
  });

  test('with a tray piece selected, a drag moves the piece pressed and a tap places the tray piece', async ({ page }) => {
    await openEditor(page, '4k3/8/8/8/8/8/8/4K3 w - - 0 1');
    await page.locator(tray('wR')).click();
    await dragSquare(page, 'e1', 'd1');
    expect(await boardPieces(page)).toEqual({ d1: 'wK', e8: 'bK' });
    await clickSquare(page, 'a1');
    expect(await boardPieces(page)).toEqual({ d1: 'wK', e8: 'bK', a1: 'wR' });
    // A tap on an occupied square puts the selected piece there.
    await clickSquare(page, 'e8');
    expect(await boardPieces(page)).toEqual({ d1: 'wK', e8: 'wR', a1: 'wR' });
  });

  test('the FEN box follows the position as it is set up', async ({ page }) => {
    await openEditor(page, '4k3/8/8/8/8/8/8/4K3 w - - 0 1');
    await page.locator(tray('wQ')).click();
    await clickSquare(page, 'd1');
    await expect(page.locator('#fen-input')).toHaveValue('4k3/8/8/8/8/8/8/3QK3 w - - 0 1');
    await page.locator('.editor-controls input[value="b"]').check();
    await expect(page.locator('#fen-input')).toHaveValue('4k3/8/8/8/8/8/8/3QK3 b - - 0 1');
    await expect(page.locator('.editor-fen')).toHaveText('4k3/8/8/8/8/8/8/3QK3 b - - 0 1');
    // Cancel: the box shows the position on show again.
    await page.locator('.editor-controls button.cancel').click();
    await expect(page.locator('#fen-input')).toHaveValue('4k3/8/8/8/8/8/8/4K3 w - - 0 1');
  });
});

test.describe('editor on a phone', () => {
  test.use({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });

  test('a finger drags a piece from the tray without scrolling the page', async ({ page }) => {
    await openEditor(page, '4k3/8/8/8/8/8/8/4K3 w - - 0 1');
    await page.locator(tray('bR')).scrollIntoViewIfNeeded();
    const scrolled = await page.evaluate(() => window.scrollY);
    await touchDrag(page, await center(page, tray('bR')), await center(page, square('h8')));
    expect(await boardPieces(page)).toEqual({ e1: 'wK', e8: 'bK', h8: 'bR' });
    expect(await page.evaluate(() => window.scrollY)).toBe(scrolled);
  });

  test('a finger dragging the king with a tray rook selected moves the king', async ({ page }) => {
    await openEditor(page, '4k3/8/8/8/8/8/8/4K3 w - - 0 1');
    await page.locator(tray('wR')).tap();
    await touchDrag(page, await center(page, square('e1')), await center(page, square('f2')));
    expect(await boardPieces(page)).toEqual({ f2: 'wK', e8: 'bK' });
    // A tap places the rook.
    await page.locator(square('a1')).tap();
    expect(await boardPieces(page)).toEqual({ f2: 'wK', e8: 'bK', a1: 'wR' });
  });
});

test('the editor tells screen readers what each control is and which is selected', async ({ page }) => {
  await openHydrated(page, 'r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1');
  await page.keyboard.press('e');
  await expect(page.locator('.editor')).toBeVisible();
  // Opened by "e", the focus is in the editor.
  await expect.poll(() => page.evaluate(() => !!document.activeElement?.closest('.editor'))).toBe(true);
  for (const name of ['White O-O', 'White O-O-O', 'Black O-O', 'Black O-O-O']) {
    await expect(page.getByRole('checkbox', { name, exact: true })).toBeChecked();
  }
  const move = page.getByRole('button', { name: 'Move', exact: true });
  const remove = page.getByRole('button', { name: 'Remove', exact: true });
  await expect(move).toHaveAttribute('aria-pressed', 'true');
  await expect(remove).toHaveAttribute('aria-pressed', 'false');
  await remove.click();
  await expect(move).toHaveAttribute('aria-pressed', 'false');
  await expect(remove).toHaveAttribute('aria-pressed', 'true');
  const knight = page.getByRole('button', { name: 'black knight', exact: true });
  await knight.click();
  await expect(knight).toHaveAttribute('aria-pressed', 'true');
  await expect(remove).toHaveAttribute('aria-pressed', 'false');
  // The board's name says what Enter does here, not that it plays a move.
  const label = await page.locator('.board.editing').getAttribute('aria-label');
  expect(label).toContain('Enter places the selected piece');
  expect(label).not.toContain('plays it');
});

/** WCAG contrast of two `rgb()`/`#rrggbb` colours. */
function contrast(a: string, b: string): number {
  const channels = (c: string): number[] => {
    const full = c.replace(/^#([0-9a-f])([0-9a-f])([0-9a-f])$/i, '#$1$1$2$2$3$3');
    const hex = full.match(/^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i);
    const rgb = hex ? hex.slice(1).map((h) => parseInt(h, 16)) : (c.match(/\d+(\.\d+)?/g) ?? []).slice(0, 3).map(Number);
    return rgb.map((v) => {
      const s = v / 255;
      return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    });
  };
  const lum = (c: string) => {
    const [r, g, b] = channels(c);
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

for (const colorScheme of ['light', 'dark'] as const) {
  test(`coordinates, tray pieces and editor text stand out (${colorScheme})`, async ({ page }) => {
    await page.emulateMedia({ colorScheme });
    await openEditor(page, '4k3/8/8/8/8/8/8/4K3 w - - 0 1');
    // Coordinates against their square: at least 3:1.
    const coords = await page.locator('.board .coord').evaluateAll((spans) =>
      spans.map((s) => ({
        fg: getComputedStyle(s).color,
        bg: getComputedStyle(s.parentElement as Element).backgroundColor,
      })),
    );
    expect(coords.length).toBe(16);
    for (const { fg, bg } of coords) expect(contrast(fg, bg), `${fg} on ${bg}`).toBeGreaterThanOrEqual(3);

    // Tray pieces: the piece's fill or outline against the button, at least 3:1.
    for (const piece of ['wK', 'wP', 'bK', 'bP']) {
      const svg = await (await page.request.get(`/pieces/${piece}.svg`)).text();
      const paint = svg.match(/path,circle\{fill:(#[0-9a-f]{3,6});stroke:(#[0-9a-f]{3,6})/i);
      if (!paint) throw new Error(`no colours in ${piece}.svg`);
      const bg = await page.locator(tray(piece)).evaluate((b) => getComputedStyle(b).backgroundColor);
      const best = Math.max(contrast(paint[1], bg), contrast(paint[2], bg));
      expect(best, `${piece} on ${bg}`).toBeGreaterThanOrEqual(3);
    }

    // Text in the editor against the first opaque background behind it: at least 4.5:1.
    const texts = await page
      .locator('.editor-wrap label, .editor-wrap legend, .editor-wrap button:not(:disabled), .editor-fen')
      .evaluateAll((els) =>
        els
          .filter((e) => (e.textContent ?? '').trim() !== '')
          .map((e) => {
            let bg = 'rgba(0, 0, 0, 0)';
            for (let n: Element | null = e; n; n = n.parentElement) {
              const c = getComputedStyle(n).backgroundColor;
              if (!/rgba\(.*, 0\)$/.test(c) && c !== 'transparent') {
                bg = c;
                break;
              }
            }
            if (bg === 'rgba(0, 0, 0, 0)') bg = getComputedStyle(document.body).backgroundColor;
            return { text: (e.textContent ?? '').trim().slice(0, 20), fg: getComputedStyle(e).color, bg };
          }),
      );
    expect(texts.length).toBeGreaterThan(5);
    for (const { text, fg, bg } of texts) expect(contrast(fg, bg), `"${text}": ${fg} on ${bg}`).toBeGreaterThanOrEqual(4.5);
  });
}

test('picking a tray piece drops the piece lifted by a first click', async ({ page }) => {
  await openEditor(page, '4k3/8/8/8/8/8/8/4K3 w - - 0 1');
  await clickSquare(page, 'e1');
  await expect(page.locator(square('e1'))).toHaveClass(/selected/);
  await page.locator(tray('wQ')).focus();
  await page.keyboard.press('Enter');
  await expect(page.locator(tray('wQ'))).toHaveAttribute('aria-pressed', 'true');
  await expect(page.locator(square('e1'))).not.toHaveClass(/selected/);
  await clickSquare(page, 'd1');
  expect(await boardPieces(page)).toEqual({ e1: 'wK', e8: 'bK', d1: 'wQ' });
});

for (const colorScheme of ['light', 'dark'] as const) {
  test(`every text on the explorer stands out at 4.5:1 (${colorScheme})`, async ({ page }) => {
    await page.emulateMedia({ colorScheme });
    // KBNvK: a verdict, mates in the list, statistics.
    const fen = '8/8/8/8/8/7B/8/Nk5K w - - 0 1';
    await openHydrated(page, fen);
    await expect(page.locator(`.move-list[data-fen="${fen}"]`)).toBeVisible();
    await expect(page.locator('.results')).not.toHaveClass(/pending/);
    const texts = await page.evaluate(() => {
      const out: { text: string; fg: string; bg: string }[] = [];
      for (const e of Array.from(document.querySelectorAll('body *'))) {
        // Text of the element's own, shown and not disabled; coordinates have their own test (3:1).
        const own = Array.from(e.childNodes)
          .filter((n) => n.nodeType === 3 && (n.textContent ?? '').trim() !== '')
          .map((n) => (n.textContent ?? '').trim())
          .join(' ');
        if (!own || e.classList.contains('coord') || (e as HTMLButtonElement).disabled) continue;
        if ((e as HTMLElement).offsetParent === null) continue;
        let bg = '';
        for (let n: Element | null = e; n; n = n.parentElement) {
          const c = getComputedStyle(n).backgroundColor;
          if (!/rgba\(.*, 0\)$/.test(c) && c !== 'transparent') {
            bg = c;
            break;
          }
        }
        out.push({ text: own.slice(0, 30), fg: getComputedStyle(e).color, bg: bg || getComputedStyle(document.body).backgroundColor });
      }
      return out;
    });
    expect(texts.length).toBeGreaterThan(20);
    for (const { text, fg, bg } of texts) expect(contrast(fg, bg), `"${text}": ${fg} on ${bg}`).toBeGreaterThanOrEqual(4.5);
  });
}
