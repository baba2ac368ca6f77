// docs/guides/server-methods.md "Dev mode": the dev console at /__app/dev, in real Chromium — status, the methods of
// the fixture plugin with their policies, and log lines arriving live; absent without dev mode.
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../helpers/server.js";
import { rpc } from "../helpers/http.js";
import { REPO } from "../helpers/process.js";
import { CLUSTER_APP } from "../helpers/cluster.js";
import { describeInBrowser, launchChromium } from "../helpers/browser.js";

const SCREENSHOT = join(REPO, "test-results", "dev-console.png");

describe("dev console route", () => {
  it("answers 404 without dev mode", async () => {
    const server = await startServer({ root: CLUSTER_APP });
    try {
      for (const path of ["/__app/dev", "/__app/dev/console.js"]) {
        const answer = await fetch(server.url + path);
        expect(answer.status).toBe(404);
      }
    } finally {
      await server.close();
    }
  });

  it("serves only its own assets, with the viewer bootstrap in the page", async () => {
    const server = await startServer({ root: CLUSTER_APP, dev: true });
    try {
      const page = await fetch(server.url + "/__app/dev");
      expect(page.status).toBe(200);
      expect(page.headers.get("set-cookie")).toMatch(/^app_session=/);
      const html = await page.text();
      expect(html).toMatch(/window\.APP_CSRF_TOKEN = "[^"]+";<\/script><script nonce="[^"]+" src="\/__app\/client\.js">/);
      expect((await fetch(server.url + "/__app/dev/console.js")).headers.get("content-type")).toMatch(/^text\/javascript/);
      for (const path of ["/__app/dev/index.html", "/__app/dev/..%2f..%2fpackage.json", "/__app/dev/%2e%2e"]) {
        expect((await fetch(server.url + path)).status).toBe(404);
      }
    } finally {
      await server.close();
    }
  });
});

describeInBrowser("dev console in Chromium", () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  beforeAll(async () => {
    server = await startServer({ root: CLUSTER_APP, dev: true });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it("shows status, the fixture plugin's methods and live logs", async () => {
    await page.goto(server.url + "/__app/dev");
    await page.locator("#workers tr").first().waitFor();
    expect(await page.locator("#mode").textContent()).toBe("single process");
    expect(await page.locator("#workers tr").getAttribute("data-pid")).toBe(String(process.pid));

    const methods = await page.locator("#methods tr").evaluateAll((rows) => rows.map((row) => row.getAttribute("data-method")));
    expect(methods).toEqual(expect.arrayContaining(["plugin/cl/pid", "plugin/cl/slow", "plugin/cl/limited", "plugin/cl/fail", "plugin/cl/note"]));
    const limited = await page.locator('#methods tr[data-method="plugin/cl/limited"]').textContent();
    expect(limited).toContain("2 / 4");
    expect(limited).toContain("cl-upstream");
    expect(await page.locator('#methods tr[data-method="plugin/cl/slow"]').textContent()).toContain("public");

    // A line logged after the page opened arrives through polling. Its text is shown as
    // text: markup in a log line must not become elements.
    await rpc(server.url, "plugin/cl/slow", { body: { args: [1] } });
    const marker = `<img src=x id=injected>live-${Date.now()}`;
    const viewer = await page.evaluate(() => (globalThis as unknown as { APP_CSRF_TOKEN: string }).APP_CSRF_TOKEN);
    const cookies = await page.context().cookies();
    const cookie = cookies.map((entry) => `${entry.name}=${entry.value}`).join("; ");
    expect((await rpc(server.url, "plugin/cl/note", { viewer: { cookie, csrf: viewer }, body: { args: [marker] } })).status).toBe(200);
    await page.locator("#logs li", { hasText: `note ${marker}` }).waitFor({ timeout: 5_000 });
    expect(await page.locator("#injected").count()).toBe(0);
    // The line shows the plugin it came from beside its own sequence number.
    const noteRow = page.locator("#logs li", { hasText: `note ${marker}` });
    expect(await noteRow.textContent()).toContain("itemId=cl");
    expect(await noteRow.getAttribute("data-id")).toMatch(/^\d+$/);
    expect(await page.locator("#logs li", { hasText: "rpc.complete" }).count()).toBeGreaterThan(0);
    expect(await page.locator("#error").isHidden()).toBe(true);

    mkdirSync(join(REPO, "test-results"), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    const png = readFileSync(SCREENSHOT);
    expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    expect(png.length).toBeGreaterThan(20_000);
  });
});
