/**
 * Streaming answers over real HTTP (docs/guides/streaming.md): the headers at admission,
 * event, ping and terminal records, refusals before admission as plain JSON, backpressure
 * from a slow reader, a reader that stops or hangs up, timeouts mid-stream, the
 * concurrency slot and the breaker across the stream, isolated methods, one log event.
 */
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { useServer } from "../helpers/server.js";
import { rpc } from "../helpers/http.js";
import { openStream } from "../helpers/stream.js";

const ROOT = join(import.meta.dirname, "../fixtures/stream-app");
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const app = useServer({ root: ROOT });

async function probe(): Promise<{ flood: { emitted: number; rejected: string | null; done: boolean }; ignored: { emits: string[]; done: boolean }; held: number }> {
  const answer = await rpc(app.url, "plugin/ticker/probe", { viewer: app.viewer });
  return answer.body.result;
}

async function until<T>(read: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (ok(value) || Date.now() > deadline) return value;
    await sleep(25);
  }
}

function withoutTimes(records: Array<Record<string, unknown>>): unknown[] {
  return records.map(({ at: _at, ...record }) => record);
}

describe("the wire protocol", () => {
  it("sends the NDJSON headers on admission, before the method's first line", async () => {
    const stream = await openStream(app.url, "plugin/ticker/silent", { viewer: app.viewer, args: [{ ms: 400 }] });
    // The headers are in, and nothing of the body yet: the method has not written a line.
    expect(stream.bytes()).toBe(0);
    expect(stream.status).toBe(200);
    expect(stream.headers["content-type"]).toBe("application/x-ndjson; charset=utf-8");
    expect(stream.headers["cache-control"]).toBe("no-store");
    expect(stream.headers["x-accel-buffering"]).toBe("no");
    expect(stream.headers["content-encoding"]).toBeUndefined();
    expect(await stream.finished).toBe("end");
  });

  it("one line per event, live, then the terminal record with the result", async () => {
    const stream = await openStream(app.url, "plugin/ticker/count", { viewer: app.viewer, args: [{ n: 3, delayMs: 150 }] });
    const first = await stream.waitFor((record) => record.event?.i === 0);
    expect(stream.records.some((record) => record.done)).toBe(false);
    await stream.finished;
    const done = stream.records.at(-1)!;
    // The first event reached the reader while the method was still running.
    expect(done.at - first.at).toBeGreaterThan(100);
    expect(withoutTimes(stream.records.filter((record) => !record.ping))).toEqual([
      { event: { i: 0 } },
      { event: { i: 1 } },
      { event: { i: 2 } },
      { done: true, ok: true, result: { count: 3 } },
    ]);
    expect(stream.body().endsWith("\n")).toBe(true);
  });

  it("pings after streamHeartbeatMs of silence, and not while events flow", async () => {
    const silent = await openStream(app.url, "plugin/ticker/silent", { viewer: app.viewer, args: [{ ms: 500 }] });
    await silent.finished;
    expect(silent.records.filter((record) => record.ping === true).length).toBeGreaterThanOrEqual(2);
    expect(withoutTimes(silent.records.filter((record) => !record.ping))).toEqual([{ done: true, ok: true, result: { slept: 500 } }]);

    const busy = await openStream(app.url, "plugin/ticker/count", { viewer: app.viewer, args: [{ n: 8, delayMs: 50 }] });
    await busy.finished;
    expect(busy.records.filter((record) => record.ping)).toEqual([]);
  });

  it("a thrown RpcError is the terminal record, with its status, code and details", async () => {
    const stream = await openStream(app.url, "plugin/ticker/rpcFail", { viewer: app.viewer });
    expect(await stream.finished).toBe("end");
    expect(stream.status).toBe(200);
    expect(withoutTimes(stream.records)).toEqual([
      { event: { step: 1 } },
      { done: true, ok: false, status: 409, error: "The ticker moved on", code: "TICKER_CONFLICT", details: { at: 1 } },
    ]);
  });

  it("any other error answers a generic message with the request id, the real one goes to the log", async () => {
    const stream = await openStream(app.url, "plugin/ticker/fail", { viewer: app.viewer });
    await stream.finished;
    const done = stream.records.at(-1)!;
    expect(done).toMatchObject({ done: true, ok: false, status: 500, code: "RPC_INTERNAL_ERROR", error: "Internal server error" });
    expect(stream.body()).not.toContain("secret-internal-detail");
    const [event] = app.logs.forRequest(done.details.requestId);
    expect(event).toMatchObject({ event: "rpc.error", status: 500, events: 1, err: { message: expect.stringContaining("secret-internal-detail") } });
  });

  it("a result JSON cannot carry is RPC_BAD_RESULT; an event JSON cannot carry rejects the emit", async () => {
    const badResult = await openStream(app.url, "plugin/ticker/badResult", { viewer: app.viewer });
    await badResult.finished;
    expect(badResult.records.at(-1)).toMatchObject({ done: true, ok: false, status: 500, code: "RPC_BAD_RESULT" });

    const badEvent = await openStream(app.url, "plugin/ticker/badEvent", { viewer: app.viewer });
    await badEvent.finished;
    expect(withoutTimes(badEvent.records)).toEqual([
      { done: true, ok: true, result: { emitRejected: expect.stringContaining("not JSON-serialisable") } },
    ]);
  });

  it("logs one event per stream with its event count and its bytes", async () => {
    const stream = await openStream(app.url, "plugin/ticker/count", { viewer: app.viewer, args: [{ n: 5, text: "héllo" }] });
    await stream.finished;
    await sleep(20);
    const events = app.logs.events().filter((line) => line.method === "count" && line.events === 5);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ event: "rpc.complete", status: 200, bytes: stream.bytes() });
  });

  it("a buffered method's ctx.emit rejects", async () => {
    const answer = await rpc(app.url, "plugin/ticker/bufferedEmit", { viewer: app.viewer });
    expect(answer.body.result.emitRejected).toContain("streaming methods only");
  });
});

describe("refusals before admission stay plain JSON errors", () => {
  it("the stream header must match the method, both ways", async () => {
    const required = await openStream(app.url, "plugin/ticker/count", { viewer: app.viewer, streamHeader: false });
    await required.finished;
    expect([required.status, required.headers["content-type"], JSON.parse(required.body()).code]).toEqual([
      400,
      "application/json; charset=utf-8",
      "RPC_STREAM_REQUIRED",
    ]);
    // The browser's way is $stream, not the header: the message names the call to write.
    expect(JSON.parse(required.body()).error).toBe("This method streams: call it as xserver.plugin.ticker.$stream.count(…) in the browser, or send X-APP-Rpc-Stream: 1");
    const notStreamable = await openStream(app.url, "plugin/ticker/echo", { viewer: app.viewer });
    await notStreamable.finished;
    expect([notStreamable.status, JSON.parse(notStreamable.body()).code]).toEqual([400, "RPC_NOT_STREAMABLE"]);
  });

  it("no session, bad CSRF and an unknown method answer as for any call", async () => {
    const noSession = await openStream(app.url, "plugin/ticker/count", {});
    await noSession.finished;
    expect([noSession.status, JSON.parse(noSession.body()).code]).toEqual([401, "RPC_NO_SESSION"]);
    const unknown = await openStream(app.url, "plugin/ticker/nope", { viewer: app.viewer });
    await unknown.finished;
    expect([unknown.status, JSON.parse(unknown.body()).code]).toEqual([404, "RPC_UNKNOWN_METHOD"]);
    const publicStream = await openStream(app.url, "plugin/ticker/countPublic", { args: [{ n: 1 }] });
    await publicStream.finished;
    expect(publicStream.records.at(-1)).toMatchObject({ done: true, ok: true });
  });

  it("the concurrency slot is held for the whole stream: a full queue answers 429 JSON meanwhile", async () => {
    const first = await openStream(app.url, "plugin/ticker/oneAtATime", { viewer: app.viewer, args: [{ holdMs: 400 }] });
    await first.waitFor((record) => record.event?.started === true);
    const second = await openStream(app.url, "plugin/ticker/oneAtATime", { viewer: app.viewer });
    await second.finished;
    expect([second.status, JSON.parse(second.body()).code]).toEqual([429, "RPC_QUEUE_FULL"]);
    await first.finished;
    expect(first.records.at(-1)).toMatchObject({ done: true, ok: true });
    const third = await openStream(app.url, "plugin/ticker/oneAtATime", { viewer: app.viewer, args: [{ holdMs: 10 }] });
    await third.finished;
    expect(third.records.at(-1)).toMatchObject({ done: true, ok: true });
  });

  it("failed streams count for the breaker; once open it answers 503 JSON", async () => {
    for (let i = 0; i < 2; i++) {
      const failing = await openStream(app.url, "plugin/ticker/fragile", { viewer: app.viewer });
      await failing.finished;
      expect(failing.records.at(-1)).toMatchObject({ done: true, ok: false, status: 500 });
    }
    const refused = await openStream(app.url, "plugin/ticker/fragile", { viewer: app.viewer });
    await refused.finished;
    expect([refused.status, JSON.parse(refused.body()).code]).toEqual([503, "RPC_CIRCUIT_OPEN"]);
  });
});

describe("the end of a stream", () => {
  it("a timeout mid-stream: the terminal RPC_TIMEOUT record, the method's signal fires", async () => {
    const stream = await openStream(app.url, "plugin/ticker/hold", { viewer: app.viewer });
    expect(await stream.finished).toBe("end");
    expect(withoutTimes(stream.records.filter((record) => !record.ping))).toEqual([
      { event: { holding: true } },
      { done: true, ok: false, status: 504, error: "Method timed out", code: "RPC_TIMEOUT", details: { timeoutMs: 600 } },
    ]);
    expect((await until(probe, (seen) => seen.held === 0)).held).toBe(0);
  });

  it("a method that ignores its timeout cannot add to the stream: its later emits reject", async () => {
    const stream = await openStream(app.url, "plugin/ticker/ignoreTimeout", { viewer: app.viewer });
    await stream.finished;
    expect(stream.records.at(-1)).toMatchObject({ done: true, ok: false, code: "RPC_TIMEOUT" });
    const seen = await until(probe, (value) => value.ignored.done);
    expect(seen.ignored.emits).toEqual(["TimeoutError", "TimeoutError", "TimeoutError"]);
    expect(stream.records.some((record) => record.event?.late !== undefined)).toBe(false);
  });

  it("a reader that hangs up mid-stream stops the method; one 499 event with what was sent", async () => {
    const stream = await openStream(app.url, "plugin/ticker/hold", { viewer: app.viewer });
    await stream.waitFor((record) => record.event?.holding === true);
    const before = app.logs.events().length;
    stream.destroy();
    expect((await until(probe, (seen) => seen.held === 0)).held).toBe(0);
    const events = app.logs.events().slice(before).filter((line) => line.method === "hold");
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ event: "rpc.error", status: 499, code: "RPC_CLIENT_CLOSED", events: 1 });
  });

  it("a slow reader holds the method at its emit (memory stays flat), and gets every event once it reads", async () => {
    const stream = await openStream(app.url, "plugin/ticker/flood", { viewer: app.viewer, args: [{ n: 800, size: 16_384 }] });
    stream.pause();
    await sleep(300);
    const held = await probe();
    await sleep(300);
    const stillHeld = await probe();
    // Only what the socket buffers hold was written: the method waits instead of queueing 13 MB.
    expect(held.flood.done).toBe(false);
    expect(stillHeld.flood.emitted).toBe(held.flood.emitted);
    expect(held.flood.emitted).toBeLessThan(800);
    stream.resume();
    expect(await stream.finished).toBe("end");
    expect(stream.records.filter((record) => record.event).length).toBe(800);
    expect(stream.records.at(-1)).toMatchObject({ done: true, ok: true, result: { emitted: 800 } });
  });

  it("a reader that keeps reading gets the RPC_TIMEOUT record even from a method that writes as fast as it may", async () => {
    const stream = await openStream(app.url, "plugin/ticker/floodBrief", { viewer: app.viewer, args: [{ n: 1_000_000, size: 16_384 }] });
    expect(await stream.finished).toBe("end");
    expect(stream.records.at(-1)).toMatchObject({ done: true, ok: false, status: 504, code: "RPC_TIMEOUT" });
  });

  it("a reader that stops until the timeout: the method is released, and the connection dropped once the record stays unread", async () => {
    const stream = await openStream(app.url, "plugin/ticker/floodBrief", { viewer: app.viewer, args: [{ n: 800, size: 16_384 }] });
    stream.pause();
    const seen = await until(probe, (value) => value.flood.done, 3_000);
    expect(seen.flood).toMatchObject({ done: true, rejected: "TimeoutError" });
    // Three heartbeats (3 × 150 ms here) with the terminal record unread.
    await sleep(900);
    stream.resume();
    expect(await stream.finished).toBe("closed");
    expect(stream.records.some((record) => record.done)).toBe(false);
  });
});

describe("isolated streaming methods", () => {
  it("emit from the worker thread, in order, with the result last", async () => {
    const stream = await openStream(app.url, "plugin/ticker/isolatedCount", { viewer: app.viewer, args: [{ n: 4 }] });
    await stream.finished;
    // A worker slow to start on a busy machine may leave the heartbeat time to ping first.
    expect(withoutTimes(stream.records.filter((record) => !record.ping))).toEqual([
      { event: { i: 0, thread: "worker" } },
      { event: { i: 1, thread: "worker" } },
      { event: { i: 2, thread: "worker" } },
      { event: { i: 3, thread: "worker" } },
      { done: true, ok: true, result: { count: 4 } },
    ]);
  });

  it("deliver every event before the terminal record, however many", async () => {
    const stream = await openStream(app.url, "plugin/ticker/isolatedCount", { viewer: app.viewer, args: [{ n: 3_000 }] });
    await stream.finished;
    const events = stream.records.filter((record) => record.event);
    expect(events.map((record) => record.event.i)).toEqual(Array.from({ length: 3_000 }, (_, i) => i));
    expect(stream.records.at(-1)).toMatchObject({ done: true, ok: true, result: { count: 3_000 } });
  });

  it("a reader that stops holds the worker too: a window's worth more is written than inline", async () => {
    const writtenBeforeHangUp = async (method: string) => {
      const stream = await openStream(app.url, `plugin/ticker/${method}`, { viewer: app.viewer, args: [{ n: 800, size: 16_384 }] });
      stream.pause();
      await sleep(500);
      const before = app.logs.events().length;
      stream.destroy();
      const event = await until(
        async () => app.logs.events().slice(before).find((line) => line.method === method),
        (found) => found !== undefined,
      );
      expect(event).toMatchObject({ status: 499, code: "RPC_CLIENT_CLOSED" });
      return event!.events as number;
    };
    const inline = await writtenBeforeHangUp("flood");
    const isolated = await writtenBeforeHangUp("isolatedFlood");
    // The same socket buffers hold both; the worker may run 64 KiB of event text ahead. The
    // kernel tunes its buffers anew for each connection, so the two runs differ by a few
    // percent of what they hold: that much slack. A worker that ran free would write all 800.
    expect(isolated).toBeLessThanOrEqual(inline + Math.ceil((64 * 1024) / 16_384) + Math.max(6, Math.ceil(inline / 10)));
  });

  it("an RpcError thrown in the worker is the terminal record", async () => {
    const stream = await openStream(app.url, "plugin/ticker/isolatedFail", { viewer: app.viewer });
    await stream.finished;
    expect(stream.records.at(-1)).toEqual({ done: true, ok: false, status: 422, error: "No", code: "TICKER_REFUSED", details: { why: "test" }, at: expect.any(Number) });
  });

  it("time out mid-stream like inline ones", async () => {
    const stream = await openStream(app.url, "plugin/ticker/isolatedHold", { viewer: app.viewer });
    await stream.finished;
    expect(stream.records.filter((record) => !record.ping).map((record) => record.event ?? record.code)).toEqual([{ holding: true }, "RPC_TIMEOUT"]);
  });
});
