/**
 * One rate limit counted in this process (docs/guides/server-methods.md "Rate limits", `scope: "process"`, and
 * `"deployment"` without Redis): fixed windows, the first call of a caller opening
 * `durationMs`, a refused call neither taking a point nor moving the window's end.
 *
 * Hand-written rather than rate-limiter-flexible's RateLimiterMemory (still used, for
 * Redis's stand-in, in ./rate-limiters.ts): that one answers through a promise chain and
 * arms a timer per caller, which made a limited echo cost a fifth more CPU than an
 * unlimited one and kept a refusal from being answered at once. This one answers
 * synchronously; windows that ended are swept at most once per `durationMs`.
 */
export class WindowCounter {
  readonly #points: number;
  readonly #durationMs: number;
  readonly #windows = new Map<string, { used: number; endsAt: number }>();
  #sweepAt = 0;

  constructor(points: number, durationMs: number) {
    this.#points = points;
    this.#durationMs = durationMs;
  }

  /** Takes a point for `key`: 0 when admitted, else the milliseconds until a call is admitted again (at least 1). */
  consume(key: string, now = Date.now()): number {
    if (now >= this.#sweepAt) this.#sweep(now);
    const window = this.#windows.get(key);
    if (window === undefined || window.endsAt <= now) {
      // `points` is at least 1 (the config schema): the window's first call is admitted.
      this.#windows.set(key, { used: 1, endsAt: now + this.#durationMs });
      return 0;
    }
    if (window.used >= this.#points) return Math.max(1, Math.ceil(window.endsAt - now));
    window.used += 1;
    return 0;
  }

  /** Gives a point back (a later limit of the same call refused it). */
  reward(key: string): void {
    const window = this.#windows.get(key);
    if (window !== undefined && window.used > 0) window.used -= 1;
  }

  #sweep(now: number): void {
    for (const [key, window] of this.#windows) if (window.endsAt <= now) this.#windows.delete(key);
    this.#sweepAt = now + this.#durationMs;
  }
}
