import { test, expect } from './fixtures';
import { boardPieces, clickSquare, fenOfUrl, waitForList } from './helpers';

// Atomic and antichess on the board, in the list and in the URL.

const atomic = '4k3/3n4/8/8/8/8/3Q4/K7 w - - 0 1';
const antichess = '8/8/8/8/8/2n5/3P4/8 w - - 0 1';
const url = (variant: string, fen: string) => `/?variant=${variant}&fen=${fen.replace(/ /g, '_')}`;

test('atomic: a capture explodes the pieces around it, and taking next to the king wins', async ({ page }) => {
  await page.goto(url('atomic', atomic));
  await expect(page.locator('.explorer')).toHaveAttribute('data-hydrated', 'true');
  await waitForList(page, atomic);
  await expect(page).toHaveTitle(/^Atomic KQvKN/);
  await expect(page.locator('.variants a.current')).toHaveText('Atomic');
  const explosion = page.locator('.move-list a.move[data-san^="Qxd7"]');
  await expect(explosion.locator('.dtz')).toHaveText('Explodes the king');
  await clickSquare(page, 'd2');
  await clickSquare(page, 'd7');
  // The queen, the knight and the king beside them are gone.
  await expect.poll(() => fenOfUrl(page.url())).toBe('8/8/8/8/8/8/8/K7 b - - 0 1');
  expect(new URL(page.url()).searchParams.get('variant')).toBe('atomic');
  expect(await boardPieces(page)).toEqual({ a1: 'wK' });
  await expect(page.locator('.status')).toHaveText("White wins: Black's king exploded");
});

test('antichess: a capture is compulsory, on the board and in the list', async ({ page }) => {
  await page.goto(url('antichess', antichess));
  await expect(page.locator('.explorer')).toHaveAttribute('data-hydrated', 'true');
  await waitForList(page, antichess);
  await expect(page.locator('.move-list a.move')).toHaveCount(1);
  // Taking the last piece ends the game: shakmaty's SAN (and lila's) marks
  // a variant's end as it marks a mate.
  await expect(page.locator('.move-list a.move')).toHaveAttribute('data-san', 'dxc3#');
  await clickSquare(page, 'd2');
  await expect(page.locator('.board [data-square="c3"]')).toHaveClass(/target/);
  await expect(page.locator('.board [data-square="d3"]')).not.toHaveClass(/target/);
  await expect(page.locator('.board [data-square="d4"]')).not.toHaveClass(/target/);
  await clickSquare(page, 'c3');
  await expect.poll(() => fenOfUrl(page.url())).toBe('8/8/8/8/8/2P5/8/8 b - - 0 1');
  await expect(page.locator('.status')).toHaveText('Black wins: Black has no pieces left');
});

test("a variant's unknown names its own missing table and the command that fetches it", async ({ page }) => {
  // This server has no antichess tables; in antichess two kings are a
  // table of their own (KvK), where in chess they are a draw.
  const kings = '8/8/8/8/8/8/k7/7K w - - 0 1';
  await page.goto(url('antichess', kings));
  await expect(page.locator('.explorer')).toHaveAttribute('data-hydrated', 'true');
  await waitForList(page, kings);
  await expect(page.locator('.status')).toHaveText('Not in the installed tables: KvK not installed');
  // Said once above the list, and in each move's tooltip.
  await expect(page.locator('.move-list a.move[data-san="Kg2"]')).toHaveAttribute('title', /KvK not installed/);
  await expect(page.locator('.missing-tables summary')).toHaveText('Not installed: KvK');
  await page.locator('.missing-tables summary').click();
  const command = page.locator('.missing-tables code');
  await expect(command).toContainText('zugzwang tables fetch --variant antichess --only KvK');
  await expect(command).toContainText('antichess/2-3-4-5-pawnless/');
  // The section on the tables counts antichess tables, from 2 pieces.
  await expect(page.locator('.installed li[data-pieces="2"]')).toHaveText('2 pieces: none installed');
});

test('the variant switch keeps a position its rules allow', async ({ page }) => {
  const krvk = '4k3/8/8/8/8/8/8/4K2R w - - 0 1';
  await page.goto(url('standard', krvk));
  await expect(page.locator('.explorer')).toHaveAttribute('data-hydrated', 'true');
  await page.locator('.variants a[data-variant="atomic"]').click();
  await expect.poll(() => new URL(page.url()).searchParams.get('variant')).toBe('atomic');
  expect(fenOfUrl(page.url())).toBe(krvk);
  await waitForList(page, krvk);
  await expect(page).toHaveTitle(/^Atomic KRvK/);
});

test('the list of installed tables follows the rules switched in the page', async ({ page }) => {
  // The list is the server's markup until the rules change; then its own
  // part (a split point) follows them.
  const krvk = '4k3/8/8/8/8/8/8/4K2R w - - 0 1';
  await page.goto(url('standard', krvk));
  await expect(page.locator('.explorer')).toHaveAttribute('data-hydrated', 'true');
  await expect(page.locator('.installed li[data-pieces="3"]')).toHaveText(/^3 pieces: all \d+ tables$/);
  await page.locator('.variants a[data-variant="antichess"]').click();
  await expect.poll(() => new URL(page.url()).searchParams.get('variant')).toBe('antichess');
  await expect(page.locator('.installed li[data-pieces="2"]')).toHaveText('2 pieces: none installed');
  await expect(page.locator('.installed li[data-pieces="3"]')).toHaveText('3 pieces: none installed');
});

test.describe('without JavaScript', () => {
  test.use({ javaScriptEnabled: false });
  test('an atomic position lists its moves and the explosion', async ({ page }) => {
    await page.goto(url('atomic', atomic));
    await expect(page.locator('.move-list a.move[data-san^="Qxd7"] .dtz')).toHaveText('Explodes the king');
    await expect(page.locator('.move-list a.move[data-san^="Qxd7"]')).toHaveAttribute('href', /variant=atomic/);
    await expect(page.locator('.variants a.current')).toHaveText('Atomic');
  });

  test('a FEN loaded with the form keeps the rules on show', async ({ page }) => {
    await page.goto(url('atomic', atomic));
    const other = '4k3/3n4/8/8/8/8/3Q4/1K6 w - - 0 1';
    await page.locator('#fen-input').fill(other);
    await page.locator('.fen-box button[type="submit"]').click();
    await expect(page).toHaveURL(/[?&]variant=atomic&fen=/);
    await expect(page.locator('.variants a.current')).toHaveText('Atomic');
    await expect(page.locator('.move-list a.move[data-san^="Qxd7"] .dtz')).toHaveText('Explodes the king');
  });
});
