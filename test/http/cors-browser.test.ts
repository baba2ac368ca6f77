// docs/guides/browser.md "Cross-origin viewers" in Chromium: a page of a listed origin calls the gateway
// and the proxy with credentials and reads the answers, streams included; a page of an
// unlisted origin reads nothing. Both pages are on 127.0.0.1, so they are on the server's
// site and the SameSite=Lax cookie goes along, as between two subdomains of one site.
import { afterAll, beforeAll, expect, it } from "vitest";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { startServer, type TestServer } from "../helpers/server.js";
import { describeInBrowser, launchChromium } from "../helpers/browser.js";
import { TestUpstream } from "../helpers/upstream.js";

const ROOT = join(import.meta.dirname, "../fixtures/headers-app");

// What runs inside the page: the test tsconfig has no DOM types.
/* eslint-disable @typescript-eslint/no-explicit-any */
declare const window: any;

/** A page of its own origin, empty: the test drives it with fetch. */
async function pageServer(): Promise<{ server: Server; origin: string }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.end("<!doctype html><html><body>another origin</body></html>");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as { port: number }).port}` };
}

/** In the page: a credentialed call to the server, as a cross-origin viewer makes it. */
const CALL = async ({ url, method, headers, body }: { url: string; method: string; headers: Record<string, string>; body?: string }) => {
  try {
    const response = await window.fetch(url, { method, headers, body, credentials: "include" });
    return { status: response.status, body: await response.text() };
  } catch (error: any) {
    return { failed: String(error?.name) };
  }
};

describeInBrowser("CORS in Chromium", () => {
  let browser: Browser;
  let upstream: TestUpstream;
  let app: TestServer;
  let listed: { server: Server; origin: string };
  let unlisted: { server: Server; origin: string };
  let csrf = "";

  beforeAll(async () => {
    browser = await launchChromium();
    upstream = await new TestUpstream().start();
    listed = await pageServer();
    unlisted = await pageServer();
    app = await startServer({ root: ROOT, config: { server: { allowedOrigins: [listed.origin], secure: { proxies: { up: { baseUrl: upstream.origin } } } } } });
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await upstream?.close();
    for (const page of [listed, unlisted]) await new Promise((resolve) => page?.server.close(resolve));
  });

  /** A fresh browser context that visited the server's page first: it has the session cookie, and the test hands the page the token. */
  async function openAt(origin: string): Promise<Page> {
    const context = await browser.newContext();
    const viewer = await context.newPage();
    await viewer.goto(app.url + "/");
    csrf = await viewer.evaluate(() => window.APP_CSRF_TOKEN);
    const page = await context.newPage();
    await page.goto(origin + "/");
    return page;
  }

  it("lets a listed origin call a session-bound method, a stream and the proxy, with credentials", async () => {
    const page = await openAt(listed.origin);
    const headers = { "content-type": "application/json", "x-app-csrf": csrf };
    const hello = await page.evaluate(CALL, { url: `${app.url}/__rpc/plugin/probe/hello`, method: "POST", headers, body: JSON.stringify({ args: ["cors"] }) });
    expect(hello).toMatchObject({ status: 200, body: JSON.stringify({ result: { hello: "cors" } }) });
    const stream = await page.evaluate(CALL, {
      url: `${app.url}/__rpc/plugin/probe/words`,
      method: "POST",
      headers: { ...headers, "x-app-rpc-stream": "1" },
      body: JSON.stringify({ args: [2] }),
    });
    expect(stream).toMatchObject({ status: 200 });
    expect((stream as { body: string }).body.trim().split("\n").map((line) => JSON.parse(line))).toMatchObject([
      { event: { word: "w0" } },
      { event: { word: "w1" } },
      { done: true, result: { words: 2 } },
    ]);
    const proxied = await page.evaluate(CALL, { url: `${app.url}/proxy/up/items`, method: "PUT", headers, body: "{}" });
    expect(proxied).toMatchObject({ status: 200 });
    expect(JSON.parse((proxied as { body: string }).body)).toMatchObject({ method: "PUT", url: "/items" });
    // A refusal is readable too, so the page can tell why.
    const refused = await page.evaluate(CALL, { url: `${app.url}/__rpc/plugin/probe/hello`, method: "POST", headers: { ...headers, "x-app-csrf": "wrong" }, body: "{}" });
    expect(refused).toMatchObject({ status: 403, body: expect.stringContaining("RPC_BAD_CSRF") });
    await page.context().close();
  });

  it("lets an unlisted origin read nothing, not even a public method's answer", async () => {
    const page = await openAt(unlisted.origin);
    const open = await page.evaluate(CALL, { url: `${app.url}/__rpc/plugin/probe/open`, method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    const hello = await page.evaluate(CALL, { url: `${app.url}/__rpc/plugin/probe/hello`, method: "POST", headers: { "content-type": "application/json", "x-app-csrf": csrf }, body: "{}" });
    const proxied = await page.evaluate(CALL, { url: `${app.url}/proxy/up/items`, method: "GET", headers: { "x-app-csrf": csrf } });
    expect([open, hello, proxied]).toEqual([{ failed: "TypeError" }, { failed: "TypeError" }, { failed: "TypeError" }]);
    expect(upstream.find("/items").filter((seen) => seen.method === "GET")).toEqual([]);
    await page.context().close();
  });
});
