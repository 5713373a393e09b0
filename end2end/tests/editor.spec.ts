import { test, expect } from './fixtures';
import { boardPieces, clickSquare, fenOfUrl, openHydrated, waitForList } from './helpers';

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
