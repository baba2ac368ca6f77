// docs/reference/configuration.md (`server.headers`): the pages' default CSP in Chromium. The
// bootstrap, the page's own scripts, the demo viewer and the dev console run and call the
// server without a single violation; a script injected later runs not at all; the page is
// framed only by the origins frame-ancestors names.
import { afterAll, beforeAll, expect, it } from "vitest";
import { createServer, type Server } from "node:http";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { DEMO_ROOT } from "../../dist/index.js";
import { startServer, type TestServer } from "../helpers/server.js";
import { closedPort } from "../helpers/http.js";
import { describeInBrowser, launchChromium } from "../helpers/browser.js";

const ROOT = join(import.meta.dirname, "../fixtures/headers-app");

// What runs inside the page: the test tsconfig has no DOM types.
/* eslint-disable @typescript-eslint/no-explicit-any */
declare const window: any;
declare const document: any;

/** The page's uncaught errors, and the console errors in which Chromium reports what CSP refused. */
const refusals = (errors: string[]) => errors.filter((error) => /^uncaught: |Content Security Policy|Refused to/i.test(error));

/** Records every CSP violation the page reports, from before its first script. */
const RECORD_VIOLATIONS = `
window.__violations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__violations.push({ directive: event.effectiveDirective, blocked: event.blockedURI, disposition: event.disposition });
});
`;

interface Opened {
  page: Page;
  /** Console errors (where Chromium also reports what CSP refused) and uncaught ones. */
  errors: string[];
  violations(): Promise<Array<{ directive: string; blocked: string; disposition: string }>>;
}

async function open(browser: Browser, url: string): Promise<Opened> {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  page.on("pageerror", (error) => errors.push(`uncaught: ${error.message}`));
  await page.addInitScript(RECORD_VIOLATIONS);
  await page.goto(url);
  return { page, errors, violations: () => page.evaluate(() => window.__violations) };
}

describeInBrowser("the default CSP in Chromium", () => {
  let browser: Browser;
  let app: TestServer;
  let demo: TestServer;
  /** Another origin, whose page frames the viewer. */
  let framer: Server;
  let framerUrl = "";
  const framing = (target: string) => `<!doctype html><html><body><iframe id="viewer" src="${target}"></iframe></body></html>`;

  beforeAll(async () => {
    browser = await launchChromium();
    app = await startServer({ root: ROOT, dev: true });
    // The demo's own upstream, which its boot hook starts on this port.
    const upstreamPort = await closedPort();
    process.env.DEMO_UPSTREAM_PORT = String(upstreamPort);
    const demoConfig = readFileSync(join(DEMO_ROOT, "app.config.json"), "utf8").replaceAll("127.0.0.1:8089", `127.0.0.1:${upstreamPort}`);
    demo = await startServer({ root: DEMO_ROOT, config: JSON.parse(demoConfig) });
    framer = createServer((req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end(framing(decodeURIComponent((req.url ?? "/").slice(1))));
    });
    await new Promise<void>((resolve) => framer.listen(0, "127.0.0.1", resolve));
    framerUrl = `http://127.0.0.1:${(framer.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await demo?.close();
    await new Promise((resolve) => framer?.close(resolve));
  });

  it("runs the bootstrap and the page's own scripts, and the page's calls work, with no violation", async () => {
    const { page, errors, violations } = await open(browser, app.url + "/");
    await page.waitForFunction(() => window.ownFile === "ran");
    const state = await page.evaluate(async () => ({
      ownInline: window.ownInline,
      ownFile: window.ownFile,
      token: typeof window.APP_CSRF_TOKEN,
      hello: await window.xserver.plugin.probe.hello("csp"),
    }));
    expect(state).toEqual({ ownInline: "ran", ownFile: "ran", token: "string", hello: { hello: "csp" } });
    expect(await violations()).toEqual([]);
    expect(refusals(errors)).toEqual([]);
    await page.close();
  });

  it("blocks a script injected later, inline or as an event handler, and reports it", async () => {
    const { page, violations } = await open(browser, app.url + "/");
    await page.evaluate(() => {
      const script = document.createElement("script");
      script.textContent = "window.injected = 'ran';";
      document.head.append(script);
      // Chromium runs neither handler's code until its event fires, and from Chromium 150 an
      // empty data: image fires error, not load: the handler is on both.
      document.body.insertAdjacentHTML("beforeend", `<img src="data:," onload="window.handler = 'ran'" onerror="window.handler = 'ran'">`);
    });
    await expect.poll(async () => (await violations()).length).toBeGreaterThanOrEqual(2);
    const outcome = await page.evaluate(() => ({ injected: window.injected, handler: window.handler }));
    expect(outcome).toEqual({ injected: undefined, handler: undefined });
    expect((await violations()).map((violation) => [violation.directive, violation.blocked, violation.disposition])).toEqual(
      expect.arrayContaining([
        ["script-src-elem", "inline", "enforce"],
        ["script-src-attr", "inline", "enforce"],
      ]),
    );
    await page.close();
  });

  it("keeps the demo viewer working: RPC, a stream and the proxy", async () => {
    const { page, errors, violations } = await open(browser, demo.url + "/");
    const press = async (title: string) => {
      const box = page.locator(".call", { has: page.locator("h2", { hasText: title }) });
      await box.locator("button").click();
      const out = box.locator("pre");
      await expect.poll(async () => (await out.textContent()) ?? "", { timeout: 10_000 }).not.toMatch(/^…?$/);
      return (await out.textContent()) ?? "";
    };
    expect(JSON.parse(await press("greeter.ping"))).toMatchObject({ pong: true });
    expect(JSON.parse(await press("clock.whoami")).session).toEqual(expect.any(String));
    const box = page.locator(".call", { has: page.locator("h2", { hasText: "greeter.tell" }) });
    await box.locator("button").click();
    await expect.poll(async () => (await box.locator("pre").textContent()) ?? "", { timeout: 10_000 }).toContain("result:");
    expect(JSON.parse(await press("proxy demo-api"))).toMatchObject({ path: "/api/hello", apiKeyReceived: true });
    expect(await violations()).toEqual([]);
    expect(refusals(errors)).toEqual([]);
    await page.close();
  });

  it("keeps the dev console working", async () => {
    const { page, errors, violations } = await open(browser, app.url + "/__app/dev");
    await page.locator('#methods tr[data-method="plugin/probe/hello"]').waitFor({ timeout: 10_000 });
    await page.locator("#logs li").first().waitFor({ timeout: 10_000 });
    expect(await page.locator("#error").isHidden()).toBe(true);
    expect(await violations()).toEqual([]);
    expect(refusals(errors)).toEqual([]);
    await page.close();
  });

  it("lets only the page's own origin frame it, unless frame-ancestors names another", async () => {
    const framedBy = async (server: TestServer) => {
      const { page } = await open(browser, `${framerUrl}/${encodeURIComponent(server.url + "/")}`);
      const frame = page.frames().find((candidate) => candidate !== page.mainFrame());
      await page.waitForLoadState("load");
      // A refused frame shows Chromium's error page instead, which has no #status.
      const shown = await frame?.evaluate(() => document.getElementById("status")?.textContent ?? null).catch(() => null);
      await page.close();
      return shown ?? null;
    };
    expect(await framedBy(app)).toBeNull();
    const embeddable = await startServer({ root: ROOT, config: { server: { headers: { contentSecurityPolicy: { directives: { "frame-ancestors": ["'self'", framerUrl] } } } } } });
    try {
      expect(await framedBy(embeddable)).toBe("headers fixture");
    } finally {
      await embeddable.close();
    }
  });
});

