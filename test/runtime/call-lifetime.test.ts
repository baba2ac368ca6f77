// One RPC call's lifetime (docs/guides/server-methods.md "Runtime protections", Timeouts): it ends when the client
// goes away or when its timeout passes, whichever comes first; everything waiting on the
// call learns it through race(), onEnd(), onTimeout() or the lazily made signal. The timer
// runs on vitest's clock: no real waits.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { CallLifetime, CallTimeoutError, ClientGoneError } from "../../dist/runtime/call-lifetime.js";


beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

interface Outcome<T> {
  state: "pending" | "resolved" | "rejected";
  value?: T;
  error?: unknown;
}

function watch<T>(promise: Promise<T>): Outcome<T> {
  const outcome: Outcome<T> = { state: "pending" };
  promise.then(
    (value) => Object.assign(outcome, { state: "resolved", value }),
    (error: unknown) => Object.assign(outcome, { state: "rejected", error }),
  );
  return outcome;
}

async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe("CallLifetime timeout", () => {
  it("startTimeout arms one timer that ends the call with a CallTimeoutError carrying timeoutMs", () => {
    const lifetime = new CallLifetime();
    expect(vi.getTimerCount()).toBe(0);
    lifetime.startTimeout(150);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(149);
    expect(lifetime.ended).toBe(false);
    expect(lifetime.reason).toBeUndefined();
    vi.advanceTimersByTime(1);
    expect(lifetime.ended).toBe(true);
    const reason = lifetime.reason as CallTimeoutError;
    expect(reason).toBeInstanceOf(CallTimeoutError);
    expect(reason.name).toBe("TimeoutError");
    expect(reason.timeoutMs).toBe(150);
    expect(reason.message).toBe("call exceeded its 150 ms timeout");
    expect(vi.getTimerCount()).toBe(0);
  });

  it("calling startTimeout again starts the budget over from now, with still one timer", () => {
    const lifetime = new CallLifetime();
    lifetime.startTimeout(100); // the checks, the body, the verifiers
    vi.advanceTimersByTime(90);
    lifetime.startTimeout(100); // the runtime takes the call: a whole budget again
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(99);
    expect(lifetime.ended).toBe(false);
    vi.advanceTimersByTime(1);
    expect(lifetime.ended).toBe(true);
    expect((lifetime.reason as CallTimeoutError).timeoutMs).toBe(100);
  });

  it("armTimeout arms a timer only when none is armed: it never starts the budget over", () => {
    const lifetime = new CallLifetime();
    lifetime.armTimeout(100);
    vi.advanceTimersByTime(90);
    lifetime.armTimeout(100);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(10);
    expect(lifetime.ended).toBe(true);
    expect((lifetime.reason as CallTimeoutError).timeoutMs).toBe(100);
  });

  it("startTimeout with a different budget starts the new budget from now, and the error reports it", () => {
    for (const [first, second] of [
      [100, 250],
      [250, 100],
    ] as const) {
      const lifetime = new CallLifetime();
      lifetime.startTimeout(first);
      vi.advanceTimersByTime(50);
      lifetime.startTimeout(second);
      expect(vi.getTimerCount()).toBe(1);
      vi.advanceTimersByTime(second - 1);
      expect({ first, second, ended: lifetime.ended }).toEqual({ first, second, ended: false });
      vi.advanceTimersByTime(1);
      expect({ first, second, ended: lifetime.ended }).toEqual({ first, second, ended: true });
      expect((lifetime.reason as CallTimeoutError).timeoutMs).toBe(second);
      expect((lifetime.reason as CallTimeoutError).message).toBe(`call exceeded its ${second} ms timeout`);
      expect(vi.getTimerCount()).toBe(0);
    }
  });

  it("a timer that already fired is left alone: startTimeout afterwards arms nothing", () => {
    const lifetime = new CallLifetime();
    const onTimeout = vi.fn();
    lifetime.onTimeout(onTimeout);
    lifetime.startTimeout(50);
    vi.advanceTimersByTime(50);
    lifetime.startTimeout(50);
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(1_000);
    expect(onTimeout).toHaveBeenCalledTimes(1);
  });

  it("onTimeout listeners run when the timeout passes, or at once when it already has", () => {
    const lifetime = new CallLifetime();
    const early = vi.fn();
    lifetime.onTimeout(early);
    lifetime.startTimeout(100);
    vi.advanceTimersByTime(100);
    expect(early).toHaveBeenCalledTimes(1);
    expect(early).toHaveBeenCalledWith(lifetime.reason);
    const late = vi.fn();
    lifetime.onTimeout(late);
    expect(late).toHaveBeenCalledTimes(1);
    expect(late.mock.calls[0]![0]).toBe(lifetime.reason);
  });

  it("a client that leaves does not run onTimeout listeners, but the timeout still does, with the first reason kept", () => {
    const lifetime = new CallLifetime();
    const onTimeout = vi.fn();
    lifetime.onTimeout(onTimeout);
    lifetime.startTimeout(100);
    const gone = new ClientGoneError();
    lifetime.end(gone);
    expect(onTimeout).not.toHaveBeenCalled();
    vi.advanceTimersByTime(100);
    // An isolated worker that ignores its signal is still stopped on time.
    expect(onTimeout).toHaveBeenCalledTimes(1);
    expect(onTimeout.mock.calls[0]![0]).toBeInstanceOf(CallTimeoutError);
    expect(lifetime.reason).toBe(gone);
  });

  it("dispose clears the timer: nothing is left behind and the call never times out", () => {
    const lifetime = new CallLifetime();
    const onTimeout = vi.fn();
    const onEnd = vi.fn();
    lifetime.onTimeout(onTimeout);
    lifetime.onEnd(onEnd);
    lifetime.startTimeout(100);
    lifetime.startTimeout(100);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(50);
    lifetime.dispose();
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(10_000);
    expect(lifetime.ended).toBe(false);
    expect(onTimeout).not.toHaveBeenCalled();
    expect(onEnd).not.toHaveBeenCalled();
  });

  it("dispose without a timer, or after it fired, is harmless", () => {
    const idle = new CallLifetime();
    idle.dispose();
    expect(idle.ended).toBe(false);
    const fired = new CallLifetime();
    fired.startTimeout(10);
    vi.advanceTimersByTime(10);
    fired.dispose();
    expect(fired.reason).toBeInstanceOf(CallTimeoutError);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe("CallLifetime end", () => {
  it("end(reason) when the client goes away ends the call once; the first reason stands", () => {
    const lifetime = new CallLifetime();
    lifetime.startTimeout(100);
    const gone = new ClientGoneError();
    lifetime.end(gone);
    expect(lifetime.ended).toBe(true);
    expect(lifetime.reason).toBe(gone);
    lifetime.end(new Error("later"));
    vi.advanceTimersByTime(100);
    expect(lifetime.reason).toBe(gone);
  });

  it("throwIfEnded does nothing while the call lives and throws the end reason after", () => {
    const lifetime = new CallLifetime();
    expect(() => lifetime.throwIfEnded()).not.toThrow();
    lifetime.startTimeout(20);
    vi.advanceTimersByTime(20);
    expect(() => lifetime.throwIfEnded()).toThrow(CallTimeoutError);
    expect(() => lifetime.throwIfEnded()).toThrow(lifetime.reason as Error);
  });

  it("onEnd listeners run once with the reason, at once when the call has ended; offEnd removes one", () => {
    const lifetime = new CallLifetime();
    const kept = vi.fn();
    const removed = vi.fn();
    lifetime.onEnd(kept);
    lifetime.onEnd(removed);
    lifetime.offEnd(removed);
    lifetime.offEnd(vi.fn()); // never added: ignored
    const gone = new ClientGoneError();
    lifetime.end(gone);
    lifetime.end(new Error("again"));
    expect(kept).toHaveBeenCalledTimes(1);
    expect(kept).toHaveBeenCalledWith(gone);
    expect(removed).not.toHaveBeenCalled();
    const late = vi.fn();
    lifetime.onEnd(late);
    expect(late).toHaveBeenCalledWith(gone);
  });

  it("the timeout ends the call for onEnd listeners too", () => {
    const lifetime = new CallLifetime();
    const onEnd = vi.fn();
    lifetime.onEnd(onEnd);
    lifetime.startTimeout(30);
    vi.advanceTimersByTime(29);
    expect(onEnd).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(onEnd).toHaveBeenCalledTimes(1);
    expect(onEnd.mock.calls[0]![0]).toBeInstanceOf(CallTimeoutError);
  });
});

describe("CallLifetime race", () => {
  it("settles with the work when it finishes first", async () => {
    const lifetime = new CallLifetime();
    lifetime.startTimeout(100);
    await expect(lifetime.race(Promise.resolve("done"))).resolves.toBe("done");
    const failure = new Error("method failed");
    await expect(lifetime.race(Promise.reject(failure))).rejects.toBe(failure);
    // The race leaves no listener behind: a later end reaches only the caller's own.
    const onEnd = vi.fn();
    lifetime.onEnd(onEnd);
    lifetime.end(new ClientGoneError());
    expect(onEnd).toHaveBeenCalledTimes(1);
    lifetime.dispose();
  });

  it("rejects with the timeout as soon as it passes, while the work is still running", async () => {
    const lifetime = new CallLifetime();
    lifetime.startTimeout(100);
    const work = deferred<string>();
    const raced = watch(lifetime.race(work.promise));
    await vi.advanceTimersByTimeAsync(99);
    expect(raced.state).toBe("pending");
    await vi.advanceTimersByTimeAsync(1);
    expect(raced.state).toBe("rejected");
    expect(raced.error).toBeInstanceOf(CallTimeoutError);
    // The work finishing later changes nothing.
    work.resolve("too late");
    await settle();
    expect(raced.state).toBe("rejected");
  });

  it("rejects with the end reason when the client goes away", async () => {
    const lifetime = new CallLifetime();
    const work = deferred<string>();
    const raced = watch(lifetime.race(work.promise));
    await settle();
    expect(raced.state).toBe("pending");
    const gone = new ClientGoneError();
    lifetime.end(gone);
    await settle();
    expect(raced).toMatchObject({ state: "rejected", error: gone });
    work.reject(new Error("aborted too")); // handled: no unhandled rejection
    await settle();
  });

  it("on a call that has ended, rejects at once and swallows the work's own rejection", async () => {
    const lifetime = new CallLifetime();
    const gone = new ClientGoneError();
    lifetime.end(gone);
    const work = deferred<never>();
    await expect(lifetime.race(work.promise)).rejects.toBe(gone);
    // Were this rejection unhandled, vitest would fail the run.
    work.reject(new Error("nobody listens"));
    await settle();
  });
});

describe("CallLifetime signal", () => {
  it("is made on first use only: a call that ends without anyone reading it makes no AbortController", () => {
    const RealAbortController = AbortController;
    let made = 0;
    vi.stubGlobal(
      "AbortController",
      class extends RealAbortController {
        constructor() {
          super();
          made += 1;
        }
      },
    );
    const unread = new CallLifetime();
    unread.startTimeout(10);
    vi.advanceTimersByTime(10);
    unread.end(new ClientGoneError());
    expect(made).toBe(0);
    const read = new CallLifetime();
    const signal = read.signal;
    expect(made).toBe(1);
    expect(read.signal).toBe(signal);
    expect(made).toBe(1);
  });

  it("aborts with the client's reason when the call ends after it was read", () => {
    const lifetime = new CallLifetime();
    const signal = lifetime.signal;
    const onAbort = vi.fn();
    signal.addEventListener("abort", onAbort);
    expect(signal.aborted).toBe(false);
    const gone = new ClientGoneError();
    lifetime.end(gone);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe(gone);
    expect(onAbort).toHaveBeenCalledTimes(1);
  });

  it("aborts with the CallTimeoutError when the timeout passes", () => {
    const lifetime = new CallLifetime();
    const signal = lifetime.signal;
    lifetime.startTimeout(40);
    vi.advanceTimersByTime(39);
    expect(signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBeInstanceOf(CallTimeoutError);
    expect(signal.reason).toBe(lifetime.reason);
  });

  it("read first after the call ended, it is already aborted with the reason", () => {
    const lifetime = new CallLifetime();
    lifetime.startTimeout(25);
    vi.advanceTimersByTime(25);
    const signal = lifetime.signal;
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe(lifetime.reason);
    expect(() => signal.throwIfAborted()).toThrow(CallTimeoutError);
  });
});
