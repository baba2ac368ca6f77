/**
 * A session store whose loads and saves are timed and whose failures are counted, by the
 * store's kind (docs/reference/http-routes.md, GET /metrics). Put around the store only when metrics
 * are on, inside the guard of a remote store (./guarded-session-store.ts), so that what it
 * times is the store's own answers, not the guard's instant refusals (which the guard
 * counts itself). Recording is a few additions into plain cells, read at scrape time.
 */
import { CountSeries, HistogramSeries, type HistogramCell } from "../core/series.js";
import { isHttpError } from "../errors/http-error.js";
import type { SessionChanges, SessionStore } from "./session-store.js";

/** Seconds: from an in-memory lookup (well under 0.1 ms) to a store that hangs until its timeout. */
export const SESSION_STORE_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

type Operation = "load" | "save";

/** What the session stores of one server record into. */
export class SessionStoreMeter {
  /** Every load and save, failed ones included, by `kind` and `operation`. */
  readonly durations = new HistogramSeries(["kind", "operation"], SESSION_STORE_BUCKETS);
  /** Failed loads and saves by `kind`, `operation` and `code` (the error code; `_other` for anything else). */
  readonly errors = new CountSeries(["kind", "operation", "code"]);

  measure(store: SessionStore): SessionStore {
    return new MeasuredSessionStore(store, this);
  }
}

class MeasuredSessionStore implements SessionStore {
  readonly #inner: SessionStore;
  readonly #meter: SessionStoreMeter;
  readonly #loads: HistogramCell;
  readonly #saves: HistogramCell;

  constructor(inner: SessionStore, meter: SessionStoreMeter) {
    this.#inner = inner;
    this.#meter = meter;
    this.#loads = meter.durations.cell([inner.kind, "load"]);
    this.#saves = meter.durations.cell([inner.kind, "save"]);
  }

  get kind(): SessionStore["kind"] {
    return this.#inner.kind;
  }

  load(id: string): ReadonlyMap<string, string> | Promise<ReadonlyMap<string, string>> {
    const started = performance.now();
    let answer: ReadonlyMap<string, string> | Promise<ReadonlyMap<string, string>>;
    try {
      answer = this.#inner.load(id);
    } catch (error) {
      this.#failed("load", this.#loads, started, error);
      throw error;
    }
    // The in-memory store answers at once: no promise is made for it here either.
    if (!(answer instanceof Promise)) {
      this.#loads.observe((performance.now() - started) / 1000);
      return answer;
    }
    this.#watch(answer, "load", this.#loads, started);
    return answer;
  }

  save(id: string, changes: SessionChanges, expiresAtMs: number, maxBytes: number): Promise<void> {
    const started = performance.now();
    let answer: Promise<void>;
    try {
      answer = this.#inner.save(id, changes, expiresAtMs, maxBytes);
    } catch (error) {
      this.#failed("save", this.#saves, started, error);
      throw error;
    }
    this.#watch(answer, "save", this.#saves, started);
    return answer;
  }

  close(): Promise<void> {
    return this.#inner.close();
  }

  /**
   * Records when `answer` settles, on a branch of its own: the caller gets the store's own
   * promise, so its timing and its rejection (which the caller handles) stay as they were.
   */
  #watch(answer: Promise<unknown>, operation: Operation, cell: HistogramCell, started: number): void {
    answer.then(
      () => cell.observe((performance.now() - started) / 1000),
      (error: unknown) => this.#failed(operation, cell, started, error),
    );
  }

  #failed(operation: Operation, cell: HistogramCell, started: number, error: unknown): void {
    cell.observe((performance.now() - started) / 1000);
    this.#meter.errors.cell([this.#inner.kind, operation, isHttpError(error) ? error.code : "_other"]).value += 1;
  }
}
