import { test as base, expect, type Browser, type BrowserContext } from '@playwright/test';

/**
 * Playwright's `test` with the server's Content-Security-Policy watched:
 * the pages are served with it (server/src/http/security_headers.rs), and a
 * test fails if the browser refuses anything under it, in any context the
 * test uses (its own `context`, or one it makes with `browser.newContext`).
 * Specs import `test` and `expect` from here instead of `@playwright/test`
 * (everything else is re-exported).
 *
 * Two witnesses, because neither sees everything: chromium's own console
 * line ("Refused to execute inline script because it violates the following
 * Content Security Policy directive: ..."), which comes without JavaScript
 * too; and the page's `securitypolicyviolation` event, which names the
 * directive and the blocked resource.
 */
export * from '@playwright/test';

async function watch(context: BrowserContext, violations: string[]): Promise<void> {
  context.on('console', (message) => {
    const text = message.text();
    if (/content.security.policy/i.test(text)) {
      violations.push(`${message.page()?.url() ?? '?'}: ${text}`);
    }
  });
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      console.error(
        `Content Security Policy violation: ${event.violatedDirective} refused ` +
          `${event.blockedURI || 'inline'} (${event.sourceFile}:${event.lineNumber})`,
      );
    });
  });
}

export const test = base.extend<{ cspViolations: string[] }>({
  cspViolations: [
    async ({ context, browser }, use) => {
      const violations: string[] = [];
      await watch(context, violations);
      // Contexts the test makes itself are watched too.
      const newContext = browser.newContext;
      browser.newContext = async function (this: Browser, ...args: Parameters<Browser['newContext']>) {
        const made = await newContext.apply(this, args);
        await watch(made, violations);
        return made;
      };
      try {
        await use(violations);
      } finally {
        browser.newContext = newContext;
      }
      expect(violations, 'Content Security Policy violations').toEqual([]);
    },
    { auto: true },
  ],
});

export { expect };
