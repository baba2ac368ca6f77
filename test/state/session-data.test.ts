/**
 * Session data over real HTTP (docs/guides/sessions-and-state.md): what a method or a route sets in
 * `ctx.session` is there on the viewer's next call and only for that viewer; nested changes
 * count; `id` and `createdAt` are read-only; over the limit nothing is saved (413);
 * isolated and streaming methods keep data too; a route's redirect is read back at once.
 */
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { useServer } from "../helpers/server.js";
import { openViewer, rpc, send, type Viewer } from "../helpers/http.js";
import { openStream } from "../helpers/stream.js";

const ROOT = join(import.meta.dirname, "../fixtures/session-app");
const app = useServer({ root: ROOT, dev: true });

const call = async (viewer: Viewer | null, method: string, ...args: unknown[]) => {
  const answer = await rpc(app.url, `plugin/notes/${method}`, { viewer, body: { args } });
  return answer;
};
const result = async (viewer: Viewer, method: string, ...args: unknown[]) => (await call(viewer, method, ...args)).body.result;

describe("ctx.session data", () => {
  it("keeps what a method sets for the viewer's next calls, and for that viewer only", async () => {
    const ada = await openViewer(app.url);
    const bob = await openViewer(app.url);
    expect(await result(ada, "remember", { key: "color", value: "teal" })).toEqual(["id", "createdAt", "color"]);
    expect(await result(ada, "recall", "color")).toBe("teal");
    expect(await result(bob, "recall", "color")).toBeNull();
    const whole = await result(ada, "whole");
    expect(whole).toEqual({ id: expect.any(String), createdAt: expect.any(Number), color: "teal" });
    // The id is stable, and the cookie's secret part (its MAC) is nowhere in what a method sees.
    expect((await result(ada, "whole")).id).toBe(whole.id);
    const mac = ada.cookie.split(".").at(-1)!;
    expect(mac.length).toBeGreaterThan(20);
    expect(JSON.stringify(whole)).not.toContain(mac);
  });

  it("sees nested changes and deletions", async () => {
    const viewer = await openViewer(app.url);
    await result(viewer, "addToken", { context: "idp", token: "a1" });
    expect(await result(viewer, "addToken", { context: "other", token: "b2" })).toEqual({ tokens: { idp: "a1", other: "b2" } });
    expect(await result(viewer, "recall", "oidc")).toEqual({ tokens: { idp: "a1", other: "b2" } });
    await result(viewer, "remember", { key: "gone", value: 1 });
    expect(await result(viewer, "forget", "gone")).not.toContain("gone");
    expect(await result(viewer, "recall", "gone")).toBeNull();
  });

  it("keeps id and createdAt read-only", async () => {
    const viewer = await openViewer(app.url);
    expect(await result(viewer, "renameSession")).toBe("refused: TypeError");
  });

  it("refuses data over maxDataBytes with 413 SESSION_DATA_TOO_LARGE and saves nothing of that call", async () => {
    const viewer = await openViewer(app.url);
    await result(viewer, "remember", { key: "small", value: "before" });
    const refused = await call(viewer, "writeMuch", 5_000);
    expect([refused.status, refused.body.code, refused.body.details]).toEqual([413, "SESSION_DATA_TOO_LARGE", { maxBytes: 4096 }]);
    expect(await result(viewer, "recall", "small")).toBe("before");
    expect(await result(viewer, "recall", "blob")).toBeNull();
    expect((await call(viewer, "writeMuch", 100)).body.result).toBe("written");
    expect(await result(viewer, "recall", "small")).toBe("kept?");
  });

  it("saves what a method set before it threw; its own error is the answer", async () => {
    const viewer = await openViewer(app.url);
    const answer = await call(viewer, "writeThenFail");
    expect([answer.status, answer.body.code]).toEqual([409, "NOTES_CONFLICT"]);
    expect(await result(viewer, "recall", "beforeFailure")).toBe(true);
  });

  it("a field JSON cannot carry fails the call and is not saved", async () => {
    const viewer = await openViewer(app.url);
    const answer = await call(viewer, "writeUnsaveable");
    expect([answer.status, answer.body.code]).toEqual([500, "RPC_INTERNAL_ERROR"]);
    expect(await result(viewer, "recall", "bad")).toBeNull();
  });

  it("gives a public method the session's data only with the CSRF header", async () => {
    const viewer = await openViewer(app.url);
    await result(viewer, "remember", { key: "color", value: "red" });
    expect((await call(viewer, "peekPublic")).body.result).toEqual({ id: expect.any(String), color: "red" });
    const cookieOnly = await rpc(app.url, "plugin/notes/peekPublic", { headers: { cookie: viewer.cookie } });
    expect(cookieOnly.body.result).toBeNull();
  });

  it("isolated methods read and write the same data, with id read-only in the worker too", async () => {
    const viewer = await openViewer(app.url);
    expect(await result(viewer, "isolatedRemember", { key: "fromWorker", value: [1, 2] })).toEqual({ thread: "worker", keys: ["id", "createdAt", "fromWorker"] });
    expect(await result(viewer, "recall", "fromWorker")).toEqual([1, 2]);
    await result(viewer, "remember", { key: "fromMain", value: "m" });
    expect(await result(viewer, "isolatedRecall", "fromMain")).toEqual({ value: "m", renamed: "refused: TypeError" });
  });

  it("streaming methods save before their terminal record", async () => {
    const viewer = await openViewer(app.url);
    const stream = await openStream(app.url, "plugin/notes/streamRemember", { viewer, args: [{ key: "streamed", value: "yes" }] });
    await stream.finished;
    expect(stream.records.map(({ at: _at, ...record }) => record)).toEqual([{ event: { before: null } }, { done: true, ok: true, result: "stored" }]);
    expect(await result(viewer, "recall", "streamed")).toBe("yes");
  });
});

describe("getStatus", () => {
  it("says where session data lives and how much the in-memory store holds", async () => {
    const viewer = await openViewer(app.url);
    await result(viewer, "remember", { key: "x", value: 1 });
    const status = await rpc(app.url, "server/core/getStatus", { viewer });
    expect(status.body.result.sessionStore).toEqual({ kind: "memory", sessions: expect.any(Number), bytes: expect.any(Number) });
    expect(status.body.result.sessionStore.sessions).toBeGreaterThanOrEqual(1);
  });
});

describe("ctx.session in a route", () => {
  it("saves before the response ends: the page a redirect leads to reads it at once", async () => {
    const viewer = await openViewer(app.url);
    const start = await send(app.url, "/notes-flow/start?state=s-42", { headers: { cookie: viewer.cookie } });
    expect([start.status, start.headers.location]).toEqual([302, "/notes-flow/back"]);
    const back = await send(app.url, "/notes-flow/back", { headers: { cookie: viewer.cookie } });
    expect(back.json).toEqual({ pending: { state: "s-42" } });
    // RPC methods see what the route stored.
    expect(await result(viewer, "recall", "pending")).toEqual({ state: "s-42" });
  });

  it("a handler that ends its response and then throws keeps its answer, and its data", async () => {
    const viewer = await openViewer(app.url);
    const answer = await send(app.url, "/notes-flow/end-then-throw", { headers: { cookie: viewer.cookie } });
    expect([answer.status, answer.body]).toEqual([200, "done"]);
    expect(await result(viewer, "recall", "after")).toBe(1);
  });

  it("a second res.end while the first waits for the save changes nothing", async () => {
    const viewer = await openViewer(app.url);
    const answer = await send(app.url, "/notes-flow/end-twice", { headers: { cookie: viewer.cookie } });
    expect([answer.status, answer.body]).toEqual([200, "one"]);
    expect(await result(viewer, "recall", "twice")).toBe("saved");
  });

  it("res.end with a chunk Node refuses answers 500, as the handler's own throw would, and the server stays up", async () => {
    const viewer = await openViewer(app.url);
    const answer = await send(app.url, "/notes-flow/bad-end", { headers: { cookie: viewer.cookie } });
    expect([answer.status, answer.json?.code]).toEqual([500, "INTERNAL_ERROR"]);
    expect((await send(app.url, "/notes-flow/back", { headers: { cookie: viewer.cookie } })).status).toBe(200);
  });

  it("answers 413 when the route leaves the session over its limit", async () => {
    const viewer = await openViewer(app.url);
    const big = await send(app.url, "/notes-flow/big", { headers: { cookie: viewer.cookie } });
    expect([big.status, big.json?.code]).toEqual([413, "SESSION_DATA_TOO_LARGE"]);
    expect(await result(viewer, "recall", "blob")).toBeNull();
    // Its status already written, a 200 would claim the data was kept: the connection closes.
    await expect(send(app.url, "/notes-flow/big-after-head", { headers: { cookie: viewer.cookie } })).rejects.toThrow(/socket hang up|ECONNRESET/);
    expect(app.logs.events("route.").at(-1)).toMatchObject({ event: "route.error", err: { message: expect.stringContaining("over its size limit") } });
  });
});
