/**
 * Circuit breakers by key (docs/guides/server-methods.md "Runtime protections"). Keys are
 * server-wide, so methods of different plugins that call one upstream can share one.
 *
 *   closed --failure count reaches failureThreshold--> open
 *   open   --resetAfterMs elapsed, next call--> trial (exactly one call let through)
 *   trial  --success--> closed (count cleared);  --failure--> open for a fresh resetAfterMs
 */
import { errorOf, type HttpError } from "../errors/http-error.js";

export type BreakerState = "closed" | "open" | "trial";
export type CallOutcome = "success" | "failure" | "neutral";

/** One breaker as the runtime uses it: this process's own, or one shared through Redis. */
export interface Breaker {
  readonly state: BreakerState;
  readonly failures: number;
  readonly failureThreshold: number;
  readonly resetAfterMs: number;
  /**
   * Lets a call through (true when it is the trial) or returns its RPC_CIRCUIT_OPEN refusal
   * (returned, not thrown: see docs/reference/benchmarks.md "Refusals"). A shared breaker
   * answers at once while closed, and asks its store only to claim a trial.
   */
  admit(): boolean | HttpError | Promise<boolean | HttpError>;
  record(outcome: CallOutcome, isTrial: boolean): void;
}

export interface BreakerStatus {
  state: BreakerState;
  failures: number;
  failureThreshold: number;
  resetAfterMs: number;
}

/** Breakers by key, made on first use with that method's settings. */
export interface BreakerRegistry {
  /** `trialLeaseMs`: how long a shared trial claim lasts when its process dies (the calling method's `timeoutMs`). */
  for(key: string, failureThreshold: number, resetAfterMs: number, trialLeaseMs: number): Breaker;
  status(): Record<string, BreakerStatus>;
  /** Every move between states so far, by breaker (a shared breaker's: this process's view of it). */
  transitions(): BreakerTransition[];
}

export interface BreakerTransition {
  key: string;
  from: BreakerState;
  to: BreakerState;
  count: number;
}

const STATES: readonly BreakerState[] = ["closed", "open", "trial"];

/**
 * How often one breaker moved from each state to each other, for metrics. Counted where
 * the state changes rather than read from it at scrape time: a breaker that opens and
 * closes again between two scrapes would otherwise never be seen open.
 */
export class StateChanges {
  readonly #counts = [0, 0, 0, 0, 0, 0, 0, 0, 0];

  note(from: BreakerState, to: BreakerState): void {
    if (from !== to) this.#counts[STATES.indexOf(from) * STATES.length + STATES.indexOf(to)]! += 1;
  }

  list(key: string): BreakerTransition[] {
    const out: BreakerTransition[] = [];
    this.#counts.forEach((count, at) => {
      if (count > 0) out.push({ key, from: STATES[Math.floor(at / STATES.length)]!, to: STATES[at % STATES.length]!, count });
    });
    return out;
  }
}

/** What a breaker counts; `openUntil` is when an open breaker lets its trial through. */
export interface BreakerCounts {
  state: BreakerState;
  failures: number;
  openUntil: number;
}

/**
 * The one rule that moves a breaker on a call's outcome: the per-process breaker's, and a
 * shared breaker's own view while its store is away (./shared-circuit-breaker.ts).
 */
export function recordOutcome(counts: BreakerCounts, outcome: CallOutcome, isTrial: boolean, now: number, failureThreshold: number, resetAfterMs: number): void {
  if (outcome === "neutral") {
    // A trial that proved nothing (the client left) hands the trial to the next call.
    if (isTrial) {
      counts.state = "open";
      counts.openUntil = now;
    }
    return;
  }
  if (outcome === "success") {
    if (isTrial || counts.state === "closed") {
      counts.state = "closed";
      counts.failures = 0;
    }
    return;
  }
  if (!isTrial) counts.failures += 1;
  if (isTrial || (counts.state === "closed" && counts.failures >= failureThreshold)) {
    counts.state = "open";
    counts.openUntil = now + resetAfterMs;
  }
}

export class CircuitBreaker implements Breaker {
  readonly key: string;
  readonly failureThreshold: number;
  readonly resetAfterMs: number;
  readonly transitions = new StateChanges();
  readonly #counts: BreakerCounts = { state: "closed", failures: 0, openUntil: 0 };

  constructor(key: string, failureThreshold: number, resetAfterMs: number) {
    this.key = key;
    this.failureThreshold = failureThreshold;
    this.resetAfterMs = resetAfterMs;
  }

  get state(): BreakerState {
    return this.#counts.state;
  }

  get failures(): number {
    return this.#counts.failures;
  }

  /**
   * Lets a call through or returns RPC_CIRCUIT_OPEN. Returns true when the call is the
   * trial, whose outcome decides the next state.
   */
  admit(now = Date.now()): boolean | HttpError {
    const counts = this.#counts;
    if (counts.state === "closed") return false;
    if (counts.state === "open" && now >= counts.openUntil) {
      counts.state = "trial";
      this.transitions.note("open", "trial");
      return true;
    }
    // Open, or a trial already under way: nobody else gets through.
    const retryAfterMs = counts.state === "open" ? counts.openUntil - now : this.resetAfterMs;
    return errorOf("RPC_CIRCUIT_OPEN", { key: this.key, retryAfterMs: Math.max(1, retryAfterMs) });
  }

  record(outcome: CallOutcome, isTrial: boolean, now = Date.now()): void {
    const before = this.#counts.state;
    recordOutcome(this.#counts, outcome, isTrial, now, this.failureThreshold, this.resetAfterMs);
    this.transitions.note(before, this.#counts.state);
  }
}

export class CircuitBreakers implements BreakerRegistry {
  readonly #breakers = new Map<string, CircuitBreaker>();

  for(key: string, failureThreshold: number, resetAfterMs: number): CircuitBreaker {
    let breaker = this.#breakers.get(key);
    if (!breaker) {
      breaker = new CircuitBreaker(key, failureThreshold, resetAfterMs);
      this.#breakers.set(key, breaker);
    }
    return breaker;
  }

  status(): Record<string, BreakerStatus> {
    const out: Record<string, BreakerStatus> = {};
    for (const [key, breaker] of this.#breakers) {
      out[key] = { state: breaker.state, failures: breaker.failures, failureThreshold: breaker.failureThreshold, resetAfterMs: breaker.resetAfterMs };
    }
    return out;
  }

  transitions(): BreakerTransition[] {
    return [...this.#breakers.values()].flatMap((breaker) => breaker.transitions.list(breaker.key));
  }
}
