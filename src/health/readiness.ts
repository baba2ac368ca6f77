/**
 * Whether this process should be sent traffic (docs/guides/deployment.md "Probes"), as
 * `GET /health/ready` answers it. Not ready before `listen()` has completed (every boot
 * hook ran before it), from the start of a shutdown on, and while a dependency the
 * process cannot serve well without (a configured Redis) is unreachable. Liveness has no
 * state: a process that answers at all is live.
 */

/** A dependency whose outage makes the process not ready; `name` is what the answer says, never an address. */
export interface ReadinessCheck {
  readonly name: string;
  ok(): boolean;
}

export type ReadinessPhase = "starting" | "ready" | "draining";

/** The body of `/health/ready`: small, and nothing in it an operator would not show a load balancer. */
export type ReadinessBody = { status: "ready" } | { status: "starting" } | { status: "draining" } | { status: "unavailable"; reasons: string[] };

export class Readiness {
  #phase: ReadinessPhase = "starting";
  readonly #checks: readonly ReadinessCheck[];

  constructor(checks: readonly ReadinessCheck[] = []) {
    this.#checks = checks;
  }

  get phase(): ReadinessPhase {
    return this.#phase;
  }

  /** Listening, with every boot hook run. A shutdown that began first keeps the process draining. */
  listening(): void {
    if (this.#phase === "starting") this.#phase = "ready";
  }

  /** From now on until the process ends: a drain is never undone. */
  draining(): void {
    this.#phase = "draining";
  }

  status(): ReadinessBody {
    if (this.#phase !== "ready") return { status: this.#phase };
    const reasons = this.#checks.filter((check) => !check.ok()).map((check) => check.name);
    return reasons.length === 0 ? { status: "ready" } : { status: "unavailable", reasons };
  }
}
