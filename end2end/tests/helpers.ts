import { expect, type Page, type APIRequestContext } from '@playwright/test';

/** The API's answer, as much of it as the tests compare. */
export interface ApiMove {
  uci: string;
  san: string;
  dtz: number | null;
  category: string;
}
export interface ApiAnswer {
  dtz: number | null;
  category: string;
  checkmate: boolean;
  moves: ApiMove[];
}

/** FENs go into URLs with underscores for spaces, as the API allows. */
export function fenUrl(fen: string): string {
  return `/?fen=${fen.replace(/ /g, '_')}`;
}

/** The FEN in the page's URL, with spaces. */
export function fenOfUrl(url: string): string {
  return (new URL(url).searchParams.get('fen') ?? '').replace(/_/g, ' ');
}

export async function apiAnswer(request: APIRequestContext, fen: string): Promise<ApiAnswer> {
  const response = await request.get(`/standard?fen=${encodeURIComponent(fen)}`);
  expect(response.ok(), `API answer for ${fen}`).toBeTruthy();
  return (await response.json()) as ApiAnswer;
}

/** Opens a position and waits until the WASM has taken over the page. */
export async function openHydrated(page: Page, fen: string): Promise<void> {
  await page.goto(fenUrl(fen));
  await expect(page.locator('.explorer')).toHaveAttribute('data-hydrated', 'true');
}

/** Waits for the move list of a position to be rendered and no longer pending. */
export async function waitForList(page: Page, fen: string): Promise<void> {
  await expect(page.locator(`.move-list[data-fen="${fen}"]`)).toBeVisible();
  await expect(page.locator('.results')).not.toHaveClass(/pending/);
}

/** Checks that the list shows exactly the API's moves, in its order, with its DTZ. */
export async function expectListMatchesApi(page: Page, api: ApiAnswer): Promise<void> {
  const rows = page.locator('.move-list a.move');
  await expect(rows).toHaveCount(api.moves.length);
  const shown = await rows.evaluateAll((links) =>
    links.map((a) => ({
      uci: a.getAttribute('data-uci'),
      san: a.querySelector('.san')?.textContent ?? '',
      dtz: a.getAttribute('data-dtz'),
      text: a.querySelector('.dtz')?.textContent ?? '',
    })),
  );
  api.moves.forEach((m, i) => {
    expect(shown[i].uci, `move ${i}`).toBe(m.uci);
    expect(shown[i].san, `move ${i}`).toBe(m.san);
    expect(shown[i].dtz, `move ${m.san}`).toBe(m.dtz === null ? '' : String(m.dtz));
    if (m.dtz !== null && m.dtz !== 0) {
      expect(shown[i].text, `move ${m.san}`).toContain(`DTZ ${Math.abs(m.dtz)}`);
    }
  });
}

/** The centre of a square on the page. */
export async function squareCenter(page: Page, square: string): Promise<{ x: number; y: number }> {
  const box = await page.locator(`.board [data-square="${square}"]`).boundingBox();
  if (!box) throw new Error(`square ${square} is not on screen`);
  return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
}

export async function clickSquare(page: Page, square: string): Promise<void> {
  const { x, y } = await squareCenter(page, square);
  await page.mouse.click(x, y);
}

/** Drags with the mouse in small steps, as a person would. */
export async function dragSquare(page: Page, from: string, to: string): Promise<void> {
  const a = await squareCenter(page, from);
  const b = await squareCenter(page, to);
  await page.mouse.move(a.x, a.y);
  await page.mouse.down();
  await page.mouse.move((a.x + b.x) / 2, (a.y + b.y) / 2, { steps: 5 });
  await page.mouse.move(b.x, b.y, { steps: 5 });
  await page.mouse.up();
}

/** The pieces on the board, square → code (`wK`), for comparing boards. */
export async function boardPieces(page: Page): Promise<Record<string, string>> {
  return page.locator('.board [data-square]').evaluateAll((squares) => {
    const out: Record<string, string> = {};
    for (const sq of squares) {
      const piece = sq.querySelector('.piece');
      if (piece) {
        const code = [...piece.classList].find((c) => /^[wb][KQRBNP]$/.test(c));
        if (code) out[sq.getAttribute('data-square') ?? ''] = code;
      }
    }
    return out;
  });
}
