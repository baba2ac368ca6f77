// The cluster's request/reply channel (src/cluster/ipc.ts), two ends wired back to back:
// replies find their request, a silent end times out, a closed end fails waiting requests
// at once, and a handler's error comes back as the request's rejection.
import { describe, expect, it } from "vitest";
import { IpcChannel, IpcClosedError, IpcTimeoutError, isClusterMessage } from "../../dist/cluster/ipc.js";

function pair() {
  const ends: { a?: IpcChannel; b?: IpcChannel } = {};
  // Delivered on a later tick, as a real channel would.
  ends.a = new IpcChannel((message) => setImmediate(() => ends.b!.receive(message)));
  ends.b = new IpcChannel((message) => setImmediate(() => ends.a!.receive(message)));
  return ends as { a: IpcChannel; b: IpcChannel };
}

describe("IpcChannel", () => {
  it("matches concurrent replies to their requests", async () => {
    const { a, b } = pair();
    b.handle("double", async (payload) => {
      const n = payload as number;
      await new Promise((resolve) => setTimeout(resolve, 30 - n * 10));
      return n * 2;
    });
    expect(await Promise.all([1, 2, 3].map((n) => a.request("double", n, 1_000)))).toEqual([2, 4, 6]);
  });

  it("rejects with the handler's error message, or for an unknown op", async () => {
    const { a, b } = pair();
    b.handle("boom", () => {
      throw new Error("it broke");
    });
    await expect(a.request("boom", null, 1_000)).rejects.toThrow("it broke");
    await expect(a.request("nothing-here", null, 1_000)).rejects.toThrow("no handler for nothing-here");
  });

  it("times out when the other end does not answer, and ignores a late reply", async () => {
    const silent = new IpcChannel(() => {});
    await expect(silent.request("status", null, 20)).rejects.toBeInstanceOf(IpcTimeoutError);
    expect(silent.receive({ type: "counterpart:reply", requestId: 1, ok: true, value: "late" })).toBe(true);
  });

  it("fails waiting and later requests at once when closed", async () => {
    const silent = new IpcChannel(() => {});
    const waiting = silent.request("status", null, 10_000);
    silent.close("worker 123 exited");
    await expect(waiting).rejects.toBeInstanceOf(IpcClosedError);
    await expect(silent.request("status", null, 10_000)).rejects.toThrow("worker 123 exited");
  });

  it("recognises only its own messages", () => {
    expect(isClusterMessage({ type: "counterpart:log", line: "{}" })).toBe(true);
    expect(isClusterMessage({ type: "prom-client:getMetricsReq", requestId: 1 })).toBe(false);
    expect(isClusterMessage("counterpart:log")).toBe(false);
    expect(isClusterMessage(null)).toBe(false);
  });
});
