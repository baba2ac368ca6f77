// docs/guides/toolkit.md "Testing your methods": one method called with a made-up ctx (callMethod,
// makeContext), following the server's rules wherever a method could tell the difference.
import { describe, expect, expectTypeOf, it } from "vitest";
import { RpcError } from "../../dist/index.js";
import { join } from "node:path";
import { callMethod, loadServerFile, makeContext } from "../../dist/testing/index.js";
import type * as Notes from "../fixtures/testing-app/plugins/notes/notes.server.js";
import { health, notes, refuse, remember, reply } from "../fixtures/testing-app/plugins/notes/notes.server.js";
import * as Wire from "../fixtures/testing-app/plugins/wire/wire.server.js";
import { big, chatty, page, received, when } from "../fixtures/testing-app/plugins/wire/wire.server.js";

const PLUGINS = join(import.meta.dirname, "../fixtures/testing-app/plugins");

describe("callMethod", () => {
  it("calls the method with its input and config, and gives back the result", async () => {
    const run = await callMethod(remember, { note: "x" }, { config: { prefix: "p:" } });
    expect(run.result).toEqual({ count: 1 });
    expectTypeOf(run.result).toEqualTypeOf<{ count: number }>();
    expect((await callMethod(health)).result).toEqual({ ok: true });
  });

  it("hands the method its input as the server reads it from the browser's JSON", async () => {
    const run = await callMethod((_ctx, input: { at: Date; skipped?: number; list: unknown[] }) => ({
      type: typeof input.at,
      skipped: Object.hasOwn(input, "skipped"),
      list: input.list,
    }), { at: new Date(0), skipped: undefined, list: [undefined, () => 1] });
    expect(run.result).toEqual({ type: "string", skipped: false, list: [null, null] });
    expect((await callMethod(page)).result).toEqual({ limit: 5 });
    expect((await callMethod(received, undefined)).result).toEqual([]);
    expect((await callMethod(received, null)).result).toEqual([null]);
    await expect(callMethod(received, JSON.parse('{"__proto__": {"admin": true}}'))).rejects.toMatchObject({ status: 400, code: "RPC_BAD_REQUEST" });
    await expect(callMethod(received, { n: 1n })).rejects.toThrow(/callMethod: the input is not JSON-serialisable/);
  });

  it("gives the result as the viewer receives it, and refuses one JSON cannot carry as the server does", async () => {
    const run = await callMethod(when);
    expect(run.result).toEqual({ at: "1970-01-01T00:00:00.000Z" });
    expect(run.returned.at).toBeInstanceOf(Date);
    expect((await callMethod(() => undefined)).result).toBeNull();
    const error = await callMethod(big).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 500, code: "RPC_BAD_RESULT", cause: expect.any(TypeError) });
  });

  it("keeps the session's data as the server would save it, and continues the session in the next call", async () => {
    const first = await callMethod(remember, { note: "a" }, { config: { prefix: "" } });
    expect(first.sessionData()).toEqual({ notes: ["a"] });
    const second = await callMethod(remember, { note: "b" }, { config: { prefix: "" }, session: first.session });
    expect(second.result).toEqual({ count: 2 });
    expect(second.session?.id).toBe(first.session?.id);
    expect(second.session?.createdAt).toBe(first.session?.createdAt);
    // Each call loads its own copy, as from the store: the first run's session is as it left it.
    expect(first.sessionData()).toEqual({ notes: ["a"] });
    expect((await callMethod(notes, undefined, { session: { notes: ["seeded"] } })).result).toEqual(["seeded"]);
  });

  it("loads starting session data through JSON, and keeps id and createdAt read-only", async () => {
    const start = { when: new Date(0), dropped: undefined as unknown, list: [1] };
    const run = await callMethod((ctx) => {
      ctx.session!.list = [...(ctx.session!.list as number[]), 2];
      return { when: ctx.session!.when, hasDropped: Object.hasOwn(ctx.session!, "dropped") };
    }, undefined, { session: start });
    expect(run.result).toEqual({ when: "1970-01-01T00:00:00.000Z", hasDropped: false });
    expect(start.list).toEqual([1]);
    await expect(callMethod((ctx) => {
      ctx.session!.id = "mine";
    })).rejects.toThrow(TypeError);
  });

  it("fails sessionData() as the server fails a call whose session data JSON cannot carry", async () => {
    const run = await callMethod((ctx) => {
      ctx.session!.big = 1n;
    });
    expect(() => run.sessionData()).toThrow(/ctx\.session\.big cannot be saved/);
  });

  it("records the emitted events as the viewer receives them, in order", async () => {
    const run = await callMethod(reply, { text: "one two" }, { streaming: true });
    expect(run.events).toEqual([{ word: "one" }, { word: "two" }]);
    expect(run.result).toEqual({ words: 2 });
    expectTypeOf(run.events).toEqualTypeOf<Array<{ word: string }>>();
    const odd = await callMethod(async (ctx) => {
      await ctx.emit(undefined);
      await ctx.emit({ at: new Date(0), skip: undefined });
      return ctx.emit({ big: 1n }).then(() => "sent", (error: Error) => error.name);
    }, undefined, { streaming: true });
    expect(odd.events).toEqual([null, { at: "1970-01-01T00:00:00.000Z" }]);
    expect(odd.result).toBe("TypeError");
  });

  it("refuses an emit once the method returned", async () => {
    let late: ((value: unknown) => Promise<void>) | undefined;
    await callMethod((ctx) => {
      late = ctx.emit;
    }, undefined, { streaming: true });
    await expect(late!("after")).rejects.toMatchObject({ name: "StreamEndedError" });
  });

  it("refuses ctx.emit in a method that does not stream, as the server does: awaiting it fails the call", async () => {
    await expect(callMethod(chatty)).rejects.toThrow("ctx.emit works in streaming methods only (runtime.streaming: true)");
    // Not awaited, the refusal changes nothing, on the server too.
    const run = await callMethod((ctx) => {
      void ctx.emit("ignored");
      return "ok";
    });
    expect([run.result, run.events]).toEqual(["ok", []]);
    expect((await callMethod(chatty, undefined, { streaming: true })).events).toEqual(["hello"]);
    await expect(callMethod(reply, { text: "x" })).rejects.toThrow(/streaming methods only/);
  });

  it("reads whether a method streams from the policy of the file loadServerFile loaded", async () => {
    const notesFile = await loadServerFile<typeof Notes>(join(PLUGINS, "notes/notes.server.ts"));
    expect((await callMethod(notesFile.reply, { text: "a b" })).events).toEqual([{ word: "a" }, { word: "b" }]);
    await expect(callMethod(notesFile.reply, { text: "a" }, { streaming: false })).rejects.toThrow(/streaming methods only/);
    const wireFile = await loadServerFile<typeof Wire>(join(PLUGINS, "wire/wire.server.ts"));
    await expect(callMethod(wireFile.chatty)).rejects.toThrow(/streaming methods only/);
    // The file's own policy, not the name: a function loaded from nowhere is buffered.
    await expect(callMethod(async function reply(ctx) {
      await ctx.emit(1);
    })).rejects.toThrow(/streaming methods only/);
  });

  it("rejects with the method's RpcError, status, code and details intact", async () => {
    const error = await callMethod(refuse, { limit: 2 }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RpcError);
    expect(error).toMatchObject({ status: 409, code: "NOTES_FULL", details: { limit: 2 } });
  });

  it("keeps the lines the method logs, with the call's request id", async () => {
    const run = await callMethod(remember, { note: "x" }, { config: { prefix: "" }, requestId: "req-1" });
    expect(run.logs.map((line) => [line.msg, line.reqId, line.kind, line.id, line.method, line.count])).toEqual([["note kept", "req-1", "plugin", "test", "remember", 1]]);
  });

  it("fills every other ctx field with a default, and takes overrides", async () => {
    const { result: defaults } = await callMethod(function inspect(ctx) {
      return {
        kind: ctx.kind, id: ctx.id, itemId: ctx.itemId, method: ctx.method, user: ctx.user, config: ctx.config,
        viewerId: ctx.viewerId, contextId: ctx.contextId, requestId: ctx.requestId, secure: ctx.secure,
        devMode: ctx.core.server.devMode, domain: ctx.core.client.domain, isDevMode: APP_SERVER.isDevMode(ctx),
        req: [ctx.req.method, ctx.req.url], res: typeof ctx.res.setHeader, aborted: ctx.signal.aborted,
      };
    });
    expect(defaults).toEqual({
      kind: "plugin", id: "test", itemId: "test", method: "inspect", user: null, config: {},
      viewerId: undefined, contextId: undefined, requestId: expect.stringMatching(/^[0-9a-f-]{36}$/), secure: { plugins: { test: {} }, rpcVerifiers: {} },
      devMode: false, domain: "", isDevMode: false,
      req: ["POST", "/__rpc/plugin/test/inspect"], res: "function", aborted: false,
    });
    const { result: given } = await callMethod((ctx) => ({
      kind: ctx.kind, id: ctx.id, user: ctx.user, contextId: ctx.contextId, isDevMode: APP_SERVER.isDevMode(ctx),
      apiKey: APP_SERVER.getSecureItemConfig(ctx).apiKey, plugins: APP_SERVER.getSecurePluginConfig(ctx, "tools").apiKey, domain: ctx.core.client.domain, session: ctx.session,
    }), undefined, { kind: "module", id: "tools", user: { sub: "u1" }, contextId: "partner", dev: true, secure: { apiKey: "k" }, publicOrigin: "https://viewer.example", session: null });
    expect(given).toEqual({ kind: "module", id: "tools", user: { sub: "u1" }, contextId: "partner", isDevMode: true, apiKey: "k", plugins: undefined, domain: "https://viewer.example", session: null });
    const { result: pluginKey } = await callMethod((ctx) => APP_SERVER.getSecurePluginConfig(ctx).apiKey, undefined, { secure: { apiKey: "k" } });
    expect(pluginKey).toBe("k");
  });

  it("checks the input and config types against the method's signature", () => {
    // Never run: what tsc -p test/tsconfig.json must refuse.
    const refused = () => {
      // @ts-expect-error the input of remember is { note: string }
      void callMethod(remember, { nope: 1 }, { config: { prefix: "" } });
      // @ts-expect-error prefix is a string in remember's RpcContext<NotesConfig>
      void callMethod(remember, { note: "x" }, { config: { prefix: 1 } });
      // @ts-expect-error remember's input is not optional
      void callMethod(remember);
      // @ts-expect-error a method without input takes none
      void callMethod(health, { extra: 1 });
    };
    expect(typeof refused).toBe("function");
  });
});

describe("makeContext", () => {
  it("gives a signal the test aborts: the method stops, and its events so far stay readable", async () => {
    const controller = new AbortController();
    const test = makeContext<{ prefix: string }, { word: string }>({ signal: controller.signal, streaming: true });
    const running = reply(test.ctx, { text: "a b c d", delayMs: 20 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    controller.abort(new Error("viewer left"));
    await expect(running).rejects.toThrow("viewer left");
    expect(test.events.length).toBeGreaterThan(0);
    expect(test.events.length).toBeLessThan(4);
    expect(test.events[0]).toEqual({ word: "a" });
    await expect(test.ctx.emit({ word: "late" })).rejects.toThrow("viewer left");
  });

  it("makes a buffered method's ctx unless told the method streams", async () => {
    await expect(makeContext().ctx.emit(1)).rejects.toThrow(/streaming methods only/);
    const test = makeContext({ streaming: true });
    await test.ctx.emit(1);
    expect(test.events).toEqual([1]);
  });

  it("lets a test call a method of several arguments itself", async () => {
    const test = makeContext();
    const add = (ctx: { session: { total?: number } | null }, a: number, b: number) => (ctx.session!.total = a + b);
    expect(add(test.ctx as never, 2, 3)).toBe(5);
    expect(test.sessionData()).toEqual({ total: 5 });
  });
});
