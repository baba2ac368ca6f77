// docs/guides/server-methods.md "Runtime protections", circuit breakers: consecutive failures per key open the
// breaker, an open breaker refuses with the time left, after resetAfterMs exactly one trial
// call runs and its outcome closes or reopens it. The clock is vitest's: no real waits.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { CircuitBreaker, CircuitBreakers, type CallOutcome } from "../../dist/runtime/circuit-breaker.js";
import { HttpError } from "../../dist/errors/http-error.js";

const THRESHOLD = 3;
const RESET_MS = 1_000;

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(new Date("2030-01-01T00:00:00Z"));
});
afterEach(() => {
  vi.useRealTimers();
});

const breakerOf = (key = "upstream") => new CircuitBreaker(key, THRESHOLD, RESET_MS);

/** One call as the runtime makes it: admit, run, record. Returns whether it was the trial. */
function call(breaker: CircuitBreaker, outcome: CallOutcome): boolean {
  const isTrial = breaker.admit();
  if (isTrial instanceof HttpError) throw isTrial;
  breaker.record(outcome, isTrial);
  return isTrial;
}

/** The refusal `admit` returns; fails the test when the call is let through instead. */
function refusal(breaker: CircuitBreaker): HttpError {
  const admitted = breaker.admit();
  if (admitted instanceof HttpError) return admitted;
  throw new Error(`expected RPC_CIRCUIT_OPEN, the call was let through (trial: ${admitted})`);
}

const retryAfterOf = (breaker: CircuitBreaker) => refusal(breaker).details.retryAfterMs;

function openBreaker(breaker: CircuitBreaker): void {
  for (let i = 0; i < breaker.failureThreshold; i++) call(breaker, "failure");
  expect(breaker.state).toBe("open");
}

describe("CircuitBreaker", () => {
  it("lets calls through until failureThreshold consecutive failures, then opens", () => {
    const breaker = breakerOf();
    for (let i = 1; i < THRESHOLD; i++) {
      expect(call(breaker, "failure")).toBe(false);
      expect([breaker.state, breaker.failures]).toEqual(["closed", i]);
    }
    // One failure short of the threshold: still admitted, and not as a trial.
    expect(breaker.admit()).toBe(false);
    breaker.record("failure", false);
    expect(breaker.state).toBe("open");
    const error = refusal(breaker);
    expect(error.status).toBe(503);
    expect(error.code).toBe("RPC_CIRCUIT_OPEN");
    expect(error.details).toEqual({ key: "upstream", retryAfterMs: RESET_MS });
  });

  it("refuses while open with the time that remains, never less than 1 ms", () => {
    const breaker = breakerOf();
    openBreaker(breaker);
    expect(retryAfterOf(breaker)).toBe(1_000);
    vi.advanceTimersByTime(400);
    expect(retryAfterOf(breaker)).toBe(600);
    vi.advanceTimersByTime(599);
    expect(retryAfterOf(breaker)).toBe(1);
    // Refusals neither extend the open time nor count as failures.
    expect(breaker.failures).toBe(THRESHOLD);
    expect(breaker.state).toBe("open");
  });

  it("after resetAfterMs admits exactly one trial call while the others are still refused", () => {
    const breaker = breakerOf();
    openBreaker(breaker);
    vi.advanceTimersByTime(RESET_MS - 1);
    refusal(breaker);
    vi.advanceTimersByTime(1);
    expect(breaker.admit()).toBe(true);
    expect(breaker.state).toBe("trial");
    // The trial is under way: nobody else gets through, however long it takes.
    for (const wait of [0, 10, 5_000]) {
      vi.advanceTimersByTime(wait);
      const error = refusal(breaker);
      expect(error.code).toBe("RPC_CIRCUIT_OPEN");
      expect(error.details.retryAfterMs).toBe(RESET_MS);
    }
  });

  it("a trial that succeeds closes the breaker and clears the count", () => {
    const breaker = breakerOf();
    openBreaker(breaker);
    vi.advanceTimersByTime(RESET_MS);
    expect(call(breaker, "success")).toBe(true);
    expect([breaker.state, breaker.failures]).toEqual(["closed", 0]);
    expect(breaker.admit()).toBe(false);
    breaker.record("success", false);
    // A fresh count: it takes the whole threshold again to open.
    for (let i = 1; i < THRESHOLD; i++) call(breaker, "failure");
    expect(breaker.admit()).toBe(false);
    breaker.record("failure", false);
    refusal(breaker);
  });

  it("a trial that fails reopens the breaker for another resetAfterMs, counted from its failure", () => {
    const breaker = breakerOf();
    openBreaker(breaker);
    vi.advanceTimersByTime(RESET_MS);
    expect(breaker.admit()).toBe(true);
    vi.advanceTimersByTime(300); // the trial takes a while, then fails
    breaker.record("failure", true);
    expect(breaker.state).toBe("open");
    expect(retryAfterOf(breaker)).toBe(RESET_MS);
    vi.advanceTimersByTime(RESET_MS - 1);
    expect(retryAfterOf(breaker)).toBe(1);
    vi.advanceTimersByTime(1);
    expect(breaker.admit()).toBe(true); // the next trial
    refusal(breaker);
  });

  it("neutral outcomes do not count, nor do they break a run of consecutive failures", () => {
    const breaker = breakerOf();
    for (let i = 1; i < THRESHOLD; i++) {
      call(breaker, "failure");
      for (let j = 0; j < 5; j++) call(breaker, "neutral");
    }
    expect([breaker.state, breaker.failures]).toEqual(["closed", THRESHOLD - 1]);
    call(breaker, "failure");
    refusal(breaker);
  });

  it("a neutral trial (its client left) proves nothing: the next call becomes the trial at once", () => {
    const breaker = breakerOf();
    openBreaker(breaker);
    vi.advanceTimersByTime(RESET_MS);
    expect(breaker.admit()).toBe(true);
    vi.advanceTimersByTime(50);
    breaker.record("neutral", true);
    expect(breaker.admit()).toBe(true);
    refusal(breaker);
    breaker.record("success", true);
    expect([breaker.state, breaker.failures]).toEqual(["closed", 0]);
  });

  it("a success between failures starts the count over", () => {
    const breaker = breakerOf();
    for (let round = 0; round < 3; round++) {
      for (let i = 1; i < THRESHOLD; i++) call(breaker, "failure");
      call(breaker, "success");
      expect([breaker.state, breaker.failures]).toEqual(["closed", 0]);
    }
    for (let i = 0; i < THRESHOLD; i++) call(breaker, "failure");
    refusal(breaker);
  });

  it("a success of a call admitted before the breaker opened does not close it", () => {
    const breaker = breakerOf();
    // Admitted while closed, still running when the breaker opens.
    const straggler = breaker.admit();
    if (straggler instanceof HttpError) throw straggler;
    openBreaker(breaker);
    breaker.record("success", straggler);
    expect(breaker.state).toBe("open");
    expect(retryAfterOf(breaker)).toBe(RESET_MS);
  });
});

describe("CircuitBreakers", () => {
  it("keeps one breaker per key: the same key shares state, other keys are independent", () => {
    const breakers = new CircuitBreakers();
    const a = breakers.for("upstream-a", 2, 500);
    const b = breakers.for("upstream-b", 2, 500);
    expect(breakers.for("upstream-a", 2, 500)).toBe(a);
    call(a, "failure");
    call(breakers.for("upstream-a", 2, 500), "failure"); // another method, same key
    expect(refusal(breakers.for("upstream-a", 2, 500)).details.key).toBe("upstream-a");
    expect(b.admit()).toBe(false);
    expect([b.state, b.failures]).toEqual(["closed", 0]);
  });

  it("the limits of the key's first use apply to every later use", () => {
    const breakers = new CircuitBreakers();
    const first = breakers.for("shared", 2, 500);
    const later = breakers.for("shared", 10, 60_000);
    expect(later).toBe(first);
    expect([later.failureThreshold, later.resetAfterMs]).toEqual([2, 500]);
    call(later, "failure");
    call(later, "failure");
    expect(retryAfterOf(later)).toBe(500);
  });

  it("status() lists every key with its state, failure count and limits", () => {
    const breakers = new CircuitBreakers();
    expect(breakers.status()).toEqual({});
    const a = breakers.for("a", 2, 500);
    breakers.for("b", 5, 2_000);
    call(a, "failure");
    expect(breakers.status()).toEqual({
      a: { state: "closed", failures: 1, failureThreshold: 2, resetAfterMs: 500 },
      b: { state: "closed", failures: 0, failureThreshold: 5, resetAfterMs: 2_000 },
    });
    call(a, "failure");
    expect(breakers.status().a).toEqual({ state: "open", failures: 2, failureThreshold: 2, resetAfterMs: 500 });
    vi.advanceTimersByTime(500);
    expect(a.admit()).toBe(true);
    expect(breakers.status().a.state).toBe("trial");
    a.record("success", true);
    expect(breakers.status().a).toEqual({ state: "closed", failures: 0, failureThreshold: 2, resetAfterMs: 500 });
  });

  it("transitions() counts every move between states by key (for metrics), refusals and unchanged records none", () => {
    const breakers = new CircuitBreakers();
    const a = breakers.for("a", 2, 500);
    breakers.for("b", 2, 500);
    expect(breakers.transitions()).toEqual([]);
    call(a, "failure");
    call(a, "failure");
    refusal(a);
    vi.advanceTimersByTime(500);
    expect(a.admit()).toBe(true);
    // A trial whose client left hands the trial on: back to open, and the next call is the trial.
    a.record("neutral", true);
    expect(a.admit()).toBe(true);
    a.record("failure", true);
    vi.advanceTimersByTime(500);
    expect(call(a, "success")).toBe(true);
    call(a, "success");
    expect(breakers.transitions()).toEqual([
      { key: "a", from: "closed", to: "open", count: 1 },
      { key: "a", from: "open", to: "trial", count: 3 },
      { key: "a", from: "trial", to: "closed", count: 1 },
      { key: "a", from: "trial", to: "open", count: 2 },
    ]);
  });
});
