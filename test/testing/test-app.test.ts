// docs/guides/toolkit.md "Testing your methods": an app root started in process with startTestApp, its
// viewers, their calls, streams and proxied requests over inject, and its log events.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createXServer, type RpcTransport } from "../../dist/client/index.js";
import { callMethod, RpcCallError, startTestApp, type TestApp } from "../../dist/testing/index.js";
import { NOT_METHOD_NAMES } from "../../dist/core/not-method-names.js";
import type * as Notes from "../fixtures/testing-app/plugins/notes/notes.server.js";
import * as Wire from "../fixtures/testing-app/plugins/wire/wire.server.js";
import { tempApp } from "../helpers/app-root.js";
import { TestUpstream } from "../helpers/upstream.js";

const ROOT = join(import.meta.dirname, "../fixtures/testing-app");
const UPSTREAM_KEY = "upstream-key-that-stays-on-the-server";

describe("startTestApp", () => {
  let upstream: TestUpstream;
  let app: TestApp;
  beforeAll(async () => {
    upstream = await new TestUpstream().start();
    app = await startTestApp({ root: ROOT, env: { UPSTREAM_URL: `${upstream.origin}/api`, UPSTREAM_KEY } });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it("opens no port", () => {
    expect(app.server.address()).toBeNull();
    expect(app.server.url).toBeNull();
  });

  it("opens a viewer session from the page, as a browser does", async () => {
    const viewer = await app.viewer();
    expect(viewer.cookie).toMatch(/^app_session=v1\./);
    expect(viewer.csrf).toMatch(/^[\w-]{20,}$/);
    const page = await viewer.request({ url: "/" });
    expect(page.text).toContain(`window.APP_CSRF_TOKEN = "${viewer.csrf}"`);
    // The page issues a cookie only to a request without one: the viewer sent its own.
    expect(page.headers["set-cookie"]).toBeUndefined();
  });

  it("keeps session data between the calls of one viewer, and apart from another viewer's", async () => {
    const ada = (await app.viewer()).plugin<typeof Notes>("notes");
    const bob = (await app.viewer()).plugin<typeof Notes>("notes");
    expect(await ada.remember({ note: "one" })).toEqual({ count: 1 });
    expect(await ada.remember({ note: "two" })).toEqual({ count: 2 });
    expect(await bob.remember({ note: "three" })).toEqual({ count: 1 });
    expect(await ada.notes()).toEqual(["note:one", "note:two"]);
    expect(await bob.notes()).toEqual(["note:three"]);
  });

  it("refuses a call without the CSRF header, and one without a session", async () => {
    const viewer = await app.viewer();
    const forged = await viewer.call("plugin", "notes", "notes", [], { csrf: false });
    expect([forged.status, forged.body.code]).toEqual([403, "RPC_BAD_CSRF"]);
    const stranger = await app.anonymous.call("plugin", "notes", "notes");
    expect([stranger.status, stranger.body.code]).toEqual([401, "RPC_NO_SESSION"]);
    await expect(app.anonymous.plugin("notes").remember({ note: "x" })).rejects.toMatchObject({ name: "RpcCallError", status: 401, code: "RPC_NO_SESSION" });
  });

  it("keeps no cookie for the anonymous caller, even from a page", async () => {
    const page = await app.anonymous.request({ url: "/" });
    expect(page.headers["set-cookie"]).toMatch(/^app_session=/);
    expect(app.anonymous.cookie).toBeNull();
    expect((await app.anonymous.call("plugin", "notes", "notes")).status).toBe(401);
  });

  it("lets anyone call a public method", async () => {
    expect(await app.anonymous.plugin<typeof Notes>("notes").health()).toEqual({ ok: true });
    const answer = await app.anonymous.call("plugin", "notes", "health");
    expect([answer.status, answer.body]).toEqual([200, { result: { ok: true } }]);
  });

  it("sends an undefined input as no argument, as the browser does, so that a default parameter applies", async () => {
    const wire = app.anonymous.plugin<typeof Wire>("wire");
    expect(await wire.page()).toEqual({ limit: 5 });
    expect(await wire.page(undefined)).toEqual({ limit: 5 });
    expect(await wire.page({ limit: 2 })).toEqual({ limit: 2 });
    const browser = browserArgs();
    for (const input of [undefined, null, 0, "", { at: new Date(0), skipped: undefined }]) {
      await browser.xserver.plugin.wire!.received!(input);
      expect([input, await wire.received(input)]).toEqual([input, browser.sent.at(-1)]);
    }
  });

  it("answers as callMethod does where JSON changes or refuses a value", async () => {
    const wire = app.anonymous.plugin<typeof Wire>("wire");
    expect(await wire.when()).toEqual({ at: "1970-01-01T00:00:00.000Z" });
    expect((await callMethod(Wire.when)).result).toEqual(await wire.when());
    const outcome = (error: { status: number; code: string }) => [error.status, error.code];
    const served = await wire.big().catch(outcome);
    expect(served).toEqual([500, "RPC_BAD_RESULT"]);
    expect(await callMethod(Wire.big).catch(outcome)).toEqual(served);
    const poisoned = JSON.parse('{"__proto__": {"admin": true}}');
    expect(await wire.received(poisoned).catch(outcome)).toEqual([400, "RPC_BAD_REQUEST"]);
    expect(await callMethod(Wire.received, poisoned).catch(outcome)).toEqual([400, "RPC_BAD_REQUEST"]);
  });

  it("fails a buffered method that awaits ctx.emit, as callMethod does", async () => {
    const answer = await app.anonymous.call("plugin", "wire", "chatty");
    expect([answer.status, answer.body.code]).toEqual([500, "RPC_INTERNAL_ERROR"]);
    expect(app.logs({ reqId: answer.reqId, event: "rpc.error" }).map((line) => (line.err as { message?: string } | undefined)?.message)).toEqual(["ctx.emit works in streaming methods only (runtime.streaming: true)"]);
    await expect(callMethod(Wire.chatty)).rejects.toThrow("ctx.emit works in streaming methods only (runtime.streaming: true)");
  });

  it("takes one input per call, as the browser's methods do (a second argument there is the call's options)", async () => {
    const received = app.anonymous.plugin("wire").received as (...args: unknown[]) => Promise<unknown>;
    await expect(received(1, 2)).rejects.toThrow(/sends one input.*client\.call\("plugin", "wire", "received", \[a, b\]\)/);
    expect((await app.anonymous.call("plugin", "wire", "received", [1, 2])).body.result).toEqual([1, 2]);
    // Never run: what tsc -p test/tsconfig.json must refuse.
    const refused = () => {
      // @ts-expect-error page takes one input
      void app.anonymous.plugin<typeof Wire>("wire").page({ limit: 1 }, { limit: 2 });
      // @ts-expect-error remember's input is not optional
      void app.anonymous.plugin<typeof Notes>("notes").remember();
    };
    expect(typeof refused).toBe("function");
  });

  it("turns into calls exactly the names the browser's proxies do", () => {
    const browser = browserArgs().xserver.plugin.wire as unknown as Record<string, unknown>;
    const tested = app.anonymous.plugin("wire") as unknown as Record<string, unknown> & { $stream: Record<string, unknown> };
    const names = [...Object.getOwnPropertyNames(Object.prototype), "then", "toJSON", "", "$stream", "page", "received"];
    expect(names.map((name) => [name, typeof tested[name]])).toEqual(names.map((name) => [name, typeof browser[name]]));
    expect([...NOT_METHOD_NAMES].filter((name) => tested[name] !== undefined || tested.$stream[name] !== undefined)).toEqual([]);
    expect([...NOT_METHOD_NAMES]).toEqual(expect.arrayContaining(["then", "toJSON", "constructor", "toString"]));
  });

  it("answers a method's RpcError with its status, code and details", async () => {
    const viewer = await app.viewer();
    const answer = await viewer.call("plugin", "notes", "refuse", [{ limit: 3 }]);
    expect([answer.status, answer.body]).toEqual([409, { error: "The notebook is full", code: "NOTES_FULL", details: { limit: 3 } }]);
    const error = await viewer.plugin<typeof Notes>("notes").refuse({ limit: 4 }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RpcCallError);
    expect(error).toMatchObject({ status: 409, code: "NOTES_FULL", details: { limit: 4 }, message: "The notebook is full" });
  });

  it("logs exactly one event per call, found by the answer's reqId, with its status and code", async () => {
    const viewer = await app.viewer();
    const calls = [
      await viewer.call("plugin", "notes", "remember", [{ note: "logged" }]),
      await viewer.call("plugin", "notes", "refuse", [{ limit: 1 }]),
      await viewer.call("plugin", "notes", "notes", [], { csrf: false }),
      await app.anonymous.call("plugin", "notes", "health"),
      await viewer.call("plugin", "nobody", "anything"),
    ];
    const seen = calls.map((answer) => app.logs({ reqId: answer.reqId }).filter((line) => line.event?.startsWith("rpc.")));
    expect(seen.map((lines) => lines.map((line) => [line.event, line.status, line.code]))).toEqual([
      [["rpc.complete", 200, undefined]],
      [["rpc.error", 409, "NOTES_FULL"]],
      [["rpc.rejected", 403, "RPC_BAD_CSRF"]],
      [["rpc.complete", 200, undefined]],
      [["rpc.rejected", 404, "RPC_UNKNOWN_TARGET"]],
    ]);
    expect(new Set(calls.map((answer) => answer.reqId)).size).toBe(calls.length);
    // A method's own ctx.log line carries the call's reqId too.
    expect(app.logs({ reqId: calls[0]!.reqId }).map((line) => line.msg)).toContain("note kept");
    expect(app.logs({ event: "rpc.error" }).some((line) => line.reqId === calls[1]!.reqId)).toBe(true);
  });

  it("reads a stream's events in order, then its result", async () => {
    const viewer = await app.viewer();
    const answer = await viewer.stream("plugin", "notes", "reply", [{ text: "one two three", delayMs: 5 }]);
    expect(answer.status).toBe(200);
    expect(answer.headers["content-type"]).toBe("application/x-ndjson; charset=utf-8");
    expect(answer.events).toEqual([{ word: "one" }, { word: "two" }, { word: "three" }]);
    expect(answer.end).toEqual({ done: true, ok: true, result: { words: 3 } });
    expect(app.logs({ reqId: answer.reqId }).map((line) => [line.event, line.events])).toEqual([["rpc.complete", 3]]);

    const typed = await viewer.plugin<typeof Notes>("notes").$stream.reply({ text: "a b" });
    expect(typed).toEqual({ events: [{ word: "a" }, { word: "b" }], result: { words: 2 } });
  });

  it("ends a failing stream with the method's error record, after the events before it", async () => {
    const viewer = await app.viewer();
    const answer = await viewer.stream("plugin", "notes", "reply", [{ text: "a b c", cutAt: 2 }]);
    expect([answer.status, answer.events]).toEqual([200, [{ word: "a" }, { word: "b" }]]);
    expect(answer.end).toEqual({ done: true, ok: false, error: "The reply was cut", code: "REPLY_CUT", status: 422, details: { at: 2 } });
    expect(app.logs({ reqId: answer.reqId }).map((line) => [line.event, line.status, line.code])).toEqual([["rpc.error", 422, "REPLY_CUT"]]);
    await expect(viewer.plugin<typeof Notes>("notes").$stream.reply({ text: "a b", cutAt: 1 })).rejects.toMatchObject({
      name: "RpcCallError",
      status: 422,
      code: "REPLY_CUT",
      details: { at: 1 },
    });
  });

  it("answers a stream refused before it started as a JSON error", async () => {
    const viewer = await app.viewer();
    const buffered = await viewer.call("plugin", "notes", "reply", [{ text: "x" }]);
    expect([buffered.status, buffered.body.code]).toEqual([400, "RPC_STREAM_REQUIRED"]);
    const refused = await viewer.stream("plugin", "notes", "reply", [{ text: "x" }], { csrf: false });
    expect([refused.status, refused.body?.code, refused.end, refused.events]).toEqual([403, "RPC_BAD_CSRF", null, []]);
    await expect(app.anonymous.plugin("notes").$stream.reply({ text: "x" })).rejects.toMatchObject({ status: 401, code: "RPC_NO_SESSION" });
  });

  it("forwards a viewer's proxy request to a real upstream with the alias's server-held header", async () => {
    const viewer = await app.viewer();
    const answer = await viewer.proxy("upstream", "items/7?full=1", { method: "POST", body: { title: "x" } });
    expect(answer.status).toBe(200);
    const seen = answer.json();
    expect(seen).toMatchObject({ method: "POST", url: "/api/items/7?full=1" });
    expect(seen.headers["x-api-key"]).toBe(UPSTREAM_KEY);
    // Never the viewer's own credentials.
    expect(seen.headers.cookie).toBeUndefined();
    expect(seen.headers["x-app-csrf"]).toBeUndefined();
    expect(upstream.find("/api/items/7")).toHaveLength(1);
    expect(app.logs({ reqId: answer.reqId }).map((line) => [line.event, line.status])).toEqual([["proxy.complete", 200]]);

    const stranger = await app.anonymous.proxy("upstream", "items/7");
    expect([stranger.status, stranger.json().code]).toEqual([401, "PROXY_NO_SESSION"]);
    expect(upstream.find("/api/items/7")).toHaveLength(1);
  });
});

describe("startTestApp's start", () => {
  const started: TestApp[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((app) => app.close()));
  });

  it("reads no variable of the shell it runs in: the config's <% NAME %> needs env", async () => {
    process.env.UPSTREAM_URL = "http://127.0.0.1:1/";
    process.env.UPSTREAM_KEY = UPSTREAM_KEY;
    try {
      await expect(startTestApp({ root: ROOT })).rejects.toMatchObject({ code: "STARTUP_ENV_MISSING" });
    } finally {
      delete process.env.UPSTREAM_URL;
      delete process.env.UPSTREAM_KEY;
    }
  });

  it("makes up a session secret without the server's warning about one", async () => {
    const app = await startTestApp({ root: pathToFileURL(`${ROOT}/`), env: { UPSTREAM_URL: "http://127.0.0.1:1/", UPSTREAM_KEY } });
    started.push(app);
    expect(app.logs().filter((line) => String(line.msg).includes("APP_SESSION_SECRET"))).toEqual([]);
    expect(await (await app.viewer()).plugin("notes").notes()).toEqual([]);
  });

  it("runs in dev mode only when asked, whatever APP_DEV_MODE says", async () => {
    const root = tempApp({ files: { "plugins/solo/solo.server.mjs": "export function ping() { return 1; }" } });
    process.env.APP_DEV_MODE = "1";
    try {
      const plain = await startTestApp({ root });
      started.push(plain);
      const refused = await (await plain.viewer()).call("server", "core", "getStatus");
      expect([refused.status, refused.body.code]).toEqual([404, "RPC_UNKNOWN_TARGET"]);
    } finally {
      delete process.env.APP_DEV_MODE;
    }
    const dev = await startTestApp({ root, dev: true });
    started.push(dev);
    const status = await (await dev.viewer()).call("server", "core", "getStatus", [{ includeRegistry: false }]);
    expect([status.status, status.body.result.devMode]).toEqual([200, true]);
  });

  it("fails on a plugin that does not load, unless strict is off", async () => {
    const root = tempApp({ files: { "plugins/broken/broken.server.mjs": "export const x = ;" } });
    await expect(startTestApp({ root })).rejects.toMatchObject({ code: "STARTUP_ITEM_FAILED" });
    const app = await startTestApp({ root, strict: false });
    started.push(app);
    const answer = await (await app.viewer()).call("plugin", "broken", "x");
    expect([answer.status, answer.body.code]).toEqual([503, "RPC_TARGET_UNAVAILABLE"]);
  });

  it("keeps the cookies a viewer is given and drops the ones expired, as a browser does", async () => {
    const hook = `export function register(api) {
      api.registerServerRoute("/prefs", (ctx, url) => {
        const set = { "/prefs/dark": "theme=dark; Path=/", "/prefs/clear": "theme=; Max-Age=0; Path=/" }[url.pathname];
        if (set) ctx.res.setHeader("set-cookie", set);
        ctx.res.end(JSON.stringify({ cookie: ctx.req.headers.cookie ?? "", csrfOk: ctx.csrfOk }));
      });
    }`;
    const app = await startTestApp({ root: tempApp({ files: { "plugins/prefs/register.server.mjs": hook } }) });
    started.push(app);
    const viewer = await app.viewer();
    await viewer.request({ url: "/prefs/dark" });
    const seen = (await viewer.request({ url: "/prefs/echo" })).json();
    expect(seen.cookie).toMatch(/^app_session=v1\.[^;]+; theme=dark$/);
    expect(seen.csrfOk).toBe(true);
    await viewer.request({ url: "/prefs/clear" });
    expect(viewer.cookie).toMatch(/^app_session=v1\.[^;]+$/);
    expect((await viewer.request({ url: "/prefs/echo", csrf: false })).json()).toEqual({ cookie: viewer.cookie, csrfOk: false });
  });

  it("gives a viewer its session from the server when the root has no page, and refuses a page that is missing", async () => {
    const root = tempApp({ files: { "plugins/solo/solo.server.mjs": "export function keep(ctx, v) { ctx.session.v = v; return v; }\nexport function read(ctx) { return ctx.session.v ?? null; }" } });
    rmSync(join(root, "public"), { recursive: true });
    const app = await startTestApp({ root });
    started.push(app);
    const viewer = await app.viewer();
    expect(await viewer.plugin("solo").keep(5)).toBe(5);
    expect(await viewer.plugin("solo").read()).toBe(5);
    await expect(app.viewer({ page: "/missing.html" })).rejects.toThrow(/\/missing\.html handed out no viewer session \(status 404\)/);
  });
});

/** The browser's own client, with a transport that keeps the `args` of each body it would send. */
function browserArgs(): { xserver: ReturnType<typeof createXServer>; sent: unknown[][] } {
  const sent: unknown[][] = [];
  const transport = {
    request: async (_path: string, init: { body: { args: unknown[] } }) => {
      // As the wire carries them: the transport would send the body as JSON.
      sent.push(JSON.parse(JSON.stringify(init.body.args)) as unknown[]);
      return { result: null };
    },
  };
  return { xserver: createXServer({ httpClient: transport as unknown as RpcTransport }), sent };
}
