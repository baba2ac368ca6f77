/**
 * No start hangs silently (docs/guides/deployment.md "Node lines"): while a start has not finished, every `everyMs`
 * (30 s) one warning names what it still waits for: the server file being loaded, the boot
 * hook running, Redis, the port. A server file whose top-level `await` never settles, a boot
 * hook that never returns or a firewall that swallows the Redis connection otherwise looks
 * like a process that prints nothing and never listens.
 */
import type { Logger } from "../log/logger.js";

export const START_REPORT_AFTER_MS = 30_000;

export class StartWatch {
  #waitingFor: string;
  readonly #startedAt = Date.now();
  readonly #timer: NodeJS.Timeout;

  constructor(log: Logger, waitingFor: string, everyMs = START_REPORT_AFTER_MS) {
    this.#waitingFor = waitingFor;
    this.#timer = setInterval(() => {
      const seconds = Math.round((Date.now() - this.#startedAt) / 1000);
      log.warn({ waitingFor: this.#waitingFor, elapsedMs: Date.now() - this.#startedAt }, `still starting after ${seconds} s: waiting for ${this.#waitingFor}`);
    }, everyMs);
    // A start that hangs keeps the process up by itself; this timer must not.
    this.#timer.unref();
  }

  /** What the start waits for from now on. */
  waitingFor(what: string): void {
    this.#waitingFor = what;
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}
