/**
 * `$stream` calls in Chromium against the real server's streaming methods (docs/guides/streaming.md
 * "Streaming answers", docs/guides/browser.md "Streaming calls"): live events, the result,
 * error records, the streaming/buffered mismatch, abort reaching the server's method,
 * heartbeats against the stall watchdog, a lost session, and AppElement.
 */
import { join } from "node:path";
import { expect, it } from "vitest";
import { describeInBrowser, PAGE_HARNESS } from "../helpers/browser.js";
import { useServerPage } from "../helpers/server-page.js";
import { STREAM_PAGE_HELPERS, type StreamWindow } from "../helpers/stream-page.js";

const ROOT = join(import.meta.dirname, "../fixtures/stream-app");

interface RecoveryWindow extends StreamWindow {
  recoveryCalls: unknown[];
}

const RECORDING_HOOK = `
window.recoveryCalls = [];
window.AppSessionRecovery = { handle(info) { window.recoveryCalls.push(info); } };
`;

describeInBrowser("$stream against the real server", () => {
  const serverPage = useServerPage({ root: ROOT }, { initScripts: [PAGE_HARNESS, STREAM_PAGE_HELPERS, RECORDING_HOOK], pagePer: "test" });

  it("yields the events in order while the method runs, then resolves with its result", async () => {
    const out = await serverPage.page.evaluate(async () => {
      const w = globalThis as unknown as StreamWindow;
      const started = w.now();
      const handle = w.xserver.plugin.ticker.$stream.count({ n: 3, delayMs: 300 });
      const times: number[] = [];
      const events: unknown[] = [];
      for await (const event of handle.events) {
        events.push(event);
        times.push(w.now() - started);
      }
      const result = await handle.result;
      return { events, times, result, resultAt: w.now() - started };
    });
    expect(out.events).toEqual([{ i: 0 }, { i: 1 }, { i: 2 }]);
    expect(out.result).toEqual({ count: 3 });
    // The first event was in the page while the method still had two delays (600 ms) to go;
    // a stream held back until the end would bring both at once.
    expect(out.resultAt - out.times[0]!).toBeGreaterThan(250);
  });

  it("settles result when the events are never read, from an isolated method too", async () => {
    const out = await serverPage.page.evaluate(async () => {
      const w = globalThis as unknown as StreamWindow;
      const t = w.xserver.plugin.ticker.$stream;
      const inline = await t.count({ n: 4 }).result;
      const isolated = t.isolatedCount({ n: 2 });
      return { inline, isolated: await isolated.result, isolatedEvents: (await w.drain(isolated.events)).items };
    });
    expect(out).toEqual({ inline: { count: 4 }, isolated: { count: 2 }, isolatedEvents: [{ i: 0, thread: "worker" }, { i: 1, thread: "worker" }] });
  });

  it("an RpcError after an event rejects with its status, code and details; events throws it after the event", async () => {
    const out = await serverPage.page.evaluate(async () => {
      const w = globalThis as unknown as StreamWindow;
      const t = w.xserver.plugin.ticker.$stream;
      return { ...(await w.finish(t.rpcFail())), plain: await w.settle(t.fail().result) };
    });
    const conflict = { name: "HttpError", status: 409, code: "TICKER_CONFLICT", details: { at: 1 }, message: "The ticker moved on" };
    expect(out.result).toMatchObject({ ok: false, ...conflict, isHttpError: true });
    expect(out.drained).toMatchObject({ items: [{ step: 1 }], error: conflict });
    // A plain error's message stays on the server outside dev mode.
    expect(out.plain).toMatchObject({ ok: false, status: 500, code: "RPC_INTERNAL_ERROR" });
    expect((out.plain as { message: string }).message).not.toContain("secret-internal-detail");
  });

  it("a buffered method called through $stream is refused before any stream with RPC_NOT_STREAMABLE", async () => {
    const out = await serverPage.page.evaluate(async () => {
      const w = globalThis as unknown as StreamWindow;
      return { ...(await w.finish(w.xserver.plugin.ticker.$stream.echo({ a: 1 }))), buffered: await w.settle(w.xserver.plugin.ticker.count()) };
    });
    expect(out.result).toMatchObject({ ok: false, name: "HttpError", status: 400, code: "RPC_NOT_STREAMABLE" });
    expect(out.drained).toMatchObject({ items: [], error: { code: "RPC_NOT_STREAMABLE" } });
    expect(out.buffered).toMatchObject({ ok: false, status: 400, code: "RPC_STREAM_REQUIRED" });
  });

  it("abort() ends the server's method long before its own timeout", async () => {
    const out = await serverPage.page.evaluate(async () => {
      const w = globalThis as unknown as StreamWindow;
      const handle = w.xserver.plugin.ticker.$stream.holdLong();
      for await (const event of handle.events) {
        if ((event as { holding?: boolean }).holding) break;
      }
      const heldWhileRunning = ((await w.xserver.plugin.ticker.probe()) as { held: number }).held;
      handle.abort(new Error("user closed the panel"));
      const result = await w.settle(handle.result);
      const aborted = w.now();
      let held = heldWhileRunning;
      while (held !== 0 && w.now() - aborted < 10_000) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        held = ((await w.xserver.plugin.ticker.probe()) as { held: number }).held;
      }
      return { heldWhileRunning, held, result };
    });
    expect(out.heldWhileRunning).toBe(1);
    expect(out.result).toMatchObject({ ok: false, message: "user closed the panel" });
    // `holdLong` times out after 30 s; stopped within 10 s of the abort, the abort is what ended it.
    expect(out.held).toBe(0);
  });

  it("the server's heartbeats keep a silent method alive past a shorter stallTimeoutMs", async () => {
    const out = await serverPage.page.evaluate(async () => {
      const w = globalThis as unknown as StreamWindow;
      return w.finish(w.xserver.plugin.ticker.$stream.silent({ ms: 800 }, { stallTimeoutMs: 400 }));
    });
    expect(out).toEqual({ result: { ok: true, value: { slept: 800 } }, drained: { items: [], times: [], clock: [] } });
  });

  it("without a session it rejects with RPC_NO_SESSION and calls AppSessionRecovery.handle once", async () => {
    await serverPage.page.context().clearCookies();
    const out = await serverPage.page.evaluate(async () => {
      const w = globalThis as unknown as RecoveryWindow;
      const result = await w.settle(w.xserver.plugin.ticker.$stream.count().result);
      return { result, calls: w.recoveryCalls };
    });
    expect(out.result).toMatchObject({ ok: false, name: "HttpError", status: 401, code: "RPC_NO_SESSION" });
    expect(out.calls).toEqual([{ status: 401, code: "RPC_NO_SESSION", message: expect.any(String), source: "rpc" }]);
  });

  it("AppElement.server().$stream is an object whose methods stream with the server() defaults", async () => {
    const out = await serverPage.page.evaluate(async () => {
      const w = globalThis as unknown as StreamWindow;
      const server = new w.AppElement({ kind: "plugin", id: "ticker" }).server({ viewerId: "viewer-7" });
      const { drained, result } = await w.finish(server.$stream.count({ n: 2, text: "hi" }));
      return { kind: typeof server.$stream, xserverKind: typeof w.xserver.plugin.ticker.$stream, events: drained.items, result };
    });
    expect(out).toEqual({
      kind: "object",
      xserverKind: "object",
      events: [{ i: 0, text: "hi" }, { i: 1, text: "hi" }],
      result: { ok: true, value: { count: 2 } },
    });
  });
});
