/**
 * When a crashed worker is replaced: after a delay that doubles with each recent crash
 * (100 ms, 200 ms, … up to 5 s), so that a worker dying at start does not spin the CPU;
 * and never again once `crashLimit` crashes fall within `windowMs` — a crash loop is a bug
 * or a broken deployment, and an operator (or the process supervisor) must see the master
 * stop instead of a cluster that silently keeps failing.
 */
export interface RestartPolicyOptions {
  baseDelayMs?: number;
  maxDelayMs?: number;
  crashLimit?: number;
  windowMs?: number;
}

export type RestartDecision = { restart: true; delayMs: number } | { restart: false; crashes: number; windowMs: number };

export class RestartPolicy {
  readonly #baseDelayMs: number;
  readonly #maxDelayMs: number;
  readonly #crashLimit: number;
  readonly #windowMs: number;
  #crashes: number[] = [];
  #total = 0;

  constructor(options: RestartPolicyOptions = {}) {
    this.#baseDelayMs = options.baseDelayMs ?? 100;
    this.#maxDelayMs = options.maxDelayMs ?? 5_000;
    this.#crashLimit = options.crashLimit ?? 5;
    this.#windowMs = options.windowMs ?? 30_000;
  }

  /** Records a crash at `now` and says what to do about it. */
  recordCrash(now: number): RestartDecision {
    this.#total += 1;
    this.#crashes = this.#crashes.filter((at) => now - at < this.#windowMs);
    this.#crashes.push(now);
    const recent = this.#crashes.length;
    if (recent >= this.#crashLimit) return { restart: false, crashes: recent, windowMs: this.#windowMs };
    const delayMs = Math.min(this.#maxDelayMs, this.#baseDelayMs * 2 ** (recent - 1));
    return { restart: true, delayMs };
  }

  /** Crashes since start, for getStatus. */
  get total(): number {
    return this.#total;
  }
}
