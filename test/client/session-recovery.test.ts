/**
 * `window.AppSessionRecovery` in Chromium against the real server (docs/guides/browser.md
 * "Session recovery"): the server's own refusals of a missing session or a stale CSRF
 * token, on RPC calls and on proxy calls, reach the page's hook once per failed call;
 * other failures do not, and the hook never changes the call's rejection.
 */
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from "vitest";
import { describeInBrowser, launchChromium, PAGE_HARNESS, type PageWindow, type Settled } from "../helpers/browser.js";
import { startServer, type TestServer } from "../helpers/server.js";

const ROOT = join(import.meta.dirname, "../fixtures/gateway-app");

interface Recorded {
  status: number | undefined;
  code: string;
  message: string;
  source: string;
}

/** The page with a hook that records what it is handed. */
interface RecordingWindow extends PageWindow {
  recoveryCalls: Recorded[];
}

// Installs a recording hook before the page's own scripts run.
const RECORDING_HOOK = `
window.recoveryCalls = [];
window.AppSessionRecovery = { handle(info) { window.recoveryCalls.push(info); return true; } };
`;

const NO_SESSION = { status: 401, code: "RPC_NO_SESSION", message: "A valid session is required" };
const BAD_CSRF = { status: 403, code: "RPC_BAD_CSRF", message: "Missing or invalid CSRF token" };

describeInBrowser("window.AppSessionRecovery against the real server", () => {
  let app: TestServer;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    app = await startServer({ root: ROOT });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });
  beforeEach(async () => {
    const context = await browser.newContext();
    page = await context.newPage();
    pageErrors.length = 0;
    page.on("pageerror", (error) => pageErrors.push(error.message));
    await page.addInitScript(PAGE_HARNESS);
    await page.addInitScript(RECORDING_HOOK);
    await page.goto(app.url + "/");
  });
  afterEach(async () => {
    await page?.context().close();
  });

  /** The viewer's session is gone: the cookie the page was served with is dropped. */
  const loseSession = (): Promise<void> => page.context().clearCookies();

  it("is called with { status, code, message, source: 'rpc' } when an xserver call has no session", async () => {
    await loseSession();
    const result = await page.evaluate(async () => {
      const w = globalThis as unknown as RecordingWindow;
      const settled = await w.settle(w.xserver.plugin.matrix.echo({ hello: 1 }));
      return { settled, calls: w.recoveryCalls };
    });
    expect(result.settled).toMatchObject({ ok: false, name: "HttpError", ...NO_SESSION, isHttpError: true });
    expect(result.calls).toEqual([{ ...NO_SESSION, source: "rpc" }]);
  });

  it("is called on a stale CSRF token, for xserver and AppElement calls alike, once per failed call", async () => {
    const result = await page.evaluate(async () => {
      const w = globalThis as unknown as RecordingWindow;
      w.APP_CSRF_TOKEN = "stale-token";
      const first = await w.settle(w.xserver.plugin.matrix.echo());
      const second = await w.settle(new w.AppElement({ kind: "plugin", id: "matrix" }).server().echo());
      return { first, second, calls: w.recoveryCalls };
    });
    expect(result.first).toMatchObject({ ok: false, ...BAD_CSRF });
    expect(result.second).toMatchObject({ ok: false, ...BAD_CSRF });
    expect(result.calls).toEqual([
      { ...BAD_CSRF, source: "rpc" },
      { ...BAD_CSRF, source: "rpc" },
    ]);
  });

  it("is called with source 'proxy' when the proxy refuses a proxy-mode HttpClient's session or CSRF token", async () => {
    const result = await page.evaluate(async () => {
      const w = globalThis as unknown as RecordingWindow;
      const proxied = new w.HttpClient({ proxy: "weather" });
      w.APP_CSRF_TOKEN = "stale-token";
      const badCsrf = await w.settle(proxied.get("/forecast"));
      return { badCsrf, calls: [...w.recoveryCalls] };
    });
    await loseSession();
    const afterLoss = await page.evaluate(async () => {
      const w = globalThis as unknown as RecordingWindow;
      w.recoveryCalls.length = 0;
      const noSession = await w.settle(new w.HttpClient({ proxy: "weather" }).post("/forecast", { city: "Oslo" }));
      return { noSession, calls: w.recoveryCalls };
    });
    const proxyBadCsrf = { status: 403, code: "PROXY_BAD_CSRF", message: "Missing or invalid CSRF token" };
    const proxyNoSession = { status: 401, code: "PROXY_NO_SESSION", message: "A valid session is required" };
    expect(result.badCsrf).toMatchObject({ ok: false, ...proxyBadCsrf });
    expect(result.calls).toEqual([{ ...proxyBadCsrf, source: "proxy" }]);
    expect(afterLoss.noSession).toMatchObject({ ok: false, ...proxyNoSession });
    expect(afterLoss.calls).toEqual([{ ...proxyNoSession, source: "proxy" }]);
  });

  it("is not called for other failures: other 401s and 403s, app errors, an unknown proxy alias, plain requests", async () => {
    const result = await page.evaluate(async () => {
      const w = globalThis as unknown as RecordingWindow;
      const outcomes: Settled[] = [
        await w.settle(w.xserver.plugin.matrix.conflict()),
        await w.settle(w.xserver.plugin.matrix.sessionOnly(undefined, { contextId: "strict" })),
        await w.settle(w.xserver.plugin.nowhere.method()),
        await w.settle(new w.HttpClient({ proxy: "nowhere" }).get("/x")),
      ];
      return { codes: outcomes.map((o) => (o.ok ? "ok" : o.code)), calls: [...w.recoveryCalls] };
    });
    expect(result.codes).toEqual(["NOTES_CONFLICT", "RPC_AUTH_FAILED", "RPC_UNKNOWN_TARGET", "PROXY_UNKNOWN_ALIAS"]);
    expect(result.calls).toEqual([]);

    // A request that is neither an RPC call nor a proxy call is the caller's own to handle.
    await loseSession();
    const plain = await page.evaluate(async () => {
      const w = globalThis as unknown as RecordingWindow;
      const settled = await w.settle(new w.HttpClient().post("/__rpc/plugin/matrix/echo", { args: [] }));
      return { code: settled.ok ? "ok" : settled.code, calls: w.recoveryCalls };
    });
    expect(plain).toEqual({ code: "RPC_NO_SESSION", calls: [] });
  });

  it("a throwing or rejecting hook leaves the rejection as it was, and is reported as a page error", async () => {
    await loseSession();
    const result = await page.evaluate(async () => {
      const w = globalThis as unknown as RecordingWindow;
      let thrown = 0;
      w.AppSessionRecovery = {
        handle() {
          thrown += 1;
          throw new Error("hook threw");
        },
      };
      const afterThrow = await w.settle(w.xserver.plugin.matrix.echo());
      let rejected = 0;
      w.AppSessionRecovery = {
        async handle() {
          rejected += 1;
          throw new Error("hook rejected");
        },
      };
      const afterReject = await w.settle(w.xserver.plugin.matrix.echo());
      await new Promise((resolve) => setTimeout(resolve, 50));
      return { afterThrow, afterReject, thrown, rejected };
    });
    expect(result.afterThrow).toMatchObject({ ok: false, name: "HttpError", ...NO_SESSION });
    expect(result.afterReject).toMatchObject({ ok: false, name: "HttpError", ...NO_SESSION });
    expect({ thrown: result.thrown, rejected: result.rejected }).toEqual({ thrown: 1, rejected: 1 });
    expect(pageErrors).toEqual(expect.arrayContaining(["hook threw", "hook rejected"]));
  });

  it("is skipped when the page has no usable hook: none, a handle that is not a function, an element of that id", async () => {
    await loseSession();
    const codes = await page.evaluate(async () => {
      const w = globalThis as unknown as RecordingWindow;
      const codeOf = async (): Promise<string | undefined> => {
        const settled = await w.settle(w.xserver.plugin.matrix.echo());
        return settled.ok ? "ok" : `${settled.name} ${settled.code}`;
      };
      delete w.AppSessionRecovery;
      const none = await codeOf();
      w.AppSessionRecovery = { handle: "not a function" };
      const notFunction = await codeOf();
      delete w.AppSessionRecovery;
      // A named element is reachable as window.AppSessionRecovery, but is no hook.
      const element = w.document.createElement("div");
      element.id = "AppSessionRecovery";
      element.handle = () => w.recoveryCalls.push({ status: 0, code: "element", message: "", source: "" });
      w.document.body.append(element);
      const named = await codeOf();
      return { none, notFunction, named, calls: w.recoveryCalls };
    });
    expect(codes).toEqual({ none: "HttpError RPC_NO_SESSION", notFunction: "HttpError RPC_NO_SESSION", named: "HttpError RPC_NO_SESSION", calls: [] });
  });

  it("is called once when a transport itself goes through another RPC call", async () => {
    await loseSession();
    const result = await page.evaluate(async () => {
      const w = globalThis as unknown as RecordingWindow;
      const relay = { request: () => w.xserver.plugin.matrix.echo() };
      const settled = await w.settle(w.xserver.plugin.matrix.outer(undefined, { httpClient: relay }));
      return { settled, calls: w.recoveryCalls };
    });
    expect(result.settled).toMatchObject({ ok: false, ...NO_SESSION });
    expect(result.calls).toEqual([{ ...NO_SESSION, source: "rpc" }]);
  });
});
