/**
 * A real server in this process and Chromium for a browser-client test file: the server's
 * viewer page, opened with the init scripts given, one for the whole file or a fresh one
 * (its own browser context: no cookies, no globals) for every test.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import type { CreateServerOptions } from "../../dist/index.js";
import { launchChromium } from "./browser.js";
import { startServer, type TestServer } from "./server.js";

export interface ServerPage {
  app: TestServer;
  /** The viewer page; with `pagePer: "test"`, the current test's. */
  page: Page;
}

export interface ServerPageOptions {
  /** Scripts run in the page before its own, in order (PAGE_HARNESS, STREAM_PAGE_HELPERS, …). */
  initScripts?: readonly string[];
  pagePer?: "file" | "test";
}

/** Starts the server and Chromium before the file's tests and closes both after them. Its fields are there once `beforeAll` has run. */
export function useServerPage(server: CreateServerOptions, { initScripts = [], pagePer = "file" }: ServerPageOptions = {}): ServerPage {
  const fixture = {} as ServerPage;
  let browser: Browser | undefined;
  const open = async (): Promise<void> => {
    if (browser === undefined) throw new Error("browser not started");
    fixture.page = await (await browser.newContext()).newPage();
    for (const script of initScripts) await fixture.page.addInitScript(script);
    await fixture.page.goto(fixture.app.url + "/");
  };

  beforeAll(async () => {
    fixture.app = await startServer(server);
    browser = await launchChromium();
    if (pagePer === "file") await open();
  });
  afterAll(async () => {
    await browser?.close();
    await fixture.app?.close();
  });
  if (pagePer === "test") {
    beforeEach(open);
    afterEach(async () => {
      await fixture.page?.context().close();
    });
  }
  return fixture;
}
