/**
 * Concurrency per key (docs/guides/server-methods.md "Runtime protections"): below `maxConcurrency` a call runs
 * at once, otherwise it waits in a FIFO queue; with `queueLimit` calls waiting the next is
 * refused at once. A waiting call that ends (client gone, timeout passed) leaves the queue
 * without ever taking a slot. Methods sharing a `concurrencyKey` share one gate, and each
 * call is held to its own method's limits.
 */
import { errorOf, type HttpError } from "../errors/http-error.js";
import type { CallLifetime } from "./call-lifetime.js";

interface Waiter {
  maxConcurrency: number;
  resolve(): void;
  reject(reason: unknown): void;
}

export class ConcurrencyLimiter {
  readonly maxConcurrency: number;
  readonly queueLimit: number;
  #active = 0;
  // A Set keeps insertion order (FIFO) and removes a departed waiter in O(1).
  readonly #waiting = new Set<Waiter>();

  constructor(maxConcurrency: number, queueLimit: number) {
    this.maxConcurrency = maxConcurrency;
    this.queueLimit = queueLimit;
  }

  get active(): number {
    return this.#active;
  }

  get queued(): number {
    return this.#waiting.size;
  }

  /**
   * `true` when a slot was free and is now taken; otherwise a promise of the slot that
   * settles once it is handed over, or rejects when the call ends first. RPC_QUEUE_FULL,
   * returned rather than thrown (docs/reference/benchmarks.md "Refusals"), when the queue is full.
   */
  acquire(lifetime: CallLifetime, maxConcurrency = this.maxConcurrency, queueLimit = this.queueLimit): true | HttpError | Promise<void> {
    if (this.#active < maxConcurrency) {
      this.#active += 1;
      return true;
    }
    if (this.#waiting.size >= queueLimit) return errorOf("RPC_QUEUE_FULL", { limit: queueLimit });
    lifetime.throwIfEnded();
    return new Promise<void>((resolve, reject) => {
      const onEnd = (reason: unknown) => {
        if (this.#waiting.delete(waiter)) reject(reason);
      };
      const waiter: Waiter = {
        maxConcurrency,
        resolve: () => {
          lifetime.offEnd(onEnd);
          resolve();
        },
        reject,
      };
      this.#waiting.add(waiter);
      lifetime.onEnd(onEnd);
    });
  }

  /** Hands the slot to the oldest waiter whose own limit allows it, or frees it. */
  release(): void {
    this.#active -= 1;
    for (const waiter of this.#waiting) {
      if (this.#active >= waiter.maxConcurrency) continue;
      this.#waiting.delete(waiter);
      this.#active += 1;
      waiter.resolve();
      return;
    }
  }
}

/** Limiters by concurrency key, created on first use with that method's limits. */
export class ConcurrencyLimiters {
  readonly #limiters = new Map<string, ConcurrencyLimiter>();

  for(key: string, maxConcurrency: number, queueLimit: number): ConcurrencyLimiter {
    let limiter = this.#limiters.get(key);
    if (!limiter) {
      limiter = new ConcurrencyLimiter(maxConcurrency, queueLimit);
      this.#limiters.set(key, limiter);
    }
    return limiter;
  }

  status(): Record<string, { active: number; queued: number; maxConcurrency: number; queueLimit: number }> {
    const out: Record<string, { active: number; queued: number; maxConcurrency: number; queueLimit: number }> = {};
    for (const [key, limiter] of this.#limiters) {
      out[key] = { active: limiter.active, queued: limiter.queued, maxConcurrency: limiter.maxConcurrency, queueLimit: limiter.queueLimit };
    }
    return out;
  }
}
