// docs/guides/server-methods.md "Runtime protections", concurrency: below maxConcurrency a call runs at once, the
// rest wait in a FIFO queue, a full queue refuses at once with RPC_QUEUE_FULL, and a waiting
// call whose lifetime ends (client gone, timeout) leaves the queue without taking a slot.
// Timeouts run on vitest's clock: no real waits.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ConcurrencyLimiter, ConcurrencyLimiters } from "../../dist/runtime/concurrency.js";
import { CallLifetime, CallTimeoutError, ClientGoneError } from "../../dist/runtime/call-lifetime.js";

import { HttpError } from "../../dist/errors/http-error.js";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

interface Waiting {
  state: "waiting" | "running" | "left";
  reason?: unknown;
}

/** A call asking for a slot: "running" at once or once handed a slot, "left" if it gave up. */
function request(limiter: ConcurrencyLimiter, lifetime = new CallLifetime(), order?: string[], name?: string): Waiting {
  const slot = limiter.acquire(lifetime);
  if (slot === true) return { state: "running" };
  if (slot instanceof HttpError) throw slot;
  const waiting: Waiting = { state: "waiting" };
  slot.then(
    () => {
      waiting.state = "running";
      if (order && name) order.push(name);
    },
    (reason: unknown) => {
      waiting.state = "left";
      waiting.reason = reason;
    },
  );
  return waiting;
}

/** Lets settled slot promises run their callbacks. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}

function queueFull(limiter: ConcurrencyLimiter): HttpError {
  const slot = limiter.acquire(new CallLifetime());
  if (slot instanceof HttpError) return slot;
  throw new Error("expected RPC_QUEUE_FULL, the call was accepted");
}

describe("ConcurrencyLimiter", () => {
  it("runs up to maxConcurrency calls at once and queues the rest", () => {
    const limiter = new ConcurrencyLimiter(2, 10);
    expect(limiter.acquire(new CallLifetime())).toBe(true);
    expect(limiter.acquire(new CallLifetime())).toBe(true);
    expect(limiter.acquire(new CallLifetime())).toBeInstanceOf(Promise);
    expect([limiter.active, limiter.queued]).toEqual([2, 1]);
  });

  it("release hands the slot to the oldest waiter, in FIFO order, one per release", async () => {
    const limiter = new ConcurrencyLimiter(1, 10);
    const order: string[] = [];
    request(limiter);
    const waiters = ["a", "b", "c"].map((name) => request(limiter, new CallLifetime(), order, name));
    await settle();
    expect(waiters.map((w) => w.state)).toEqual(["waiting", "waiting", "waiting"]);
    limiter.release();
    await settle();
    expect(order).toEqual(["a"]);
    expect([limiter.active, limiter.queued]).toEqual([1, 2]);
    limiter.release();
    limiter.release();
    await settle();
    expect(order).toEqual(["a", "b", "c"]);
    expect(waiters.map((w) => w.state)).toEqual(["running", "running", "running"]);
  });

  it("a slot handed over stays taken: a newcomer queues behind; the slot is freed only when nobody waits", async () => {
    const limiter = new ConcurrencyLimiter(1, 10);
    request(limiter);
    const first = request(limiter);
    limiter.release();
    await settle();
    expect(first.state).toBe("running");
    expect([limiter.active, limiter.queued]).toEqual([1, 0]);
    const second = request(limiter);
    expect(second.state).toBe("waiting");
    limiter.release(); // first done: to second
    await settle();
    expect(second.state).toBe("running");
    limiter.release(); // second done: nobody waits
    expect([limiter.active, limiter.queued]).toEqual([0, 0]);
    expect(limiter.acquire(new CallLifetime())).toBe(true);
  });

  it("with queueLimit calls waiting, the next is refused at once with RPC_QUEUE_FULL", () => {
    const limiter = new ConcurrencyLimiter(1, 2);
    request(limiter);
    request(limiter);
    request(limiter);
    const error = queueFull(limiter);
    expect([error.status, error.code]).toEqual([429, "RPC_QUEUE_FULL"]);
    expect(error.details).toEqual({ limit: 2 });
    expect([limiter.active, limiter.queued]).toEqual([1, 2]);
  });

  it("queueLimit 0 refuses any call that finds no free slot", () => {
    const limiter = new ConcurrencyLimiter(1, 0);
    expect(limiter.acquire(new CallLifetime())).toBe(true);
    expect(queueFull(limiter).details).toEqual({ limit: 0 });
    expect(limiter.queued).toBe(0);
  });

  it("a waiting call whose client leaves rejects with that reason, leaves the queue, and the next waiter gets the slot", async () => {
    const limiter = new ConcurrencyLimiter(1, 10);
    request(limiter);
    const gone = new CallLifetime();
    const leaving = request(limiter, gone);
    const next = request(limiter);
    const reason = new ClientGoneError();
    gone.end(reason);
    await settle();
    expect(leaving.state).toBe("left");
    expect(leaving.reason).toBe(reason);
    expect([limiter.active, limiter.queued]).toEqual([1, 1]);
    limiter.release();
    await settle();
    expect(next.state).toBe("running");
    expect(leaving.state).toBe("left");
    expect([limiter.active, limiter.queued]).toEqual([1, 0]);
  });

  it("a waiting call whose timeout passes leaves the queue with CallTimeoutError, without ever taking a slot", async () => {
    const limiter = new ConcurrencyLimiter(1, 10);
    request(limiter);
    const short = new CallLifetime();
    short.startTimeout(100);
    const long = new CallLifetime();
    long.startTimeout(1_000);
    const timedOut = request(limiter, short);
    const patient = request(limiter, long);
    await vi.advanceTimersByTimeAsync(99);
    expect([timedOut.state, limiter.queued]).toEqual(["waiting", 2]);
    await vi.advanceTimersByTimeAsync(1);
    expect(timedOut.state).toBe("left");
    expect(timedOut.reason).toBeInstanceOf(CallTimeoutError);
    expect((timedOut.reason as CallTimeoutError).timeoutMs).toBe(100);
    expect([limiter.active, limiter.queued]).toEqual([1, 1]);
    limiter.release();
    await settle();
    expect(patient.state).toBe("running");
    limiter.release();
    // Every slot is back: the call that timed out never held one.
    expect([limiter.active, limiter.queued]).toEqual([0, 0]);
    short.dispose();
    long.dispose();
  });

  it("a call whose lifetime has already ended is not queued: acquire throws its reason", () => {
    const limiter = new ConcurrencyLimiter(1, 10);
    request(limiter);
    const lifetime = new CallLifetime();
    const reason = new ClientGoneError();
    lifetime.end(reason);
    expect(() => limiter.acquire(lifetime)).toThrow(reason);
    expect([limiter.active, limiter.queued]).toEqual([1, 0]);
  });

  it("a call that got its slot keeps it when its lifetime ends afterwards", async () => {
    const limiter = new ConcurrencyLimiter(1, 10);
    request(limiter);
    const lifetime = new CallLifetime();
    const waiter = request(limiter, lifetime);
    const behind = request(limiter);
    limiter.release();
    await settle();
    expect(waiter.state).toBe("running");
    lifetime.end(new ClientGoneError());
    await settle();
    // Still running (it releases its slot itself); the call behind it still waits.
    expect([waiter.state, behind.state]).toEqual(["running", "waiting"]);
    expect([limiter.active, limiter.queued]).toEqual([1, 1]);
  });
});

describe("ConcurrencyLimiters", () => {
  it("keeps one limiter per key: the same key shares slots and queue, other keys are independent", () => {
    const limiters = new ConcurrencyLimiters();
    const a = limiters.for("plugin/p/a", 1, 5);
    expect(limiters.for("plugin/p/a", 1, 5)).toBe(a);
    expect(limiters.for("plugin/p/a", 1, 5).acquire(new CallLifetime())).toBe(true);
    expect(limiters.for("plugin/p/a", 1, 5).acquire(new CallLifetime())).toBeInstanceOf(Promise);
    expect(limiters.for("plugin/p/b", 1, 5).acquire(new CallLifetime())).toBe(true);
  });

  it("the limits of the key's first use apply to every later use", () => {
    const limiters = new ConcurrencyLimiters();
    limiters.for("shared", 1, 1);
    const later = limiters.for("shared", 10, 100);
    expect([later.maxConcurrency, later.queueLimit]).toEqual([1, 1]);
    expect(later.acquire(new CallLifetime())).toBe(true);
    expect(later.acquire(new CallLifetime())).toBeInstanceOf(Promise);
    expect(queueFull(later).details).toEqual({ limit: 1 });
  });

  it("status() lists every key with its running and waiting calls and its limits", async () => {
    const limiters = new ConcurrencyLimiters();
    expect(limiters.status()).toEqual({});
    const a = limiters.for("a", 2, 3);
    limiters.for("b", 4, 100);
    const lifetime = new CallLifetime();
    request(a);
    request(a);
    request(a, lifetime);
    expect(limiters.status()).toEqual({
      a: { active: 2, queued: 1, maxConcurrency: 2, queueLimit: 3 },
      b: { active: 0, queued: 0, maxConcurrency: 4, queueLimit: 100 },
    });
    lifetime.end(new ClientGoneError());
    await settle();
    a.release();
    expect(limiters.status().a).toEqual({ active: 1, queued: 0, maxConcurrency: 2, queueLimit: 3 });
  });
});

describe("a gate shared by methods with different limits", () => {
  it("holds each call to its own maxConcurrency, also when a slot is handed over", async () => {
    const limiter = new ConcurrencyLimiter(3, 10);
    const wide = () => limiter.acquire(new CallLifetime(), 3, 10);
    expect(wide()).toBe(true);
    expect(wide()).toBe(true);
    let narrowRunning = false;
    const narrow = limiter.acquire(new CallLifetime(), 1, 10);
    expect(narrow).toBeInstanceOf(Promise);
    void (narrow as Promise<void>).then(() => {
      narrowRunning = true;
    });
    // The wide method still has room; the narrow one waits for the gate to drop below its 1.
    expect(wide()).toBe(true);
    limiter.release();
    limiter.release();
    await Promise.resolve();
    expect([narrowRunning, limiter.active]).toEqual([false, 1]);
    limiter.release();
    await Promise.resolve();
    expect([narrowRunning, limiter.active]).toEqual([true, 1]);
  });

  it("refuses by the calling method's own queueLimit", () => {
    const limiter = new ConcurrencyLimiter(1, 10);
    expect(limiter.acquire(new CallLifetime(), 1, 10)).toBe(true);
    expect(limiter.acquire(new CallLifetime(), 1, 0)).toBeInstanceOf(HttpError);
  });
});
