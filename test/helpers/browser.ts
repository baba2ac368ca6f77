/**
 * Headless Chromium for the browser-client tests. Without a Chromium binary the tests
 * are skipped, except in CI (`CI=true`), where a missing browser must fail the run
 * rather than pass it silently.
 */
import { existsSync } from "node:fs";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe } from "vitest";
import { startFixtureServer, type FixtureOptions, type FixtureServer } from "./fixture-server.js";

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const chromiumFound = existsSync(CHROMIUM_PATH);
const mustRun = process.env.CI === "true";

/** `describe`, or `describe.skip` when Chromium is missing outside CI. */
export const describeInBrowser: typeof describe = chromiumFound || mustRun ? describe : (describe.skip as typeof describe);

export async function launchChromium(): Promise<Browser> {
  if (!chromiumFound) {
    throw new Error(`Chromium not found at ${CHROMIUM_PATH}: install it (apt-get install chromium) or set CHROMIUM_PATH`);
  }
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/**
 * The page's globals as the tests use them. Loose on purpose: the test tsconfig has no
 * DOM types and must not compile src/client, so the page is described here, not imported.
 */
/* eslint-disable @typescript-eslint/no-explicit-any */
export interface PageWindow {
  HttpClient: any;
  HttpError: any;
  AppUser: any;
  AppUserStore: any;
  AppElement: any;
  xserver: any;
  AppSessionRecovery?: any;
  APP_CSRF_TOKEN?: string;
  fetch: (input: any, init?: any) => Promise<any>;
  document: any;
  customElements: any;
  HTMLElement: any;
  location: any;
  /** Installed by the harness: a promise's outcome as plain data. */
  settle: (promise: Promise<unknown>) => Promise<Settled>;
  /** Installed by the harness: ms since page start. */
  now: () => number;
}
/* eslint-enable @typescript-eslint/no-explicit-any */

export type Settled =
  | { ok: true; value: unknown }
  | {
      ok: false;
      name: string;
      message: string;
      status?: number;
      code?: string;
      details?: unknown;
      body?: unknown;
      isHttpError: boolean;
    };

// Runs in the page before its own scripts: turns a rejection into data that survives
// the trip back to Node (an Error loses its fields on the way). Exported for pages a test
// opens on another server (`page.addInitScript(PAGE_HARNESS)`).
export const PAGE_HARNESS = `
window.settle = async (promise) => {
  try { return { ok: true, value: await promise }; }
  catch (e) {
    return { ok: false, name: e && e.name, message: e && e.message, status: e && e.status, code: e && e.code,
      details: e && e.details, body: e && e.body, isHttpError: !!(window.HttpError && e instanceof window.HttpError) };
  }
};
window.now = () => performance.now();
`;

export interface BrowserFixture {
  server: FixtureServer;
  /** A second origin, for cross-origin checks. */
  other: FixtureServer;
  page: Page;
  /** Console messages of the current page, as `type: text`. */
  console: { type: string; text: string }[];
  warnings(): string[];
  /** Opens a fresh page (fresh AppUser, handlers, xserver) on the viewer page or `path`. */
  open(path?: string): Promise<Page>;
}

/** Starts the servers and Chromium for a test file; each test gets a fresh page. */
export function useBrowserFixture(options: { other?: FixtureOptions } = {}): BrowserFixture {
  let browser: Browser | undefined;
  const fixture = { console: [] as { type: string; text: string }[] } as unknown as BrowserFixture;
  fixture.warnings = () => fixture.console.filter((m) => m.type === "warning").map((m) => m.text);
  fixture.open = async (path = "/") => {
    if (browser === undefined) throw new Error("browser not started");
    await fixture.page?.context().close();
    const context = await browser.newContext();
    const page = await context.newPage();
    fixture.console.length = 0;
    page.on("console", (message) => fixture.console.push({ type: message.type(), text: message.text() }));
    await page.addInitScript(PAGE_HARNESS);
    await page.goto(fixture.server.origin + path);
    fixture.page = page;
    return page;
  };

  beforeAll(async () => {
    fixture.server = await startFixtureServer();
    fixture.other = await startFixtureServer({ cors: true, ...options.other });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await fixture.server?.close();
    await fixture.other?.close();
  });
  beforeEach(async () => {
    fixture.server.reset();
    fixture.other.reset();
    await fixture.open();
  });
  afterEach(async () => {
    await fixture.page?.context().close();
  });
  return fixture;
}
