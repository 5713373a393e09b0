import { test, expect } from './fixtures';
import { openHydrated } from './helpers';

// The pages' Content-Security-Policy (server/src/http/security_headers.rs):
// every page names a fresh nonce that its inline scripts carry, the page
// works under it (every other spec fails on a violation, tests/fixtures.ts),
// and a script or a style that lacks the nonce is refused and reported, with
// JavaScript or without.

const KRvK = '4k3/8/8/8/8/8/8/4K2R w - - 0 1';

test('every page type sends a policy whose nonce its inline scripts carry', async ({ request }) => {
  const seen = new Set<string>();
  for (const [path, status] of [
    ['/?fen=4k3/8/8/8/8/8/8/4K2R_w_-_-_0_1', 200],
    ['/practice?fen=4k3/8/8/8/8/8/8/4K2R_w_-_-_0_1', 200],
    ['/no-such-page', 404],
  ] as const) {
    const response = await request.get(path);
    expect(response.status(), path).toBe(status);
    const headers = response.headers();
    expect(headers['x-content-type-options'], path).toBe('nosniff');
    expect(headers['referrer-policy'], path).toBe('same-origin');
    const policy = headers['content-security-policy'] ?? '';
    expect(policy, path).toContain("frame-ancestors 'none'");
    const nonce = /'nonce-([^']+)'/.exec(policy)?.[1];
    expect(nonce, `${path}: ${policy}`).toBeTruthy();
    seen.add(nonce!);
    const html = await response.text();
    const tags = html.match(/<(script|style)\b[^>]*>/g) ?? [];
    expect(tags.length, path).toBeGreaterThan(0);
    for (const tag of tags) expect(tag, path).toContain(`nonce="${nonce}"`);
  }
  expect(seen.size, 'a nonce per answer').toBe(3);
});

test('a script without the nonce is refused, and the refusal is seen', async ({ page, cspViolations }) => {
  await openHydrated(page, KRvK);
  expect(cspViolations).toEqual([]);
  await page.evaluate(() => {
    const script = document.createElement('script');
    script.textContent = 'window.injected = true;';
    document.head.append(script);
  });
  await expect.poll(() => cspViolations.length).toBeGreaterThan(0);
  expect(await page.evaluate(() => (window as unknown as { injected?: boolean }).injected)).toBeUndefined();
  expect(cspViolations.join('\n')).toMatch(/script-src/);
  // Seen: the fixture would fail this test on it; it is the point here.
  cspViolations.length = 0;
});

test.describe('without JavaScript', () => {
  test.use({ javaScriptEnabled: false });

  test('a style without the nonce is refused, and the refusal is seen', async ({ page, cspViolations }) => {
    // The page as a tampered copy would come: its stylesheet without the nonce.
    await page.route(/\/\?fen=/, async (route) => {
      const response = await route.fetch();
      const html = (await response.text()).replace('<style nonce="', '<style data-nonce="');
      await route.fulfill({ response, body: html });
    });
    await page.goto('/?fen=4k3/8/8/8/8/8/8/4K2R_w_-_-_0_1');
    await expect.poll(() => cspViolations.length).toBeGreaterThan(0);
    expect(cspViolations.join('\n')).toMatch(/style-src/);
    cspViolations.length = 0;
  });
});
