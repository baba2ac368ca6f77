/**
 * HttpClient.stream through the real server's proxy (`/proxy/<alias>`) to an upstream that
 * writes NDJSON slowly: records reach the page while the upstream is still writing, a
 * silent upstream trips a `$stream` call's stall watchdog (whose stop ends the upstream
 * request), and the proxy's session refusal reaches AppSessionRecovery as for request().
 */
import { join } from "node:path";
import type { ServerResponse } from "node:http";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from "vitest";
import { describeInBrowser, launchChromium, PAGE_HARNESS, type PageWindow } from "../helpers/browser.js";
import { startServer, type TestServer } from "../helpers/server.js";
import { TestUpstream } from "../helpers/upstream.js";

const ROOT = join(import.meta.dirname, "../fixtures/proxy-app");

interface FeedOutcome {
  records: unknown[];
  /** `Date.now()` at which each record arrived, comparable with `feedWrites`. */
  clock: number[];
}

describeInBrowser("HttpClient.stream through the proxy", () => {
  let upstream: TestUpstream;
  let app: TestServer;
  let browser: Browser;
  let page: Page;
  /** When the upstream wrote each line of the last `/feed` answer. */
  let feedWrites: number[] = [];

  beforeAll(async () => {
    upstream = await new TestUpstream().start();
    upstream.routes.set("/feed", (_req, res) => {
      res.writeHead(200, { "content-type": "application/x-ndjson" });
      feedWrites = [];
      void writeSlowly(res, ['{"n":1}\n', '{"n":2}\n', '{"n":3}\n'], 500, feedWrites);
    });
    upstream.routes.set("/watch-silent", (_req, res) => {
      res.writeHead(200, { "content-type": "application/x-ndjson" });
      res.flushHeaders();
    });
    app = await startServer({ root: ROOT, config: { server: { secure: { proxies: { feed: { baseUrl: `${upstream.origin}/base` } } } } } });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await upstream?.close();
  });
  beforeEach(async () => {
    page = await (await browser.newContext()).newPage();
    await page.addInitScript(PAGE_HARNESS);
    await page.goto(app.url + "/");
  });
  afterEach(async () => {
    await page?.context().close();
  });

  it("hands each record to the page while the upstream is still writing", async () => {
    const out = await page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      const response = await new w.HttpClient({ proxy: "feed" }).stream("/feed", { method: "GET" });
      const result: FeedOutcome = { records: [], clock: [] };
      for await (const record of response.lines()) {
        result.records.push(record);
        result.clock.push(Date.now());
      }
      return result;
    });
    expect(out.records).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    // Each line was in the page before the upstream wrote the next: nothing held it back.
    expect(out.clock[0]!).toBeLessThan(feedWrites[1]!);
    expect(out.clock[1]!).toBeLessThan(feedWrites[2]!);
  });

  it("a silent upstream stalls a $stream call carried by a proxy client, and the stop reaches the upstream", async () => {
    const out = await page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      const feed = new w.HttpClient({ proxy: "feed" });
      // A transport of the page's own: RPC paths are mapped onto the proxied feed.
      const transport = {
        request: () => Promise.reject(new Error("not used")),
        stream: (_path: string, options: unknown) => feed.stream("/watch-silent", options),
      };
      const started = w.now();
      const handle = w.xserver.plugin.feed.$stream.tail(undefined, { client: transport, stallTimeoutMs: 400 });
      const result = await w.settle(handle.result);
      return { result, elapsed: w.now() - started };
    });
    expect(out.result).toMatchObject({ ok: false, name: "StreamError", code: "RPC_STREAM_STALLED" });
    expect(out.elapsed).toBeGreaterThan(350);
    expect(out.elapsed).toBeLessThan(5000);
    await expect(withTimeout(waitForClose(upstream, "/base/watch-silent"), 3000)).resolves.toBe(true);
  });

  it("a proxy refusal of the session rejects stream() and tells AppSessionRecovery, as request() does", async () => {
    await page.context().clearCookies();
    const out = await page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      const calls: unknown[] = [];
      w.AppSessionRecovery = { handle: (info: unknown) => calls.push(info) };
      const result = await w.settle(new w.HttpClient({ proxy: "feed" }).stream("/feed"));
      return { result, calls };
    });
    expect(out.result).toMatchObject({ ok: false, name: "HttpError", status: 401, code: "PROXY_NO_SESSION" });
    expect(out.calls).toEqual([expect.objectContaining({ code: "PROXY_NO_SESSION", source: "proxy" })]);
  });
});

async function writeSlowly(res: ServerResponse, lines: string[], gapMs: number, writes: number[]): Promise<void> {
  for (const [index, line] of lines.entries()) {
    if (index > 0) await new Promise((resolve) => setTimeout(resolve, gapMs));
    if (res.destroyed) return;
    writes.push(Date.now());
    res.write(line);
  }
  res.end();
}

async function waitForClose(upstream: TestUpstream, path: string): Promise<boolean> {
  while (!upstream.closed.has(path)) await new Promise((resolve) => setTimeout(resolve, 20));
  await upstream.closed.get(path);
  return true;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | "timeout"> {
  return Promise.race([promise, new Promise<"timeout">((resolve) => setTimeout(() => resolve("timeout"), ms))]);
}
