/**
 * One RPC call's lifetime: it ends when the client goes away or when the call's timeout
 * passes, whichever comes first, and everything that waits on the call (the body read,
 * the verifiers, the queue, the method, an isolated worker) learns it here. One timer per
 * call: armed once the call is routed (checks, body, verifiers), started over when the
 * runtime takes the call (queue wait and method).
 *
 * Hand-written instead of an AbortController per call: creating an AbortSignal (an
 * EventTarget) and listening on it was about a tenth of a small call's CPU time, and most
 * methods never look at `ctx.signal`. So the signal is made on first use only, and the
 * runtime's own waits use the plain listener list below.
 */
export class CallTimeoutError extends Error {
  readonly timeoutMs: number;

  constructor(timeoutMs: number) {
    super(`call exceeded its ${timeoutMs} ms timeout`);
    this.name = "TimeoutError";
    this.timeoutMs = timeoutMs;
  }
}

/** Ends a call whose client went away; nobody is left to answer. */
export class ClientGoneError extends Error {
  constructor() {
    super("client closed the connection");
    this.name = "ClientGoneError";
  }
}

type EndListener = (reason: unknown) => void;
type TimeoutListener = (reason: CallTimeoutError) => void;

export class CallLifetime {
  #ended = false;
  #reason: unknown = undefined;
  #controller: AbortController | undefined = undefined;
  #listeners: EndListener[] | undefined = undefined;
  #timer: NodeJS.Timeout | undefined = undefined;
  /** The budget `#timer` was armed with: a new budget needs a new timer. */
  #timeoutMs = 0;
  #timedOut: CallTimeoutError | undefined = undefined;
  #timeoutListeners: TimeoutListener[] | undefined = undefined;

  /** True once the client left or the timeout passed. */
  get ended(): boolean {
    return this.#ended;
  }

  /** Why the call ended: a `ClientGoneError` or a `CallTimeoutError`. */
  get reason(): unknown {
    return this.#reason;
  }

  /** `ctx.signal`: made on first use, already aborted when the call has ended. */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#ended) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  /** Ends the call once; later calls are ignored (the first reason stands). */
  end(reason: unknown): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
    const listeners = this.#listeners;
    this.#listeners = undefined;
    if (listeners) for (const listener of listeners) listener(reason);
  }

  throwIfEnded(): void {
    if (this.#ended) throw this.#reason;
  }

  /** Calls `listener` once when the call ends (at once if it has). Remove it with `offEnd`. */
  onEnd(listener: EndListener): void {
    if (this.#ended) {
      listener(this.#reason);
      return;
    }
    (this.#listeners ??= []).push(listener);
  }

  offEnd(listener: EndListener): void {
    const listeners = this.#listeners;
    if (!listeners) return;
    const index = listeners.indexOf(listener);
    if (index !== -1) listeners.splice(index, 1);
  }

  /**
   * Arms the timeout, or starts it over from now when it is armed and has not fired yet
   * (the runtime does, so that a slow body or verifier does not eat the queue wait's and
   * the method's budget; `Timeout.refresh()` allocates nothing, but keeps the first
   * budget, so a different budget arms a new timer). A timer that already fired is left
   * alone. The timeout ends the call, and runs the `onTimeout` listeners even
   * if the call had already ended because the client left: an isolated worker that ignores
   * its signal is still stopped on time.
   */
  startTimeout(timeoutMs: number): void {
    if (this.#timedOut !== undefined) return;
    if (this.#timer !== undefined) {
      if (timeoutMs === this.#timeoutMs) {
        this.#timer.refresh();
        return;
      }
      clearTimeout(this.#timer);
    }
    this.#timeoutMs = timeoutMs;
    this.#timer = setTimeout(() => {
      const reason = new CallTimeoutError(timeoutMs);
      this.#timedOut = reason;
      this.end(reason);
      if (this.#timeoutListeners) for (const listener of this.#timeoutListeners) listener(reason);
    }, timeoutMs);
  }

  /** Arms the timeout unless it is armed (or fired) already: unlike `startTimeout`, never starts it over. */
  armTimeout(timeoutMs: number): void {
    if (this.#timer === undefined) this.startTimeout(timeoutMs);
  }

  /** Runs `listener` when the timeout passes; at once if it already has. */
  onTimeout(listener: TimeoutListener): void {
    if (this.#timedOut !== undefined) {
      listener(this.#timedOut);
      return;
    }
    (this.#timeoutListeners ??= []).push(listener);
  }

  /** Clears the timer; call it once the method's work has really ended. */
  dispose(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timeoutListeners = undefined;
  }

  /** Settles with `work`, or rejects with the end reason as soon as the call ends. */
  race<T>(work: Promise<T>): Promise<T> {
    if (this.#ended) {
      // Nobody awaits `work` any more: its own rejection must not go unhandled.
      work.catch(() => {});
      return Promise.reject(this.#reason);
    }
    return new Promise<T>((resolve, reject) => {
      this.onEnd(reject);
      work.then(
        (value) => {
          this.offEnd(reject);
          resolve(value);
        },
        (error: unknown) => {
          this.offEnd(reject);
          reject(error);
        },
      );
    });
  }
}
