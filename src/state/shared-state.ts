/**
 * What the runtime's protections need from state shared by every process of a deployment
 * (docs/guides/server-methods.md "Runtime protections"; docs/guides/deployment.md "Shared state and Redis"): circuit
 * breakers whose count and state every process sees, and concurrency slots counted across
 * processes. Redis implements both (./redis-state.ts); without it the runtime keeps its
 * own per-process breakers and limiters and never sees these.
 */

/**
 * A breaker as the shared store holds it. Times are durations from now, never instants:
 * hosts' clocks differ, so the store keeps its own clock and each process turns
 * `remainingMs` into an instant of its own.
 */
export interface SharedBreakerView {
  /**
   * `closed`: counting failures; `open`: refusing for `remainingMs` (0: its trial may be
   * claimed now); `trial`: one trial call runs somewhere, its claim lapsing in `remainingMs`.
   */
  state: "closed" | "open" | "trial";
  failures: number;
  remainingMs: number;
  /**
   * When the store last changed the breaker, by its own clock (0: it holds nothing). A
   * process hears of changes over two connections, its own results and others'
   * announcements, which may arrive out of order: an older view never replaces a newer one.
   */
  version: number;
}

export type TrialClaim = { granted: true; token: string; version: number } | { granted: false; view: SharedBreakerView };

export interface SharedBreakerStore {
  /** False while the store cannot be reached: breakers then keep to their own process. */
  readonly ready: boolean;
  /**
   * Changes whenever announcements may have been missed (the subscription dropped, or was
   * made again) and when the store is back after an outage: a view read in an older
   * generation may be stale, and is read again before it admits a call.
   */
  readonly generation: number;
  /**
   * Records a call's outcome. `trialToken` is the claim's token when the call was the
   * trial this process claimed, else null. Resolves to the breaker after the change.
   */
  record(
    key: string,
    outcome: "success" | "failure" | "neutral",
    trialToken: string | null,
    failureThreshold: number,
    resetAfterMs: number,
  ): Promise<SharedBreakerView>;
  /** Claims the one trial call of an open breaker whose `resetAfterMs` has passed, for `leaseMs`. */
  claimTrial(key: string, leaseMs: number): Promise<TrialClaim>;
  read(key: string): Promise<SharedBreakerView>;
  /** Changes another process announced (a breaker opened, closed, or started counting). */
  onChange(listener: (key: string, view: SharedBreakerView) => void): void;
  /** Runs when the store is back after an outage, during which announcements were missed (after `generation` moved). */
  onReconnect(listener: () => void): void;
  /** A breaker could not reach the store and used its own process's state: logged once per outage. */
  fellBack(error?: unknown): void;
}

export interface DeploymentSlot {
  /** Gives the slot back; never throws (a slot that cannot be given back lapses with its lease). */
  release(): void;
}

export interface DeploymentSlots {
  /**
   * One of `limit` slots of `key`, counted across every process sharing the store. Waits
   * while all are taken, if fewer than `queueLimit` calls of `key` already wait for one in
   * this process (else rejects with RPC_QUEUE_FULL at once); rejects with `signal.reason`
   * when the signal aborts first, and with SESSION_STORE_UNAVAILABLE when the store cannot
   * be reached.
   */
  acquire(key: string, limit: number, queueLimit: number, signal: AbortSignal): Promise<DeploymentSlot>;
}

export interface SharedState {
  readonly kind: "redis";
  /** True while the store answers. */
  readonly ready: boolean;
  readonly breakers: SharedBreakerStore;
  readonly slots: DeploymentSlots;
}
