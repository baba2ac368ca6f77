/**
 * Circuit breakers shared by every process using one store (docs/guides/server-methods.md "Runtime protections";
 * docs/guides/deployment.md "Shared state and Redis"), with ./circuit-breaker.ts's rules: the
 * failures of all processes count together, an open breaker refuses on every process, and
 * after `resetAfterMs` exactly one call in the whole deployment runs the trial.
 *
 * Each process admits calls from its own view of the breaker, so a closed breaker costs no
 * round trip. The view follows the results of this process's own records and the store's
 * announcements of other processes' changes; only claiming the trial asks the store. The
 * view is read from the store before it admits its first call, and again before the next
 * call whenever announcements may have been missed (the store's `generation` moved): a
 * process that just started or reconnected would otherwise send calls to an upstream every
 * other process knows is down: an open breaker refuses everywhere. While
 * the store cannot be reached the view is the breaker: it counts this process's failures
 * and runs its own trials, as a per-process breaker does (a breaker is a protection, not a
 * requirement), and the store's state takes over again once it is back.
 */
import { errorOf, type HttpError } from "../errors/http-error.js";
import type { SharedBreakerStore, SharedBreakerView } from "../state/shared-state.js";
import {
  recordOutcome,
  StateChanges,
  type Breaker,
  type BreakerRegistry,
  type BreakerState,
  type BreakerStatus,
  type BreakerTransition,
  type CallOutcome,
} from "./circuit-breaker.js";

/** A trial claim outlives the trial call's timeout by this much, for the record's round trip. */
const TRIAL_LEASE_MARGIN_MS = 2_000;

/**
 * After a read of the view failed (Redis connected but not answering), calls go on the
 * process's own view for this long before one tries again: a hung store must not cost every
 * call a `commandTimeoutMs`.
 */
const READ_RETRY_MS = 1_000;

export class SharedCircuitBreaker implements Breaker {
  readonly key: string;
  readonly failureThreshold: number;
  readonly resetAfterMs: number;
  /** The view's moves: what this process saw and acted on, whoever moved the breaker. */
  readonly transitions = new StateChanges();
  readonly #store: SharedBreakerStore;
  #trialLeaseMs: number;
  #state: BreakerState = "closed";
  #failures = 0;
  /** Open: refusing until then. Trial run by another process: its claim lapses then. By this process's clock. */
  #until = 0;
  /** The trial this process runs, with the store's token for it (null: claimed while the store was away). */
  #ownTrial: { token: string | null } | null = null;
  #claiming = false;
  /** Counts what changed the view, so that a read made before a change cannot undo it. */
  #changes = 0;
  /** The store's version of the view shown (SharedBreakerView.version). */
  #version = 0;
  /** The store's generation in which the view was last read; -1: never read. */
  #readIn = -1;
  #reading: Promise<void> | null = null;
  #nextReadAt = 0;

  constructor(store: SharedBreakerStore, key: string, failureThreshold: number, resetAfterMs: number, trialLeaseMs: number) {
    this.#store = store;
    this.key = key;
    this.failureThreshold = failureThreshold;
    this.resetAfterMs = resetAfterMs;
    this.#trialLeaseMs = trialLeaseMs;
  }

  get state(): BreakerState {
    return this.#state;
  }

  get failures(): number {
    return this.#failures;
  }

  /** Methods sharing a key may have different timeouts: a trial claim lasts for the longest. */
  lengthenTrialLease(ms: number): void {
    if (ms > this.#trialLeaseMs) this.#trialLeaseMs = ms;
  }

  admit(): boolean | HttpError | Promise<boolean | HttpError> {
    if (this.#readIn !== this.#store.generation && this.#store.ready && Date.now() >= this.#nextReadAt) return this.refresh().then(() => this.#admitKnown());
    return this.#admitKnown();
  }

  /**
   * Reads the store's view (one read at a time, shared by the calls waiting on it). A read
   * that fails leaves the view as it is, the store's outage logged once.
   */
  refresh(): Promise<void> {
    this.#reading ??= this.#read().finally(() => {
      this.#reading = null;
    });
    return this.#reading;
  }

  async #read(): Promise<void> {
    const generation = this.#store.generation;
    const changes = this.#changes;
    try {
      const view = await this.#store.read(this.key);
      // An announcement or a result of this process's that came meanwhile is newer: it stands.
      if (this.#changes === changes) this.show(view);
      this.#readIn = generation;
    } catch (error) {
      this.#nextReadAt = Date.now() + READ_RETRY_MS;
      this.#store.fellBack(error);
    }
  }

  #admitKnown(): boolean | HttpError | Promise<boolean | HttpError> {
    if (this.#state === "closed") return false;
    const now = Date.now();
    if (this.#state === "open" && now < this.#until) return this.#refusal(this.#until - now);
    // A trial under way here, another process's trial whose claim still holds, or a claim
    // this process is making: nobody else gets through.
    if ((this.#state === "trial" && (this.#ownTrial !== null || now < this.#until)) || this.#claiming) return this.#refusal(this.resetAfterMs);
    if (!this.#store.ready) return this.#claimHere();
    this.#claiming = true;
    return this.#store.claimTrial(this.key, this.#trialLeaseMs + TRIAL_LEASE_MARGIN_MS).then(
      (claim) => {
        this.#claiming = false;
        if (claim.granted) {
          this.#version = Math.max(this.#version, claim.version);
          this.#changes += 1;
          this.#moveTo("trial");
          this.#ownTrial = { token: claim.token };
          return true;
        }
        this.show(claim.view);
        // Closed meanwhile by another process's trial: an ordinary call.
        if (this.#state === "closed") return false;
        return this.#refusal(this.#state === "open" ? this.#until - Date.now() : this.resetAfterMs);
      },
      (error: unknown) => {
        this.#claiming = false;
        this.#store.fellBack(error);
        return this.#claimHere();
      },
    );
  }

  record(outcome: CallOutcome, isTrial: boolean): void {
    const trial = isTrial ? this.#ownTrial : null;
    if (isTrial) {
      this.#ownTrial = null;
      // This process's next calls follow the trial's outcome at once; the store agrees.
      this.#recordHere(outcome, true);
    }
    if (outcome === "neutral" && trial?.token == null) return;
    // The common path: a success while nothing is counted has nothing to tell anyone.
    if (outcome === "success" && !isTrial && this.#state === "closed" && this.#failures === 0) return;
    if (!this.#store.ready) {
      this.#store.fellBack();
      if (!isTrial) this.#recordHere(outcome, false);
      return;
    }
    this.#store.record(this.key, outcome, trial?.token ?? null, this.failureThreshold, this.resetAfterMs).then(
      (view) => this.show(view),
      (error: unknown) => {
        this.#store.fellBack(error);
        if (!isTrial) this.#recordHere(outcome, false);
      },
    );
  }

  /**
   * Takes the store's state as this process's view, unless it is older than the one shown.
   * A breaker the store no longer holds (version 0: closed, Redis restarted) always counts.
   */
  show(view: SharedBreakerView): void {
    if (view.version !== 0 && view.version < this.#version) return;
    this.#version = view.version;
    this.#changes += 1;
    this.#failures = view.failures;
    // The trial in the store is this process's own: it stays under way here.
    if (view.state === "trial" && this.#ownTrial) {
      this.#moveTo("trial");
      return;
    }
    this.#moveTo(view.state);
    this.#until = Date.now() + view.remainingMs;
  }

  status(): BreakerStatus {
    return { state: this.#state, failures: this.#failures, failureThreshold: this.failureThreshold, resetAfterMs: this.resetAfterMs };
  }

  #claimHere(): boolean {
    this.#moveTo("trial");
    this.#ownTrial = { token: null };
    return true;
  }

  /** ./circuit-breaker.ts's rule, on this process's view alone. */
  #recordHere(outcome: CallOutcome, isTrial: boolean): void {
    this.#changes += 1;
    const counts = { state: this.#state, failures: this.#failures, openUntil: this.#until };
    recordOutcome(counts, outcome, isTrial, Date.now(), this.failureThreshold, this.resetAfterMs);
    this.#moveTo(counts.state);
    this.#failures = counts.failures;
    this.#until = counts.openUntil;
  }

  #moveTo(state: BreakerState): void {
    this.transitions.note(this.#state, state);
    this.#state = state;
  }

  #refusal(retryAfterMs: number): HttpError {
    return errorOf("RPC_CIRCUIT_OPEN", { key: this.key, retryAfterMs: Math.max(1, Math.ceil(retryAfterMs)) });
  }
}

/** Shared breakers by key, made on first use with that method's settings (as ./circuit-breaker.ts's). */
export class SharedCircuitBreakers implements BreakerRegistry {
  readonly #store: SharedBreakerStore;
  readonly #breakers = new Map<string, SharedCircuitBreaker>();

  constructor(store: SharedBreakerStore) {
    this.#store = store;
    store.onChange((key, view) => this.#breakers.get(key)?.show(view));
    // Announcements may have been missed: read every breaker again now, rather than
    // make the next call of each wait for its read.
    store.onReconnect(() => {
      for (const breaker of this.#breakers.values()) this.#sync(breaker);
    });
  }

  for(key: string, failureThreshold: number, resetAfterMs: number, trialLeaseMs: number): SharedCircuitBreaker {
    let breaker = this.#breakers.get(key);
    if (breaker) {
      breaker.lengthenTrialLease(trialLeaseMs);
      return breaker;
    }
    breaker = new SharedCircuitBreaker(this.#store, key, failureThreshold, resetAfterMs, trialLeaseMs);
    this.#breakers.set(key, breaker);
    // A breaker other processes opened before this one first used it: its first call
    // waits for this read (admit).
    this.#sync(breaker);
    return breaker;
  }

  status(): Record<string, BreakerStatus & { shared: boolean }> {
    const out: Record<string, BreakerStatus & { shared: boolean }> = {};
    const shared = this.#store.ready;
    for (const [key, breaker] of this.#breakers) out[key] = { ...breaker.status(), shared };
    return out;
  }

  transitions(): BreakerTransition[] {
    return [...this.#breakers.values()].flatMap((breaker) => breaker.transitions.list(breaker.key));
  }

  #sync(breaker: SharedCircuitBreaker): void {
    if (this.#store.ready) void breaker.refresh();
  }
}
