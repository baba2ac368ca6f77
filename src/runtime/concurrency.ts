/**
 * Concurrency per key (SPEC "States and transitions"): below `maxConcurrency` a call runs
 * at once, otherwise it waits in a FIFO queue; with `queueLimit` calls waiting the next is
 * refused at once. A waiting call whose signal fires (client gone, deadline passed) leaves
 * the queue without ever taking a slot.
 */
import { errorOf } from "../errors/http-error.js";

interface Waiter {
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

  /** Resolves to true when the slot was taken at once, false after waiting in the queue. */
  acquire(signal: AbortSignal): Promise<boolean> {
    if (this.#active < this.maxConcurrency) {
      this.#active += 1;
      return Promise.resolve(true);
    }
    if (this.#waiting.size >= this.queueLimit) {
      return Promise.reject(errorOf("RPC_QUEUE_FULL", { limit: this.queueLimit }));
    }
    signal.throwIfAborted();
    return new Promise<boolean>((resolve, reject) => {
      const onAbort = () => {
        if (this.#waiting.delete(waiter)) reject(signal.reason);
      };
      const waiter: Waiter = {
        resolve: () => {
          signal.removeEventListener("abort", onAbort);
          resolve(false);
        },
        reject,
      };
      this.#waiting.add(waiter);
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** Hands the slot to the oldest waiter, or frees it. */
  release(): void {
    const next = this.#waiting.values().next();
    if (!next.done) {
      this.#waiting.delete(next.value);
      next.value.resolve();
      return;
    }
    this.#active -= 1;
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
