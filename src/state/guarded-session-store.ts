/**
 * A session store in another process (Redis, the cluster's master) behind a short
 * circuit. Every session-bound call loads its session's data, so a store that hangs (the
 * connection up, no answer) would hold up each call for the store's whole timeout, those
 * that never touch the data included. Once a load or save finds the store unreachable,
 * calls get their "unavailable" view at once for the next `retryMs`; then one call tries
 * the store again, and its answer decides. A store that hangs costs one call per
 * `retryMs` its timeout, not every call. A store that says it is reachable again (Redis's
 * connection is back: `reachable()`) closes the circuit at once, so that session calls
 * answer again as soon as `/health/ready` does, not up to `retryMs` later.
 */
import { errorOf, isHttpError } from "../errors/http-error.js";
import type { SessionChanges, SessionStore } from "./session-store.js";

/** How long calls skip a store that was just found unreachable. */
export const STORE_RETRY_MS = 1_000;

export class GuardedSessionStore implements SessionStore {
  readonly #inner: SessionStore;
  readonly #retryMs: number;
  /** 0 while the store answers; else when the next call may try it again. */
  #downUntil = 0;
  #probing = false;
  #skippedLoads = 0;
  #skippedSaves = 0;

  constructor(inner: SessionStore, retryMs = STORE_RETRY_MS) {
    this.#inner = inner;
    this.#retryMs = retryMs;
  }

  get kind(): SessionStore["kind"] {
    return this.#inner.kind;
  }

  /** True from the answer that found the store unreachable until one that reaches it (for metrics). */
  get open(): boolean {
    return this.#downUntil !== 0;
  }

  /** Loads and saves refused without asking the store, while open (for metrics). */
  get skipped(): { load: number; save: number } {
    return { load: this.#skippedLoads, save: this.#skippedSaves };
  }

  load(id: string): ReadonlyMap<string, string> | Promise<ReadonlyMap<string, string>> {
    if (this.#skip()) {
      this.#skippedLoads += 1;
      return Promise.reject(errorOf("SESSION_STORE_UNAVAILABLE"));
    }
    return this.#watch(this.#inner.load(id));
  }

  save(id: string, changes: SessionChanges, expiresAtMs: number, maxBytes: number): Promise<void> {
    if (this.#skip()) {
      this.#skippedSaves += 1;
      return Promise.reject(errorOf("SESSION_STORE_UNAVAILABLE"));
    }
    return Promise.resolve(this.#watch(this.#inner.save(id, changes, expiresAtMs, maxBytes)));
  }

  close(): Promise<void> {
    return this.#inner.close();
  }

  /** The store's connection is back: the next calls use it rather than wait out `retryMs`. */
  reachable(): void {
    this.#answered(undefined);
  }

  /** True while calls should not wait for the store; the first call after `retryMs` becomes the probe. */
  #skip(): boolean {
    if (this.#downUntil === 0) return false;
    if (this.#probing || Date.now() < this.#downUntil) return true;
    this.#probing = true;
    return false;
  }

  #watch<T>(answer: T | Promise<T>): T | Promise<T> {
    if (!(answer instanceof Promise)) return this.#answered(answer);
    return answer.then(
      (value) => this.#answered(value),
      (error: unknown) => {
        // A refusal (over the size limit) is an answer; only unreachable opens the circuit.
        if (isHttpError(error) && error.code === "SESSION_STORE_UNAVAILABLE") {
          this.#downUntil = Date.now() + this.#retryMs;
          this.#probing = false;
        } else this.#answered(undefined);
        throw error;
      },
    );
  }

  #answered<T>(value: T): T {
    this.#downUntil = 0;
    this.#probing = false;
    return value;
  }
}
