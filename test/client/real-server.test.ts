/**
 * The browser client against the real server (not the fixture): window.xserver and
 * AppElement calling real RPC methods with the session cookie and CSRF token the viewer
 * page handed out, errors as the gateway answers them, and the dev routes.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { startServer, type TestServer } from "../helpers/server.js";
import { describeInBrowser, launchChromium, type PageWindow } from "../helpers/browser.js";

const ROOT = join(import.meta.dirname, "../fixtures/gateway-app");

describeInBrowser("browser client against the real server", () => {
  let app: TestServer;
  let browser: Browser;
  let page: Page;
  beforeAll(async () => {
    app = await startServer({ root: ROOT, dev: true });
    browser = await launchChromium();
    page = await browser.newPage();
    await page.goto(app.url + "/");
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it("the viewer page gets the client script and a CSRF token", async () => {
    const globals = await page.evaluate(() => {
      const w = globalThis as unknown as PageWindow;
      return { token: typeof w.APP_CSRF_TOKEN, xserver: typeof w.xserver, HttpClient: typeof w.HttpClient, AppElement: typeof w.AppElement };
    });
    expect(globals).toEqual({ token: "string", xserver: "object", HttpClient: "function", AppElement: "function" });
  });

  it("xserver calls a session-only method with the cookie and CSRF header, resolving to result", async () => {
    const result = (await page.evaluate(() => {
      const w = globalThis as unknown as PageWindow;
      return w.xserver.plugin.matrix.echo({ hello: "server" });
    })) as { args: unknown[]; session: { id: string }; kind: string };
    expect(result.args).toEqual([{ hello: "server" }]);
    expect(result.kind).toBe("plugin");
    expect(result.session.id).toEqual(expect.any(String));
  });

  it("an error answer rejects with status, code and details", async () => {
    const outcome = await page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      try {
        await w.xserver.plugin.matrix.conflict();
        return null;
      } catch (error) {
        const e = error as { status: number; code: string; details: unknown; message: string };
        return { status: e.status, code: e.code, details: e.details, message: e.message };
      }
    });
    expect(outcome).toEqual({ status: 409, code: "NOTES_CONFLICT", details: { version: 3 }, message: "That note changed meanwhile" });
  });

  it("AppElement.server() with its own client: the client decides the auth payload", async () => {
    const result = await page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      w.AppUser.setSecret("t0k", "token", "strict");
      const client = new w.HttpClient({
        auth: { contextId: "strict", types: ["token"], handlers: { token: ({ secret }: { secret: string }) => ({ "x-token": secret }) } },
      });
      const element = new w.AppElement({ kind: "plugin", id: "matrix" });
      const withToken = await element.server({ contextId: "strict", client }).sessionOnly();
      let refused = "";
      try {
        await element.server({ contextId: "strict" }).sessionOnly();
      } catch (error) {
        refused = (error as { code: string }).code;
      }
      return { user: (withToken as { user: unknown }).user, refused };
    });
    expect(result).toEqual({ user: { sub: "token-user" }, refused: "RPC_AUTH_FAILED" });
  });

  it("the dev routes answer through xserver.server.core and the dev alias", async () => {
    const result = (await page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      const status = await w.xserver.server.core.getStatus();
      const logs = await w.xserver.server.core.getLogs({ afterId: 0, limit: 5 });
      const alias = await w.xserver.server.dev.getLogs({ afterId: logs.lastId, limit: 5 });
      return { pid: status.pid, dev: status.dev, count: logs.entries.length, lastId: logs.lastId, aliasFirst: alias.entries[0]?.id };
    })) as { pid: number; dev: boolean; count: number; lastId: number; aliasFirst: number };
    expect(result.pid).toBe(process.pid);
    expect(result.dev).toBe(true);
    expect(result.count).toBe(5);
    expect(result.aliasFirst).toBe(result.lastId + 1);
  });
});
