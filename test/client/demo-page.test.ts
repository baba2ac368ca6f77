/**
 * The bundled demo viewer in Chromium: every button, as a newcomer would press them after
 * `npm start` — RPC calls of each exposure through window.xserver, both proxy aliases
 * through HttpClient, the login-like flow, and recovery from a 401 by refresh and replay,
 * shown on the page; and what the page looks like before and after: no failed request
 * (the favicon), no empty output boxes, long lines wrapped.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { DEMO_ROOT } from "../../dist/index.js";
import { startServer, type TestServer } from "../helpers/server.js";
import { closedPort } from "../helpers/http.js";
import { describeInBrowser, launchChromium } from "../helpers/browser.js";

describeInBrowser("the demo viewer", () => {
  let app: TestServer;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];
  /** Every answer the browser got with a 4xx or 5xx status: a newcomer sees each in the console. */
  const failedRequests: string[] = [];

  beforeAll(async () => {
    const upstreamPort = await closedPort();
    process.env.DEMO_UPSTREAM_PORT = String(upstreamPort);
    const config = readFileSync(join(DEMO_ROOT, "app.config.json"), "utf8").replaceAll("127.0.0.1:8089", `127.0.0.1:${upstreamPort}`);
    app = await startServer({ root: DEMO_ROOT, config: JSON.parse(config) });
    browser = await launchChromium();
    page = await browser.newPage();
    page.on("pageerror", (error) => pageErrors.push(error.message));
    page.on("response", (response) => {
      if (response.status() >= 400) failedRequests.push(`${response.status()} ${new URL(response.url()).pathname}`);
    });
    await page.goto(app.url + "/");
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  /** Presses the button of the call whose title starts with `title`; returns its output. */
  async function press(title: string): Promise<{ text: string; error: boolean }> {
    const box = page.locator(".call", { has: page.locator("h2", { hasText: title }) });
    await box.locator("button").click();
    const out = box.locator("pre");
    await expect.poll(async () => (await out.textContent()) ?? "", { timeout: 10_000 }).not.toMatch(/^…?$/);
    return { text: (await out.textContent()) ?? "", error: (await out.getAttribute("class")) === "error" };
  }

  it("loads with no failed request, and has the /favicon.ico a browser asks for", async () => {
    await page.waitForLoadState("networkidle");
    expect(failedRequests).toEqual([]);
    // A headed browser asks for /favicon.ico on its own after the load (headless Chromium
    // does not): a 404 there is the first thing a newcomer's console shows.
    const icon = await page.evaluate(async () => {
      const response = await fetch("/favicon.ico");
      return { status: response.status, type: response.headers.get("content-type"), bytes: (await response.arrayBuffer()).byteLength };
    });
    expect(icon).toEqual({ status: 200, type: expect.stringMatching(/icon/), bytes: expect.any(Number) });
    expect(icon.bytes).toBeGreaterThan(0);
  });

  it("shows no empty output box before a click", async () => {
    const boxes = page.locator(".call pre");
    expect(await boxes.count()).toBeGreaterThan(5);
    for (const box of await boxes.all()) expect(await box.isVisible()).toBe(false);
  });

  it("answers every RPC button with the exposure it shows", async () => {
    expect(JSON.parse((await press("greeter.ping")).text)).toMatchObject({ pong: true });
    expect(JSON.parse((await press("greeter.greet")).text)).toBe("Hello, Ada!");
    expect(JSON.parse((await press("clock.now")).text)).toHaveProperty("iso");
    expect(JSON.parse((await press("clock.whoami")).text).session).toEqual(expect.any(String));
    const refused = await press("clock.partnerReport — verifier-only, without");
    expect(refused).toEqual({ error: true, text: expect.stringContaining("401 RPC_AUTH_FAILED") });
    expect(JSON.parse((await press("clock.partnerReport — verifier-only, with X-Demo-Key")).text)).toMatchObject({ for: "partner", days: 3 });
  });

  it("uploads a file to a method and downloads a report from another", async () => {
    const counted = JSON.parse((await press("greeter.countLines")).text);
    expect(counted).toMatchObject({ name: "made-up.txt", type: "text/plain", size: 14, lines: 3, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    const box = page.locator(".call", { has: page.locator("h2", { hasText: "greeter.countLines" }) });
    await box.locator("input[type=file]").setInputFiles({ name: "picked.csv", mimeType: "text/csv", buffer: Buffer.from("a,b\n1,2\n3,4") });
    await box.locator("button").click();
    await expect.poll(async () => (await box.locator("pre").textContent()) ?? "", { timeout: 10_000 }).toContain("picked.csv");
    expect(JSON.parse((await box.locator("pre").textContent())!)).toMatchObject({ name: "picked.csv", type: "text/csv", lines: 3 });
    const report = await press("greeter.exportReport");
    expect(report.error).toBe(false);
    expect(report.text).toMatch(/^text\/plain; charset=utf-8, \d+ bytes\n\nDemo report\n=+\nday: \d{4}-\d{2}-\d{2}\nsession: yes\n/);
  });

  it("shows a streaming method's words as they arrive, then its result", async () => {
    const box = page.locator(".call", { has: page.locator("h2", { hasText: "greeter.tell" }) });
    await box.locator("button").click();
    const out = box.locator("pre");
    // Some words are on the page while the method is still writing the rest.
    await expect.poll(async () => (await out.textContent()) ?? "", { timeout: 10_000 }).toMatch(/^Once upon/);
    expect(await out.textContent()).not.toContain("result:");
    await expect.poll(async () => (await out.textContent()) ?? "", { timeout: 10_000 }).toContain("result:");
    const text = (await out.textContent()) ?? "";
    expect(text).toMatch(/^Once upon a time .* word by word\.\n\nresult: /);
    expect(JSON.parse(text.slice(text.indexOf("result: ") + 8))).toMatchObject({ words: 20 });
    // The story's long line wraps inside its box instead of running past it.
    const { scrollWidth, clientWidth } = await out.evaluate((element) => ({ scrollWidth: element.scrollWidth, clientWidth: element.clientWidth }));
    expect(scrollWidth).toBeLessThanOrEqual(clientWidth);
  });

  it("reaches the upstream through both proxy aliases, logs in, and recovers from a 401", async () => {
    const api = JSON.parse((await press("proxy demo-api")).text);
    // The card sends tag=a and tag=b: the upstream shows both, not the last one only.
    expect(api).toMatchObject({ path: "/api/hello", apiKeyReceived: true, query: { tag: ["a", "b"] } });

    expect(JSON.parse((await press("proxy demo-secure — log in")).text)).toEqual({ loggedInAs: "ada" });
    const secure = JSON.parse((await press("proxy demo-secure — call with the JWT")).text);
    expect(secure).toMatchObject({ path: "/secure/me", apiKeyReceived: true, user: "ada" });

    // The refresh is shown, not only its outcome.
    const recovered = JSON.parse((await press("proxy demo-secure — spoil the token")).text);
    expect(recovered).toEqual({
      refresh: ["401 from demo-secure: requestSecretUpdate asked for a new jwt", "logged in again as ada: new token stored in AppUser, request replayed"],
      answer: expect.objectContaining({ path: "/secure/me", user: "ada" }),
    });
    expect(pageErrors).toEqual([]);

    // The README's screenshot (docs/assets/demo.png) is this one: SCREENSHOT_TO_DOCS=1 writes
    // it there; otherwise it goes to test-results/, to look at after a run.
    // The docs' copy shows the first screen, the one a newcomer sees.
    const toDocs = process.env.SCREENSHOT_TO_DOCS === "1";
    const target = toDocs ? "../../docs/assets" : "../../test-results";
    mkdirSync(join(import.meta.dirname, target), { recursive: true });
    await page.setViewportSize({ width: 1000, height: 1100 });
    await page.evaluate("window.scrollTo(0, 0)");
    await page.screenshot({ path: join(import.meta.dirname, target, "demo.png"), fullPage: !toDocs });
  });
});
