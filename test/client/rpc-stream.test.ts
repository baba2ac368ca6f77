/**
 * `$stream` calls in Chromium against scripted NDJSON answers (docs/guides/browser.md
 * "Streaming calls"): the request they send, the handle's events and result, what makes a
 * stream fail (error record, truncation, stall, a non-NDJSON answer), abort, and the
 * reserved `$stream` scope on xserver and AppElement. The same calls against the real
 * server's streaming methods are in stream-e2e.test.ts.
 */
import { beforeEach, expect, it } from "vitest";
import { describeInBrowser, useBrowserFixture } from "../helpers/browser.js";
import { CSRF_TOKEN } from "../helpers/fixture-server.js";
import { STREAM_PAGE_HELPERS, type StreamWindow } from "../helpers/stream-page.js";
import { waitFor } from "../helpers/wait.js";

const NDJSON = { "content-type": "application/x-ndjson; charset=utf-8" };
const ndjson = (...records: unknown[]): string => records.map((record) => `${JSON.stringify(record)}\n`).join("");
const PATH = "/__rpc/plugin/ticker/count";

describeInBrowser("$stream calls", () => {
  const fx = useBrowserFixture();
  beforeEach(async () => {
    await fx.page.evaluate(STREAM_PAGE_HELPERS);
  });

  it("$stream is an object of streaming methods, made once, on xserver targets and AppElement.server()", async () => {
    const shape = await fx.page.evaluate(() => {
      const w = globalThis as unknown as StreamWindow;
      const target = w.xserver.plugin.ticker;
      const element = new w.AppElement({ kind: "module", id: "ticker" }).server();
      return {
        plugin: typeof target.$stream,
        module: typeof w.xserver.module.ticker.$stream,
        element: typeof element.$stream,
        method: typeof target.$stream.count,
        cached: target.$stream === target.$stream && target.$stream.count === target.$stream.count,
        then: typeof target.$stream.then,
        buffered: typeof target.count,
      };
    });
    expect(shape).toEqual({ plugin: "object", module: "object", element: "object", method: "function", cached: true, then: "undefined", buffered: "function" });
  });

  it("posts { args, viewerId, contextId } with X-APP-Rpc-Stream: 1 and the CSRF token; the call's options win over the defaults", async () => {
    fx.server.script(PATH, [{ headers: NDJSON, body: ndjson({ done: true, ok: true, result: 1 }) }]);
    fx.server.script("/__rpc/module/notes/tail", [{ headers: NDJSON, body: ndjson({ done: true, ok: true, result: 2 }) }]);
    await fx.page.evaluate(async () => {
      const w = globalThis as unknown as StreamWindow;
      w.xserver.viewerId = "viewer-1";
      w.xserver.contextId = "ctx-default";
      await w.xserver.plugin.ticker.$stream.count({ n: 2 }, { contextId: "ctx-call" }).result;
      const element = new w.AppElement({ kind: "module", id: "notes" }).server({ contextId: "el-ctx", viewerId: "el-viewer" });
      await element.$stream.tail(undefined, { viewerId: "call-viewer" }).result;
    });
    const [call] = fx.server.hits(PATH);
    expect(call).toMatchObject({ method: "POST", body: JSON.stringify({ args: [{ n: 2 }], viewerId: "viewer-1", contextId: "ctx-call" }) });
    expect(call!.headers).toMatchObject({ "x-app-rpc-stream": "1", "x-app-csrf": CSRF_TOKEN, "content-type": "application/json" });
    const [tail] = fx.server.hits("/__rpc/module/notes/tail");
    expect(JSON.parse(tail!.body)).toEqual({ args: [], viewerId: "call-viewer", contextId: "el-ctx" });
  });

  it("yields the events live and in order, skips pings and other lines, resolves with the result and ignores lines after done", async () => {
    fx.server.script(PATH, [
      {
        headers: NDJSON,
        chunks: [
          ndjson({ event: { i: 0 } }, { ping: true }, 42, "text", [1], { other: 1 }, { event: null }),
          ndjson({ event: { i: 2 } }),
          ndjson({ done: true, ok: true, result: { count: 3 } }, { event: "after done" }, { done: true, ok: false, error: "late" }),
        ],
        chunkDelayMs: 400,
      },
    ]);
    const out = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as StreamWindow;
      const handle = w.xserver.plugin.ticker.$stream.count({ n: 3 });
      const synchronous = typeof handle.result.then === "function" && typeof handle.abort === "function";
      return { ...(await w.finish(handle)), synchronous };
    });
    expect(out.synchronous).toBe(true);
    expect(out.drained.items).toEqual([{ i: 0 }, null, { i: 2 }]);
    expect(out.drained.error).toBeUndefined();
    expect(out.result).toEqual({ ok: true, value: { count: 3 } });
    // Live: each event was in the caller's hands before the server wrote the next piece.
    const sent = fx.server.hits(PATH)[0]!.chunksSentAt!;
    expect(out.drained.clock[0]!).toBeLessThan(sent[1]!);
    expect(out.drained.clock[2]!).toBeLessThan(sent[2]!);
  });

  it("settles result when nobody reads the events, which stay buffered for a late reader", async () => {
    fx.server.script(PATH, [{ headers: NDJSON, body: ndjson({ event: 1 }, { event: 2 }, { done: true, ok: true }) }]);
    const out = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as StreamWindow;
      const handle = w.xserver.plugin.ticker.$stream.count();
      const result = await w.settle(handle.result);
      return { result, late: await w.drain(handle.events) };
    });
    // A done record without a result resolves to null, as a buffered answer without one does.
    expect(out.result).toEqual({ ok: true, value: null });
    expect(out.late.items).toEqual([1, 2]);
  });

  it("leaving the events loop early does not stop the call: the rest is read and result settles", async () => {
    fx.server.script(PATH, [{ headers: NDJSON, chunks: [ndjson({ event: 1 }), ndjson({ event: 2 }, { event: 3 }, { done: true, ok: true, result: "all read" })], chunkDelayMs: 100 }]);
    const out = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as StreamWindow;
      const handle = w.xserver.plugin.ticker.$stream.count();
      const first = await w.drain(handle.events, 1);
      return { first: first.items, result: await w.settle(handle.result), again: await w.drain(handle.events) };
    });
    expect(out).toEqual({ first: [1], result: { ok: true, value: "all read" }, again: { items: [], times: [], clock: [] } });
    expect(fx.server.hits(PATH)[0]?.clientClosedAt).toBeUndefined();
  });

  it("an error record rejects result with its status, code, details and message; events throws the same after the events before it", async () => {
    const failure = { done: true, ok: false, error: "The ticker moved on", code: "TICKER_CONFLICT", status: 409, details: { at: 1 } };
    fx.server.script(PATH, [{ headers: NDJSON, body: ndjson({ event: { step: 1 } }, failure) }]);
    fx.server.script("/__rpc/plugin/ticker/bare", [{ headers: NDJSON, body: ndjson({ done: true, ok: false, error: "no" }) }]);
    const out = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as StreamWindow;
      return { full: await w.finish(w.xserver.plugin.ticker.$stream.count()), bare: await w.settle(w.xserver.plugin.ticker.$stream.bare().result) };
    });
    const expected = { name: "HttpError", status: 409, code: "TICKER_CONFLICT", details: { at: 1 }, message: "The ticker moved on" };
    expect(out.full.result).toMatchObject({ ok: false, ...expected, isHttpError: true });
    expect(out.full.drained).toMatchObject({ items: [{ step: 1 }], error: expected });
    expect(out.bare).toMatchObject({ ok: false, status: 500, code: "RPC_INTERNAL_ERROR", message: "no" });
  });

  it("a stream that ends without its done record, is cut mid-record or loses its connection is RPC_STREAM_TRUNCATED", async () => {
    fx.server.script("/__rpc/plugin/ticker/ended", [{ headers: NDJSON, body: ndjson({ event: 1 }, { event: 2 }) }]);
    fx.server.script("/__rpc/plugin/ticker/cut", [{ headers: NDJSON, body: `${ndjson({ event: 1 })}{"done":true,"ok":tr` }]);
    fx.server.script("/__rpc/plugin/ticker/dropped", [{ headers: NDJSON, chunks: [ndjson({ event: 1 })], holdOpenMs: 200, destroyAfterChunks: true }]);
    const out = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as StreamWindow;
      const t = w.xserver.plugin.ticker.$stream;
      return Promise.all([w.finish(t.ended()), w.finish(t.cut()), w.finish(t.dropped())]);
    });
    expect(out[0]!.drained).toMatchObject({ items: [1, 2], error: { name: "StreamError", code: "RPC_STREAM_TRUNCATED" } });
    for (const { result, drained } of out) {
      expect(result).toMatchObject({ ok: false, name: "StreamError", code: "RPC_STREAM_TRUNCATED" });
      expect(drained.error).toMatchObject({ code: "RPC_STREAM_TRUNCATED" });
    }
  });

  it("a 2xx that is not NDJSON counts only as a JSON { result }; an HTML page is not a success", async () => {
    fx.server.script("/__rpc/plugin/ticker/buffered", [{ body: { result: { plain: true } } }]);
    fx.server.script("/__rpc/plugin/ticker/html", [{ headers: { "content-type": "text/html" }, body: "<!doctype html><p>login</p>" }]);
    fx.server.script("/__rpc/plugin/ticker/other", [{ body: { value: 1 } }]);
    const out = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as StreamWindow;
      const t = w.xserver.plugin.ticker.$stream;
      return Promise.all([w.finish(t.buffered()), w.settle(t.html().result), w.settle(t.other().result)]);
    });
    expect(out[0]).toEqual({ drained: { items: [], times: [], clock: [] }, result: { ok: true, value: { plain: true } } });
    expect(out[1]).toMatchObject({ ok: false, name: "ResponseParseError", code: "CLIENT_BAD_RESPONSE", status: 200 });
    expect(out[2]).toMatchObject({ ok: false, code: "CLIENT_BAD_RESPONSE" });
  });

  it("a refusal before the stream rejects with its HttpError and tells AppSessionRecovery about a lost session", async () => {
    fx.server.script("/__rpc/plugin/ticker/echo", [{ status: 400, body: { error: "Not a streaming method", code: "RPC_NOT_STREAMABLE", details: {} } }]);
    fx.server.script(PATH, [{ status: 401, body: { error: "A valid session is required", code: "RPC_NO_SESSION" } }]);
    const out = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as StreamWindow;
      const calls: unknown[] = [];
      w.AppSessionRecovery = { handle: (info: unknown) => calls.push(info) };
      const t = w.xserver.plugin.ticker.$stream;
      const refused = await w.finish(t.echo({ x: 1 }));
      const lost = await w.settle(t.count().result);
      return { refused, lost, calls };
    });
    expect(out.refused.result).toMatchObject({ ok: false, name: "HttpError", status: 400, code: "RPC_NOT_STREAMABLE", isHttpError: true });
    expect(out.refused.drained).toMatchObject({ items: [], error: { code: "RPC_NOT_STREAMABLE" } });
    expect(out.lost).toMatchObject({ ok: false, status: 401, code: "RPC_NO_SESSION" });
    expect(out.calls).toEqual([{ status: 401, code: "RPC_NO_SESSION", message: "A valid session is required", source: "rpc" }]);
  });

  it("fails with RPC_STREAM_STALLED when nothing arrives for stallTimeoutMs, before or after the headers, and closes the connection", async () => {
    fx.server.script("/__rpc/plugin/ticker/quiet", [{ headers: NDJSON, chunks: [ndjson({ event: 1 })], holdOpenMs: 5000 }]);
    fx.server.script("/__rpc/plugin/ticker/late", [{ delayMs: 5000, headers: NDJSON, body: ndjson({ done: true, ok: true }) }]);
    const out = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as StreamWindow;
      const t = w.xserver.plugin.ticker.$stream;
      const started = w.now();
      // 1.5 s of silence, against answers 5 s away: a busy machine may take a few hundred
      // ms to deliver the first event, which must not count as the stall.
      const [quiet, late] = await Promise.all([w.finish(t.quiet(undefined, { stallTimeoutMs: 1500 })), w.finish(t.late(undefined, { stallTimeoutMs: 1500 }))]);
      return { quiet, late, elapsed: w.now() - started };
    });
    expect(out.quiet.drained).toMatchObject({ items: [1], error: { name: "StreamError", code: "RPC_STREAM_STALLED" } });
    for (const { result } of [out.quiet, out.late]) expect(result).toMatchObject({ ok: false, name: "StreamError", code: "RPC_STREAM_STALLED" });
    // Both answers would have taken 5 s.
    expect(out.elapsed).toBeLessThan(4000);
    await waitFor(() => fx.server.hits("/__rpc/plugin/ticker/quiet")[0]?.clientClosedAt, 4000, "the stalled stream to be closed");
  });

  it("the transport's waits before the stream (a 503's Retry-After, a 401's secret refresh) are not silence: the call goes on", async () => {
    const open = { status: 503, headers: { "Retry-After": "2" }, body: { error: "Circuit open", code: "RPC_CIRCUIT_OPEN", details: { retryAfterMs: 2000 } } };
    fx.server.script("/__rpc/plugin/ticker/busy", [open, { headers: NDJSON, body: ndjson({ done: true, ok: true, result: "second try" }) }]);
    fx.server.script("/__rpc/plugin/ticker/broken", [open]);
    fx.server.script("/__rpc/plugin/ticker/guarded", (request) =>
      request.headers.authorization === "Bearer fresh"
        ? { headers: NDJSON, body: ndjson({ done: true, ok: true, result: "refreshed" }) }
        : { status: 401, body: { error: "expired" } },
    );
    const out = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as StreamWindow;
      const t = w.xserver.plugin.ticker.$stream;
      w.AppUser.setSecret("stale", "jwt", "ctx");
      w.AppUser.addHandler("requestSecretUpdate", () => setTimeout(() => w.AppUser.setSecret("fresh", "jwt", "ctx"), 2000));
      const authed = new w.HttpClient({ auth: { contextId: "ctx", types: ["jwt"] }, stallTimeoutMs: 1000 });
      // Each wait below is twice the stall timeout.
      return Promise.all([
        w.settle(t.busy(undefined, { stallTimeoutMs: 1000 }).result),
        w.settle(t.broken(undefined, { client: new w.HttpClient({ maxRetries: 1 }), stallTimeoutMs: 1000 }).result),
        w.settle(t.guarded(undefined, { client: authed }).result),
      ]);
    });
    expect(out[0]).toEqual({ ok: true, value: "second try" });
    expect(out[1]).toMatchObject({ ok: false, name: "HttpError", status: 503, code: "RPC_CIRCUIT_OPEN", details: { retryAfterMs: 2000 } });
    expect(out[2]).toEqual({ ok: true, value: "refreshed" });
    expect(fx.server.hits("/__rpc/plugin/ticker/busy")).toHaveLength(2);
    expect(fx.server.hits("/__rpc/plugin/ticker/broken")).toHaveLength(2);
    expect(fx.server.hits("/__rpc/plugin/ticker/guarded").map((hit) => hit.headers.authorization)).toEqual(["Bearer stale", "Bearer fresh"]);
  });

  it("a retried call whose server then says nothing is RPC_STREAM_STALLED; one whose stream began is never sent again", async () => {
    const busy = { status: 503, headers: { "Retry-After": "0" }, body: { error: "busy" } };
    fx.server.script("/__rpc/plugin/ticker/late", [busy, { delayMs: 5000, headers: NDJSON, body: ndjson({ done: true, ok: true }) }]);
    fx.server.script("/__rpc/plugin/ticker/quiet", [busy, { headers: NDJSON, chunks: [ndjson({ event: 1 })], holdOpenMs: 5000 }]);
    const out = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as StreamWindow;
      const t = w.xserver.plugin.ticker.$stream;
      return Promise.all([w.settle(t.late(undefined, { stallTimeoutMs: 1500 }).result), w.finish(t.quiet(undefined, { stallTimeoutMs: 1500 }))]);
    });
    expect(out[0]).toMatchObject({ ok: false, name: "StreamError", code: "RPC_STREAM_STALLED" });
    expect(out[1].drained).toMatchObject({ items: [1], error: { code: "RPC_STREAM_STALLED" } });
    expect(out[1].result).toMatchObject({ ok: false, name: "StreamError", code: "RPC_STREAM_STALLED" });
    expect(fx.server.hits("/__rpc/plugin/ticker/late")).toHaveLength(2);
    expect(fx.server.hits("/__rpc/plugin/ticker/quiet")).toHaveLength(2);
  });

  it("every piece of the body restarts the stall clock: one large event, or a plain answer, arriving slowly is not a stall", async () => {
    // Twelve pieces 200 ms apart: no line is complete before 2.2 s, twice the stall timeout.
    const pieces = (head: string, tail: string): string[] => [head, ...Array.from({ length: 10 }, () => "x".repeat(1000)), tail];
    fx.server.script("/__rpc/plugin/ticker/big", [
      { headers: NDJSON, chunks: pieces('{"event":"', `"}\n${ndjson({ done: true, ok: true, result: "whole" })}`), chunkDelayMs: 200 },
    ]);
    fx.server.script("/__rpc/plugin/ticker/plain", [
      { headers: { "content-type": "application/json" }, chunks: pieces('{"result":"', '"}'), chunkDelayMs: 200 },
    ]);
    const out = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as StreamWindow;
      const t = w.xserver.plugin.ticker.$stream;
      return Promise.all([w.finish(t.big(undefined, { stallTimeoutMs: 1000 })), w.settle(t.plain(undefined, { stallTimeoutMs: 1000 }).result)]);
    });
    expect(out[0].result).toEqual({ ok: true, value: "whole" });
    expect((out[0].drained.items as string[]).map((event) => event.length)).toEqual([10_000]);
    expect(out[1]).toMatchObject({ ok: true });
    expect(((out[1] as { value: string }).value ?? "").length).toBe(10_000);
  });

  it("pings keep a slow stream alive; the HttpClient's stallTimeoutMs is the default and timeoutMs does not apply", async () => {
    const pings = Array.from({ length: 6 }, () => ndjson({ ping: true }));
    // 2.2 s in all, a ping every 300 ms against a 1 s stall timeout: room for a busy machine.
    fx.server.script("/__rpc/plugin/ticker/slow", [{ delayMs: 400, headers: NDJSON, chunks: [...pings, ndjson({ done: true, ok: true, result: "alive" })], chunkDelayMs: 300 }]);
    fx.server.script("/__rpc/plugin/ticker/quiet", [{ headers: NDJSON, chunks: [ndjson({ ping: true })], holdOpenMs: 5000 }]);
    const out = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as StreamWindow;
      // Its 100 ms timeout would end a buffered call long before the headers come.
      const client = new w.HttpClient({ stallTimeoutMs: 1000, timeoutMs: 100 });
      const t = w.xserver.plugin.ticker.$stream;
      const slow = await w.settle(t.slow(undefined, { client, timeoutMs: 100 }).result);
      const started = w.now();
      const quiet = await w.settle(t.quiet(undefined, { client }).result);
      return { slow, quiet, quietAfter: w.now() - started };
    });
    expect(out.slow).toEqual({ ok: true, value: "alive" });
    expect(out.quiet).toMatchObject({ ok: false, code: "RPC_STREAM_STALLED" });
    expect(out.quietAfter).toBeGreaterThan(950);
    expect(out.quietAfter).toBeLessThan(4000);
  });

  it("abort(reason) rejects result and ends events with the reason, and closes the connection; so does the caller's signal", async () => {
    fx.server.script("/__rpc/plugin/ticker/hold", [{ headers: NDJSON, chunks: [ndjson({ event: "holding" })], holdOpenMs: 5000 }]);
    fx.server.script("/__rpc/plugin/ticker/waiting", [{ delayMs: 5000, headers: NDJSON, body: "" }]);
    const out = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as StreamWindow;
      const t = w.xserver.plugin.ticker.$stream;
      const held = t.hold();
      const events: unknown[] = [];
      let thrown: unknown;
      try {
        for await (const event of held.events) {
          events.push(event);
          held.abort(new Error("enough"));
        }
      } catch (error) {
        thrown = (error as Error).message;
      }
      const result = await w.settle(held.result);
      const controller = new AbortController();
      const waiting = t.waiting(undefined, { signal: controller.signal });
      setTimeout(() => controller.abort(), 100);
      return { events, thrown, result, signalled: await w.settle(waiting.result) };
    });
    expect(out).toMatchObject({ events: ["holding"], thrown: "enough", result: { ok: false, message: "enough" }, signalled: { ok: false, name: "AbortError" } });
    await waitFor(() => fx.server.hits("/__rpc/plugin/ticker/hold")[0]?.clientClosedAt, 4000, "the aborted stream to be closed");
    await waitFor(() => fx.server.hits("/__rpc/plugin/ticker/waiting")[0]?.clientClosedAt, 4000, "the aborted request to be closed");
  });

  it("a stallTimeoutMs that is not a number of ms, 0 or more, rejects result with the TypeError the HttpClient constructor throws", async () => {
    const out = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as StreamWindow;
      const t = w.xserver.plugin.ticker.$stream;
      const constructed = (value: unknown): string => {
        try {
          return new w.HttpClient({ stallTimeoutMs: value }) && "accepted";
        } catch (error) {
          return `${(error as Error).name}: ${(error as Error).message}`;
        }
      };
      const called = async (options: unknown): Promise<string> => {
        const settled = await w.settle(t.count(undefined, options).result);
        return settled.ok ? "accepted" : `${settled.name}: ${settled.message}`;
      };
      const client = new w.HttpClient();
      const loose = { request: client.request.bind(client), stream: client.stream.bind(client), stallTimeoutMs: Number.NaN };
      return {
        constructed: [-1, Number.NaN, "10"].map(constructed),
        called: await Promise.all([{ stallTimeoutMs: -1 }, { stallTimeoutMs: Number.NaN }, { stallTimeoutMs: "10" }, { client: loose }].map(called)),
      };
    });
    for (const message of [...out.constructed, ...out.called]) expect(message).toMatch(/^TypeError: \w+: stallTimeoutMs must be a number of ms, 0 or more \(0 disables it\)$/);
    expect(fx.server.hits(PATH)).toHaveLength(0);
  });

  it("a transport without stream() still carries buffered calls; a $stream call on it rejects with a TypeError", async () => {
    const out = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as StreamWindow;
      const client = new w.HttpClient();
      w.xserver.setHttpClient({ request: (path: string, options: unknown) => client.request(path, options) });
      const buffered = await w.settle(w.xserver.plugin.ticker.echo({ a: 1 }));
      const streamed = await w.settle(w.xserver.plugin.ticker.$stream.count().result);
      return { buffered: buffered.ok, streamed };
    });
    expect(out.buffered).toBe(true);
    expect(out.streamed).toMatchObject({ ok: false, name: "TypeError", message: expect.stringContaining("stream(path, options)") });
    expect(fx.server.hits(PATH)).toHaveLength(0);
  });

  it("xserver.stream reaches the names the proxies hide, and refuses an unknown kind through result", async () => {
    fx.server.script("/__rpc/plugin/ticker/%24stream", [{ headers: NDJSON, body: ndjson({ event: "hidden" }, { done: true, ok: true, result: "found" }) }]);
    const out = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as StreamWindow;
      return { hidden: await w.finish(w.xserver.stream("plugin", "ticker", "$stream")), bad: await w.settle(w.xserver.stream("server", "core", "x").result) };
    });
    expect(out.hidden).toEqual({ drained: { items: ["hidden"], times: expect.any(Array), clock: expect.any(Array) }, result: { ok: true, value: "found" } });
    expect(out.bad).toMatchObject({ ok: false, name: "TypeError" });
  });
});
