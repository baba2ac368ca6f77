/**
 * The worker side of an isolated method's `ctx.emit` (docs/guides/streaming.md), over a
 * real MessageChannel with the main thread's relay at the other end: events go out in
 * order in batches, the window holds a method whose events are not written, and once the
 * call is over every emit rejects instead of vanishing into a closed port.
 */
import { describe, expect, it } from "vitest";
import { MessageChannel } from "node:worker_threads";
import { emitOverPort, relayEmits } from "../../dist/runtime/isolated-emit.js";
import type { StreamSink } from "../../dist/runtime/stream-sink.js";

const outcome = (promise: Promise<unknown>, ms = 200) =>
  Promise.race([
    promise.then(
      () => "resolved",
      (error: Error) => `rejected: ${error.name}`,
    ),
    new Promise((resolve) => setTimeout(() => resolve("pending"), ms)),
  ]);

/** A sink that writes nothing until `drain()`; records what it was given. */
function heldSink() {
  const written: string[] = [];
  let release: (() => void) | undefined;
  let held = true;
  const sink: StreamSink = {
    open() {},
    emit: () => Promise.reject(new Error("not used")),
    emitBatch(jsons) {
      written.push(...jsons);
      if (!held) return Promise.resolve();
      return new Promise<void>((resolve) => (release = resolve));
    },
  };
  return {
    sink,
    written,
    drain() {
      held = false;
      release?.();
    },
  };
}

describe("an isolated method's emit", () => {
  it("resolves at once under the window, and every event arrives in order", async () => {
    const { port1, port2 } = new MessageChannel();
    const { sink, written, drain } = heldSink();
    drain();
    relayEmits(port1, sink);
    const emitter = emitOverPort(port2);
    for (let i = 0; i < 1_000; i++) expect(await outcome(emitter.emit({ i }), 50)).toBe("resolved");
    await emitter.settle();
    expect(written).toEqual(Array.from({ length: 1_000 }, (_, i) => JSON.stringify({ i })));
    port1.close();
    port2.close();
  });

  it("waits once the window is full and nothing is written, and goes on when it is", async () => {
    const { port1, port2 } = new MessageChannel();
    const held = heldSink();
    relayEmits(port1, held.sink);
    const emitter = emitOverPort(port2);
    const chunk = "x".repeat(16 * 1024);
    const emits: Array<Promise<void>> = [];
    for (let i = 0; i < 10; i++) emits.push(emitter.emit(chunk));
    expect(await outcome(emits[0]!)).toBe("resolved");
    // 64 KiB of event text may run ahead of the socket, not more.
    expect(await outcome(emits[9]!)).toBe("pending");
    held.drain();
    expect(await outcome(emits[9]!, 1_000)).toBe("resolved");
    port1.close();
    port2.close();
  });

  it("rejects once the call is over, even past the window, instead of hanging", async () => {
    const { port1, port2 } = new MessageChannel();
    const held = heldSink();
    relayEmits(port1, held.sink);
    const emitter = emitOverPort(port2);
    const blocked = emitter.emit("y".repeat(70 * 1024));
    expect(await outcome(blocked)).toBe("pending");
    emitter.close();
    expect(await outcome(blocked)).toBe("rejected: StreamEndedError");
    expect(await outcome(emitter.emit({ late: 1 }))).toBe("rejected: StreamEndedError");
    expect(await outcome(emitter.settle())).toBe("resolved");
    port1.close();
    port2.close();
  });

  it("refuses an event JSON cannot carry, in the worker", async () => {
    const { port2 } = new MessageChannel();
    const emitter = emitOverPort(port2);
    expect(await outcome(emitter.emit({ big: 1n }))).toBe("rejected: TypeError");
    port2.close();
  });
});
